"""`flake8 --select MSL`: translation only. flake8 hands over its own `ast` tree and the file's lines."""
from __future__ import annotations

from typing import Dict, List, Optional

from ms_lint import __version__
from ms_lint.config import load, override
from ms_lint.engine import Linter
from ms_lint.settings import MODES, SYNTAX_LEVELS, TARGETS, Settings
from ms_lint.source import SourceFile, module_name


class Flake8Plugin:
    name = "ms-lint"
    version = __version__
    _options: Dict[str, Optional[str]] = {}
    _linters: Dict[Settings, Linter] = {}

    def __init__(self, tree, filename: str, lines: List[str]):
        self.tree = tree
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, manager) -> None:
        manager.add_option("--ms-lint-syntax-level", choices=SYNTAX_LEVELS, parse_from_config=True,
                           help="the jit_syntax_level graph code compiles at (default: detected, else lax)")
        manager.add_option("--ms-lint-target", choices=TARGETS, parse_from_config=True,
                           help="the device target (default: detected, else any)")
        manager.add_option("--ms-lint-mode", choices=MODES, parse_from_config=True,
                           help="how the project runs its Cells (default: detected)")

    @classmethod
    def parse_options(cls, options) -> None:
        cls._options = {"syntax_level": options.ms_lint_syntax_level, "target": options.ms_lint_target,
                        "mode": options.ms_lint_mode}

    def _linter(self) -> Linter:
        settings = override(load(self.filename), **self._options)
        linter = Flake8Plugin._linters.get(settings)
        if linter is None:
            linter = Flake8Plugin._linters[settings] = Linter(settings)
        return linter

    def run(self):
        text = "".join(self.lines)
        source = SourceFile(path=self.filename, text=text, module_name=module_name(self.filename))
        linter = self._linter()
        result = linter.lint_tree(self.tree, source)
        # flake8 sees one file at a time: project rules judge this file's facts alone
        for d in sorted(result.diagnostics + linter.judge([result]), key=lambda d: d.sort_key()):
            # flake8 adds 1 to the column it is given, as the CLI does.
            yield d.row, d.column, f"{d.code} [{d.severity}] {d.message}", type(self)
