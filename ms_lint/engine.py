"""The engine: selects the rules for each module, builds its analyses, runs the hooks, filters suppressions.

Front ends call `Linter.lint_path` (CLI, pylint) or `Linter.lint_tree` (flake8 hands over its own `ast` tree) and
translate the returned diagnostics; nothing else. Project rules' facts are judged together by `Linter.judge`.
"""
from __future__ import annotations

import ast
import functools
import os
import traceback
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Set, Tuple

from ms_lint import suppression
from ms_lint.analysis import compile_context, module_reach, projects, run_mode, script_directories
from ms_lint.analysis.compile_context import CompileContext
from ms_lint.analysis.graph import GraphScope
from ms_lint.analysis.per_project import Keep
from ms_lint.analysis.project import ProjectIndex
from ms_lint.catalog import all_rules, pylint_message
from ms_lint.dispatch import Dispatch, NeedleSearch, calls_only, hooked_kinds, run_hooks
from ms_lint.files import discover
from ms_lint.notebook import is_notebook
from ms_lint.rule import Context, Diagnostic, ProjectFacts, Rule
from ms_lint.settings import Settings
from ms_lint.source import SourceError, SourceFile, decode, package_root, parse, read


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


class Linter:
    def __init__(self, settings: Settings = Settings(), index: Optional[ProjectIndex] = None):
        self.settings = settings
        self.index = index or ProjectIndex()
        self.rules = [rule() for rule in all_rules()]
        self._selection: Optional[List[Rule]] = None
        self._calls_only = frozenset(rule for rule in self.rules if calls_only(type(rule)))
        # the rules that may run in a module -> its dispatch tables (few combinations: built once, not per module)
        self._dispatch: Dict[Tuple[Rule, ...], Dispatch] = {}
        self._contexts: Dict[str, CompileContext] = {}  # by path: whether a module runs compiled is its own

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
        tree = self.index.kept.take(source)  # parsed already if another module's lookup read it first
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
        self.index.importer_root = package_root(source.path)  # its imports are looked up as it runs
        graph = ctx = None
        try:
            compile_context = self.compile_context(source.path)
            # the walk notes where the nodes are that the rules which may run here look at; the needles of module
            # rules are searched now (MSL065 hooks every name), the others' once their scope is known
            has_needles = NeedleSearch(source.text, suppression.lowered_text(source.text))
            hooked = hooked_kinds(tuple(rule for rule in rules if rule.scope != "module"
                                         or rule in self._calls_only or has_needles(rule)))
            graph = GraphScope(tree, source.module_name, source.path, self.index, self.settings.syntax_level,
                               source.text, compile_context.syntax_level, hooked)
            ctx = Context(source, tree, graph, self.settings, compile_context)
            for diagnostic in self._run_hooks(ctx, rules, has_needles, result):
                if suppressions is None:
                    suppressions = suppression.parse(source.text, tree)
                if not self._suppressed(suppressions, diagnostic):
                    result.diagnostics.append(diagnostic)
            # which line suppressions the module's own findings used (MSL098 collects the others)
            ctx.suppressions_used = suppressions.used if suppressions is not None else set()
            for rule in rules:
                if hasattr(rule, "collect"):
                    facts = self._collect(rule, ctx, result)
                    if facts:
                        result.facts[rule.code] = facts
            # the judges see the files connected by imports together (`projects`); a package that star-imports
            # (`from .random import *`) connects its importers to what it re-exports, facts of its own or not
            if result.facts or graph.imports.stars:
                result.facts[projects.IMPORTS] = projects.imported_files(ctx)
        except RecursionError:
            result.internal_errors.append(f"{source.path}: the module is nested too deeply to analyse")
        finally:
            self.index.consulted = self.index.importer_root = None
            result.dependencies.pop(source.module_name, None)
            if graph is not None:
                self.index.release(graph.summary)  # the project index keeps facts, never a linted tree
                (ctx or graph).release()
        result.diagnostics.sort(key=Diagnostic.sort_key)
        source.forget_lines()  # (the report splits the text again for the few files it shows)
        return result

    def compile_context(self, path: str) -> CompileContext:
        """What the project sets (syntax level, device target), unless the options already say both, and whether
        it runs its Cells in PyNative (`run_mode`), unless the `mode` option says (once per directory)."""
        path = os.path.abspath(path)
        context = self._contexts.get(path)
        if context is None:
            context = self._compile_context(path)
            if self.settings.config_path or os.path.exists(path):  # (not an unsaved buffer's guess)
                self._contexts[path] = context
        return context

    def _compile_context(self, path: str) -> CompileContext:
        if self.settings.config_path:
            root = os.path.dirname(self.settings.config_path)
        elif os.path.exists(path):
            root = package_root(path)
        else:
            return CompileContext()  # in-memory source with no project around it
        context = CompileContext() if self.settings.syntax_level and self.settings.target \
            else project_compile_context(root, self.index.kept.keep)
        mode = self._run_mode(path, root)
        return replace(context, pynative_source=mode.pynative, graph_only_source=mode.graph_only) \
            if mode.pynative or mode.graph_only else context

    def _run_mode(self, path: str, root: str) -> run_mode.ProjectMode:
        if self.settings.mode is not None:
            said = run_mode.Evidence(self.settings.config_path or "", 0, run_mode.OPTION)
            return run_mode.ProjectMode(said, None) if self.settings.mode == "pynative" \
                else run_mode.ProjectMode(None, said)
        if not self.settings.config_path:
            root = run_mode.project_root(path)
        notebook = self._notebook_mode(path, root) if is_notebook(path) else None
        mode = notebook if notebook is not None else run_mode.of_project(root, project_files, self.index.kept.keep)
        if mode.pynative is not None and mode.pynative.kind in (run_mode.UNSELECTED, run_mode.NOTEBOOK) \
                and self.settings.syntax_level:
            return run_mode.ProjectMode()  # the options say at what level the Cells compile: they are compiled
        if notebook is None and mode.compiles and mode.pynative is None:
            # a directory of scripts, or a module, may still run in PyNative
            beside = script_directories.runs_in_pynative(path, root, project_files) \
                or module_reach.runs_in_pynative(path, root, project_files, self.index.kept.keep)
            if beside is not None:
                return run_mode.ProjectMode(beside)
        return mode

    def _notebook_mode(self, path: str, root: str) -> Optional[run_mode.ProjectMode]:
        """How a notebook runs its Cells, as a program of its own (`module_reach.of_notebook`); None when it cannot
        be read (then the project's mode stands, and the lint reports the notebook as unreadable)."""
        try:
            code = read(path).text.encode()
        except SourceError:
            return None
        return module_reach.of_notebook(path, code, root, project_files, self.index.kept.keep)

    def cells_and_level(self, tree: ast.Module, source: SourceFile) -> Tuple[Set[str], str]:
        """The names of the Cell classes at the top of a module and the syntax level its graph code compiles at
        (what `--validate` needs to know of a module it builds)."""
        graph = GraphScope(tree, source.module_name, source.path, self.index, self.settings.syntax_level,
                           source.text, self.compile_context(source.path).syntax_level)
        try:
            return {node.name for node in graph.cells if node in tree.body}, graph.level
        finally:
            graph.release()  # its parent links

    def judge(self, results: List[FileResult]) -> List[Diagnostic]:
        """Project rules over the facts of every module in `results`; suppression comments still apply."""
        facts = {r.path: r.facts for r in results if r.facts}
        groups = projects.connected_groups({path: f.get(projects.IMPORTS, []) for path, f in facts.items()})  # type: ignore[misc]
        judges = [rule for rule in self.rules if hasattr(rule, "judge")]
        suppressions: Dict[str, suppression.Suppressions] = {}
        kept = self._judged(judges, facts, groups, results, suppressions, last=False)
        # then the rules that judge suppression comments, with what the project findings' suppressions used
        for path, held in suppressions.items():
            for rule in judges:
                if getattr(rule, "judges_suppressions", False) and rule.code in facts.get(path, {}):
                    known: Dict[str, Any] = facts[path][rule.code]  # type: ignore[assignment]
                    facts[path] = {**facts[path], rule.code: {**known, "used": sorted(
                        {*map(tuple, known["used"]), *held.used})}}
        kept += self._judged(judges, facts, groups, results, suppressions, last=True)
        return sorted(kept, key=Diagnostic.sort_key)

    def _judged(self, judges, facts, groups, results, suppressions, last: bool) -> List[Diagnostic]:
        """The findings of the project rules in `judges` that judge suppressions (`last`) or do not, minus the
        suppressed ones (whose Suppressions, by path, are kept in `suppressions`)."""
        found: List[Diagnostic] = []
        for rule in judges:
            if getattr(rule, "judges_suppressions", False) != last:
                continue
            for group in groups:  # a repository of independent projects: each judged apart
                modules = {path: facts[path][rule.code] for path in group if rule.code in facts[path]}
                if modules:
                    imports = {path: facts[path].get(projects.IMPORTS, []) for path in group}
                    found.extend(self._judge(rule, modules, imports, results))
        kept = []
        for diagnostic in found:
            if diagnostic.path not in suppressions:
                suppressions[diagnostic.path] = _suppressions_of(diagnostic.path)
            if not self._suppressed(suppressions[diagnostic.path], diagnostic):
                kept.append(diagnostic)
        return kept

    # ----- implementation -------------------------------------------------------------------------------------
    def _judge(self, rule: Any, modules: Dict[str, Any], imports: Dict[str, Any],
               results: List[FileResult]) -> List[Diagnostic]:
        project = ProjectFacts(modules, self.settings, functools.partial(self.compile_context, next(iter(modules))),
                               imports)
        try:
            return [d for d in rule.judge(project) if self.settings.is_selected(d.code, rule.severity, d.path)]
        except Exception:  # noqa: BLE001 - reported like any rule crash
            results[0].internal_errors.append(f"internal error in {rule.code} ({rule.name}) judging the "
                                              f"project:\n{traceback.format_exc()}")
            return []

    def _suppressed(self, suppressions: suppression.Suppressions, diagnostic: Diagnostic) -> bool:
        return suppressions.suppresses(diagnostic.row, (diagnostic.code, diagnostic.symbol,
                                                        *_pylint_names(type(self._rule(diagnostic.code)))))

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

    def _run_hooks(self, ctx: Context, rules: List[Rule], has_needles: NeedleSearch,
                   result: FileResult):
        """The hooks of the rules whose scope the module has (Cell classes, graph code) and whose needles its text
        holds; for a rule that looks only at calls of a few names, the needles are searched when such a call is
        met."""
        graph = ctx.graph
        present = {"module", *(("cell",) if graph.cells else ()), *(("graph",) if graph.compiled else ())}
        active = tuple(rule for rule in rules
                       if rule.scope in present and (rule in self._calls_only or has_needles(rule)))
        dispatch = self._dispatch.get(active)
        if dispatch is None:
            dispatch = self._dispatch[active] = Dispatch(active)
        if not dispatch.kinds:
            return ()
        return run_hooks(ctx, dispatch, has_needles, lambda rule, node: _report_crash(rule, node, ctx, result))

    @staticmethod
    def _collect(rule: Any, ctx: Context, result: FileResult):  # a project rule: it defines `collect`
        """A project rule's facts about the module. A crashing rule must not take the run down: the crash is
        reported and linting goes on (hooks are run the same way, inline, in `dispatch.run_hooks`)."""
        try:
            return rule.collect(ctx)
        except RecursionError:
            return None  # pathologically nested expression: the rule gives up
        except Exception:  # noqa: BLE001 - any bug in a rule is reported, never raised
            _report_crash(rule, ctx.tree, ctx, result)
            return None


_PYLINT_NAMES: Dict[str, Tuple[str, ...]] = {}


def _pylint_names(rule) -> Tuple[str, ...]:
    """The pylint ids and symbols a suppression comment may name a rule's findings by, at any severity."""
    names = _PYLINT_NAMES.get(rule.code)
    if names is None:
        names = _PYLINT_NAMES[rule.code] = tuple(
            name for severity in ("error", "warning", "info") for name in pylint_message(rule, severity))
    return names


def _suppressions_of(path: str) -> suppression.Suppressions:
    try:
        source = read(path)
        return suppression.parse(source.text, parse(source))
    except SourceError:
        return suppression.Suppressions()


def _report_crash(rule: Rule, node: ast.AST, ctx: Context, result: FileResult) -> None:
    result.internal_errors.append(f"{ctx.path}:{getattr(node, 'lineno', 0)}: internal error in {rule.code} "
                                  f"({rule.name}):\n{traceback.format_exc()}")


def project_compile_context(root: str, keep: Optional[Keep] = None) -> CompileContext:
    """What the project under `root` sets (syntax level, device target), scanned once per process over the files
    a run would lint there (its pyproject.toml's excludes apply)."""
    return compile_context.of_project(root, project_files, keep)


def project_files(root: str) -> List[str]:
    """The files under `root` as a run configured there would find them: what the project scans read."""
    return discover([root], Settings(config_path=os.path.join(root, "pyproject.toml")))
