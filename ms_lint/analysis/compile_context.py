"""The project's compile context: the syntax level and the device target it sets, wherever it sets them.

A training script sets `set_context(jit_syntax_level=STRICT)` or `set_device("Ascend")` once, usually in the
entry script, and every module's graph code compiles under it. The scan reads the text of the project's files
(cheap) and parses only those that mention one of the APIs. Options win over what the code says.

Recognised (MindSpore 2.10): `set_context(jit_syntax_level=...)`, `JitConfig(jit_syntax_level=...)` (per Cell,
through `set_jit_config`), the environment variable `MS_DEV_JIT_SYNTAX_LEVEL` set in code, `set_context(
device_target=...)`, `set_device(...)`. A plain `@jit` compiles at LAX even under a STRICT context (measured);
`@jit(fullgraph=True)` is STRICT: those are per function, in `GraphScope`.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable, FrozenSet, Iterable, List, Optional, Set, Tuple

from ms_lint import store
from ms_lint.analysis import replaced_api, run_mode
from ms_lint.analysis.per_project import Keep, PerFile, PerProject, read_each
from ms_lint.analysis.walk import spelled_name
from ms_lint.source import SourceError, decode, parse, walk

_NEEDLES = (b"jit_syntax_level", b"device_target", b"set_device", b"MS_DEV_JIT_SYNTAX_LEVEL")
_TARGETS = {"ascend": "ascend", "gpu": "gpu", "cpu": "cpu", "davinci": "ascend"}
_MAX_FILES = 20000
# What a file must spell to set a level or a target `facts_of_module` reads: the level names, or `device_target=`
# / `set_device(` before a string literal (blanks, comments, line continuations and parentheses between). Most
# files that spell a needle only read a variable (`args.device_target`): they are not parsed.
# (a comment runs to the end of its line, `(?![^\n])`: were it allowed to stop early, every `#` of a `#####`
# banner could start another, and a search backtracks exponentially: 2.5 s for 24 of them, issue 19's sixteenth
# sample)
_COMMENT = rb"#[^\n]*(?![^\n])"
_BLANK = rb"(?:\s|\\|" + _COMMENT + rb")*"  # blanks, line continuations, comments
_MAY_SET = re.compile(rb"jit_syntax_level|MS_DEV_JIT_SYNTAX_LEVEL|(?:device_target" + _BLANK + rb"=|set_device"
                      + _BLANK + rb"\()(?:\s|\\|" + _COMMENT + rb"|\()*[rRuUbBfF]*['\"]")


def selects_graph_mode(data: bytes) -> Optional[int]:
    """The row where a file's `set_context` selects GRAPH_MODE (`run_mode.selections`: not one a script selects
    last, after what it runs), or None."""
    if b"set_context" not in data:
        return None
    return next((row for mode, row in run_mode.selections(data) if mode == run_mode.GRAPH), None)


# (syntax levels, device targets) a module sets, each with its row
ModuleFacts = Tuple[List[Tuple[str, int]], List[Tuple[str, int]]]


@dataclass(frozen=True)
class CompileContext:
    syntax_level: Optional[str] = None  # "strict" | "lax" | None (not set: LAX)
    target: Optional[str] = None  # "ascend" | "gpu" | "cpu" | None (not set: any)
    # where each was found, for messages: (path, row)
    level_source: Optional[Tuple[str, int]] = None
    target_source: Optional[Tuple[str, int]] = None
    # attribute names some code sets on Cells with `add_flags(name=...)` / `add_flags_recursive(name=...)`
    flags: FrozenSet[str] = frozenset()
    # MindSpore names the project replaces with its own when imported (`replaced_api`: `mindspore.ops.zeros`)
    replaced_api: FrozenSet[str] = frozenset()
    # where the project shows it runs its Cells in PyNative and never compiles them (`run_mode.of_project`)
    pynative_source: Optional["run_mode.Evidence"] = None
    # where it selects GRAPH_MODE, when it never selects another mode (`run_mode.of_project`)
    graph_only_source: Optional["run_mode.Evidence"] = None


def facts_of_module(tree: ast.Module) -> ModuleFacts:
    """(syntax levels, targets) a module sets, each with its row. Linting asks through the module's memo (the graph
    scope and the rules that need the target share one computation)."""
    levels, targets = [], []
    nodes = list(walk(tree))  # the same order as ast.walk, a few times faster
    ignored = {id(k.value) for node in nodes if isinstance(node, ast.Call) and spelled_name(node.func) == "jit"
               for k in node.keywords if k.arg == "jit_config"}  # jit() drops jit_config in 2.10 (measured)
    setting_nodes: List[ast.AST] = []
    for node in nodes:
        if isinstance(node, ast.keyword) and node.arg == "jit_syntax_level" and not _inside(node, ignored, tree):
            level = _level(node.value)
            if level:
                levels.append((level, node.value.lineno))
                setting_nodes.append(node)
        elif isinstance(node, ast.keyword) and node.arg == "device_target":
            target = _target(node.value)
            if target:
                targets.append((target, node.value.lineno))
        elif isinstance(node, ast.Call) and spelled_name(node.func) == "set_device" and node.args:
            target = _target(node.args[0])
            if target:
                targets.append((target, node.lineno))
        elif isinstance(node, ast.Assign) and any(_is_level_variable(t) for t in node.targets):
            # os.environ["MS_DEV_JIT_SYNTAX_LEVEL"] = "0"
            level = {"0": "strict", "2": "lax"}.get(str(_constant(node.value)))
            if level:
                levels.append((level, node.lineno))
                setting_nodes.append(node)
    if levels:  # STRICT set in a function and restored there holds only for what runs in between
        windowed = {id(setting) for window in level_windows(tree) for setting in window.settings}
        levels = [found for found, node in zip(levels, setting_nodes) if id(node) not in windowed]
    return levels, targets


@dataclass(frozen=True)
class LevelWindow:
    """A function that sets STRICT and later sets the level back (a test running one Cell under STRICT): the
    level holds for the code that runs between `start` and `end` (rows), not for the module."""

    function: ast.AST
    start: int
    end: int
    settings: Tuple[Any, ...]  # the nodes that set and restore the level (Assign or keyword: both have rows)


def level_windows(tree: ast.Module) -> List[LevelWindow]:
    """Every window of every function of the module, in order."""
    windows: List[LevelWindow] = []
    for function in walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        opened: Any = None
        for node, level in _own_level_settings(function):
            if level == "strict" and opened is None:
                opened = node
            elif level != "strict" and opened is not None:
                windows.append(LevelWindow(function, opened.lineno, node.lineno, (opened, node)))
                opened = None
    return windows


def _own_level_settings(function: ast.AST) -> List[Tuple[Any, str]]:
    """(node, level) for what a function's own body sets, in source order: `os.environ[...] = "0"` (the Assign)
    and `set_context(jit_syntax_level=...)` (the keyword's value, as `facts_of_module` records it)."""
    found: List[Tuple[Any, str]] = []
    stack = list(getattr(function, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign) and any(_is_level_variable(t) for t in node.targets):
            level = {"0": "strict", "2": "lax", "1": "lax"}.get(str(_constant(node.value)))
            if level:
                found.append((node, level))
        elif isinstance(node, ast.keyword) and node.arg == "jit_syntax_level":
            level = _level(node.value)
            if level:
                found.append((node, level))
        stack.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda item: item[0].lineno)


def scan(files: Iterable[str], keep: Optional[Keep] = None) -> CompileContext:
    """The context the given files set. STRICT anywhere wins (the strictest level the code will meet); the
    first target found wins."""
    level = target = None
    level_source = target_source = None
    flags: Set[str] = set()
    replaced: Set[str] = set()
    # a test that compiles under STRICT says nothing about how the project runs (tests count towards the limit)
    for path, data in read_each((path for path in islice(files, _MAX_FILES) if not _is_test_file(path)), _MAX_FILES):
        file_flags, file_replaced, found_facts = _what_a_file_sets(path, data, keep)
        flags |= file_flags
        replaced |= file_replaced
        if found_facts is None:
            continue
        levels, targets = found_facts
        for found, row in levels:
            if level != "strict":
                level, level_source = found, (path, row)
        for found, row in targets:
            if target is None:
                target, target_source = found, (path, row)
    return CompileContext(level, target, level_source, target_source, frozenset(flags), frozenset(replaced))


def _file_sets(path: str, data: bytes, keep: Optional[Keep]) -> Tuple[FrozenSet[str], FrozenSet[str],
                                                                       Optional[ModuleFacts]]:
    """What one file contributes to its project's context: the Cell flags it adds, the MindSpore names it replaces,
    and `facts_of_module` (None when it spells no setting, or cannot be parsed)."""
    flags = flag_names(data.decode("utf-8", errors="replace")) if b"add_flags" in data else frozenset()
    replaced = replaced_api.names_replaced(path, data, keep)
    if not any(needle in data for needle in _NEEDLES) or not _MAY_SET.search(data):
        return flags, replaced, None
    return flags, replaced, _stored_facts(path, data, keep)


_what_a_file_sets = PerFile(_file_sets)  # (the scans of nested projects read the same files)


# Where the scan keeps what each file it parses sets, by content: a run from the cache lints nothing, but its
# project rules may need the context (set by the CLI and its workers while a run uses a cache directory)
_facts_directory: Optional[str] = None


def keep_facts_in(directory: Optional[str]) -> None:
    global _facts_directory
    _facts_directory = directory


def _stored_facts(path: str, data: bytes, keep: Optional[Keep]) -> Optional[ModuleFacts]:
    """`facts_of_module` of the file, from the store when its content was parsed before; None if unparsable."""
    directory = _facts_directory
    entry = None
    if directory is not None:
        entry = os.path.join(directory, f"{hashlib.blake2b(data, digest_size=20).hexdigest()}.json")
        try:
            with open(entry, encoding="utf-8") as handle:
                levels, targets = json.load(handle)
            return [tuple(item) for item in levels], [tuple(item) for item in targets]
        except (OSError, ValueError, TypeError):
            pass
    try:
        source = decode(data, path)
        tree = parse(source)
    except SourceError:
        return None
    if keep is not None:
        keep(path, source, tree)  # (read only here)
    found = facts_of_module(tree)
    if entry is not None:
        try:
            store.write_json(entry, found)
        except OSError:
            pass  # an unwritable store costs time, never correctness
    return found


_ADD_FLAGS = re.compile(r"\badd_flags\w*\s*\(([^()]*)\)")


@functools.lru_cache(maxsize=4)  # asked once per Cell class of the module being linted
def flag_names(text: str) -> FrozenSet[str]:
    """Keyword names of `add_flags(...)` / `add_flags_recursive(...)` calls in a module's text."""
    if "add_flags" not in text:
        return frozenset()
    return frozenset(name for match in _ADD_FLAGS.finditer(text)
                     for name in re.findall(r"(\w+)\s*=(?!=)", match.group(1)))


_contexts: PerProject[CompileContext] = PerProject(scan)


def of_project(root: str, files_under: Callable[[str], Iterable[str]], keep: Optional[Keep] = None) -> CompileContext:
    """The context of the project under `root` (scanned once per process; the trees it parses go to `keep`). The
    root is the directory of the pyproject.toml that configures ms_lint, else the linted file's top package: never
    an unbounded tree."""
    return _contexts.of(root, files_under, keep)


def forget_projects() -> None:
    """Scan every project again when next asked (a long-lived process whose files changed: the server)."""
    _contexts.forget()


def _is_test_file(path: str) -> bool:
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    name = parts[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or any(
        part in ("tests", "test", "testing") for part in parts[:-1])


def _inside(keyword: ast.keyword, ignored_values, tree: ast.Module) -> bool:
    """Is this keyword part of a call that is the value of an ignored `jit_config=` argument?"""
    if not ignored_values:
        return False
    for node in ast.walk(tree):
        if id(node) in ignored_values and any(k is keyword for k in ast.walk(node)):
            return True
    return False


def _level(value: ast.expr) -> Optional[str]:
    text = value.attr if isinstance(value, ast.Attribute) else _constant(value)
    if text in ("STRICT", 0, "0"):
        return "strict"
    if text in ("LAX", "COMPATIBLE", 1, 2, "1", "2"):
        return "lax"
    return None


def _target(value: ast.expr) -> Optional[str]:
    text = _constant(value)
    return _TARGETS.get(text.lower()) if isinstance(text, str) else None


def _constant(value: ast.AST):
    return value.value if isinstance(value, ast.Constant) else None


def _is_level_variable(target: ast.AST) -> bool:
    return isinstance(target, ast.Subscript) and _is_environ(target.value) and \
        _constant(target.slice) == "MS_DEV_JIT_SYNTAX_LEVEL"


def _is_environ(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Attribute) and expr.attr == "environ"


def module_target(facts: ModuleFacts) -> Optional[str]:
    """The device target a module sets itself with a constant (`set_context(device_target="CPU")`...), from its
    `facts_of_module`."""
    targets = facts[1]
    return targets[0][0] if targets else None


def target_of(settings, module_target_: Optional[str], compile_context) -> str:
    """The option wins, then what the module sets itself (a script of a project that also has an Ascend script
    runs on what it says), then what the project sets anywhere, else "any"."""
    return settings.target or module_target_ or compile_context.target or "any"
