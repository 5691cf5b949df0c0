from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis.walk import enclosing_function
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
    A one-line statement `f(a, out=b)` becomes `b = f(a)`: the name `b` then holds the result, which is what the
    code reads afterwards. Safe for `mindspore.mint` functions: the call raised TypeError, so nothing that ran
    changes. Unsafe for MindTorch: another reference to the old `b` object (a view, a buffer of an optimizer
    state, `torch.cat(..., out=x[0:2])`) no longer sees the result, which it did in PyNative (MindTorch's own
    `nn.init.eye_` writes into its argument this way). For MindTorch the fix is offered only when `out=` names a
    local of the function that only a tensor-creating call binds (`b = torch.empty(...)`) and no other name
    copies: no fix for a parameter, a global, a subscript or attribute (a view, a buffer). No fix when the
    call's value is used (`y = f(a, out=b)`).
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
                          fix=_fix(ctx, node, out, mint=qualname.startswith("mindspore.mint.")))


def _fix(ctx, call: ast.Call, out: ast.keyword, mint: bool) -> Optional[Fix]:
    """Safe for `mindspore.mint` (the call raises TypeError: nothing that ran is changed); unsafe for MindTorch,
    and only where the `out=` buffer cannot be seen through another reference (`_fresh_local`)."""
    statement = ctx.parent(call)
    target = out.value
    if not isinstance(statement, ast.Expr) or call.lineno != call.end_lineno:
        return None  # the value is used, or the call spans lines (comments would be lost)
    if not (_assignable(target) if mint else _fresh_local(ctx, call, target)):
        return None
    arguments = [ctx.text(a) for a in call.args] + [
        f"{k.arg}={ctx.text(k.value)}" if k.arg else f"**{ctx.text(k.value)}" for k in call.keywords if k is not out]
    return Fix("safe" if mint else "unsafe", f"Assign the result to `{ctx.text(target)}`",
               (ctx.replace(call, f"{ctx.text(target)} = {ctx.text(call.func)}({', '.join(arguments)})"),))


# functions that return a new tensor (never a view of another): an `out=` buffer made by one of them and held by one
# local name only is not seen through another reference
_CREATORS = frozenset({"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
                       "tensor", "rand", "randn", "arange", "linspace", "eye"})


def _fresh_local(ctx, call: ast.Call, target: ast.expr) -> bool:
    """`out=name` where every binding of `name` in the enclosing function makes a new tensor (`torch.empty(...)`)
    and the name is never copied to another (`y = name`): rebinding it then loses nothing. A parameter, a global,
    a view (`x[0:2]`) or an attribute (an optimizer's state buffer) may be read through another reference."""
    function = enclosing_function(call)
    if not isinstance(target, ast.Name) or function is None:
        return False
    name = target.id
    arguments = function.args
    if name in {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                *filter(None, (arguments.vararg, arguments.kwarg)))}:
        return False
    bindings = 0
    for node in ast.walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            creator = node.value.func if isinstance(node.value, ast.Call) else None
            label = creator.attr if isinstance(creator, ast.Attribute) else getattr(creator, "id", None)
            if len(node.targets) != 1 or label not in _CREATORS:
                return False
            bindings += 1
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)) and any(
                isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(node)):
            return False
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == name:
            return False  # `alias = name`: the buffer has a second name
    return bindings > 0


def _assignable(target: ast.expr) -> bool:
    if isinstance(target, (ast.Tuple, ast.List)):
        return bool(target.elts) and all(_assignable(e) for e in target.elts)
    return isinstance(target, (ast.Name, ast.Attribute, ast.Subscript))
