"""Settings: what a run is configured with (the rules selected, severities, syntax level, target, excludes).

Plain data with the selection semantics; `ms_lint.config` reads it from `[tool.ms_lint]` and command-line flags.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from typing import Iterable, Optional, Tuple

SYNTAX_LEVELS = ("lax", "strict")
TARGETS = ("any", "cpu", "gpu", "ascend")
MODES = ("graph", "pynative")


@dataclass(frozen=True)
class Settings:
    select: Tuple[str, ...] = ()  # empty: every rule except info-level ones
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    syntax_level: Optional[str] = None  # None: detect from the code, else LAX
    target: Optional[str] = None  # None: detect from the code, else "any"
    mode: Optional[str] = None  # "graph" | "pynative": how the Cells run; None: detect from the project
    severity: Tuple[Tuple[str, str], ...] = ()  # per-rule severity overrides
    exclude: Tuple[str, ...] = ()
    extend_exclude: Tuple[str, ...] = ()
    respect_gitignore: bool = True  # skip what .gitignore files (and .git/info/exclude) ignore
    validate: Tuple[Tuple[str, object], ...] = ()  # [tool.ms_lint.validate], used by fix validation
    config_path: Optional[str] = None  # the pyproject.toml these came from

    @property
    def root(self) -> str:
        return os.path.dirname(self.config_path) if self.config_path else os.getcwd()

    def severity_of(self, code: str, default: str) -> str:
        return dict(self.severity).get(code, default)

    def ignored_in(self, path: str) -> Tuple[str, ...]:
        """Codes/prefixes that per-file-ignores switch off for `path`."""
        relative = os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
        name = os.path.basename(path)
        codes: list = []
        for pattern, ignored in self.per_file_ignores:
            if fnmatch.fnmatch(relative, pattern) or ("/" not in pattern and fnmatch.fnmatch(name, pattern)):
                codes.extend(ignored)
        return tuple(codes)

    def is_selected(self, code: str, default_severity: str, path: Optional[str] = None) -> bool:
        """Ruff's semantics: the most specific matching selector wins; `ALL` selects everything."""
        selectors = self.select or ("DEFAULT",)
        chosen = _best_match(code, (*selectors, *self.extend_select), default_severity)
        ignored = _best_match(code, (*self.ignore, *(self.ignored_in(path) if path else ())), default_severity)
        return chosen > ignored


def _best_match(code: str, selectors: Iterable[str], default_severity: str) -> int:
    """Length of the most specific selector matching `code` (0 for ALL/DEFAULT), -1 for none."""
    best = -1
    for selector in selectors:
        if selector == "ALL":
            best = max(best, 0)
        elif selector == "DEFAULT":
            if default_severity != "info":
                best = max(best, 0)
        elif code.startswith(selector):
            best = max(best, len(selector))
    return best
