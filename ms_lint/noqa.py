"""Writing `# noqa: MSLxxx` comments: where one can go on a line, and how codes join a comment already there.

Shared by `ms-lint check --add-noqa` and the language server's "Suppress MSLxxx with # noqa" action. A comment
cannot go on a line that ends inside a string or continues with a backslash: there it would change the code.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

from ms_lint.source import split_lines
from ms_lint.suppression import NOQA


@dataclass(frozen=True)
class LineEdit:
    """Replace characters `start`..`end` of line `row` (1-based) with `text`."""

    row: int
    start: int
    end: int
    text: str


def noqa_edits(text: str, codes_by_row: Mapping[int, Sequence[str]]) -> List[LineEdit]:
    """The edits that make each row's `# noqa` name its codes: a new comment at the end of the line, or the
    missing codes added to one there. Rows a comment cannot go on, rows already suppressing everything (a bare
    `# noqa`) and rows whose comment already names every code get no edit."""
    lines = split_lines(text)
    comments = _line_comments(text, set(codes_by_row))
    if comments is None:
        return []
    edits = []
    for row, codes in sorted(codes_by_row.items()):
        if not 0 < row <= len(lines) or row not in comments:
            continue
        comment = comments[row]
        line = lines[row - 1]
        if comment is None:  # the line ends in code
            edits.append(LineEdit(row, len(line.rstrip()), len(line), f"  # noqa: {', '.join(_unique(codes))}"))
            continue
        column, comment_text = comment
        match = NOQA.search(comment_text)
        if match is None:  # another comment: the noqa goes before it, so both keep their meaning
            edits.append(LineEdit(row, column, column, f"# noqa: {', '.join(_unique(codes))}  "))
            continue
        if not match.group("codes"):
            continue  # a bare noqa suppresses everything already
        present = {c.upper() for c in re.split(r"[\s,]+", match.group("codes")) if c}
        missing = [code for code in _unique(codes) if code not in present]
        if missing:
            at = column + match.end("codes")
            edits.append(LineEdit(row, at, at, "".join(f", {code}" for code in missing)))
    return edits


def apply_line_edits(text: str, edits: Iterable[LineEdit]) -> str:
    """`text` with `edits` made; its line endings kept."""
    parts = re.split(r"(\r\n|\r|\n)", text)  # lines at even indexes, their endings between
    for edit in sorted(edits, key=lambda e: (e.row, e.start), reverse=True):
        line = parts[2 * (edit.row - 1)]
        parts[2 * (edit.row - 1)] = line[:edit.start] + edit.text + line[edit.end:]
    return "".join(parts)


def _line_comments(text: str, rows: set) -> Optional[Dict[int, Optional[tuple]]]:
    """row -> (column, text) of its comment, or None when the line ends in code; rows that end inside a string or
    with a backslash are absent. None when the text does not tokenize."""
    found: Dict[int, Optional[tuple]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
            row = token.start[0]
            if row not in rows:
                continue
            if token.type == tokenize.COMMENT:
                found[row] = (token.start[1], token.string)
            elif token.type in (tokenize.NEWLINE, tokenize.NL) and row not in found:
                found[row] = None
    except (tokenize.TokenError, SyntaxError):
        return None
    return found


def _unique(codes: Iterable[str]) -> List[str]:
    return sorted(set(codes))
