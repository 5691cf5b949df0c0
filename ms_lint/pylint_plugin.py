"""`pylint --load-plugins ms_lint`: translation only.

pylint already holds an astroid tree; ms_lint re-parses the module's source with `ast` (a small fraction of
pylint's own time) and reports the engine's diagnostics under fixed message ids (`E8701`...).
Options (pylint flattens every `[tool.pylint.*]` table, hence the `ms-lint-` prefix) override `[tool.ms_lint]`.
"""
from __future__ import annotations

import bisect

from astroid import MANAGER, nodes
from pylint.checkers import BaseRawFileChecker
from pylint.constants import WarningScope

from ms_lint.catalog import all_rules, pylint_message, rule_by_code
from ms_lint.config import load, override
from ms_lint.engine import FileResult, Linter
from ms_lint.runner import few_collections
from ms_lint.settings import MODES, SYNTAX_LEVELS, TARGETS
from ms_lint.source import module_name


class _Scopes:
    """The functions and classes of an astroid module by line, for the node a message is reported on: pylint
    takes its `obj` (`Class.method`) from the node's frame."""

    def __init__(self, module):
        self.module = module
        scopes = [n for n in module.nodes_of_class((nodes.FunctionDef, nodes.ClassDef))]
        scopes.sort(key=lambda n: (n.fromlineno, -(n.tolineno or n.fromlineno)))
        self.scopes = scopes
        self.starts = [n.fromlineno for n in scopes]

    def innermost(self, row: int):
        """The innermost function or class whose lines hold `row`, else the module."""
        best = self.module
        for scope in self.scopes[:bisect.bisect_right(self.starts, row)]:
            if scope.fromlineno <= row <= (scope.tolineno or scope.fromlineno):
                best = scope  # later starts are nested deeper (or come after the earlier ones end)
        return best


def _messages():
    """Each rule at each severity (`catalog.pylint_message`); node-scoped, so pylint names the enclosing function
    or class in `obj`."""
    messages = {}
    for rule in all_rules():
        for severity in ("error", "warning", "info"):
            msgid, symbol = pylint_message(rule, severity)
            messages[msgid] = ("%s", symbol, rule.summary(), {"scope": WarningScope.NODE})
    return messages


class MsLintChecker(BaseRawFileChecker):
    name = "ms-lint"
    msgs = _messages()
    options = (
        ("ms-lint-select", {"type": "csv", "default": (), "metavar": "<codes>",
                            "help": "ms_lint rule codes or prefixes to enable (ALL for every rule)"}),
        ("ms-lint-ignore", {"type": "csv", "default": (), "metavar": "<codes>",
                            "help": "ms_lint rule codes or prefixes to disable"}),
        ("ms-lint-syntax-level", {"type": "choice", "choices": ("",) + SYNTAX_LEVELS, "default": "",
                                  "metavar": "<lax|strict>", "help": "the jit_syntax_level graph code compiles at"}),
        ("ms-lint-target", {"type": "choice", "choices": ("",) + TARGETS, "default": "",
                            "metavar": "<any|cpu|gpu|ascend>", "help": "the device target"}),
        ("ms-lint-mode", {"type": "choice", "choices": ("",) + MODES, "default": "",
                          "metavar": "<graph|pynative>", "help": "how the project runs its Cells (default: detected)"}),
    )

    def __init__(self, linter):
        super().__init__(linter)
        self._linters = {}
        self._results = []  # per-module facts of project rules, judged in close()

    def _linter_for(self, path: str) -> Linter:
        settings = load(path)
        config = self.linter.config
        settings = override(
            settings,
            select=list(config.ms_lint_select) or None,
            ignore=list(config.ms_lint_ignore) or None,
            syntax_level=config.ms_lint_syntax_level or None,
            target=config.ms_lint_target or None,
            mode=config.ms_lint_mode or None,
        )
        linter = self._linters.get(settings)
        if linter is None:
            linter = self._linters[settings] = Linter(settings)
            linter.index.judged_together = True  # the project rules see every file linted
        return linter

    def process_module(self, node) -> None:
        path = node.file
        if not path or not path.endswith((".py", ".pyi")):
            return
        with node.stream() as stream:
            data = stream.read()
        with few_collections():  # else our allocations trigger collections that scan pylint's astroid trees
            result = self._linter_for(path).lint_bytes(data, path)
        for message in result.internal_errors:
            self.linter.add_message("astroid-error", args=(path, message), line=1)
        if result.diagnostics:
            scopes = _Scopes(node)
            for d in result.diagnostics:
                self._add(d, scopes)
        if result.facts:
            self._results.append(FileResult(path, facts=result.facts))

    def _add(self, d, scopes: "_Scopes") -> None:
        rule = rule_by_code(d.code)
        assert rule is not None  # diagnostics come from the catalog's rules
        msgid, _ = pylint_message(rule, d.severity)
        self.add_message(msgid, line=d.row, node=scopes.innermost(d.row), col_offset=d.column, end_lineno=d.end_row,
                         end_col_offset=d.end_column, args=(d.message,))

    def close(self) -> None:
        """Judge the project rules once every module was seen. Under -j, pylint closes the checker in the worker
        after every file: there the facts travel through get_map_data and are judged in reduce_map_data."""
        config = self.linter.config
        if config.jobs > 1 and not config.from_stdin:
            return
        self._judge()

    def _judge(self) -> None:
        if not self._results:
            return
        results, self._results = self._results, []
        scopes: dict = {}
        for d in self._linter_for(results[0].path).judge(results):
            self.linter.set_current_module(module_name(d.path), d.path)
            if d.path not in scopes:
                scopes[d.path] = _Scopes(MANAGER.ast_from_file(d.path, module_name(d.path), source=True))
            self._add(d, scopes[d.path])

    def get_map_data(self):
        data, self._results = [(r.path, r.facts) for r in self._results], []
        return data

    def reduce_map_data(self, linter, data) -> None:
        self._results = [FileResult(path, facts=facts) for chunk in data for path, facts in chunk]
        self._judge()
