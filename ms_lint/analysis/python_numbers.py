"""Expressions that hold Python numbers, not tensor data: a tensor's metadata (`x.shape[0]`, `x.ndim`), what a
helper returning only such metadata gives, and the positions where a value is used as a Python number (a shape
element, a range or slice bound, a tested comparison). `tensors.py` asks these to tell shapes from data.
"""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Optional

from ms_lint.analysis.imports import statements
from ms_lint.analysis.walk import parent_of, spelled_name

# Attributes and methods of a tensor that are Python metadata, not tensor data.
METADATA_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "itemsize", "nbytes", "size", "strides", "device"})
METADATA_METHODS = frozenset({"dim", "ndimension", "numel", "nelement", "size", "is_contiguous", "is_floating_point",
                              "has_init", "is_complex", "element_size", "get_shape", "dtype"})
_SHAPE_FUNCTIONS = frozenset({"zeros", "ones", "empty", "full", "reshape", "view", "broadcast_to", "tile", "arange",
                              "linspace", "rand", "randn", "randint", "normal", "uniform", "standard_normal",
                              "eye", "expand", "repeat", "permute", "transpose", "fill", "Tensor", "tensor", "range",
                              "int", "float", "bool", "zeros_like", "ones_like", "pad", "interpolate", "resize"})
_SHAPE_KEYWORDS = frozenset({"shape", "size", "newshape", "axis", "axes", "dim", "dims", "sizes", "num", "stop",
                             "start", "step", "output_size", "scale_factor", "keepdims", "keep_dims"})


def returns_metadata(function: Optional[ast.AST]) -> bool:
    """Does every `return` of a module-level def give shape metadata (`x.shape[d]`, `len(x)`, `x.ndim`)?"""
    if function is None:
        return False
    returned = [stmt.value for stmt in ast.walk(function) if isinstance(stmt, ast.Return)]
    return bool(returned) and all(value is not None and is_metadata(value) for value in returned)


def metadata_functions(defs: Dict[str, ast.AST]) -> FrozenSet[str]:
    """The module-level defs whose every `return` gives shape metadata, or calls such a def of the module
    (x2ms's `x2ms_size(t)` returns `tensor_size(t)`, which returns `t.shape`): what a project summary keeps, so that
    another module's call of one is known to give Python numbers. Only a def's own statements are read."""
    returns = {name: [stmt.value for stmt in statements(node.body) if isinstance(stmt, ast.Return)]  # type: ignore
               for name, node in defs.items()}
    found: set = set()
    for _ in range(3):  # a helper of a helper of a helper
        more = {name for name, values in returns.items() if name not in found and values and all(
            value is not None and (is_metadata(value) or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in found))
            for value in values)}
        if not more:
            break
        found |= more
    return frozenset(found)


def project_returns_metadata(index, qualname: Optional[str]) -> bool:
    """Is `qualname` a project function (`ProjectIndex`) that returns shape metadata, through re-exports?"""
    found = index.defining(qualname)
    return found is not None and found[1] in found[0].metadata_functions


def is_metadata(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float, bool)) or expr.value is None
    if isinstance(expr, ast.Attribute):
        return expr.attr in METADATA_ATTRIBUTES
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.value, ast.Attribute) and expr.value.attr in METADATA_ATTRIBUTES
    if isinstance(expr, ast.Tuple):
        return all(is_metadata(element) for element in expr.elts)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute):
            return func.attr in METADATA_METHODS
        return isinstance(func, ast.Name) and (func.id == "len" or (
            func.id in ("int", "float") and len(expr.args) == 1 and is_metadata(expr.args[0])))
    return False


def in_shape_position(node: ast.AST) -> bool:
    """Is this use a Python-number use: a shape element, a range bound, a slice bound, arithmetic feeding one?"""
    parent = parent_of(node)
    while isinstance(parent, (ast.BinOp, ast.UnaryOp)):
        node, parent = parent, parent_of(parent)
    if isinstance(parent, (ast.Slice, ast.JoinedStr, ast.FormattedValue)):
        return True
    if isinstance(parent, ast.Compare):
        return tested(parent)
    if isinstance(parent, ast.Subscript):
        return parent.slice is node
    if isinstance(parent, ast.keyword):
        return parent.arg in _SHAPE_KEYWORDS
    if isinstance(parent, (ast.Tuple, ast.List)):
        holder = parent_of(parent)
        if isinstance(holder, ast.keyword):
            return holder.arg in _SHAPE_KEYWORDS
        return isinstance(holder, ast.Call) and spelled_name(holder.func) in _SHAPE_FUNCTIONS
    if isinstance(parent, ast.Call) and node is not parent.func:
        return spelled_name(parent.func) in _SHAPE_FUNCTIONS and spelled_name(parent.func) in (
            "range", "int", "float", "bool", "reshape", "view", "zeros", "ones", "empty", "full", "arange")
    return False


def tested(compare: ast.Compare) -> bool:
    """Is the comparison's value only tested (`if n > 0:`, `while i < n`, `a if n else b`, `assert`), as a Python
    number's can be? A comparison whose value is kept (`keep = scores > 0.5`, then `boxes[keep]`) is a mask: the
    operand is tensor data."""
    node: ast.AST = compare
    parent = parent_of(compare)
    while isinstance(parent, ast.BoolOp) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
        node, parent = parent, parent_of(parent)
    return isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node
