"""How a Cell gains attributes by a name given as a value: `setattr(self, name, v)`, `self.__setattr__`,
`insert_child_to_cell(name, cell)` and the other registering methods. The class summaries (project.py) record the
names that are literals, and the literal prefix of computed ones; and the targets a plain assignment binds."""
from __future__ import annotations

import ast
from typing import List, Set, Union

# Methods through which a Cell gains attributes by name (registered children, parameters, buffers).
_REGISTERING_CALLS = frozenset(
    {"insert_child_to_cell", "insert_param_to_cell", "register_buffer", "register_parameter", "register_module",
     "add_module", "_register_buffer"}
)

# what the function a call calls is named (`f(...)`, `x.f(...)`) when it may register names: the calls
# `note_registering_call` reads (its callers test this first, as most calls are none of them)
REGISTRATION_NAMES = _REGISTERING_CALLS | {"vars", "setattr", "__setattr__"}


def note_registering_call(call: ast.Call, self_name: str, attributes: Set[str],
                          parameters: Set[str]) -> Union[bool, str]:
    """Record names registered by setattr/insert_child_to_cell; when a name is not a constant, its literal
    prefix (`"layer_%d" % i` -> "layer_"), or True when it has none."""
    func = call.func
    called = func.id if func.__class__ is ast.Name else func.attr if func.__class__ is ast.Attribute else None
    if called not in REGISTRATION_NAMES:
        return False  # most calls: none of the forms below
    if isinstance(func, ast.Name) and func.id == "vars" and call.args and is_name(call.args[0], self_name):
        return True  # vars(self).update(...)
    target = _setattr_target(call, self_name)
    if target is not None:
        owner, name = target
        if isinstance(owner, ast.Name) and owner.id == self_name:
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                attributes.add(name.value)
                return False
            return _literal_prefix(name) or True
        return False
    if (isinstance(func, ast.Attribute) and func.attr in _REGISTERING_CALLS and isinstance(func.value, ast.Name)
            and func.value.id == self_name and call.args):
        name = call.args[0]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            attributes.add(name.value)
            if "param" in func.attr:
                parameters.add(name.value)
            return False
        return _literal_prefix(name) or True
    return False


def _literal_prefix(name: ast.expr) -> str:
    """The literal text a computed name starts with: `"layer_%d" % i`, `f"layer_{i}"`, `"layer_" + str(i)`,
    `"layer_{}".format(i)`; "" when it starts with something computed."""
    if isinstance(name, ast.BinOp) and isinstance(name.op, (ast.Mod, ast.Add)):
        head = name.left
    elif isinstance(name, ast.JoinedStr) and name.values:
        head = name.values[0]
    elif isinstance(name, ast.Call) and isinstance(name.func, ast.Attribute) and name.func.attr == "format":
        head = name.func.value
    else:
        return ""
    if not (isinstance(head, ast.Constant) and isinstance(head.value, str)):
        return ""
    text = head.value
    if isinstance(name, ast.BinOp) and isinstance(name.op, ast.Add):
        return text
    cut = min((i for i in (text.find("%"), text.find("{")) if i >= 0), default=len(text))
    return text[:cut]


def _setattr_target(call: ast.Call, self_name: str):
    """(object, name) set by `setattr(o, n, v)`, `object.__setattr__(o, n, v)`, `self.__setattr__(n, v)` or
    `super().__setattr__(n, v)`; None for any other call."""
    func, args = call.func, call.args
    if (is_name(func, "setattr") or (isinstance(func, ast.Attribute) and func.attr == "__setattr__"
                                      and is_name(func.value, "object"))) and len(args) >= 2:
        return args[0], args[1]
    if isinstance(func, ast.Attribute) and func.attr == "__setattr__" and args and (
            is_name(func.value, self_name) or (isinstance(func.value, ast.Call)
                                               and is_name(func.value.func, "super"))):
        return ast.Name(id=self_name), args[0]
    return None


def is_name(expr: ast.AST, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


def assigned_targets(stmt: ast.AST) -> List[ast.expr]:
    """The targets an assignment binds, tuples and starred names unpacked (`a, (b, *c) = ...`)."""
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    else:
        return []
    flat = []
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        else:
            flat.append(target)
    return flat
