"""Which attributes of a class hold tensors for certain, for the class summary (`ClassSummary.tensors`):
`self.x = Tensor(...)`, or unpacked from a method of the class whose every return holds `Tensor(...)` at that
position (mindflow's FNO: `self.grid, self.perm = self._transpose(...)`, issue 19's thirteenth sample), and
assigned nothing else in the class."""
from __future__ import annotations

import ast
from typing import Dict, List, Optional

from ms_lint.analysis import framework
from ms_lint.analysis.imports import ImportMap
from ms_lint.analysis.registrations import is_name


def unpacked_positions(stmt: ast.AST, self_name: str) -> Optional[Dict[str, int]]:
    """{attribute: position} for `self.a, self.b, c = self.method(...)`, None for other assignments."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    if not isinstance(target, ast.Tuple) or not isinstance(value, ast.Call) \
            or not isinstance(value.func, ast.Attribute) or not is_name(value.func.value, self_name) \
            or any(isinstance(element, ast.Starred) for element in target.elts):
        return None
    return {element.attr: position for position, element in enumerate(target.elts)
            if isinstance(element, ast.Attribute) and is_name(element.value, self_name)}


def returns_tensor_at(node: ast.ClassDef, method: str, position: int, imports: ImportMap) -> bool:
    """Does every `return` of the class's `method` give a tuple whose item at `position` is `Tensor(...)`, or a
    local every assignment of which is (FNO's `positional_embedding = Tensor(get_grid_2d(...))` in each branch)?"""
    function = next((stmt for stmt in node.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and stmt.name == method), None)
    if function is None:
        return False
    returns: List[Optional[ast.expr]] = []
    assigned: Dict[str, List[Optional[ast.expr]]] = {}
    for sub in ast.walk(function):
        if isinstance(sub, ast.Return):
            returns.append(sub.value)
        elif isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.NamedExpr)):
            for target in (sub.targets if isinstance(sub, ast.Assign) else [getattr(sub, "target", None)]):
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(getattr(sub, "value", None))

    def is_tensor(value) -> bool:
        if isinstance(value, ast.Name):
            values = assigned.get(value.id, [])
            return bool(values) and all(not isinstance(v, ast.Name) and is_tensor(v) for v in values)
        return isinstance(value, ast.Call) and imports.qualname(value.func) in framework.TENSOR_CLASSES

    return bool(returns) and all(isinstance(value, ast.Tuple) and len(value.elts) > position
                                 and is_tensor(value.elts[position]) for value in returns)
