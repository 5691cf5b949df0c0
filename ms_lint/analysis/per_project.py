"""A fact of a whole project (the syntax level it sets, the mode it runs in), computed once per root per process."""
from __future__ import annotations

import os
from itertools import islice
from typing import Any, Callable, Dict, Generic, Iterable, Iterator, List, Optional, Tuple, TypeVar

T = TypeVar("T")
FilesUnder = Callable[[str], Iterable[str]]
# `keep(path, source, tree)`: a scan hands over the tree of a file it parsed, which the linter need not parse again
# (`KeptTrees.keep`)
Keep = Callable[[str, Any, Any], None]

# `files_under(root)` by (root, files_under): the compile-context and run-mode scans of a project are given the same
# function (the engine's), so its files are discovered once for both
_files: Dict[Tuple[str, FilesUnder], List[str]] = {}


class PerProject(Generic[T]):
    """`scan(files, keep)` of each project root, kept for the process; `forget` for a long-lived one whose files change
    (the language server, when a file is saved)."""

    def __init__(self, scan: Callable[[Iterable[str], Optional[Keep]], T]):
        self._scan = scan
        self._found: Dict[str, T] = {}

    def of(self, root: str, files_under: FilesUnder, keep: Optional[Keep] = None) -> T:
        """The fact of the project under `root`: `files_under(root)` gives its files, as the run discovers them;
        the trees the scan parses go to `keep`."""
        root = os.path.abspath(root)
        if root not in self._found:
            files = _files.get((root, files_under))
            if files is None:
                files = _files[root, files_under] = list(files_under(root))
            self._found[root] = self._scan(files, keep)
        return self._found[root]

    def forget(self) -> None:
        self._found.clear()
        _files.clear()


def read_each(files: Iterable[str], limit: int) -> Iterator[Tuple[str, bytes]]:
    """(path, content) of the first `limit` files, skipping those that cannot be read: what a scan reads."""
    for path in islice(files, limit):
        try:
            with open(path, "rb") as handle:
                yield path, handle.read()
        except OSError:
            continue
