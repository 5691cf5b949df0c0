"""Fixes on real code: `ms-lint check --fix --unsafe-fixes --select ALL` over copies of the PyPI zoos, judged.

    python benchmarks/fix_zoos.py [--corpora mindcv,mindocr] [--models-per-module 2] [--keep DIR]

For each corpus (benchmarks/corpora.py) a copy is fixed, then:
* every changed file must parse and compile to bytecode, and a second run must change nothing (idempotence);
* under MindSpore 2.10, every changed module is imported from the original and from the fixed copy (a process
  each): a module that imported before and fails after is "broke";
* for mindcv, under MindSpore 2.10 (CPU, PyNative), every model registered in a module the fixes changed (up to
  `--models-per-module` per module) is built with `create_model(name, num_classes=10)` and run on a fixed
  input, once from the original copy and once from the fixed one, each in a process of its own: a model that
  ran before and fails after is "broke", one whose output differs is "changed", one that failed before and runs
  after is "helped".
The table gives, per rule, the fixes applied and, for mindcv, the models in modules its fixes touched that broke,
changed or were helped. Nothing is timed.

Imports need each zoo's own dependencies; without them a module fails before and after alike. In a virtual
environment with the system's MindSpore: `python -m venv --system-site-packages ENV; ENV/bin/pip install -c
<(echo 'numpy<2') omegaconf transformers==4.57.1 trampoline better-profanity nltk 'huggingface-hub<1.0'` (mindone)
and `opencv-python-headless shapely pyclipper lmdb rapidfuzz addict albumentations matplotlib pycocotools
sentencepiece jieba` (part of mindocr); mindformers 2.1.0 needs MindSpore 2.11.
"""
from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpora import CORPORA, fetch  # noqa: E402

_FIXED = re.compile(r"^  (?P<path>.+?):(?P<row>\d+):(?P<column>\d+): (?P<code>MSL\d{3}) \((?P<kind>[a-z-]+)\)")


def ms_lint(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ms_lint", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"})


def fix_copy(package: str, work: str) -> Tuple[str, str, List[dict]]:
    """Copies of the package (original, fixed) under `work`, and the fixes applied to the fixed one."""
    name = os.path.basename(package)
    original, fixed = os.path.join(work, "original"), os.path.join(work, "fixed")
    for target in (original, fixed):
        shutil.copytree(package, os.path.join(target, name))
    done = ms_lint("check", "--fix", "--unsafe-fixes", "--select", "ALL", "--no-cache", "--show-fixes",
                   "--exit-zero", "-q", "--output-format", "concise", name, cwd=fixed)
    fixes = [match.groupdict() for match in map(_FIXED.match, done.stdout.splitlines()) if match]
    return original, fixed, fixes


def static_checks(original: str, fixed: str) -> Dict[str, object]:
    """Changed files that do not parse or compile, and what a second fixing run would still change."""
    changed, broken = [], []
    for directory, _, names in os.walk(fixed):
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, fixed)
            with open(path, "rb") as handle:
                data = handle.read()
            with open(os.path.join(original, relative), "rb") as handle:
                if handle.read() == data:
                    continue
            changed.append(relative)
            try:
                compile(ast.parse(data, relative), relative, "exec")
            except (SyntaxError, ValueError) as error:
                broken.append(f"{relative}: {error}")
    again = ms_lint("check", "--diff", "--unsafe-fixes", "--select", "ALL", "--no-cache", ".", cwd=fixed)
    return {"changed": changed, "broken": broken, "second_run_diff": again.stdout.count("\n+++ ")
            + again.stdout.startswith("+++ ")}


# ----- mindcv under MindSpore ---------------------------------------------------------------------------------
_RUN_MODELS = r"""
import importlib, json, sys
import numpy as np
root, names, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
sys.path.insert(0, root)
import mindspore as ms
ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")
from mindcv.models import create_model
from mindcv.models.registry import model_entrypoint
results = {}
for name in names:
    ms.set_seed(0)
    np.random.seed(0)
    try:
        module = importlib.import_module(model_entrypoint(name).__module__)
        size = getattr(module, "default_cfgs", {}).get(name, {}).get("input_size", (3, 224, 224))
        net = create_model(name, num_classes=10, pretrained=False)
        net.set_train(False)
        x = ms.Tensor(np.random.default_rng(0).standard_normal((1, *size)).astype(np.float32))
        y = net(x)
        y = y[0] if isinstance(y, (tuple, list)) else y
        results[name] = {"ok": True, "output": y.asnumpy().ravel()[:64].tolist(),
                         "parameters": sorted(p.name for p in net.get_parameters())}
    except Exception as error:
        message = (str(error).splitlines() or [""])[0][:200]
        results[name] = {"ok": False, "error": f"{type(error).__name__}: {message}"}
with open(out, "w") as handle:
    json.dump(results, handle)
"""

def mindcv_models(original: str, fixed: str, fixes: List[dict], per_module: int) -> Dict[str, dict]:
    """model name -> {"module", "before", "after", "verdict"} for the models of the modules the fixes changed."""
    modules = {fix["path"][:-3].replace("/", ".") for fix in fixes if fix["path"].startswith("mindcv/models/")}
    if not modules:
        return {}
    listing = subprocess.run([sys.executable, "-c", (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from mindcv.models.registry import list_models, model_entrypoint;"
        "print(json.dumps({n: model_entrypoint(n).__module__ for n in list_models()}))"), original],
        capture_output=True, text=True)
    if listing.returncode != 0:
        raise RuntimeError(f"cannot list mindcv's models: {listing.stderr[-500:]}")
    by_module: Dict[str, List[str]] = collections.defaultdict(list)
    for name, module in json.loads(listing.stdout).items():
        if module in modules and len(by_module[module]) < per_module:
            by_module[module].append(name)
    names = [name for found in by_module.values() for name in found]
    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, root in (("before", original), ("after", fixed)):
            out = os.path.join(scratch, f"{label}.json")
            subprocess.run([sys.executable, "-c", _RUN_MODELS, root, json.dumps(names), out], cwd=scratch,
                           capture_output=True, text=True, env={**os.environ, "GLOG_v": "3"})
            with open(out) as handle:
                runs[label] = json.load(handle)
    models = {}
    for module, found in by_module.items():
        for name in found:
            before, after = runs["before"][name], runs["after"][name]
            models[name] = {"module": module, "before": before, "after": after, "verdict": _verdict(before, after)}
    return models


_IMPORT_MODULES = r"""
import importlib, json, sys, traceback
root, names, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
sys.path.insert(0, root)
results = {}
for name in names:
    try:
        importlib.import_module(name)
        results[name] = {"ok": True}
    except BaseException as error:
        message = (str(error).splitlines() or [""])[0][:200]
        results[name] = {"ok": False, "error": f"{type(error).__name__}: {message}"}
with open(out, "w") as handle:
    json.dump(results, handle)
"""


def imported_modules(original: str, fixed: str, changed: List[str]) -> Dict[str, str]:
    """module -> verdict for every changed module, imported under MindSpore from each copy (a process each): a
    fix that breaks a module at import (a name it no longer defines, a class body that raises) shows here."""
    names = [path[:-3].replace(os.sep, ".").removesuffix(".__init__") for path in changed]
    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, root in (("before", original), ("after", fixed)):
            out = os.path.join(scratch, f"{label}.json")
            subprocess.run([sys.executable, "-c", _IMPORT_MODULES, root, json.dumps(names), out], cwd=scratch,
                           capture_output=True, text=True, env={**os.environ, "GLOG_v": "3"}, timeout=1800)
            with open(out) as handle:
                runs[label] = json.load(handle)
    verdicts = {}
    for name in names:
        before, after = runs["before"][name], runs["after"][name]
        verdicts[name] = ("imports" if after["ok"] else "broke") if before["ok"] else (
            "helped" if after["ok"] else "fails before and after")
    return verdicts


def _verdict(before: dict, after: dict) -> str:
    if before["ok"] and not after["ok"]:
        return "broke"
    if not before["ok"]:
        return "helped" if after["ok"] else "fails before and after"
    if before["parameters"] != after["parameters"]:
        return "changed (parameters)"
    import numpy as np

    same = np.allclose(np.array(before["output"]), np.array(after["output"]), rtol=1e-4, atol=1e-5)
    return "same" if same else "changed (outputs)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default=",".join(CORPORA))
    parser.add_argument("--models-per-module", type=int, default=2)
    parser.add_argument("--keep", help="keep the fixed copies under this directory")
    args = parser.parse_args()
    table: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    work_root = args.keep or tempfile.mkdtemp(prefix="ms-lint-fix-zoos-")
    try:
        for corpus in args.corpora.split(","):
            package = fetch(corpus, CORPORA[corpus])
            original, fixed, fixes = fix_copy(package, os.path.join(work_root, corpus))
            checks = static_checks(original, fixed)
            for fix in fixes:
                table[fix["code"]][f"{fix['kind']} fixes"] += 1
            print(f"{corpus}: {len(fixes)} fixes in {len(checks['changed'])} files; "
                  f"{len(checks['broken'])} do not parse or compile; second run changes "
                  f"{checks['second_run_diff']} files")
            for problem in checks["broken"]:
                print(f"  broken: {problem}")
            if _has_mindspore():
                modules = imported_modules(original, fixed, checks["changed"])  # type: ignore[arg-type]
                counts = collections.Counter(modules.values())
                print(f"  modules imported under MindSpore, before and after: {dict(counts)}")
                for name, verdict in sorted(modules.items()):
                    if verdict in ("broke", "helped"):
                        print(f"  {name}: {verdict}")
                    codes = {f["code"] for f in fixes if f["path"][:-3].replace("/", ".").removesuffix(".__init__")
                             == name}
                    for code in codes:
                        table[code][f"modules {verdict}"] += 1
            if corpus == "mindcv" and _has_mindspore():
                models = mindcv_models(original, fixed, fixes, args.models_per_module)
                for name, model in sorted(models.items()):
                    print(f"  {name} ({model['module']}): {model['verdict']}"
                          + (f" [{model['after'].get('error')}]" if not model["after"]["ok"] else ""))
                    codes = {f["code"] for f in fixes if f["path"][:-3].replace("/", ".") == model["module"]}
                    for code in codes:
                        table[code][f"models {model['verdict']}"] += 1
    finally:
        if not args.keep:
            shutil.rmtree(work_root, ignore_errors=True)
    columns = sorted({column for counts in table.values() for column in counts})
    print("\n| rule | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    for code in sorted(table):
        print(f"| {code} | " + " | ".join(str(table[code][column]) for column in columns) + " |")
    return 0


def _has_mindspore() -> bool:
    import importlib.util

    return importlib.util.find_spec("mindspore") is not None


if __name__ == "__main__":
    sys.exit(main())
