"""Which files `ms-lint check PATHS` lints."""
from __future__ import annotations

import fnmatch
import os
from typing import Iterable, Iterator, List

from ms_lint.config import Settings

# Never descended into unless named explicitly (as ruff does).
DEFAULT_EXCLUDES = (".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".mypy_cache", ".ruff_cache",
                    ".pytest_cache", "__pycache__", "__pypackages__", "build", "dist", "node_modules",
                    "site-packages", ".eggs", "*.egg-info")


def _excluded(path: str, settings: Settings) -> bool:
    name = os.path.basename(path.rstrip(os.sep))
    relative = os.path.relpath(os.path.abspath(path), settings.root).replace(os.sep, "/")
    patterns = (*(settings.exclude or DEFAULT_EXCLUDES), *settings.extend_exclude)  # `exclude` replaces defaults
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(relative, p.rstrip("/") + "/*")
               for p in patterns)


def _excluded_path(path: str, settings: Settings) -> bool:
    """The path, or one of its directories below the project root, is excluded."""
    relative = os.path.relpath(os.path.abspath(path), settings.root)
    if relative.startswith(os.pardir):
        return _excluded(path, settings)
    parts = relative.split(os.sep)
    return any(_excluded(os.path.join(settings.root, *parts[:depth]), settings) for depth in range(1, len(parts) + 1))


def _is_virtualenv(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "pyvenv.cfg"))


def discover(paths: Iterable[str], settings: Settings, force_exclude: bool = False) -> List[str]:
    """Python files under `paths`, sorted, each once. Files named explicitly are linted unless `force_exclude`
    (pre-commit names every changed file, excluded ones included)."""
    found: List[str] = []
    seen = set()
    for path in paths:
        if force_exclude and _excluded_path(path, settings):
            continue
        for file in _walk(path, settings):
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found


def _walk(path: str, settings: Settings) -> Iterator[str]:
    if not os.path.isdir(path):
        yield path  # a missing or unreadable file is reported by the linter
        return
    for directory, subdirectories, files in os.walk(path, followlinks=False):
        subdirectories[:] = sorted(
            d for d in subdirectories
            if not _excluded(os.path.join(directory, d), settings) and not _is_virtualenv(os.path.join(directory, d)))
        for name in sorted(files):
            file = os.path.join(directory, name)
            if name.endswith((".py", ".pyi")) and not _excluded(file, settings):
                yield file
