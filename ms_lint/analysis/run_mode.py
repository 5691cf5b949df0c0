"""How a project runs its Cells: compiled (GRAPH_MODE, or `jit` around code that calls them) or in PyNative.

MindSpore 2.10 starts in PyNative. A pitfall of compiled code (an unbound local, `eval`, a frozen `random()`)
never happens in a project that never compiles: there the rules that claim one are lowered a step (`Rule.report`).
Any sign of compiling in any file of the project keeps the findings: a library's Cells are compiled by its users.

* **may compile**: `set_context(mode=...)` given `GRAPH_MODE`, `0` or anything but a PyNative constant (a
  variable, a conditional, `**options`), or a MindSpore `jit` around a function that may call a Cell;
* **runs in PyNative**: nothing may compile, and a script selects `PYNATIVE_MODE` or runs itself (`if __name__
  == "__main__":`, `args = parser.parse_args()` or `trainer.train()` at module level) without selecting a mode,
  or no file selects a mode, applies `jit` or sets how Cells compile (`jit_syntax_level`, `JitConfig`): a library
  port alone, in which nothing leaves 2.10's PyNative;
* **compiles only**: every mode the project selects is the constant `GRAPH_MODE` (or `0`). A failure of PyNative
  alone (MSL073's lazy tensor kept as an attribute) is then lowered a step, as the compiled-only rules are in a
  project that runs in PyNative. A script that runs without selecting a mode does not count against it: scripts
  that convert data or vocabularies rarely build the Cells.

Each file is read as bytes; only a file that applies `jit` is parsed (to see what the function calls). The scan
covers the project around the linted file (`project_root`): a model zoo's `src/` often has no `__init__.py`, and
the `train.py` that selects the mode sits a level or two up.
"""
from __future__ import annotations

import ast
import builtins
import functools
import os
import re
from typing import Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Set, Tuple

from ms_lint.analysis.per_project import Keep, PerFile, PerProject, read_each
from ms_lint.source import SourceError, decode, is_package, package_root, parse, walk

COMPILES, PYNATIVE, RUNS, OPTION, GRAPH = "compiles", "pynative", "runs", "option", "graph"
# `set_context(mode=GRAPH_MODE if args.mode.upper().startswith("GRAPH") else PYNATIVE_MODE)`: the command-line
# option `--mode` decides (MindSpore's scientific-computing template); "by-option:mode"
BY_OPTION = "by-option:"
PYNATIVE_CHOICES = "pynative-choices"
PYNATIVE_DEFAULT = "pynative-default"
UNSELECTED = "unselected"  # no file selects a mode, applies `jit` or runs as a script
NOTEBOOK = "notebook"  # a notebook that selects no mode and applies no `jit`, nor does what it imports
REACHED = "reached:"


class Evidence(NamedTuple):
    """Where a project shows it runs in PyNative: a script that selects it, or one that runs without a mode."""

    path: str
    row: int
    kind: str  # PYNATIVE | PYNATIVE_CHOICES | PYNATIVE_DEFAULT | RUNS | GRAPH | OPTION (`mode = ...`), or
    # REACHED + PYNATIVE | RUNS: a script that imports the module, when nothing that may compile does

    def describe(self) -> str:
        if self.kind.startswith(REACHED):  # (PYNATIVE or RUNS)
            where = f"`{os.path.basename(self.path)}` line {self.row}"
            said = f"{where} selects PYNATIVE_MODE for a script that imports" if self.kind == REACHED + PYNATIVE \
                else f"{where} runs without selecting a mode (2.10 starts in PyNative) and imports"
            return f"{said} this module, directly or not; nothing that may compile imports it"
        if self.kind == OPTION:
            return "the `mode` option says so"
        if self.kind == NOTEBOOK:
            return (f"`{os.path.basename(self.path)}` runs as a program of its own and neither it nor what it "
                    f"imports selects a mode or applies `jit`; 2.10 starts in PyNative")
        # (a notebook's rows count the lines of its code cells together: the cell alone is named)
        where = f"`{os.path.basename(self.path)}`" + ("" if self.path.endswith(".ipynb") else f" line {self.row}")
        if self.kind == GRAPH:
            return f"{where} selects GRAPH_MODE, and no file selects another mode"
        if self.kind == PYNATIVE:
            return f"{where} selects PYNATIVE_MODE"
        if self.kind == PYNATIVE_DEFAULT:
            return (f"{where} takes the mode from a command-line option that is PyNative unless GRAPH is passed, "
                    f"and no launch script of the project passes it")
        if self.kind == PYNATIVE_CHOICES:
            return f"{where} takes the mode from a command-line option whose choices are PyNative only"
        if self.kind == UNSELECTED:
            return "no file of the project selects a mode or applies `jit`, and 2.10 starts in PyNative"
        return f"{where} runs without selecting a mode, and 2.10 starts in PyNative"


_MAX_FILES = 20000
_TUNES_COMPILING = (b"jit_syntax_level", b"MS_DEV_JIT_SYNTAX_LEVEL", b"JitConfig", b"set_jit_config")


class ProjectMode(NamedTuple):
    """What a project shows of how it runs its Cells."""

    pynative: Optional[Evidence] = None  # where it shows it never compiles them
    graph_only: Optional[Evidence] = None  # where it selects GRAPH_MODE, when it never selects another mode
    compiles: bool = False  # some file may compile Cells (`set_context(mode=...)` but PyNative, or `jit`)


def of_project(root: str, files_under: Callable[[str], Iterable[str]],
               keep: Optional[Keep] = None) -> ProjectMode:
    """How the project under `root` runs its Cells (scanned once per process; the trees it parses go to
    `keep`)."""
    return _modes.of(root, files_under, keep)


def forget_projects() -> None:
    """Scan every project again when next asked (a long-lived process whose files changed: the server)."""
    _modes.forget()
    _jit_rows.clear()
    _is_project_directory.cache_clear()
    for forget in _forgetting:
        forget()


_forgetting: List[Callable[[], None]] = []  # what modules built on this one keep per project (`when_forgetting`)


def when_forgetting(forget: Callable[[], None]) -> None:
    """Call `forget` too when the projects are scanned again (`script_directories` keeps a memo per directory)."""
    _forgetting.append(forget)


def scan(files: Iterable[str], keep: Optional[Keep] = None) -> ProjectMode:
    found: Optional[Evidence] = None
    compiles = False
    graph: Optional[Evidence] = None  # the first `set_context(mode=GRAPH_MODE)`
    other_mode = False  # some `set_context(mode=...)` may select another mode
    by_option: List[Tuple[str, int, str]] = []  # (path, row, option name)
    may_compile: Dict[str, bool] = {}  # option name -> may some declaration of it select GRAPH_MODE
    graph_default: Dict[str, bool] = {}  # option name -> may some declaration of it default to GRAPH_MODE
    declared_in: Set[str] = set()  # the directories of the files that declare options
    files = list(files)
    if len(files) > _MAX_FILES:
        return ProjectMode()  # too large to say: left as it is
    tunes_compiling = False  # some file sets how Cells compile (a syntax level, a `JitConfig`)
    for path, data in read_each(files, _MAX_FILES):
        tunes_compiling = tunes_compiling or _tunes_compiling(path, data)
        chosen = _selections_of(path, data)
        for mode, row in chosen:
            if mode == GRAPH:
                graph = graph or Evidence(path, row, GRAPH)
            else:
                other_mode = True
        if compiles:
            if other_mode:
                break
            continue  # read on only for the modes selected
        if b"add_argument" in data:
            for name, may_select_graph, may_default_to_graph in _options_of(path, data):
                may_compile[name] = may_compile.get(name, False) or may_select_graph
                graph_default[name] = graph_default.get(name, False) or may_default_to_graph
                declared_in.add(os.path.dirname(path))
        said = _evidence_of(path, data, chosen, keep)
        if said is None:
            continue
        if said[0] == COMPILES:
            compiles = True
        elif said[0].startswith(BY_OPTION):
            by_option.append((path, said[1], said[0][len(BY_OPTION):]))
        elif found is None or (found.kind, said[0]) == (RUNS, PYNATIVE):  # a selected PyNative says more
            found = Evidence(path, said[1], said[0])
    graph_only = None if other_mode else graph
    if compiles:
        return ProjectMode(None, graph_only, compiles=True)
    for path, row, name in by_option:
        if not may_compile.get(name, True):
            kind = PYNATIVE_CHOICES
        elif name in graph_default and not graph_default[name] and not _launched_with_graph(declared_in, name):
            kind = PYNATIVE_DEFAULT  # `default="PYNATIVE"`, and no `run.sh` passes `--mode GRAPH`
        else:
            return ProjectMode(None, graph_only, compiles=True)  # an option that may say GRAPH, or an unknown one
        if found is None or found.kind == RUNS:
            found = Evidence(path, row, kind)
    if found is None and graph is None and not other_mode and not tunes_compiling and files:
        found = Evidence(files[0], 0, UNSELECTED)  # a library alone (vector-quantize's port): nothing compiles
    return ProjectMode(found, graph_only)


# what each file says, asked once of a file the scans of nested projects both read (`PerFile`)
_tunes_compiling = PerFile(lambda path, data: any(needle in data for needle in _TUNES_COMPILING))
_selections_of = PerFile(lambda path, data: list(selections(data)) if b"set_context" in data else [])
_options_of = PerFile(lambda path, data: list(declared_options(data)))
_evidence_of = PerFile(lambda path, data, chosen, keep: evidence(data, path, chosen, keep))


def _launched_with_graph(directories: Iterable[str], option: str) -> bool:
    """Does a shell script beside a declaring file (or in its `scripts/`) pass `--<option> GRAPH`?"""
    passes = re.compile(rb"--" + re.escape(option.encode()).replace(b"_", b"[_-]") + rb"[=\s]+['\"]?graph", re.I)
    for directory in directories:
        for folder in (directory, os.path.join(directory, "scripts")):
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            scripts = [os.path.join(folder, name) for name in names if name.endswith(".sh")]
            if any(passes.search(data) for _, data in read_each(scripts, 200)):
                return True
    return False



_modes: PerProject[ProjectMode] = PerProject(scan)

_ADD_ARGUMENT = re.compile(rb"\badd_argument\s*\(\s*['\"]--([\w-]+)['\"]")
_CHOICES = re.compile(rb"\bchoices\s*=\s*[\[(]([^\])]*)[\])]")
_DEFAULT = re.compile(rb"\bdefault\s*=\s*(['\"])([^'\"]*)\1")


def declared_options(data: bytes) -> Iterator[Tuple[str, bool, bool]]:
    """(name, may select GRAPH_MODE, may default to it) for each `parser.add_argument("--name", ...)` of a file:
    it may select it unless its `choices` are all strings that do not start with "graph" (`choices=["PYNATIVE"]`),
    and default to it unless its `default` is a string starting with "pynative"."""
    for match in _ADD_ARGUMENT.finditer(data):
        arguments = _arguments(data, data.index(b"(", match.start()))
        choices = _CHOICES.search(arguments)
        listed = [item.strip() for item in choices.group(1).split(b",") if item.strip()] if choices else []
        # every choice a string literal, none of them GRAPH...: the option cannot select GRAPH_MODE
        pynative_only = bool(listed) and all(
            item[:1] in (b"'", b'"') and not item.strip(b"'\"").lower().startswith(b"graph") for item in listed)
        default = _DEFAULT.search(arguments)
        pynative_default = default is not None and default.group(2).lower().startswith(b"pynative")
        yield match.group(1).decode().replace("-", "_"), not pynative_only, not pynative_default


# Files that mark a project's own directory (a model of a zoo has its README and requirements)
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", ".git")
_LEVELS_UP = 3


def project_root(path: str) -> str:
    """The directory a project's scan covers: the nearest of the file's top package's directory and its three
    parents that holds a project file (README, requirements, setup, `.git`) or a training script, else the top
    package's directory."""
    root = directory = package_root(path)
    if is_package(os.path.dirname(directory)):
        # a directory without `__init__.py` inside a package (ACTOR's `architectures/tools/`): a namespace
        # package of it, imported as `src.models.architectures.tools.embeddings`
        root = directory = package_root(directory)
    for _ in range(_LEVELS_UP + 1):
        if _is_project_directory(directory):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return root


@functools.lru_cache(maxsize=256)
def _is_project_directory(directory: str) -> bool:
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return any(name in _MARKERS or name.lower().startswith("readme")
               or (name.startswith("train") and name.endswith(".py")) for name in names)

# A `set_context(` call that is not in a comment nor a `def`: its arguments are read up to the matching parenthesis
_SET_CONTEXT = re.compile(rb"^[^#\n]*?(?<!def )\bset_context\s*\(", re.M)
_MODE_KEYWORD = re.compile(rb"(?<![\w.])mode\s*=(?!=)")
_PYNATIVE_VALUE = re.compile(rb"\s*(?:(?:\w+\.)*PYNATIVE_MODE|1)\s*")
_GRAPH_VALUE = re.compile(rb"\s*(?:(?:\w+\.)*GRAPH_MODE|0)\s*")
# A script: a `__main__` guard, command-line arguments parsed at module level (`args = parser.parse_args()`), or
# a training or main entry called at module level (`trainer.train()`, `model.fit(...)`, `main()`: scratch scripts)
_SCRIPT = re.compile(rb"^if\s+__name__\s*==\s*['\"]__main__['\"]|^[\w.]+\s*=\s*[\w.]+\.parse_args\(|"
                     rb"^(?:\w+\.)?(?:train|fit|main)\(", re.M)
# MindSpore's `jit` (or the removed `ms_function`) as a decorator or a call; `torch.jit.ignore` is not one
_JIT = re.compile(rb"^[^#\n]*?(?<![\w.])(?:(?:ms|mindspore)\.)?(?:jit|ms_function)\b\s*[(\n]|"
                  rb"^\s*@(?:(?:ms|mindspore)\.)?(?:jit|ms_function)\b", re.M)
_JIT_NAMES = frozenset({"jit", "ms_function"})
_BUILTINS = frozenset(dir(builtins))


def evidence(data: bytes, path: str, chosen: Optional[List[Tuple[str, int]]] = None,
             keep: Optional[Keep] = None) -> Optional[Tuple[str, int]]:
    """What one file says of the mode, with its row: (COMPILES | PYNATIVE | BY_OPTION + name | RUNS, row), or
    None. `chosen`: the file's `selections`, when the caller has them; `keep` takes a tree parsed here."""
    pynative: Optional[Tuple[str, int]] = None
    if chosen is None:
        chosen = list(selections(data)) if b"set_context" in data else []
    for mode, row in chosen:
        if mode in (COMPILES, GRAPH):
            return COMPILES, row
        if pynative is None:  # PYNATIVE, or BY_OPTION: the scan decides
            pynative = (mode, row)
    jit = jit_row(data, path, keep)
    if jit is not None:
        return COMPILES, jit
    if pynative is not None:
        return pynative
    script = script_row(data)
    return (RUNS, script) if script is not None else None


def jit_row(data: bytes, path: str, keep: Optional[Keep] = None) -> Optional[int]:
    """The row of a MindSpore `jit` around a function that may call a Cell, or None (a file parsed once per
    content: the run-mode scan and `module_reach` both ask)."""
    if not ((b"jit" in data or b"ms_function" in data) and _line_match(_JIT, data, _JIT_NEEDLES)):
        return None
    key = (path, len(data), hash(data))
    if key not in _jit_rows:
        _jit_rows[key] = _jit_calling_cells(data, path, keep)
    return _jit_rows[key]


_jit_rows: Dict[Tuple[str, int, int], Optional[int]] = {}


def script_row(data: bytes) -> Optional[int]:
    """The row where a file shows it runs as a script (`if __name__ == "__main__":`, module-level
    `parse_args()`, `train()`, `fit()`, `main()`), or None."""
    script = _line_match(_SCRIPT, data, _SCRIPT_NEEDLES)
    return data.count(b"\n", 0, script.start()) + 1 if script else None


_SCRIPT_NEEDLES = (b"__main__", b"parse_args", b"train(", b"fit(", b"main(")
_JIT_NEEDLES = (b"jit", b"ms_function")


def _line_match(pattern: "re.Pattern[bytes]", data: bytes, needles: Tuple[bytes, ...]) -> Optional["re.Match[bytes]"]:
    return next(line_matches(pattern, data, needles), None)


def line_matches(pattern: "re.Pattern[bytes]", data: bytes, needles: Tuple[bytes, ...]) -> Iterator["re.Match[bytes]"]:
    """The matches of a pattern anchored at line starts whose line holds one of `needles`, in order, tried only at
    the starts of such lines: searched through a whole file, a `^` pattern tries every position (0.34 s for `_JIT`
    on the 77 files of mindone that mention jit; 0.9 s for the import statements of its 1,729 files)."""
    starts = set()
    for needle in needles:
        position = data.find(needle)
        while position >= 0:
            starts.add(data.rfind(b"\n", 0, position) + 1)
            end = data.find(b"\n", position)
            if end < 0:
                break
            position = data.find(needle, end)
    for start in sorted(starts):
        match = pattern.match(data, start)
        if match is not None:
            yield match


def selections(data: bytes) -> Iterator[Tuple[str, int]]:
    """(GRAPH | COMPILES | PYNATIVE | BY_OPTION + name, row) for each `set_context(...)` of a file that sets the
    mode, but for a GRAPH_MODE a script selects last: mRASP2's self-test selects it after its only forward call,
    as the file's last statement, and compiles nothing."""
    for match in _SET_CONTEXT.finditer(data):
        if not _is_code(data, match.start()):
            continue
        arguments = _arguments(data, match.end() - 1)
        mode = _mode_selected(arguments)
        if mode == COMPILES:
            mode = _mode_of_variable(data, arguments) or mode
        if mode == COMPILES and arguments.strip().startswith(b"**") \
                and enclosing_def(data, data.count(b"\n", 0, match.start()) + 1) == b"set_context":
            continue  # a wrapper passing its caller's options on (TensorLayerX's backends): its callers select
        if mode is not None and not (mode in (GRAPH, COMPILES)
                                     and _runs_last(data, match.start(), match.end() + len(arguments) + 1)):
            yield mode, data.count(b"\n", 0, match.start()) + 1


def _is_code(data: bytes, start: int) -> bool:
    """Is the line starting at `start` code, not a doctest prompt (`>>> ms.set_context(mode=ms.GRAPH_MODE)` in
    a docstring copied from MindSpore's sources: edsr_project, issue 19's fifteenth sample) nor a line inside a
    triple-quoted string (an odd count of one kind of triple quote before it)?"""
    end = data.find(b"\n", start)
    if data[start:end if end >= 0 else len(data)].lstrip().startswith((b">>>", b"...")):
        return False
    return all(data.count(quotes, 0, start) % 2 == 0 for quotes in (b'"""', b"'''"))


# blanks and comments; a comment runs to the end of its line (else a `#####` banner backtracks exponentially: W-MAE's
# 53 `#` after its last `set_context` never finished, issue 19's sixteenth sample)
_NOTHING = re.compile(rb"(?:\s|#[^\n]*(?![^\n]))*")


def _runs_last(data: bytes, start: int, end: int) -> bool:
    """Is the statement at `start`..`end` (a line's start) the last a script runs: only comments follow it, in
    the file's `if __name__ == "__main__":` block? (At module level it selects the mode for the scripts that
    import the file; in a function, for its callers.)"""
    return data[start:start + 1] in (b" ", b"\t") and bool(_NOTHING.fullmatch(data, end)) \
        and in_main_block(data, data.count(b"\n", 0, start) + 1)


MAIN_GUARD = re.compile(rb"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", re.M)


def in_main_block(data: bytes, row: int) -> bool:
    """Is line `row` inside a top-level `if __name__ == "__main__":` block (or the guard itself)?"""
    for guard in MAIN_GUARD.finditer(data):
        guard_row = data.count(b"\n", 0, guard.start()) + 1
        if guard_row > row:
            return False
        lines = data.split(b"\n")[guard_row:row]  # the lines after the guard, up to `row`
        return all(not line.strip() or line[:1] in (b" ", b"\t") or line.lstrip().startswith(b"#") for line in lines)
    return False


def enclosing_def(data: bytes, row: int) -> Optional[bytes]:
    """The name of the innermost `def` around line `row` (read by indentation), None at module level."""
    found = def_around(data, row)
    return found[0] if found is not None else None


def def_around(data: bytes, row: int) -> Optional[Tuple[bytes, int]]:
    """(name, row of its header) of the innermost `def` around line `row`, None at module level."""
    lines = data.split(b"\n")
    line = lines[row - 1] if 0 < row <= len(lines) else b""
    indent = len(line) - len(line.lstrip())
    for above_row in range(row - 1, 0, -1):
        if indent == 0:
            return None
        above = lines[above_row - 1]
        stripped = above.lstrip()
        if not stripped or stripped[:1] in b"#)]}" or len(above) - len(stripped) >= indent:  # (`) -> int:`)
            continue
        indent = len(above) - len(stripped)
        header = _DEF.match(stripped)
        if header is not None:
            return header.group(1), above_row
    return None


_DEF = re.compile(rb"(?:async\s+)?def\s+(\w+)")


def _arguments(data: bytes, opening: int) -> bytes:
    """The text between the parenthesis at `opening` and its match (strings holding parentheses are rare here)."""
    depth = 0
    for index in range(opening, min(len(data), opening + 4000)):
        char = data[index]
        if char == 40:  # (
            depth += 1
        elif char == 41:  # )
            depth -= 1
            if depth == 0:
                return data[opening + 1:index]
    return data[opening + 1:opening + 4000]


_NAME_VALUE = re.compile(rb"\s*([A-Za-z_]\w*)\s*")


def _mode_of_variable(data: bytes, arguments: bytes) -> Optional[str]:
    """PYNATIVE or GRAPH for `set_context(mode=ms_mode)` where every assignment of `ms_mode` in the file is that
    constant (JSG's `ms_mode = ms.context.PYNATIVE_MODE`, issue 19's sixteenth sample); None otherwise."""
    match = _MODE_KEYWORD.search(arguments)
    name = _NAME_VALUE.fullmatch(_top_level_value(arguments[match.end():])) if match else None
    if name is None or name.group(1) in (b"PYNATIVE_MODE", b"GRAPH_MODE"):
        return None
    values = [_top_level_value(value) for value in re.findall(
        rb"^[ \t]*" + re.escape(name.group(1)) + rb"[ \t]*(?::[^=\n]*)?=(?!=)([^\n#]*)", data, re.M)]
    if not values or re.search(rb"\b" + re.escape(name.group(1)) + rb"\b[^\n=]*\bin\b|def [^\n]*\b"
                               + re.escape(name.group(1)) + rb"\b", data):
        return None  # never assigned here, or a loop variable or a parameter: a value from elsewhere
    if all(_PYNATIVE_VALUE.fullmatch(value) for value in values):
        return PYNATIVE
    if all(_GRAPH_VALUE.fullmatch(value) for value in values):
        return GRAPH
    return None


_GRAPH_IF_OPTION = re.compile(rb"\s*(?:\w+\.)*GRAPH_MODE\s+if\s+\w+\.(\w+)\b[^\n]*?\belse\s+(?:\w+\.)*PYNATIVE_MODE\s*")


def _mode_selected(arguments: bytes) -> Optional[str]:
    """GRAPH (the constant), COMPILES (a value that may be GRAPH_MODE), PYNATIVE, BY_OPTION + the option's name,
    or None when the call leaves the mode alone."""
    if b"**" in arguments:
        return COMPILES  # `set_context(**config)`: may hold a mode
    match = _MODE_KEYWORD.search(arguments)
    if match is None:
        return None
    value = _top_level_value(arguments[match.end():])
    if _PYNATIVE_VALUE.fullmatch(value):
        return PYNATIVE
    if _GRAPH_VALUE.fullmatch(value):
        return GRAPH
    by_option = _GRAPH_IF_OPTION.fullmatch(value)
    return BY_OPTION + by_option.group(1).decode() if by_option else COMPILES


def _top_level_value(rest: bytes) -> bytes:
    """A keyword's value: the text up to the next comma outside brackets."""
    depth = 0
    for index, char in enumerate(rest):
        if char in b"([{":
            depth += 1
        elif char in b")]}":
            depth -= 1
        elif char == 44 and depth == 0:  # ,
            return rest[:index]
    return rest


def _jit_calling_cells(data: bytes, path: str, keep: Optional[Keep]) -> Optional[int]:
    """The row of a `jit` whose function may call a Cell (a compiled training step), or None. A function is taken
    to call no Cell when each of its calls is of a module attribute (`ops.add`), a method of a value (`x.sum()`),
    a builtin or a function of the module: MindNLP's `@jit` helpers over tensors."""
    try:
        source = decode(data, path)
        tree = parse(source)
    except SourceError:
        return None
    if keep is not None:
        keep(path, source, tree)  # (read only here)
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    modules = _module_names(tree)
    for node in walk(tree):  # (ast.walk's order, faster)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(map(_is_jit, node.decorator_list)):
            if _may_call_cell(node, functions, modules):
                return node.lineno
        elif isinstance(node, ast.Call) and _is_jit(node.func) and node.args:
            wrapped = node.args[0]
            target = functions.get(wrapped.id) if isinstance(wrapped, ast.Name) else None
            if target is None or _may_call_cell(target, functions, modules):
                return node.lineno
    return None


def _is_jit(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Call):
        expr = expr.func
    if isinstance(expr, ast.Name):
        return expr.id in _JIT_NAMES
    return isinstance(expr, ast.Attribute) and expr.attr in _JIT_NAMES and isinstance(expr.value, ast.Name) \
        and expr.value.id in ("ms", "mindspore")


def _module_names(tree: ast.Module) -> frozenset:
    """Names the module binds to imported modules (`import numpy as np`, `from mindspore import ops`)."""
    names: set = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names if alias.name.islower())
    return frozenset(names)


def _may_call_cell(function: ast.AST, functions: dict, modules: frozenset) -> bool:
    parameters = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}  # type: ignore[attr-defined]
    for node in walk(function):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in parameters or not (func.id in functions or func.id in modules or func.id in _BUILTINS):
                return True  # `net(x)`, `grad_fn(x)` given or bound elsewhere, `Net()(x)`
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            return True  # `self.network(x)`
    return False
