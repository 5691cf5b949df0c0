from __future__ import annotations

import ast
from typing import Any, Optional

from ms_lint.analysis.framework import INPLACE_METHODS
from ms_lint.analysis.walk import enclosing_function
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule

# In-place methods whose out-of-place twin (the name without `_`) takes the same arguments in 2.10; the others
# (`copy_`, `zero_`, `normal_`, `index_fill_`, ...) have no twin or a different signature.
_TWINS = frozenset({"add_", "sub_", "mul_", "div_", "remainder_", "floor_divide_", "clamp_", "exp_", "log_",
                    "floor_", "sigmoid_", "sign_", "tanh_", "erfinv_", "masked_fill_", "masked_scatter_", "fill_",
                    "fill_diagonal_", "addmm_"})
# Measured to agree in graph mode and PyNative on CPU (2.10): `dst.copy_(src)` writes the caller's tensor in both
# (MindSpore's own `tests/st/mint/test_copy_.py` relies on it)
_SAME_IN_BOTH_MODES = frozenset({"copy_"})
# Measured to return the same value in graph mode and PyNative on CPU (2.10) when called on a temporary whose result
# is used (`y = (x * 1).add_(1)`); `exp_` there compiles only in PyNative, the others fail in both on CPU
_SAME_ON_A_TEMPORARY = frozenset({"add_", "sub_", "mul_", "div_", "remainder_", "floor_divide_"})
# Tensor methods whose result may share the receiver's memory
_VIEWS = frozenset({"view", "view_as", "reshape", "reshape_as", "transpose", "permute", "squeeze", "unsqueeze",
                    "expand", "expand_as", "expand_dims", "narrow", "flatten", "unflatten", "swapaxes", "movedim",
                    "t", "as_strided", "select", "diagonal", "contiguous", "detach", "chunk", "split", "unbind"})


class InplaceMethodInGraph(Rule):
    """
    ## What it does
    Finds in-place tensor methods (`add_`, `mul_`, `sub_`, `clamp_`, `fill_`, `zero_`... the public in-place
    methods of `mindspore.Tensor` 2.10) called on a whole tensor (an input, a local, a Parameter) in
    graph-compiled code. Calls on a slice (`x[0].zero_()`) are MSL040's.

    ## Why it matters in graph mode
    In-place methods behave differently in graph mode and in PyNative, and from method to method. Measured on
    MindSpore 2.10, CPU, both syntax levels: `x.add_(y)` and `x.mul_(y)` update `x` **and the caller's
    tensor** passed as input (`div_`, `remainder_`, `floor_divide_` update `x` too); `x.sub_(y)` is **silently
    a no-op** (the returned `x` is unchanged); `clamp_`, `exp_`, `fill_`, `log_`, `sigmoid_`, `tanh_`... fail
    to compile with `RuntimeError: Unsupported op [InplaceClampScalar] on CPU` (`InplaceExp`...).
    PyNative on CPU does not mutate with `add_`, `mul_`, `sub_` or `exp_` at all, and raises
    `RuntimeError: The kernel InplaceClampScalar unregistered.` for `clamp_`, `fill_` and `masked_fill_` (which
    fails to compile too): on CPU those fail in both modes, as the message says. MindTorch documents
    the same: in-place operators do not share memory; write `b = a.xxx(...)` instead.

    `dst.copy_(src)` writes the caller's tensor in both modes (measured) and is not reported. Neither is
    `add_`, `sub_`, `mul_`, `div_`, `remainder_` or `floor_divide_` on a temporary whose result is used
    (`eps.mul(std).add_(mu)`): both modes return the same value (measured), and no name sees the tensor; nor on
    a local that holds a new value no other name takes, whose result is assigned and which is not read afterwards
    unless the assignment rebinds it (`y = self.skip(x)`, then `x = y.add_(x)`; `x = x.add_(noise)`). The
    out-of-place forms (`x = x.add(y)`) give the same result in every mode and are never reported.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x, y):
            x.sub_(y)
            x.clamp_(0, 1)
            return x
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x, y):
            x = x.sub(y)
            x = x.clamp(0, 1)
            return x
    ```

    ## Fix
    Unsafe, when the call is a statement on a plain name and the method has an out-of-place twin with the same
    arguments: `x.add_(y)` becomes `x = x.add(y)`. The local value is then what the code means in every mode;
    unsafe because in PyNative the caller's tensor (or another name for the same tensor) was mutated too and no
    longer is. No fix when the result is used
    (`y = x.add_(1)`), for attributes and Parameters (`self.p.mul_(2)`: use `ops.assign`), or for methods
    without a twin (`zero_`, `copy_`, `normal_`...).
    """

    code = "MSL041"
    name = "inplace-method-in-graph"
    severity = "warning"
    scope = "graph"
    message = ("in-place `{method}` on `{receiver}` in graph code reached from `{entry}`: depending on the op, it "
               "mutates the caller's tensor, does nothing, or fails (on CPU `clamp_`, `fill_`, `masked_fill_` have "
               "no kernel in either mode), and graph mode and PyNative differ")
    fix_applicability = "unsafe"
    needles = ("_(",)
    call_names = INPLACE_METHODS

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in INPLACE_METHODS) or func.attr in _SAME_IN_BOTH_MODES:
            return
        if isinstance(func.value, ast.Subscript):
            return  # an in-place call on a slice: MSL040 reports it
        if not ctx.tensors(node).derives(func.value):
            return  # not tensor data: some other object's method that happens to end in `_`
        if func.attr in _SAME_ON_A_TEMPORARY and (_result_of_a_temporary(ctx, node)
                                                  or _result_of_a_fresh_local(ctx, node)):
            return  # `eps.mul(std).add_(mu)`: the value returned, and no other name sees the tensor
        yield self.report(ctx, node, method=func.attr, receiver=ctx.text(func.value), fix=_fix(ctx, node))


def _result_of_a_temporary(ctx, call: ast.Call) -> bool:
    """Is the call's receiver a new value no name holds (`(x * 1)`, `ops.zeros_like(a)`, `x.astype(t)`), and its
    result used? Not a view of a tensor (`x.view(-1)`) nor what an in-place call returns (`x.mul_(s)` is `x`)."""
    receiver = call.func.value  # type: ignore[attr-defined]
    if isinstance(receiver, ast.Call):
        temporary = _new_value(receiver)
    else:
        temporary = isinstance(receiver, (ast.BinOp, ast.UnaryOp))
    return temporary and not isinstance(ctx.parent(call), ast.Expr)


def _result_of_a_fresh_local(ctx, call: ast.Call) -> bool:
    """`x = y.add_(x)` after `y = self.skip(x)`: the receiver is a local holding a new value (as
    `_result_of_a_temporary` asks of an expression) that no other name takes, the result is assigned, and the
    receiver is not read afterwards unless the assignment rebinds it. Both modes return the same value and the
    receiver's own update is never seen (GhostCai's stylegan2, issue 19's tenth sample)."""
    receiver: Any = call.func.value  # type: ignore[attr-defined]
    statement = ctx.parent(call)
    if not isinstance(receiver, ast.Name) or not isinstance(statement, ast.Assign) or statement.value is not call:
        return False
    tensors = ctx.tensors(call)
    built = tensors.definition(receiver)
    if not isinstance(built, (ast.Call, ast.BinOp)) or (isinstance(built, ast.Call) and not _new_value(built)):
        return False
    function = enclosing_function(call)
    if function is None or any(isinstance(n, (ast.For, ast.While)) for n in _ancestors(ctx, call, function)):
        return False  # (a loop reads it again in its next turn)
    rebinds = all(isinstance(t, ast.Name) and t.id == receiver.id for t in statement.targets)
    start, end = (built.lineno, built.col_offset), (statement.end_lineno, statement.end_col_offset)
    for name in ctx.walk.nodes_of(function).loads.get(receiver.id, ()):
        position = (name.lineno, name.col_offset)
        if name is receiver or position < start:
            continue
        if position >= end and not rebinds and tensors.definition(name) is built:
            return False  # read after the call: the modes give it different values
        if position < end and isinstance(ctx.parent(name), (ast.Assign, ast.Tuple, ast.List, ast.Dict, ast.Return,
                                                             ast.Starred, ast.NamedExpr)):
            return False  # another name (or a container) takes the tensor before the call
    return True


def _new_value(call: ast.Call) -> bool:
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    return not (method.endswith("_") or method in _VIEWS)


def _ancestors(ctx, node: ast.AST, stop: ast.AST):
    parent = ctx.parent(node)
    while parent is not None and parent is not stop:
        yield parent
        parent = ctx.parent(parent)


def _fix(ctx, call: ast.Call) -> Optional[Fix]:
    func: Any = call.func  # `<name>.<op>_(...)`: the hook checked the attribute
    statement = ctx.parent(call)
    if func.attr not in _TWINS or not isinstance(func.value, ast.Name) or not isinstance(statement, ast.Expr):
        return None
    name = func.value.id
    arguments = ctx.text(call)[len(ctx.text(func)):]  # `(y, alpha=2)` exactly as written
    if func.attr == "fill_diagonal_" and call.args:  # its twin takes a float fill only
        rest = [ctx.text(a) for a in call.args[1:]] + [
            f"{k.arg}={ctx.text(k.value)}" if k.arg else f"**{ctx.text(k.value)}" for k in call.keywords]
        arguments = f"({', '.join([edits.float_fill(ctx, call.args[0]), *rest])})"
    return Fix("unsafe", f"Assign the result of `{func.attr[:-1]}` to `{name}`",
               (ctx.replace(call, f"{name} = {name}.{func.attr[:-1]}{arguments}"),))
