from __future__ import annotations

import ast
import builtins
from typing import FrozenSet, List, Optional, Set

from ms_lint.analysis.folding import method_flag
from ms_lint.analysis.walk import parameter_names, parent_of
from ms_lint.rule import Rule

_MODULE_ATTRIBUTES = frozenset({"__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__",
                                "__path__", "__builtins__", "__debug__", "__annotations__", "__dict__",
                                "__class__", "__qualname__", "__module__"})
_KNOWN = frozenset(dir(builtins)) | _MODULE_ATTRIBUTES
# Calls through which a module can define names a reader cannot see.
_DYNAMIC = frozenset({"globals", "vars", "exec", "eval", "__import__", "locals"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_IPYTHON = frozenset({"display", "get_ipython", "In", "Out"})  # what a notebook's kernel defines
# the node classes `_defined_names` looks at
_BINDING_CLASSES = frozenset({ast.Name, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                              ast.ImportFrom, ast.arg, ast.ExceptHandler, ast.MatchAs, ast.MatchStar,
                              ast.MatchMapping})


class UndefinedNameInGraph(Rule):
    """
    ## What it does
    Finds names read in graph-compiled code that nothing in the module defines: no assignment, import, def,
    class or loop anywhere in the file, and no builtin (a `global` statement declares a name, it binds none).
    A typo (`hiden_states`), a helper that was never imported, a constant left behind by a refactor. Also a
    name bound only inside another function or a class body, not in the reading function, the defs around it
    or the module: a port's `nn.Dropout(p=dropout)` in `construct` where `dropout` is a parameter of
    `__init__` (the value is `self.dropout`). And the base of a Cell class that the module never binds
    (`class FC(nn.Cell):` with only `from mindspore.nn import Dropout` imported): importing the module fails.
    And, in the methods of a Cell that are not compiled (`__init__`, helpers called from Python), a name nothing
    in the module binds: a half-ported `torch.zeros(...)`, an `ops.Exp()` with no `ops` imported, which fail when
    the line runs, in every mode; in a Cell with no `construct` too (a base class, a memory bank used from
    Python).

    ## Why it matters in graph mode
    Python only looks a name up when the line runs, so PyNative runs a Cell whose missing name sits in a branch
    it never takes. The graph compiler resolves every name of the code it compiles, the branches that depend on
    tensor data included. Measured on MindSpore 2.10 (CPU, LAX and STRICT alike): `if x.sum() > 100: return x *
    undefined_scale` fails to compile with `NameError: The name 'undefined_scale' is not defined, or not
    supported in graph mode.` even when the condition is false. A branch folded at compile time (`if
    self.flag:` with `flag = False`) is not resolved: there the finding is a warning.

    Modules whose names cannot all be seen are skipped: star imports, `globals()`, `exec`, a module
    `__getattr__`.

    ## Example
    ```python
    class Scale(nn.Cell):
        def construct(self, x):
            if x.max() > 100:
                return x * clip_scale
            return x
    ```

    ## Use instead
    ```python
    CLIP_SCALE = 0.01

    class Scale(nn.Cell):
        def construct(self, x):
            if x.max() > 100:
                return x * CLIP_SCALE
            return x
    ```

    ## Fix
    None: define or import the name (a misspelt name is often one edit away from a local or a module name).
    """

    code = "MSL027"
    name = "undefined-name-in-graph"
    severity = "error"
    scope = "module"  # graph code, and the Cells that have none (their classes, `visit_class_def`)
    message = "{subject}: {when} ({error})"

    def visit_function_def(self, node: ast.FunctionDef, ctx):
        return self._check(node, ctx)

    def visit_async_function_def(self, node: ast.AsyncFunctionDef, ctx):
        return self._check(node, ctx)

    def visit_lambda(self, node: ast.Lambda, ctx):
        return self._check(node, ctx)

    def _check(self, function, ctx):
        if not ctx.graph.is_compiled(function):
            return
        yield from self._check_bases(function, ctx)
        nearby = _bound_nearby(ctx, function)
        for name in _own_loads(ctx, function):
            if name.id in nearby or name.id in _KNOWN:
                continue
            # the module's names (a scan of its whole walk) only for a name neither the function nor an import binds
            defined = ctx.memo(_defined_names, lambda: _defined_names(ctx.walk.subtree(ctx.tree)))
            if defined is None:
                return
            if _in_annotation(name, function):
                continue
            subject = f"`{name.id}` is not defined anywhere in this module"
            if name.id in defined:
                scoped = ctx.memo((_scoped_names, function), lambda: _scoped_names(ctx, function))
                if name.id in _names_of_module(ctx) or scoped is None or name.id in scoped:
                    continue
                # bound only in another function's scope: CIGF's `Dropout(p=dropout)` in `FC.construct`, where
                # `dropout` is a parameter of `__init__` (the value is `self.dropout`)
                subject = f"`{name.id}` is bound only inside {_binding_function(ctx, name.id)}, not where it is read"
            flag = method_flag(name, ctx.graph.call_sites, ctx.tensors.derives)
            when = "2.10 fails to compile the function, even if this line never runs"
            if flag is not None:
                when = f"compiled only when `self.{flag}` takes this branch as the Cell is compiled, and then it fails"
            entry = ctx.graph.entry_of(name)
            if entry is not None:
                subject += f", in graph code reached from `{entry.name}`"
            error = f"`NameError: The name '{name.id}' is not defined, or not supported in graph mode.`"
            yield self.report(ctx, name, subject=subject, when=when, error=error,
                              severity="warning" if flag is not None else None)

    def visit_class_def(self, node: ast.ClassDef, ctx):
        """A Cell with no compiled method (a base class holding only `__init__`, a port with `forward` and no
        `construct`: the fifteenth sample's `torch.zeros(d).cuda()`) is checked here, not from its first compiled
        method."""
        cell = ctx.graph.cells.get(node)
        if cell is None or cell.kind != "cell" or _first_compiled(ctx, node) is not None \
                or not _in_classes_only(node, ctx.tree):
            return
        yield from self._check_class(node, ctx)

    def _check_bases(self, function, ctx):
        """The class of `function`, checked once, from its first compiled method."""
        cls = parent_of(function)
        if not isinstance(cls, ast.ClassDef) or not _in_classes_only(cls, ctx.tree) \
                or _first_compiled(ctx, cls) is not function:
            return  # (a class nested in classes sees the module's names only: xuance's learners' loss Cells)
        yield from self._check_class(cls, ctx)

    def _check_class(self, cls: ast.ClassDef, ctx):
        """The bases of a module-level Cell: a base whose name the module never binds (CIGF's `class
        FC(nn.Cell):` in a module that imports only `from mindspore.nn import Dropout`) makes importing the module
        fail; then its methods that are not compiled."""
        names = _names_of_module(ctx)
        if names is None:
            return
        for base in cls.bases if parent_of(cls) is ctx.tree else ():  # (a nested class's bases see its outer body)
            root = base
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id not in names and root.id not in _KNOWN \
                    and ctx.memo(_defined_names, lambda: _defined_names(ctx.walk.subtree(ctx.tree))) is not None:
                # (the whole module's scan only for a base nothing near binds: `globals()`, `exec`, `__getattr__`)
                yield self.report(ctx, root, subject=f"`{root.id}` is not defined anywhere in this module, in the "
                                  f"bases of the Cell `{cls.name}`", when="importing the module fails",
                                  error=f"`NameError: name '{root.id}' is not defined`", compiled_only=False)
        yield from self._check_host_methods(cls, ctx)

    def _check_host_methods(self, cls: ast.ClassDef, ctx):
        """The Cell's methods that are not compiled (`__init__`, helpers called from Python): a name nothing in
        the module binds fails there too, when the line runs (a course's `torch.zeros(...)` in `__init__` of a
        half-ported model, `ops.Exp()` with no `ops` imported: issue 19's fifteenth sample; ADA-CM's `torch.topk`
        in a helper method, nine right findings of the sixteenth)."""
        module_names = _names_of_module(ctx)
        if module_names is None:
            return
        notebook = (ctx.source.path or "").endswith(".ipynb")
        for method in cls.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.graph.is_compiled(method):
                continue
            nodes = ctx.walk.nodes_of(method)
            for name_id, reads in nodes.loads.items():
                if name_id in _KNOWN or name_id in module_names or name_id in nodes.stores \
                        or name_id in parameter_names(method) or notebook and name_id in _IPYTHON:
                    continue  # (most names: the module's imports, `self`, locals)
                defined = ctx.memo(_defined_names, lambda: _defined_names(ctx.walk.subtree(ctx.tree)))
                if defined is None:
                    return
                if name_id in defined:
                    continue
                for name in reads:
                    if not _in_annotation(name, method) and not ctx.graph.version_guarded(name):
                        yield self.report(ctx, name, subject=f"`{name_id}` is not defined anywhere in this module, "
                                          f"in `{cls.name}.{method.name}`",
                                          when=("building " if method.name == "__init__" else "")
                                          + "the Cell fails when this line runs",
                                          error=f"`NameError: name '{name_id}' is not defined`", compiled_only=False)


def _first_compiled(ctx, cls: ast.ClassDef):
    return next((item for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and ctx.graph.is_compiled(item)), None)


def _in_classes_only(cls: ast.ClassDef, tree: ast.Module) -> bool:
    """Is the class at the module's top level or nested only in classes (whose bodies its code does not see)?"""
    around = parent_of(cls)
    while isinstance(around, ast.ClassDef):
        around = parent_of(around)
    return around is tree


def _names_of_module(ctx) -> Optional[FrozenSet[str]]:
    return ctx.memo(_module_names, lambda: _module_names(ctx))


def _module_names(ctx) -> Optional[FrozenSet[str]]:
    """The names the module's own code binds (its stores outside any def, lambda or class body, and its defs,
    classes, imports and `except ... as` names through `if`/`try`/`with`/`for` blocks: their statements are read,
    not their expressions) and those a `global` statement declares, or None when it can bind names a reader cannot
    see (a star import)."""
    names: Set[str] = set(ctx.memo(_module_stores, lambda: _module_stores(ctx)))
    definitions, imports = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef), (ast.Import, ast.ImportFrom)
    stack: List[ast.AST] = list(ctx.tree.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, definitions):
            names.add(stmt.name)
            continue
        if isinstance(stmt, imports):
            for alias in stmt.names:
                if alias.name == "*":
                    return None
                names.add((alias.asname or alias.name).partition(".")[0])
            continue
        for handler in getattr(stmt, "handlers", ()):
            if handler.name:
                names.add(handler.name)
            stack.extend(handler.body)
        for block in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, block, ()))
        for case in getattr(stmt, "cases", ()):
            stack.extend(case.body)
    if "global" in ctx.source.text or "nonlocal" in ctx.source.text:  # (a pass over every node: only then)
        names.update(name for node in ctx.walk.order if node.__class__ in (ast.Global, ast.Nonlocal)
                     for name in node.names)
    return frozenset(names)


def _scoped_names(ctx, function) -> Optional[FrozenSet[str]]:
    """The names the function and the defs and lambdas around it bind (`_defined_names` of each, nested scopes
    included: errs towards silence; a class body between is skipped, as Python skips it), or None when one of
    them can bind names a reader cannot see. Asked once per function."""
    names: Set[str] = set()
    scope = function
    while scope is not None:
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            bound = _defined_names(ctx.walk.subtree(scope))
            if bound is None:
                return None
            names |= bound
        scope = parent_of(scope)
    return frozenset(names)


def _binding_function(ctx, name: str) -> str:
    """"`__init__` (line 114)" or "the body of class `K`": the first def or class that binds `name`, for the
    message."""
    for node in ctx.walk.order:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and name in (_defined_names(ctx.walk.subtree(node)) or ()):
            return f"`{node.name}` (line {node.lineno})"
        if isinstance(node, ast.ClassDef) and any(name in (_defined_names(ctx.walk.subtree(statement)) or ())
                                                  for statement in node.body if not isinstance(statement, _SCOPES)):
            return f"the body of class `{node.name}` (line {node.lineno})"
    return "another scope"


def _in_annotation(name: ast.Name, function) -> bool:
    """Is `name` part of an annotation (a parameter's, the return's, a local's)? MindSpore's parser does not
    evaluate them, and neither does Python under `from __future__ import annotations` (comfyui's
    `timestep: Optional[ms.Tensor]` with no `ms` imported compiles and runs: issue 19's ninth sample)."""
    child: ast.AST = name
    parent = parent_of(name)
    while parent is not None and child is not function:
        if isinstance(parent, ast.arg) and child is parent.annotation \
                or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and child is parent.returns \
                or isinstance(parent, ast.AnnAssign) and child is parent.annotation:
            return True
        child, parent = parent, parent_of(parent)
    return False


def _bound_nearby(ctx, function) -> Set[str]:
    """Names `_defined_names` finds because the function binds them (parameters, stored names, nested defs and
    classes), a module-level import, def or class does, or the module's own code stores them (its constants): most
    names graph code reads."""
    module_stores = ctx.memo(_module_stores, lambda: _module_stores(ctx))
    return parameter_names(function).union(ctx.walk.nodes_of(function).stores, ctx.graph.imports.names,
                                           module_stores)


def _module_stores(ctx) -> FrozenSet[str]:
    """The names the module's own code stores (outside its defs, lambdas and classes), read off its stretches of the
    walk between the spans of those scopes."""
    walk = ctx.walk
    order = walk.order
    position, end = walk.span(ctx.tree)
    names: Set[str] = set()
    for scope_start, scope_end, _ in walk.scopes_within(ctx.tree):
        if scope_start >= position:  # else inside a scope skipped already
            names.update(_name_stores(order, position, scope_start))
            position = scope_end
    names.update(_name_stores(order, position, end))
    return frozenset(names)


def _name_stores(order, start: int, end: int) -> List[str]:
    name_class, load_class = ast.Name, ast.Load  # read as locals (final classes: `is` tests)
    return [node.id for node in order[start:end]
            if node.__class__ is name_class and node.ctx.__class__ is not load_class]


def _own_loads(ctx, function):
    """The names `function` itself reads (not its nested defs and lambdas: each is checked on its own)."""
    # the function's stretch of the module's walk, nested scopes skipped by their spans (the defs, lambdas and
    # classes `scopes_within` lists: a set of the nodes inside them cost 1 % of a run)
    walk = ctx.walk
    order = walk.order
    position, end = walk.span(function)
    nested = []
    for scope_start, scope_end, scope in walk.scopes_within(function):
        if scope is function:
            continue
        nested.append(scope)
        if scope_start >= position:  # else inside a nested scope skipped already
            yield from _name_loads(order, position, scope_start)
            position = scope_end
    yield from _name_loads(order, position, end)
    for scope in nested:  # what a nested def evaluates where it is defined: defaults and decorators
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for default in (*scope.args.defaults, *(d for d in scope.args.kw_defaults if d is not None)):
                yield from (n for n in ast.walk(default) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def _name_loads(order, start: int, end: int):
    name_class, load_class = ast.Name, ast.Load  # read as locals (final classes: `is` tests)
    return [node for node in order[start:end]
            if node.__class__ is name_class and node.ctx.__class__ is load_class]


def _defined_names(nodes) -> Optional[FrozenSet[str]]:
    """Every name bound anywhere in the module (any scope: an over-approximation that errs towards silence), or
    None when the module can define names a reader cannot see. `nodes`: the module's walk."""
    names = set()
    tree = nodes[0]
    binding_classes, name_class, load_class = _BINDING_CLASSES, ast.Name, ast.Load  # locals: read on every node
    for node in nodes:
        kind = node.__class__
        if kind not in binding_classes:
            continue  # most nodes: one set lookup
        if kind is name_class:  # final classes: `is` tests
            if node.ctx.__class__ is not load_class:
                names.add(node.id)
            elif node.id in _DYNAMIC:
                return None
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if node.name == "__getattr__" and node in tree.body:
                return None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add((alias.asname or alias.name).partition(".")[0])
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return frozenset(names)
