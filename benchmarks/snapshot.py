"""Every finding of `ms-lint check --select ALL` on the PyPI corpora, written down to compare two versions.

    python benchmarks/snapshot.py write OUT.json [--checkout DIR] [--corpora mindcv,mindocr] [--jobs N]
    python benchmarks/snapshot.py compare BEFORE.json AFTER.json

`write` runs the CLI of the checkout DIR (default: this one) as a subprocess on each corpus, without the cache
(with `-j N` given `--jobs N`: a change to the single-process path is compared with `--jobs 1`), and keeps each
finding's path (relative to the corpus), position, code, severity, message and fix (applicability and edits).
`compare` prints the findings only one side has, per corpus, and exits 1 if there are any: a
structural change must leave them identical.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpora import CORPORA, DEFAULT_DIRECTORY, fetch  # noqa: E402

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def findings_of(checkout: str, package: str, jobs: str = "") -> list:
    environment = {**os.environ, "PYTHONPATH": checkout}
    done = subprocess.run([sys.executable, "-m", "ms_lint", "check", "--select", "ALL", "--no-cache",
                           "--output-format", "json", "--exit-zero", *(["-j", jobs] if jobs else []), package],
                          capture_output=True, text=True, env=environment, cwd=os.path.dirname(package))
    if done.returncode != 0:
        raise SystemExit(f"ms-lint failed on {package}:\n{done.stderr}")
    root = os.path.dirname(package)
    found = []
    for item in json.loads(done.stdout):
        item["filename"] = os.path.relpath(item["filename"], root)
        item.pop("url", None)
        found.append(item)
    return sorted(found, key=lambda item: json.dumps(item, sort_keys=True))


def write(out: str, checkout: str, names, jobs: str = "") -> None:
    snapshot = {}
    for name, version in CORPORA.items():
        if names and name not in names:
            continue
        snapshot[name] = findings_of(os.path.abspath(checkout), fetch(name, version, DEFAULT_DIRECTORY), jobs)
        print(f"{name} {version}: {len(snapshot[name])} findings", file=sys.stderr)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(snapshot, handle, indent=0, sort_keys=True)


def compare(before_path: str, after_path: str) -> int:
    with open(before_path, encoding="utf-8") as handle:
        before = json.load(handle)
    with open(after_path, encoding="utf-8") as handle:
        after = json.load(handle)
    differences = 0
    for name in sorted(set(before) | set(after)):
        old = {json.dumps(item, sort_keys=True) for item in before.get(name, [])}
        new = {json.dumps(item, sort_keys=True) for item in after.get(name, [])}
        print(f"{name}: {len(old)} before, {len(new)} after, {len(old - new)} gone, {len(new - old)} new")
        for sign, items in (("-", old - new), ("+", new - old)):
            for item in sorted(items):
                finding = json.loads(item)
                print(f"  {sign} {finding['filename']}:{finding['location']['row']} {finding['code']} "
                      f"[{finding['severity']}] {finding['message']}")
        differences += len(old ^ new)
    return 1 if differences else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    writing = commands.add_parser("write")
    writing.add_argument("out")
    writing.add_argument("--checkout", default=HERE)
    writing.add_argument("--corpora", default="")
    writing.add_argument("--jobs", default="", help="-j for the CLI (default: its own choice)")
    comparing = commands.add_parser("compare")
    comparing.add_argument("before")
    comparing.add_argument("after")
    args = parser.parse_args()
    if args.command == "write":
        write(args.out, args.checkout, [n for n in args.corpora.split(",") if n], args.jobs)
    else:
        raise SystemExit(compare(args.before, args.after))


if __name__ == "__main__":
    main()
