from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from ms_lint.analysis import framework
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule

# NumPy reductions that call the argument's own method with `out=`: on a MindSpore tensor they raise TypeError
# in every mode, PyNative included (measured on 2.10: `np.sum(tensor)` -> "Failed calling sum with ...").
FAILING_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "any", "all", "ptp", "amax",
                                "amin"})
# np.<name> -> (ops.<name>, {numpy keyword: ops keyword}); the signatures are those of mindspore.ops 2.10.
OPS_EQUIVALENTS: Dict[str, Tuple[str, Dict[str, str]]] = {
    **{name: (name, {}) for name in ("exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "floor", "ceil", "sign",
                                     "square", "log1p", "expm1", "maximum", "minimum", "matmul", "where")},
    "sum": ("sum", {"axis": "dim", "keepdims": "keepdim"}),
    "mean": ("mean", {"axis": "axis", "keepdims": "keep_dims"}),
    "max": ("amax", {"axis": "axis", "keepdims": "keepdims"}),
    "amax": ("amax", {"axis": "axis", "keepdims": "keepdims"}),
    "min": ("amin", {"axis": "axis", "keepdims": "keepdims"}),
    "amin": ("amin", {"axis": "axis", "keepdims": "keepdims"}),
    "concatenate": ("cat", {"axis": "axis"}),
    "stack": ("stack", {"axis": "axis"}),
    "clip": ("clamp", {}),
    "power": ("pow", {}),
}


class NumpyInGraph(Rule):
    """
    ## What it does
    Finds NumPy and SciPy calls on tensor data inside graph-compiled code (`construct`, what it calls, `@jit`
    functions, `bprop`), and arithmetic that mixes a graph tensor with a NumPy array.

    ## Why it matters in graph mode
    The graph compiler cannot compile NumPy. At the default LAX syntax level MindSpore 2.10 runs such calls on the
    host through JIT Fallback (`np.exp(x)` and `np.sum(x.asnumpy())` run and return NumPy arrays); under STRICT
    (`jit_syntax_level=STRICT`, `@jit(fullgraph=True)`) the same code fails to compile:
    `ValueError: When handling script '__call_func_str__(__input_0__,) in graph mode', the inputs should be
    constant, but found variable '__input_0__' to be nonconstant.` With NumPy 2 installed, every fallback call
    fails at run time. Two forms fail in every mode, PyNative included, and are always errors:
    NumPy reductions called directly on a tensor (`np.sum(x)`, `np.mean`, `np.max`, `np.min`, `np.prod`,
    `np.std`, `np.var`, `np.any`, `np.all`, `np.ptp`, `np.amax`, `np.amin`: `TypeError: Failed calling sum with
    "sum(axis=None, out=None)"`, measured), and `tensor + ndarray` (`TypeError`).

    `import mindspore.numpy as np` is graph-safe and never reported: names are resolved through imports.
    NumPy on literals, shapes and Python numbers (`np.prod(x.shape)`, `np.sqrt(self.d_model)`) is folded at
    compile time and is not reported here (constant arrays are MSL002), nor are ints from a helper of the module
    that returns shape metadata (`def size(x, d): return x.shape[d]`). A NumPy *scalar* is not an array:
    `x * np.float32(2)`, `x + np.mean(self.table)` (a reduction over the whole array) and `x * np.round(w / 2)`
    run at both levels and in PyNative (measured), so arithmetic with them is not reported. NumPy applied to a
    variable holding an array converted earlier (`h = x.asnumpy()`, then `np.mean(h)`, `h[:, None] / d`) is
    host code on host data: the conversion is the finding (MSL003), not each use of its result.

    ## Example
    ```python
    import numpy as np

    class Net(nn.Cell):
        def construct(self, x):
            return Tensor(np.sum(x.asnumpy(), axis=1))
    ```

    ## Use instead
    ```python
    from mindspore import ops

    class Net(nn.Cell):
        def construct(self, x):
            return ops.sum(x, dim=1)
    ```

    ## Fix
    Unsafe: `np.<f>(...)` becomes `ops.<f>(...)` for a mapped set of functions (exp, log, sqrt, abs, sum, mean,
    max/min -> amax/amin, where, concatenate -> cat, stack, clip -> clamp, ...), with `.asnumpy()` dropped from the
    arguments and keywords renamed to the `ops` signature. The result becomes a Tensor instead of an ndarray, so
    code that uses it as an ndarray changes behaviour.
    """

    code = "MSL001"
    name = "numpy-in-graph"
    severity = "level"
    compiled_only = True
    scope = "graph"
    message = "{what} in graph code reached from `{entry}`: {consequence}"
    fix_applicability = "unsafe"
    needles = ("numpy", "scipy")

    def visit_call(self, node: ast.Call, ctx):
        """The findings of a NumPy or SciPy call, None for the other calls (most: no generator is made)."""
        qualname = ctx.names.qualname(node.func)
        if not framework.is_host_numeric(qualname) or qualname.startswith("numpy.random."):
            return None  # numpy.random is MSL004 (frozen at compile time)
        return self._findings(node, ctx, qualname)

    def _findings(self, node: ast.Call, ctx, qualname: str):
        tensors = ctx.tensors(node)
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if not any(tensors.derives(a) and not _held_array(tensors, a)
                   and not (tensors.on_host(a) and not _has_host_copy(a)) for a in arguments) \
                or ctx.graph.at_compile_time(node):
            return  # no tensor data, or only host data converted earlier (`h = x.asnumpy()`: MSL003's finding);
            # or a `@constexpr` body, Python run while compiling
        shown = ctx.text(node.func)
        function = qualname.rpartition(".")[2]
        if qualname.startswith("numpy.") and function in FAILING_REDUCTIONS and any(
                tensors.is_graph_tensor(a) for a in arguments):
            yield self.report(ctx, node, severity="error", compiled_only=False,
                              what=f"NumPy reduction `{shown}` called on a tensor",
                              consequence="raises TypeError in every mode (it calls the tensor's method with `out=`)",
                              fix=self._fix(ctx, node, qualname))
            return
        library = "NumPy" if qualname.startswith("numpy") else "SciPy"
        yield self.report(ctx, node, what=f"{library} call `{shown}` on tensor data",
                          consequence=self.level_note(ctx, node), fix=self._fix(ctx, node, qualname))

    def visit_bin_op(self, node: ast.BinOp, ctx):  # a list or None: no generator for every operation
        if isinstance(ctx.parent(node), ast.BinOp):
            return None  # one report for a whole `a + b + c` chain, from its outermost operation
        operands = list(_arithmetic_operands(node))
        tensors = ctx.tensors(node)
        # the array first: rare, and cheaper to rule out than tensor data
        if any(tensors.is_ndarray(o) for o in operands) and any(
                tensors.is_graph_tensor(o) and not _numpy_value(tensors, o) for o in operands):
            return [self.report(ctx, node, severity="error", compiled_only=False,
                                what="arithmetic between a tensor and a NumPy array",
                                consequence="raises TypeError at run time in every mode")]
        return None

    def _fix(self, ctx, node: ast.Call, qualname: str) -> Optional[Fix]:
        if not qualname.startswith("numpy.") or qualname.count(".") != 1:
            return None
        function = qualname.rpartition(".")[2]
        mapped = OPS_EQUIVALENTS.get(function)
        if mapped is None or (function == "where" and len(node.args) != 3):
            return None  # one-argument np.where is nonzero(), not a select
        name, keywords = mapped
        tensors = ctx.tensors(node)
        if tensors.called_with_host_arrays:
            return None  # a NumPy helper some caller gives NumPy arrays: ops would break that caller
        values = [*node.args, *(k.value for k in node.keywords)]
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg not in keywords for k in node.keywords):
            return None  # a keyword ops does not take (out=, dtype=, initial=...)
        if any(tensors.on_host(_strip_host_copy(v)) or _has_host_copy(_strip_host_copy(v)) for v in values):
            return None  # host data inside the arguments: ops cannot take it
        arguments = [ctx.text(_strip_host_copy(a)) for a in node.args]
        arguments += [f"{keywords[k.arg or '']}={ctx.text(_strip_host_copy(k.value))}" for k in node.keywords]
        ops, imports = edits.reference(ctx.graph, "mindspore.ops")
        replacement = f"{ops}.{name}({', '.join(arguments)})"
        target = node
        wrapper = ctx.parent(node)
        if isinstance(wrapper, ast.Call) and ctx.names.qualname(wrapper.func) in (
                "mindspore.Tensor", "mindspore.common.tensor.Tensor") and wrapper.args and wrapper.args[0] is node:
            dtype = wrapper.args[1] if len(wrapper.args) > 1 else next(
                (k.value for k in wrapper.keywords if k.arg == "dtype"), None)
            if len(wrapper.args) + len(wrapper.keywords) == 1 + (dtype is not None):
                target = wrapper  # Tensor(np.sum(...)) -> ops.sum(...): already a tensor
                replacement += f".astype({ctx.text(dtype)})" if dtype is not None else ""
        return Fix("unsafe", f"Replace with `{ops}.{name}`", (ctx.replace(target, replacement),), imports)


def _strip_host_copy(expr: ast.expr) -> ast.expr:
    """`x.asnumpy()` -> `x` (the ops function takes the tensor itself)."""
    if (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("asnumpy", "numpy")
            and not expr.args and not expr.keywords):
        return expr.func.value
    return expr


def _has_host_copy(expr: ast.expr) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in ("asnumpy", "numpy", "tolist", "item")
               for n in ast.walk(expr))


def _held_array(tensors, expr: ast.expr) -> bool:
    """A variable holding an ndarray, or an element or slice of one (`h[0]` after `h = t.asnumpy()`)."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return isinstance(expr, ast.Name) and tensors.is_ndarray(expr)


def _numpy_value(tensors, expr: ast.expr) -> bool:
    """An ndarray or an element or slice of one (`a[:, None]` of `a = t.asnumpy()`): host data, no graph tensor."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return tensors.is_ndarray(expr)


_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def _arithmetic_operands(node: ast.BinOp):
    stack: List[ast.expr] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.BinOp) and isinstance(current.op, _ARITHMETIC):
            stack.extend((current.left, current.right))
        elif current is not node:
            yield current
