from __future__ import annotations

import ast
from typing import Optional

from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule


class ParameterSetDataInGraph(Rule):
    """
    ## What it does
    Finds host-side Parameter initialisation in graph-compiled code: `.set_data(...)`, `initializer(...)` and
    `load_param_into_net(...)`.

    ## Why it matters in graph mode
    These APIs replace a Parameter's storage from Python; a compiled graph cannot. Measured on MindSpore 2.10:
    `self.p.set_data(x)` in `construct` fails to compile at LAX with `RuntimeError: Failed to compile in
    GRAPH_MODE because the 'Parameter' object's method 'set_data' is not supported in 'construct' or function
    with @jit decorator` and at STRICT with `AttributeError: In JIT strict mode, cannot get attributes set_data
    ...`. `initializer(...)` fails at both levels (`RuntimeError: Failed to compile in GRAPH_MODE because the
    method or function 'mindspore.common.initializer.initializer' is not supported in 'construct'...`), and so
    does `load_param_into_net(self, params)` (its logging call is not supported in `construct`). PyNative runs
    `set_data` and `load_param_into_net`, so the bug shows only in graph mode.

    ## Example
    ```python
    class Ema(nn.Cell):
        def construct(self, x):
            self.shadow.set_data(self.shadow * 0.9 + x * 0.1)
            return self.shadow
    ```

    ## Use instead
    ```python
    class Ema(nn.Cell):
        def construct(self, x):
            ops.assign(self.shadow, self.shadow * 0.9 + x * 0.1)
            return self.shadow
    ```

    ## Fix
    Unsafe: `p.set_data(v)` used as a statement becomes `ops.assign(p, v)`, which updates the Parameter inside
    the graph (measured at both levels). Unsafe because `ops.assign` requires `v` to match the Parameter's shape
    and dtype, where `set_data` could replace them. `initializer` and `load_param_into_net` have no fix: they
    belong in `__init__` or in host code.
    """

    code = "MSL008"
    name = "parameter-set-data-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "`{call}` in graph code reached from `{entry}`: fails to compile in graph mode"
    fix_applicability = "unsafe"
    needles = ("set_data", "initializer", "load_param_into_net")
    call_names = frozenset({"set_data", "initializer", "load_param_into_net"})

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "set_data":
            yield self.report(ctx, node, call=f"{ctx.text(func)}(...)", fix=self._fix(ctx, node))
            return
        qualname = ctx.names.qualname(func) or ""
        if _is_initializer(qualname):
            if not self._inside_set_data(ctx, node):  # one finding for `p.set_data(initializer(...))`
                yield self.report(ctx, node, call=f"{ctx.text(func)}(...)")
        elif qualname.startswith("mindspore.") and qualname.endswith(".load_param_into_net"):
            yield self.report(ctx, node, call=f"{ctx.text(func)}(...)")

    @staticmethod
    def _inside_set_data(ctx, node: ast.AST) -> bool:
        parent = ctx.parent(node)
        while isinstance(parent, ast.expr):
            if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) \
                    and parent.func.attr == "set_data":
                return True
            parent = ctx.parent(parent)
        return False

    @staticmethod
    def _fix(ctx, node: ast.Call) -> Optional[Fix]:
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred) \
                or not isinstance(ctx.parent(node), ast.Expr):
            return None
        if any(isinstance(sub, ast.Call) and _is_initializer(ctx.names.qualname(sub.func) or "")
               for sub in ast.walk(node.args[0])):
            return None  # the new value itself cannot be built in the graph
        ops, imports = edits.reference(ctx.graph, "mindspore.ops")
        parameter = getattr(node.func, "value", node.func)  # `<parameter>.set_data(...)`
        replacement = f"{ops}.assign({ctx.text(parameter)}, {ctx.text(node.args[0])})"
        return Fix("unsafe", f"Update the Parameter in the graph with `{ops}.assign`",
                   (ctx.replace(node, replacement),), imports)


def _is_initializer(qualname: str) -> bool:
    return qualname.startswith("mindspore.") and qualname.endswith("initializer.initializer")
