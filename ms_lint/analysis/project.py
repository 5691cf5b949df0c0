"""The project index: small summaries of the linted project's modules, built on demand.

A summary holds what other modules need to know about a module: its imports, its classes with their resolved bases
and the attributes they define. Summaries let `GraphScope` decide that `class Head(Block)` is an nn.Cell when
`Block` lives in another file of the project, in every front end (flake8 and pylint see one file at a time).
"""
from __future__ import annotations

import ast
import contextlib
import functools
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Set, Tuple

from ms_lint.analysis import framework, tensor_attributes
from ms_lint.analysis.imports import ImportMap, statements
from ms_lint.analysis.kept_trees import KeptTrees
from ms_lint.analysis.locations import STANDARD_LIBRARY, roots_above
from ms_lint.analysis.python_numbers import metadata_functions
from ms_lint.analysis.registrations import REGISTRATION_NAMES, assigned_targets, is_name, note_registering_call
from ms_lint.analysis.signatures import Signature, method_signature
from ms_lint.analysis.walk import self_parameter, spelled_name
from ms_lint.source import SourceError, lines_holding, package_root, parse, read, read_bytes, walk

_ASSIGNMENTS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign})
_UNPACKING = frozenset({ast.Tuple, ast.List, ast.Starred})  # targets holding others (see `assigned_targets`)


class Callee(NamedTuple):
    """What a call passing `self` on calls (`build(self)`, `cfg.create_weights(self)`), by name only."""

    name: Optional[str]  # `build` for `build(self)`
    attribute: Optional[str]  # `create_weights` for `cfg.create_weights(self)`
    receiver: Optional[str]  # `cfg` there


@dataclass
class ClassSummary:
    name: str
    qualname: str
    bases: Tuple[Optional[str], ...]
    methods: FrozenSet[str]
    properties: FrozenSet[str]
    attributes: FrozenSet[str]  # assigned on self anywhere in the class, or bound in the class body
    parameters: FrozenSet[str]  # self.X = Parameter(...)
    metadata_attributes: FrozenSet[str]  # self.X = P.Shape() (or ops.Rank()...): calling it gives Python values
    constructed: FrozenSet[str]  # qualified names called to build attribute values (self.X = Block(...))
    dynamic: bool  # attributes are also created in ways a linter cannot follow (setattr with a variable name...)
    # self.X = Tensor(...) or unpacked from a method returning one there, and nothing else (`tensor_attributes`)
    tensors: FrozenSet[str] = frozenset()
    self_passing: Tuple[Callee, ...] = ()  # the calls of its methods that hand `self` to other code
    # when every such name starts with a literal (`insert_child_to_cell("layer_%d" % i, ...)`): those literals,
    # which tell which names it cannot be (`construct`); None when some name may be anything
    dynamic_prefixes: Optional[FrozenSet[str]] = None
    construct: Optional[Signature] = None  # its own `construct`'s, when a call's binding can be followed
    _node: Optional[ast.ClassDef] = field(default=None, repr=False, compare=False)
    _load: Optional[Callable[[], Optional[ast.ClassDef]]] = field(default=None, repr=False, compare=False)

    @property
    def node(self) -> Optional[ast.ClassDef]:
        """The class's tree: the linted module's own node while the module is linted; for any other module,
        parsed again when a rule asks (rarely: summaries keep facts, and a large project's trees together do not
        fit in memory)."""
        if self._node is None and self._load is not None:
            return self._load()
        return self._node


@dataclass
class ModuleSummary:
    name: str
    path: str
    imports: ImportMap
    classes: Dict[str, ClassSummary]
    functions: FrozenSet[str]
    metadata_functions: FrozenSet[str] = frozenset()  # those returning shape metadata only (`python_numbers`)

    def detach(self, load: Callable[[str, str], Optional[ast.ClassDef]]) -> None:
        """Drop the tree: `load(path, class name)` finds a class's node again when a rule asks for it."""
        for name, summary in self.classes.items():
            summary._node = None
            summary._load = functools.partial(load, self.path, name)


def summarize(tree: ast.Module, module: str, path: str,
              nodes_of: Callable[[ast.AST], Iterable[ast.AST]] = walk,
              star_source: Optional[Callable[[str, str], bool]] = None,
              canonical: Optional[Callable[..., str]] = None) -> ModuleSummary:
    """`nodes_of(method)`: every node of a method, in any order (`GraphScope` has them from its walk);
    `star_source(module, name)`: does `from module import *` bind `name` (`ProjectIndex.star_exports`);
    `canonical(name)`: what a name a project module re-exports is (`ProjectIndex.canonical`)."""
    is_package = os.path.basename(path) == "__init__.py"
    imports = ImportMap.of_block(tree.body, module, is_package, star_source=star_source, canonical=canonical)
    classes: Dict[str, ClassSummary] = {}
    functions: Dict[str, ast.AST] = {}
    for stmt in statements(tree.body):
        if isinstance(stmt, ast.ClassDef):
            classes[stmt.name] = summarize_class(stmt, imports, nodes_of)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[stmt.name] = stmt
    return ModuleSummary(module, path, imports, classes, frozenset(functions), metadata_functions(functions))


def summarize_class(node: ast.ClassDef, imports: ImportMap,
                    nodes_of: Callable[[ast.AST], Iterable[ast.AST]] = walk) -> ClassSummary:
    methods, properties, attributes, metadata, constructed = set(), set(), set(), set(), set()
    parameters: Set[str] = set()
    tensors, not_tensors = set(), set()  # type: Set[str], Set[str]
    unpacked: List[Tuple[str, int, str]] = []  # (attribute, position, method): `self.a, self.b = self.m(...)`
    self_passing: List[Callee] = []
    dynamic = False
    prefixes: Optional[Set[str]] = set()  # None once a dynamic name has no literal prefix
    for stmt in statements(node.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.add(stmt.name)
            if any(spelled_name(d) in ("property", "cached_property") or
                   (isinstance(d, ast.Attribute) and d.attr in ("setter", "getter")) for d in stmt.decorator_list):
                properties.add(stmt.name)
            if stmt.name in ("__getattr__", "__getattribute__"):
                dynamic, prefixes = True, None
        elif isinstance(stmt, ast.ClassDef):
            attributes.add(stmt.name)  # a nested class is a class attribute too
        else:
            for target in assigned_targets(stmt):
                if isinstance(target, ast.Name):
                    attributes.add(target.id)
    for method in node.body:
        self_name = self_parameter(method) if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if self_name is None:
            continue
        sub: Any  # dispatched on its class below
        for sub in nodes_of(method):
            kind = sub.__class__  # node classes are final: one class test per node (this runs on most nodes)
            if kind is ast.Call:
                func = sub.func  # (the names tested first: most calls register nothing)
                if (func.id if func.__class__ is ast.Name else getattr(func, "attr", None)) in REGISTRATION_NAMES:
                    registered = note_registering_call(sub, self_name, attributes, parameters)
                    if registered:
                        dynamic = True
                        if isinstance(registered, str) and prefixes is not None:
                            prefixes.add(registered)
                        else:
                            prefixes = None
                if _passes_name(sub, self_name):
                    self_passing.append(_callee(func))
            elif kind in _ASSIGNMENTS:
                targets = sub.targets if kind is ast.Assign else (sub.target,)
                if len(targets) == 1 and not _may_bind_self_attribute(targets[0], self_name):
                    continue  # most assignments: `x = ...`, `x[i] = ...`, `self.x.y = ...`
                value = getattr(sub, "value", None)
                # what `self.x = f(...)` calls, resolved once (it was three times: Parameter, metadata, built)
                called: Any = _UNRESOLVED
                positions = tensor_attributes.unpacked_positions(sub, self_name)
                for target in assigned_targets(sub):
                    if target.__class__ is not ast.Attribute or not is_name(target.value, self_name):
                        continue  # only `self.<attr> = ...`
                    attr = target.attr
                    attributes.add(attr)
                    if positions is not None:
                        if attr in positions:
                            unpacked.append((attr, positions[attr], sub.value.func.attr))  # (a method call)
                        else:
                            not_tensors.add(attr)
                    elif kind is not ast.AugAssign:
                        if called is _UNRESOLVED and value.__class__ is ast.Call:
                            called = imports.qualname(value.func)
                        (tensors if value.__class__ is ast.Call and called in framework.TENSOR_CLASSES
                         else not_tensors).add(attr)
                    if value.__class__ is ast.Call:
                        if called is _UNRESOLVED:
                            called = imports.qualname(value.func)
                        if called in framework.PARAMETER_CLASSES:
                            parameters.add(attr)
                        elif framework.returns_metadata(called):
                            metadata.add(attr)
                    elif value.__class__ is ast.Attribute and value.attr[:1].islower() \
                            and framework.returns_metadata(imports.qualname(value)):
                        metadata.add(attr)  # `self.tuple_len = ops.tuple_len`: the function itself
                    for call in _calls_in(value):
                        qualname = called if call is value else imports.qualname(call.func)
                        if qualname:
                            constructed.add(qualname)
            elif kind is ast.Attribute and sub.attr == "__dict__" and is_name(sub.value, self_name):
                dynamic, prefixes = True, None  # self.__dict__.update(...), self.__dict__[name] = ...
    for attr, position, unpacking in unpacked:
        (tensors if tensor_attributes.returns_tensor_at(node, unpacking, position, imports) else not_tensors).add(attr)
    return ClassSummary(
        name=node.name,
        qualname=f"{imports.module}.{node.name}" if imports.module else node.name,
        bases=tuple(imports.qualname(base) for base in node.bases),
        methods=frozenset(methods),
        properties=frozenset(properties),
        attributes=frozenset(attributes),
        parameters=frozenset(parameters),
        tensors=frozenset(tensors - not_tensors),
        metadata_attributes=frozenset(metadata),
        constructed=frozenset(constructed),
        dynamic=dynamic,
        self_passing=tuple(self_passing),
        dynamic_prefixes=frozenset(prefixes) if dynamic and prefixes is not None else None,
        construct=method_signature(node, "construct") if "construct" in methods else None,
        _node=node,
    )


def _may_bind_self_attribute(target: ast.expr, self_name: str) -> bool:
    """Can the lone target of an assignment bind an attribute of `self` (`self.x`, or `self.x` in an unpacking)?"""
    if isinstance(target, ast.Attribute):
        value = target.value
        return value.__class__ is ast.Name and value.id == self_name
    return target.__class__ in _UNPACKING


def _passes_name(call: ast.Call, name: str) -> bool:
    """Is the name one of the call's arguments (`register(self)`, `f(owner=self)`)? Asked of every call."""
    for argument in call.args:
        if argument.__class__ is ast.Name and argument.id == name:
            return True
    for keyword in call.keywords:
        if keyword.value.__class__ is ast.Name and keyword.value.id == name:
            return True
    return False


def _callee(func: ast.expr) -> Callee:
    if isinstance(func, ast.Name):
        return Callee(func.id, None, None)
    if isinstance(func, ast.Attribute):
        return Callee(None, func.attr, getattr(func.value, "id", None))
    return Callee(None, None, None)


def _calls_in(value: Optional[ast.expr]):
    """Calls that build a value, looking into list/tuple/dict displays and comprehensions (`[Block() ...]`)."""
    stack = [value] if value is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            yield node
            stack.extend(node.args)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            stack.extend(node.elts)
        elif isinstance(node, ast.Dict):
            stack.extend(v for v in node.values if v is not None)
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            stack.append(node.elt)
        elif isinstance(node, ast.IfExp):
            stack.extend((node.body, node.orelse))


_UNRESOLVED = object()  # see summarize_class


_QUOTED_NAME = re.compile(rb"""['"]([A-Za-z_]\w*)['"]""")


class ProjectIndex:
    """Module summaries by dotted name, found under the import roots of the linted files and built lazily.

    A name is looked up first under the import root of the file being linted (`importing`), as Python finds it
    when that file runs: in a repository of many independent projects (`zoo/a/train.py` and `zoo/b/train.py`,
    each with its `src/`), `src.util` is the importing project's own module, never another project's: only the
    roots at or above the importer's are searched (`roots_above`), and a name only other projects hold is none."""

    _TREES = 4  # trees parsed again for rules that read another module's class (see ClassSummary.node)

    def __init__(self):
        self.roots: List[str] = []
        self._files: Set[str] = set()  # added: the CLI adds every file up front, the engine again as it lints it
        self._by_path: Dict[str, Optional[ModuleSummary]] = {}  # absolute path -> summary (None: unreadable)
        self._kinds: Dict[Tuple[Optional[str], str], Optional[str]] = {}  # (see `_scope_of`, qualname) -> kind
        self._star_answers: Dict[Tuple[Optional[str], str, str], bool] = {}  # (scope, module, name) -> bound
        self._canonical: Dict[Tuple[Optional[str], str, bool], str] = {}  # see `canonical`
        # (see `_scope_of`, module name) -> path: `find` is asked for every import
        self._found: Dict[Tuple[Optional[str], str], Optional[str]] = {}
        self._holders: Dict[str, List[str]] = {}  # first name of a module -> the roots holding it (see `_holds`)
        self._paths: Dict[Tuple[Optional[str], str], Optional[str]] = {}  # see `module`
        self._nearest: Dict[Tuple[str, str], str] = {}  # (importer's root, first name) -> see `_scope_of`
        # the CLI and pylint judge the project rules over every file they lint (see `is_linted`)
        self.judged_together = False
        self.importer_root: Optional[str] = None  # the import root of the file being linted (see `importing`)
        self._set_outside: Optional[Tuple[int, FrozenSet[str]]] = None  # see `names_set_outside`
        self._top_names: Dict[str, FrozenSet[str]] = {}  # root -> the names of its entries (see `_holds`)
        self._spelled: Dict[Tuple[str, Tuple[str, ...]], bool] = {}  # see `spells`
        self._trees: "OrderedDict[str, Optional[ast.Module]]" = OrderedDict()
        self._absolute_files: Optional[Set[str]] = None
        self._lock = threading.Lock()
        self.kept = KeptTrees(self._of_the_run)  # files of the run a lookup or a scan parsed before their turn
        # module name -> file path (None: not found) of every module looked up while `recording` (a file's lint
        # depends on them: the cache revalidates them)
        self.consulted: Optional[Dict[str, Optional[str]]] = None

    def add_file(self, path: str) -> None:
        if path in self._files:
            return
        self._files.add(path)
        self._absolute_files = None
        root = package_root(path)
        if root not in self.roots:
            self.roots.append(root)
            self._found.clear()  # a new root may hold modules not found before
            self._holders.clear()
            self._nearest.clear()
            self._paths.clear()
            self._kinds.clear()

    @contextlib.contextmanager
    def importing(self, path: str):
        """Look names up as the file at `path` imports them (its own import root first)."""
        outer, self.importer_root = self.importer_root, package_root(path)
        try:
            yield
        finally:
            self.importer_root = outer

    def register(self, summary: ModuleSummary) -> None:
        """Use an already-built summary (the file being linted) instead of re-reading the file."""
        with self._lock:
            self._by_path[os.path.abspath(summary.path)] = summary
            self._kinds.clear()

    def release(self, summary: ModuleSummary) -> None:
        """The module was linted: its summary stays, its tree goes (see ClassSummary.node)."""
        summary.detach(self._class_node)

    def module(self, name: str) -> Optional[ModuleSummary]:
        # asked some 100,000 times on mindone: the path by (importer's root, name), then the summary by path
        key = (self.importer_root, name)
        path = self._paths.get(key, "")
        if path == "":
            path = self._paths[key] = self.find(name)
        summary = self._by_path.get(path) if path is not None else None
        if summary is None and path is not None and path not in self._by_path:
            summary = self._module(name, path)
        if self.consulted is not None:
            # the file the name resolves to, as the cache checks it (`find`): the summary of a linted module
            # carries the path it was linted under, often relative, which never matched and made a warm run
            # lint every module depending on an already linted one again
            self.consulted[name] = (path or summary.path) if summary is not None else None
        return summary

    def _module(self, name: str, path: str) -> Optional[ModuleSummary]:
        try:
            source = read(path)
            tree = parse(source)
            built = summarize(tree, name, path, star_source=self.star_exports, canonical=self.canonical)
            built.detach(self._class_node)
            self.kept.keep(path, source, tree)
            summary: Optional[ModuleSummary] = built
        except (SourceError, RecursionError):
            summary = None
        with self._lock:
            self._by_path[path] = summary
        return summary

    def is_linted(self, path: Optional[str]) -> bool:
        """Is the file at `path` one this run lints and judges with the others (so its own facts will be known to
        the project rules)? Never under flake8 and the language server, which judge each file alone."""
        return path is not None and self.judged_together and self._of_the_run(os.path.abspath(path))

    def _of_the_run(self, path: str) -> bool:
        """Is the absolute `path` one of the files added (those the run lints)?"""
        with self._lock:
            if self._absolute_files is None:
                self._absolute_files = {os.path.abspath(file) for file in self._files}
            return path in self._absolute_files

    def find(self, name: str) -> Optional[str]:
        """The absolute path of the project module `name` as the file being linted imports it, or None."""
        head = name.partition(".")[0]
        holders = self._holders.get(head)
        if holders is None:
            holders = self._roots_holding(head)
        if not holders:
            return None  # most names asked about (`mindspore.ops`, `numpy`): no root holds them
        key = (self._scope_of(head), name)
        if key in self._found:
            return self._found[key]
        found = None
        relative = name.replace(".", os.sep)
        for root in self._search_order(head):  # most names asked about (`mindspore.ops`, `numpy`): no root
            for candidate in (relative + ".py", os.path.join(relative, "__init__.py")):
                path = os.path.join(root, candidate)
                if os.path.isfile(path):
                    found = path
                    break
            if found:
                break
        self._found[key] = found
        return found

    def _roots_holding(self, head: str) -> List[str]:
        holders = self._holders.get(head)
        if holders is None:
            holders = self._holders[head] = [root for root in self.roots if self._holds(root, head)]
        return holders

    def _scope_of(self, head: str) -> Optional[str]:
        """What a lookup of a name starting with `head` depends on when several roots (or any, for a standard
        library name like `io`) hold `head`: the nearest at or above the importing file's root (searched first),
        or "" when none is (nothing found); None otherwise, or when no file is being linted (shared by all)."""
        holders = self._roots_holding(head)
        if self.importer_root is None or (len(holders) < 2 and head not in STANDARD_LIBRARY):
            return None
        key = (self.importer_root, head)
        if key not in self._nearest:
            self._nearest[key] = next(iter(roots_above(self.importer_root, holders)), "")
        return self._nearest[key]

    def _search_order(self, head: str) -> List[str]:
        holders = self._roots_holding(head)
        nearest = self._scope_of(head)
        return holders if nearest is None else roots_above(nearest, holders) if nearest else []

    def spells(self, name: str, needles: Tuple[str, ...]) -> bool:
        """Does the text of the project module `name` hold one of the `needles` (False if it is not found)? What
        may happen in a module no run reads in full (`seed` for MSL053, a thread module for MSL005)."""
        path = self.find(name)
        if path is None:
            return False
        key = (path, needles)
        found = self._spelled.get(key)
        if found is None:
            data = read_bytes(path)
            found = self._spelled[key] = any(needle.encode() in data for needle in needles)
        return found

    def linted_files(self) -> List[str]:
        with self._lock:
            return sorted(self._files)

    def names_set_outside(self) -> FrozenSet[str]:
        """Names spelled as a string on a line of a file of the run that calls `setattr` or `exec`
        (`setattr(m, "x", v)`, `exec("m.{}.{} = 1".format(n, "x"))`): attributes other code may set on a Cell.
        Scanned once, when first asked (about 0.1 s on mindone's 1,729 files)."""
        with self._lock:
            if self._set_outside is None or self._set_outside[0] != len(self._files):
                found: Set[str] = set()
                for path in sorted(self._files):
                    for line in lines_holding(read_bytes(path), (b"setattr(", b"exec(")):
                        found.update(name.decode("ascii") for name in _QUOTED_NAME.findall(line))
                self._set_outside = (len(self._files), frozenset(found))
            return self._set_outside[1]

    def may_hold(self, head: str) -> bool:
        """Can a module whose dotted name starts with `head` be found (`find`) under one of the roots? Read from
        the roots holding `head` (kept until a root is added): asked of 300,000 names on mindone, it tested every
        root each time."""
        holders = self._holders.get(head)
        if holders is None:
            holders = self._roots_holding(head)
        return bool(holders)

    def _holds(self, root: str, head: str) -> bool:
        """Is `head` a package or module directly under `root` (as any module under it starts with one)?"""
        entries = self._top_names.get(root)
        if entries is None:
            try:
                entries = frozenset(os.listdir(root))
            except OSError:
                entries = frozenset()
            self._top_names[root] = entries
        return head in entries or f"{head}.py" in entries

    def _class_node(self, path: str, name: str) -> Optional[ast.ClassDef]:
        """The node of a module-level class (the last definition of the name, as in `summarize`), parsed again;
        the last few trees are kept, as rules ask about a class's bases in turn."""
        with self._lock:
            parsed = path in self._trees  # None when it did not parse
            tree = self._trees.pop(path, None)
        if not parsed:
            try:
                tree = parse(read(path))
            except (SourceError, RecursionError):
                tree = None
        with self._lock:
            self._trees[path] = tree
            while len(self._trees) > self._TREES:
                self._trees.popitem(last=False)
        found = None
        for stmt in statements(tree.body) if tree is not None else ():
            if isinstance(stmt, ast.ClassDef) and stmt.name == name:
                found = stmt
        return found

    def defining(self, qualname: Optional[str], depth: int = 0) -> Optional[Tuple[ModuleSummary, str]]:
        """The project module defining `qualname` (a class or function), and its name there, through re-exports."""
        if not qualname or depth > 8 or "." not in qualname:
            return None
        module_name, _, attr = qualname.rpartition(".")
        module = self.module(module_name)
        if module is None:
            return None
        if attr in module.classes or attr in module.functions:
            return module, attr
        target = module.imports.names.get(attr) or module.imports.from_stars(attr)
        return self.defining(target, depth + 1) if target and target != qualname else None

    def lookup_class(self, qualname: str) -> Optional[ClassSummary]:
        """The summary of a project class by qualified name, following re-exports (`from .x import Y`)."""
        return found[0].classes.get(found[1]) if (found := self.defining(qualname)) else None

    def star_exports(self, module_name: str, name: str, depth: int = 0) -> bool:
        """Does `from <module_name> import *` bind `name`? Its `__all__` says when it is a literal; else every
        public name the module defines or imports, its own star imports included (Python's rule)."""
        if depth > 8:
            return False
        key = (self._scope_of(module_name.partition(".")[0]), module_name, name)
        known = self._star_answers.get(key)
        if known is not None:
            return known
        self._star_answers[key] = False  # an import cycle of star imports answers no
        module = self.module(module_name)
        if module is None:
            answer = False
        elif module.imports.exports is not None:
            answer = name in module.imports.exports
        elif name.startswith("_"):
            answer = False
        else:
            answer = name in module.classes or name in module.functions or name in module.imports.names or any(
                self.star_exports(base, name, depth + 1) for base in module.imports.stars)
        self._star_answers[key] = answer
        return answer

    def canonical(self, qualname: str, reexported: bool = False) -> str:
        """What a name a project package re-exports is: `pkg.nn.Conv2d` is `mindspore.nn.Conv2d` when `pkg` (or
        a module it star-imports) imports `nn` from MindSpore. Followed from a package's `__init__`, or from what
        a star import binds (`reexported`), on to wherever that leads; a plain module's own names are where they
        are (reading every module a name passes through cost 4x on mindone). Project classes and functions end
        where they are defined; anything else (MindSpore, NumPy, a name the index cannot follow) stays as it is."""
        head = qualname.partition(".")[0]
        if "." not in qualname or not self.may_hold(head):
            return qualname
        key = (self._scope_of(head), qualname, reexported)
        found = self._canonical.get(key)
        if found is None:
            self._canonical[key] = qualname  # a cycle of re-exports ends here
            found = self._canonical[key] = self._follow(qualname, 0 if not reexported else 1)
        return found

    def _follow(self, qualname: str, depth: int) -> str:
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:cut])
            path = self.find(prefix)
            if path is None:
                continue
            if depth == 0 and not path.endswith("__init__.py"):
                return qualname  # a plain module's own name, imported as such
            module = self.module(prefix)
            if module is None:
                return qualname
            attr = parts[cut]
            if attr in module.classes or attr in module.functions:
                return qualname
            target = module.imports.names.get(attr) or module.imports.from_stars(attr)
            if not target or target == ".".join(parts[:cut + 1]) or depth > 8:
                return qualname
            followed = ".".join([target, *parts[cut + 1:]])
            return self._follow(followed, depth + 1) if self.may_hold(target.partition(".")[0]) else followed
        return qualname

    def class_kind(self, qualname: Optional[str], _seen: FrozenSet[str] = frozenset()) -> Optional[str]:
        """"cell", "module" (MindTorch), None (known not to be a Cell), or "unknown" (a base could not be found)."""
        if not qualname:
            return "unknown"
        key = (self._scope_of(qualname.partition(".")[0]), qualname)
        if key in self._kinds:
            return self._kinds[key]
        kind = framework.class_kind(qualname)
        if kind is None and qualname not in _seen:
            summary = self.lookup_class(qualname)
            if summary is None:
                kind = None if framework.is_known_non_cell(qualname) else "unknown"
            else:
                kind = self.kind_of_bases(summary.bases, _seen | {qualname})
        self._kinds[key] = kind
        return kind

    def kind_of_bases(self, bases, seen: FrozenSet[str] = frozenset()) -> Optional[str]:
        kinds = [self.class_kind(base, seen) for base in bases]
        for wanted in ("module", "cell", "unknown"):
            if wanted in kinds:
                return wanted
        return None
