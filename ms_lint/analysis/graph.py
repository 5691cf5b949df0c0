"""GraphScope: which classes of a module are nn.Cells and which functions MindSpore compiles, and why.

Built once per module and queried by every rule (docs/RULES.md, "Scope words"):
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
import os
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from ms_lint.analysis import framework, guards
from ms_lint.analysis.compile_context import facts_of_module, level_windows
from ms_lint.analysis.names import Names
from ms_lint.analysis.project import ClassSummary, ProjectIndex, summarize, summarize_class
from ms_lint.analysis.walk import (
    FUNCTIONS,
    INDEXED_KINDS,
    FunctionNode,
    ModuleWalk,
    all_statements,
    depth_below,
    enclosing_function,
    parent_of,
    self_parameter,
)


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


class GraphScope:
    """The Cells and the compiled functions of one module, with why each function is compiled and at which syntax
    level. `walk` is the module's one walk and `names` its name resolution, both built here."""

    def __init__(self, tree: ast.Module, module: str, path: str, index: Optional[ProjectIndex] = None,
                 syntax_level: Optional[str] = None, source_text: str = "", project_level: Optional[str] = None,
                 indexed: Iterable[type] = ()):
        self.tree = tree
        self.path = path
        self.index = index or ProjectIndex()
        self.walk = ModuleWalk(tree, indexed)
        try:
            self._build(tree, module, path, syntax_level, source_text, project_level)
        except BaseException:  # (a module nested too deeply): nobody will release the walk's parent links
            self.walk.release()
            raise

    def _build(self, tree: ast.Module, module: str, path: str, syntax_level: Optional[str], source_text: str,
               project_level: Optional[str]) -> None:
        self._dict_spelled = "__dict__" in source_text
        self.summary = summarize(tree, module, path, self._summarized, star_source=self.index.star_exports,
                                 canonical=self.index.canonical)
        self.index.register(self.summary)
        self.imports = self.summary.imports
        self.names = Names(self.walk, self.imports, source_text)
        # the option (passed as `syntax_level`) wins; else what this module sets; else what the project sets
        self.level = syntax_level or self._level_set_here(source_text) or project_level or "lax"
        self._classes: Dict[str, Tuple[ast.ClassDef, ClassSummary]] = {}
        self._owner: Dict[ast.AST, ClassSummary] = {}
        self.cells: Dict[ast.ClassDef, CellClass] = {}
        self.compiled: Dict[FunctionNode, List[Entry]] = {}
        self._derived: Optional[Dict[str, List[CellClass]]] = None
        self._top_level: Optional[Dict[str, FunctionNode]] = None
        # function -> the calls in graph code that reach it (for inferring what its parameters hold)
        self.call_sites: Dict[FunctionNode, List[ast.Call]] = {}
        self._member_kinds: Dict[str, Dict[str, str]] = {}
        self._collect_classes()
        self._collect_entries(source_text)
        # Cells a function runs while it has set STRICT and before it restores the level (syntax_level wins)
        self._strict_in_window: FrozenSet[str] = frozenset() if syntax_level else self._run_in_windows(source_text)

    def release(self) -> None:
        """Free the module's tree at once when it is linted (see `ModuleWalk.release`)."""
        self.walk.release()
        self.names.release()
        self._derived, self._top_level = None, None
        self.call_sites.clear()
        self._member_kinds.clear()

    # ----- queries -------------------------------------------------------------------------------------------
    def _summarized(self, method: ast.AST) -> List[ast.AST]:
        """What a class summary looks at in a method: its assignments and calls, and `self.__dict__` (rarely
        spelled: then every node)."""
        if self._dict_spelled:
            return self.walk.subtree(method)
        of_kind = self.walk.of_kind
        return [found for kind in INDEXED_KINDS for found in of_kind(method, kind)]

    def is_compiled(self, node: ast.AST) -> bool:
        function = node if isinstance(node, FUNCTIONS) else enclosing_function(node)
        return function in self.compiled

    def entry_of(self, node: ast.AST) -> Optional[Entry]:
        function = node if isinstance(node, FUNCTIONS) else enclosing_function(node)
        entries = self.compiled.get(function) if function is not None else None
        return entries[0] if entries else None

    def level_of(self, node: ast.AST) -> str:
        """"strict" or "lax": the syntax level the code around `node` compiles at."""
        function = node if isinstance(node, FUNCTIONS) else enclosing_function(node)
        entries = self.compiled.get(function, []) if function is not None else []
        if any(entry.strict or (entry.kind != "jit" and entry.name.partition(".")[0] in self._strict_in_window)
               for entry in entries):
            return "strict"
        if entries and all(entry.lax for entry in entries):
            return "lax"
        return self.level

    def cell_of(self, node: ast.AST) -> Optional[CellClass]:
        """The Cell class whose body contains `node` (innermost class only)."""
        around: Optional[ast.AST] = node
        while around is not None and not isinstance(around, ast.ClassDef):
            around = parent_of(around)
        return self.cells.get(around) if around is not None else None

    def is_cell_class(self, qualname: Optional[str]) -> bool:
        """Does calling `qualname` create a Cell (a local Cell class, a project one, or MindSpore's)?"""
        local = self._classes.get(qualname) if qualname else None
        if local is not None:
            return local[0] in self.cells
        return self.index.class_kind(qualname) in ("cell", "module") if qualname else False

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
                base_summary = self.summary_of(base)
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
                if self.summary_of(base) is None:
                    external.add(base)
        return external

    def version_guarded(self, node: ast.AST) -> bool:
        """Is `node` in a branch of an `if` (or conditional expression) that tests the framework version or a
        feature (`if is_version_ge(ms.__version__, "1.11.0"):`, `if hasattr(ms, "jit"):`), or selects another
        framework (`other_framework_branch`)? Such branches keep compatibility with other MindSpore versions: rules
        about removed or deprecated APIs stay silent there.
        Needs the parent links of the engine's walk. A tree that holds its own `mindspore` package around the
        module (MindSpore's sources of another version, whose names its code resolves to) is all such code."""
        if self.path and guards.holds_own_mindspore(os.path.dirname(os.path.abspath(self.path))):
            return True
        child, parent = node, parent_of(node)
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test \
                    and self._tests_version(parent.test):
                return True
            if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And) and child in parent.values \
                    and any(self._tests_version(value) for value in parent.values[:parent.values.index(child)]):
                return True  # `sys.version_info[0] == 2 and isinstance(act, unicode)`: evaluated on that version only
            child, parent = parent, parent_of(parent)
        return self.other_framework_branch(node)  # (no MindSpore version runs it)

    def other_framework_branch(self, node: ast.AST) -> bool:
        """Is `node` in the branch a multi-backend module runs for another framework: the body of `if <...>backend
        == "torch":` (TensorLayerX's `elif tlx.BACKEND == 'torch':`, issue 19's fifteenth sample), or the `else` of
        `!=`? There the values are that framework's, and MindSpore's rules about missing methods do not apply."""
        child, parent = node, parent_of(node)
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                selected = guards.backend_selected(parent.test)
                if selected is not None and (child in (parent.body if isinstance(parent, ast.If) else [parent.body])) \
                        == selected:
                    return True
            child, parent = parent, parent_of(parent)
        return False

    def _tests_version(self, test: ast.expr) -> bool:
        for node in ast.walk(test):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
            if "version" in name.lower():
                return True
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "hasattr" and node.args and (
                    self.names.qualname(node.args[0]) or "").partition(".")[0] in ("mindspore", "mindtorch"):
                return True
        return False

    # ----- construction --------------------------------------------------------------------------------------
    def _run_in_windows(self, source_text: str) -> FrozenSet[str]:
        """The Cell classes (by name) that a function calls between setting STRICT and restoring the level:
        `net = Net()` ... `os.environ["MS_DEV_JIT_SYNTAX_LEVEL"] = "0"; net(x); ... = "2"` (`level_windows`)."""
        if "jit_syntax_level" not in source_text and "MS_DEV_JIT_SYNTAX_LEVEL" not in source_text:
            return frozenset()
        cells = {cell.node.name for cell in self.cells.values()}
        found: Set[str] = set()
        for window in level_windows(self.tree):
            made: Dict[str, str] = {}  # local name -> the Cell class it was built from
            for node in self.walk.subtree(window.function):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    built = getattr(node.value.func, "id", None)
                    if built in cells:
                        made.update({t.id: built for t in node.targets if isinstance(t, ast.Name)})
            for node in self.walk.subtree(window.function):
                if isinstance(node, ast.Call) and window.start < node.lineno < window.end:
                    func = node.func
                    if isinstance(func, ast.Call):  # `Net()(x)`
                        func = func.func
                    name = getattr(func, "id", None)
                    if name in cells or name in made:
                        found.add(made.get(name, name))
        return frozenset(found)

    def _level_set_here(self, source_text: str) -> Optional[str]:
        """The syntax level this module itself sets (`set_context(jit_syntax_level=...)`...), if any."""
        if "jit_syntax_level" not in source_text and "MS_DEV_JIT_SYNTAX_LEVEL" not in source_text:
            return None
        levels = [level for level, _ in self.walk.memo(facts_of_module, lambda: facts_of_module(self.tree))[0]]
        return "strict" if "strict" in levels else (levels[0] if levels else None)

    def member_kinds(self, owner: ClassSummary) -> Dict[str, str]:
        """What a class of this module holds by attribute, its bases' included: "parameter", "cell" or
        "container" (`nn.CellList`, `nn.SequentialCell`), from the `self.<name> = ...` of its methods."""
        found = self._member_kinds.get(owner.qualname)
        if found is None:
            found = self._member_kinds[owner.qualname] = self._members_of(owner)
        return found

    def _members_of(self, owner: ClassSummary) -> Dict[str, str]:
        kinds: Dict[str, str] = {}
        for summary in reversed(list(self.mro(owner))):
            kinds.update({name: "parameter" for name in summary.parameters})
            node = summary.node
            if node is None or parent_of(node) is None:
                continue  # a class of another module: its names resolve through that module's imports
            for function in node.body:
                self_name = self_parameter(function) if isinstance(function, ast.FunctionDef) else None
                if self_name is None:
                    continue
                # the assignments in `ast.walk` order (a later one wins), from the walk's index: walking every
                # method of every class in the MRO again was 2 % of a run
                assignments: List[Any] = self.walk.in_walk_order(function, (ast.Assign,)) \
                    if self.walk.spans(function) else [n for n in ast.walk(function) if isinstance(n, ast.Assign)]
                for statement in assignments:
                    if isinstance(statement.value, ast.Call):
                        qualname = self.names.qualname(statement.value.func)
                        if not self.is_cell_class(qualname):
                            continue
                        kind = "container" if (qualname or "").endswith(("CellList", "SequentialCell")) else "cell"
                        for target in statement.targets:
                            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                                    and target.value.id == self_name and target.attr not in summary.parameters:
                                kinds[target.attr] = kind
        return kinds

    def summary_of(self, qualname: Optional[str]) -> Optional[ClassSummary]:
        """The summary of a class by qualified name: one of this module (nested ones too), else the index's."""
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
        class_rows = sorted(node.lineno for node in self.walk.scopes() if node.__class__ is ast.ClassDef)
        for node in all_statements(self.tree.body, class_rows):
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
            if local is not None and base and base not in seen:
                kinds.append(self._kind_of(local[1], seen | {base}))
            else:
                kinds.append(self.index.class_kind(base))
        for wanted in ("module", "cell", "unknown"):
            if wanted in kinds:
                return wanted
        return None

    def _collect_entries(self, source_text: str) -> None:
        queue: deque = deque()
        # a script that puts its process in PyNative (and never in GRAPH_MODE) runs its Cells eagerly: only
        # `@jit` functions are compiled there
        for cell in () if _selects_pynative_only(self.tree, source_text) else self.cells.values():
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
            if skipping and after is not None:
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
        self_arg = self_parameter(function) if cls is not None and function in self._owner else None
        owner = self._owner.get(function)
        top_level = self.top_level_defs()
        locals_ = self.names.local_names(function)
        nodes = self.walk.nodes_of(function)
        for nested in nodes.nested:
            yield nested, cls  # nested def / lambda: compiled with the same entry
        # nested defs by name, so that their call sites are known too (`cal_angle(pos, j)` inside a sibling)
        nested_defs = {nested.name: nested for nested in nodes.nested
                       if not isinstance(nested, ast.Lambda)} if nodes.nested else {}
        evaluated_at_def = self._def_time_calls(function)
        for node in nodes.calls:
            if id(node) in evaluated_at_def:
                continue  # a decorator factory or a default value runs once, when the def runs: host code
            target = self._call_target(node.func, cls, self_arg, owner, top_level, locals_)
            if target is None and nested_defs and node.func.__class__ is ast.Name and node.func.id in nested_defs:
                sites = self.call_sites.setdefault(nested_defs[node.func.id], [])
                if node not in sites:
                    sites.append(node)
            if target is not None:
                sites = self.call_sites.setdefault(target[0], [])
                if node not in sites:
                    sites.append(node)
                yield target
        if self_arg and cls is not None:
            for read in nodes.attribute_loads:
                if isinstance(read.value, ast.Name) and read.value.id == self_arg:
                    prop = self._property(cls, read.attr)
                    if prop is not None:
                        yield prop, cls

    def _def_time_calls(self, function: FunctionNode) -> Set[int]:
        """The ids of the calls in `function`'s own decorators, default values and annotations (`_def_time_nodes`):
        the calls of its span outside its body, read from the walk's index of calls instead of walking those
        parts (1.4 % of a run). Type parameters (3.12) are not evaluated when the def runs: walked as before."""
        if getattr(function, "type_params", None) or not self.walk.spans(function):
            return _def_time_nodes(function)  # (or a def of another module's tree)
        start, end = self.walk.span(function)
        body_start, body_end = self.walk.body_span(function)
        return {id(call) for call in (*self.walk.calls_between(start, body_start),
                                      *self.walk.calls_between(body_end, end))}

    def top_level_defs(self) -> Dict[str, FunctionNode]:
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

    def _call_target(self, func, cls, self_arg, owner, top_level, locals_):
        if isinstance(func, ast.Name):
            if func.id in top_level and func.id not in locals_:
                return top_level[func.id], None
            return None
        if not isinstance(func, ast.Attribute):
            return None
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id == self_arg and cls is not None:
            method = self._find_method(cls, func.attr)
            return (method, cls) if method is not None else None
        if (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super"
                and cls is not None and owner is not None):
            method = self._find_method(cls, func.attr, after=owner)
            return (method, cls) if method is not None else None
        if isinstance(receiver, ast.Name) and receiver.id not in locals_:
            qualname = self.imports.qualname(receiver)
            target_cls = self.summary_of(qualname)
            if target_cls is not None and target_cls.qualname in self._classes:
                method = self._find_method(target_cls, func.attr)
                if method is not None:
                    return method, (cls if cls is not None else target_cls)
        return None

    def _jit_entries(self, source_text: str):
        if "jit" not in source_text and "ms_function" not in source_text:
            return
        functions: Dict[str, ast.AST] = {}
        for node in all_statements(self.tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(node.name, node)
                for decorator in node.decorator_list:
                    entry = self._jit_entry(decorator, node)
                    if entry is not None:
                        yield node, entry
        # jit(fn, ...) wrapping, in breadth-first (`ast.walk`) order: by depth, then in preorder
        order = self.walk.order
        calls = ((position, order[position]) for position in self.walk.positions_of((ast.Call,)))
        wrappers = [(depth_below(node, self.tree), position, node) for position, node in calls
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
        strict = call is not None and _fullgraph(call)
        return Entry(self._function_name(function), "jit", strict=strict, lax=not strict)

    def at_compile_time(self, node: ast.AST) -> bool:
        """Is `node` in a `@constexpr` (or `_primexpr`) function? Called from graph code, it runs in Python on the
        call's constant arguments while the graph compiles: host operations work there (mindspore_gs's
        `generate_tensor` reads `.asnumpy()`, issue 19's thirteenth sample), and what it draws is frozen into the
        graph (measured: `np.random.normal` in a `constexpr`, with `reuse_result=False` too, gives the same values
        at every call)."""
        function = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else enclosing_function(node)
        while function is not None:
            if not isinstance(function, ast.Lambda) and any(
                    self.imports.qualname(d.func if isinstance(d, ast.Call) else d) in framework.COMPILE_TIME_DECORATORS
                    for d in function.decorator_list):
                return True
            function = enclosing_function(function)
        return False

    def _is_jit(self, expr: ast.expr) -> bool:
        return self.imports.qualname(expr) in framework.JIT_DECORATORS

    def _function_name(self, function) -> str:
        owner = self._owner.get(function)
        return f"{owner.name}.{function.name}" if owner else function.name


def _def_time_nodes(function: FunctionNode) -> Set[int]:
    """The ids of the nodes of `function`'s own decorators, default values and annotations: Python evaluates them
    when the `def` statement runs (a class body, a module), never when the compiled function is called."""
    roots: List[ast.AST] = [*function.args.defaults, *(d for d in function.args.kw_defaults if d is not None)]
    if not isinstance(function, ast.Lambda):
        roots += function.decorator_list
        roots += [a.annotation for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs,
                                         function.args.vararg, function.args.kwarg) if a is not None and a.annotation]
        if function.returns is not None:
            roots.append(function.returns)
    return {id(node) for root in roots for node in ast.walk(root)} if roots else set()


def _fullgraph(call: ast.Call) -> bool:
    return any(k.arg == "fullgraph" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in call.keywords)


def _base_name(base: ast.expr) -> str:
    return base.id if isinstance(base, ast.Name) else ""


# `mode=` given anything but PYNATIVE_MODE or 1 (not `pad_mode=`, not `mode ==`)
_OTHER_MODE = re.compile(r"\bmode\s*=(?!=)\s*(?!(\w+\.)*PYNATIVE_MODE\b|1\b)")


def _selects_pynative_only(tree: ast.Module, source_text: str) -> bool:
    """Does the module, when imported, set `set_context(mode=PYNATIVE_MODE)` (a statement of its body) and never
    select another mode anywhere?"""
    if "PYNATIVE" not in source_text and "mode=1" not in source_text:
        return False
    if "GRAPH_MODE" in source_text or _OTHER_MODE.search(source_text):
        return False  # another mode is (or may be) selected somewhere: as in the module's calls, conservatively
    return any(isinstance(stmt, ast.Expr) and _mode_set(stmt.value) == "pynative" for stmt in tree.body)


def _mode_set(node: ast.AST) -> Optional[str]:
    """"pynative" or "other" for a `set_context(mode=...)` call, else None."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "set_context"):
        return None
    for keyword in node.keywords:
        if keyword.arg == "mode":
            value = keyword.value
            text = value.attr if isinstance(value, ast.Attribute) else getattr(value, "value", None)
            return "pynative" if text in ("PYNATIVE_MODE", 1) else "other"
    return None
