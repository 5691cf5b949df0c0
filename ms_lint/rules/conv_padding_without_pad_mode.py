from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis.bindings import assignments_of, binders
from ms_lint.analysis.framework import CONV_LAYERS, PADDED_LAYERS
from ms_lint.analysis.walk import enclosing_function, parameter_names
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule
from ms_lint.rules._conv import mindspore_padded_layer


class ConvPaddingWithoutPadMode(Rule):
    """
    ## What it does
    Finds a MindSpore convolution layer (`nn.Conv1d/2d/3d`, `nn.Conv1d/2d/3dTranspose`) or pooling layer
    (`nn.MaxPool1d/2d/3d`, `nn.AvgPool1d/2d/3d`) built with a nonzero `padding` and no `pad_mode="pad"`, and the
    PyTorch habit of passing the padding positionally (`nn.Conv2d(3, 8, 3, 1, 1)`, `nn.MaxPool2d(3, 2, 1)`), a
    slot MindSpore reads as `pad_mode`.

    ## Why it matters in graph mode
    MindSpore's convolutions default to `pad_mode="same"` and use `padding` only with `pad_mode="pad"`.
    Measured on MindSpore 2.10 (any mode, at construction, before anything is compiled):
    `nn.Conv2d(3, 8, 3, padding=1)` raises `ValueError: For 'Conv2D', the 'pad' must be zero when 'pad_mode'
    is not 'pad', but got 'pad': 1 and 'pad_mode': same.`; `nn.Conv1d`, `nn.Conv3d` and the three transposed
    layers raise the same way, and so does an explicit `pad_mode="same"`/`"valid"` with `padding=1`.
    `nn.Conv2d(3, 8, 3, 1, 1)` raises `TypeError: For 'Conv2D', the type of 'pad_mode' should be 'str', but got
    type 'int'.` With `pad_mode="pad", padding=1` the layer builds and a 3x3 kernel keeps an 8x8 input 8x8.
    The pooling layers (default `pad_mode="valid"`) raise the same way: `nn.MaxPool2d(3, 2, padding=1)` raises
    `ValueError: For MaxPool2d, the parameter 'padding', ... can not be set to non-default value when pad_mode is
    not 'pad'`, `nn.AvgPool2d(3, 2, padding=1)` a ValueError about its `pad`, and `nn.MaxPool2d(3, 2, 1)` a
    TypeError about `pad_mode` (all measured on 2.10).

    `mindspore.mint.nn.Conv2d` and MindTorch's `nn.Conv2d` take PyTorch's arguments: not reported. Neither is a
    `padding` that is not a literal (it may be 0) or a `pad_mode` that is not a literal; but a local (not a
    parameter) whose every assignment in its function is a nonzero literal (`padw = 1`, CycleGAN's discriminator
    in issue 19's seventeenth sample) counts as that literal.

    ## Example
    ```python
    from mindspore import nn

    conv = nn.Conv2d(3, 8, 3, padding=1)
    ```

    ## Use instead
    ```python
    from mindspore import nn

    conv = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1)
    ```

    ## Fix
    Safe: `pad_mode="pad"` is added (or replaces the explicit `"same"`/`"valid"`), and a positional padding in
    the `pad_mode` slot becomes `pad_mode="pad", padding=<value>` when it is the last positional argument. The
    code raised before, and afterwards pads exactly as its `padding` says.
    """

    code = "MSL060"
    name = "conv-padding-without-pad-mode"
    severity = "error"
    scope = "module"
    message = "`{call}` {problem}: raises {error} at construction ({advice})"
    fix_applicability = "safe"
    needles = ("Conv", "Pool")
    call_names = frozenset(PADDED_LAYERS)

    def visit_call(self, node: ast.Call, ctx):
        layer = mindspore_padded_layer(ctx, node)
        if layer is None:
            return
        pad_mode_position, padding_position = PADDED_LAYERS[layer]
        shown = f"{ctx.text(node.func)}(...)"
        pad_mode = _argument(node, pad_mode_position, "pad_mode")
        if pad_mode is not None and pad_mode is _positional(node, pad_mode_position) and _is_padding(pad_mode):
            ordinal = {2: "3rd", 4: "5th"}[pad_mode_position]
            yield self.report(ctx, node, call=shown,
                              problem=f"passes `{ctx.text(pad_mode)}` as the {ordinal} argument, MindSpore's "
                                      "`pad_mode`",
                              error="TypeError", advice=f'write `pad_mode="pad", padding={ctx.text(pad_mode)}`',
                              fix=self._fix_positional(ctx, node, pad_mode, pad_mode_position))
            return
        padding = _argument(node, padding_position, "padding")
        if padding is None or not (_is_nonzero_padding(padding) or _nonzero_local(ctx, padding)):
            return
        if pad_mode is None:
            mode = "same" if layer in CONV_LAYERS else "valid"  # the layers' defaults
        elif isinstance(pad_mode, ast.Constant) and isinstance(pad_mode.value, str):
            mode = pad_mode.value
        else:
            return  # pad_mode chosen at run time
        if mode == "pad":
            return
        yield self.report(ctx, node, call=shown,
                          problem=f'has `padding={ctx.text(padding)}` with pad_mode "{mode}"'
                          + (" (the default)" if pad_mode is None else ""),
                          error="ValueError", advice='padding needs `pad_mode="pad"`',
                          fix=self._fix_mode(ctx, node, pad_mode))

    @staticmethod
    def _fix_mode(ctx, node: ast.Call, pad_mode: Optional[ast.expr]) -> Optional[Fix]:
        edit = edits.append_argument(ctx, node, 'pad_mode="pad"') if pad_mode is None else ctx.replace(
            pad_mode, '"pad"')
        return Fix("safe", 'Use `pad_mode="pad"`', (edit,)) if edit is not None else None

    @staticmethod
    def _fix_positional(ctx, node: ast.Call, value: ast.expr, position: int) -> Optional[Fix]:
        if len(node.args) != position + 1 or any(k.arg in ("pad_mode", "padding") for k in node.keywords):
            return None  # later positional arguments would follow the keywords
        return Fix("safe", 'Pass `pad_mode="pad"` and the padding by keyword',
                   (ctx.replace(value, f'pad_mode="pad", padding={ctx.text(value)}'),))


def _positional(call: ast.Call, position: int) -> Optional[ast.expr]:
    return call.args[position] if len(call.args) > position else None


def _argument(call: ast.Call, position: int, keyword: str) -> Optional[ast.expr]:
    found = _positional(call, position)
    return found if found is not None else next((k.value for k in call.keywords if k.arg == keyword), None)


def _literal_ints(expr: ast.expr) -> Optional[list]:
    """The ints of `1` or `(1, 1, 0, 0)`; None for anything that is not an int literal or a tuple of them."""
    items = expr.elts if isinstance(expr, (ast.Tuple, ast.List)) else [expr]
    values = [item.value for item in items if isinstance(item, ast.Constant)]
    if len(values) != len(items) or not all(type(v) is int for v in values):
        return None
    return values


def _is_padding(expr: ast.expr) -> bool:
    """An int or a tuple of ints: a padding amount, never a pad mode."""
    return _literal_ints(expr) is not None


def _nonzero_local(ctx, expr: ast.expr) -> bool:
    """Is `expr` a local (not a parameter) every assignment of which in its function is a nonzero padding literal
    (`padw = 1` then `nn.Conv2d(..., padding=padw)`: CycleGAN's discriminator, issue 19's seventeenth sample)?"""
    function = enclosing_function(expr)
    if not isinstance(expr, ast.Name) or function is None or isinstance(function, ast.Lambda) \
            or expr.id in parameter_names(function):
        return False
    bindings = binders(ctx.walk, function, expr.id)
    values = [value for binding in bindings for _, _, value in assignments_of(binding)]
    return bool(values) and len(values) == len(bindings) \
        and all(isinstance(value, ast.expr) and _is_nonzero_padding(value) for value in values)


def _is_nonzero_padding(expr: ast.expr) -> bool:
    values = _literal_ints(expr)
    return values is not None and any(values)
