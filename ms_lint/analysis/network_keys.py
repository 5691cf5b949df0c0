"""Network keys: which network object an expression denotes, in every module that can reach it.

The facts of one module are JSON-able (they are cached and, under `pylint -j`, sent between processes). A network
value is described by *keys*, strings that name the same object in every module that can reach it:

* `class:<qualname>`: an instance of that class (resolved through imports and re-exports);
* `local:<module>:<function>#<line>:<name>`, `global:<module>.<name>`: a variable;
* `param:<function qualname>:<index or name>`: a parameter, so that `keep_fp32(net)` reaches the casts made by
  `def keep_fp32(network)` in another module;
* `call:<function qualname>`: what a project function returns (`net = create_network()`);
* `attr:<class qualname>.<name>`: what a class stores on `self.<name>`.

Module names in keys are located (`ms_lint.analysis.locations`): `<import root>/<dotted name>`, so that two projects'
`train.py` (or `src/model.py`) in one repository never share a key, and every importer of a module names it alike.

Edges between keys (`links`) say what a key contains: a class its base classes and the Cells its `__init__`
builds, a function call what the function returns, a variable passed to a function that function's parameter.
A cast reaches a network when one of its keys is reachable from the network's keys (`reaches`). Order matters
in one place: a cast made, or a casting helper called, after an AMP call on the same variable of the same function
is applied after the re-cast and does not count for that call. Heuristic limits: the analysis is otherwise
flow-insensitive within a function (every assignment of a name counts), follows networks through
variables, calls, wrappers (`WithLossCell(net, loss)`), attributes, `cells_and_names()` loops and objects that
store a constructor argument (`Trainer(net)` then `Model(self.network, ...)` in a method), but not through
containers or registries (`create_model("resnet50")` resolves only to what the project function returns).
"""
from __future__ import annotations

import ast
from itertools import islice
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Set, Tuple

from ms_lint.analysis import framework
from ms_lint.analysis.imports import ImportMap
from ms_lint.analysis.locations import locate_in, module_location
from ms_lint.analysis.training_api import AUTO_MIXED_PRECISION

# Cell methods that return the Cell itself
_RETURNS_SELF = frozenset({"to_float", "set_train", "set_grad", "add_flags", "add_flags_recursive", "shard",
                           "recompute", "set_boost", "set_jit_config"})
_CELL_ITERATORS = frozenset({"cells_and_names", "cells", "name_cells", "_cells"})
_MAX_DEPTH = 12
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BINDING_NODES = (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension)  # see _bind
# what `_sort_out` does with a node, by its class (node classes are final: one look-up per node)
_STEP, _BINDING, _NESTED, _IMPORT = range(4)
_ROLES: Dict[type, int] = {**{kind: _STEP for kind in (ast.Call, ast.Return)},
                           **{kind: _BINDING for kind in _BINDING_NODES},
                           **{kind: _NESTED for kind in _SCOPES}, ast.Import: _IMPORT, ast.ImportFrom: _IMPORT}


def closure(keys: Iterable[str], links: Mapping[str, Iterable[str]], skip=frozenset()) -> Set[str]:
    """Every key reachable from `keys` through `links`, not using the (source, target) pairs in `skip`."""
    seen = set(keys)
    stack = list(seen)
    while stack:
        source = stack.pop()
        for target in links.get(source, ()):
            if target not in seen and (source, target) not in skip:
                seen.add(target)
                stack.append(target)
    return seen


def merge_links(modules: Iterable[dict], kinds: Tuple[str, ...] = ("links", "passes")) -> Dict[str, List[str]]:
    """The links of every module together (`passes` only, or with what keys contain)."""
    links: Dict[str, List[str]] = {}
    for facts in modules:
        for kind in kinds:
            for source, targets in facts.get(kind, {}).items():
                links.setdefault(source, []).extend(targets)
    return links


def reaches(network_keys: Iterable[str], cast_keys: Iterable[str], forward: Mapping[str, Iterable[str]],
            passes: Mapping[str, Iterable[str]], skip=frozenset()) -> bool:
    """Does a cast made on `cast_keys` apply to the network named by `network_keys`? Either the network contains
    (or is passed as) what was cast, or the network is a parameter that the cast object was passed to. The two
    directions are never chained: a helper called with many networks must not make them one. `skip`: the
    argument passings that come after the call being judged (a cast made later is not reset by it)."""
    cast_keys = set(cast_keys)
    if cast_keys & closure(network_keys, forward, skip):
        return True
    return bool(set(network_keys) & closure(cast_keys, passes, skip))


class Scope:
    """A module body or a function: its bindings, parameters and nodes, as the key resolver reads them."""

    def __init__(self, graph, node, name: str, owner: Optional[str], self_name: Optional[str], in_init: bool):
        self.graph = graph
        self.node = node
        self.name = name  # "<module>" or the function's qualified name with its line
        self.owner = owner  # the qualname of the class a method belongs to
        self.self_name = self_name
        self.in_init = in_init  # a method of a Cell reachable from its __init__
        self.bindings: Dict[str, List[Tuple[str, ast.expr]]] = {}
        self._params: Optional[Dict[str, Optional[int]]] = None
        self._nodes: Optional[List[ast.AST]] = None
        self._parts: Optional[Parts] = None
        self.top_level = False
        self.imports: Optional[ImportMap] = None

    @property
    def params(self) -> Dict[str, Optional[int]]:
        """Parameter name -> its position (None: keyword-only), without a method's `self`; made on first use."""
        if self._params is None:
            self._params = {} if isinstance(self.node, ast.Module) else \
                _parameters(self.node, self.self_name is not None)
        return self._params

    def param_keys(self, name: str) -> List[str]:
        """The `param:` keys of a parameter: by position and by name."""
        if name not in self.params:
            return []
        qualname = self.name.rpartition("#")[0]
        index = self.params[name]
        return [f"param:{qualname}:{name}"] if index is None else [f"param:{qualname}:{index}",
                                                                   f"param:{qualname}:{name}"]

    @property
    def nodes(self) -> List[ast.AST]:
        if self._nodes is None:
            self._nodes = _scope_nodes(self.graph, self.node)
        return self._nodes

    @property
    def parts(self) -> "Parts":
        """What the analysis reads of `nodes`, sorted out in one pass (without making that list)."""
        if self._parts is None:
            self._parts = _sort_out(self.graph, _scope_ranges(self.graph, self.node))
        return self._parts


class Parts:
    """A scope's calls and returns (`steps`) and binding nodes, each in preorder, the definitions directly in it,
    and whether it imports names itself."""

    __slots__ = ("steps", "bindings", "definitions", "imports")

    def __init__(self):
        self.steps: List[Any] = []  # ast.Call and ast.Return nodes, dispatched on their class
        self.bindings: List[ast.AST] = []
        self.definitions: List[ast.AST] = []
        self.imports = False


class NetworkKeys:
    """The scopes of one module and the keys of its expressions (`keys`): what a name, an attribute of `self`, a
    call or a wrapper denotes, through the module's bindings, its imports and the project's re-exports."""

    def __init__(self, ctx, full: bool):
        self.ctx = ctx
        self.graph = ctx.graph
        self.dotted = ctx.source.module_name or ""
        self.module = module_location(ctx.path) if ctx.path else self.dotted or "<module>"  # see `locate`
        self.scopes: Dict[ast.AST, Scope] = {}
        # what `self.<name>` is assigned in each class: (class qualname, name) -> [(scope, value)]
        self.attributes: Dict[Tuple[str, str], List[Tuple[Scope, ast.expr]]] = {}
        self._memo: Dict[Tuple[int, int], Tuple[frozenset, frozenset, Optional[str]]] = {}
        self._canonical_names: Dict[str, str] = {}
        self._build_scopes(full)

    @property
    def module_scope(self) -> "Scope":
        return self.scopes[self.ctx.tree]

    # ----- scopes and bindings --------------------------------------------------------------------------------
    # ----- scopes and bindings --------------------------------------------------------------------------------
    def _build_scopes(self, full: bool) -> None:
        tree = self.ctx.tree
        module_scope = self.scopes[tree] = Scope(self.graph, tree, "<module>", None, None, False)
        pending = [(node, f"{self.module}") for node in module_scope.parts.definitions]
        while pending:  # functions, methods and (in full modules) nested functions
            node, prefix = pending.pop()
            if isinstance(node, ast.ClassDef):
                pending.extend((s, f"{prefix}.{node.name}") for s in node.body if isinstance(s, _DEFINITIONS))
                continue
            scope = self._function_scope(node, prefix)
            scope.top_level = prefix == self.module
            if full:
                pending.extend((sub, f"{scope.name.rpartition('#')[0]}.<locals>") for sub in scope.parts.definitions)
        for function in self._init_reachable():
            self.scopes[function].in_init = True

    def _function_scope(self, node, prefix: str) -> Scope:
        owner = self.graph.owner_class(node)
        owner_name = self.canonical(owner.qualname) if owner is not None else None
        args = node.args.posonlyargs + node.args.args
        self_name = args[0].arg if owner is not None and args and not _is_static(node) else None
        qualname = f"{owner_name}.{node.name}" if owner_name else f"{prefix}.{node.name}"
        scope = self.scopes[node] = Scope(self.graph, node, f"{qualname}#{node.lineno}", owner_name, self_name,
                                             False)
        return scope

    def _init_reachable(self) -> Set[ast.AST]:
        """Methods of Cell classes that run when an instance is built: `__init__` and what it calls on self."""
        reachable: Set[ast.AST] = set()
        for cell in self.graph.cells.values():
            methods = {s.name: s for s in cell.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
            stack = [methods["__init__"]] if "__init__" in methods else []
            while stack:
                method = stack.pop()
                if method in reachable or method not in self.scopes:
                    continue
                reachable.add(method)
                self_name = self.scopes[method].self_name
                for sub in self.scopes[method].parts.steps:
                    if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                            isinstance(sub.func.value, ast.Name) and sub.func.value.id == self_name and \
                            sub.func.attr in methods:
                        stack.append(methods[sub.func.attr])
        return reachable

    def bind(self, scope: Scope, node: Any) -> None:
        kind = node.__class__  # one of `_BINDING_NODES`
        if kind is ast.Assign:
            for target in node.targets:
                self._bind_target(scope, target, node.value)
        elif kind is ast.AnnAssign or kind is ast.NamedExpr:
            if node.value is not None:
                self._bind_target(scope, node.target, node.value)
        else:  # a for loop or a comprehension
            owner = _cell_iteration_owner(node.iter)
            if owner is not None:
                for name in _names(node.target):
                    scope.bindings.setdefault(name, []).append(("cells", owner))

    def _bind_target(self, scope: Scope, target: Any, value: ast.expr) -> None:
        kind = target.__class__
        if kind is ast.Name:
            scope.bindings.setdefault(target.id, []).append(("value", value))
        elif kind is ast.Attribute:
            if target.value.__class__ is ast.Name and scope.owner and scope.self_name \
                    and target.value.id == scope.self_name:
                self.attributes.setdefault((scope.owner, target.attr), []).append((scope, value))
        elif (kind is ast.Tuple or kind is ast.List) and isinstance(value, (ast.Tuple, ast.List)) and \
                len(target.elts) == len(value.elts):
            for sub_target, sub_value in zip(target.elts, value.elts):
                self._bind_target(scope, sub_target, sub_value)

    # ----- keys ----------------------------------------------------------------------------------------------
    # ----- keys ----------------------------------------------------------------------------------------------
    def keys(self, expr: ast.AST, scope: Scope, depth: int = 0) -> Tuple[frozenset, frozenset, Optional[str]]:
        """(identity keys, class keys, the class when `expr` is rooted at `self` in one of its methods)."""
        memo_key = (id(expr), id(scope))
        if memo_key in self._memo:
            return self._memo[memo_key]
        if depth > _MAX_DEPTH:
            return frozenset(), frozenset(), None
        self._memo[memo_key] = (frozenset(), frozenset(), None)  # cycles through bindings end here
        result = self._keys(expr, scope, depth)
        self._memo[memo_key] = result
        return result

    def _keys(self, expr, scope: Scope, depth: int):
        identity: Set[str] = set()
        classes: Set[str] = set()
        rooted = None
        if isinstance(expr, ast.Name):
            return self._name_keys(expr.id, scope, depth)
        if isinstance(expr, (ast.Attribute, ast.Subscript)):
            base = expr.value
            if isinstance(expr, ast.Attribute) and isinstance(base, ast.Name) and base.id == scope.self_name:
                identity.add(f"attr:{scope.owner}.{expr.attr}")
                for value_scope, value in self.attributes.get((scope.owner or "", expr.attr), ()):
                    sub_identity, sub_classes, _ = self.keys(value, value_scope, depth + 1)
                    identity |= sub_identity
                    classes |= sub_classes
                return frozenset(identity), frozenset(classes), scope.owner
            qualname = self.qualname(expr, scope) if isinstance(expr, ast.Attribute) else None
            if qualname is not None:
                return frozenset({f"global:{self.locate(qualname)}"}), frozenset(), None
            return self.keys(base, scope, depth + 1)  # a sub-cell reached through the network
        if isinstance(expr, ast.IfExp):
            for branch in (expr.body, expr.orelse):
                sub = self.keys(branch, scope, depth + 1)
                identity |= sub[0]
                classes |= sub[1]
                rooted = rooted or sub[2]
            return frozenset(identity), frozenset(classes), rooted
        if isinstance(expr, ast.Call):
            return self._call_keys(expr, scope, depth)
        return frozenset(), frozenset(), None

    def _name_keys(self, name: str, scope: Scope, depth: int):
        if scope.self_name and name == scope.self_name:
            return frozenset(), frozenset({f"class:{scope.owner}"}), scope.owner
        identity: Set[str] = set()
        classes: Set[str] = set()
        rooted = None
        module_scope = self.scopes[self.ctx.tree]
        if name in scope.bindings or name in scope.params:
            if scope is module_scope:
                identity.add(f"global:{self.module}.{name}")
            else:
                identity.add(f"local:{self.module}:{scope.name}:{name}")
            identity.update(scope.param_keys(name))
            for _kind, value in scope.bindings.get(name, ()):
                sub = self.keys(value, scope, depth + 1)
                identity |= sub[0]
                classes |= sub[1]
                rooted = rooted or sub[2]
            return frozenset(identity), frozenset(classes), rooted
        if scope is not module_scope and name in module_scope.bindings:
            return self._name_keys(name, module_scope, depth + 1)
        qualname = self.graph.imports.resolve(name)
        if qualname and not qualname.startswith("builtins."):
            identity.add(f"global:{self.locate(qualname)}")
        return frozenset(identity), frozenset(), None

    def _call_keys(self, call: ast.Call, scope: Scope, depth: int):
        identity: Set[str] = set()
        classes: Set[str] = set()
        rooted = None
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _RETURNS_SELF:
            return self.keys(func.value, scope, depth + 1)
        qualname = self.qualname(func, scope)
        if qualname is None:
            return frozenset(), frozenset(), None
        last = qualname.rpartition(".")[2]
        if last[:1].isupper():
            classes.add(f"class:{self.canonical(qualname)}")
            arguments = [*call.args, *(k.value for k in call.keywords)]  # a wrapper Cell holds what it is given
        else:
            identity.add(f"call:{self.canonical(qualname)}")
            arguments = call.args[:1]  # `net = prepare(net)`: most helpers hand back their first argument
            if qualname in AUTO_MIXED_PRECISION:
                identity.add(self.amp_key(call))  # this call's result, which comes back cast
        for arg in arguments:
            if isinstance(arg, ast.Starred):
                continue
            sub = self.keys(arg, scope, depth + 1)
            identity |= sub[0]
            classes |= sub[1]
            rooted = rooted or sub[2]
        return frozenset(identity), frozenset(classes), rooted

    def qualname(self, expr: ast.AST, scope: Scope) -> Optional[str]:
        root = expr
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return None
        if root.id == scope.self_name or root.id in scope.bindings or root.id in scope.params:
            return None
        if scope.node is not self.ctx.tree and root.id in self.scopes[self.ctx.tree].bindings:
            return None
        return self.imports_of(scope).qualname(expr)

    def imports_of(self, scope: Scope) -> ImportMap:
        """The module's imports, with the function's own when it imports names itself."""
        if scope.imports is None:
            scope.imports = self.graph.imports
            # the statements of a function's body outside nested scopes, where its own imports are
            if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and scope.parts.imports:
                scope.imports = ImportMap.of_block(scope.node.body, self.graph.imports.module,
                                                   self.graph.imports.is_package, self.graph.imports,
                                                   define_locals=False)
        return scope.imports

    def canonical(self, qualname: str) -> str:
        """A class or function by the module that defines it, through re-exports (`from .model import Net`)."""
        found = self._canonical_names.get(qualname)
        if found is None:
            found = self._canonical_names[qualname] = self.locate(self._follow_exports(qualname))
        return found

    def locate(self, qualname: str) -> str:
        """A name qualified by the file of its module (see the module docstring)."""
        return locate_in(self.graph.index, qualname, self.dotted, self.ctx.path)

    def _follow_exports(self, qualname: str) -> str:
        if framework.is_framework(qualname):
            return qualname
        for _ in range(8):
            module_name, _, attr = qualname.rpartition(".")
            path = self.graph.index.find(module_name) if module_name else None
            if path is None or not path.endswith("__init__.py"):
                return qualname  # imported from the module that defines it (or not from the project)
            summary = self.graph.index.module(module_name)
            if summary is None or attr in summary.classes or attr in summary.functions:
                return qualname
            target = summary.imports.names.get(attr)
            if not target or target == qualname:
                return qualname
            qualname = target
        return qualname

    def amp_key(self, call: ast.Call) -> str:
        return f"amp:{self.module}:{call.lineno}:{call.col_offset}"


def _scope_nodes(graph, root: ast.AST) -> List[ast.AST]:
    """The nodes of a module body, or of a function's default values then body, in preorder, not entering nested
    functions, lambdas or classes."""
    return [node for start, end in _scope_ranges(graph, root) for node in _outside_nested(graph, start, end)]


def _scope_ranges(graph, root: Any) -> List[Tuple[int, int]]:
    """Where the nodes of a module body, or of a function's default values then body, lie in the module's preorder
    (`GraphScope.order`, nested functions, lambdas and classes included): there a def's default values
    (`kw_defaults` before `defaults`) come before its body, and its decorators and return annotation after."""
    order = graph.walk.order
    start, end = graph.walk.span(root)
    if isinstance(root, ast.Module):
        return [(start + 1, end)]
    arguments = root.args
    body_start, body_end = graph.walk.body_span(root)
    defaults_start = order.index(arguments.defaults[0], start, body_start) if arguments.defaults else body_start
    ranges = [(defaults_start, body_start)]
    keyword_defaults = [d for d in arguments.kw_defaults if d is not None]
    if keyword_defaults:
        keyword_end = order.index(arguments.kwarg, start, body_start) if arguments.kwarg else defaults_start
        ranges.append((order.index(keyword_defaults[0], start, keyword_end), keyword_end))
    ranges.append((body_start, body_end))
    return ranges


def _sort_out(graph, ranges: List[Tuple[int, int]]) -> Parts:
    """The `Parts` of the nodes in `ranges` of the module's preorder, a nested scope skipped as a whole."""
    parts = Parts()
    steps, bindings, definitions = parts.steps, parts.bindings, parts.definitions
    role_of = _ROLES.get
    for start, end in ranges:
        nodes = iter(graph.walk.order[start:end])
        for node in nodes:
            role = role_of(type(node))
            if role is None:
                continue
            if role == _STEP:
                steps.append(node)
            elif role == _BINDING:
                bindings.append(node)
            elif role == _NESTED:
                if not isinstance(node, ast.Lambda):
                    definitions.append(node)
                first, stop = graph.walk.span(node)
                skipped = stop - first - 1  # the nested scope's nodes
                next(islice(nodes, skipped, skipped), None)
            else:
                parts.imports = True
    return parts


def _parameters(function, method: bool) -> Dict[str, Optional[int]]:
    """Parameter name -> its position (None: keyword-only), without a method's first parameter (`self`)."""
    positional = function.args.posonlyargs + function.args.args
    found: Dict[str, Optional[int]] = {arg.arg: index for index, arg in
                                       enumerate(positional[1:] if method else positional)}
    found.update((arg.arg, None) for arg in function.args.kwonlyargs)
    return found


def _outside_nested(graph, start: int, end: int) -> List[ast.AST]:
    """`graph.walk.order[start:end]` without what nested functions, lambdas and classes hold (but with them)."""
    order, found = graph.walk.order, []
    index = start
    while index < end:
        node = order[index]
        found.append(node)
        index = graph.walk.span(node)[1] if isinstance(node, _SCOPES) else index + 1
    return found


def _names(target: ast.expr) -> Iterator[str]:
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            yield node.id


def _cell_iteration_owner(expr: ast.expr) -> Optional[ast.expr]:
    """`net` for `net.cells_and_names()`, `net.cells()`, `net.name_cells().items()`/`.values()`."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if expr.func.attr in ("items", "values") and isinstance(expr.func.value, ast.Call):
            expr = expr.func.value
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _CELL_ITERATORS:
            return expr.func.value
    return None


def _is_static(function) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in function.decorator_list)
