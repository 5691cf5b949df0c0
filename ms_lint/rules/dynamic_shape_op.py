from __future__ import annotations

import ast

from ms_lint.analysis import framework
from ms_lint.analysis.bindings import assignments_of, target_names
from ms_lint.analysis.walk import enclosing_function, spelled_name
from ms_lint.rule import Rule

# Ops whose output shape depends on the values of their input.
_DYNAMIC_OPS = frozenset({"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere", "unique_with_pad"})
# Functions and methods returning a boolean tensor of their input's shape.
_MASK_OPS = frozenset({"logical_and", "logical_or", "logical_not", "logical_xor", "isnan", "isinf", "isfinite",
                       "isneginf", "isposinf", "isclose", "eq", "ne", "gt", "ge", "lt", "le", "greater", "less",
                       "greater_equal", "less_equal", "equal", "not_equal", "bool"})
_MASK_OPERATORS = (ast.BitAnd, ast.BitOr, ast.BitXor)


class DynamicShapeOp(Rule):
    """
    ## What it does
    Finds operations in graph-compiled code whose output shape depends on tensor values: boolean-mask indexing
    (`x[x > 0]`, `x[mask]` with `mask = ops.logical_and(...)`), slicing with bounds computed from tensor data
    (`x[:n]` with `n = int(lengths.max())`), and `nonzero`, `masked_select`, `unique` (functions, methods and
    their `mint`/MindTorch forms).

    ## Why it matters in graph mode
    A graph is compiled for shapes; these operations make a shape known only at run time. Measured on MindSpore
    2.10, CPU: all of them compile and run at both syntax levels and agree with PyNative (`nonzero` gave a
    `[3, 1]` result, `masked_select` `[6]`), and one compiled graph returns different output shapes for
    inputs of the same shape. So on CPU this is information, not a bug. On Ascend, where graphs are compiled
    for static shapes, data-dependent shapes put the graph on the dynamic-shape path, which is slower and not
    supported by every kernel; that was not measured (no Ascend machine). The rule is a warning when the target
    is Ascend (`target = "ascend"`, or the project calls `set_device("Ascend")`) and info otherwise, selected
    only with `--select MSL043` or `ALL`.

    Slicing with Python ints, shapes or shape arithmetic (`x[:, : x.shape[1] // 2]`, `x[: self.n]`) has static
    shapes and is not reported; nor is indexing with an integer tensor (a gather). In a helper method or
    function, an argument used as a slice bound counts as tensor data only when annotated `Tensor`: callers
    often pass Python ints.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, scores, boxes):
            keep = scores > 0.5
            return boxes[keep]
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, scores, boxes):
            keep = (scores > 0.5).astype(boxes.dtype).expand_dims(-1)
            return boxes * keep  # fixed shape; or ops.masked_fill, or top-k with a fixed k
    ```

    ## Fix
    None: a fixed-shape rewrite (multiply by the mask, `masked_fill`, top-k with a fixed `k`, padding to a
    maximum length) changes what downstream code receives.
    """

    code = "MSL043"
    name = "dynamic-shape-op"
    severity = "info"
    compiled_only = True
    scope = "graph"
    message = "{what} in graph code reached from `{entry}`: the output shape depends on tensor values{note}"
    call_names = _DYNAMIC_OPS

    def visit_subscript(self, node: ast.Subscript, ctx):
        """The findings of a subscript, None for those ruled out (most: no generator is made for them)."""
        if not isinstance(node.ctx, ast.Load):
            return None  # `x[mask] = v` keeps the shape of x
        index = node.slice
        slices = index.elts if isinstance(index, ast.Tuple) else [index]
        if not _may_be_mask(index) and not any(_has_computed_bound(part) for part in slices):
            return None  # `x[0]`, `x[:, 1:-1]`, `x[i, j]`: spares the tensor analysis of most subscripts
        return self._subscript_findings(node, ctx, index, slices)

    def _subscript_findings(self, node: ast.Subscript, ctx, index: ast.expr, slices: list):
        if index.__class__ is ast.Name and not _may_name_mask(ctx, node, index.id):
            return  # `x[i]`: a name is a mask only through a binding to a mask form (`_is_mask`)
        tensors = ctx.tensors(node)
        if not tensors.derives(node.value):
            return
        if _is_mask(tensors, index):
            yield self._report(ctx, node, f"boolean-mask indexing `{ctx.text(node)}`")
            return
        for part in slices:
            bounds = [b for b in (part.lower, part.upper, part.step) if b is not None] \
                if isinstance(part, ast.Slice) else []
            bound = next((b for b in bounds if tensors.derives_locally(b)), None)
            if bound is not None:
                yield self._report(ctx, node, f"slice `{ctx.text(node)}` with bound `{ctx.text(bound)}` "
                                              f"computed from tensor data")
                return

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        qualname = ctx.names.qualname(func)
        if qualname is not None:
            dynamic = framework.is_framework(qualname) and qualname.rpartition(".")[2] in _DYNAMIC_OPS
        else:  # a method: x.nonzero(), x.unique()
            dynamic = isinstance(func, ast.Attribute) and func.attr in _DYNAMIC_OPS \
                and ctx.tensors(node).derives(func.value)
        if dynamic:
            yield self._report(ctx, node, f"`{ctx.text(func)}`")

    def _report(self, ctx, node, what: str):
        ascend = ctx.target == "ascend"  # the option, else what the project passes to set_device/set_context
        note = "; on Ascend this puts the graph on the slower dynamic-shape path" if ascend else ""
        return self.report(ctx, node, what=what, note=note, severity="warning" if ascend else None)


def _may_be_mask(expr: ast.expr) -> bool:
    """The forms `_is_mask` can accept."""
    if isinstance(expr, ast.BinOp):
        return isinstance(expr.op, _MASK_OPERATORS)
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, ast.Invert)
    if isinstance(expr, ast.Call):
        return spelled_name(expr.func) in _MASK_OPS
    return isinstance(expr, (ast.Compare, ast.Name))


def _may_name_mask(ctx, node: ast.AST, name: str) -> bool:
    """Can `name`, read in the function around `node`, be bound to a form `_is_mask` accepts? The names bound to
    such a form by the bindings the tensor analysis reads (`TensorValues.definition`), gathered once per function
    (in the module's memo)."""
    function = enclosing_function(node)
    if function is None:
        return True
    by_function = ctx.memo(_may_name_mask, dict)
    names = by_function.get(function)
    if names is None:
        names = by_function[function] = frozenset(
            bound.id for binding in ctx.walk.nodes_of(function).bindings
            for target, _, value in assignments_of(binding) if _may_be_mask(value) for bound in target_names(target))
    return name in names


def _has_computed_bound(part: ast.expr) -> bool:
    """A slice with a bound that is not a literal (`1`, `-1`): only such a bound can be tensor data."""
    return isinstance(part, ast.Slice) and any(
        bound is not None and not isinstance(bound.operand if isinstance(bound, ast.UnaryOp) else bound, ast.Constant)
        for bound in (part.lower, part.upper, part.step))


def _is_mask(tensors, expr: ast.expr, depth: int = 0) -> bool:
    """A boolean tensor: a comparison of tensor data, a mask op, `&`/`|`/`^`/`~` of masks, a name bound to one."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Compare):
        return tensors.is_graph_tensor(expr)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, _MASK_OPERATORS):
        return _is_mask(tensors, expr.left, depth + 1) or _is_mask(tensors, expr.right, depth + 1)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):
        return _is_mask(tensors, expr.operand, depth + 1)
    if isinstance(expr, ast.Call):
        return spelled_name(expr.func) in _MASK_OPS and tensors.is_graph_tensor(expr)
    if isinstance(expr, ast.Name):
        value = tensors.definition(expr)
        return isinstance(value, ast.expr) and _is_mask(tensors, value, depth + 1)
    return False
