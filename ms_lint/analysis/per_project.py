"""A fact of a whole project (the syntax level it sets, the mode it runs in), computed once per root per process;
the files its scans read, and what each file says, shared by the scans (`read_each`, `PerFile`)."""
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
            global _scanning
            _scanning += 1
            try:
                self._found[root] = self._scan(files, keep)
            finally:
                _scanning -= 1
        return self._found[root]

    def forget(self) -> None:
        self._found.clear()
        _files.clear()
        _forget_contents()


def read_each(files: Iterable[str], limit: int) -> Iterator[Tuple[str, bytes]]:
    """(path, content) of the first `limit` files, skipping those that cannot be read: what a scan reads. In a
    scan of `PerProject.of`, the content is kept, up to a bound, for the next such scan that reads the file
    (`_contents`); a scan called on its own reads the files as they are."""
    global _kept_bytes
    for path in islice(files, limit):
        data = _contents.get(path) if _scanning else None
        if data is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            if _scanning and _kept_bytes + len(data) <= _MAX_KEPT_BYTES:
                _contents[path] = data
                _kept_bytes += len(data)
        yield path, data


# The content of each file a scan read, by path: the scans of a project (its compile context, its run mode, the
# modules its scripts reach) each read every file of it, and a directory without `__init__.py` is a project of
# its own inside the one around it (a run scans both). Forgotten with the scans' results, as the files they list.
_MAX_KEPT_BYTES = 16 << 20  # (a model zoo's project whole; of mindone, 43 MB, a part)
_contents: Dict[str, bytes] = {}
_kept_bytes = 0
_scanning = 0  # how many `PerProject.of` scans are running (one, or a scan asking another's fact)


class PerFile(Generic[T]):
    """`fact(path, data, *more)` of a file's content as `read_each` gave it, computed once while the content is kept:
    the scans of nested projects ask it of the same files. (`more` does not change the answer: `keep`, or what
    the caller derived from `data`.)"""

    def __init__(self, fact: Callable[..., T]):
        self._fact = fact
        self._found: Dict[str, Tuple[bytes, T]] = {}
        _per_file.append(self)

    def __call__(self, path: str, data: bytes, *more: Any) -> T:
        found = self._found.get(path)
        if found is not None and found[0] is data:
            return found[1]
        value = self._fact(path, data, *more)
        if _contents.get(path) is data:  # (held no longer than the content: the memory stays bounded)
            self._found[path] = (data, value)
        return value


_per_file: List[PerFile] = []


def _forget_contents() -> None:
    global _kept_bytes
    _contents.clear()
    _kept_bytes = 0
    for facts in _per_file:
        facts._found.clear()
