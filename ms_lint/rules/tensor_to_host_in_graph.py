from __future__ import annotations

import ast

from ms_lint.analysis import framework
from ms_lint.rule import Rule

# `.item()` is not here: it compiles at both syntax levels in 2.10 (measured), as do `int(t)` and `float(t)`.
HOST_COPIES = frozenset({"asnumpy", "numpy", "tolist"})


class TensorToHostInGraph(Rule):
    """
    ## What it does
    Finds `.asnumpy()`, `.numpy()` and `.tolist()` called on a tensor in graph-compiled code (`construct`, what it
    calls, `@jit` functions, `bprop`).

    ## Why it matters in graph mode
    These calls copy tensor data to the host. The graph compiler cannot express them: at the default LAX syntax
    level MindSpore 2.10 runs them on the host through JIT Fallback (measured: `Tensor(x.asnumpy() * 2)`,
    `x.numpy()` and `x.tolist()` in `construct` run and match PyNative), which breaks the graph into host round
    trips, and with NumPy 2 installed the fallback fails at run time. Under STRICT (`jit_syntax_level=STRICT`,
    `@jit(fullgraph=True)`) all three fail to compile (measured):
    `AttributeError: In JIT strict mode, cannot get attributes asnumpy or the Tensor[Float32] object has no
    attribute: 'asnumpy'` (`numpy` for `.numpy()`; `.tolist()` reports `asnumpy` too).

    `.item()`, `int(t)` and `float(t)` compile at both levels in 2.10 and are not reported. A host copy passed
    straight to a NumPy or SciPy call (`np.sum(x.asnumpy())`) is reported once, by MSL001.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            scale = x.asnumpy().max()
            return x / Tensor(scale)
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return x / x.max()
    ```

    ## Fix
    None: the replacement depends on what the host value is used for (usually an `ops` function on the tensor
    itself, or moving the code out of `construct`).
    """

    code = "MSL003"
    name = "tensor-to-host-in-graph"
    severity = "level"
    compiled_only = True
    scope = "graph"
    message = "`{call}` copies tensor data to the host in graph code reached from `{entry}`: {level_note}"
    needles = (".asnumpy", ".numpy", ".tolist")
    call_names = HOST_COPIES

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in HOST_COPIES) or node.args or node.keywords:
            return
        tensors = ctx.tensors(node)
        receiver = func.value
        if tensors.is_ndarray(receiver) or (tensors.on_host(receiver) and func.attr != "asnumpy"):
            return  # already host data: `x.asnumpy().tolist()` is one copy, reported on `asnumpy`
        # `asnumpy` exists only on MindSpore tensors; `numpy`/`tolist` are common names, so ask for tensor data.
        if func.attr != "asnumpy" and not tensors.derives(receiver):
            return
        if self._feeds_host_numeric_call(ctx, node) or ctx.graph.at_compile_time(node):
            return  # MSL001 reports `np.f(x.asnumpy())`; a `@constexpr` body is Python run while compiling
        yield self.report(ctx, node, call=f"{ctx.text(func)}()")

    @staticmethod
    def _feeds_host_numeric_call(ctx, node: ast.AST) -> bool:
        """Is `node` inside an argument of a NumPy/SciPy call that MSL001 reports (an argument on tensor data)?"""
        child, parent = node, ctx.parent(node)
        while isinstance(parent, (ast.expr, ast.keyword)):
            if isinstance(parent, ast.Call) and child is not parent.func:
                qualname = ctx.names.qualname(parent.func)
                if framework.is_host_numeric(qualname) and not qualname.startswith("numpy.random."):
                    argument = child.value if isinstance(child, ast.keyword) else child
                    return ctx.tensors(node).derives(argument)
            child, parent = parent, ctx.parent(parent)
        return False
