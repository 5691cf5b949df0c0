from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis.bindings import makes_dict
from ms_lint.analysis.walk import enclosing_function
from ms_lint.rule import Rule

_STRICT = "under STRICT graph dicts have no `pop` (`AttributeError: ... has no attribute: 'pop'`)"
_ASSIGNED = ("2.10 compiles `name = d.pop(...)` wrongly and fails (`TypeError: For 'TupleGetItem', input[0] should "
             "be Sequence`), and " + _STRICT)
_ASSIGNED_KWARGS = ("at the default LAX level `name = kwargs.pop(...)` fails when the caller passes a Python number "
                    "(`TypeError: For 'TupleGetItem', input[0] should be Sequence`) and works with a tensor, and "
                    + _STRICT)
_REREAD = ("2.10 replaces the dict by the popped value, so reading it afterwards fails (`TypeError: For "
           "'TupleGetItem', input[0] should be Sequence`), and " + _STRICT)
_LAX_OK = "this form runs at the default LAX level, but " + _STRICT


class DictPopInGraph(Rule):
    """
    ## What it does
    Finds `dict.pop(...)` in graph-compiled code: on the `**kwargs` of a compiled function
    (`kwargs.pop("labels", None)` in `construct`), or on a local dict.

    ## Why it matters in graph mode
    Graph dicts have no true `pop`. Measured on MindSpore 2.10: at the default LAX level `scale =
    kwargs.pop("scale")` fails with `TypeError: For 'TupleGetItem', input[0] should be Sequence, but got
    Float32.` when the value is a Python number (passed, or a number default when the key is not passed), and
    compiles when the caller passes a tensor (labels, masks: what ported models pop): where a number default
    makes the failure certain it is an error, else a warning at LAX. A bare `d.pop("a")` replaces `d` by the
    popped value, so reading `d` afterwards fails the same way (`... but got Int64`). Inside a larger expression
    (`x * kwargs.pop("scale")`) it runs at LAX. Under STRICT every form fails with `AttributeError: In JIT strict
    mode, cannot get attributes pop or the Dictionary[...] object has no attribute: 'pop'`. `kwargs.get(...)`,
    `kwargs[...]`, `setdefault`, `popitem` and `update` compile. PyNative runs all of them. Under `if "scale" in
    kwargs:` the branch is folded when compiling unless the caller passes the key (measured): there the finding
    is a warning.

    ## Example
    ```python
    class Head(nn.Cell):
        def construct(self, x, **kwargs):
            scale = kwargs.pop("scale", 1.0)
            return x * scale
    ```

    ## Use instead
    ```python
    class Head(nn.Cell):
        def construct(self, x, **kwargs):
            scale = kwargs.get("scale", 1.0)
            return x * scale
    ```

    ## Fix
    None: read the value with `get` (or `[...]`) and leave the dict as it is; build a new dict without the key
    if later code must not see it.
    """

    code = "MSL029"
    name = "dict-pop-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "`{call}` in graph code reached from `{entry}`: {how}{when}; read the value with `.get(...)`"
    needles = (".pop(",)
    call_names = frozenset({"pop"})

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "pop" and isinstance(func.value, ast.Name)):
            return
        if not _is_dict(ctx, func.value):
            return
        call = f"{ctx.text(func)}(...)"
        parent = ctx.parent(node)
        assigned = isinstance(parent, ast.Assign) and parent.value is node
        reread = isinstance(parent, ast.Expr) and _read_after(ctx, parent, func.value.id)
        if not (assigned or reread):  # `x * kwargs.pop("scale")`: works at LAX
            yield self.report(ctx, node, severity="level", call=call, how=_LAX_OK, when="")
            return
        how = _ASSIGNED if assigned else _REREAD
        severity = None
        if assigned and _is_kwargs(func.value) and not _number_default(node):
            how, severity = _ASSIGNED_KWARGS, "level"  # the callers' values decide, and they are mostly tensors
        guard = _membership_guard(ctx, node, func.value.id)
        if guard is None:
            yield self.report(ctx, node, severity=severity, call=call, how=how, when="")
        else:
            yield self.report(ctx, node, severity="warning", call=call, how=how, when=(
                f" (compiled only when `{guard}` holds, which is known when compiling: when the caller passes it)"))


def _is_kwargs(name: ast.Name) -> bool:
    arguments = getattr(enclosing_function(name), "args", None)
    return arguments is not None and arguments.kwarg is not None and arguments.kwarg.arg == name.id


def _number_default(call: ast.Call) -> bool:
    """`kwargs.pop("scale", 1.0)`: a caller that leaves the key out pops the Python number."""
    return len(call.args) > 1 and isinstance(call.args[1], ast.Constant) \
        and type(call.args[1].value) in (int, float, bool)


def _read_after(ctx, statement: ast.stmt, name: str) -> bool:
    """Does the function read `name` after `statement`?"""
    function = enclosing_function(statement)
    end = (statement.end_lineno, statement.end_col_offset)
    return any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
               and (node.lineno, node.col_offset) > end for node in ctx.walk.subtree(function))


def _is_dict(ctx, name: ast.Name) -> bool:
    """The `**kwargs` of the function around `name`, or a local bound to a dict display, comprehension or
    `dict(...)`."""
    function = enclosing_function(name)
    arguments: Optional[ast.arguments] = getattr(function, "args", None)
    if arguments is not None and arguments.kwarg is not None and arguments.kwarg.arg == name.id:
        return not any(isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr))
                       and name.id in {getattr(t, "id", None) for t in _targets(node)}
                       for node in ctx.walk.subtree(function))
    return makes_dict(ctx.tensors(name).definition(name))


def _membership_guard(ctx, node: ast.AST, dict_name: str) -> Optional[str]:
    """`"key" in kwargs` when an enclosing `if` tests it and `node` is in its body: the keys of `**kwargs` are
    known when compiling, so the branch is folded away unless the caller passes the key."""
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.If) and child in parent.body:
            test = parent.test
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In) \
                    and isinstance(test.left, ast.Constant) and isinstance(test.comparators[0], ast.Name) \
                    and test.comparators[0].id == dict_name:
                return ctx.text(test)
        child, parent = parent, ctx.parent(parent)
    return None


def _targets(node):
    if isinstance(node, ast.Assign):
        return node.targets
    return [node.target]
