"""The real MindSpore code bases ms_lint is measured on: model zoos and libraries from PyPI (wheels, unzipped).

`python benchmarks/corpora.py [DIR]` downloads them (`pip download --no-deps`) into DIR (default
~/.cache/ms-lint-corpora) and prints where each one is.
"""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from typing import Dict

CORPORA = {
    "mindcv": "0.3.0",
    "mindocr": "0.5.0",
    "mindyolo": "0.5.0",
    "mindformers": "2.1.0",
    "mindone": "0.5.0",
}
DEFAULT_DIRECTORY = os.path.join(os.path.expanduser("~"), ".cache", "ms-lint-corpora")


def fetch(name: str, version: str, directory: str = DEFAULT_DIRECTORY) -> str:
    """The unzipped package directory of `name==version` (downloaded once)."""
    target = os.path.join(directory, f"{name}-{version}")
    package = os.path.join(target, name)
    if os.path.isdir(package):
        return package
    wheels = os.path.join(directory, "wheels")
    os.makedirs(wheels, exist_ok=True)
    wheel = next((f for f in os.listdir(wheels) if f.startswith(f"{name}-{version}-")), None)
    if wheel is None:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", wheels,
                        f"{name}=={version}"], check=True)
        wheel = next(f for f in os.listdir(wheels) if f.startswith(f"{name}-{version}-"))
    with zipfile.ZipFile(os.path.join(wheels, wheel)) as archive:
        archive.extractall(target)
    return package


def fetch_all(directory: str = DEFAULT_DIRECTORY, names=None) -> Dict[str, str]:
    return {f"{name} {version}": fetch(name, version, directory)
            for name, version in CORPORA.items() if names is None or name in names}


if __name__ == "__main__":
    for label, path in fetch_all(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIRECTORY).items():
        print(f"{label}: {path}")
