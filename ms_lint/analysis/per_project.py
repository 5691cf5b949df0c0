"""A fact of a whole project (the syntax level it sets, the mode it runs in), computed once per root per process."""
from __future__ import annotations

import os
from typing import Callable, Dict, Generic, Iterable, TypeVar

T = TypeVar("T")


class PerProject(Generic[T]):
    """`scan(files)` of each project root, kept for the process; `forget` for a long-lived one whose files change
    (the language server, when a file is saved)."""

    def __init__(self, scan: Callable[[Iterable[str]], T]):
        self._scan = scan
        self._found: Dict[str, T] = {}

    def of(self, root: str, files_under: Callable[[str], Iterable[str]]) -> T:
        """The fact of the project under `root`: `files_under(root)` gives its files, as the run discovers them."""
        root = os.path.abspath(root)
        if root not in self._found:
            self._found[root] = self._scan(files_under(root))
        return self._found[root]

    def forget(self) -> None:
        self._found.clear()
