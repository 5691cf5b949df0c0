from __future__ import annotations

import ast

from ms_lint.analysis import framework
from ms_lint.rule import Rule

PARAMETER_TUPLES = frozenset({"mindspore.ParameterTuple", "mindspore.common.ParameterTuple",
                              "mindspore.common.parameter.ParameterTuple"})


class ParameterCreatedInGraph(Rule):
    """
    ## What it does
    Finds `Parameter(...)` and `ParameterTuple(...)` created inside graph-compiled code (`construct`, what it
    calls, `@jit` functions, `bprop`).

    ## Why it matters in graph mode
    A Parameter is network state: MindSpore registers it when it is assigned to a Cell attribute in `__init__`.
    Creating one in graph code fails to compile in MindSpore 2.10 at both syntax levels (measured):
    `ValueError: Failed to compile in GRAPH_MODE because creating class 'mindspore.common.parameter.Parameter'
    instances is not supported in 'construct' or @jit decorated function. Try to create class
    'mindspore.common.parameter.Parameter' instances external such as initialized in the method '__init__'...`.
    `ParameterTuple((self.p,))` in `construct` fails too, with `TypeError: 'type' object is not iterable`.
    PyNative runs both, so the bug shows only when the model is switched to graph mode.

    ## Example
    ```python
    class Scale(nn.Cell):
        def construct(self, x):
            gamma = Parameter(Tensor(np.ones(4), ms.float32), name="gamma")
            return x * gamma
    ```

    ## Use instead
    ```python
    class Scale(nn.Cell):
        def __init__(self):
            super().__init__()
            self.gamma = Parameter(Tensor(np.ones(4), ms.float32), name="gamma")

        def construct(self, x):
            return x * self.gamma
    ```

    ## Fix
    None: a Parameter created in `construct` is usually meant to be a fresh value (use a Tensor or an `ops`
    call) or trainable state (create it in `__init__`); the linter cannot tell which.
    """

    code = "MSL007"
    name = "parameter-created-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "`{call}(...)` created in graph code reached from `{entry}`: fails to compile in graph mode"
    needles = ("Parameter",)
    call_names = framework.last_names(framework.PARAMETER_CLASSES, PARAMETER_TUPLES)

    def visit_call(self, node: ast.Call, ctx):
        qualname = ctx.names.qualname(node.func)
        if qualname in framework.PARAMETER_CLASSES or qualname in PARAMETER_TUPLES:
            yield self.report(ctx, node, call=ctx.text(node.func))
