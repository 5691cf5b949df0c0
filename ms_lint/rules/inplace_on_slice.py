from __future__ import annotations

import ast
from typing import Any, Optional

from ms_lint.analysis.framework import INPLACE_METHODS
from ms_lint.analysis.walk import enclosing_function
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule

# In-place methods whose out-of-place twin exists on mindspore.Tensor 2.10 with the same meaning (`hasattr`
# checked; copy_/to_/random ones differ in meaning and are left out).
OUT_OF_PLACE = {name: name[:-1] for name in (
    "add_", "addmm_", "clamp_", "div_", "erfinv_", "exp_", "fill_", "fill_diagonal_", "floor_", "floor_divide_",
    "index_add_", "index_fill_", "index_put_", "log_", "masked_fill_", "masked_scatter_", "mul_", "remainder_",
    "scatter_", "scatter_add_", "sigmoid_", "sign_", "sub_", "tanh_")}


def out_of_place_call(ctx, call: ast.Call):
    """The out-of-place form of `t.<op>_(...)` and the imports it needs, or None when there is none."""
    func: Any = call.func  # `<tensor>.<op>_(...)`: the hook checked the attribute
    receiver = ctx.text(func.value)
    if func.attr == "zero_" and not call.args and not call.keywords:
        ops, imports = edits.reference(ctx.graph, "mindspore.ops")
        return f"{ops}.zeros_like({receiver})", imports
    if func.attr in OUT_OF_PLACE:
        return f"{receiver}.{OUT_OF_PLACE[func.attr]}({_arguments(ctx, call)})", ()
    return None


class InplaceOnSlice(Rule):
    """
    ## What it does
    Finds in-place updates of a slice in graph-compiled code: item assignment, augmented assignment or
    `ops.assign` on a slice of a `Parameter` (`self.p[0:2] = v`), and in-place tensor methods called on a slice
    (`x[1:].clamp_(0, 1)`, `boxes[i, :, 0::4].clamp_(...)` as ported from PyTorch).

    ## Why it matters in graph mode
    Measured on MindSpore 2.10 (CPU, LAX and STRICT alike): `self.p[0:1] = 5` in `construct` leaves **the
    Parameter unchanged** after the call, even when `construct` reads it afterwards, and `ops.assign(self.p[0:1],
    v)` is a silent no-op; no error, no warning. Which item assignments are lost depends on the index alone (not on
    reads, returns or loops): a single slice (`p[1:]`, `p[:]`, `p[::2]`), the Ellipsis alone (`p[...]`), a
    boolean mask (`p[x > 0]`) and an int followed by a slice and only `:` after it (`p[0, 1:]`, `p[0, 1:, :]`) are
    lost, with `=` and `+=` alike. Written through, and not reported: an int or tensor index
    (`p[i] = p[i] * 0.9 + v`, in a loop too), a list of ints, nested subscripts (`p[1][1:]`) and every other
    tuple (`p[:, :, r:, :] = 0.0`, `p[1:, 0]`, `p[0, ...]`, `p[0, 1:, 1:]`). After a lost update, every later
    item assignment to the same Parameter in the function is lost too, whatever its index
    (`self.h[1:] = self.h[:-1]; self.h[0] = a[0]` loses both: the graph's `self.h` is a copy from then on).
    On Ascend the int-and-slice form is written through (MindSpore's source; not measured here). A pair whose
    int is a tensor (`p[self.i, 1:]`) is written through too; one whose int is a Python variable
    (`p[self.k, 1:]`, lost) is not reported, as the source does not always tell the two apart.
    `x[1:].clamp_()` and `x[0].zero_()` fail to compile (`RuntimeError: Kernel select
    failed`). MindTorch documents the same: in-place operators on slices do not take effect.

    ## Example
    ```python
    class Memory(nn.Cell):
        def construct(self, v):
            self.bank[0:2] = v
            boxes[:, 0::4].clamp_(0, 100)
            return self.bank
    ```

    ## Use instead
    ```python
    class Memory(nn.Cell):
        def construct(self, v):
            bank = self.bank.copy()
            bank[0:2] = v
            ops.assign(self.bank, bank)
            boxes[:, 0::4] = boxes[:, 0::4].clamp(0, 100)
            return self.bank
    ```

    ## Fix
    Unsafe for an in-place method on a slice used as a statement: `x[i].clamp_(a, b)` becomes
    `x[i] = x[i].clamp(a, b)` (the form MindTorch recommends; `zero_()` becomes `ops.zeros_like(...)`), for the
    methods whose out-of-place twin exists on `Tensor` with the same meaning; unsafe because code that ran (in
    PyNative, or a form that compiled) with the call having no effect now sees the slice change. Unsafe for a
    Parameter slice: the
    statement becomes a copy, the item assignment on the copy, and a whole-Parameter `ops.assign` (measured to update
    the Parameter at both syntax levels); unsafe because the Parameter now really changes, which code may not
    expect.
    """

    code = "MSL040"
    name = "inplace-on-slice"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "{what} in graph code reached from `{entry}`: {consequence}"
    call_names = INPLACE_METHODS | {"assign"}
    fix_applicability = "unsafe"

    def visit_assign(self, node: ast.Assign, ctx):
        if len(node.targets) != 1 or node.targets[0].__class__ is not ast.Subscript:
            return None  # only a slice can be updated (a plain return: no generator for most assignments)
        return self._parameter_slice_update(ctx, node, node.targets[0], node.value, "=")

    def visit_aug_assign(self, node: ast.AugAssign, ctx):
        yield from self._parameter_slice_update(ctx, node, node.target, node.value, _OPERATORS.get(type(node.op)))

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in INPLACE_METHODS and isinstance(func.value, ast.Subscript):
            yield self.report(ctx, node, compiled_only=False,  # not measured in PyNative: kept
                              what=f"in-place `{func.attr}` on the slice `{ctx.text(func.value)}`",
                              consequence="fails to compile or has no effect on the sliced tensor",
                              fix=self._method_fix(ctx, node))
            return
        if ctx.names.qualname(func) in ("mindspore.ops.assign", "mindspore.ops.function.assign") and node.args:
            parameter = self._parameter_of_slice(ctx, node.args[0])
            if parameter is not None:
                fix = None
                if len(node.args) == 2 and isinstance(ctx.parent(node), ast.Expr):
                    fix = self._parameter_fix(ctx, ctx.parent(node), node.args[0], node.args[1], "=", parameter)
                yield self.report(ctx, node, what=f"`ops.assign` on a slice of Parameter `{ctx.text(parameter)}`",
                                  consequence="a silent no-op: the Parameter keeps its value", fix=fix)

    def _parameter_slice_update(self, ctx, statement, target, value, operator):
        parameter = self._parameter_of_slice(ctx, target)
        if parameter is None or not (_update_is_lost(target) or _after_a_lost_update(ctx, statement, target)):
            return  # an index 2.10 writes through (`self.p[i] = v`, `self.p[:, :, r:] = 0`: measured)
        yield self.report(ctx, statement, what=f"update of a slice of Parameter `{ctx.text(parameter)}`",
                          consequence="the update is silently lost, the Parameter keeps its value",
                          fix=self._parameter_fix(ctx, statement, target, value, operator, parameter))

    @staticmethod
    def _parameter_of_slice(ctx, target: ast.AST) -> Optional[ast.Attribute]:
        """`self.p` for a target `self.p[...]` (or `self.p[i][j]`) where `p` is a Parameter of the Cell."""
        if not isinstance(target, ast.Subscript):
            return None
        while isinstance(target, ast.Subscript):
            target = target.value
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
            return None
        tensors = ctx.tensors(target)
        if not tensors.is_self(target.value):
            return None
        owner = ctx.graph.owner_class(tensors.method())
        if owner is not None and any(target.attr in s.parameters for s in ctx.graph.mro(owner)):
            return target
        return None

    @staticmethod
    def _method_fix(ctx, call: ast.Call) -> Optional[Fix]:
        statement = ctx.parent(call)
        replacement = out_of_place_call(ctx, call)
        if not isinstance(statement, ast.Expr) or replacement is None:
            return None
        content, imports = replacement
        receiver = ctx.text(getattr(call.func, "value", call.func))  # `<slice>.<op>_(...)`
        return Fix("unsafe", f"Assign the out-of-place result back to `{receiver}`",
                   (ctx.replace(call, f"{receiver} = {content}"),), imports)

    @staticmethod
    def _parameter_fix(ctx, statement, target, value, operator, parameter: Any) -> Optional[Fix]:
        if operator is None or not isinstance(target, ast.Subscript) or target.value is not parameter \
                or not isinstance(parameter, ast.Attribute):
            return None
        ops, imports = edits.reference(ctx.graph, "mindspore.ops")
        copy = f"{parameter.attr}_updated"
        indent = ctx.indentation(statement)
        index = ctx.text(target.slice)
        lines = [f"{copy} = {ctx.text(parameter)}.copy()",
                 f"{indent}{copy}[{index}] {operator} {ctx.text(value)}",
                 f"{indent}{ops}.assign({ctx.text(parameter)}, {copy})"]
        return Fix("unsafe", f"Update a copy and assign the whole Parameter with `{ops}.assign`",
                   (ctx.replace(statement, "\n".join(lines)),), imports)


def _update_is_lost(target: ast.Subscript) -> bool:
    """Does 2.10 drop an item assignment to a Parameter with this index? Measured (GRAPH_MODE on CPU, LAX and
    STRICT alike, `=` and `+=`, 79 forms): lost for a single slice (`p[1:]`, `p[:]`, `p[::2]`), the Ellipsis alone
    (`p[...]`), a boolean mask (`p[x > 0]`, `p[True]`) and an int followed by a slice of step 1 and only `:`
    after it (`p[0, 1:]`, `p[-1, :]`, `p[0, 1:, :]`); written through for an int or tensor index (`p[i]`, also in
    a loop), a list of ints, nested subscripts (`p[1][1:]`) and other tuples (`p[:, :, r:, :]`, `p[1:, 0]`,
    `p[0, ...]`, `p[0, 1:, 1:]`, `p[0, ::2]`). MindSpore's setitem writes in place only for the latter."""
    if isinstance(target.value, ast.Subscript):
        return False
    index = target.slice
    if isinstance(index, (ast.Slice, ast.Compare)):
        return True
    if isinstance(index, ast.Constant) and (index.value is Ellipsis or isinstance(index.value, bool)):
        return True
    if isinstance(index, ast.Tuple) and len(index.elts) >= 2 and _unit_step_slice(index.elts[1]) \
            and all(_whole(e) for e in index.elts[2:]):
        first = index.elts[0]
        if isinstance(first, ast.UnaryOp) and isinstance(first.op, ast.USub):
            first = first.operand
        # a literal int only: `p[self.k, 1:]` is lost for a Python int `k` and written through for a tensor one,
        # which the source does not always tell
        return isinstance(first, ast.Constant) and isinstance(first.value, int) and not isinstance(first.value, bool)
    return False


def _unit_step_slice(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Slice) and (expr.step is None or (
        isinstance(expr.step, ast.Constant) and expr.step.value == 1))


def _whole(expr: ast.expr) -> bool:
    """`:`"""
    return isinstance(expr, ast.Slice) and expr.lower is None and expr.upper is None and expr.step is None


def _after_a_lost_update(ctx, statement: ast.stmt, target: ast.Subscript) -> bool:
    """Does an earlier statement of the same function update the same Parameter with an index 2.10 drops? From
    then on `self.p` names a copy in the graph: every later item assignment to it is lost too (measured)."""
    function = enclosing_function(statement)
    attribute = target.value
    if function is None or not isinstance(attribute, ast.Attribute):
        return False
    for node in ast.walk(function):
        earlier = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AugAssign) else None)
        if isinstance(earlier, ast.Subscript) and earlier.lineno < statement.lineno \
                and isinstance(earlier.value, ast.Attribute) and earlier.value.attr == attribute.attr \
                and ast.dump(earlier.value) == ast.dump(attribute) and _update_is_lost(earlier):
            return True
    return False


def _arguments(ctx, call: ast.Call) -> str:
    parts = [ctx.text(a) for a in call.args] + [
        f"{k.arg}={ctx.text(k.value)}" if k.arg else f"**{ctx.text(k.value)}" for k in call.keywords]
    if getattr(call.func, "attr", "") == "fill_diagonal_" and call.args:
        parts[0] = edits.float_fill(ctx, call.args[0])
    return ", ".join(parts)


_OPERATORS = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.FloorDiv: "//=", ast.Mod: "%=",
              ast.Pow: "**=", ast.BitAnd: "&=", ast.BitOr: "|=", ast.BitXor: "^=", ast.MatMult: "@="}
