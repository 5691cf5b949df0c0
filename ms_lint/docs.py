"""Rule documentation pages (`docs/rules/MSL0NN.md`), generated from each rule's docstring.

`python -m ms_lint.docs` rewrites them; a test fails when a page is stale.
"""
from __future__ import annotations

import os
import sys

from ms_lint.catalog import all_rules, pylint_id

SEVERITY_TEXT = {
    "error": "error",
    "warning": "warning",
    "info": "info (selected only with `--select MSL0NN` or `ALL`)",
    "level": "warning under the default LAX syntax level, error under STRICT",
}
SCOPE_TEXT = {
    "graph": "graph-compiled code (`construct`, what it reaches, `@jit`, `bprop`)",
    "cell": "`nn.Cell` subclasses",
    "module": "whole modules",
}


def render(rule) -> str:
    severity = SEVERITY_TEXT[rule.severity].replace("MSL0NN", rule.code)
    header = [
        f"# {rule.code}: {rule.name}",
        "",
        "| | |",
        "|---|---|",
        f"| severity | {severity} |",
        f"| looks at | {SCOPE_TEXT[rule.scope]} |",
        f"| fix | {rule.fix_applicability or 'none'} |",
        f"| pylint | `{pylint_id(rule)}` / `{rule.name}` |",
        f"| flake8 | `{rule.code}` |",
        "",
        f"Suppress with `# noqa: {rule.code}`, `# ms-lint: ignore[{rule.code}]` or `# pylint: disable={rule.name}`.",
        "",
    ]
    return "\n".join(header) + rule.docs() + "\n"


def page_path(root: str, rule) -> str:
    return os.path.join(root, "docs", "rules", f"{rule.code}.md")


def write_all(root: str) -> None:
    os.makedirs(os.path.join(root, "docs", "rules"), exist_ok=True)
    for rule in all_rules():
        with open(page_path(root, rule), "w", encoding="utf-8", newline="\n") as handle:
            handle.write(render(rule))


if __name__ == "__main__":
    write_all(sys.argv[1] if len(sys.argv) > 1 else os.getcwd())
