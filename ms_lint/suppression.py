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
import bisect
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from ms_lint.source import char_column, child_nodes

_MARKERS = re.compile(r"noqa|pylint\s*:|ms-lint\s*:|flake8\s*:", re.I)
NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][A-Z0-9]*(?:[\s,]+[A-Z][A-Z0-9]*)*))?", re.I)
_MS_LINT = re.compile(r"#\s*ms-lint\s*:\s*(?P<verb>ignore|skip-file)(?:\[(?P<codes>[^\]]*)\])?", re.I)
_FLAKE8_FILE = re.compile(r"#\s*flake8\s*:\s*noqa\b(?!\s*:)", re.I)
_PYLINT = re.compile(r"#\s*pylint\s*:\s*(?P<verb>disable-next|disable|enable|skip-file)"
                     r"\s*(?:=\s*(?P<names>[\w\-, ]+))?", re.I)

ALL = "*"
# What every match of `_MARKERS` starts with, lowered
_MARKER_WORDS = ("noqa", "pylint", "ms-lint", "flake8")
# The only non-ASCII characters that a case-insensitive regex matches to ASCII letters (İ ı ſ, Kelvin's K)
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")
# Text without which no comment can skip the file (a superset of what `parse` recognises as skip-file)
_MAY_SKIP_FILE = re.compile(r"skip-file|flake8\s*:\s*noqa", re.I)


@dataclass
class Suppressions:
    skip_file: bool = False
    # row -> names suppressed on that row (ALL for everything)
    lines: Dict[int, Set[str]] = field(default_factory=dict)
    # (first row, last row, names)
    ranges: List[Tuple[int, int, FrozenSet[str]]] = field(default_factory=list)
    # (row, code) of the line suppressions that suppressed something (MSL098 reports the others)
    used: Set[Tuple[int, str]] = field(default_factory=set)

    def suppresses(self, row: int, names: Tuple[str, ...]) -> bool:
        """`names`: the code, symbol and pylint message id of a diagnostic."""
        if self.skip_file:
            return True
        codes = self.lines.get(row)
        if codes and ALL in codes:
            return True
        matched = [c for c in codes or () if any(n.startswith(c) for n in names)]
        if matched:
            self.used.update((row, c) for c in matched)
            return True
        return any(first <= row <= last and (ALL in held or held.intersection(names))
                   for first, last, held in self.ranges)


def may_skip_file(text: str) -> bool:
    """False when no comment of `text` can skip the whole file: `parse` may then wait for a first diagnostic."""
    lowered = lowered_text(text)
    if lowered is not None and "skip-file" not in lowered and "flake8" not in lowered:
        return False
    return _MAY_SKIP_FILE.search(text) is not None


def parse(text: str, tree: Optional[ast.Module]) -> Suppressions:
    result = Suppressions()
    lowered = lowered_text(text)
    if not (any(word in lowered for word in _MARKER_WORDS) if lowered is not None else _MARKERS.search(text)):
        return result
    blocks: Optional[_Blocks] = None  # built for the first block-scoped disable
    open_disables: Dict[str, Tuple[int, int]] = {}  # name -> (start row, end row of its block)
    for row, _column, comment, own_line in _marked_comments(text, tree):
        if _FLAKE8_FILE.search(comment):
            result.skip_file = True
        match = _MS_LINT.search(comment)
        if match:
            if match.group("verb").lower() == "skip-file":
                result.skip_file = True
            else:
                result.lines.setdefault(row, set()).update(_names(match.group("codes")) or {ALL})
        match = NOQA.search(comment)
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
                blocks = blocks or _Blocks(tree)
                end = blocks.end_of_enclosing(row)
                for name in names:
                    open_disables[name] = (row, end)
            elif verb == "disable":
                blocks = blocks or _Blocks(tree)
                opened_end = blocks.end_of_opened(row)
                if opened_end is None:
                    result.lines.setdefault(row, set()).update(names)
                else:
                    result.ranges.append((row, opened_end, frozenset(names)))
            elif verb == "enable":
                for name in names:
                    if name in open_disables:
                        start, end = open_disables.pop(name)
                        result.ranges.append((start, min(end, row - 1), frozenset({name})))
    for name, (start, end) in open_disables.items():
        result.ranges.append((start, end, frozenset({name})))
    return result


def noqa_comments(text: str, tree: Optional[ast.Module]) -> List[Tuple[int, int, int, List[str]]]:
    """(row, start, end, codes) of each `# noqa: CODES` comment (`start`..`end`: the columns of its `# noqa...`
    part), in row order; bare `# noqa` and `# flake8: noqa` are left out."""
    lowered = lowered_text(text)
    if lowered is not None and "noqa" not in lowered:
        return []  # most modules (MSL098 asks about every one): no line split and searched for markers
    found = []
    for row, column, comment, _ in _marked_comments(text, tree):
        match = NOQA.search(comment)
        if match and match.group("codes") and not _FLAKE8_FILE.search(comment):
            codes = [c.upper() for c in re.split(r"[\s,]+", match.group("codes")) if c]
            found.append((row, column + match.start(), column + match.end(), codes))
    return found


def _names(text: Optional[str]) -> Set[str]:
    if not text:
        return set()
    names = {n.strip() for n in re.split(r"[\s,]+", text) if n.strip()}
    return {ALL if n.lower() == "all" else n for n in names}


def lowered_text(text: str) -> Optional[str]:
    """`text` lowered, where a substring search in it finds all that a case-insensitive regex would: not when
    it holds one of the four non-ASCII characters such a regex matches to an ASCII letter (then None). The last
    text's is kept: the engine asks about each module three times (`may_skip_file`, the rules' needles
    (`NeedleSearch`), then MSL098's `noqa_comments`)."""
    global _last_lowered
    last = _last_lowered
    if last[0] is text:
        return last[1]
    if not text.isascii() and any(character in text for character in _FOLDS_TO_ASCII):
        lowered = None
    else:
        lowered = text.lower()
    _last_lowered = (text, lowered)  # one assignment: threads see the old pair or the new one
    return lowered


_last_lowered: Tuple[Optional[str], Optional[str]] = (None, None)  # (text, `lowered_text(text)`) of the last text


def _marked_comments(text: str, tree: Optional[ast.Module]) -> List[Tuple[int, int, str, bool]]:
    """(row, column, text, own_line) of the comments that hold a marker (no other comment can suppress), in row
    order."""
    lines = text.split("\n")
    marked = [row for row, line in enumerate(lines, 1) if "#" in line and _MARKERS.search(line, line.index("#"))]
    return _comments_on(text, lines, tree, marked) if marked else []


def _comments_on(text: str, lines: List[str], tree: Optional[ast.Module], rows: List[int]):
    """The comments on the sorted `rows` of `lines` (`text` split at "\\n"). A `#` outside every string literal
    of the tree starts a comment, so the string literals on those rows tell where their comments start;
    tokenizing, the slow way, is left for what they cannot tell, and for text whose rows the tree may count
    differently (a lone CR, a form feed)."""
    if tree is None or "\x0c" in text or text.count("\r") != text.count("\r\n"):
        return [c for c in _tokenized_comments(text, lines, rows[-1]) if c[0] in set(rows)]
    spans = _string_spans(tree, rows)
    found = []
    for row in rows:
        line = lines[row - 1]
        column = _comment_start(lines, row, spans)
        if column is _UNKNOWN:
            return [c for c in _tokenized_comments(text, lines, rows[-1]) if c[0] in set(rows)]
        if column is not None:
            found.append((row, column, line[column:].rstrip("\r"), not line[:column].strip()))
    return found


def _string_spans(tree: ast.Module, rows: List[int]) -> List[Tuple[int, int, int, int]]:
    """(first row, byte column, last row, end byte column) of the string literals that reach one of the sorted
    `rows`; only the parts of the tree around those rows are visited."""
    spans: List[Tuple[int, int, int, int]] = []
    stack: List[ast.AST] = [tree]
    while stack:
        for child in child_nodes(stack.pop()):
            first = getattr(child, "lineno", None)
            if first is not None:
                decorators = getattr(child, "decorator_list", None)
                if decorators:  # a def's or class's position starts after its decorators
                    first = decorators[0].lineno
                index = bisect.bisect_left(rows, first)
                if index == len(rows) or rows[index] > getattr(child, "end_lineno", first):
                    continue
                if child.__class__ is ast.JoinedStr or (
                        child.__class__ is ast.Constant and isinstance(child.value, (str, bytes))):
                    spans.append(_span(child))
                    continue
            stack.append(child)
    return spans


_UNKNOWN = object()


def _comment_start(lines: List[str], row: int, spans: List[Tuple[int, int, int, int]]):
    """The column where the comment of `lines[row - 1]` starts, None if it has none, `_UNKNOWN` if the string
    literals around cannot tell."""
    encoded = lines[row - 1].encode("utf-8")  # the tree's columns count UTF-8 bytes
    around = [span for span in spans if span[0] <= row <= span[2]]
    position = encoded.find(b"#")
    while position != -1:
        span = next((span for span in around if _covers(span, row, position, len(encoded))), None)
        if span is None:
            return char_column(lines[row - 1], position)
        if span[2] > row:  # implicitly concatenated parts may have comments between them
            inside = _inside_string(lines, span, row, position)
            if inside is None:
                return _UNKNOWN
            if not inside:
                return char_column(lines[row - 1], position)
        position = encoded.find(b"#", position + 1)
    return None


def _covers(span: Tuple[int, int, int, int], row: int, position: int, length: int) -> bool:
    first, first_column, last, end_column = span
    return (first_column if first == row else 0) <= position < (end_column if last == row else length)


# A string token from its prefix to its closing quote (a backslash escapes a quote in raw strings too)
_STRING_TOKEN = re.compile(
    r"[rRbBuUfF]{0,2}(?:"
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*')",
    re.DOTALL)


# What may separate the implicitly concatenated parts of a string literal
_BETWEEN_PARTS = re.compile(r"(?:[ \t]+|\\?\r?\n|#[^\r\n]*)*")


def _inside_string(lines: List[str], span: Tuple[int, int, int, int], row: int, position: int) -> Optional[bool]:
    """Is byte `position` of row `row` inside one of the string tokens of the literal at `span`, rather than
    between them? None if the tokens cannot be read."""
    first, first_column, last, _ = span
    text = "\n".join(lines[first - 1:last])
    offset = char_column(lines[first - 1], first_column)
    target = sum(len(line) + 1 for line in lines[first - 1:row - 1]) + char_column(lines[row - 1], position)
    while offset <= target:
        token = _STRING_TOKEN.match(text, offset)
        if token is None:
            return None
        if target < token.end():
            return True
        offset = _between_parts_end(text, token.end())
        if target < offset:
            return False
    return None


def _tokenized_comments(text: str, lines: List[str], last_row: int):
    """(row, column, text, own_line) of every comment token up to `last_row` (rows as `lines`, the text split at
    "\\n", counts them); a file that fails to tokenize yields what it could."""
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
                    self.spans.append((node.lineno, node.end_lineno or node.lineno))
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


def _span(node) -> Tuple[int, int, int, int]:
    """(row, column, end row, end column) of a string node (the parser sets all four on expressions)."""
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def _between_parts_end(text: str, offset: int) -> int:
    """Where the blanks, line continuations and comments between two parts of a string literal end (the pattern
    matches the empty string: it always matches)."""
    match = _BETWEEN_PARTS.match(text, offset)
    return match.end() if match is not None else offset
