from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis import framework
from ms_lint.rule import Rule


class IntegerTensorParameter(Rule):
    """
    ## What it does
    Finds trainable `Parameter`s made from `Tensor` of integer literals without a dtype: `Parameter(Tensor(1))`,
    `Parameter(ms.Tensor([0, 0, 0]))`. PyTorch's `nn.Parameter(torch.Tensor(1))` (an uninitialised float tensor of
    shape `(1,)`, filled later) and `torch.Tensor([0, 0, 0])` (float) are ported this way.

    ## Why it matters in graph mode
    MindSpore's `Tensor(1)` is the int64 scalar 1 (shape `()`), and `Tensor([0, 0, 0])` is int64: the Parameter is
    an integer. Measured on MindSpore 2.10 in graph mode and PyNative: the forward pass runs (`x * rate` promotes
    to float32), but training fails when the optimizer is built over `trainable_params()`: `TypeError: For 'SGD',
    the element of 'parameters' must be one of Tensor[Float16], Tensor[Float32], but got Ref[Tensor[Int64]]`. And
    code written for PyTorch's shape `(1,)` meets a 0-d tensor (the community ACmix port's `ops.ones(p.shape)`
    fails on CPU). Found building a community port of ACmix (issue 19). Not reported: a dtype given
    (`Tensor(1, ms.float32)`), float literals (`Tensor(1.0)`, `Tensor([0.5])`: float32), `requires_grad=False`
    (a counter or an index table that is never trained), and data that is not a literal.

    ## Example
    ```python
    import mindspore as ms
    from mindspore import nn


    class ACmix(nn.Cell):
        def __init__(self):
            super().__init__()
            self.rate1 = ms.Parameter(ms.Tensor(1))
            self.rate2 = ms.Parameter(ms.Tensor(1))
    ```

    ## Use instead
    ```python
    import mindspore as ms
    from mindspore import nn


    class ACmix(nn.Cell):
        def __init__(self):
            super().__init__()
            self.rate1 = ms.Parameter(ms.Tensor([0.5], ms.float32))
            self.rate2 = ms.Parameter(ms.Tensor([0.5], ms.float32))
    ```

    ## Fix
    None: `Tensor(1)` ported from `torch.Tensor(1)` means a shape, `Tensor([0, 0, 0])` values; which float tensor
    the author meant (and its initial value) is the author's call.
    """

    code = "MSL074"
    name = "integer-tensor-parameter"
    severity = "error"
    scope = "module"
    message = ("`{call}` is a trainable int64 Parameter (`Tensor` of integer literals keeps int64; PyTorch's "
               "`torch.Tensor({data})` is a float tensor{shape_note}): the optimizer over `trainable_params()` "
               "raises TypeError (parameters must be Float16/Float32); give the data a float dtype")
    needles = ("Parameter",)
    call_names = frozenset({"Parameter"})

    def visit_call(self, node: ast.Call, ctx):
        if not node.args or not _trainable(node):
            return None
        data = node.args[0]
        if not (isinstance(data, ast.Call) and len(data.args) == 1 and not data.keywords):
            return None
        if not _integer_literals(data.args[0]):
            return None
        if not (_mindspore(ctx, node.func, framework.PARAMETER_CLASSES)
                and _mindspore(ctx, data.func, framework.TENSOR_CLASSES)):
            return None
        literal = data.args[0]
        shape_note = f" of shape ({ctx.text(literal)},)" if isinstance(literal, ast.Constant) else ""
        return iter([self.report(ctx, node, call=ctx.excerpt(node), data=ctx.text(literal), shape_note=shape_note)])


def _mindspore(ctx, func: ast.expr, classes: frozenset) -> bool:
    """Does `func` name one of MindSpore's (not MindTorch's) `classes`?"""
    qualname = ctx.names.qualname(func) or ""
    return qualname.startswith("mindspore.") and qualname in classes


def _trainable(call: ast.Call) -> bool:
    requires_grad: Optional[ast.expr] = next((k.value for k in call.keywords if k.arg == "requires_grad"), None)
    if requires_grad is None and len(call.args) >= 3:
        requires_grad = call.args[2]  # Parameter(default_input, name, requires_grad)
    return requires_grad is None or (isinstance(requires_grad, ast.Constant) and requires_grad.value is True)


def _integer_literals(expr: ast.expr) -> bool:
    """An int literal, or a (nested) list or tuple of them (bools are not ints here)."""
    if isinstance(expr, (ast.List, ast.Tuple)):
        return bool(expr.elts) and all(_integer_literals(element) for element in expr.elts)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) is int

