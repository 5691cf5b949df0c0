"""Cells a module uses only as parts of its other Cells: where their `construct` is called, and so what it is given.

A `construct` is an entry point: its arguments are the network's inputs, tensors as far as the linter knows. But
a Cell built in a module only as `self.<name> = Part(...)` and called as `self.<name>(...)` from the module's graph
code gets what those calls pass, often Python ints from a static shape (FaceDetection's `PtLinspace(0, width - 1,
width)`). `Tensors` asks for those calls as it asks for a helper's call sites.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from ms_lint.analysis.walk import enclosing_function, parent_of

FunctionNode = ast.AST


def construct_calls(graph) -> Dict[FunctionNode, List[ast.Call]]:
    """{`construct` of a Cell class of the module: its calls through `self.<name>(...)` in the module's graph
    code}, for classes the module instantiates only as `self.<name> = Class(...)` (once per module)."""
    return graph.walk.memo(construct_calls, lambda: _collect(graph))


def _collect(graph) -> Dict[FunctionNode, List[ast.Call]]:
    cells = {node.name: node for node in graph.cells if node in graph.tree.body}
    if not cells:
        return {}
    built = _parts_built(graph, cells)
    if not built:
        return {}
    constructs = {name: next((stmt for stmt in cells[name].body if isinstance(stmt, ast.FunctionDef)
                              and stmt.name == "construct"), None) for name in set(built.values()) if name}
    calls: Dict[FunctionNode, List[ast.Call]] = {}
    for function in graph.compiled:
        owner = graph.owner_class(function)
        class_node: Optional[ast.ClassDef] = owner.node if owner is not None else None
        if class_node is None:
            continue
        for call in graph.walk.nodes_of(function).calls:
            func = call.func
            if func.__class__ is ast.Attribute and func.value.__class__ is ast.Name and func.value.id == "self":
                construct = constructs.get(built.get((class_node, func.attr)) or "")
                if construct is not None:
                    calls.setdefault(construct, []).append(call)
    return calls


def _parts_built(graph, cells: Dict[str, ast.ClassDef]) -> Dict[Tuple[ast.AST, str], Optional[str]]:
    """{(class, attribute): the Cell class of the module that `self.<attribute> = Part(...)` builds there (None when
    several)}, for the classes every call of which in the module is such an assignment (one pass over its calls)."""
    sites: Dict[str, List[Optional[Tuple[ast.AST, str]]]] = {}
    for call in graph.walk.of_kind(graph.tree, ast.Call):
        func = call.func
        if func.__class__ is ast.Name and func.id in cells:
            sites.setdefault(func.id, []).append(_attribute_built(graph, call))
    built: Dict[Tuple[ast.AST, str], Optional[str]] = {}
    for name, places in sites.items():
        known = [place for place in places if place is not None]
        if len(known) == len(places):
            for place in known:
                built[place] = name if built.get(place, name) == name else None
    return built


def _attribute_built(graph, call: ast.Call) -> Optional[Tuple[ast.AST, str]]:
    """(the class, the attribute) when `call` is the value of `self.<attribute> = ...` in a method, else None."""
    parent = parent_of(call)
    if not (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1):
        return None
    target = parent.targets[0]
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        return None
    owner = graph.owner_class(enclosing_function(call))
    node = owner.node if owner is not None else None
    return (node, target.attr) if node is not None else None
