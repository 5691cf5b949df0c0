from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Tuple

from ms_lint.analysis import framework
from ms_lint.rule import Rule

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# Calls whose result is one tensor: MindSpore's functional ops (a Cell or a helper may return a tuple).
_TENSOR_FUNCTIONS = ("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")
# Functional ops that return a tuple (of values and indices, of pieces), at least with some arguments.
_TUPLE_RESULTS = frozenset({
    "aminmax", "broadcast_tensors", "chunk", "cummax", "cummin", "dsplit", "eig", "frexp", "hsplit", "kthvalue",
    "lu", "max", "median", "meshgrid", "min", "mode", "nonzero", "qr", "sort", "split", "std_mean", "svd",
    "tensor_split", "topk", "unbind", "unique", "unique_consecutive", "unique_with_pad", "var_mean", "vsplit"})
_JOIN = "`TypeError: Cannot join the return values of different branches, perhaps you need to make them equal.`"
_WHAT = {"tensor": "a tensor", "int": "a Python int", "float": "a Python float", "str": "a string",
         "tuple": "a tuple", "none": "None"}
# Kinds 2.10 cannot join, measured at LAX and STRICT (errors first); a tensor against None fails under STRICT
# only. An int against a list or None, a tuple against a list, and two tuples of different lengths join.
_CANNOT_JOIN = (("tensor", "tuple"), ("tensor", "int"), ("tensor", "float"), ("int", "float"), ("int", "str"),
                ("float", "str"), ("int", "tuple"), ("float", "tuple"), ("tensor", "none"))
Pair = Tuple[str, str]


class BranchesJoinDifferentKinds(Rule):
    """
    ## What it does
    Finds an `if` (or `a if c else b`) on tensor data whose two sides give a tensor and something that is not a
    tensor: both sides `return`, or both assign the same name (one side may be the value the name had before
    the `if`). A tuple against a tensor, or a Python number against a tensor, is an error, and so are an int
    against a float, a number against a string or a tuple; `None` against a tensor fails under STRICT.
    `x and y` / `x or y` is `y if x else x`: a tensor operand against a number is an error, two tensors a
    warning (they join only with the same dtype); comparisons, which give bools, are fine.

    ## Why it matters in graph mode
    A condition on tensor data is decided when the graph runs, so the compiler builds both sides and joins
    what they give into one value of one type. Measured on MindSpore 2.10 (CPU), where PyNative runs the same
    code: `if x.sum() > 0: return x, x` then `return x`, and `y = x` / `y = 1.0` on the two sides, fail at
    LAX and STRICT alike with `TypeError: Cannot join the return values of different branches, perhaps you
    need to make them equal.`; a tensor against `None` compiles at LAX and fails the same way under STRICT.
    Conditions the compiler folds (`if self.training:`, `if x.shape[0] > 1:`, `if mask is None:`) join
    nothing; neither does a bare argument (`if output_attentions:`), most often a Python flag. Tuples of
    different lengths compile at LAX (measured), so they are not reported; so do an int against a list or
    `None`, two strings, a tuple against a list. `return 1` against `return 2.5` fails, and `1` against `'a'`
    or `(1, 2)` (measured, both levels). `x and y` on an int32 and a float32
    tensor fails the same way at both levels, on two int32 tensors it compiles (measured).

    ## Example
    ```python
    class Head(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                return x * 2, x
            return x
    ```

    ## Use instead
    ```python
    class Head(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                return x * 2, x
            return x, x
    ```

    ## Fix
    None: make both sides give the same kind of value (the same tuple shape, a tensor instead of a Python
    number: `ops.zeros_like(x)`, `Tensor(0.0)`), or decide on a value the compiler can fold.
    """

    code = "MSL026"
    name = "branches-join-different-kinds"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "{subject}, in graph code reached from `{entry}`: {consequence}"

    def visit_if(self, node: ast.If, ctx):
        return self._decision(node, ctx, assigns=True)

    def visit_while(self, node: ast.While, ctx):
        return self._decision(node, ctx, assigns=False)

    def _decision(self, node, ctx, assigns: bool):
        """An `if` (or `while`) on tensor data: the returns it leads to, then (an `if`) the names both sides
        assign; None for the other tests (most: no generator is made for them)."""
        tensors = ctx.tensors(node)
        if not _decided_at_run_time(node.test, tensors):
            return None
        return self._decided(node, ctx, tensors, assigns)

    def _decided(self, node, ctx, tensors, assigns: bool):
        found = self._returns_mismatch(ctx, tensors, node)
        if found is not None:
            yield self.report(ctx, node.test, **self._fields(ctx, node, found, "returned"))
            return
        for name, body_value, other_value in _assigned_on_both_sides(ctx, node) if assigns else ():
            found = self._mismatch(ctx, tensors, [body_value], [other_value])
            if found is not None:
                yield self.report(ctx, node.test, **self._fields(ctx, node, found, f"assigned to `{name}`"))
                return

    def _returns_mismatch(self, ctx, tensors, node) -> Optional[Pair]:
        """When a side of `node` returns, every `return` the decision leads to is joined: those of both sides
        and those after `node` in its block."""
        inside = _side_returns(node.body) + _side_returns(node.orelse)
        if not inside:
            return None
        values = inside + _side_returns(_following(ctx, node))
        return self._mismatch(ctx, tensors, values, values)

    def visit_bool_op(self, node: ast.BoolOp, ctx):
        """`x and y` is `y if x else x`: the operands are joined like the sides of an `if`."""
        tensors = ctx.tensors(node)
        operands = [value for value in node.values if not _is_boolean(ctx, value)]
        data = [value for value in operands if _kind(ctx, tensors, value) == "tensor"]
        if not data:
            return
        # a `None` operand is known when compiling (`cond or default` with `cond = None`): folded, not joined
        others: List[Optional[ast.expr]] = [v for v in operands if v not in data and _kind(ctx, tensors, v) != "none"]
        found = self._mismatch(ctx, tensors, list(data), others)
        operator = "and" if isinstance(node.op, ast.And) else "or"
        joins = f"`{operator}` joins its operands like the two sides of an `if`"
        if found is not None:
            fields = self._fields(ctx, node, found, "")
            fields["subject"] = f"{joins}, and they are {_WHAT[found[0]]} and {_WHAT[found[1]]}"
            yield self.report(ctx, node, **fields)
        elif len(data) > 1:
            yield self.report(ctx, node, severity="warning", subject=f"{joins}, and they are two tensors", consequence=(
                f"2.10 joins them only when both have the same dtype ({_JOIN} for an int and a float tensor, "
                f"measured); for element-wise logic use `ops.logical_{operator}`"))

    def visit_if_exp(self, node: ast.IfExp, ctx):
        tensors = ctx.tensors(node)
        if not _decided_at_run_time(node.test, tensors):
            return
        found = self._mismatch(ctx, tensors, [node.body], [node.orelse])
        if found is not None:
            yield self.report(ctx, node.test, **self._fields(ctx, node, found, "chosen"))

    @staticmethod
    def _fields(ctx, node: ast.AST, kinds: Pair, where: str) -> dict:
        subject = (f"the two sides of this condition on tensor data give {_WHAT[kinds[0]]} and {_WHAT[kinds[1]]} "
                   f"({where})")
        if kinds[1] != "none":
            return {"subject": subject,
                    "consequence": f"2.10 fails to compile it at LAX and STRICT alike ({_JOIN})"}
        strict = ctx.graph.level_of(node) == "strict"
        return {"subject": subject, "severity": "level",
                "consequence": f"compiling it fails under STRICT ({_JOIN})" if strict else
                "compiles at the default LAX level; fails to compile under STRICT"}

    @staticmethod
    def _mismatch(ctx, tensors, one: List[Optional[ast.expr]], other: List[Optional[ast.expr]]) -> Optional[Pair]:
        """The first pair of kinds, one from each side, that 2.10 cannot join; None when all join."""
        kinds_one = {_kind(ctx, tensors, value) for value in one}
        kinds_other = {_kind(ctx, tensors, value) for value in other}
        for first, second in _CANNOT_JOIN:
            if (first in kinds_one and second in kinds_other) or (first in kinds_other and second in kinds_one):
                return first, second
        return None


def _decided_at_run_time(test: ast.expr, tensors) -> bool:
    """Does the condition hold tensor data? `x is None` does not: whether an argument is None is known when the
    graph is compiled, so the compiler folds it (as it folds `self.training`)."""
    if isinstance(test, ast.BoolOp):
        return any(_decided_at_run_time(value, tensors) for value in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _decided_at_run_time(test.operand, tensors)
    if isinstance(test, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops):
        return False
    if isinstance(test, ast.Name) and not isinstance(tensors.definition(test), ast.expr):
        # `if output_attentions:`: an argument, most often a Python flag the compiler folds, unless its callers
        # or its annotation say it is a tensor
        return tensors.certain_parameters.get(test.id) == "tensor"
    return tensors.derives(test)


def _is_boolean(ctx, value: ast.expr) -> bool:
    """A value that is a bool or a bool tensor whatever its operands: a comparison, `not`, `isinstance`, a
    nested `and`/`or` of such, `x.any()`, `ops.logical_*`."""
    if isinstance(value, (ast.Compare, ast.Constant)) or (isinstance(value, ast.UnaryOp)
                                                          and isinstance(value.op, ast.Not)):
        return True
    if isinstance(value, ast.BoolOp):
        return all(_is_boolean(ctx, v) for v in value.values)
    if isinstance(value, ast.Call):
        name = (ctx.names.qualname(value.func) or "").rpartition(".")[2] or getattr(value.func, "attr", "")
        return name in ("isinstance", "bool", "any", "all", "hasattr", "callable", "is_tensor") \
            or name.startswith(("logical_", "is", "equal"))
    return False


def _kind(ctx, tensors, value: Optional[ast.expr]) -> Optional[str]:
    """What a side gives, where that is certain: "tensor", "tuple", "int", "float", "str", "none"; else None."""
    if value is None or (isinstance(value, ast.Constant) and value.value is None):
        return "none"
    if isinstance(value, ast.Constant):
        if isinstance(value.value, bool):
            return None
        return {int: "int", float: "float", str: "str"}.get(type(value.value))
    if isinstance(value, ast.Tuple):
        return "tuple"
    if isinstance(value, ast.Name):
        definition = tensors.definition(value)
        if definition is None:
            certain = tensors.certain_parameters.get(value.id)
            if certain is not None:
                return "tensor" if certain == "tensor" else None
            return "tensor" if tensors.derives(value) and _used_as_tensor(ctx, value) else None
        if isinstance(definition, ast.expr) and not isinstance(definition, ast.Name):
            return _kind(ctx, tensors, definition)
        return None
    if isinstance(value, (ast.BinOp, ast.UnaryOp)) and tensors.derives(value):
        operands = [value.left, value.right] if isinstance(value, ast.BinOp) else [value.operand]
        if all(_kind(ctx, tensors, operand) in ("tensor", "int", "float") for operand in operands) \
                or isinstance(value, ast.UnaryOp):
            return "tensor"
        return None
    if isinstance(value, ast.Compare) and len(value.comparators) == 1 and tensors.derives(value) \
            and _kind(ctx, tensors, value.left) == "tensor":
        return "tensor"  # `x > 0.5`: a bool tensor
    if isinstance(value, ast.Call):
        qualname = ctx.names.qualname(value.func) or ""
        if qualname in framework.TENSOR_CLASSES:
            return "tensor"  # `Tensor([1, 2, 3])`
        if qualname.startswith(_TENSOR_FUNCTIONS) and qualname.rpartition(".")[2] not in _TUPLE_RESULTS \
                and tensors.derives(value):
            return "tensor"
    return None


def _used_as_tensor(ctx, name: ast.Name) -> bool:
    """A parameter the function treats as one tensor: a method called on it (`x.sum()`), or an operand of `-`,
    `/`, `@` or `**` (`+` and `*` also join and repeat tuples)."""
    function = ctx.tensors(name).function
    for node in ctx.walk.subtree(function):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name.id \
                and isinstance(ctx.parent(node), ast.Call) and ctx.parent(node).func is node:
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.Div, ast.MatMult, ast.Pow)) and any(
                isinstance(side, ast.Name) and side.id == name.id for side in (node.left, node.right)):
            return True
    return False


def _side_returns(statements: List[ast.stmt]) -> List[Optional[ast.expr]]:
    """The values the `return`s of a block give (None for a bare `return`), nested defs left out."""
    found: List[Optional[ast.expr]] = []
    stack: List[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node.value)
        elif not isinstance(node, _SCOPES) and isinstance(node, ast.stmt):
            stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return found


def _always_leaves(statements: List[ast.stmt]) -> bool:
    return bool(statements) and isinstance(statements[-1], _TERMINATORS)


def _block_around(ctx, node: ast.stmt) -> Tuple[List[ast.stmt], int]:
    """The statement list holding `node`, and where it stands in it (([], 0) when none does)."""
    parent = ctx.parent(node)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and node in block:
            return block, block.index(node)
    return [], 0


def _following(ctx, node: ast.stmt) -> List[ast.stmt]:
    """The statements after `node` in its block: the other side when the `if` body always returns."""
    block, index = _block_around(ctx, node)
    return block[index + 1:]


def _assigned_on_both_sides(ctx, node: ast.If) -> Iterator[Tuple[str, ast.expr, ast.expr]]:
    """(name, value on the `if` side, value on the other side) for names both sides give a value: assigned in
    the body and in the `else`, or in the body only and just before the `if`."""
    body = _last_assignments(node.body)
    if node.orelse:
        other = _last_assignments(node.orelse)
    else:
        block, index = _block_around(ctx, node)
        other = _last_assignments(block[:index])
    if _always_leaves(node.body) or (node.orelse and _always_leaves(node.orelse)):
        return
    for name, value in body.items():
        if name in other:
            yield name, value, other[name]


def _last_assignments(statements: List[ast.stmt]) -> dict:
    """{name: value} of the block's own top-level `name = value` statements, the last one winning."""
    values: dict = {}
    for statement in statements:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            values[statement.targets[0].id] = statement.value
    return values
