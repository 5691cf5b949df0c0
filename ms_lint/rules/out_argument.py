from __future__ import annotations

import ast
from typing import Optional

from ms_lint.rule import Fix, Rule

# Calls whose `out=` is the PyTorch idiom ported to a MindSpore API that does not write through it.
_PACKAGES = ("mindtorch.", "mindspore.mint.")


class OutArgument(Rule):
    """
    ## What it does
    Finds the PyTorch `out=` keyword in calls to MindTorch (`torch.add(a, b, out=c)` after
    `import mindtorch.torch as torch`, or after `mstorch_enable`) and `mindspore.mint` functions, anywhere in a
    module.

    ## Why it matters in graph mode
    MindSpore tensors do not share memory the way `out=` assumes. The MindTorch manual says so ("the `out=`
    interfaces do not really share memory; write `output = torch.xxx(*)`, which also works in graph mode").
    MindTorch's own source (not run here: MindTorch is not installed) copies the result into `out` in PyNative
    with a warning, and in graph mode raises `ValueError: In MindSpore static graph mode, `out` in `add` should
    be None, please set out=None and use return value instead of `out`.`

    `mindspore.mint` 2.10 does not take `out=` at all. Measured on CPU, in PyNative and in graph mode at both
    syntax levels: `mint.add(x, x, out=y)` raises `TypeError: Failed calling add with "add(Tensor, Tensor,
    out=Tensor)".`, and `mint.sum`, `mint.cat`, `mint.matmul`... raise `TypeError: sum() got an unexpected
    keyword argument 'out'` (in graph mode `RuntimeError: Got an unexpected keyword argument 'out'`). No `mint`
    function in 2.10 lists `out` in its signature.

    ## Example
    ```python
    import mindtorch.torch as torch

    def normalise(x, buffer):
        torch.div(x, x.norm(), out=buffer)
        return buffer
    ```

    ## Use instead
    ```python
    import mindtorch.torch as torch

    def normalise(x, buffer):
        buffer = torch.div(x, x.norm())
        return buffer
    ```

    ## Fix
    Safe when the call is a one-line statement: `f(a, out=b)` becomes `b = f(a)`. The name `b` then holds the
    result, which is what the code reads afterwards; another reference to the old `b` object no longer sees
    the result, and never did in graph mode. No fix when the call's value is used (`y = f(a, out=b)`).
    """

    code = "MSL042"
    name = "out-argument"
    severity = "warning"
    scope = "module"
    message = "`out=` in `{call}`{where}: {consequence}"
    fix_applicability = "safe"
    needles = ("out=", "out =")

    def visit_call(self, node: ast.Call, ctx):
        out = next((k for k in node.keywords if k.arg == "out"), None)
        if out is None or (isinstance(out.value, ast.Constant) and out.value.value is None):
            return None  # most calls (a plain return: no generator for them)
        return self._report(node, ctx, out)

    def _report(self, node: ast.Call, ctx, out: ast.keyword):
        qualname = ctx.names.qualname(node.func) or ""
        if not qualname.startswith(_PACKAGES):
            return
        if qualname.startswith("mindspore.mint."):
            consequence = "`mindspore.mint` takes no `out=` (TypeError in every mode); use the return value"
        else:
            consequence = ("MindTorch tensors share no memory: MindTorch raises ValueError for `out=` in graph "
                           "mode and only copies into it in PyNative; use the return value")
        entry = ctx.graph.entry_of(node)
        where = f" in graph code reached from `{entry.name}`" if entry is not None else ""
        yield self.report(ctx, node, call=ctx.text(node.func), where=where, consequence=consequence,
                          fix=_fix(ctx, node, out))


def _fix(ctx, call: ast.Call, out: ast.keyword) -> Optional[Fix]:
    statement = ctx.parent(call)
    target = out.value
    if not isinstance(statement, ast.Expr) or not _assignable(target) or call.lineno != call.end_lineno:
        return None  # the value is used, `out` is no target, or the call spans lines (comments would be lost)
    arguments = [ctx.text(a) for a in call.args] + [
        f"{k.arg}={ctx.text(k.value)}" if k.arg else f"**{ctx.text(k.value)}" for k in call.keywords if k is not out]
    return Fix("safe", f"Assign the result to `{ctx.text(target)}`",
               (ctx.replace(call, f"{ctx.text(target)} = {ctx.text(call.func)}({', '.join(arguments)})"),))


def _assignable(target: ast.expr) -> bool:
    if isinstance(target, (ast.Tuple, ast.List)):
        return bool(target.elts) and all(_assignable(e) for e in target.elts)
    return isinstance(target, (ast.Name, ast.Attribute, ast.Subscript))
