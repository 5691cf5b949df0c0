"""Cells a module uses only as parts of its other Cells: where their `construct` is called, and so what it is given.

A `construct` is an entry point: its arguments are the network's inputs, tensors as far as the linter knows. But
a Cell built in a module only as `self.<name> = Part(...)` and called as `self.<name>(...)` from the module's graph
code gets what those calls pass, often Python ints from a static shape (FaceDetection's `PtLinspace(0, width - 1,
width)`). `Tensors` asks for those calls as it asks for a helper's call sites.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from ms_lint.analysis.walk import parent_of

FunctionNode = ast.AST


def construct_calls(graph) -> Dict[FunctionNode, List[ast.Call]]:
    """{`construct` of a Cell class of the module: its calls through `self.<name>(...)` in the module's graph
    code}, for classes the module instantiates only as `self.<name> = Class(...)` (once per module)."""
    return graph.walk.memo(construct_calls, lambda: _collect(graph))


def _collect(graph) -> Dict[FunctionNode, List[ast.Call]]:
    cells = {node.name: node for node in graph.cells if node in graph.tree.body}
    if not cells:
        return {}
    built: Dict[Tuple[ast.AST, str], Optional[str]] = {}  # (owner class, attribute) -> the one class built
    for owner in graph.cells:
        for node in ast.walk(owner):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                            and target.value.id == "self":
                        name = _class_name(node.value)
                        key = (owner, target.attr)
                        built[key] = name if built.get(key, name) == name else None
    parts = {name for name in built.values() if name is not None and name in cells
             and _only_built_as_attributes(graph, name)}
    if not parts:
        return {}
    constructs = {name: next((stmt for stmt in cells[name].body if isinstance(stmt, ast.FunctionDef)
                              and stmt.name == "construct"), None) for name in parts}
    calls: Dict[FunctionNode, List[ast.Call]] = {}
    for function in graph.compiled:
        owner = graph.owner_class(function)
        class_node: Optional[ast.ClassDef] = owner.node if owner is not None else None
        if class_node is None:
            continue
        for call in graph.walk.nodes_of(function).calls:
            func = call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                construct = constructs.get(built.get((class_node, func.attr)) or "")
                if construct is not None:
                    calls.setdefault(construct, []).append(call)
    return calls


def _class_name(call: ast.Call) -> Optional[str]:
    return call.func.id if isinstance(call.func, ast.Name) else None


def _only_built_as_attributes(graph, name: str) -> bool:
    """Is every call of `name` in the module the value of a `self.<attribute> = name(...)`?"""
    for node in graph.walk.order:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            parent = parent_of(node)
            if not (isinstance(parent, ast.Assign) and parent.value is node and all(
                    isinstance(t, ast.Attribute) for t in parent.targets)):
                return False
    return True
