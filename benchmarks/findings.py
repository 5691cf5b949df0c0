"""Findings of every rule on the real corpora, as the markdown tables of docs/real-world.md.

`python benchmarks/findings.py [--corpora DIR] [--errors mindcv,mindocr,mindyolo]` lints each corpus with every
rule selected and prints the counts per rule and severity, then every error-level finding of the named corpora.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpora import CORPORA, DEFAULT_DIRECTORY, fetch  # noqa: E402

from ms_lint.catalog import all_rules  # noqa: E402
from ms_lint.config import Settings  # noqa: E402
from ms_lint.engine import Linter  # noqa: E402
from ms_lint.files import discover  # noqa: E402
from ms_lint.runner import lint_files  # noqa: E402


def lint_corpus(package: str):
    settings = Settings(select=("ALL",))
    files = discover([package], settings)
    results = lint_files(settings, files)
    linter = Linter(settings)
    for path in files:
        linter.index.add_file(path)
    return files, [d for r in results for d in r.diagnostics] + linter.judge(results)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpora", default=DEFAULT_DIRECTORY)
    parser.add_argument("--errors", default="mindcv,mindocr,mindyolo")
    args = parser.parse_args()
    counts = {}
    errors = []
    for name, version in CORPORA.items():
        package = fetch(name, version, args.corpora)
        root = os.path.dirname(package)
        files, diagnostics = lint_corpus(package)
        counts[name] = collections.Counter((d.code, d.severity) for d in diagnostics)
        print(f"<!-- {name} {version}: {len(files)} files, {len(diagnostics)} findings -->", file=sys.stderr)
        if name in args.errors.split(","):
            errors.extend((name, os.path.relpath(d.path, root), d) for d in diagnostics if d.severity == "error")
    names = list(CORPORA)
    print("| rule | " + " | ".join(f"{n} {CORPORA[n]}" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for rule in all_rules():
        cells = []
        for name in names:
            parts = [f"{counts[name][(rule.code, s)]} {s}" for s in ("error", "warning", "info")
                     if counts[name][(rule.code, s)]]
            cells.append(", ".join(parts) or "0")
        print(f"| {rule.code} {rule.name} | " + " | ".join(cells) + " |")
    print()
    print("| corpus | finding | rule | message |")
    print("|---|---|---|---|")
    for name, path, d in errors:
        print(f"| {name} | `{path}:{d.row}` | {d.code} | {d.message.replace('|', '/')} |")


if __name__ == "__main__":
    main()
