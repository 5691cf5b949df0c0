"""A directory of scripts outside any package runs as its scripts do (`run_mode` asks for one file's directory).

A repository of independent examples (MindSpore-GAN's `implementations/esrgan/`, `implementations/stargan/`...)
is one project to the run-mode scan, so one script's `set_context(mode=0)` made every example "may compile". A
module outside any package is imported by name from its own directory (`from models import *` in `esrgan.py`),
so the scripts that can run it are the scripts beside it, unless a file elsewhere imports it: when no file of the
directory may compile, some script of it runs in PyNative, and no file outside it imports one of its modules (by
a name only this directory defines, or a path into it such as `src.models` from a parent), the directory runs in
PyNative.
"""
from __future__ import annotations

import os
import re
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

from ms_lint.analysis import run_mode
from ms_lint.analysis.per_project import PerProject, read_each

_MAX_FILES = 2000  # a directory of scripts; a larger one is left as it is
# the modules a file imports: `import models`, `from src.models import Net`, `from src import models`
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w.]+))", re.M)
_LEVELS_UP = 3  # a script that puts its parent on `sys.path` (`tools/train.py`) imports from there


def runs_in_pynative(path: str, root: str, files_under: Callable[[str], Iterable[str]]) -> Optional[run_mode.Evidence]:
    """Where the directory of `path`, not a package, shows it runs in PyNative though its project may compile;
    None when it does not show it (a directory is read once per process)."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isfile(os.path.join(directory, "__init__.py")):
        return None
    if directory not in _directories:
        _directories[directory] = _directory_mode(directory, root, files_under)
    return _directories[directory]


def forget() -> None:
    _directories.clear()
    _imports.forget()


_directories: Dict[str, Optional[run_mode.Evidence]] = {}


def _directory_mode(directory: str, root: str, files_under) -> Optional[run_mode.Evidence]:
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(".py"))
    except OSError:
        return None
    if len(names) > _MAX_FILES:
        return None
    found: Optional[run_mode.Evidence] = None
    for path, data in read_each((os.path.join(directory, name) for name in names), _MAX_FILES):
        said = run_mode.evidence(data, path)
        if said is None:
            continue
        if said[0] not in (run_mode.RUNS, run_mode.PYNATIVE):
            return None  # it may compile here, or an option decides
        if found is None or (found.kind, said[0]) == (run_mode.RUNS, run_mode.PYNATIVE):
            found = run_mode.Evidence(path, said[1], said[0])
    if found is None:
        return None  # no script here: who runs these modules is not known
    own = {name[:-3] for name in names}
    for path, imported in _imports.of(root, files_under):
        if os.path.dirname(path) != directory and any(_reaches(path, module, directory, own) for module in imported):
            return None  # imported from elsewhere, perhaps on the way from a script that compiles
    return found


def _reaches(importer: str, module: str, directory: str, own: set) -> bool:
    """May `import module` in `importer` load a file of `directory`? From the importer's directory or a parent:
    `src.models` is `src/models.py` or the namespace `src/models/`; a bare name this directory alone defines may
    come from it through `sys.path`."""
    parts = module.split(".")
    if len(parts) == 1 and parts[0] in own and not os.path.isfile(
            os.path.join(os.path.dirname(importer), parts[0] + ".py")):
        return True
    base = os.path.dirname(importer)
    for _ in range(_LEVELS_UP + 1):
        if directory in (os.path.join(base, *parts), os.path.join(base, *parts[:-1])):
            return True
        base = os.path.dirname(base)
    return False


def _imports_of(files: Iterable[str], keep=None) -> List[Tuple[str, FrozenSet[str]]]:
    """(path, the modules it imports) of each file of a project (read as text: no tree for `keep`)."""
    return [(path, frozenset((match.group(1) or match.group(2)).decode().lstrip(".")
                             for match in run_mode.line_matches(_IMPORT, data, (b"import",))))
            for path, data in read_each(files, 20000) if b"import" in data]


_imports: PerProject[List[Tuple[str, FrozenSet[str]]]] = PerProject(_imports_of)
run_mode.when_forgetting(forget)
