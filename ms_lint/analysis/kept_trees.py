"""Trees parsed before their file's turn, kept so that the file is not parsed again when the run lints it.

A lookup of another module (a base class, a re-export) and the project scans (compile context, run mode) parse
files the run has not linted yet; the linter takes their trees (`take`, the text compared) instead of parsing them
a second time, and the single-process runner lints those files next (`paths`), before the budget drops them.
"""
from __future__ import annotations

import ast
import os
import threading
from collections import OrderedDict
from typing import Callable, List, Optional, Tuple

from ms_lint.source import SourceFile


class KeptTrees:
    """Trees by absolute path, for files of the run only, within a budget of source characters (a tree takes about
    30 bytes per character: 1M characters, some 30 MB); the oldest go first."""

    BUDGET = 1_000_000

    def __init__(self, of_the_run: Callable[[str], bool]):
        self._of_the_run = of_the_run  # is this absolute path one of the files the run lints?
        self._trees: "OrderedDict[str, Tuple[SourceFile, ast.Module]]" = OrderedDict()
        self._characters = 0
        self._lock = threading.Lock()

    def keep(self, path: str, source: SourceFile, tree: ast.Module) -> None:
        """Keep the tree of a file the run will lint (`per_project.Keep`: the scans are handed this method)."""
        path = os.path.abspath(path)
        if len(source.text) > self.BUDGET or not self._of_the_run(path):
            return
        with self._lock:
            if path in self._trees:
                return
            self._trees[path] = (source, tree)
            self._characters += len(source.text)
            while self._characters > self.BUDGET:
                self._characters -= len(self._trees.popitem(last=False)[1][0].text)

    def paths(self) -> List[str]:
        """The absolute paths of the files whose trees are kept, the oldest first."""
        with self._lock:
            return list(self._trees)

    def take(self, source: SourceFile) -> Optional[ast.Module]:
        """The tree parsed from this very text before the file's turn came, if kept (and dropped: taken once)."""
        if not self._trees:
            return None
        with self._lock:
            kept = self._trees.pop(os.path.abspath(source.path), None)
            if kept is None:
                return None
            self._characters -= len(kept[0].text)
        return kept[1] if kept[0].text == source.text else None
