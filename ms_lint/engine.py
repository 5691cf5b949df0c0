"""The engine: rule discovery, one walk per module, suppressions, selection and severities.

Front ends call `Linter.lint_path` (CLI, pylint) or `Linter.lint_tree` (flake8 hands over its own `ast` tree) and
translate the returned diagnostics; nothing else.
"""
from __future__ import annotations

import ast
import bisect
import functools
import importlib
import itertools
import os
import pkgutil
import traceback
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple, Type

from ms_lint import rules as rule_modules, suppression
from ms_lint.analysis import compile_context
from ms_lint.config import Settings
from ms_lint.analysis.compile_context import CompileContext
from ms_lint.analysis.graph import GraphScope, parent_of
from ms_lint.analysis.project import ProjectIndex
from ms_lint.rule import Diagnostic, Edit, Fix, ProjectFacts, Rule
from ms_lint.source import SourceError, SourceFile, decode, package_root, parse, read


@functools.lru_cache(maxsize=None)
def all_rules() -> Tuple[Type[Rule], ...]:
    """Every Rule subclass defined in a module of `ms_lint.rules`, by code. No registry to keep."""
    found = []
    for info in pkgutil.iter_modules(rule_modules.__path__):
        module = importlib.import_module(f"{rule_modules.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value.__module__ == module.__name__ \
                    and getattr(value, "code", None):
                found.append(value)
    codes = [rule.code for rule in found]
    duplicates = {code for code in codes if codes.count(code) > 1}
    if duplicates:
        raise RuntimeError(f"rule codes defined twice: {sorted(duplicates)}")
    return tuple(sorted(found, key=lambda rule: rule.code))


def rule_by_code(code: str) -> Optional[Type[Rule]]:
    for rule in all_rules():
        if rule.code == code or rule.name == code:
            return rule
    return None


def pylint_id(rule: Type[Rule]) -> str:
    """`E8701` for MSL001 (error), `W8740` for MSL040 (warning)... `C` for info rules. Level rules are `W`."""
    letter = {"error": "E", "warning": "W", "info": "C", "level": "W"}[rule.severity]
    return f"{letter}87{rule.code[-2:]}"


@dataclass
class FileResult:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    source: Optional[SourceFile] = None
    internal_errors: List[str] = field(default_factory=list)
    # other modules of the project the analysis read (name -> path, None if not found): the cache revalidates them
    dependencies: Dict[str, Optional[str]] = field(default_factory=dict)
    # project rules' facts about this module: rule code -> JSON-able facts (see Rule.collect)
    facts: Dict[str, object] = field(default_factory=dict)


class Context:
    """What a rule sees of the module being linted."""

    def __init__(self, source: SourceFile, tree: ast.Module, graph: GraphScope, settings: Settings,
                 compile_context: CompileContext = CompileContext()):
        self.source = source
        self.tree = tree
        self.graph = graph
        self.settings = settings
        self.compile_context = compile_context

    @property
    def target(self) -> str:
        """"ascend" | "gpu" | "cpu" | "any": the option, else what the project sets, else any."""
        return self.settings.target or self.compile_context.target or "any"

    def ascend_possible(self) -> bool:
        return self.target in ("ascend", "any")

    @property
    def path(self) -> str:
        return self.source.path

    @staticmethod
    def parent(node: ast.AST) -> Optional[ast.AST]:
        return parent_of(node)

    def position(self, row: int, byte_column: int) -> Tuple[int, int]:
        return row, self.source.char_column(row, byte_column)

    def start(self, node: ast.AST) -> Tuple[int, int]:
        return self.position(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> Tuple[int, int]:
        return self.position(node.end_lineno, node.end_col_offset)

    def text(self, node: ast.AST) -> str:
        """The source text of a node, exactly as written."""
        (row, column), (end_row, end_column) = self.start(node), self.end(node)
        lines = self.source.lines
        if row == end_row:
            return lines[row - 1][column:end_column]
        return "\n".join([lines[row - 1][column:], *lines[row:end_row - 1], lines[end_row - 1][:end_column]])

    def replace(self, node: ast.AST, content: str) -> Edit:
        return Edit(content, self.start(node), self.end(node))

    def insert(self, row: int, column: int, content: str) -> Edit:
        return Edit(content, (row, column), (row, column))

    def indentation(self, node: ast.AST) -> str:
        line = self.source.line(node.lineno)
        return line[: len(line) - len(line.lstrip())]

    def diagnostic(self, rule: Rule, node: ast.AST, message: str, severity: str, fix: Optional[Fix]) -> Diagnostic:
        (row, column), (end_row, end_column) = self.start(node), self.end(node)
        return Diagnostic(
            code=rule.code,
            symbol=rule.name,
            message=message,
            severity=self.settings.severity_of(rule.code, severity),
            path=self.source.path,
            row=row,
            column=column,
            end_row=end_row,
            end_column=end_column,
            fix=fix,
        )


class Linter:
    def __init__(self, settings: Settings = Settings(), index: Optional[ProjectIndex] = None):
        self.settings = settings
        self.index = index or ProjectIndex()
        self.rules = [rule() for rule in all_rules()]
        self._selection: Optional[List[Rule]] = None
        self._calls_only = frozenset(rule for rule in self.rules if _calls_only(type(rule)))
        # the rules that may run in a module -> its dispatch tables (few combinations: built once, not per module)
        self._dispatch: Dict[Tuple[Rule, ...], "_Dispatch"] = {}

    # ----- entry points ---------------------------------------------------------------------------------------
    def lint_path(self, path: str) -> FileResult:
        try:
            source = read(path)
        except SourceError as error:
            return self._source_error(path, error)
        return self.lint_source(source)

    def lint_bytes(self, data: bytes, path: str) -> FileResult:
        try:
            source = decode(data, path)
        except SourceError as error:
            return self._source_error(path, error)
        return self.lint_source(source)

    def lint_source(self, source: SourceFile) -> FileResult:
        tree = self.index.take_tree(source)  # parsed already if another module's lookup read it first
        if tree is None:
            try:
                tree = parse(source)
            except SourceError as error:
                return self._source_error(source.path, error, source)
        return self.lint_tree(tree, source)

    def lint_tree(self, tree: ast.Module, source: SourceFile) -> FileResult:
        result = FileResult(source.path, source=source)
        rules = self._selected(source.path)
        if not rules:
            return result
        # comments are tokenized only when a diagnostic needs them (most modules have none), unless one may skip
        # the whole file
        suppressions = suppression.parse(source.text, tree) if suppression.may_skip_file(source.text) else None
        if suppressions is not None and suppressions.skip_file:
            return result
        self.index.add_file(source.path)
        self.index.consulted = result.dependencies
        graph = None
        try:
            compile_context = self.compile_context(source.path)
            # the walk notes where the nodes are that the rules which may run here look at (`_walk`); the needles
            # of module rules are searched now (MSL065 hooks every name), the others' once their scope is known
            has_needles = _NeedleSearch(source.text)
            hooked = _hooked_kinds(tuple(rule for rule in rules if rule.scope != "module"
                                         or rule in self._calls_only or has_needles(rule)))
            graph = GraphScope(tree, source.module_name, source.path, self.index, self.settings.syntax_level,
                               source.text, compile_context.syntax_level, hooked)
            ctx = Context(source, tree, graph, self.settings, compile_context)
            for diagnostic in self._walk(ctx, rules, has_needles, result):
                if suppressions is None:
                    suppressions = suppression.parse(source.text, tree)
                if not self._suppressed(suppressions, diagnostic):
                    result.diagnostics.append(diagnostic)
            for rule in rules:
                if hasattr(rule, "collect"):
                    facts = self._collect(rule, ctx, result)
                    if facts:
                        result.facts[rule.code] = facts
        except RecursionError:
            result.internal_errors.append(f"{source.path}: the module is nested too deeply to analyse")
        finally:
            self.index.consulted = None
            result.dependencies.pop(source.module_name, None)
            if graph is not None:
                self.index.release(graph.summary)  # the project index keeps facts, never a linted tree
                graph.release()
        result.diagnostics.sort(key=Diagnostic.sort_key)
        return result

    def compile_context(self, path: str) -> CompileContext:
        """What the project sets (syntax level, device target), unless the options already say both."""
        if self.settings.syntax_level and self.settings.target:
            return CompileContext()
        if self.settings.config_path:
            root = os.path.dirname(self.settings.config_path)
        elif os.path.exists(path):
            root = package_root(path)
        else:
            return CompileContext()  # in-memory source with no project around it
        return compile_context.of_project(root)

    def judge(self, results: List[FileResult]) -> List[Diagnostic]:
        """Project rules over the facts of every module in `results`; suppression comments still apply."""
        found: List[Diagnostic] = []
        for rule in self.rules:
            if not hasattr(rule, "judge"):
                continue
            modules = {r.path: r.facts[rule.code] for r in results if rule.code in r.facts}
            if not modules:
                continue
            project = ProjectFacts(modules, self.settings, functools.partial(self.compile_context, next(iter(modules))))
            try:
                found.extend(d for d in rule.judge(project) if self.settings.is_selected(d.code, rule.severity,
                                                                                        d.path))
            except Exception:  # noqa: BLE001 - reported like any rule crash
                results[0].internal_errors.append(f"internal error in {rule.code} ({rule.name}) judging the "
                                                  f"project:\n{traceback.format_exc()}")
        suppressions: Dict[str, suppression.Suppressions] = {}
        kept = []
        for diagnostic in found:
            if diagnostic.path not in suppressions:
                suppressions[diagnostic.path] = _suppressions_of(diagnostic.path)
            if not self._suppressed(suppressions[diagnostic.path], diagnostic):
                kept.append(diagnostic)
        return sorted(kept, key=Diagnostic.sort_key)

    # ----- implementation -------------------------------------------------------------------------------------
    def _suppressed(self, suppressions: suppression.Suppressions, diagnostic: Diagnostic) -> bool:
        rule_id = pylint_id(type(self._rule(diagnostic.code)))
        return suppressions.suppresses(diagnostic.row, (diagnostic.code, diagnostic.symbol, rule_id))

    def _rule(self, code: str) -> Rule:
        return next(rule for rule in self.rules if rule.code == code)

    def _selected(self, path: str) -> List[Rule]:
        # per-file-ignores only switch rules off: without them the selection is the same for every file
        if self._selection is None:
            self._selection = [rule for rule in self.rules if self.settings.is_selected(rule.code, rule.severity)]
        if not self.settings.per_file_ignores:
            return self._selection
        return [rule for rule in self._selection if self.settings.is_selected(rule.code, rule.severity, path)]

    def _source_error(self, path: str, error: SourceError, source: Optional[SourceFile] = None) -> FileResult:
        result = FileResult(path, source=source)
        for rule in self._selected(path):
            handler = getattr(rule, "for_source_error", None)
            if handler is not None:
                diagnostic = handler(error, path)
                result.diagnostics.append(replace(diagnostic, severity=self.settings.severity_of(
                    rule.code, diagnostic.severity)))
        return result

    def _walk(self, ctx: Context, rules: List[Rule], has_needles: "_NeedleSearch",
              result: FileResult) -> Iterable[Diagnostic]:
        """The hooks of the selected rules on the parts of the module they look at, in preorder (the module was
        walked once, iteratively, by GraphScope: no recursion limit)."""
        graph = ctx.graph
        # a rule runs where its scope is (Cell classes, graph code) and only if the text has one of its needles;
        # for a rule that looks only at calls of a few names, the needles are searched when such a call is met
        present = {"module", *(("cell",) if graph.cells else ()), *(("graph",) if graph.compiled else ())}
        active = tuple(rule for rule in rules
                       if rule.scope in present and (rule in self._calls_only or has_needles(rule)))
        dispatch = self._dispatch.get(active)
        if dispatch is None:
            dispatch = self._dispatch[active] = _Dispatch(active)
        if not dispatch.kinds:
            return
        tables = dispatch.tables_for(has_needles)
        roots = []
        if "module" in dispatch.scopes:
            roots = [(ctx.tree, False, False)]
        else:
            if "cell" in dispatch.scopes:
                for cell in graph.cells.values():  # outer classes come first: a nested Cell is walked once
                    if not _inside_any(cell.node, roots):
                        roots.append((cell.node, False, True))
            if "graph" in dispatch.scopes:
                roots.extend((function, True, graph.cell_of(function) is not None)
                             for function in graph.compiled if not _inside_any(function, roots))
        order = graph.order  # the module's nodes in preorder: no second walk
        hooked = graph.positions_of(dispatch.kinds)  # where the nodes the rules look at are (the walk noted them)
        for root, compiled, in_cell in roots:
            for start, end, in_cell, compiled in _runs_of(graph, root, compiled, in_cell):
                table = tables[in_cell, compiled]
                if not table:
                    continue  # no selected rule looks at this kind of code
                first = bisect.bisect_left(hooked, start)
                for position in itertools.islice(hooked, first, bisect.bisect_left(hooked, end, first)):
                    node = order[position]
                    hooks = table.get(node.__class__)
                    if hooks is None:
                        continue
                    if hooks.__class__ is _CallHooks:
                        hooks = hooks.of(node, graph)
                    for rule, method in hooks:
                        try:  # a crashing rule must not take the run down (inline: millions of hook calls)
                            found = method(node, ctx)
                            found = list(found) if found else None
                        except RecursionError:
                            continue  # pathologically nested expression: the rule gives up on this node
                        except Exception:  # noqa: BLE001 - any bug in a rule is reported, never raised
                            _report_crash(rule, node, ctx, result)
                            continue
                        if found:
                            yield from found

    @staticmethod
    def _collect(rule: Rule, ctx: Context, result: FileResult):
        """A project rule's facts about the module. A crashing rule must not take the run down: the crash is
        reported and linting goes on (hooks are run the same way, inline, in `_walk`)."""
        try:
            return rule.collect(ctx)
        except RecursionError:
            return None  # pathologically nested expression: the rule gives up
        except Exception:  # noqa: BLE001 - any bug in a rule is reported, never raised
            _report_crash(rule, ctx.tree, ctx, result)
            return None


Hooks = Tuple[Tuple[Rule, object], ...]  # (rule, bound visit method), in rule order


class _Dispatch:
    """The hooks of a set of rules that may run in a module, by node class, for each of the four cases (in a
    Cell class or not, in graph code or not). Built once per set of rules, not once per module."""

    def __init__(self, active: Tuple[Rule, ...]):
        hooks_of: Dict[type, List[Tuple[Rule, object]]] = {}
        for rule in active:
            for node_class, method in _hooks(type(rule)):
                hooks_of.setdefault(node_class, []).append((rule, getattr(rule, method)))
        self.kinds = tuple(hooks_of)
        self.scopes = {rule.scope for rule in active}
        # (in_cell, compiled) -> node class -> its hooks; a call's hooks, when some rule declares the names it
        # looks for, are chosen per call (`_CallHooks`: the needle searches belong to the module)
        self._tables = {(in_cell, compiled): {kind: _CallTable(found) if kind is ast.Call and any(
                                                  rule.call_names is not None for rule, _ in found) else found
                                              for kind, hooks in hooks_of.items()
                                              if (found := tuple(h for h in hooks if _runs(h[0].scope, in_cell,
                                                                                           compiled)))}
                        for in_cell in (False, True) for compiled in (False, True)}

    def tables_for(self, has_needles: Callable[[Rule], bool]) -> Dict[Tuple[bool, bool], Dict[type, object]]:
        """The tables for one module: its calls' hooks also depend on the needles its text holds."""
        tables = {}
        for case, table in self._tables.items():
            calls = table.get(ast.Call)
            if calls.__class__ is _CallTable:
                table = {**table, ast.Call: _CallHooks(calls, has_needles)}
            tables[case] = table
        return tables


class _CallTable:
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


class _CallHooks:
    """A `_CallTable` in one module: the hooks for each call, a call-only rule's only if the module's text holds
    one of its needles."""

    __slots__ = ("table", "_has_needles", "_chosen")

    def __init__(self, table: _CallTable, has_needles: Callable[[Rule], bool]):
        self.table = table
        self._has_needles = has_needles
        self._chosen: Dict[Tuple[str, ...], Hooks] = {}  # names -> the hooks, in order

    def of(self, call: ast.Call, graph: GraphScope) -> Hooks:
        names = graph.names_called(call.func)
        table = self.table
        if table.wanted.isdisjoint(names):
            return table.unfiltered  # most calls: no rule that declares names looks for them
        chosen = self._chosen.get(names)
        if chosen is None:
            chosen = self._chosen[names] = tuple(hook for hook in table.candidates(names)
                                                 if self._has_needles(hook[0]))
        return chosen


class _NeedleSearch:
    """Does a module's text hold one of a rule's needles (`Rule.needles`)? Each rule's search done once."""

    __slots__ = ("text", "_found")

    def __init__(self, text: str):
        self.text = text
        self._found: Dict[Rule, bool] = {}

    def __call__(self, rule: Rule) -> bool:
        found = self._found.get(rule)
        if found is None:
            found = self._found[rule] = not rule.needles or any(needle in self.text for needle in rule.needles)
        return found


def _calls_only(rule: Type[Rule]) -> bool:
    """Does the rule look only at calls of the names it declares (`Rule.call_names`)?"""
    return rule.call_names is not None and all(kind is ast.Call for kind, _ in _hooks(rule))


def _runs_of(graph: GraphScope, root: ast.AST, compiled: bool, in_cell: bool) -> List[Tuple[int, int, bool, bool]]:
    """The stretches of `graph.order` under `root` between the starts and ends of its defs, lambdas and classes,
    with whether they are in a Cell class and in graph code: (start, end, in_cell, compiled). A def, lambda or
    class is itself in its own stretch. A def is graph code if it is compiled (nesting does not make it so); a
    class is a Cell's if it is a Cell."""
    runs = []
    start, end = graph.span(root)
    enclosing = [(end, compiled, in_cell)]  # the scopes open at `position`: their end and flags, innermost last
    position = start
    for scope_start, scope_end, scope in graph.scopes_within(root):
        while enclosing[-1][0] <= scope_start:  # scopes that ended before this one starts
            closed_end, compiled, in_cell = enclosing.pop()
            runs.append((position, closed_end, in_cell, compiled))
            position = closed_end
        _, compiled, in_cell = enclosing[-1]
        runs.append((position, scope_start, in_cell, compiled))
        position = scope_start
        if scope.__class__ is ast.ClassDef:
            in_cell = scope in graph.cells
        else:
            compiled = scope in graph.compiled
        enclosing.append((scope_end, compiled, in_cell))
    while enclosing:
        closed_end, compiled, in_cell = enclosing.pop()
        runs.append((position, closed_end, in_cell, compiled))
        position = closed_end
    return [run for run in runs if run[0] < run[1]]


def _report_crash(rule: Rule, node: ast.AST, ctx: Context, result: FileResult) -> None:
    result.internal_errors.append(f"{ctx.path}:{getattr(node, 'lineno', 0)}: internal error in {rule.code} "
                                  f"({rule.name}):\n{traceback.format_exc()}")


def _runs(scope: str, in_cell: bool, compiled: bool) -> bool:
    return scope == "module" or (scope == "cell" and in_cell) or (scope == "graph" and compiled)


@functools.lru_cache(maxsize=256)  # few combinations of rules: not rebuilt for every module
def _hooked_kinds(rules: Tuple[Rule, ...]) -> FrozenSet[type]:
    return frozenset(kind for rule in rules for kind, _ in _hooks(type(rule)))


@functools.lru_cache(maxsize=None)
def _hooks(rule: Type[Rule]) -> Tuple[Tuple[type, str], ...]:
    return tuple(rule.hooks())


def _suppressions_of(path: str) -> suppression.Suppressions:
    try:
        source = read(path)
        return suppression.parse(source.text, parse(source))
    except SourceError:
        return suppression.Suppressions()


def _inside_any(function: ast.AST, roots) -> bool:
    node = parent_of(function)
    root_nodes = {id(root) for root, _, _ in roots}
    while node is not None:
        if id(node) in root_nodes:
            return True
        node = parent_of(node)
    return False
