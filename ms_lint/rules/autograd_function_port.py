from __future__ import annotations

import ast

from ms_lint.rule import Rule

AUTOGRAD_FUNCTIONS = frozenset({
    "torch.autograd.Function", "torch.autograd.function.Function",
    "mindtorch.torch.autograd.Function", "mindtorch.torch.autograd.function.Function",
})


class AutogradFunctionPort(Rule):
    """
    ## What it does
    Finds a subclass of PyTorch's `torch.autograd.Function` (static `forward(ctx, ...)`/`backward(ctx, ...)`)
    in a module that uses MindSpore or MindTorch (it imports `mindspore` or `mindtorch`, or enables MindTorch's
    `torch` redirection). The finding is on the `class` line.

    ## Why it matters in graph mode
    MindSpore has no `torch.autograd.Function` (2.10 has no `mindspore.autograd` at all): a custom backward is a
    `bprop(self, *inputs, out, dout)` method on an `nn.Cell` (MindTorch: on an `nn.Module`; its migration guide
    says "MindTorch uses nn.Module.bprop instead of torch.autograd.Function.backward"), and the layer is called
    as an instance, not through `.apply`. MindTorch also cannot save forward intermediates on `ctx`: `bprop`
    recomputes from its inputs. Measured on MindSpore 2.10 (LAX, STRICT and PyNative): a Cell around
    `ops.clamp` whose `bprop` returns `dout` gets the gradient [1, 1, 1] for inputs [0.5, 2, -3]; the same
    forward written as a Function-style class with a static `backward` gets clamp's own gradient [1, 0, 0]:
    MindSpore differentiates the forward and never calls `backward`, so the custom gradient is silently lost.
    With real PyTorch installed next to MindSpore, the class computes on PyTorch tensors, outside MindSpore's
    graph and autodiff altogether (NOT RUN: PyTorch is not installed in the measuring environment).

    `mindspore.common._grad_function._Function` (MindSpore's own function-style custom backward) and Cells that
    define `bprop` are not reported; neither is a PyTorch-only module (no MindSpore, no MindTorch).

    ## Example
    ```python
    import torch
    import mindspore

    class Clip(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clamp(-1, 1)

        @staticmethod
        def backward(ctx, grad):
            return grad
    ```

    ## Use instead
    ```python
    from mindspore import nn, ops

    class Clip(nn.Cell):
        def construct(self, x):
            return ops.clamp(x, -1, 1)

        def bprop(self, x, out, dout):
            return (dout,)
    ```

    ## Fix
    None: the port changes signatures (`ctx` goes away, `bprop` receives the inputs, the output and the output's
    gradient) and call sites (`Clip.apply(x)` becomes `Clip()(x)`), which needs a person.
    """

    code = "MSL066"
    name = "autograd-function-port"
    severity = "warning"
    scope = "module"
    message = ("`{cls}` subclasses `{base}` in MindSpore code: write it as an `nn.Cell` with `construct` and "
               "`bprop(self, *inputs, out, dout)`, called as an instance instead of `.apply`")
    needles = ("Function",)

    def visit_class_def(self, node: ast.ClassDef, ctx):
        imports = ctx.graph.imports
        if not (imports.mstorch or any(target.partition(".")[0] in ("mindspore", "mindtorch")
                                       for target in imports.names.values())):
            return
        for base in node.bases:
            qualname = ctx.names.qualname(base)
            if qualname in AUTOGRAD_FUNCTIONS:
                yield self.report(ctx, node, cls=node.name, base=ctx.text(base))
                return
