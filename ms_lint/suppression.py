"""Suppression comments, handled once for every rule and front end.

* `# noqa` / `# noqa: MSL001,MSL040` (flake8: codes match by prefix) and `# ms-lint: ignore[MSL001]` /
  `# ms-lint: ignore`: the line they are on.
* `# pylint: disable=numpy-in-graph` (symbols, message ids, codes or `all`): on its own line, the rest of the
  enclosing block, until `# pylint: enable=...`; at the end of a line that opens a block, the block; otherwise the
  line. `# pylint: disable-next=...`: the next line.
* `# ms-lint: skip-file`, `# flake8: noqa` and `# pylint: skip-file`: the whole file.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

_MARKERS = re.compile(r"noqa|pylint\s*:|ms-lint\s*:|flake8\s*:", re.I)
_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][A-Z0-9]*(?:[\s,]+[A-Z][A-Z0-9]*)*))?", re.I)
_MS_LINT = re.compile(r"#\s*ms-lint\s*:\s*(?P<verb>ignore|skip-file)(?:\[(?P<codes>[^\]]*)\])?", re.I)
_FLAKE8_FILE = re.compile(r"#\s*flake8\s*:\s*noqa\b(?!\s*:)", re.I)
_PYLINT = re.compile(r"#\s*pylint\s*:\s*(?P<verb>disable-next|disable|enable|skip-file)\s*(?:=\s*(?P<names>[\w\-, ]+))?",
                     re.I)

ALL = "*"
# Text without which no comment can skip the file (a superset of what `parse` recognises as skip-file)
_MAY_SKIP_FILE = re.compile(r"skip-file|flake8\s*:\s*noqa", re.I)


@dataclass
class Suppressions:
    skip_file: bool = False
    # row -> names suppressed on that row (ALL for everything)
    lines: Dict[int, Set[str]] = field(default_factory=dict)
    # (first row, last row, names)
    ranges: List[Tuple[int, int, FrozenSet[str]]] = field(default_factory=list)

    def suppresses(self, row: int, names: Tuple[str, ...]) -> bool:
        """`names`: the code, symbol and pylint message id of a diagnostic."""
        if self.skip_file:
            return True
        codes = self.lines.get(row)
        if codes and (ALL in codes or any(n.startswith(c) for c in codes for n in names)):
            return True
        return any(first <= row <= last and (ALL in held or held.intersection(names))
                   for first, last, held in self.ranges)


def may_skip_file(text: str) -> bool:
    """False when no comment of `text` can skip the whole file: `parse` may then wait for a first diagnostic."""
    if text.isascii():  # a case-insensitive regex scans slowly; lowering ASCII text matches the same way
        lowered = text.lower()
        if "skip-file" not in lowered and "flake8" not in lowered:
            return False
    return _MAY_SKIP_FILE.search(text) is not None


def parse(text: str, tree: Optional[ast.Module]) -> Suppressions:
    result = Suppressions()
    if not _MARKERS.search(text):
        return result
    blocks = _Blocks(tree)
    open_disables: Dict[str, Tuple[int, int]] = {}  # name -> (start row, end row of its block)
    for row, column, comment, own_line in _comments(text, _last_marker_row(text)):
        if _FLAKE8_FILE.search(comment):
            result.skip_file = True
        match = _MS_LINT.search(comment)
        if match:
            if match.group("verb").lower() == "skip-file":
                result.skip_file = True
            else:
                result.lines.setdefault(row, set()).update(_names(match.group("codes")) or {ALL})
        match = _NOQA.search(comment)
        if match and not _FLAKE8_FILE.search(comment):
            codes = match.group("codes")
            result.lines.setdefault(row, set()).update(
                {c.upper() for c in re.split(r"[\s,]+", codes) if c} if codes else {ALL})
        match = _PYLINT.search(comment)
        if match:
            verb = match.group("verb").lower()
            names = _names(match.group("names")) or set()
            if verb == "skip-file":
                result.skip_file = True
            elif verb == "disable-next":
                result.lines.setdefault(row + 1, set()).update(names)
            elif verb == "disable" and own_line:
                end = blocks.end_of_enclosing(row)
                for name in names:
                    open_disables[name] = (row, end)
            elif verb == "disable":
                end = blocks.end_of_opened(row)
                if end is None:
                    result.lines.setdefault(row, set()).update(names)
                else:
                    result.ranges.append((row, end, frozenset(names)))
            elif verb == "enable":
                for name in names:
                    if name in open_disables:
                        start, end = open_disables.pop(name)
                        result.ranges.append((start, min(end, row - 1), frozenset({name})))
    for name, (start, end) in open_disables.items():
        result.ranges.append((start, end, frozenset({name})))
    return result


def _names(text: Optional[str]) -> Set[str]:
    if not text:
        return set()
    names = {n.strip() for n in re.split(r"[\s,]+", text) if n.strip()}
    return {ALL if n.lower() == "all" else n for n in names}


def _last_marker_row(text: str) -> int:
    """The last row that can hold a suppression comment (rows as `_comments` counts them: `io.StringIO` lines
    end at "\\n" only): no comment after it can matter, so tokenizing (the slow part) stops there."""
    last = 0
    for row, line in enumerate(text.split("\n"), 1):
        if _MARKERS.search(line):
            last = row
    return last


def _comments(text: str, last_row: int):
    """(row, column, text, own_line) of every comment token up to `last_row`; a file that fails to tokenize
    yields what it could."""
    lines = text.splitlines()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] > last_row:
                return
            if token.type == tokenize.COMMENT:
                row, column = token.start
                line = lines[row - 1] if row - 1 < len(lines) else ""
                yield row, column, token.string, not line[:column].strip()
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return


class _Blocks:
    """Row ranges of compound statements, for pylint's block-scoped disables."""

    def __init__(self, tree: Optional[ast.Module]):
        self.spans: List[Tuple[int, int]] = []
        if tree is not None:
            stack = list(tree.body)
            while stack:
                node = stack.pop()
                body = getattr(node, "body", None)
                if isinstance(body, list) and body:
                    self.spans.append((node.lineno, node.end_lineno))
                    for name in ("body", "orelse", "finalbody", "handlers"):
                        stack.extend(getattr(node, name, None) or [])
        self.last = max((end for _, end in self.spans), default=10 ** 9)

    def end_of_enclosing(self, row: int) -> int:
        """End of the innermost def/class/compound statement around `row` (module: end of file)."""
        inner = [(start, end) for start, end in self.spans if start < row <= end]
        return min(inner, key=lambda span: span[1] - span[0])[1] if inner else 10 ** 9

    def end_of_opened(self, row: int) -> Optional[int]:
        opened = [end for start, end in self.spans if start == row]
        return max(opened) if opened else None
