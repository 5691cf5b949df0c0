from __future__ import annotations

import ast

from ms_lint.analysis.walk import parent_of
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
    a single sub-cell they happened to compile). PyNative runs all of them. One form is wrong in every mode, and
    reported so: a loop that calls each Cell `cells_and_names()` yields (`for name, layer in
    self.features.cells_and_names(): x = layer(x)`, PyTorch's `named_children()` ported as the wrong walk). It
    yields the Cell itself first, then every descendant (measured: `SequentialCell`, `Dense`, `ReLU` for a
    two-layer `SequentialCell`), so the stack runs whole and then layer by layer (an AlexNet of the
    mindspore-courses collection, issue 19's third sample).

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
    message = "`{call}()` in graph code reached from `{entry}`: {problem}"
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
        if func.attr == "cells_and_names" and _each_item_called(node):
            yield self.report(ctx, node, call=ctx.text(func), compiled_only=False, problem=(
                f"it yields `{ctx.text(func.value)}` itself first, then every Cell below it, so calling each item "
                f"runs the whole stack and then its layers again, in every mode (PyTorch's `named_modules()` does "
                f"the same); iterate `{ctx.text(func.value)}.name_cells().items()` for the direct children"))
            return
        yield self.report(ctx, node, call=ctx.text(func), problem="Cell-tree walks fail to compile in graph mode")


def _each_item_called(call: ast.Call) -> bool:
    """`for name, layer in self.features.cells_and_names(): x = layer(x)`: the loop calls the Cell it yields."""
    loop = parent_of(call)
    if not (isinstance(loop, ast.For) and loop.iter is call):
        return False
    target = loop.target
    cell = target.elts[-1] if isinstance(target, ast.Tuple) and target.elts else target
    if not isinstance(cell, ast.Name):
        return False
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == cell.id
               for stmt in loop.body for node in ast.walk(stmt))
