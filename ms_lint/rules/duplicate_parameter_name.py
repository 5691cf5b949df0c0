from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function
from ms_lint.rule import Rule

_EVERY_MODE = "2.10 refuses it in every mode (`ValueError: ... its name {name!r} already exists`)"
_IN_GRAPH = ("the graph compiler refuses them, though PyNative runs (`... its name {name!r} already exists. Please "
             "set a unique name for the parameter.`)")


class DuplicateParameterName(Rule):
    """
    ## What it does
    Finds a `ParameterTuple`, or a list or tuple stored on `self`, built from Parameters that share a literal
    name: two elements with the same `name=`, or a comprehension that gives every Parameter it makes one fixed
    name (`[Parameter(t, name="w") for _ in range(n)]`). Also a `@jit` function given two Parameters named
    alike: read from the scope around it, or passed to it as arguments.

    ## Why it matters in graph mode
    A Cell's Parameters need unique names. Measured on 2.10, in GRAPH_MODE and PyNative alike, a
    `ParameterTuple` or a list stored on `self` of Parameters named alike fails when the Cell is built:
    `ValueError: The value Parameter (name=w, ...), its name 'w' already exists. Please set a unique name for
    the parameter.` Parameters stored as attributes
    are renamed after the attribute, and unnamed ones become `Parameter$1`, `Parameter$2`: neither clashes.
    PyTorch code, where `nn.ParameterList` names nothing, is the usual source. A `@jit` function that reads or
    receives two Parameters named alike fails to compile (`RuntimeError`/`ValueError: ... its name 'w' already
    exists`), while PyNative runs it (measured).

    ## Example
    ```python
    class Mixture(nn.Cell):
        def __init__(self, n):
            super().__init__()
            self.weights = ParameterTuple(
                [Parameter(Tensor(np.ones(4), ms.float32), name="weight") for _ in range(n)])
    ```

    ## Use instead
    ```python
    class Mixture(nn.Cell):
        def __init__(self, n):
            super().__init__()
            self.weights = ParameterTuple(
                [Parameter(Tensor(np.ones(4), ms.float32), name=f"weight{i}") for i in range(n)])
    ```

    ## Fix
    None: choose the names (an index in an f-string, or no name at all).
    """

    code = "MSL038"
    name = "duplicate-parameter-name"
    severity = "error"
    scope = "module"
    message = "{subject} share the name {name!r}: {consequence}"
    needles = ("Parameter",)
    call_names = frozenset({"ParameterTuple"})

    def visit_assign(self, node: ast.Assign, ctx):
        if not (isinstance(node.value, (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)) and any(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                for t in node.targets)):
            return None
        name = framework.repeated_parameter_name(node.value, ctx.names.qualname)
        if name is None:
            return None
        return iter((self.report(ctx, node.value, name=name, subject="the Parameters of a list stored on `self`",
                                 consequence=_EVERY_MODE.format(name=name)),))

    def visit_call(self, node: ast.Call, ctx):
        if not (node.args and (ctx.names.qualname(node.func) or "").endswith("ParameterTuple")):
            return
        name = framework.repeated_parameter_name(node.args[0], ctx.names.qualname)
        if name is not None:
            yield self.report(ctx, node, name=name, subject="the Parameters of this `ParameterTuple`",
                              consequence=_EVERY_MODE.format(name=name))

    def visit_function_def(self, node: ast.FunctionDef, ctx):
        """A `@jit` function given two Parameters named alike, as arguments or from the scope around it (None for
        the other defs: no generator is made for them)."""
        if not any(entry.kind == "jit" for entry in ctx.graph.compiled.get(node, ())):
            return None
        return self._jit_findings(node, ctx)

    def _jit_findings(self, node: ast.FunctionDef, ctx):
        scope = enclosing_function(node) or ctx.tree
        named = _parameters_named(ctx, scope)
        if len(named) < 2:
            return
        own = ctx.names.local_names(node)
        free = [load for load in ctx.walk.nodes_of(node).loads.items() if load[0] in named and load[0] not in own]
        clash = _first_clash([(name, named[name], uses[0]) for name, uses in free])
        if clash is not None:
            yield self.report(ctx, clash[1], name=clash[0], subject=f"the Parameters `{node.name}` reads from "
                              f"around it", consequence=_IN_GRAPH.format(name=clash[0]))
        for call in ctx.walk.of_kind(scope, ast.Call):
            if isinstance(call.func, ast.Name) and call.func.id == node.name:
                given = [(a.id, named[a.id], call) for a in call.args if isinstance(a, ast.Name) and a.id in named]
                clash = _first_clash(given)
                if clash is not None:
                    yield self.report(ctx, call, name=clash[0], subject=f"the Parameters passed to `{node.name}`",
                                      consequence=_IN_GRAPH.format(name=clash[0]))


def _parameters_named(ctx, scope) -> Dict[str, str]:
    """{local name: literal Parameter name} for `p = Parameter(..., name="w")` in the scope's own body."""
    named: Dict[str, str] = {}
    for statement in ctx.walk.of_kind(scope, ast.Assign):
        if enclosing_function(statement) is not (scope if scope is not ctx.tree else None):
            continue
        name = framework.literal_parameter_name(statement.value, ctx.names.qualname)
        if name is not None and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            named[statement.targets[0].id] = name
    return named


def _first_clash(given: List[Tuple[str, str, ast.AST]]) -> Optional[Tuple[str, ast.AST]]:
    """(the literal name, where) of the first Parameter whose literal name an earlier one has."""
    seen: Dict[str, str] = {}
    for local, literal, where in given:
        if literal in seen and seen[literal] != local:
            return literal, where
        seen.setdefault(literal, local)
    return None
