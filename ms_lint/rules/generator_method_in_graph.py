from __future__ import annotations

import ast

from ms_lint.rule import Rule

# nn.Cell methods built on generators or OrderedDict walks of the Cell tree (2.10). `untrainable_params` and
# `parameters_dict` fail the same way (measured), so they are included.
GENERATOR_METHODS = frozenset({"trainable_params", "untrainable_params", "get_parameters", "cells_and_names",
                               "parameters_and_names", "cells", "name_cells", "parameters_dict"})


class GeneratorMethodInGraph(Rule):
    """
    ## What it does
    Finds calls of the `nn.Cell` methods that walk the Cell tree with generators in graph-compiled code:
    `trainable_params()`, `untrainable_params()`, `get_parameters()`, `parameters_dict()`,
    `cells_and_names()`, `parameters_and_names()`, `cells()` and `name_cells()`.

    ## Why it matters in graph mode
    These methods are Python generators (or build dicts from them) and the graph compiler cannot run them.
    Measured on MindSpore 2.10, LAX and STRICT alike: `len(self.trainable_params())` in `construct` fails with
    `RuntimeError: Failed to compile in GRAPH_MODE because the method or function
    'mindspore.nn.cell.Cell.trainable_params' is not supported in 'construct' or function with @jit decorator`
    (the same for `untrainable_params`, and for `get_parameters`, also through `parameters_dict`);
    `cells_and_names()` and `parameters_and_names()` fail with `RuntimeError: Unsupported expression 'Yield'.`;
    `cells()` and `name_cells()` fail with `RuntimeError: The pointer[node] is null.` (LAX) or `ValueError: When
    handling script '__py_exec_index0_setitem__(...)' ...` (STRICT) as soon as the Cell has two sub-cells (with
    a single sub-cell they happened to compile). PyNative runs all of them.

    ## Example
    ```python
    class Regularised(nn.Cell):
        def construct(self, x):
            penalty = 0
            for p in self.trainable_params():
                penalty += (p ** 2).sum()
            return self.net(x) + 1e-4 * penalty
    ```

    ## Use instead
    ```python
    class Regularised(nn.Cell):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.weights = ParameterTuple(net.trainable_params())

        def construct(self, x):
            penalty = 0
            for p in self.weights:
                penalty += (p ** 2).sum()
            return self.net(x) + 1e-4 * penalty
    ```

    ## Fix
    None: collect what the graph needs once in `__init__` (a `ParameterTuple`, an `nn.CellList`) and use it in
    `construct`.
    """

    code = "MSL010"
    name = "generator-method-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "`{call}()` in graph code reached from `{entry}`: Cell-tree walks fail to compile in graph mode"
    needles = tuple(f".{name}(" for name in sorted(GENERATOR_METHODS))
    call_names = GENERATOR_METHODS

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in GENERATOR_METHODS):
            return
        tensors = ctx.tensors(node)
        if tensors.is_self(func.value):
            owner = ctx.graph.owner_class(tensors.method())
            if owner is not None and any(func.attr in s.methods for s in ctx.graph.mro(owner)):
                return  # the class defines its own method of that name: it is compiled like any other
        yield self.report(ctx, node, call=ctx.text(func))
