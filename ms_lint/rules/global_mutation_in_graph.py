from __future__ import annotations

import ast
from typing import Iterator, Set

from ms_lint.analysis.walk import enclosing_function
from ms_lint.rule import Rule

# Nodes that open a scope of their own: a `global` statement does not reach into them.
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


class GlobalMutationInGraph(Rule):
    """
    ## What it does
    Finds a `global X` statement in graph-compiled code whose function then assigns `X` (`X = ...`,
    `X += ...`, a `for X in` loop, `del X`...). The finding is reported on the `global` statement.

    ## Why it matters in graph mode
    The graph compiler treats module globals as constants. Measured on MindSpore 2.10 (CPU, LAX and STRICT
    alike): with `COUNTER = 0` and a `construct` doing `global COUNTER; COUNTER = COUNTER + 1;
    return x * COUNTER`, the assignment is silently dropped: both calls return `x * 0` and `COUNTER` stays 0.
    PyNative returns `x * 1`, then `x * 2`, and leaves `COUNTER == 2`. There is no error and no warning.

    Reading a module constant in graph code is fine and not reported, nor is a `global` statement whose name is
    never assigned.

    ## Example
    ```python
    STEP = 0

    class Net(nn.Cell):
        def construct(self, x):
            global STEP
            STEP += 1
            return x * STEP
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.step = Parameter(Tensor(0, ms.int32), name="step", requires_grad=False)

        def construct(self, x):
            ops.assign_add(self.step, Tensor(1, ms.int32))
            return x * self.step
    ```

    ## Fix
    None: the state has to move into a `Parameter` updated with `ops.assign`/`ops.assign_add`, or out of the
    graph into the host training loop; which one depends on who reads the global.
    """

    code = "MSL021"
    name = "global-mutation-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = ("`global {names}` then assigned in graph code reached from `{entry}`: the assignment is silently "
               "dropped, the global keeps its value (PyNative updates it)")
    needles = ("global",)

    def visit_global(self, node: ast.Global, ctx):
        function = enclosing_function(node)
        if function is None:
            return
        assigned = _assigned_names(function) & set(node.names)
        if assigned:
            yield self.report(ctx, node, names=", ".join(n for n in node.names if n in assigned))


def _assigned_names(function) -> Set[str]:
    """Names a function binds in its own scope (not in nested functions, classes or comprehensions)."""
    names: Set[str] = set()
    for node in _own_scope(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).partition(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            names.add(node.name)
    return names


def _own_scope(function) -> Iterator[ast.AST]:
    stack = list(function.body) if isinstance(function.body, list) else [function.body]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _SCOPES):
            # a comprehension's first iterable and a def's decorators and defaults belong to the outer scope
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                stack.append(node.generators[0].iter)
            elif not isinstance(node, ast.Lambda):
                stack.extend(node.decorator_list)
            continue
        stack.extend(ast.iter_child_nodes(node))
