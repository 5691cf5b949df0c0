"""What the generators of tools/ share: write a generated module, or check it against what they would write."""
from __future__ import annotations

import os
import textwrap


def write_or_check(target: str, text: str, argv, generator: str) -> int:
    """`--check` in `argv`: exit status 1 (and say so) when `target` differs from `text`; else write it."""
    if "--check" in argv:
        with open(target, encoding="utf-8") as handle:
            same = handle.read() == text
        print("up to date" if same else f"{target} differs from the installed MindSpore: run {generator}")
        return 0 if same else 1
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    return 0


def frozenset_text(names, indent: int) -> str:
    """`frozenset({...})` of the sorted names, wrapped at 110 columns, every line indented by `indent`."""
    text = "frozenset({" + ", ".join(repr(name) for name in sorted(names)) + "})"
    return textwrap.fill(text, width=110, initial_indent=" " * indent, subsequent_indent=" " * indent,
                         break_long_words=False, break_on_hyphens=False)


def package_module(name: str) -> str:
    """The path of `ms_lint/analysis/<name>.py` in this checkout."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ms_lint", "analysis",
                        f"{name}.py")
