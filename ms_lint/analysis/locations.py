"""Modules named by their files, for the facts of the project rules.

A repository may hold many independent projects, each with its `train.py` and `src/model.py`: dotted names alone
(`train.net`, `src.model.Net`) would make two projects' modules one. The facts name a module by where it is
imported from and its dotted name (`module_location`), and a name another module imports by the file the
importer finds (`locate`): the same module is named alike by every importer, and two projects' modules never are.
"""
from __future__ import annotations

import os
import sys
import weakref
from typing import Dict, Iterable, List, Optional

from ms_lint.analysis import framework
from ms_lint.source import module_name, package_root

# The standard library's top-level modules (Python 3.10 and later): a project file named like one (`io.py` in one
# project of a model zoo) is what a script imports only from the file's own directory or one above it (where
# Python looks first), never from another project's.
STANDARD_LIBRARY = frozenset(getattr(sys, "stdlib_module_names", ()))


def module_location(path: str) -> str:
    """A module by its file: the directory it is imported from and its dotted name (`/zoo/a/src.model`,
    `/zoo/b/train`). A file imported as `src.model` from a directory without `__init__.py`, and linted as
    `model`, is one module (`/zoo/a/src/model`). JSON-able and the same in every process, as facts must be."""
    return os.path.join(package_root(path), module_name(path))


def locate(index, qualname: str) -> str:
    """A name of a project module, as the file being linted imports it (`ProjectIndex.find`), qualified by that
    module's location: `src.model.Net` -> `/zoo/a/src.model.Net`. Names outside the project (MindSpore, NumPy,
    not found) stay as they are."""
    if not index.may_hold(qualname.partition(".")[0]) or framework.is_framework(qualname):
        return qualname
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        path = index.find(".".join(parts[:cut]))
        if path is not None:
            return ".".join([_location(index, path), *parts[cut:]])
    return qualname


def locate_in(index, qualname: str, module: str, path: Optional[str]) -> str:
    """`locate` as the module `module` (dotted) at `path` sees names: its own by its file, which the index may not
    find (an editor's unsaved buffer, a file outside the roots)."""
    if module and path and (qualname == module or qualname.startswith(f"{module}.")):
        return _location(index, path) + qualname[len(module):]
    return locate(index, qualname)


# each index's files' locations (`module_location` reads the file system, and every name a module's facts hold
# asks it); kept with the index, so that a server's fresh index per lint reads the files as they are now
_locations: "weakref.WeakKeyDictionary[object, Dict[str, str]]" = weakref.WeakKeyDictionary()


def _location(index, path: str) -> str:
    known = _locations.setdefault(index, {})
    if path not in known:
        known[path] = module_location(path)
    return known[path]


def roots_above(directory: str, roots: Iterable[str]) -> List[str]:
    """The `roots` that are `directory` or hold it, nearest first: where a script that Python runs in `directory`
    (or from a directory above, as a model zoo's `modelarts/start.py` is) finds its imports."""
    inside = [root for root in roots if directory == root or directory.startswith(os.path.join(root, ""))]
    return sorted(inside, key=len, reverse=True)
