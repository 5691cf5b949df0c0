"""GraphScope: which classes of a module are nn.Cells and which functions MindSpore compiles, and why.

Built once per module and queried by every rule (RULES.md, "Scope words"):
* Cell classes: through any import alias, local base classes and base classes from other modules of the project
  (`ProjectIndex`), MindTorch `nn.Module`. A class whose bases cannot be resolved but that defines `construct` is
  taken for a Cell.
* Entry points: `construct` of every Cell (run with that Cell as `self`, so inherited and overridden methods
  resolve as at run time), `forward` of MindTorch modules, `bprop`, functions decorated with or wrapped by `jit`.
* Graph code: every entry point and what it reaches through `self.method(...)`, `super().method(...)`,
  `Base.method(self, ...)`, module-level `helper(...)`, properties read on `self`, and nested functions.
"""
from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections import deque
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple, Union

from ms_lint.analysis import framework
from ms_lint.analysis.imports import ImportMap
from ms_lint.analysis.project import ClassSummary, ProjectIndex, summarize, summarize_class
from ms_lint.source import LISTS_WITH_NONE, child_fields
from ms_lint.source import child_nodes, walk  # noqa: F401 - re-exported: the tree helpers of the analysis layer

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
PARENT = "_msl_parent"  # the attribute `_preorder` sets (by name, for speed)
_UNKNOWN = object()


@dataclass(frozen=True)
class Entry:
    """Why a function is compiled: `name` is what messages show ("Net.construct")."""

    name: str
    kind: str  # construct | forward | bprop | jit
    strict: bool = False  # @jit(fullgraph=True)
    lax: bool = False  # plain @jit: LAX even when the context is STRICT (measured, ORACLE.md #17)


@dataclass
class CellClass:
    node: ast.ClassDef
    summary: ClassSummary
    kind: str  # cell | module (MindTorch)
    assumed: bool  # bases unresolvable, taken for a Cell because it defines construct


_BINDINGS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr,
             ast.withitem, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BINDING_KINDS = frozenset(_BINDINGS)
_DEFINITION_KINDS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_FUNCTION_KINDS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})


class FunctionNodes:
    """What the queries about one function need, read off its part of the module's walk (nested functions
    included): calls, attribute reads, stores, bindings and nested functions at once; the names read, asked
    about far fewer functions, on first use."""

    def __init__(self, nodes: List[ast.AST], start: int, end: int):
        self._nodes, self._start, self._end = nodes, start, end  # the function's nodes: nodes[start:end]
        self.calls: List[ast.Call] = []
        self.nested: List[FunctionNode] = []
        self.attribute_loads: List[ast.Attribute] = []  # `<name>.<attr>` read
        self.stores: Set[str] = set()
        self.bindings: List[ast.AST] = []  # assignments, loops, imports, defs: in source order
        self._loads: Optional[Dict[str, List[ast.Name]]] = None

    @property
    def loads(self) -> Dict[str, List[ast.Name]]:
        """Name -> the nodes reading it."""
        if self._loads is None:
            self._loads = {}
            for node in itertools.islice(self._nodes, self._start + 1, self._end):
                if node.__class__ is ast.Name and node.ctx.__class__ is ast.Load:
                    self._loads.setdefault(node.id, []).append(node)
        return self._loads


def parent_of(node: ast.AST) -> Optional[ast.AST]:
    return getattr(node, PARENT, None)


def enclosing_function(node: ast.AST) -> Optional[FunctionNode]:
    node = parent_of(node)
    while node is not None and not isinstance(node, _FUNCTIONS):
        node = parent_of(node)
    return node


class GraphScope:
    def __init__(self, tree: ast.Module, module: str, path: str, index: Optional[ProjectIndex] = None,
                 syntax_level: Optional[str] = None, source_text: str = "", project_level: Optional[str] = None,
                 indexed: Iterable[type] = ()):
        self.tree = tree
        self.index = index or ProjectIndex()
        # the module's one walk: every node in preorder, and where each def, lambda and class starts and ends in
        # it; everything else that needs a subtree reads a slice of it instead of walking again
        self.order, self._spans, self._positions = _preorder(tree, (*_INDEXED_KINDS, *indexed))
        self._dict_spelled = "__dict__" in source_text
        self._text = source_text
        self._import_rows: Optional[List[int]] = None
        self.summary = summarize(tree, module, path, self._summarized)
        self.index.register(self.summary)
        self.imports = self.summary.imports
        # the option (passed as `syntax_level`) wins; else what this module sets; else what the project sets
        self.level = syntax_level or _level_set_in(tree, path, source_text) or project_level or "lax"
        self._classes: Dict[str, Tuple[ast.ClassDef, ClassSummary]] = {}
        self._owner: Dict[ast.AST, ClassSummary] = {}
        self.cells: Dict[ast.ClassDef, CellClass] = {}
        self.compiled: Dict[FunctionNode, List[Entry]] = {}
        self._local_names: Dict[FunctionNode, FrozenSet[str]] = {}
        self._function_nodes: Dict[FunctionNode, FunctionNodes] = {}
        self._function_imports: Dict[FunctionNode, ImportMap] = {}
        self._tensor_values: Dict[FunctionNode, object] = {}
        self._qualnames: Dict[ast.AST, Optional[str]] = {}
        self._local_uses: Dict[FunctionNode, Dict[str, List[ast.AST]]] = {}
        self._def_imports: Optional[FrozenSet[str]] = None
        self._derived: Optional[Dict[str, List[CellClass]]] = None
        self._top_level: Optional[Dict[str, FunctionNode]] = None
        self._scopes: Optional[List[Tuple[int, int, ast.AST]]] = None  # see scopes_within
        self._scope_starts: List[int] = []
        # function -> the calls in graph code that reach it (for inferring what its parameters hold)
        self.call_sites: Dict[FunctionNode, List[ast.Call]] = {}
        self._collect_classes()
        self._collect_entries(source_text)

    def release(self) -> None:
        """Break the reference cycles that tie the tree together once the module is linted (parent links, caches
        on the tree that point back at it), so that reference counting frees it at once: left to the cyclic
        garbage collector, every linted tree would be scanned again and again by its full collections."""
        # every node but the root has a parent link (deleted in a C loop: millions of nodes)
        deque(map(delattr, itertools.islice(self.order, 1, None), itertools.repeat(PARENT)), 0)
        tree = self.tree
        for key in [key for key in vars(tree) if key.startswith("_msl")]:
            delattr(tree, key)
        self.order, self._spans, self._positions, self._derived = [], {}, {}, None
        self._top_level, self._scopes, self._scope_starts = None, None, []
        for cache in (self._function_nodes, self._local_names, self._function_imports, self._tensor_values,
                      self._qualnames, self._local_uses, self.call_sites):
            cache.clear()

    # ----- queries -------------------------------------------------------------------------------------------
    def span(self, node: ast.AST) -> Tuple[int, int]:
        """Where the module, a def, a lambda or a class of this module starts and ends in `order`."""
        return self._spans[node]

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
        """The nodes of class `kind` (one of `_INDEXED_KINDS`) under the module, a def, a lambda or a class of
        this module, in preorder: found by bisection in the positions the module's walk recorded."""
        start, end = self._spans[node]
        positions = self._positions[kind]
        order = self.order
        return [order[i] for i in positions[bisect.bisect_left(positions, start):bisect.bisect_left(positions, end)]]

    def positions_of(self, kinds: Iterable[type]) -> List[int]:
        """Where the nodes of the given classes are in `order`, sorted. Recorded by the walk for the classes
        asked for when the scope was built (`indexed`) and for defs, lambdas and classes; found by a scan for
        others."""
        found: List[int] = []
        for kind in kinds:
            if kind in self._positions:
                found += self._positions[kind]
            elif kind in _SCOPE_KINDS:
                found += [start for node, (start, _) in self._spans.items() if node.__class__ is kind]
            else:
                found += [position for position, node in enumerate(self.order) if node.__class__ is kind]
        found.sort()
        return found

    def with_enclosing_def(self, kind: type) -> Iterator[Tuple[ast.AST, Optional[ast.AST]]]:
        """Every node of class `kind` (one of `_INDEXED_KINDS`) in the module, in preorder, with the innermost
        def around it (a lambda is not a def; a call in a def's decorators or defaults is the def's), found by
        sweeping the recorded positions and spans instead of climbing parent links."""
        order = self.order
        defs = sorted((start, end, node) for node, (start, end) in self._spans.items()
                      if node.__class__ is ast.FunctionDef or node.__class__ is ast.AsyncFunctionDef)
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
        """The nodes of the given `_INDEXED_KINDS` under `node` in `ast.walk` (breadth-first) order, for consumers
        whose first match decides: by depth below `node`, then in preorder (a level of a breadth-first walk is in
        preorder)."""
        start, end = self._spans[node]
        found = []
        for kind in kinds:
            positions = self._positions[kind]
            found += positions[bisect.bisect_left(positions, start):bisect.bisect_left(positions, end)]
        order = self.order
        return [order[position] for _, position in sorted((_depth_below(order[p], node), p) for p in found)]

    def _summarized(self, method: ast.AST) -> List[ast.AST]:
        """What a class summary looks at in a method: its assignments and calls, and `self.__dict__` (rarely
        spelled: then every node)."""
        if self._dict_spelled:
            return self.subtree(method)
        return [found for kind in _INDEXED_KINDS for found in self.of_kind(method, kind)]

    def subtree(self, node: ast.AST) -> List[ast.AST]:
        """`node` and every node under it, in preorder (children in field order, without the operator and
        expression-context singletons), for the module, a def, a lambda or a class of this module."""
        span = self._spans.get(node)
        if span is None:  # a node of another module's tree
            return _preorder(node)[0]
        return self.order[span[0]:span[1]]

    def qualname(self, expr: ast.AST) -> Optional[str]:
        """What `expr` names through the imports in scope (memoised: most rules ask about every call)."""
        found = self._qualnames.get(expr, _UNKNOWN)
        if found is _UNKNOWN:
            function = enclosing_function(expr)
            if function is None:
                found = self.imports.qualname(expr)
            else:
                imports = self._imports_of(function)
                root = expr
                while root.__class__ is ast.Attribute:
                    root = root.value
                # a name no import binds names nothing, local or not: the function's locals (a walk of it) are
                # needed only for the others (`self.f()`, `x.view()` are most calls)
                if root.__class__ is not ast.Name or imports.resolve(root.id) is None:
                    found = None
                else:
                    found = imports.qualname(expr, self.local_names(function))
            self._qualnames[expr] = found
        return found

    def is_compiled(self, node: ast.AST) -> bool:
        function = node if isinstance(node, _FUNCTIONS) else enclosing_function(node)
        return function in self.compiled

    def entry_of(self, node: ast.AST) -> Optional[Entry]:
        function = node if isinstance(node, _FUNCTIONS) else enclosing_function(node)
        entries = self.compiled.get(function)
        return entries[0] if entries else None

    def level_of(self, node: ast.AST) -> str:
        """"strict" or "lax": the syntax level the code around `node` compiles at."""
        function = node if isinstance(node, _FUNCTIONS) else enclosing_function(node)
        entries = self.compiled.get(function, ())
        if any(entry.strict for entry in entries):
            return "strict"
        if entries and all(entry.lax for entry in entries):
            return "lax"
        return self.level

    def cell_of(self, node: ast.AST) -> Optional[CellClass]:
        """The Cell class whose body contains `node` (innermost class only)."""
        while node is not None and not isinstance(node, ast.ClassDef):
            node = parent_of(node)
        return self.cells.get(node) if node is not None else None

    def is_cell_class(self, qualname: Optional[str]) -> bool:
        """Does calling `qualname` create a Cell (a local Cell class, a project one, or MindSpore's)?"""
        local = self._classes.get(qualname) if qualname else None
        if local is not None:
            return local[0] in self.cells
        return self.index.class_kind(qualname) in ("cell", "module") if qualname else False

    def class_summary(self, node: ast.ClassDef) -> Optional[ClassSummary]:
        for class_node, summary in self._classes.values():
            if class_node is node:
                return summary
        return None

    def owner_class(self, function: ast.AST) -> Optional[ClassSummary]:
        """The class a method is defined in."""
        return self._owner.get(function)

    def mro(self, summary: ClassSummary) -> Iterator[ClassSummary]:
        """The class and its resolvable bases, local or from the project, depth first (left to right)."""
        seen: Set[str] = set()
        stack = [summary]
        while stack:
            current = stack.pop()
            if current.qualname in seen:
                continue
            seen.add(current.qualname)
            yield current
            for base in reversed(current.bases):
                base_summary = self._summary_of(base)
                if base_summary is not None:
                    stack.append(base_summary)

    def cells_deriving_from(self, qualname: str) -> List[CellClass]:
        """The Cells of the module whose MRO holds the class `qualname` (itself included), in module order."""
        if self._derived is None:
            self._derived = {}
            for cell in self.cells.values():
                for current in self.mro(cell.summary):
                    self._derived.setdefault(current.qualname, []).append(cell)
        return self._derived.get(qualname, [])

    def external_bases(self, summary: ClassSummary) -> Set[Optional[str]]:
        """The bases met along the MRO of `summary` that are neither classes of this module nor of the project:
        MindSpore's (`mindspore.nn.Cell`), the standard library's (`builtins.object`), and unresolvable ones
        (None for an expression base, or a name no module defines). Rules that need every attribute a class can
        have stay silent unless all of these are known to them."""
        external: Set[Optional[str]] = set()
        for current in self.mro(summary):
            for base in current.bases:
                if self._summary_of(base) is None:
                    external.add(base)
        return external

    def nodes_of(self, function: FunctionNode) -> FunctionNodes:
        """The function's calls, attribute reads, stores, bindings, nested functions and loads (cached)."""
        found = self._function_nodes.get(function)
        if found is None:
            nodes, span = self.order, self._spans.get(function)
            if span is None:  # a def of another module's tree
                nodes = _preorder(function)[0]
                span = (0, len(nodes))
            start, end = span
            found = self._function_nodes[function] = FunctionNodes(nodes, start, end)
            stores, bindings, nested, calls = found.stores, found.bindings, found.nested, found.calls
            for node in itertools.islice(nodes, start + 1, end):
                kind = node.__class__  # node classes are final: one class test per node (this runs on most nodes)
                if kind is ast.Name:
                    if node.ctx.__class__ is not ast.Load:
                        stores.add(node.id)
                elif kind is ast.Call:
                    calls.append(node)
                elif kind is ast.Attribute:
                    if node.ctx.__class__ is ast.Load:
                        found.attribute_loads.append(node)
                elif kind in _BINDING_KINDS:
                    bindings.append(node)
                    if kind in _DEFINITION_KINDS:
                        stores.add(node.name)
                    if kind in _FUNCTION_KINDS:
                        nested.append(node)
                elif kind is ast.Lambda:
                    nested.append(node)
        return found

    def uses_of_local(self, function: FunctionNode, name: str) -> List[ast.AST]:
        """The nodes of `function` (nested functions included, in `ast.walk` order) that can build up a local
        container `name`: assignments with `name` among their targets, `name[k] = ...`, `name += ...` and method
        calls `name.m(...)`. Indexed once per function: rules follow many names through the same `__init__`."""
        index = self._local_uses.get(function)
        if index is None:
            index = self._local_uses[function] = {}
            for node in self.in_walk_order(function, (ast.Assign, ast.AugAssign, ast.Call)):
                kind = node.__class__
                if kind is ast.Assign:
                    names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                    if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
                            and isinstance(node.targets[0].value, ast.Name):
                        names.add(node.targets[0].value.id)
                elif kind is ast.AugAssign and isinstance(node.target, ast.Name):
                    names = (node.target.id,)
                elif kind is ast.Call and isinstance(node.func, ast.Attribute) and isinstance(node.func.value,
                                                                                                ast.Name):
                    names = (node.func.value.id,)
                else:
                    continue
                for found in names:
                    index.setdefault(found, []).append(node)
        return index.get(name, [])

    def local_names(self, function: FunctionNode) -> FrozenSet[str]:
        """Names bound inside a function (parameters, assignments, loop targets), which shadow module names."""
        names = self._local_names.get(function)
        if names is None:
            arguments = function.args
            bound = {arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                         arguments.vararg, arguments.kwarg) if arg is not None}
            bound |= self.nodes_of(function).stores
            imported = self._imports_of(function).names
            names = self._local_names[function] = frozenset(name for name in bound if name not in imported)
        return names

    def tensors(self, node: ast.AST):
        """The tensor-value analysis (see `ms_lint.analysis.tensors`) of the function that contains `node`."""
        from ms_lint.analysis.tensors import TensorValues

        function = node if isinstance(node, _FUNCTIONS) else enclosing_function(node)
        values = self._tensor_values.get(function)
        if values is None:
            self._tensor_values[function] = None  # under construction: callers asked back get the fallback
            values = self._tensor_values[function] = TensorValues(self, function)
        return values

    def derives_from_tensor(self, expr: ast.AST) -> bool:
        return enclosing_function(expr) is not None and self.tensors(expr).derives(expr)

    def names_called(self, func: ast.expr) -> Tuple[str, ...]:
        """The names a call of `func` can be asked about by its last name (`Rule.call_names`): the attribute of
        `a.b.f`; for `f`, the name and, when an import binds it to another one, the last component of what it
        binds (`qualname(f)` where a def's own import may bind it, else the module's imports: a superset of what
        `qualname` gives, without finding the def around every call); none for anything else (`f()()`)."""
        kind = func.__class__
        if kind is ast.Attribute:
            return (func.attr,)
        if kind is not ast.Name:
            return ()
        name = func.id
        if name in self._names_imported_in_defs():
            qualname = self.qualname(func)
            last = qualname.rpartition(".")[2] if qualname else name
        else:
            last = self.last_name(func) or name
        return (name,) if last == name else (name, last)

    def _names_imported_in_defs(self) -> FrozenSet[str]:
        """The names an import in the body of some def of the module binds."""
        if self._def_imports is None:
            self._def_imports = frozenset(
                name for scope in self._spans if scope.__class__ in (ast.FunctionDef, ast.AsyncFunctionDef)
                and self.spells_import(scope) and (imports := self._imports_of(scope)) is not self.imports
                for name in imports.names)
        return self._def_imports

    def last_name(self, expr: ast.AST) -> Optional[str]:
        """The last component `qualname(expr)` can have, found without resolving scopes: the attribute of
        `a.b.c`, the target's last component for a name a module-level import or definition binds; None when only
        `qualname` can tell (a name bound by a function-level import, a local, a builtin). A cheap pre-filter for
        rules that look for a few names among every call of a module."""
        if isinstance(expr, ast.Attribute):
            return expr.attr
        if isinstance(expr, ast.Name):
            target = self.imports.names.get(expr.id)
            return target.rpartition(".")[2] if target else None
        return None

    def version_guarded(self, node: ast.AST) -> bool:
        """Is `node` in a branch of an `if` (or conditional expression) that tests the framework version or a
        feature (`if is_version_ge(ms.__version__, "1.11.0"):`, `if hasattr(ms, "jit"):`)? Such branches keep
        compatibility with other MindSpore versions: rules about removed or deprecated APIs stay silent there.
        Needs the parent links of the engine's walk."""
        child, parent = node, parent_of(node)
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test \
                    and self._tests_version(parent.test):
                return True
            child, parent = parent, parent_of(parent)
        return False

    def _tests_version(self, test: ast.expr) -> bool:
        for node in ast.walk(test):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
            if "version" in name.lower():
                return True
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "hasattr" and node.args and (
                    self.qualname(node.args[0]) or "").partition(".")[0] in ("mindspore", "mindtorch"):
                return True
        return False

    # ----- construction --------------------------------------------------------------------------------------
    def _imports_of(self, function: FunctionNode) -> ImportMap:
        imports = self._function_imports.get(function)
        if imports is None:
            body = function.body if isinstance(function.body, list) else []
            # the bindings of the cached walk hold every import of the body, nested functions' included
            if body and self.spells_import(function) and any(
                    isinstance(s, (ast.Import, ast.ImportFrom)) for s in self.nodes_of(function).bindings):
                imports = ImportMap.of_block(body, self.imports.module, self.imports.is_package, self.imports,
                                             define_locals=False)
            else:
                imports = self.imports
            self._function_imports[function] = imports
        return imports

    def spells_import(self, node: ast.AST) -> bool:
        """Does one of the lines of `node` spell `import` (else it holds no import statement)? Known without
        walking it. Without the module's text (an analysis built from a tree alone): True."""
        if not self._text:
            return True
        if self._import_rows is None:
            self._import_rows = rows_spelling(self._text, "import")
        rows = self._import_rows
        index = bisect.bisect_left(rows, node.lineno)
        return index < len(rows) and rows[index] <= node.end_lineno

    def _summary_of(self, qualname: Optional[str]) -> Optional[ClassSummary]:
        if not qualname:
            return None
        local = self._classes.get(qualname)
        if local is not None:
            return local[1]
        return self.index.lookup_class(qualname)

    def _collect_classes(self) -> None:
        """Every class of the module, nested ones included, and which of them are Cells."""
        module = self.imports.module
        nested_names: Dict[str, str] = {}
        class_rows = sorted(node.lineno for node in self._spans if node.__class__ is ast.ClassDef)
        for node in _all_statements(self.tree.body, class_rows):
            if not isinstance(node, ast.ClassDef):
                continue
            summary = self.summary.classes.get(node.name)
            if summary is None or summary.node is not node:  # nested in a function or class
                summary = summarize_class(node, self.imports, self._summarized)
                summary.qualname = f"{module}.<locals>.{node.name}#{node.lineno}"
                summary.bases = tuple(nested_names.get(_base_name(b), q) for b, q in zip(node.bases, summary.bases))
                nested_names[node.name] = summary.qualname
            self._classes[summary.qualname] = (node, summary)
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._owner[stmt] = summary
        for node, summary in self._classes.values():
            kind = self._kind_of(summary)
            assumed = False
            if kind == "unknown":
                kind, assumed = ("cell", True) if "construct" in summary.methods else (None, False)
            if kind in ("cell", "module"):
                self.cells[node] = CellClass(node, summary, kind, assumed)

    def _kind_of(self, summary: ClassSummary, seen: FrozenSet[str] = frozenset()) -> Optional[str]:
        kinds = []
        for base in summary.bases:
            local = self._classes.get(base) if base else None
            if local is not None and base not in seen:
                kinds.append(self._kind_of(local[1], seen | {base}))
            else:
                kinds.append(self.index.class_kind(base))
        for wanted in ("module", "cell", "unknown"):
            if wanted in kinds:
                return wanted
        return None

    def _collect_entries(self, source_text: str) -> None:
        queue: deque = deque()
        for cell in self.cells.values():
            names = ("forward", "construct") if cell.kind == "module" else ("construct",)
            for name in names:
                found = self._find_method(cell.summary, name)
                if found is not None:
                    queue.append((found, cell.summary, Entry(f"{cell.node.name}.{name}", name)))
            bprop = self._find_method(cell.summary, "bprop")
            if bprop is not None:
                queue.append((bprop, cell.summary, Entry(f"{cell.node.name}.bprop", "bprop")))
        for function, entry in self._jit_entries(source_text):
            queue.append((function, self._owner.get(function), entry))
        seen: Set[Tuple[FunctionNode, Optional[str]]] = set()
        while queue:
            function, cls, entry = queue.popleft()
            key = (function, cls.qualname if cls else None)
            if key in seen:
                continue
            seen.add(key)
            self._mark(function, entry)
            for target, target_cls in self._reached_from(function, cls):
                queue.append((target, target_cls, entry))

    def _mark(self, function: FunctionNode, entry: Entry) -> None:
        entries = self.compiled.setdefault(function, [])
        if entry not in entries:
            entries.append(entry)

    def _find_method(self, cls: ClassSummary, name: str, after: Optional[ClassSummary] = None):
        """The local definition of `cls.<name>` following the MRO (starting after `after` for super())."""
        skipping = after is not None
        for current in self.mro(cls):
            if skipping:
                skipping = current.qualname != after.qualname
                continue
            if name in current.methods or name in current.attributes:
                if current.qualname not in self._classes:
                    return None  # defined in another module: linted there
                node = self._classes[current.qualname][0]
                for stmt in node.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                        return stmt
                return None
        return None

    def _reached_from(self, function: FunctionNode, cls: Optional[ClassSummary]):
        """Functions called from `function` (with the class `self` is an instance of), marking parents on the way."""
        self_name = _self_name(function) if cls is not None and function in self._owner else None
        owner = self._owner.get(function)
        top_level = self._top_level_defs()
        locals_ = self.local_names(function)
        nodes = self.nodes_of(function)
        for nested in nodes.nested:
            yield nested, cls  # nested def / lambda: compiled with the same entry
        for node in nodes.calls:
            target = self._call_target(node.func, cls, self_name, owner, top_level, locals_)
            if target is not None:
                sites = self.call_sites.setdefault(target[0], [])
                if node not in sites:
                    sites.append(node)
                yield target
        if self_name:
            for node in nodes.attribute_loads:
                if isinstance(node.value, ast.Name) and node.value.id == self_name:
                    prop = self._property(cls, node.attr)
                    if prop is not None:
                        yield prop, cls

    def _top_level_defs(self) -> Dict[str, FunctionNode]:
        """The first def of each name in the module's body, by name."""
        if self._top_level is None:
            self._top_level = {}
            for stmt in self.tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._top_level.setdefault(stmt.name, stmt)
        return self._top_level

    def _property(self, cls: ClassSummary, name: str):
        for current in self.mro(cls):
            if name in current.properties:
                found = self._find_method(current, name)
                return found
            if name in current.methods or name in current.attributes:
                return None
        return None

    def _call_target(self, func, cls, self_name, owner, top_level, locals_):
        if isinstance(func, ast.Name):
            if func.id in top_level and func.id not in locals_:
                return top_level[func.id], None
            return None
        if not isinstance(func, ast.Attribute):
            return None
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id == self_name and cls is not None:
            method = self._find_method(cls, func.attr)
            return (method, cls) if method is not None else None
        if (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super"
                and cls is not None and owner is not None):
            method = self._find_method(cls, func.attr, after=owner)
            return (method, cls) if method is not None else None
        if isinstance(receiver, ast.Name) and receiver.id not in locals_:
            qualname = self.imports.qualname(receiver)
            target_cls = self._summary_of(qualname)
            if target_cls is not None and target_cls.qualname in self._classes:
                method = self._find_method(target_cls, func.attr)
                if method is not None:
                    return method, (cls if cls is not None else target_cls)
        return None

    def _jit_entries(self, source_text: str):
        if "jit" not in source_text and "ms_function" not in source_text:
            return
        functions = {}
        for node in _all_statements(self.tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(node.name, node)
                for decorator in node.decorator_list:
                    entry = self._jit_entry(decorator, node)
                    if entry is not None:
                        yield node, entry
        # jit(fn, ...) wrapping, in breadth-first (`ast.walk`) order: by depth, then in preorder
        calls = ((position, self.order[position]) for position in self._positions[ast.Call])
        wrappers = [(_depth_below(node, self.tree), position, node) for position, node in calls
                    if node.args and self._is_jit(node.func)]
        for _, _, node in sorted(wrappers, key=lambda found: found[:2]):
            target = node.args[0]
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
            if name in functions:
                yield functions[name], Entry(self._function_name(functions[name]), "jit",
                                             strict=_fullgraph(node), lax=not _fullgraph(node))

    def _jit_entry(self, decorator: ast.expr, function) -> Optional[Entry]:
        call = decorator if isinstance(decorator, ast.Call) else None
        if not self._is_jit(call.func if call else decorator):
            return None
        strict = bool(call) and _fullgraph(call)
        return Entry(self._function_name(function), "jit", strict=strict, lax=not strict)

    def _is_jit(self, expr: ast.expr) -> bool:
        return self.imports.qualname(expr) in framework.JIT_DECORATORS

    def _function_name(self, function) -> str:
        owner = self._owner.get(function)
        return f"{owner.name}.{function.name}" if owner else function.name


def _depth_below(node: ast.AST, ancestor: ast.AST) -> int:
    depth = 0
    while node is not ancestor:
        node, depth = parent_of(node), depth + 1
    return depth


def _fullgraph(call: ast.Call) -> bool:
    return any(k.arg == "fullgraph" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in call.keywords)


def _self_name(function: FunctionNode) -> Optional[str]:
    if isinstance(function, ast.Lambda):
        return None
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list):
        return None
    args = function.args.posonlyargs + function.args.args
    return args[0].arg if args else None


def _base_name(base: ast.expr) -> str:
    return base.id if isinstance(base, ast.Name) else ""


_SCOPE_KINDS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})
_INDEXED_KINDS = (ast.Call, ast.Assign, ast.AnnAssign, ast.AugAssign)  # where `_preorder` records positions
_CLOSE = object()  # marks the end of a scope's subtree on the stack of `_preorder`


def _preorder(root: ast.AST, indexed: Iterable[type] = _INDEXED_KINDS):
    """Every node under `root` (itself included) in preorder, with the parent links set, the (start, end) of
    `root` and of each def, lambda and class in that list, and the positions of the `indexed` classes in it.
    The one full walk of a module, its hottest loop: `child_nodes` inlined, children pushed straight onto the
    stack (fields and list items reversed), the parent links plain attributes (`PARENT`), one dict test for the
    node classes it notes (scopes, indexed)."""
    order: List[ast.AST] = []
    spans: Dict[ast.AST, Tuple[int, int]] = {}
    positions: Dict[type, List[int]] = {kind: [] for kind in indexed if kind not in _SCOPE_KINDS}
    noted: Dict[type, Optional[List[int]]] = {**dict.fromkeys(_SCOPE_KINDS), **positions}  # None: a scope
    opened: List[Tuple[ast.AST, int]] = [(root, 0)]
    stack: list = [_CLOSE, root]
    append, pop, push = order.append, stack.pop, stack.append
    reversed_fields = _REVERSED_CHILD_FIELDS
    while stack:
        node = pop()
        if node is _CLOSE:
            scope, start = opened.pop()
            spans[scope] = (start, len(order))
            continue
        kind = node.__class__
        if kind in noted and node is not root:
            found = noted[kind]
            if found is None:
                opened.append((node, len(order)))
                push(_CLOSE)
            else:
                found.append(len(order))
        append(node)
        fields = reversed_fields.get(kind)
        if fields is None:
            fields = reversed_fields[kind] = _reversed_child_fields(kind)
        for name in fields:  # none for the commonest nodes (names, constants)
            value = getattr(node, name, None)
            if value is None:
                if name[0] == "?":  # a list that may hold None, under its name marked (`_reversed_child_fields`)
                    value = [item for item in getattr(node, name[1:]) if item is not None]
                    for child in value:
                        child._msl_parent = node
                    stack += value[::-1]
                continue
            if value.__class__ is list:
                for child in value:
                    child._msl_parent = node
                stack += value[::-1]
            else:  # the fields walked hold a node, a list of nodes or None
                value._msl_parent = node
                push(value)
    return order, spans, positions


def _reversed_child_fields(kind: type) -> Tuple[str, ...]:
    """`child_fields` backwards, with a list field that may hold None marked "?name": getattr finds no such
    attribute, so only a field that reads as None is tested for the mark."""
    with_none = LISTS_WITH_NONE.get(kind)
    return tuple(f"?{name}" if name == with_none else name for name in child_fields(kind)[::-1])


_REVERSED_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}  # node class -> `child_fields` backwards


def rows_spelling(text: str, word: str) -> List[int]:
    """The rows of the lines of `text` that hold `word`, in order (rows as the parser counts them)."""
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


def _all_statements(body: List[ast.stmt], rows: Optional[List[int]] = None) -> Iterator[ast.stmt]:
    """Every statement of a module, entering functions and classes (classes can be nested anywhere); with the
    sorted `rows`, only the statements on whose lines one of them is entered (the statements around a row)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if rows is not None:
            index = bisect.bisect_right(rows, stmt.lineno)
            if index == len(rows) or rows[index] > stmt.end_lineno:
                continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(stmt, name, None)
            if isinstance(block, list):
                stack.extend(reversed(block))


def _level_set_in(tree: ast.Module, path: str, source_text: str) -> Optional[str]:
    """The syntax level this module itself sets (`set_context(jit_syntax_level=...)`...), if any."""
    if "jit_syntax_level" not in source_text and "MS_DEV_JIT_SYNTAX_LEVEL" not in source_text:
        return None
    from ms_lint.analysis.compile_context import facts_of_module

    levels = [level for level, _ in facts_of_module(tree, path)[0]]
    return "strict" if "strict" in levels else (levels[0] if levels else None)
