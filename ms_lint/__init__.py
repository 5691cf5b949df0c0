"""ms_lint: a static linter for MindSpore GRAPH_MODE pitfalls.

`pylint --load-plugins ms_lint` calls `register`; `lint_source` and `lint_paths` are the library API.
The linter never imports MindSpore.
"""
from __future__ import annotations

__version__ = "0.1.0"


def register(linter) -> None:
    """pylint plugin entry point."""
    from ms_lint.pylint_plugin import MsLintChecker

    linter.register_checker(MsLintChecker(linter))


def lint_source(text: str, path: str = "<string>", settings=None):
    """Diagnostics for one module's source text."""
    from ms_lint.engine import Linter
    from ms_lint.settings import Settings
    from ms_lint.source import SourceFile, module_name

    linter = Linter(settings or Settings())
    source = SourceFile(path=path, text=text, module_name=module_name(path) if path != "<string>" else "")
    return linter.lint_source(source).diagnostics


def lint_paths(paths, settings=None):
    """FileResults for files and directories, as `ms-lint check` finds them."""
    from ms_lint.engine import Linter
    from ms_lint.files import discover
    from ms_lint.settings import Settings

    settings = settings or Settings()
    linter = Linter(settings)
    return [linter.lint_path(path) for path in discover(paths, settings)]
