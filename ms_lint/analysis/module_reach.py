"""A module that no compiling process reaches runs as the scripts that import it do (`run_mode` asks per file).

A project that compiles somewhere (a script selects GRAPH_MODE, a `jit` wraps a function that calls Cells) was
"may compile" as a whole, so every module of it was judged as compiled. Issue 19's fourth sample: hp-vae-gan's
3-D networks run only from `train_video.py` and `eval_video.py`, which select PyNative, while `export.py` and the
self-test of `networks_2d.py` select GRAPH_MODE; PVQD's `@jit` on one model made all of its modules compiled.

The mode is a setting of the process. A script runs in the modes that it, and every module it imports (directly
or through other modules and the packages' `__init__.py` on the way), may select when imported or called: a
`set_context(mode=...)` anywhere in those files but the `if __name__ == "__main__":` block of an imported module
(a self-test, not run on import). A script that may select GRAPH_MODE (or a mode from a variable or an option)
compiles every module it imports (a selection in a function counts where a reached file calls the function by
name); a `jit` around a function that may call a Cell compiles what its file imports.
A module that some script reaches, and that nothing which may compile reaches, runs in PyNative. A script is a
file no other project file imports that, outside any package (no `__init__.py` beside it), runs itself or
selects a mode, or inside one selects a mode outside its self-test: a library whose self-tests alone run (the
PyPI zoos) is compiled by scripts the linter does not see, and keeps its project's mode.

Imports are read from the text (`import a.b`, `from .c import d`, inside functions too) and found among the
project's files from the importer's directory and its parents (`sys.path` hacks of scripts in `tools/`), as
`script_directories` does. A module reached only through `importlib` or a registry filled by name is not seen to
be reached: it keeps the project's "may compile".
"""
from __future__ import annotations

import os
import re
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Set, Tuple

from ms_lint.analysis import run_mode
from ms_lint.analysis.per_project import FilesUnder, Keep, PerProject, read_each

_MAX_FILES = 20000
_LEVELS_UP = 3  # a script that puts its parent (or grandparent) on `sys.path` imports from there
# an import statement, matched at the start of a line that holds "import" (`run_mode.line_matches`)
_STATEMENT = re.compile(rb"[ \t]*(?:import[ \t]+([^\n#;]+)|"
                        rb"from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+))")


class Reach(NamedTuple):
    """Which files a compiling file reaches, and a PyNative script that reaches each file it does."""

    compiled: FrozenSet[str]
    pynative: Dict[str, run_mode.Evidence]
    # every script runs in PyNative, nothing applies `jit`, and what selects another mode never runs: the files
    # no script reaches run in PyNative too (mindsporeTSF's layers)
    everywhere: Optional[run_mode.Evidence] = None


def runs_in_pynative(path: str, root: str, files_under: FilesUnder,
                     keep: Optional[Keep] = None) -> Optional[run_mode.Evidence]:
    """Where the module at `path` shows it runs in PyNative though its project may compile: a PyNative script
    imports it and no file that may compile does; None otherwise."""
    reach = _reach.of(root, files_under, keep)
    path = os.path.abspath(path)
    if path in reach.compiled:
        return None
    return reach.pynative.get(path) or reach.everywhere


def of_notebook(path: str, code: bytes, root: str, files_under: FilesUnder,
                keep: Optional[Keep] = None) -> run_mode.ProjectMode:
    """How a notebook runs its Cells: a notebook is a program of its own that no file imports, so it compiles
    them only where it, or a project module it imports (as `_scan` reads a script's), selects a mode other than
    PyNative or applies `jit`. d2l's attention notebooks (issue 19's tenth sample) select none, while five other
    notebooks of the collection select GRAPH_MODE. `code` is the notebook's code cells as one module."""
    project = _projects.of(root, files_under)
    reached = project.closure(project.imported_by(path, code))
    modes = [(mode, row, path) for mode, row in run_mode.selections(code)] if b"set_context" in code else []
    modes += project.modes_selected(reached, code=code)
    compiled = [(row, file) for mode, row, file in modes if mode != run_mode.PYNATIVE]
    jit = run_mode.jit_row(code, path, keep)
    if jit is not None or compiled or any(run_mode.jit_row(project.text(file), file, keep) is not None
                                          for file in reached):
        graph = [(row, file) for mode, row, file in modes if mode == run_mode.GRAPH]
        graph_only = run_mode.Evidence(graph[0][1], graph[0][0], run_mode.GRAPH) \
            if graph and len(graph) == len(modes) and jit is None else None
        return run_mode.ProjectMode(None, graph_only, compiles=True)
    if modes:
        return run_mode.ProjectMode(run_mode.Evidence(modes[0][2], modes[0][1], run_mode.PYNATIVE))
    return run_mode.ProjectMode(run_mode.Evidence(path, 0, run_mode.NOTEBOOK))


def _scan(files: Iterable[str], keep: Optional[Keep] = None) -> Reach:
    paths = [os.path.abspath(path) for path in files]
    if len(paths) > _MAX_FILES:
        return Reach(frozenset(), {})
    known = frozenset(paths)
    candidates: List[str] = []
    may_reset = False  # some `__init__` may select PYNATIVE_MODE (`_reset_by_a_constructor`)
    texts: Dict[str, bytes] = {}  # (what the project reads again: every file, for its `jit`)
    for path, data in read_each(paths, _MAX_FILES):
        texts[path] = data
        if _may_be_script(path, data, known):
            candidates.append(path)
        may_reset = may_reset or (b"PYNATIVE" in data and b"__init__" in data)
    if not candidates:
        return Reach(frozenset(), {})
    project = _Project(paths, _Finder(known), texts)
    compiled: Set[str] = set()
    reached_by: Dict[str, run_mode.Evidence] = {}
    compiling = [path for path in candidates
                 if any(mode != run_mode.PYNATIVE for mode, _ in project.selections(path, own=True))]
    for path in candidates:
        if path in compiling and not may_reset:
            continue  # what it reaches matters only beside a PyNative script: below
        reached = project.closure([path])
        modes = project.modes_selected(reached, script=path)
        last = _reset_by_a_constructor(project, reached, modes) if may_reset else None
        if last is not None:
            compiling = [other for other in compiling if other != path]
            modes = [last]
        elif path in compiling:
            continue
        if any(mode != run_mode.PYNATIVE for mode, _, _ in modes):
            compiled |= reached
            continue
        runs = run_mode.script_row(project.text(path))
        if (not modes and runs is None) or project.imported_elsewhere(path):
            continue  # (a module after all: its importers' scripts decide)
        said = run_mode.Evidence(modes[0][2], modes[0][1], run_mode.REACHED + run_mode.PYNATIVE) if modes \
            else run_mode.Evidence(path, runs or 1, run_mode.REACHED + run_mode.RUNS)
        for file in reached:  # a selected PyNative says more than a script that selects no mode
            if file not in reached_by or said.kind == run_mode.REACHED + run_mode.PYNATIVE:
                reached_by[file] = said
    if not reached_by:
        return Reach(frozenset(compiled), reached_by)
    scripts_compile = bool(compiled)
    for path in compiling:
        # a module selects a mode for the scripts that import it, unless it runs as a script of its own too
        # (DSAN's `eval.py`, imported by `train.py` for its `test()`, selects GRAPH_MODE for its self-test)
        if not project.imported_elsewhere(path) or run_mode.MAIN_GUARD.search(project.text(path)):
            compiled |= project.closure([path])
            scripts_compile = scripts_compile or not _compiles_no_cell(project, path)
    for path in paths:
        if run_mode.jit_row(project.text(path), path, keep) is not None:
            compiled |= project.closure([path])  # what the jit's function may call
            scripts_compile = True
    everywhere = None
    if not scripts_compile:  # (said of the project: the script's selection, not its imports)
        first = min(reached_by.values())
        everywhere = run_mode.Evidence(first.path, first.row, first.kind[len(run_mode.REACHED):])
    return Reach(frozenset(compiled), reached_by, everywhere)


def _compiles_no_cell(project: "_Project", path: str) -> bool:
    """Does a file no other project file imports, and which selects a mode other than PyNative, compile no Cell:
    it imports no project file and defines no Cell (mindsporeTSF's stale `exp_basic.py`, whose self-test only
    sets the device), or it never runs (no self-test, no script lines, its selections inside functions)?"""
    data = project.text(path)
    if project.closure([path]) == {path} and b"Cell" not in data:
        return True
    return run_mode.script_row(data) is None and all(
        run_mode.enclosing_def(data, row) is not None for _, row in project.selections(path, own=True))


def _reset_by_a_constructor(project: "_Project", reached: Set[str],
                            modes: List[Tuple[str, int, str]]) -> Optional[Tuple[str, int, str]]:
    """The PyNative selection in a class's `__init__` that runs after every other mode the script selects, if one
    does: other selections at module level run first (when imported, or as the script starts), those in functions
    run before it where its `__init__` calls them first, directly or through the functions that call them
    (mindsporeTSF, issue 19's twelfth sample: `run_longExp.py` selects GRAPH_MODE, `Exp_Basic._acquire_device`
    too, and `Exp_Main.__init__` selects PYNATIVE_MODE after `super().__init__(args)`: it trains in PyNative)."""
    resets = [reset for mode, row, file in modes if mode == run_mode.PYNATIVE
              for reset in _constructor_rows(project.text(file), row, file)]
    if not resets:
        return None
    for mode, row, file in modes:
        function = run_mode.enclosing_def(project.text(file), row) if mode != run_mode.PYNATIVE else None
        if function is not None and not any(project.called_above(reset_file, reset_row, function, reached)
                                            for reset_row, reset_file in resets):
            return None
    return run_mode.PYNATIVE, resets[0][0], resets[0][1]


def _constructor_rows(text: bytes, row: int, file: str) -> List[Tuple[int, str]]:
    """(row, file) where a constructor runs the selection at line `row`: the line itself inside `__init__`, or
    the `self.<method>(` calls in an `__init__` of the file, where the method around the line is one
    (`self._init_context()` selecting PyNative, issue 19's sixteenth sample)."""
    function = run_mode.enclosing_def(text, row)
    if function is None or function == b"__init__":
        return [(row, file)] if function else []
    calls = re.finditer(rb"\bself\." + re.escape(function) + rb"\s*\(", text)
    rows = (text.count(b"\n", 0, call.start()) + 1 for call in calls)
    return [(call_row, file) for call_row in rows if run_mode.enclosing_def(text, call_row) == b"__init__"]


def _may_be_script(path: str, data: bytes, known: FrozenSet[str]) -> bool:
    """Outside any package, a file that runs itself or selects a mode; inside one, a file that selects a mode
    outside its `if __name__ == "__main__":` block (pointRCNN's `tools/train_rcnn.py`). A self-test inside a
    package (mindone's `nerfacc/utils/grid_utils.py`, hp-vae-gan's `networks_2d.py`) is not how a project runs:
    a library whose modules are all in packages is left as it is. But a file named as a project's entry point
    (`train.py`, `eval_net.py`, `main.py`) that selects a mode is one, in a package too (JSG's training script,
    issue 19's sixteenth sample)."""
    if os.path.join(os.path.dirname(path), "__init__.py") not in known:
        return b"set_context" in data or run_mode.script_row(data) is not None
    return b"set_context" in data and (_ENTRY_POINT.match(os.path.basename(path)) is not None or any(
        not run_mode.in_main_block(data, row) for _, row in run_mode.selections(data)))


_ENTRY_POINT = re.compile(r"(?:train|eval|main|run|infer|predict|finetune|pretrain)(?:_\w*)?\.py$")


class _Project:
    """The project's files, each read, and its imports found, when first asked for."""

    def __init__(self, paths: List[str], find: "_Finder", texts: Optional[Dict[str, bytes]] = None):
        self.paths = paths
        self._find = find
        self._texts: Dict[str, bytes] = texts or {}
        self._imports: Dict[str, Set[str]] = {}
        self._importers_of: Optional[Dict[str, List[str]]] = None
        self._selected: Dict[str, List[Tuple[str, int]]] = {}

    def text(self, path: str) -> bytes:
        data = self._texts.get(path)
        if data is None:
            data = self._texts[path] = next((data for _, data in read_each([path], 1)), b"")
        return data

    def imports(self, path: str) -> Set[str]:
        found = self._imports.get(path)
        if found is None:
            found = self._imports[path] = self._find.imported_files(path, self.text(path))
        return found

    def imported_by(self, path: str, code: bytes) -> Set[str]:
        """The project files that the code of `path` (not a project module itself: a notebook) imports."""
        return self._find.imported_files(path, code)

    def closure(self, starts: Iterable[str]) -> Set[str]:
        seen = set(starts)
        stack = list(seen)
        while stack:
            for target in self.imports(stack.pop()):
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return seen

    def imported_elsewhere(self, path: str) -> bool:
        """Does another project file import this one? Only a file that spells its name can."""
        stem = os.path.basename(path)[:-3].encode()  # (a file's own imports never hold it)
        return any(stem in self.text(other) for other in self._importers().get(path, ()))

    def _importers(self) -> Dict[str, List[str]]:
        """The files that import each project file, in the project's order (every file's imports found once, as
        the scripts' closures find most of them anyway: not each file's text searched for each script's name)."""
        if self._importers_of is None:
            self._importers_of = {}
            for other in self.paths:
                for target in self.imports(other):
                    self._importers_of.setdefault(target, []).append(other)
        return self._importers_of

    def selections(self, path: str, own: bool) -> List[Tuple[str, int]]:
        """The modes a file selects: all of them in the script itself, else those outside its self-test."""
        selected = self._selected.get(path)
        if selected is None:  # (asked again for each script that reaches the file)
            data = self.text(path)
            selected = self._selected[path] = list(run_mode.selections(data)) if b"set_context" in data else []
        if own or not selected:
            return selected
        return [(mode, row) for mode, row in selected if not run_mode.in_main_block(self.text(path), row)]

    def modes_selected(self, reached: Set[str], script: Optional[str] = None,
                       code: bytes = b"") -> List[Tuple[str, int, str]]:
        """(mode, row, file) of what a process may select: the script's own selections (all of them, its
        self-test included), then those of the modules it reaches that run when they are imported or called (not
        their self-tests). `code` is the text of a program that is not a project file (a notebook's cells)."""
        return [(mode, row, file) for file in sorted(reached, key=lambda file: (file != script, file))
                for mode, row in self.selections(file, own=file == script)
                if file == script or self.runs_on_import_or_call(file, row, reached, code, script)]

    def runs_on_import_or_call(self, path: str, row: int, reached: Set[str], also: bytes = b"",
                               script: Optional[str] = None) -> bool:
        """Does line `row` of the module `path` run when a script reaching `reached` imports it: at module level,
        or in a function that some reached file calls by name, outside its self-test unless it is the script?
        StepVideo's vendored mindone selects a mode in `init_env(mode)`, which its PyNative scripts never call;
        DSAN's PyNative `train.py` imports `test` from `eval.py`, whose `run_eval()` selects GRAPH_MODE and is
        called only in `eval.py`'s own `if __name__ == "__main__":` block."""
        function = run_mode.enclosing_def(self.text(path), row)
        if function is None:
            return True
        called = _call_of(function)
        if also and function in also and called.search(also):
            return True
        for file in reached:
            text = self.text(file)
            if function in text and any(file == script or not run_mode.in_main_block(
                    text, text.count(b"\n", 0, match.start()) + 1) for match in called.finditer(text)):
                return True
        return False

    def called_above(self, path: str, row: int, function: bytes, reached: Set[str]) -> bool:
        """Does the def around line `row` of `path` call `function` above that line, directly or through a function
        that calls it (two levels, by name)?"""
        around = run_mode.def_around(self.text(path), row)
        if around is None:
            return False
        above = b"\n".join(self.text(path).split(b"\n")[around[1]:row - 1])
        names = {function}
        for _ in range(3):
            if any(_call_of(name).search(above) for name in names):
                return True
            names |= {caller for file in reached for name in names
                      for caller in self._callers(file, name)}
        return False

    def _callers(self, path: str, name: bytes) -> Set[bytes]:
        """The defs of a file that call `name`."""
        data = self.text(path)
        if name not in data:
            return set()
        rows = {data.count(b"\n", 0, match.start()) + 1 for match in _call_of(name).finditer(data)}
        return {caller for caller in (run_mode.enclosing_def(data, row) for row in rows) if caller is not None}


def _call_of(name: bytes) -> "re.Pattern[bytes]":
    """A call of the function `name` in a file's text (`name(`, `self.name(`; not its `def`)."""
    return re.compile(rb"(?<!def )\b" + re.escape(name) + rb"\s*\(")


class _Finder:
    """Finds the project files an import names, memoised by the importer's directory (its files import alike)."""

    def __init__(self, known: FrozenSet[str]):
        self.known = known
        self._absolute: Dict[Tuple[str, str], FrozenSet[str]] = {}
        self._module_files: Dict[Tuple[str, ...], FrozenSet[str]] = {}
        # the names a module path of the project can start with (`mindspore`, `numpy`: none)
        self._first_names = {part.removesuffix(".py") for path in known for part in path.split(os.sep)}
        # the project's directories and its modules' paths without `.py`: where `_files_of` may find a module
        self._entries = {path[:-3] for path in known if path.endswith(".py")}
        for path in known:
            directory = os.path.dirname(path)
            while directory not in self._entries:
                self._entries.add(directory)
                directory = os.path.dirname(directory)
        self._bases_of: Dict[str, List[str]] = {}

    def imported_files(self, path: str, data: bytes) -> Set[str]:
        """The project files that importing the module at `path` may run: the modules it imports and the
        `__init__.py` of each package on the way."""
        if b"import" not in data:
            return set()
        directory = os.path.dirname(path)
        found: Set[str] = set()
        for match in run_mode.line_matches(_STATEMENT, data, (b"import",)):
            if match.group(1) is not None:
                for item in match.group(1).split(b","):
                    words = item.split()
                    if words:
                        found.update(self.absolute(words[0].decode(errors="replace"), directory))
                continue
            dots, module = len(match.group(2)), match.group(3).decode(errors="replace")
            if not dots and module.partition(".")[0] not in self._first_names:
                continue  # `from mindspore import nn, ops`
            names = [words[0].decode(errors="replace") for words in (
                name.split() for name in match.group(4).strip(b"()").replace(b"\\", b" ").split(b",")) if words]
            if dots:
                base = directory
                for _ in range(dots - 1):
                    base = os.path.dirname(base)
                parts = module.split(".") if module else []
                found.update(self._files(base, parts))
                for name in names:
                    if name != "*":
                        found.update(self._files(base, parts + [name]))
            else:
                for name in names:
                    if name != "*":
                        found.update(self.absolute(f"{module}.{name}", directory))
                found.update(self.absolute(module, directory))
        found.discard(path)
        return found

    def absolute(self, module: str, directory: str) -> FrozenSet[str]:
        """The files of `module` as the importer's directory or one of its parents would find it (first found)."""
        key = (directory, module)
        found = self._absolute.get(key)
        if found is None:
            found = self._absolute[key] = frozenset(self._search(module, directory))
        return found

    def _search(self, module: str, directory: str) -> FrozenSet[str]:
        parts = module.split(".")
        if parts[0] not in self._first_names:
            return frozenset()
        first, entries = parts[0], self._entries
        for base in self._bases(directory):
            # (`_files_of` finds a file only under `base/<first part>`: a directory of the project, or a module)
            if not _POSIX or f"{base}/{first}" in entries:
                found = self._files(base, parts)
                if found:
                    return found
        return frozenset()

    def _bases(self, directory: str) -> List[str]:
        """The directory and its parents that an absolute import is looked up from, nearest first."""
        found = self._bases_of.get(directory)
        if found is None:
            found = self._bases_of[directory] = [directory]
            for _ in range(_LEVELS_UP):
                parent = os.path.dirname(found[-1])
                if parent == found[-1]:
                    break
                found.append(parent)
        return found

    def _files(self, base: str, parts: List[str]) -> FrozenSet[str]:
        key = (base, *parts)
        found = self._module_files.get(key)
        if found is None:
            found = self._module_files[key] = frozenset(self._files_of(base, parts))
        return found

    def _files_of(self, base: str, parts: List[str]) -> Set[str]:
        """`base/a/b/__init__.py` or `base/a/b.py` for `a.b`, with `base/a/__init__.py` on the way; empty if the
        module itself is not a project file. A package wins over a module of the same name, as in Python (DecoMR's
        `train.py` imports `Trainer` from the package `train/` beside it)."""
        known = self.known
        target = _joined(base, parts)
        module = os.path.join(target, "__init__.py")
        if module not in known:
            module = target + ".py"
            if module not in known:
                return set()
        found = {module}
        for depth in range(1, len(parts)):
            init = _joined(base, [*parts[:depth], "__init__.py"])  # (no part is empty: the module was found)
            if init in known:
                found.add(init)
        return found


_POSIX = os.sep == "/"


def _joined(base: str, parts: List[str]) -> str:
    """`base/a/b` for the parts `a`, `b` (a plain join on POSIX: a part is never absolute here)."""
    return "/".join([base, *parts]) if _POSIX else os.path.join(base, *parts)


_reach: PerProject[Reach] = PerProject(_scan)
run_mode.when_forgetting(_reach.forget)


def _project_of(files: Iterable[str], keep: Optional[Keep] = None) -> _Project:
    paths = [os.path.abspath(path) for path in files]
    return _Project(paths, _Finder(frozenset(paths)))


_projects: PerProject[_Project] = PerProject(_project_of)  # (for the notebooks)
run_mode.when_forgetting(_projects.forget)
