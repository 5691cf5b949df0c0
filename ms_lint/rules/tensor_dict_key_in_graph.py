from __future__ import annotations

import ast

from ms_lint.analysis import framework
from ms_lint.analysis.bindings import makes_dict
from ms_lint.rule import Rule

_OPS = ("mindspore.ops.", "mindspore.mint.")


class TensorDictKeyInGraph(Rule):
    """
    ## What it does
    Finds a dict in graph-compiled code keyed by tensor data: `{x: v}`, `{k: v for k in ...}` with tensor keys,
    or `d[x] = v` on a local dict, where `x` is a tensor computed or passed at run time.

    ## Why it matters in graph mode
    A graph dict's keys are fixed when the graph is compiled. Measured on MindSpore 2.10, LAX and STRICT alike:
    `{x: 10}` with a tensor argument `x` fails with `RuntimeError: make_dict evaluator key only supports string,
    number, type, none, constant tensor and tuple, but got ValueAny`, and `d[x] = 10` with `dict_setitem
    evaluator key only supports ...`. A key from a static shape (`{x.shape[0]: 10}`) compiles. PyNative hashes
    the tensor object and runs.

    ## Example
    ```python
    @ms.jit
    def best(x: ms.Tensor, scores: ms.Tensor):
        winner = scores.argmax()
        return {winner: x}
    ```

    ## Use instead
    ```python
    @ms.jit
    def best(x: ms.Tensor, scores: ms.Tensor):
        winner = scores.argmax()
        return {"winner": winner, "x": x}
    ```

    ## Fix
    None: key the dict by names or constants and keep the tensors as values.
    """

    code = "MSL028"
    name = "tensor-dict-key-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = ("dict keyed by tensor data (`{key}`) in graph code reached from `{entry}`: 2.10 fails to compile it "
               "(`RuntimeError: {evaluator} evaluator key only supports string, number, type, none, constant tensor "
               "and tuple`)")

    def visit_dict(self, node: ast.Dict, ctx):
        if not node.keys:
            return None
        tensors = ctx.tensors(node)
        key = next((k for k in node.keys if k is not None and _run_time_tensor(ctx, tensors, k)), None)
        if key is None:
            return None
        return iter((self.report(ctx, key, key=ctx.text(key), evaluator="make_dict"),))

    def visit_dict_comp(self, node: ast.DictComp, ctx):
        if _run_time_tensor(ctx, ctx.tensors(node), node.key):
            yield self.report(ctx, node.key, key=ctx.text(node.key), evaluator="make_dict")

    def visit_assign(self, node: ast.Assign, ctx):
        target = node.targets[0]
        if len(node.targets) != 1 or not isinstance(target, ast.Subscript) or not isinstance(target.value, ast.Name):
            return None
        tensors = ctx.tensors(node)
        if not (makes_dict(tensors.definition(target.value)) and _run_time_tensor(ctx, tensors, target.slice)):
            return None
        return iter((self.report(ctx, target.slice, key=ctx.text(target.slice), evaluator="dict_setitem"),))


def _run_time_tensor(ctx, tensors, expr: ast.AST, depth: int = 0) -> bool:
    """Is `expr` certainly a tensor computed or passed at run time? A parameter only when its annotation or every
    host call says so (an argument is often a Python number); `Tensor(...)` of constants is a constant tensor,
    which 2.10 takes as a key; loop variables are not followed."""
    if depth > 4:
        return False
    if isinstance(expr, ast.Name):
        if expr.id in tensors.parameters:
            return tensors.certain_parameters.get(expr.id) == "tensor"
        definition = tensors.definition(expr)
        return isinstance(definition, ast.expr) and _run_time_tensor(ctx, tensors, definition, depth + 1)
    if isinstance(expr, ast.Call):
        qualname = ctx.names.qualname(expr.func) or ""
        if qualname in framework.TENSOR_CLASSES:
            return False
        if qualname.startswith(_OPS):
            return any(_run_time_tensor(ctx, tensors, a, depth + 1) for a in expr.args)
        return isinstance(expr.func, ast.Attribute) and _run_time_tensor(ctx, tensors, expr.func.value, depth + 1)
    if isinstance(expr, ast.BinOp):
        return any(_run_time_tensor(ctx, tensors, side, depth + 1) for side in (expr.left, expr.right))
    if isinstance(expr, ast.UnaryOp):
        return _run_time_tensor(ctx, tensors, expr.operand, depth + 1)
    return False
