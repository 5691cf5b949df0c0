"""Applying fixes to source text: one pass of non-overlapping edits, then the imports they need.

Positions in edits are (1-based row, 0-based character column) on the original text. A fix whose edits overlap
an already accepted fix is left for the next pass (the caller re-lints and applies again until nothing changes).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Iterable, List, Sequence, Set, Tuple

from ms_lint.rule import Diagnostic, Import

_LINE_START = re.compile(r"\r\n|\r|\n")


@dataclass
class FixPass:
    text: str
    applied: List[Diagnostic] = field(default_factory=list)
    deferred: List[Diagnostic] = field(default_factory=list)  # overlapped another fix: try again next pass


def newline_of(text: str) -> str:
    match = _LINE_START.search(text)
    return match.group(0) if match else "\n"


def _line_offsets(text: str) -> List[int]:
    return [0] + [match.end() for match in _LINE_START.finditer(text)]


def apply_fixes(text: str, diagnostics: Iterable[Diagnostic], applicabilities: Sequence[str] = ("safe",)) -> FixPass:
    offsets = _line_offsets(text)
    newline = newline_of(text)

    def offset(position: Tuple[int, int]) -> int:
        row, column = position
        return offsets[min(row, len(offsets)) - 1] + column

    result = FixPass(text)
    taken: List[Tuple[int, int, str]] = []  # (start, end, the code of the rule whose fix edits there)
    edits: List[Tuple[int, int, int, str]] = []  # (start, end, order, content)
    imports: List[Import] = []
    candidates = [d for d in diagnostics if d.fix is not None and d.fix.applicability in applicabilities]
    for diagnostic in sorted(candidates, key=lambda d: (d.row, d.column, d.code)):
        fix = diagnostic.fix
        assert fix is not None  # candidates have fixes
        spans = [(offset(e.location), offset(e.end_location), e.content) for e in fix.edits]
        composes = _insertions_compose(diagnostic.code)
        if any(_overlaps(start, end, (other_start, other_end)) and not (
                composes and code == diagnostic.code and start == end == other_start == other_end)
               for start, end, _ in spans for other_start, other_end, code in taken):
            result.deferred.append(diagnostic)
            continue
        taken.extend((start, end, diagnostic.code) for start, end, _ in spans)
        edits.extend((start, end, len(edits), content) for start, end, content in spans)
        imports.extend(i for i in fix.imports if i not in imports)
        result.applied.append(diagnostic)
    # from the end, so earlier offsets stay valid; insertions at one point land in the order of their findings
    for start, end, _, content in sorted(edits, key=lambda e: (e[0], e[1], e[2]), reverse=True):
        text = text[:start] + content.replace("\n", newline) + text[end:]
    result.text = add_imports(text, imports) if imports else text
    return result


def _insertions_compose(code: str) -> bool:
    from ms_lint.catalog import rule_by_code

    rule = rule_by_code(code)
    return bool(rule is not None and rule.insertions_compose)


def _overlaps(start: int, end: int, other: Tuple[int, int]) -> bool:
    other_start, other_end = other
    if start == end or other_start == other_end:  # insertions collide only at the same point or strictly inside
        return other_start < start < other_end or start < other_start < end or start == other_start
    return start < other_end and other_start < end


def add_imports(text: str, imports: Sequence[Import]) -> str:
    """Add each import once, in the file's style: extend `from mindspore import nn` rather than add a line."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text  # the caller re-parses and reports
    newline = newline_of(text)
    lines = text.splitlines(keepends=True)
    bound = _bound_names(tree)
    for item in imports:
        name = item.name or item.module.partition(".")[0]
        if name in bound:
            continue
        bound.add(name)
        existing = _from_import(tree, item.module) if item.name else None
        if existing is not None and existing.lineno == existing.end_lineno and "(" not in lines[existing.lineno - 1]:
            row = existing.lineno - 1
            line = lines[row]
            body = line.rstrip("\r\n")
            code, hash_, comment = body.partition("#")
            lines[row] = f"{code.rstrip()}, {item.name}" + (f"  #{comment}" if hash_ else "") + line[len(body):]
        else:
            statement = f"from {item.module} import {item.name}" if item.name else f"import {item.module}"
            row = _import_insertion_row(tree)
            lines.insert(row, statement + newline)
        tree = ast.parse("".join(lines))
    return "".join(lines)


def _bound_names(tree: ast.Module) -> Set[str]:
    names: Set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).partition(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def _from_import(tree: ast.Module, module: str):
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == module and node.level == 0 \
                and not any(a.name == "*" for a in node.names):
            return node
    return None


def _import_insertion_row(tree: ast.Module) -> int:
    """After the last top-level import; else after the module docstring."""
    row = 0
    for index, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            row = node.end_lineno or node.lineno
        elif index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            row = node.end_lineno or node.lineno
    return row
