from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function
from ms_lint.rule import Rule

# Keywords only `Dataset.map` takes (HyperMap and `multiprocessing.Pool.map` take none of them).
MAP_KEYWORDS = frozenset({"operations", "input_columns", "output_columns", "column_order", "num_parallel_workers",
                          "python_multiprocessing", "max_rowsize", "cache", "callbacks", "offload"})
# CapWords names under mindspore.ops that are not Primitives (meta functions, helpers)
_NOT_PRIMITIVES = frozenset({"GradOperation", "HyperMap", "Map", "MultitypeFuncGraph", "Partial", "ZerosLike",
                             "Depend", "Custom", "InsertGradientOf", "HookBackward", "Primitive", "PrimitiveWithInfer",
                             "PrimitiveWithCheck", "CellBackwardHook"})
_FUNCTION_PACKAGES = ("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")


class MindsporeOpInDatasetMap(Rule):
    """
    ## What it does
    Finds MindSpore network operators passed directly in `Dataset.map(operations=...)`: instances of `nn` Cells
    (MindSpore's or the project's) and of `ops` Primitives (`ops.ReLU()`, `P.Cast()`), alone or in the list, also
    through a local variable; and functional operators (`ops.relu`, `mint.abs`) passed uncalled. The finding is on
    the `.map(` call.

    A `.map(` call counts as `Dataset.map` when it passes one of the keywords only that method takes
    (`operations=`, `input_columns=`...) or its receiver comes from `mindspore.dataset`; HyperMap calls in graph
    code (`self.map(ops.assign, ...)`) are never matched. Not reported: `mindspore.dataset.transforms`/`vision`/
    `text` operations, NumPy/PIL callables, plain Python functions (even ones that call `ops` inside).

    ## Why it matters in graph mode
    The data pipeline runs in its own threads and processes on NumPy arrays, not in the graph. Measured on
    MindSpore 2.10 (CPU, `NumpySlicesDataset`): `map(operations=[ops.ReLU()])`, `map(operations=[nn.ReLU()])` and
    a bare `ops.ReLU()` raise, at the `map(...)` call, with `python_multiprocessing` False or True:
    `ValueError: ('Input operations should not contain network computing operator like in mindspore.nn or
    mindspore.ops, got operation: ', 'Prim[ReLU]')`. A functional op passed directly (`[ops.relu]`) is accepted
    by `map` and fails on the first row: `TypeError: Failed calling ReLU with "ReLU()(input=<class
    'numpy.ndarray'>)"`. `transforms.TypeCast` and a Python function calling `ops.relu(Tensor(x))` ran.

    ## Example
    ```python
    dataset = dataset.map(operations=[vision.Decode(), ops.ReLU()], input_columns="image")
    ```

    ## Use instead
    ```python
    dataset = dataset.map(operations=[vision.Decode(), lambda x: np.maximum(x, 0)], input_columns="image")
    ```

    ## Fix
    None: the NumPy (or `dataset.transforms`) equivalent of an operator is not mechanical.
    """

    code = "MSL055"
    name = "mindspore-op-in-dataset-map"
    severity = "error"
    scope = "module"
    message = "`{op}` in `Dataset.map` operations: {consequence}"
    needles = (".map(",)
    call_names = frozenset({"map"})

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "map") or ctx.graph.is_compiled(node):
            return
        if not (any(k.arg in MAP_KEYWORDS for k in node.keywords) or _from_dataset(ctx, func.value)):
            return
        operations = next((k.value for k in node.keywords if k.arg == "operations"), None)
        if operations is None and node.args:
            operations = node.args[0]
        if operations is None:
            return
        for item in _items(ctx, operations):
            found = _network_operator(ctx, item)
            if found is not None:
                kind, shown = found
                consequence = (
                    "`map()` raises `ValueError: Input operations should not contain network computing operator "
                    "like in mindspore.nn or mindspore.ops` (the pipeline runs on NumPy arrays)" if kind == "instance"
                    else "it receives NumPy arrays and fails on the first row (`TypeError: Failed calling ...`)")
                yield self.report(ctx, node, op=shown, consequence=consequence)
                return


def _items(ctx, operations: ast.expr) -> List[ast.expr]:
    operations = _value_of(ctx, operations)
    if isinstance(operations, (ast.List, ast.Tuple)):
        return [_value_of(ctx, item) for item in operations.elts]
    return [operations]


def _value_of(ctx, expr: ast.expr) -> ast.expr:
    """The value a local name was given, when it was assigned exactly once in the function (or module)."""
    if not isinstance(expr, ast.Name):
        return expr
    scope = enclosing_function(expr) or ctx.tree
    values = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == expr.id for t in node.targets):
            values.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.For)) and isinstance(node.target, ast.Name) \
                and node.target.id == expr.id:
            return expr
    return values[0] if len(values) == 1 else expr


def _network_operator(ctx, item: ast.expr) -> Optional[Tuple[str, str]]:
    """("instance", text) for a Cell or Primitive instance, ("function", text) for a functional op, else None."""
    if isinstance(item, ast.Call):
        qualname = ctx.names.qualname(item.func)
        if not qualname:
            return None
        last = qualname.rpartition(".")[2]
        shown = f"{ctx.text(item.func)}()"
        if qualname.startswith("mindspore.ops.") and last[:1].isupper() and last not in _NOT_PRIMITIVES:
            return "instance", shown
        if framework.class_kind(qualname) == "cell" or (not framework.is_framework(qualname)
                                                        and ctx.graph.is_cell_class(qualname)):
            return "instance", shown
        return None
    if isinstance(item, (ast.Attribute, ast.Name)):
        qualname = ctx.names.qualname(item) or ""
        last = qualname.rpartition(".")[2]
        if qualname.startswith(_FUNCTION_PACKAGES) and last[:1].islower() and not last.startswith("_"):
            return "function", ctx.text(item)
    return None


def _from_dataset(ctx, receiver: ast.expr) -> bool:
    """Does the receiver come from `mindspore.dataset` (a dataset class call, or a name assigned one)?"""
    receiver = _value_of(ctx, receiver)
    while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and \
            not (ctx.names.qualname(receiver.func) or "").startswith("mindspore.dataset."):
        receiver = receiver.func.value  # ds.NumpySlicesDataset(...).shuffle(4).map(...)
    return isinstance(receiver, ast.Call) and (ctx.names.qualname(receiver.func) or "").startswith(
        "mindspore.dataset.")
