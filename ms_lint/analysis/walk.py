"""The module's one walk: every node in preorder, with parent links, spans of scopes and nodes noted by class.

Built once per module (the hottest loop of a run: iterative, so no recursion limit), read by everything that
needs a subtree, the parent of a node or the nodes of a class in some part of the module, instead of walking
again. It also keeps the module's memo: what an analysis or a rule computes once per module (`memo`).
"""
from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections import deque
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    Hashable,
    Iterable,
    Iterator,
    List,
    Optional,
    Set,
    Tuple,
    TypeVar,
    Union,
)

from ms_lint.analysis.walk_specialised import walk_nodes
from ms_lint.source import LISTS_WITH_NONE, child_fields

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)  # what `with_enclosing_def` and `enclosing_def` call a def
PARENT = "_msl_parent"  # the parent link of a node of another module's tree (see `link_by_attribute`)
# node -> parent, for the modules being linted (`ModuleWalk`, emptied of a module's nodes by `release`): a dict
# entry costs less than an attribute on millions of nodes, set and then deleted (measured: 0.2 against 0.7 us)
_PARENTS: Dict[ast.AST, ast.AST] = {}
_walks_alive = 0  # the walks made and not yet released: what `_PARENTS` holds links of
T = TypeVar("T")

# The nodes that can bind a name (`global` and `nonlocal` declarations included): what `FunctionNodes.bindings`
# holds and `ms_lint.analysis.bindings` indexes. The one list of them.
BINDER_KINDS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension,
                          ast.NamedExpr, ast.withitem, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom,
                          ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_DEFINITION_KINDS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
# the binders that name what they bind (a store binds a `Name`): with `except ... as`, what `first_bound` reads
_NAMING_KINDS = frozenset({*_DEFINITION_KINDS, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal})


class FunctionNodes:
    """What the queries about one function need, read off its part of the module's walk (nested functions
    included) in one pass: calls, attribute reads, stores, bindings, nested functions and the names read (asked
    about most functions); the first line binding each name from the binding nodes, on first use."""

    def __init__(self) -> None:
        self.calls: List[ast.Call] = []
        self.nested: List[FunctionNode] = []
        self.attribute_loads: List[ast.Attribute] = []  # `<name>.<attr>` read
        self.stores: Set[str] = set()
        self.bindings: List[ast.AST] = []  # `BINDER_KINDS` nodes: in preorder
        self.loads: Dict[str, List[ast.Name]] = {}  # name -> the nodes reading it
        self.named_bindings: List[ast.AST] = []  # name stores, `_NAMING_KINDS`, handlers: for `first_bound`
        self._first_bound: Optional[Dict[str, int]] = None

    @property
    def first_bound(self) -> Dict[str, int]:
        """Name -> the first line where the function (nested scopes included) binds it: a store, a def or class,
        an import, an `except ... as`, a `global`/`nonlocal` declaration."""
        if self._first_bound is None:
            rows: Dict[str, int] = {}
            bound: Iterable[Any] = self.named_bindings
            for node in bound:
                kind = node.__class__
                if kind is ast.Name:
                    names = [node.id]
                elif kind in _DEFINITION_KINDS or kind is ast.ExceptHandler:
                    names = [node.name] if node.name else []
                elif kind in (ast.Import, ast.ImportFrom):
                    names = [(a.asname or a.name).partition(".")[0] for a in node.names]
                else:  # global, nonlocal
                    names = node.names
                for name in names:
                    rows.setdefault(name, node.lineno)
            self._first_bound = rows
        return self._first_bound


def parent_of(node: ast.AST) -> Optional[ast.AST]:
    return _PARENTS.get(node) or getattr(node, PARENT, None)  # (a node is never false)


def link_by_attribute(parents: Dict[ast.AST, ast.AST]) -> None:
    """Parent links as attributes, for a def or class of another module's tree walked while linting this one
    (`subtree`, `nodes_of`): they live as long as that tree, which no `release` of this module's walk frees."""
    for child, parent in parents.items():
        setattr(child, PARENT, parent)


def enclosing_function(node: ast.AST) -> Optional[FunctionNode]:
    parents = _PARENTS  # `parent_of` inlined: a few links climbed per call, for most calls of a module
    around = parents.get(node) or getattr(node, PARENT, None)
    while around is not None and not isinstance(around, FUNCTIONS):
        around = parents.get(around) or getattr(around, PARENT, None)
    return around


def enclosing_def(node: ast.AST) -> Optional[ast.AST]:
    """The innermost def around a node, lambdas passed over: `with_enclosing_def`'s answer for one node."""
    around = parent_of(node)
    while around is not None and around.__class__ not in DEFS:
        around = parent_of(around)
    return around


def self_parameter(function: FunctionNode) -> Optional[str]:
    """The name of a method's first parameter (`self`), None for a lambda, a static method or a def without one."""
    if isinstance(function, ast.Lambda):
        return None
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list):
        return None
    args = function.args.posonlyargs + function.args.args
    return args[0].arg if args else None


def parameter_names(function: FunctionNode) -> Set[str]:
    """Every parameter a def or lambda takes, `*args` and `**kwargs` included."""
    arguments = function.args
    return {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg,
                            arguments.kwarg] if a is not None}


def parameter_defaults(arguments: ast.arguments) -> Dict[str, ast.expr]:
    """{parameter name: its default expression} for a def's (or lambda's) `arguments`."""
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(arguments.defaults):], arguments.defaults))
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    return defaults


def spelled_name(expr: ast.AST) -> Optional[str]:
    """The last name a callee is spelled with: the attribute of `a.b.f`, the name `f`; None for anything else
    (`f()()`, `fs[0]`). What the source says, not what an import binds it to (see `Names.last_name`)."""
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Name):
        return expr.id
    return None


def enclosing_handler(node: ast.AST, caught: Iterable[str]) -> Optional[ast.ExceptHandler]:
    """The handler of a `try` around `node` (in the same function) that catches one of the exception classes
    named `caught`, or everything (a bare `except:`). Needs the parent links of the engine's walk."""
    wanted = frozenset(caught)
    child, parent = node, parent_of(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.Try) and child in parent.body:
            for handler in parent.handlers:
                if handler_catches(handler, wanted):
                    return handler
        child, parent = parent, parent_of(parent)
    return None


def inside_handler(node: ast.AST, caught: Iterable[str]) -> bool:
    """Is `node` in the body of an `except` (in the same function) that catches one of `caught`, or everything:
    the code a failure of its `try` runs instead?"""
    wanted = frozenset(caught)
    parent = parent_of(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.ExceptHandler) and handler_catches(parent, wanted):
            return True
        parent = parent_of(parent)
    return False


def handler_catches(handler: ast.ExceptHandler, wanted: FrozenSet[str]) -> bool:
    """Does the handler catch one of the exception classes named `wanted` (or everything, bare)?"""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(spelled_name(kind) in wanted for kind in kinds if kind)


class ModuleWalk:
    """Every node of a module in preorder, where each def, lambda and class starts and ends in that list, and
    where the nodes of the noted classes are (`INDEXED_KINDS` and the classes the rules that may run hook)."""

    def __init__(self, tree: ast.Module, indexed: Iterable[type] = ()):
        global _walks_alive
        self.tree = tree
        self.order, self._spans, self._positions = preorder(tree, _PARENTS, (*INDEXED_KINDS, *indexed))
        self._alive = True
        _walks_alive += 1
        self._scopes: Optional[List[Tuple[int, int, ast.AST]]] = None  # see scopes_within
        self._scope_starts: List[int] = []
        self._function_nodes: Dict[FunctionNode, FunctionNodes] = {}
        self._memo: Dict[Hashable, object] = {}

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """What `compute()` returns, computed once per module under `key` (a function or a constant of the
        asking module): the caches of analyses and rules, dropped with the module."""
        try:
            return self._memo[key]  # type: ignore[return-value]
        except KeyError:
            found = self._memo[key] = compute()
            return found

    def release(self) -> None:
        """Break the reference cycles that tie the tree together once the module is linted (the parent links), so
        that reference counting frees it at once: left to the cyclic garbage collector, every linted tree would be
        scanned again and again by its full collections."""
        global _walks_alive
        if self._alive:
            self._alive = False
            _walks_alive -= 1
            if not _walks_alive:  # the links are all this walk's (the usual case): dropped at once
                _PARENTS.clear()
            else:  # every node but the root has a parent link (deleted in a C loop: millions of nodes)
                deque(map(_PARENTS.pop, itertools.islice(self.order, 1, None), itertools.repeat(None)), 0)
        self.order, self._spans, self._positions = [], {}, {}
        self._scopes, self._scope_starts = None, []
        self._function_nodes.clear()
        self._memo.clear()

    def scopes(self) -> Iterable[ast.AST]:
        """The module and every def, lambda and class of it."""
        return self._spans.keys()

    def span(self, node: ast.AST) -> Tuple[int, int]:
        """Where the module, a def, a lambda or a class of this module starts and ends in `order`."""
        return self._spans[node]

    def spans(self, node: ast.AST) -> bool:
        """Is `node` the module or a def, lambda or class of this module (one `span` knows)?"""
        return node in self._spans

    def calls_between(self, start: int, end: int) -> List[ast.AST]:
        """The calls at positions `start` to `end` (excluded) of `order`, in preorder (calls are always noted)."""
        positions = self._positions[ast.Call]
        order = self.order
        return [order[position] for position in
                positions[bisect.bisect_left(positions, start):bisect.bisect_left(positions, end)]]

    def scopes_within(self, node: ast.AST) -> List[Tuple[int, int, ast.AST]]:
        """(start, end, node) of the defs, lambdas and classes in the subtree of `node` (itself included when it
        is one), in preorder."""
        if self._scopes is None:
            self._scopes = sorted((start, end, scope) for scope, (start, end) in self._spans.items()
                                  if scope is not self.tree)
            self._scope_starts = [start for start, _, _ in self._scopes]
        start, end = self._spans[node]
        first = bisect.bisect_left(self._scope_starts, start)
        return self._scopes[first:bisect.bisect_left(self._scope_starts, end, first)]

    def body_span(self, function: FunctionNode) -> Tuple[int, int]:
        """Where the body of a def or lambda of this module starts and ends in `order`: a def's arguments come
        before it in preorder, its decorators and return annotation after it."""
        order = self.order
        start, end = self._spans[function]
        if isinstance(function, ast.Lambda):
            return order.index(function.body, start, end), end
        body_start = order.index(function.body[0], start, end)
        after = function.decorator_list[0] if function.decorator_list else function.returns
        body_end = end
        if after is not None:  # searched back from the end: decorators and annotations are short, bodies long
            body_end -= 1
            while order[body_end] is not after:
                body_end -= 1
        return body_start, body_end

    def of_kind(self, node: ast.AST, kind: type) -> List[ast.AST]:
        """The nodes of class `kind` under the module, a def, a lambda or a class of this module, in preorder:
        found by bisection in the positions the module's walk recorded, or by a scan of the span for a class the
        walk was not asked to record (a project rule's `collect` runs whether or not its hooks did)."""
        start, end = self._spans[node]
        order = self.order
        positions = self._positions.get(kind)
        if positions is None:
            return [order[i] for i in range(start, end) if order[i].__class__ is kind]
        return [order[i] for i in positions[bisect.bisect_left(positions, start):bisect.bisect_left(positions, end)]]

    def positions_of(self, kinds: Iterable[type]) -> List[int]:
        """Where the nodes of the given classes are in `order`, sorted. Recorded by the walk for the classes
        asked for when the scope was built (`indexed`) and for defs, lambdas and classes; found by a scan for
        others."""
        found: List[int] = []
        for kind in kinds:
            if kind in self._positions:
                found += self._positions[kind]
            elif kind in SCOPE_KINDS:
                found += [start for node, (start, _) in self._spans.items() if node.__class__ is kind]
            else:
                found += [position for position, node in enumerate(self.order) if node.__class__ is kind]
        found.sort()
        return found

    def with_enclosing_def(self, kind: type, lambdas: bool = False) -> Iterator[Tuple[ast.AST, Optional[ast.AST]]]:
        """Every node of class `kind` (one of `INDEXED_KINDS`) in the module, in preorder, with the innermost
        def around it (a lambda is not a def unless `lambdas`: then it is `enclosing_function`'s answer; a call in
        a def's decorators or defaults is the def's), found by sweeping the recorded positions and spans instead
        of climbing parent links."""
        order = self.order
        kinds = FUNCTIONS if lambdas else DEFS
        defs = sorted((start, end, node) for node, (start, end) in self._spans.items() if node.__class__ in kinds)
        around: List[Tuple[int, int, ast.AST]] = []  # the defs open at the current position, innermost last
        following = 0
        for position in self._positions[kind]:
            while following < len(defs) and defs[following][0] < position:
                while around and around[-1][1] <= defs[following][0]:
                    around.pop()
                around.append(defs[following])
                following += 1
            while around and around[-1][1] <= position:
                around.pop()
            yield order[position], around[-1][2] if around else None

    def in_walk_order(self, node: ast.AST, kinds: Tuple[type, ...]) -> List[ast.AST]:
        """The nodes of the given `INDEXED_KINDS` under `node` in `ast.walk` (breadth-first) order, for consumers
        whose first match decides: by depth below `node`, then in preorder (a level of a breadth-first walk is in
        preorder)."""
        start, end = self._spans[node]
        found = []
        for kind in kinds:
            positions = self._positions[kind]
            found += positions[bisect.bisect_left(positions, start):bisect.bisect_left(positions, end)]
        order = self.order
        return [order[position] for _, position in sorted((depth_below(order[p], node), p) for p in found)]

    def subtree(self, node: ast.AST) -> List[ast.AST]:
        """`node` and every node under it, in preorder (children in field order, without the operator and
        expression-context singletons), for the module, a def, a lambda or a class of this module."""
        span = self._spans.get(node)
        if span is None:  # a node of another module's tree
            return _foreign_preorder(node)
        return self.order[span[0]:span[1]]

    def nodes_of(self, function: FunctionNode) -> FunctionNodes:
        """The function's calls, attribute reads, stores, bindings, nested functions and loads (cached)."""
        found = self._function_nodes.get(function)
        if found is None:
            nodes, span = self.order, self._spans.get(function)
            if span is None:  # a def of another module's tree
                nodes = _foreign_preorder(function)
                span = (0, len(nodes))
            found = self._function_nodes[function] = _function_nodes(nodes, *span)
        return found


def _function_nodes(nodes: List[ast.AST], start: int, end: int) -> FunctionNodes:
    """What `nodes_of` answers for the function at `nodes[start]`, from `nodes[start + 1:end]` (its subtree)."""
    found = FunctionNodes()
    bindings, nested, loads, named_bindings = found.bindings, found.nested, found.loads, found.named_bindings
    add_store, add_call, add_attribute_load = found.stores.add, found.calls.append, found.attribute_loads.append
    # the classes in locals: this loop runs on most nodes of a run, and local names are read faster
    type_of, name_class, call_class, attribute_class, load_class, lambda_class, handler_class = \
        type, ast.Name, ast.Call, ast.Attribute, ast.Load, ast.Lambda, ast.ExceptHandler
    walked: Iterable[Any] = nodes[start + 1:end]  # (a slice: `islice` would step through the nodes before)
    for node in walked:
        kind = type_of(node)  # node classes are final: one class test per node (this runs on most nodes)
        if kind is name_class:
            if type_of(node.ctx) is load_class:
                reads = loads.get(node.id)
                if reads is None:
                    loads[node.id] = [node]
                else:
                    reads.append(node)
            else:
                add_store(node.id)
                named_bindings.append(node)
        elif kind is call_class:
            add_call(node)
        elif kind is attribute_class:
            if type_of(node.ctx) is load_class:
                add_attribute_load(node)
        elif kind in BINDER_KINDS:
            bindings.append(node)
            if kind in _NAMING_KINDS:
                named_bindings.append(node)
                if kind in _DEFINITION_KINDS:
                    add_store(node.name)
                    if kind is not ast.ClassDef:
                        nested.append(node)
        elif kind is lambda_class:
            nested.append(node)
        elif kind is handler_class:
            named_bindings.append(node)
    return found


def depth_below(node: ast.AST, ancestor: ast.AST) -> int:
    depth = 0
    current: Optional[ast.AST] = node
    while current is not ancestor:
        current, depth = parent_of(current), depth + 1  # type: ignore[arg-type]  # an ancestor is met first
    return depth


SCOPE_KINDS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})
INDEXED_KINDS = (ast.Call, ast.Assign, ast.AnnAssign, ast.AugAssign)  # where `preorder` records positions
_CLOSE = object()  # marks the end of a scope's subtree on the stack of `preorder`


def _foreign_preorder(node: ast.AST) -> List[ast.AST]:
    parents: Dict[ast.AST, ast.AST] = {}
    order = preorder(node, parents)[0]
    link_by_attribute(parents)
    return order


def preorder(root: ast.AST, parents: Dict[ast.AST, ast.AST], indexed: Iterable[type] = INDEXED_KINDS):
    """Every node under `root` (itself included) in preorder, with their parent links entered in `parents`, the
    (start, end) of `root` and of each def, lambda and class in that list, and the positions of the `indexed`
    classes in it. The one full walk of a module, its hottest loop: children pushed straight onto the stack, the
    commonest classes walked by code of their own (`walk_specialised`), the others by `_push_children`."""
    order: List[ast.AST] = [root]  # the root is never noted: its span opens here
    spans: Dict[ast.AST, Tuple[int, int]] = {}
    positions: Dict[type, List[int]] = {kind: [] for kind in indexed if kind not in SCOPE_KINDS}
    noted: Dict[type, Optional[List[int]]] = {**dict.fromkeys(SCOPE_KINDS), **positions}  # None: a scope
    stack: list = [_CLOSE]
    _push_children(root, stack, parents)
    walk_nodes(stack, order, parents, positions, noted, [(root, 0)], spans, _CLOSE, _push_children)
    return order, spans, positions


def _push_children(node: ast.AST, stack: list, parents: Dict[ast.AST, ast.AST]) -> None:
    """Push the children of `node` onto `stack` (fields and list items reversed: the first child on top), with
    their parent links: the walk of a node of a class with no code of its own in `walk_specialised`."""
    kind = node.__class__
    fields = _REVERSED_CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _REVERSED_CHILD_FIELDS[kind] = _reversed_child_fields(kind)
    for name in fields:
        value = getattr(node, name, None)
        if value is None:
            if name[0] == "?":  # a list that may hold None, under its name marked (`_reversed_child_fields`)
                value = [item for item in getattr(node, name[1:]) if item is not None]
                for child in value:
                    parents[child] = node
                stack += value[::-1]
            continue
        if value.__class__ is list:
            for child in value:
                parents[child] = node
            stack += value[::-1]
        else:  # the fields walked hold a node, a list of nodes or None
            parents[value] = node
            stack.append(value)


def _reversed_child_fields(kind: type) -> Tuple[str, ...]:
    """`child_fields` backwards, with a list field that may hold None marked "?name": getattr finds no such
    attribute, so only a field that reads as None is tested for the mark."""
    with_none = LISTS_WITH_NONE.get(kind)
    return tuple(f"?{name}" if name == with_none else name for name in child_fields(kind)[::-1])


_REVERSED_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}  # node class -> `child_fields` backwards


def rows_spelling(text: str, word: str) -> List[int]:
    """The rows of the lines of `text` that hold `word`, in order (rows as the parser counts them). The last
    text's answers are kept: `Names` and `imported_files` both ask for a module's `import` rows (not to be
    changed by the caller)."""
    global _rows_kept
    kept = _rows_kept
    if kept[0] is not text:
        kept = _rows_kept = (text, {})  # one assignment: threads see the old pair or the new one
    rows = kept[1].get(word)
    if rows is None:
        rows = kept[1][word] = _rows_spelling(text, word)
    return rows


_rows_kept: Tuple[Optional[str], Dict[str, List[int]]] = (None, {})


def _rows_spelling(text: str, word: str) -> List[int]:
    if "\r" in text and text.count("\r") != text.count("\r\n"):  # a lone CR ends a line too (CRLF: as LF)
        return [row for row, line in enumerate(re.split(r"\r\n|\r|\n", text), 1) if word in line]
    rows: List[int] = []
    row, counted = 1, 0
    position = text.find(word)
    while position != -1:
        row += text.count("\n", counted, position)
        counted = position
        rows.append(row)
        line_end = text.find("\n", position)
        position = text.find(word, line_end) if line_end != -1 else -1
    return rows


def all_statements(body: List[ast.stmt], rows: Optional[List[int]] = None) -> Iterator[ast.stmt]:
    """Every statement of a module, entering functions and classes (classes can be nested anywhere); with the
    sorted `rows`, only the statements on whose lines one of them is entered (the statements around a row)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if rows is not None and not isinstance(stmt, ast.match_case):  # a case has no position of its own
            index = bisect.bisect_right(rows, stmt.lineno)
            if index == len(rows) or rows[index] > (stmt.end_lineno or stmt.lineno):
                continue
        kind = type(stmt)
        blocks = _BLOCKS.get(kind)
        if blocks is None:
            blocks = _BLOCKS[kind] = tuple(name for name in _BLOCK_FIELDS if name in kind._fields)
        for name in blocks:  # none for most statements (an expression, an assignment, a return)
            block = getattr(stmt, name, None)
            if isinstance(block, list):
                stack.extend(reversed(block))


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")  # the fields that may hold statements
_BLOCKS: Dict[type, Tuple[str, ...]] = {}  # statement class -> its `_BLOCK_FIELDS`


