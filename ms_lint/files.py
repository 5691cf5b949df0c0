"""Which files `ms-lint check PATHS` lints.

Directories are walked for `*.py`/`*.pyi` files and notebooks (`*.ipynb`), skipping what
`exclude`/`extend-exclude` exclude (gitignore-style patterns relative to the project root, `ms_lint.pathspec`),
what `.gitignore` files ignore (unless `respect-gitignore = false`), virtualenvs (a directory holding
`pyvenv.cfg`), `site-packages` and `dist-packages`.
A path named on the command line is linted whatever the patterns say, unless `--force-exclude`.
"""
from __future__ import annotations

import os
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from ms_lint.pathspec import PathSpec
from ms_lint.settings import Settings

# Never descended into unless named explicitly (as ruff does); `exclude` replaces them, `extend-exclude` adds.
DEFAULT_EXCLUDES = (".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".mypy_cache", ".ruff_cache",
                    ".pytest_cache", ".ipynb_checkpoints", "__pycache__", "__pypackages__", "build", "dist",
                    "node_modules", "site-packages", ".eggs", "*.egg-info")
# Installed packages: never walked into, whatever `exclude` says (name them to lint them).
INSTALLED = ("site-packages", "dist-packages")


LINTED_SUFFIXES = (".py", ".pyi", ".ipynb")  # notebooks: their code cells (`ms_lint.notebook`)


def discover(paths: Iterable[str], settings: Settings, force_exclude: bool = False) -> List[str]:
    """Python files under `paths`, sorted, each once. Files named explicitly are linted unless `force_exclude`
    (pre-commit names every changed file, excluded ones included)."""
    filters = Filters(settings)
    found: List[str] = []
    seen = set()
    for path in paths:
        if force_exclude and filters.excluded_path(path):
            continue
        for file, key in _walk(path, filters):
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found


def _walk(path: str, filters: "Filters") -> Iterator[Tuple[str, str]]:
    """(file, its real path) of each file to lint under `path`."""
    if not os.path.isdir(path):
        yield path, os.path.realpath(path)  # a missing or unreadable file is reported by the linter
        return
    for directory, subdirectories, files in os.walk(path, followlinks=False):
        subdirectories[:] = sorted(d for d in subdirectories if not filters.skips_directory(os.path.join(directory, d)))
        real_directory = None
        for name in sorted(files):
            file = os.path.join(directory, name)
            if name.endswith(LINTED_SUFFIXES) and not filters.excluded(file, is_dir=False):
                if real_directory is None:
                    real_directory = os.path.realpath(directory)
                # the directory resolved once: only a file that is itself a link needs resolving on its own
                yield file, os.path.realpath(file) if os.path.islink(file) else os.path.join(real_directory, name)


class Filters:
    """The exclude patterns and .gitignore files of one run."""

    def __init__(self, settings: Settings):
        self.root = os.path.abspath(settings.root)
        self._inside = self.root if self.root.endswith(os.sep) else self.root + os.sep  # how paths under it start
        self.spec = PathSpec((*(settings.exclude or DEFAULT_EXCLUDES), *settings.extend_exclude))
        self.gitignore = GitIgnore() if settings.respect_gitignore else None

    def skips_directory(self, path: str) -> bool:
        """The walk does not go into this directory (so nothing inside it can be included again)."""
        name = os.path.basename(path)
        return name in INSTALLED or _is_virtualenv(path) or self.excluded(path, is_dir=True)

    def excluded(self, path: str, is_dir: bool) -> bool:
        """The path itself is excluded by a pattern or ignored by git (its directories are the walk's business)."""
        relative = self._relative(path)
        if relative is None:  # outside the project root: only patterns without a "/" apply, to the name
            excluded = self.spec.excludes(os.path.basename(os.path.abspath(path)), is_dir, anchored=False)
        else:
            excluded = relative != "." and self.spec.excludes(relative, is_dir)
        return excluded or (self.gitignore is not None and self.gitignore.ignores(path, is_dir))

    def excluded_path(self, path: str) -> bool:
        """The path, or one of its directories (below the project root for patterns, below the repository root for
        .gitignore files), is excluded: what `--force-exclude` checks for paths named on the command line."""
        is_dir = os.path.isdir(path)
        relative = self._relative(path)
        if relative is None:
            if self.spec.excludes(os.path.basename(os.path.abspath(path)), is_dir, anchored=False):
                return True
        elif relative != ".":
            parts = relative.split("/")
            if any(self.spec.excludes("/".join(parts[:depth]), depth < len(parts) or is_dir)
                   for depth in range(1, len(parts) + 1)):
                return True
        return self.gitignore is not None and self.gitignore.ignores_path(path, is_dir)

    def _relative(self, path: str) -> Optional[str]:
        """`path` relative to the project root, `/`-separated; None if it is outside."""
        absolute = os.path.abspath(path)
        if absolute.startswith(self._inside) and absolute != self.root:  # what the walk meets: no `relpath`
            return absolute[len(self._inside):].replace(os.sep, "/")
        try:
            relative = os.path.relpath(absolute, self.root)
        except ValueError:  # another drive (Windows)
            return None
        if relative == os.pardir or relative.startswith(os.pardir + os.sep):
            return None
        return relative.replace(os.sep, "/")


class GitIgnore:
    """What git ignores: the `.gitignore` of a path's directory and of each parent directory up to the root of its
    repository (the directory holding `.git`), deeper files first, then the repository's `.git/info/exclude`.
    Outside a git repository no `.gitignore` applies (as with git and ruff). The global `core.excludesFile` is not
    read: results do not depend on the user's git configuration."""

    def __init__(self):
        # directory -> ((base directory, patterns), ...) lowest precedence first; None outside a repository
        self._chains: Dict[str, Optional[Tuple[Tuple[str, PathSpec], ...]]] = {}

    def ignores(self, path: str, is_dir: bool) -> bool:
        """The path itself is ignored (not whether one of its directories is)."""
        absolute = os.path.abspath(path)
        for base, spec in reversed(self._chain(os.path.dirname(absolute)) or ()):
            decision = spec.match(os.path.relpath(absolute, base).replace(os.sep, "/"), is_dir)
            if decision is not None:
                return decision
        return False

    def ignores_path(self, path: str, is_dir: bool) -> bool:
        """The path or one of its directories below the repository root is ignored."""
        absolute = os.path.abspath(path)
        directories = []
        directory = os.path.dirname(absolute)
        while not _has_git(directory):
            parent = os.path.dirname(directory)
            if parent == directory:
                return False  # not in a repository
            directories.append(directory)
            directory = parent
        return any(self.ignores(d, True) for d in reversed(directories)) or self.ignores(absolute, is_dir)

    def _chain(self, directory: str) -> Optional[Tuple[Tuple[str, PathSpec], ...]]:
        if directory in self._chains:
            return self._chains[directory]
        pending = []  # directories below the nearest one already known (iterative: no recursion limit)
        current = directory
        while current not in self._chains:
            if _has_git(current):
                git = _git_directory(current)
                specs = [] if git is None else [(current, PathSpec.from_file(os.path.join(git, "info", "exclude")))]
                self._chains[current] = _nonempty((*specs, (current, _gitignore(current))))
                break
            parent = os.path.dirname(current)
            if parent == current:
                self._chains[current] = None
                break
            pending.append(current)
            current = parent
        for below in reversed(pending):
            above = self._chains[os.path.dirname(below)]
            self._chains[below] = None if above is None else _nonempty((*above, (below, _gitignore(below))))
        return self._chains[directory]


def _gitignore(directory: str) -> PathSpec:
    return PathSpec.from_file(os.path.join(directory, ".gitignore"))


def _nonempty(chain) -> Tuple[Tuple[str, PathSpec], ...]:
    return tuple((base, spec) for base, spec in chain if spec)


def _has_git(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, ".git"))


def _git_directory(directory: str) -> Optional[str]:
    """The repository's git directory: `.git`, or where a `.git` file (worktree, submodule) points."""
    dotgit = os.path.join(directory, ".git")
    if os.path.isdir(dotgit):
        return dotgit
    try:
        with open(dotgit, encoding="utf-8") as handle:
            first = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not first.startswith("gitdir:"):
        return None
    git = os.path.join(directory, first[len("gitdir:"):].strip())
    try:  # a worktree keeps info/exclude in the main repository's git directory
        with open(os.path.join(git, "commondir"), encoding="utf-8") as handle:
            git = os.path.join(git, handle.readline().strip())
    except (OSError, UnicodeDecodeError):
        pass
    return git


def _is_virtualenv(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "pyvenv.cfg"))
