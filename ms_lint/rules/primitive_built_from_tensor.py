from __future__ import annotations

import ast

from ms_lint.analysis import framework
from ms_lint.rule import Rule

_NOT_JUDGED = (ast.Starred, ast.Tuple, ast.List)


class PrimitiveBuiltFromTensor(Rule):
    """
    ## What it does
    Finds `mindspore.ops` primitives built in graph code from tensor data: `ops.BatchMatMul(q, k)` (PyTorch's
    `torch.bmm(q, k)` ported as the primitive's class), or `ops.Conv2D(out_channel=width)` where `width` comes
    from a tensor's value (`int(x.asnumpy().item())`).

    ## Why it matters in graph mode
    A primitive takes Python settings when it is built and its tensors when it is called
    (`ops.BatchMatMul()(q, k)`). Graph mode compiles the settings as constants, so a setting that depends on
    tensor data fails to compile, measured on MindSpore 2.10 at both syntax levels:
    `ops.Conv2D(out_channel=int(8 * s.asnumpy().item()))` gives `TypeError: When creating an instance of
    'Conv2D', all arguments are required to be constants, but input 0 is a variable` where PyNative runs it,
    `ops.ReduceSum(keep_dims=s > 0)` `Failed calling ReduceSum with "ReduceSum(keep_dims=Tensor, ...)"`, and
    `ops.BatchMatMul(q, k)` builds a primitive whose use as a tensor fails. Two were found building community
    ports of PyTorch models (issue 19). Host code is not reported: PyNative builds such a primitive, and what
    fails later depends on its use. Nor are bare arguments of the compiled function (a `@jit` function's
    argument may be a Python int, a constant there) or tuples of settings (`ops.Pad(((0, 0), (h, h)))`, mostly
    shape arithmetic): only tensor data the function computes, or host data read from a tensor.

    ## Example
    ```python
    from mindspore import nn, ops


    class Attention(nn.Cell):
        def construct(self, x):
            q, k = self.query(x), self.key(x)
            return ops.softmax(ops.BatchMatMul(q, k), -1)
    ```

    ## Use instead
    ```python
    from mindspore import nn, ops


    class Attention(nn.Cell):
        def construct(self, x):
            q, k = self.query(x), self.key(x)
            return ops.softmax(ops.BatchMatMul()(q, k), -1)
    ```

    ## Fix
    None: the settings and inputs of a primitive differ per class; `ops.BatchMatMul()(q, k)` or the functional
    `ops.bmm(q, k)` are the usual forms.
    """

    code = "MSL070"
    name = "primitive-built-from-tensor"
    severity = "error"
    scope = "graph"
    message = ("`{call}` builds a primitive from tensor data (`{value}`) in graph code reached from `{entry}`: a "
               "primitive takes constant settings when built and tensors when called (`{call_form}`); fails to "
               "compile in graph mode")
    needles = ("ops", "P.")
    call_names = framework.OPS_PRIMITIVES

    def visit_call(self, node: ast.Call, ctx):
        qualname = ctx.names.qualname(node.func) or ""
        package, _, name = qualname.rpartition(".")
        if package not in framework.OPS_PRIMITIVE_PACKAGES or name not in framework.OPS_PRIMITIVES:
            return
        tensors = ctx.tensors(node)
        for value in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(value, _NOT_JUDGED):
                continue  # `ops.Pad(((0, 0), (h, h)))`: elements are mostly shape arithmetic, which stays constant
            # tensor data the function computes, or host data read from a tensor (`int(s.asnumpy().item())`)
            if tensors.computed(value) or _reads_tensor_value(tensors, value, 0):
                yield self.report(ctx, node, call=f"{ctx.text(node.func)}(...)", value=_short(ctx, value),
                                  call_form=f"{ctx.text(node.func)}(settings)(tensors)")
                return


_VALUE_READS = frozenset({"asnumpy", "item", "tolist"})


def _reads_tensor_value(tensors, expr: ast.AST, depth: int) -> bool:
    """Does `expr`, or what the names in it were assigned, read a tensor's value (`.asnumpy()`, `.item()`,
    `.tolist()`)? Shapes (`x.shape[-2] * 2`) are constants in graph mode and do not count."""
    if depth > 3:
        return False
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VALUE_READS:
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            definition = tensors.definition(node)
            if definition is not None and definition is not expr and _reads_tensor_value(tensors, definition,
                                                                                         depth + 1):
                return True
    return False


def _short(ctx, expr: ast.expr) -> str:
    text = ctx.text(expr)
    return text if len(text) <= 30 and "\n" not in text else text[:27] + "..."
