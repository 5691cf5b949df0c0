from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis.walk import enclosing_function, parameter_defaults, parent_of, self_parameter
from ms_lint.rule import Rule

_DEFAULT = ("`ValueError: An error occurred while parsing the positional information of the lambda expression.`")
_NOT_ALONE = "`TypeError: Parse Lambda Function Fail. Node type must be Lambda, but got {node}.`"


class LambdaNotAlone(Rule):
    """
    ## What it does
    Finds a lambda that a Cell stores on itself outside graph code and that graph code calls, when the lambda is
    not the whole value of its assignment: a default argument (`def __init__(self, fn=lambda x: x)` then
    `self.fn = fn`), a side of `a if c else b`, an element of a list or dict. (A lambda passed to a call is
    not reported: what the call returns is not known.)

    ## Why it matters in graph mode
    To compile a lambda, MindSpore finds it again in the source: it reads the line the lambda was created on and
    expects that statement's value to be the lambda itself. Measured on 2.10, LAX and STRICT alike, calling such a
    lambda from `construct` fails: `self.fn = act if act is not None else (lambda x: x)` with `TypeError: Parse
    Lambda Function Fail. Node type must be Lambda, but got IfExp.` (`... but got List.` for `[lambda x: x + 1,
    lambda x: x * 2]`, `Subscript`, `Call`), and a default argument with `ValueError: An error occurred while
    parsing the positional information of the lambda expression.` `self.fn = lambda x: x + 1` compiles, and so
    do lambdas created in graph code itself. PyNative runs them all.

    ## Example
    ```python
    class Block(nn.Cell):
        def __init__(self, act=None):
            super().__init__()
            self.act = act if act is not None else (lambda x: x)

        def construct(self, x):
            return self.act(x)
    ```

    ## Use instead
    ```python
    class Block(nn.Cell):
        def __init__(self, act=None):
            super().__init__()
            self.act = act if act is not None else nn.Identity()

        def construct(self, x):
            return self.act(x)
    ```

    ## Fix
    None: assign the lambda alone (`self.fn = lambda x: x`), or use a Cell (`nn.Identity()`) or a named function.
    """

    code = "MSL039"
    name = "lambda-not-alone"
    severity = "error"
    compiled_only = True
    scope = "cell"
    message = ("lambda stored in `self.{attribute}`, which graph code reached from `{entry}` calls, is not the whole "
               "value of its assignment: 2.10 cannot find it again to compile it ({compiler})")
    needles = ("lambda",)

    def visit_lambda(self, node: ast.Lambda, ctx):
        if ctx.graph.is_compiled(enclosing_function(node) or node):
            return  # created in graph code: compiled where it stands
        cell = ctx.graph.cell_of(node)
        stored = _stored_in(node)
        if cell is None or stored is None:
            return
        attribute, compiler = stored
        entry = _graph_caller(ctx, cell.node, attribute)
        if entry is not None:
            yield self.report(ctx, node, attribute=attribute, entry=entry, compiler=compiler)


def _stored_in(node: ast.Lambda):
    """(attribute, the compiler's message) when the lambda ends up in `self.<attribute>` without being the whole
    value of that assignment; None otherwise (`self.fn = lambda x: x` included)."""
    parent = parent_of(node)
    if isinstance(parent, ast.arguments):  # `def __init__(self, fn=lambda x: x)`, then `self.fn = fn`
        function = parent_of(parent)
        parameter = next((name for name, default in parameter_defaults(parent).items() if default is node), None)
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or parameter is None:
            return None
        for statement in ast.walk(function):
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name) \
                    and statement.value.id == parameter:
                attribute = _self_target(statement, self_parameter(function))
                if attribute is not None:
                    return attribute, _DEFAULT
        return None
    child: ast.AST = node
    while isinstance(parent, ast.expr):
        if not _passes_through(parent, child):
            return None  # an argument of a call (`P.Morph(f, infer, lambda *a: a[0])`): not what is stored
        child, parent = parent, parent_of(parent)
    if not isinstance(parent, ast.Assign) or child is node:
        return None  # not stored, or alone: `self.fn = lambda x: x`
    function = enclosing_function(parent)
    attribute = _self_target(parent, self_parameter(function) if isinstance(function, ast.FunctionDef) else None)
    return (attribute, _NOT_ALONE.format(node=type(child).__name__)) if attribute else None


def _passes_through(container: ast.expr, child: ast.AST) -> bool:
    """Does `container` hand `child` on as (part of) its value: a side of `a if c else b`, an element of a list,
    tuple or dict, what a subscript picks from, an operand of `or`/`and`?"""
    if isinstance(container, ast.IfExp):
        return child is not container.test
    if isinstance(container, ast.Dict):
        return child in container.values
    if isinstance(container, ast.Subscript):
        return child is container.value
    return isinstance(container, (ast.List, ast.Tuple, ast.Set, ast.BoolOp, ast.Starred))


def _self_target(statement: ast.Assign, self_name: Optional[str]) -> Optional[str]:
    for target in statement.targets:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self_name:
            return target.attr
    return None


def _graph_caller(ctx, class_node: ast.ClassDef, attribute: str) -> Optional[str]:
    """The entry of a compiled method of the class that calls `self.<attribute>(...)` or `self.<attribute>[i](...)`."""
    for method in class_node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not ctx.graph.is_compiled(method):
            continue
        self_name = self_parameter(method)
        for call in ctx.walk.nodes_of(method).calls:
            func = call.func.value if isinstance(call.func, ast.Subscript) else call.func
            if isinstance(func, ast.Attribute) and func.attr == attribute and isinstance(func.value, ast.Name) \
                    and func.value.id == self_name:
                entry = ctx.graph.entry_of(call)
                return entry.name if entry is not None else method.name
    return None

