from __future__ import annotations

import ast
from typing import Any, Optional

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function, parameter_defaults
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule
from ms_lint.rules._mindspore_values import bound_values, passed_values

# MindSpore's batch normalisations, whose `momentum` is the weight of the old moving statistics (default 0.9).
# `nn.InstanceNorm*d` (momentum 0.1, PyTorch's meaning) and `mindspore.mint.nn.BatchNorm*d` are not among them.
BATCH_NORMS = frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"})
MOMENTUM_POSITION = 2  # (num_features, eps, momentum, ...)
_CANDIDATES = BATCH_NORMS | {None}


class BatchnormTorchMomentum(Rule):
    """
    ## What it does
    Finds MindSpore batch normalisations (`nn.BatchNorm1d/2d/3d`, `nn.SyncBatchNorm`) built with a literal
    `momentum` below 0.5, the range of PyTorch's momentum values. Not with `use_batch_statistics=False`: the
    moving statistics are then never updated (measured), so the momentum has no effect. The flag may be a name
    that is False wherever it runs: a local bound only to False, a parameter of a module function every call of
    which passes such a value (a `_batch_norm2d_init(..., use_batch_statistics=bn_training)` helper of a frozen
    backbone), or a parameter of a method that defaults to False.

    ## Why it matters in graph mode
    The two frameworks' `momentum` weigh opposite terms. MindSpore:
    `moving = momentum * moving + (1 - momentum) * batch` (default 0.9); PyTorch:
    `running = (1 - momentum) * running + momentum * batch` (default 0.1), so `momentum_pytorch =
    1 - momentum_mindspore`. Measured on MindSpore 2.10 (training mode, batch mean 1.5, moving mean 0):
    `nn.BatchNorm2d(2, momentum=0.9)` moves the mean to 0.15, PyTorch's `momentum=0.1` carried over moves it to
    1.35, silently: the moving statistics then follow the last batches almost only and inference normalises with
    noisy values. `nn.BatchNorm1d` does the same.

    A momentum passed through a parameter of the enclosing function counts with that parameter's literal
    default when the function never rebinds it (`def _bn(c, momentum=0.1): return nn.BatchNorm2d(c,
    momentum=momentum)`, the default being what the callers get unless they pass one). Values of 0.5 and above,
    other non-literal momenta, `nn.InstanceNorm*d` (its momentum has PyTorch's meaning),
    `mindspore.mint.nn.BatchNorm*d` and MindTorch layers are not reported.

    ## Example
    ```python
    from mindspore import nn

    bn = nn.BatchNorm2d(64, momentum=0.1)
    ```

    ## Use instead
    ```python
    from mindspore import nn

    bn = nn.BatchNorm2d(64, momentum=0.9)
    ```

    ## Fix
    Unsafe: `momentum=m` becomes `momentum=1 - m`, computed and printed as written (`0.1` -> `0.9`,
    `0.03` -> `0.97`). It changes how fast the moving statistics follow the batches: right for a PyTorch port,
    wrong for the rare model that wants a short memory. A momentum coming from a parameter default has no fix:
    the default is shared with every caller.
    """

    code = "MSL063"
    name = "batchnorm-torch-momentum"
    severity = "warning"
    scope = "module"
    message = ("`{call}` with momentum={value}: MindSpore keeps {kept:g} % of the moving statistics per step "
               "(PyTorch's momentum={value} keeps {torch:g} %); use momentum={complement} for PyTorch's behaviour")
    fix_applicability = "unsafe"
    needles = ("BatchNorm",)
    call_names = BATCH_NORMS

    def visit_call(self, node: ast.Call, ctx):
        if ctx.names.last_name(node.func) not in _CANDIDATES or len(node.args) + len(node.keywords) < 2:
            return
        if framework.mindspore_layer(ctx.names.qualname(node.func)) not in BATCH_NORMS:
            return
        momentum = node.args[MOMENTUM_POSITION] if len(node.args) > MOMENTUM_POSITION else next(
            (k.value for k in node.keywords if k.arg == "momentum"), None)
        if any(k.arg == "use_batch_statistics" and _always_false(ctx, k.value) for k in node.keywords):
            return  # the moving statistics are never updated (measured): the momentum has no effect
        literal: Any = momentum
        shown = None
        if isinstance(momentum, ast.Name):
            literal = _parameter_default(node, momentum.id)
            function: Any = enclosing_function(node)  # a def: the name is one of its parameters
            shown = f"{momentum.id} (default {ctx.text(literal)} of `{function.name}`)" if literal else None
        value = _number(literal)
        if value is None or not 0 <= value < 0.5:
            return
        text = ctx.text(literal)
        complement = edits.complement(text)
        yield self.report(ctx, node, call=f"{ctx.text(node.func)}(...)", value=shown or text, kept=value * 100,
                          torch=(1 - value) * 100, complement=complement,
                          fix=self._fix(ctx, momentum, complement) if momentum is not None and literal is momentum
                          else None)

    @staticmethod
    def _fix(ctx, momentum: ast.expr, complement: Optional[str]) -> Optional[Fix]:
        if complement is None:
            return None
        return Fix("unsafe", f"Use momentum={complement} (MindSpore's meaning)", (ctx.replace(momentum, complement),))


def _always_false(ctx, value: ast.expr, depth: int = 0) -> bool:
    """Is `value` False wherever it runs: the constant, a local bound only to False, a parameter of a module
    function every call of which passes such a value, or a parameter of a method (whose callers are not known by
    name) that defaults to False? maskrcnn's frozen backbone (issue 19's tenth sample) passes
    `use_batch_statistics=bn_training` with `bn_training = False` to its `_batch_norm2d_init` helper."""
    if isinstance(value, ast.Constant):
        return value.value is False
    if not isinstance(value, ast.Name) or depth > 3:
        return False
    values = bound_values(ctx, value)
    for bound in values:
        if not isinstance(bound, ast.arg):
            if not _always_false(ctx, bound, depth + 1):
                return False
            continue
        passed = passed_values(ctx, bound)
        if passed:
            if not all(_always_false(ctx, given, depth + 1) for given in passed):
                return False
            continue
        function: Any = enclosing_function(bound)
        default = parameter_defaults(function.args).get(bound.arg)
        if ctx.graph.owner_class(function) is None or not (isinstance(default, ast.Constant)
                                                           and default.value is False):
            return False
    return bool(values)


def _parameter_default(call: ast.Call, name: str) -> Optional[ast.expr]:
    """The literal default of the parameter `name` of the function around `call`, when the function never
    rebinds it: `def _bn(channels, momentum=0.1): return nn.BatchNorm2d(channels, momentum=momentum)`."""
    function = enclosing_function(call)
    if function is None or isinstance(function, ast.Lambda):
        return None
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(arguments.defaults):], arguments.defaults))
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    default = defaults.get(name)
    if default is None or any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                              for stmt in function.body for n in ast.walk(stmt)):
        return None
    return default


def _number(expr: Optional[ast.expr]) -> Optional[float]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    return None
