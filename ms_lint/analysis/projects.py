"""Which linted files belong together: the project rules judge each group of files connected by imports apart.

A repository may hold many independent projects (a model zoo with dozens of `train.py` and `src/util.py`, none
of them in a package). Their modules share dotted names, so facts keyed by module name (`train.Net`,
`src.model.Net`) would mix projects, and a finding could cite code its file cannot import. Each file records the
project files its import statements reach (`imported_files`, resolved as the file imports them), and the judges
see one connected group at a time (`connected_groups`): a file and everything it imports, directly or not, and
everything that imports it, is always in one group.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, Iterable, List, Mapping, Sequence

from ms_lint.analysis.walk import all_statements, rows_spelling

IMPORTS = "imports"  # the key of a file's imported project files among its facts (no rule code looks like it)


def imported_files(ctx) -> List[str]:
    """The absolute paths of the project files the module's import statements (anywhere in it) reach, including
    the packages an import runs on the way (`import a.b` runs `a/__init__.py`). Found once per module (the engine
    and MSL068 ask)."""
    return list(ctx.memo(imported_files, lambda: _imported_files(ctx)))


def _imported_files(ctx) -> List[str]:
    rows = rows_spelling(ctx.source.text, "import")
    if not rows:
        return []
    index, imports = ctx.graph.index, ctx.graph.imports
    found = set()
    for stmt in all_statements(ctx.tree.body, rows):
        if isinstance(stmt, ast.Import):
            names = [alias.name for alias in stmt.names]
        elif isinstance(stmt, ast.ImportFrom):
            base = imports.absolute(stmt.module, stmt.level)
            if base is None:
                continue
            names = [f"{base}.{alias.name}" if base else alias.name for alias in stmt.names if alias.name != "*"]
            names.append(base)
        else:
            continue
        for name in names:
            parts = name.split(".") if name else []
            if not parts or not index.may_hold(parts[0]):
                continue  # `mindspore.nn`, `numpy`: no root of the project holds it
            for cut in range(1, len(parts) + 1):
                path = index.find(".".join(parts[:cut]))
                if path is not None:
                    found.add(path)
    found.discard(os.path.abspath(ctx.path))
    return sorted(found)


def connected_groups(imports: Mapping[str, Sequence[str]]) -> List[List[str]]:
    """The linted files (keys of `imports`: path -> the project files it imports) in groups connected by imports
    between linted files, each group in the order of `imports`, the groups in the order of their first file."""
    absolute = {path: os.path.abspath(path) for path in imports}
    by_absolute = {a: path for path, a in absolute.items()}
    leader: Dict[str, str] = {path: path for path in imports}

    def find(path: str) -> str:
        while leader[path] != path:
            leader[path] = leader[leader[path]]
            path = leader[path]
        return path

    for path, targets in imports.items():
        for target in _linted(targets, by_absolute):
            first, second = find(path), find(target)
            if first != second:
                leader[second] = first
    groups: Dict[str, List[str]] = {}
    for path in imports:
        groups.setdefault(find(path), []).append(path)
    return list(groups.values())


def _linted(targets: Iterable[str], by_absolute: Mapping[str, str]) -> Iterable[str]:
    return (by_absolute[target] for target in targets if target in by_absolute)
