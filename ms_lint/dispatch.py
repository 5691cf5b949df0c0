"""Calling the rules' visit hooks: on the parts of a module their scopes cover, for the nodes they look at.

The module was walked once, iteratively, when its `GraphScope` was built (no recursion limit); the dispatch reads
that preorder list in stretches (`runs_of`) and, for each node class some rule hooks, calls those hooks only. It is
the hottest loop of a run, so the tables are built once per set of rules that may run, not once per module.
"""
from __future__ import annotations

import ast
import bisect
import functools
import re
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple, Type

from ms_lint.rule import Context, Diagnostic, Rule

Hooks = Tuple[Tuple[Rule, Any], ...]  # (rule, bound visit method), in rule order
# node class -> its hooks: `Hooks`, or for calls a `CallTable` (per set of rules) / `CallHooks` (per module)
Table = Dict[type, Any]
# Called with the rule and the node when a hook raises: the crash is reported and the run goes on.
OnCrash = Callable[[Rule, ast.AST], None]


def run_hooks(ctx: Context, dispatch: "Dispatch", has_needles: "NeedleSearch",
              on_crash: OnCrash) -> Iterator[Diagnostic]:
    """The diagnostics of the hooks of `dispatch`'s rules on the parts of the module they look at, in preorder."""
    graph = ctx.graph
    tables = dispatch.tables_for(has_needles)
    roots: List[Tuple[ast.AST, bool, bool]] = []
    if "module" in dispatch.scopes:
        roots = [(ctx.tree, False, False)]
    else:
        if "cell" in dispatch.scopes:
            for cell in graph.cells.values():  # outer classes come first: a nested Cell is walked once
                if not _inside_any(ctx, cell.node, roots):
                    roots.append((cell.node, False, True))
        if "graph" in dispatch.scopes:
            roots.extend((function, True, graph.cell_of(function) is not None)
                         for function in graph.compiled if not _inside_any(ctx, function, roots))
    order = ctx.walk.order  # the module's nodes in preorder: no second walk
    hooked = ctx.walk.positions_of(dispatch.kinds)  # where the nodes the rules look at are (the walk noted them)
    for root, compiled, in_cell in roots:
        for start, end, run_in_cell, run_compiled in runs_of(graph, ctx.walk, root, compiled, in_cell):
            table = tables[run_in_cell, run_compiled]
            if not table:
                continue  # no selected rule looks at this kind of code
            first = bisect.bisect_left(hooked, start)
            for position in hooked[first:bisect.bisect_left(hooked, end, first)]:
                node = order[position]
                hooks = table.get(node.__class__)
                if hooks is None:
                    continue
                if hooks.__class__ is CallHooks:
                    hooks = hooks.of(node, ctx.names)
                for rule, method in hooks:
                    try:  # a crashing rule must not take the run down (inline: millions of hook calls)
                        found = method(node, ctx)
                        found = list(found) if found else None
                    except RecursionError:
                        continue  # pathologically nested expression: the rule gives up on this node
                    except Exception:  # noqa: BLE001 - any bug in a rule is reported, never raised
                        on_crash(rule, node)
                        continue
                    if found:
                        yield from found


class Dispatch:
    """The hooks of a set of rules that may run in a module, by node class, for each of the four cases (in a
    Cell class or not, in graph code or not). Built once per set of rules, not once per module."""

    def __init__(self, active: Tuple[Rule, ...]):
        hooks_of: Dict[type, List[Tuple[Rule, Any]]] = {}
        for rule in active:
            for node_class, method in hooks_of_rule(type(rule)):
                hooks_of.setdefault(node_class, []).append((rule, getattr(rule, method)))
        self.kinds = tuple(hooks_of)
        self.scopes = {rule.scope for rule in active}
        # (in_cell, compiled) -> node class -> its hooks; a call's hooks, when some rule declares the names it
        # looks for, are chosen per call (`CallHooks`: the needle searches belong to the module)
        self._tables: Dict[Tuple[bool, bool], Table] = {}
        for in_cell in (False, True):
            for compiled in (False, True):
                table: Table = {}
                for kind, hooks in hooks_of.items():
                    found = tuple(hook for hook in hooks if _runs(hook[0].scope, in_cell, compiled))
                    if not found:
                        continue
                    by_name = kind is ast.Call and any(rule.call_names is not None for rule, _ in found)
                    table[kind] = CallTable(found) if by_name else found
                self._tables[in_cell, compiled] = table

    def tables_for(self, has_needles: Callable[[Rule], bool]) -> Dict[Tuple[bool, bool], Table]:
        """The tables for one module: its calls' hooks also depend on the needles its text holds."""
        tables: Dict[Tuple[bool, bool], Table] = {}
        for case, table in self._tables.items():
            calls = table.get(ast.Call)
            if calls.__class__ is CallTable:
                table = {**table, ast.Call: CallHooks(calls, has_needles)}
            tables[case] = table
        return tables


class CallTable:
    """The `visit_call` hooks of one dispatch table, by the names a call's function can end in
    (`Rule.call_names`): most rules look for a few names, and every call of a module would reach all of them."""

    __slots__ = ("hooks", "unfiltered", "wanted", "_candidates")

    def __init__(self, hooks: Hooks):
        self.hooks = hooks
        self.unfiltered = tuple((rule, method) for rule, method in hooks if rule.call_names is None)
        self.wanted = frozenset().union(*(rule.call_names for rule, _ in hooks if rule.call_names is not None))
        self._candidates: Dict[Tuple[str, ...], Hooks] = {}

    def candidates(self, names: Tuple[str, ...]) -> Hooks:
        """The hooks that may look at a call of these names, before the module's needles are known."""
        found = self._candidates.get(names)
        if found is None:
            found = self._candidates[names] = tuple(
                (rule, method) for rule, method in self.hooks
                if rule.call_names is None or not rule.call_names.isdisjoint(names))
        return found


class CallHooks:
    """A `CallTable` in one module: the hooks for each call, a call-only rule's only if the module's text holds
    one of its needles."""

    __slots__ = ("table", "_has_needles", "_chosen")

    def __init__(self, table: CallTable, has_needles: Callable[[Rule], bool]):
        self.table = table
        self._has_needles = has_needles
        self._chosen: Dict[Tuple[str, ...], Hooks] = {}  # names -> the hooks, in order

    def of(self, call: ast.Call, names) -> Hooks:
        called = names.names_called(call.func)
        table = self.table
        if table.wanted.isdisjoint(called):
            return table.unfiltered  # most calls: no rule that declares names looks for them
        chosen = self._chosen.get(called)
        if chosen is None:
            chosen = self._chosen[called] = tuple(hook for hook in table.candidates(called)
                                                  if self._has_needles(hook[0]))
        return chosen


class NeedleSearch:
    """Does a module's text hold one of a rule's needles (`Rule.needles`)? Each rule's search done once. Needles
    that differ only in case (`noqa`, `NOQA`, `Noqa`) are first searched once in the lowered text, when the
    caller has it: none of them is in the text if their lowered form is not in that."""

    __slots__ = ("text", "lowered", "_found")

    def __init__(self, text: str, lowered: Optional[str] = None):
        self.text = text
        self.lowered = lowered  # `text.lower()`, or None
        self._found: Dict[Rule, bool] = {}

    def __call__(self, rule: Rule) -> bool:
        found = self._found.get(rule)
        if found is None:
            needles, lowered = rule.needles, self.lowered
            if not needles:
                found = True
            elif lowered is not None and (folded := _folded(needles)) and not any(n in lowered for n in folded):
                found = False
            else:
                found = _searcher(needles)(self.text)
            self._found[rule] = found
        return found


@functools.lru_cache(maxsize=None)
def _searcher(needles: Tuple[str, ...]) -> Callable[[str], bool]:
    """Does a text hold one of the needles? Those led by a dot (`.cuda(`, `.size(`: 24 of MSL064's 26) are searched
    together by one regex, which looks only at the dots: on mindone 26 `in` tests took 0.56 s, `torch` and the
    regex 0.09 s. Other needles share no such lead, and an alternation of them is slower than `in` tests."""
    dotted = [needle[1:] for needle in needles if needle.startswith(".")]
    if len(dotted) < 3:
        return lambda text: any(needle in text for needle in needles)
    plain = tuple(needle for needle in needles if not needle.startswith("."))
    search = re.compile(r"\.(?:" + "|".join(map(re.escape, dotted)) + ")").search
    return lambda text: any(needle in text for needle in plain) or search(text) is not None


@functools.lru_cache(maxsize=None)
def _folded(needles: Tuple[str, ...]) -> Optional[Tuple[str, ...]]:
    """The needles lowered, when that makes fewer of them; else None (searching them lowered would not pay)."""
    folded = tuple(dict.fromkeys(needle.lower() for needle in needles))
    return folded if len(folded) < len(needles) else None


def calls_only(rule: Type[Rule]) -> bool:
    """Does the rule look only at calls of the names it declares (`Rule.call_names`)?"""
    return rule.call_names is not None and all(kind is ast.Call for kind, _ in hooks_of_rule(rule))


def runs_of(graph, walk, root: ast.AST, compiled: bool, in_cell: bool) -> List[Tuple[int, int, bool, bool]]:
    """The stretches of the module's walk under `root` between the starts and ends of its defs, lambdas and
    classes, with whether they are in a Cell class and in graph code: (start, end, in_cell, compiled). A def,
    lambda or class is itself in its own stretch. A def's body is graph code if the def is compiled (nesting does
    not make it so); its arguments (default values, annotations), decorators and return annotation are evaluated
    where the def statement runs, so they keep the flags around the def. A class is a Cell's if it is a Cell."""
    runs = []
    start, end = walk.span(root)
    if root.__class__ in _FUNCTION_KINDS:
        compiled = False  # a root def's own arguments and decorators run outside it (roots are outermost)
    enclosing = [(end, compiled, in_cell)]  # the scopes open at `position`: their end and flags, innermost last
    position = start
    for scope_start, scope_end, scope in _boundaries(graph, walk, root):
        while enclosing[-1][0] <= scope_start:  # scopes that ended before this one starts
            closed_end, compiled, in_cell = enclosing.pop()
            runs.append((position, closed_end, in_cell, compiled))
            position = closed_end
        _, compiled, in_cell = enclosing[-1]
        runs.append((position, scope_start, in_cell, compiled))
        position = scope_start
        if scope is None:  # a def's arguments or decorators: the flags around the def
            _, compiled, in_cell = enclosing[-2]
        elif scope.__class__ is ast.ClassDef:
            in_cell = scope in graph.cells
        else:
            compiled = scope in graph.compiled
        enclosing.append((scope_end, compiled, in_cell))
    while enclosing:
        closed_end, compiled, in_cell = enclosing.pop()
        runs.append((position, closed_end, in_cell, compiled))
        position = closed_end
    return [run for run in runs if run[0] < run[1]]


_FUNCTION_KINDS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _boundaries(graph, walk, root: ast.AST) -> List[Tuple[int, int, Optional[ast.AST]]]:
    """`walk.scopes_within(root)` with, for each compiled def and lambda, the stretches of its arguments and of
    its decorators and return annotation (None for the node: they take the flags around the def), in preorder.
    Other defs need none: their flags are those around them (a def nested in graph code is compiled itself)."""
    scopes = walk.scopes_within(root)
    compiled = graph.compiled
    found: List[Tuple[int, int, Optional[ast.AST]]] = list(scopes)
    for scope_start, scope_end, scope in scopes:
        if scope in compiled and scope.__class__ in _FUNCTION_KINDS:
            body_start, body_end = walk.body_span(scope)
            found += [(scope_start + 1, body_start, None), (body_end, scope_end, None)]
    if len(found) > len(scopes):
        found = [boundary for boundary in found if boundary[0] < boundary[1]]
        found.sort(key=lambda boundary: (boundary[0], -boundary[1]))  # an outer stretch before what starts with it
    return found


def _runs(scope: str, in_cell: bool, compiled: bool) -> bool:
    return scope == "module" or (scope == "cell" and in_cell) or (scope == "graph" and compiled)


@functools.lru_cache(maxsize=256)  # few combinations of rules: not rebuilt for every module
def hooked_kinds(rules: Tuple[Rule, ...]) -> FrozenSet[type]:
    """The node classes some of `rules` hook: the walk notes where they are."""
    return frozenset(kind for rule in rules for kind, _ in hooks_of_rule(type(rule)))


_RULE_HOOKS: Dict[Type[Rule], Tuple[Tuple[type, str], ...]] = {}


def hooks_of_rule(rule: Type[Rule]) -> Tuple[Tuple[type, str], ...]:
    """(node class, method name) of every hook the rule defines (found once per rule class)."""
    found = _RULE_HOOKS.get(rule)
    if found is None:
        found = _RULE_HOOKS[rule] = tuple(rule.hooks())
    return found


def _inside_any(ctx: Context, function: ast.AST, roots: Iterable[Tuple[ast.AST, bool, bool]]) -> bool:
    node = ctx.parent(function)
    root_nodes = {id(root) for root, _, _ in roots}
    while node is not None:
        if id(node) in root_nodes:
            return True
        node = ctx.parent(node)
    return False
