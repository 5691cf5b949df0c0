"""The package's shape (docs/architecture.md, "The layout"): no import circle, small modules, rules independent.

Imports are read from the source, lazy ones inside functions included: a circle held together by imports inside
functions is still a circle (the engine, config and graph once formed one).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ms_lint"
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> Dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, known: Dict[str, Path]) -> Set[str]:
    """The project modules `path` imports anywhere in it, packages' `__init__` left out (importing a submodule
    runs its package's `__init__`, which is not a dependency of the importer's design)."""
    packages = {name for name, module_path in known.items() if module_path.name == "__init__.py"}
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in known else node.module)
    return {name for name in found if name in known and name not in packages}


def import_graph() -> Dict[str, Set[str]]:
    known = modules()
    return {name: imports_of(path, known) - {name} for name, path in known.items()}


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    found: List[List[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_analysis_never_imports_the_engine_rules_or_front_ends():
    graph = import_graph()
    upper = ("ms_lint.engine", "ms_lint.dispatch", "ms_lint.catalog", "ms_lint.config", "ms_lint.files",
             "ms_lint.rule", "ms_lint.rules", "ms_lint.fixing", "ms_lint.cli", "ms_lint.runner", "ms_lint.lsp")
    wrong = {(name, target) for name, targets in graph.items() if name.startswith("ms_lint.analysis.")
             for target in targets if target.startswith(upper)}
    assert wrong == set()


def test_no_rule_imports_another_rule():
    graph = import_graph()
    wrong = {(name, target) for name, targets in graph.items() if name.startswith("ms_lint.rules.")
             for target in targets
             if target.startswith("ms_lint.rules.") and not target.rpartition(".")[2].startswith("_")}
    assert wrong == set()  # what rules share lives in ms_lint/analysis or a `_`-named helper of ms_lint/rules


def test_modules_stay_small():
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules().items()}
    assert {name: size for name, size in sizes.items() if size > MAX_LINES} == {}
