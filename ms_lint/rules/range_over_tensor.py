from __future__ import annotations

import ast

from ms_lint.analysis import mindspore_tensor
from ms_lint.rule import Rule


class RangeOverTensor(Rule):
    """
    ## What it does
    Finds `range(...)` calls in graph-compiled code whose bounds are tensors: `for i in range(n)` where `n` is
    a tensor input, `range(x.sum())`, `range(self.steps)` where `steps` is a `Parameter`.

    ## Why it matters in graph mode
    The graph compiler unrolls `range` at compile time and needs Python integers for it. Measured on
    MindSpore 2.10 (CPU, LAX and STRICT alike): `for i in range(n)` with a 0-d int tensor `n` fails to compile
    with `TypeError: For 'make_range', the 0th input should be a int scalar but got AbstractTensor(shape: (),
    element: AbstractScalar(Type: Int32, ...))`; so do `range(x.sum())` and `list(range(n))`. PyNative runs the
    same code.

    Bounds converted to Python numbers compile at both levels and follow the value at each call (measured:
    `range(int(n))` and `range(n.item())` gave 2 iterations for `n = 2` and 5 for `n = 5`). Shapes and Python
    attributes are constants and are never reported: `range(len(x.shape))`, `range(x.shape[0])`,
    `range(self.n)`, `range(ops.shape(x)[0])`, `b, c = self.shape(x)` with `self.shape = P.Shape()`. A
    `construct` argument used only as a `range` bound is taken for a Python int (graph mode accepts int
    arguments) unless it is annotated `Tensor` or also used as a tensor; so is a helper method's argument
    unless annotated `Tensor`, since callers often pass Python ints. An item by name (`info["num_expert"]`) or
    an attribute no `Tensor` has (`graph.n_mols`) of an argument is a Python object's count, not reported.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            steps = (x > 0).sum()
            for _ in range(steps):
                x = self.block(x)
            return x
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            steps = (x > 0).sum()
            for _ in range(int(steps)):  # or loop `while i < steps`
                x = self.block(x)
            return x
    ```

    ## Fix
    None: the bound has to become a Python int (`int(n)`, `n.item()`, an int argument), or the loop a `while`
    loop on the tensor; which one fits depends on where the value comes from.
    """

    code = "MSL023"
    name = "range-over-tensor"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = ("`range()` over tensor `{bound}` in graph code reached from `{entry}`: fails to compile "
               "(`For 'make_range', the 0th input should be a int scalar but got AbstractTensor`)")
    needles = ("range",)
    call_names = frozenset({"range"})

    def visit_call(self, node: ast.Call, ctx):
        if ctx.names.qualname(node.func) != "builtins.range":
            return
        tensors = ctx.tensors(node)
        for argument in node.args:
            # a graph tensor, not host data such as `int(n)` or `n.item()` (those compile); a helper's
            # argument counts only when annotated `Tensor` (callers often pass Python ints)
            if tensors.derives_locally(argument) and not tensors.on_host(argument) \
                    and not _held_by_python_object(tensors, argument):
                yield self.report(ctx, node, bound=ctx.text(argument))
                return


def _held_by_python_object(tensors, expr: ast.expr) -> bool:
    """An item by name or an attribute no `Tensor` has, of something other than the Cell (directly or through
    the local it was assigned to): what such an argument holds is a Python object (a dict, a batch class), whose
    counts are Python ints. TLC's `range(extra_info["num_expert"])` (an int the model puts in the dict) and
    KANO's `range(mol_graph.n_mols)` (a `len`) compile and run."""
    if isinstance(expr, ast.Name):
        definition = tensors.definition(expr)
        if isinstance(definition, (ast.Subscript, ast.Attribute)):
            expr = definition
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str)
    if isinstance(expr, ast.Attribute):
        return not tensors.is_self(expr.value) and expr.attr not in mindspore_tensor.ATTRIBUTES
    return False
