from __future__ import annotations

import ast
from typing import List, Optional, Tuple, Union

from ms_lint.analysis.sub_cells import construct_calls
from ms_lint.analysis.walk import self_parameter
from ms_lint.rule import Fix, Rule

_MUTABLE_LITERALS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_MUTABLE_CALLS = frozenset({"builtins.list", "builtins.dict", "builtins.set", "builtins.bytearray",
                            "collections.deque", "collections.defaultdict", "collections.OrderedDict",
                            "collections.Counter"})
# Methods that change a list, dict, set or deque in place.
_MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add",
                               "discard", "popitem", "sort", "reverse", "appendleft", "extendleft", "popleft",
                               "rotate", "difference_update", "intersection_update",
                               "symmetric_difference_update", "__setitem__", "__delitem__", "__iadd__"})
# Builtins that only read a container passed to them.
_READING_BUILTINS = frozenset(f"builtins.{name}" for name in (
    "len", "list", "tuple", "dict", "set", "frozenset", "sorted", "reversed", "enumerate", "zip", "iter", "map",
    "filter", "isinstance", "min", "max", "sum", "any", "all", "print", "str", "repr", "hash", "id", "type", "bool",
    "int", "float"))
# Where a use hands the object over: returned, yielded, bound to another name or stored elsewhere.
_ESCAPES = frozenset({ast.Return, ast.Yield, ast.YieldFrom, ast.Assign, ast.AnnAssign, ast.NamedExpr,
                      ast.List, ast.Tuple, ast.Set, ast.Dict})
# Defaults the fix may move into graph code: lists and dicts are graph types, deques or sets are not.
_GRAPH_BUILDABLE = (ast.List, ast.Dict, ast.ListComp, ast.DictComp)


class MutableDefaultInGraph(Rule):
    """
    ## What it does
    Finds graph-compiled functions (`construct`, what it calls, `@jit` functions) with a mutable default
    argument: a list, dict or set literal or comprehension, or `list()`, `dict()`, `set()`, `deque()`... The
    finding is reported on the `def`.

    A default the function only reads (indexes, iterates, passes to `len`, unpacks with `**`) is not reported:
    nothing can change it, and both modes agree (measured).

    ## Why it matters in graph mode
    In Python the default object is created once and shared by every call, so code that mutates it sees the
    previous calls' changes. The graph compiler instead folds the default into the graph as a constant.
    Measured on MindSpore 2.10 (CPU, LAX and STRICT alike) with `def construct(self, x, acc=[])` doing
    `acc.append(1); return x * len(acc)`: graph mode returns `x * 1` at every call, PyNative returns `x * 1` then
    `x * 2` (the same with a dict default). No error, no warning: the two modes silently disagree.

    Immutable defaults (numbers, strings, `None`, tuples) are fine and not reported.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x, acc=[]):
            acc.append(x)
            return ops.stack(acc)
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x, acc=None):
            if acc is None:
                acc = []
            acc.append(x)
            return ops.stack(acc)
    ```

    ## Fix
    Unsafe: the default becomes `None` and `if <name> is None: <name> = <default>` is inserted at the top of the
    body (after the docstring). Every call then gets a fresh object, which is what graph mode already did and
    what the code means; measured to give the same results in graph mode and PyNative. Unsafe because the same
    Cell run in PyNative no longer shares the object between calls (a cache kept on purpose would be lost).
    Offered for list and dict defaults (graph types), not for sets, deques and the like, one-line functions or
    multi-line defaults.
    """

    code = "MSL022"
    name = "mutable-default-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = ("mutable default `{parameter}={default}` of graph function `{function}` reached from `{entry}`: "
               "graph mode freezes it, PyNative shares it across calls (the modes disagree)")
    fix_applicability = "unsafe"

    def visit_function_def(self, node: ast.FunctionDef, ctx):
        mutable = [(arg, default) for arg, default in _defaults(node)
                   if self._is_mutable(ctx, default) and _may_be_mutated(ctx, node, arg.arg)]
        if mutable:
            arg, default = mutable[0]
            yield self.report(ctx, node, parameter=arg.arg, default=_short(ctx.text(default)), function=node.name,
                              fix=self._fix(ctx, node, mutable))

    visit_async_function_def = visit_function_def

    @staticmethod
    def _is_mutable(ctx, default: ast.expr) -> bool:
        if isinstance(default, _MUTABLE_LITERALS):
            return True
        return isinstance(default, ast.Call) and ctx.names.qualname(default.func) in _MUTABLE_CALLS

    @staticmethod
    def _fix(ctx, node, mutable) -> Optional[Fix]:
        body = node.body
        docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str)
        if docstring and len(body) == 1:
            return None
        first = body[1] if docstring else body[0]
        indent = ctx.indentation(first)
        if first.lineno == node.lineno or ctx.start(first)[1] != len(indent) or any(
                "\n" in ctx.text(default) or not _graph_buildable(ctx, default) for _, default in mutable):
            return None  # a one-line function, a statement after `;`, a multi-line or non-graph default
        step = indent[len(ctx.indentation(node)):] or "    "
        edits = [ctx.replace(default, "None") for _, default in mutable]
        guards = "".join(f"{indent}if {arg.arg} is None:\n{indent}{step}{arg.arg} = {ctx.text(default)}\n"
                         for arg, default in mutable)
        edits.append(ctx.insert(first.lineno, 0, guards))
        names = ", ".join(f"`{arg.arg}`" for arg, _ in mutable)
        return Fix("unsafe", f"Default {names} to None and create the object in the body", tuple(edits))


def _may_be_mutated(ctx, function, name: str, depth: int = 0) -> bool:
    """Can the function change the object its parameter `name` holds, or let it escape to code that can? A use
    that only reads (`x[i]`, `len(x)`, `for v in x`, `x.get(k)`, `f(**x)`) cannot: then both modes see the same
    object and agree. A mutating method, an item store or delete, `x += ...`, passing it to a call that is not a
    reading builtin or a function of the module that only reads it, returning, yielding or aliasing it may."""
    for use in ctx.walk.nodes_of(function).loads.get(name, ()):
        parent = ctx.parent(use)
        kind = parent.__class__
        if kind is ast.Attribute:
            call = ctx.parent(parent)
            if parent.attr in _MUTATING_METHODS and isinstance(call, ast.Call) and call.func is parent:
                return True
        elif kind is ast.Subscript:
            if not isinstance(parent.ctx, ast.Load):
                return True
        elif kind is ast.Call:
            if use is not parent.func and ctx.names.qualname(parent.func) not in _READING_BUILTINS \
                    and not (use in parent.args and _callee_only_reads(ctx, parent, parent.args.index(use), depth)):
                return True
        elif kind is ast.keyword:
            call = ctx.parent(parent)
            if parent.arg is not None and ctx.names.qualname(call.func) not in _READING_BUILTINS \
                    and not _callee_only_reads(ctx, call, parent.arg, depth):
                return True  # `f(**x)` unpacks a copy; `f(acc=x)` hands over the object
        elif kind in _ESCAPES:
            return True
    return any(isinstance(store, ast.AugAssign) and isinstance(store.target, ast.Name) and store.target.id == name
               for store in ctx.walk.nodes_of(function).bindings) or any(
        isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == name
        for store in ctx.walk.nodes_of(function).bindings if isinstance(store, ast.Assign)
        for target in store.targets)


def _callee_only_reads(ctx, call: ast.Call, argument: Union[int, str], depth: int) -> bool:
    """Is the argument (a position, or a keyword) only read by the graph function of the module the call reaches
    (`self.encoder(x, layers=layers)`, `_grid(delta)`)? Two calls deep at most."""
    func = call.func
    through_self = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
    if depth >= 2 or not (isinstance(func, ast.Name) or through_self):
        return False
    callee = _callees(ctx).get(id(call))
    if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) or callee.args.vararg is not None:
        return False
    positional = [*callee.args.posonlyargs, *callee.args.args]
    if ctx.graph.owner_class(callee) is not None and self_parameter(callee) is not None:
        positional = positional[1:]  # (a call through `self.` or a Cell passes `self` itself)
    if isinstance(argument, str):
        known = {arg.arg for arg in (*positional, *callee.args.kwonlyargs)}
        return argument in known and not _may_be_mutated(ctx, callee, argument, depth + 1)
    return argument < len(positional) and not _may_be_mutated(ctx, callee, positional[argument].arg, depth + 1)


def _callees(ctx) -> dict:
    """id(call) -> the graph function it reaches: the graph's call sites, and the `construct` of a Cell the module
    uses as a part (`self.encoder(...)`, `sub_cells`), once per module."""
    def collect() -> dict:
        sites = {**ctx.graph.call_sites, **construct_calls(ctx.graph)}
        return {id(call): function for function, calls in sites.items() for call in calls}
    return ctx.memo(_callees, collect)


def _defaults(node) -> List[Tuple[ast.arg, ast.expr]]:
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
    pairs += [(arg, default) for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
              if default is not None]
    return pairs


def _graph_buildable(ctx, default: ast.expr) -> bool:
    return isinstance(default, _GRAPH_BUILDABLE) or (
        isinstance(default, ast.Call) and not default.args and not default.keywords
        and ctx.names.qualname(default.func) in ("builtins.list", "builtins.dict"))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 30 else text[:27] + "..."
