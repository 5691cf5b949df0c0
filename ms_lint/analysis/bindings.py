"""Bindings: which nodes bind or build up a name in a scope, indexed once per scope and asked by name.

Rules and analyses follow names back to what was assigned to them; each asks about many names of the same
function, so the nodes are gathered once per scope (through the module's memo) and looked up by name.
"""
from __future__ import annotations

import ast
import bisect
import itertools
from typing import Any, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from ms_lint.analysis.imports import statements
from ms_lint.analysis.walk import BINDER_KINDS, FunctionNode, ModuleWalk, parent_of


def uses_of_local(walk: ModuleWalk, function: FunctionNode, name: str) -> List[ast.AST]:
    """The nodes of `function` (nested functions included, in `ast.walk` order) that can build up a local
    container `name`: assignments with `name` among their targets, `name[k] = ...`, `name += ...` and method
    calls `name.m(...)`. Indexed once per function: rules follow many names through the same `__init__`."""
    return walk.memo((uses_of_local, function), lambda: _container_updates(walk, function)).get(name, [])


def _container_updates(walk: ModuleWalk, function: FunctionNode) -> Dict[str, List[ast.AST]]:
    index: Dict[str, List[ast.AST]] = {}
    node: Any  # dispatched on its class
    names: Iterable[str]
    for node in walk.in_walk_order(function, (ast.Assign, ast.AugAssign, ast.Call)):
        kind = node.__class__
        if kind is ast.Assign:
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
                    and isinstance(node.targets[0].value, ast.Name):
                names.add(node.targets[0].value.id)
        elif kind is ast.AugAssign and isinstance(node.target, ast.Name):
            names = (node.target.id,)
        elif kind is ast.Call and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            names = (node.func.value.id,)
        else:
            continue
        for found in names:
            index.setdefault(found, []).append(node)
    return index


def attribute_stores(walk: ModuleWalk, class_node: ast.ClassDef) -> Dict[str, List[Tuple[ast.AST, ast.Attribute]]]:
    """Attribute name -> the (statement, target) pairs of the class (its methods and nested defs included) that
    store `<name>.<attribute>` by `=`, `: T =` or `+=`, in walk order. Indexed once per class: what rules ask of
    `self.x` (does every assignment build a tensor, one Cell class, a `SequentialCell`?) reads it by name."""
    def index() -> Dict[str, List[Tuple[ast.AST, ast.Attribute]]]:
        found: Dict[str, List[Tuple[ast.AST, ast.Attribute]]] = {}
        node: Any  # an assignment of one of three kinds
        for kind in (ast.Assign, ast.AnnAssign, ast.AugAssign):
            for node in walk.of_kind(class_node, kind):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                        found.setdefault(target.attr, []).append((node, target))
        return found
    return walk.memo((attribute_stores, class_node), index)


def binders(walk: ModuleWalk, function: Optional[FunctionNode], name: str) -> List[ast.AST]:
    """The nodes that can bind `name` in a function (its body, nested scopes included) or, for None, at module
    level, in `ast.walk` order: assignments of every form, loops, `with ... as`, walrus, imports, defs, classes
    and `global`/`nonlocal` declarations. Indexed by the names they concern once per scope, as every name read
    there may be looked up among them."""
    scope = function if function is not None else walk.tree
    return walk.memo((binders, scope), lambda: _index_binders(walk, function)).get(name, [])


def _index_binders(walk: ModuleWalk, function: Optional[FunctionNode]) -> Dict[str, List[ast.AST]]:
    if function is not None:  # read off the module's preorder, then put back in walk order below
        nodes: Iterable[ast.AST] = itertools.islice(walk.order, *walk.body_span(function))
    else:
        nodes = (node for stmt in statements(walk.tree.body) for node in _shallow(stmt))
    index: Dict[str, List[ast.AST]] = {}
    for node in nodes:
        if node.__class__ in BINDER_KINDS:  # node classes are final: one set lookup per node
            for concerned in concerned_names(node):
                index.setdefault(concerned, []).append(node)
    if function is not None:
        body = function.body if isinstance(function.body, list) else [function.body]
        statement_of = {id(stmt): position for position, stmt in enumerate(body)}
        for found in index.values():
            if len(found) > 1:  # a stable sort keeps the preorder among equals
                found.sort(key=lambda node: _walk_position(node, function, statement_of))
    return index


def _walk_position(node, function, statement_of) -> Tuple[int, int]:
    """(body statement, depth in it): with preorder among equals, the order of `walk(stmt) for stmt in body`
    (breadth first in each statement)."""
    depth = 0
    while parent_of(node) is not function:
        node, depth = parent_of(node), depth + 1
    return statement_of[id(node)], depth


def concerned_names(node: ast.AST) -> Set[str]:
    """Every name a binding node can bind: the names under its targets (`a` and `i` of `a[i] = v` too)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).partition(".")[0] for a in node.names}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return set(node.names)
    targets: List[Any]
    if isinstance(node, ast.Assign):
        targets = node.targets
    else:
        targets = [getattr(node, "target", None) or getattr(node, "optional_vars", None)]
    names: Set[str] = set()
    for target in targets:
        if target.__class__ is ast.Name:  # most targets: nothing under them to walk
            names.add(target.id)
        elif target is not None:
            names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _shallow(stmt: ast.stmt):
    """The nodes of a module-level statement, not entering function or class bodies."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt
        return
    stack: List[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.stmt)):
                stack.append(child)


def assignments_of(binding: ast.AST) -> List[Tuple[ast.AST, ast.AST, Any]]:
    """(target, statement, value) for what a binding assigns, as `definition` reports it: the value expression of
    an assignment, a walrus or a `with ... as`; the statement itself for an augmented assignment; the loop (`For`,
    `comprehension`) for a loop target. The statement's end is where the definition starts to reach. Empty for
    imports, defs and other bindings."""
    if isinstance(binding, ast.Assign):
        return [(target, binding, binding.value) for target in binding.targets]
    if isinstance(binding, (ast.AnnAssign, ast.AugAssign)) and getattr(binding, "value", None) is not None:
        return [(binding.target, binding, binding if isinstance(binding, ast.AugAssign) else binding.value)]
    if isinstance(binding, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [(binding.target, binding.target, binding)]
    if isinstance(binding, ast.NamedExpr):
        return [(binding.target, binding, binding.value)]
    if isinstance(binding, ast.withitem) and binding.optional_vars is not None:
        return [(binding.optional_vars, binding.optional_vars, binding.context_expr)]
    return []


def target_names(target: ast.AST):
    """The names an assignment target writes: `a` and `b` in `a, b = ...`, `a` in `a[i] = ...` and `a.x = ...`;
    never the names used in an index (`i`), which are only read."""
    stack = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            yield node
        elif isinstance(node, (ast.Tuple, ast.List)):
            stack.extend(node.elts)
        elif isinstance(node, (ast.Starred, ast.Subscript, ast.Attribute)):
            stack.append(node.value)


def bound_names(node: Any) -> List[str]:
    """The names an import, a def or a class statement binds."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).partition(".")[0] for a in node.names]
    return [node.name]


def flatten_targets(targets) -> Iterator[ast.expr]:
    """The single targets of assignment targets: `a`, `self.x` and `b` of `(a, self.x), *b = ...`."""
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            yield from flatten_targets(target.elts)
        else:
            yield target.value if isinstance(target, ast.Starred) else target


def makes_dict(value: Optional[ast.AST]) -> bool:
    """A dict display, a dict comprehension or `dict(...)`."""
    return isinstance(value, (ast.Dict, ast.DictComp)) or (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict")


Position = Tuple[int, int]


class ReachingDefinitions:
    """Which binding of a function reaches a read of a name: the last one before it, by position. An assignment
    reaches from where its statement ends; a comprehension's variables reach its whole expression (the element,
    written first, included) but for the iterable of its first loop, and nothing outside it."""

    def __init__(self, binders: Iterable[ast.AST]):
        self._by_name: Dict[str, List[Tuple[Position, ast.AST, Optional[ast.AST]]]] = {}
        for node in binders:
            assigned = assignments_of(node)
            for target, statement, value in assigned:
                self._define(target, statement, value)
            if not assigned and isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)):
                for bound in bound_names(node):
                    self._by_name.setdefault(bound, []).append(((node.lineno, node.col_offset), node, None))
        for definitions in self._by_name.values():
            definitions.sort(key=lambda d: d[0])

    def reaching(self, name: ast.Name) -> Optional[Tuple[ast.AST, Optional[ast.AST]]]:
        """(statement, value) of the binding that reaches `name` (`assignments_of`), None if none does."""
        definitions = self._by_name.get(name.id)
        if not definitions:
            return None
        position = (name.lineno, name.col_offset)
        index = bisect.bisect_right([d[0] for d in definitions], position) - 1
        while index >= 0:
            _, statement, value = definitions[index]
            if not isinstance(value, ast.comprehension) or _inside_comprehension(value, position):
                return statement, value
            index -= 1  # a comprehension's variable does not leak out of it
        return None

    def _define(self, target: ast.AST, statement: Any, value) -> None:
        position = (statement.end_lineno, statement.end_col_offset)
        owner: Any = parent_of(value) if isinstance(value, ast.comprehension) else None
        if owner is not None:  # `[row for row, _ in pairs]`: the element, written first, reads the loop's variable
            position = (owner.lineno, owner.col_offset)
        for node in target_names(target):
            self._by_name.setdefault(node.id, []).append((position, statement, value))


def _inside_comprehension(loop: ast.comprehension, position: Position) -> bool:
    """Is `position` in the comprehension `loop` belongs to, outside the iterable of its first loop (which the
    enclosing scope evaluates)?"""
    owner: Any = parent_of(loop)
    if owner is None or not _spans(owner, position):
        return False
    return not _spans(owner.generators[0].iter, position)


def _spans(node: Any, position: Position) -> bool:
    return (node.lineno, node.col_offset) <= position < (node.end_lineno, node.end_col_offset)


def stores_an_element(statement: Any, name: str) -> bool:
    """Is `statement` an assignment to an element or slice of `name` only (`a[:, 0] = v`)?"""
    return isinstance(statement, ast.Assign) and all(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                                                     and t.value.id == name for t in statement.targets)
