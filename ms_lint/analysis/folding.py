"""Branches the graph compiler folds away: `if self.<flag>:` on a Cell attribute is decided when the Cell is
compiled, so what the untaken branch holds is never resolved (measured on 2.10: a forbidden call or an undefined
attribute there compiles while the flag keeps it out). A branch on tensor data is compiled on both sides."""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional

from ms_lint.analysis.walk import parent_of, self_parameter

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_MAX_CALLER_DEPTH = 3


def guarding_flag(node: ast.AST, self_name: str, class_node: ast.ClassDef, ignore: Optional[str] = None,
                  on_tensor_data: Optional[Callable[[ast.expr], bool]] = None) -> Optional[str]:
    """The `self.<flag>` an enclosing `if` of the method tests (`if self.gradient_checkpointing and
    self.training:`), unless the branch is sure to be compiled; else None. `ignore` is an attribute that does not
    count as a flag (the one being read). Sure to be compiled: `if self.flag:` (or `if not self.flag:`) where the
    class only ever assigns the flag one literal that takes the node's side (`self.use_reg = True`). The flag may
    otherwise be set from outside (by a library base's `gradient_checkpointing_enable()`). With `on_tensor_data`,
    a test it says holds tensor data (`if seq_len > self.cached:`) folds nothing: both sides are compiled."""
    child: ast.AST = node
    parent = parent_of(node)
    while parent is not None and not isinstance(parent, _SCOPES):
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test \
                and not (on_tensor_data is not None and on_tensor_data(parent.test)):
            test, negated = parent.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, True
            flag = self_attribute(test, self_name)
            if flag is not None:
                value = constant_flag(class_node, flag, self_name)
                in_body = child in (parent.body if isinstance(parent.body, list) else [parent.body])
                if not (value is not None and (bool(value) != negated) == in_body):
                    return flag
            else:
                tested = [self_attribute(sub, self_name) for sub in ast.walk(test)]
                flags = [name for name in tested if name is not None and name != ignore]
                if flags:  # the flag that says most: `gradient_checkpointing` rather than `training`
                    return next((name for name in flags if name != "training"), flags[0])
        elif isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
            flag = _short_circuit_flag(parent, child, self_name, class_node)
            if flag is not None:
                return flag
        child, parent = parent, parent_of(parent)
    return None


def _short_circuit_flag(operation: ast.BoolOp, operand: ast.AST, self_name: str,
                        class_node: ast.ClassDef) -> Optional[str]:
    """The `self.<flag>` an earlier operand tests, when `operand` is evaluated only for one value of it (`self.use_past
    and self.cache`, `not self.use_past or self.cache`): folded at compile time like an `if`, unless the class
    only ever assigns the flag the value that evaluates `operand`."""
    is_and = isinstance(operation.op, ast.And)
    for earlier in operation.values[:operation.values.index(operand)]:  # type: ignore[arg-type]
        test, negated = earlier, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, True
        flag = self_attribute(test, self_name)
        if flag is not None:
            value = constant_flag(class_node, flag, self_name)
            if not (value is not None and bool(value) == (is_and != negated)):
                return flag
    return None


def method_flag(node: ast.AST, call_sites: Dict[ast.AST, List[ast.Call]],
                on_tensor_data: Callable[[ast.expr], bool], depth: int = 0) -> Optional[str]:
    """`guarding_flag` for a node anywhere in a method of a class, or else the flag that guards every call of
    that method (`if "dynamic" in self.rope_type: self._update(...)`: the helper is compiled only then);
    None outside methods. `call_sites` is the graph's (`GraphScope.call_sites`)."""
    function = parent_of(node)
    while function is not None and not isinstance(function, _SCOPES):
        function = parent_of(function)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    owner, self_name = parent_of(function), self_parameter(function)
    if not isinstance(owner, ast.ClassDef) or self_name is None:
        return None
    flag = guarding_flag(node, self_name, owner, on_tensor_data=on_tensor_data)
    sites = call_sites.get(function, [])
    if flag is not None or not sites or depth >= _MAX_CALLER_DEPTH:
        return flag
    flags = [method_flag(site, call_sites, on_tensor_data, depth + 1) for site in sites]
    return flags[0] if all(flags) else None


def self_attribute(expr: ast.AST, self_name: str) -> Optional[str]:
    """`<name>` for `self.<name>`, else None."""
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == self_name:
        return expr.attr
    return None


def constant_flag(class_node: ast.ClassDef, flag: str, self_name: str):
    """The one literal the class assigns to `self.<flag>`, or None when it assigns anything else (or nothing)."""
    values = [n.value for n in ast.walk(class_node) if isinstance(n, ast.Assign)
              and any(self_attribute(t, self_name) == flag for t in n.targets)]
    literals = {repr(v.value) for v in values if isinstance(v, ast.Constant)}
    if len(literals) != 1 or not all(isinstance(v, ast.Constant) for v in values):
        return None
    return next(v.value for v in values if isinstance(v, ast.Constant))
