"""Linting many files: a content-keyed cache and `-j N` worker processes, with output in input order.

A cache entry is valid for the same ms_lint version, settings and file bytes (each set of options has entries
of its own), and only while every other project module its analysis consulted (a base class in another file,
say) still resolves to the same file with the same size and modification time: editing `blocks.py` re-lints
`model.py` whose Cells derive from it.
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import shutil
import signal
import sys
from dataclasses import asdict
from typing import Callable, Dict, List, Optional, Sequence

from ms_lint import __version__, store
from ms_lint.analysis import compile_context
from ms_lint.analysis.compile_context import CompileContext
from ms_lint.catalog import all_rules
from ms_lint.engine import FileResult, Linter
from ms_lint.rule import Diagnostic, Edit, Fix, Import
from ms_lint.settings import Settings
from ms_lint.source import SourceError, decode, remember_packages, remembered_packages

CACHE_DIRECTORY = ".ms_lint_cache"


# Each set of options (settings, ms_lint's code, Python) keeps its own entries in a directory of its own, so runs
# that alternate options (`--select MSL040`, then a plain check) both stay warm; the least recently used sets
# beyond this many are removed when a run starts.
KEPT_OPTION_SETS = 8
_USED = ".used"  # touched by every run of an option set: its age orders the pruning


class Cache:
    def __init__(self, directory: str, settings: Settings):
        codes = ",".join(rule.code for rule in all_rules())
        python = sys.version.split()[0]  # ast differs across Python versions
        self.key = hashlib.sha256(f"{__version__}|{_code_stamp()}|{python}|{codes}|{settings!r}".encode()).hexdigest()
        self.root = directory
        self.directory = os.path.join(directory, self.key[:24])

    def _entry_path(self, path: str) -> str:
        name = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:32]
        return os.path.join(self.directory, name[:2], f"{name}.json")

    def open_for_run(self) -> None:
        """Mark this option set as used now and prune the least recently used ones (once per run, before any
        worker starts)."""
        try:
            os.makedirs(self.directory, exist_ok=True)
            _ignore_all(self.root)
            with open(os.path.join(self.directory, _USED), "w", encoding="utf-8"):
                pass
            _prune(self.root, KEPT_OPTION_SETS)
        except OSError:
            pass  # an unwritable cache costs time, never correctness

    def load(self, path: str, content: str, linter: Linter) -> Optional[FileResult]:
        try:
            with open(self._entry_path(path), encoding="utf-8") as handle:
                entry = json.load(handle)
        except (OSError, ValueError):
            return None
        if entry.get("key") != self.key or entry.get("content") != content \
                or entry.get("context") != context_stamp(linter.compile_context(path)):
            return None  # another file changed what the project sets (a level, a target, the mode)
        with linter.index.importing(path):
            for name, recorded in entry.get("dependencies", {}).items():
                if _stamp(linter.index.find(name)) != recorded:
                    return None
        try:
            diagnostics = [_diagnostic(item) for item in entry["diagnostics"]]
        except (KeyError, TypeError):
            return None
        return FileResult(path, diagnostics, facts=entry.get("facts", {}))

    def store(self, result: FileResult, content: str, linter: Linter) -> None:
        if result.internal_errors:
            return  # never cache a crash
        entry = {
            "key": self.key,
            "content": content,
            "context": context_stamp(linter.compile_context(result.path)),
            "dependencies": {name: _stamp(found) for name, found in result.dependencies.items()},
            "diagnostics": [asdict(d) for d in result.diagnostics],
            "facts": result.facts,
        }
        target = self._entry_path(result.path)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            store.write_json(target, entry)
        except OSError:
            pass  # an unwritable cache costs time, never correctness


def context_stamp(context: CompileContext) -> str:
    """The compile context a file was linted under, as the cache compares it (stable across processes)."""
    return json.dumps([context.syntax_level, context.target, context.level_source, context.target_source,
                       sorted(context.flags), context.pynative_source, context.graph_only_source,
                       sorted(context.replaced_api)])


def _ignore_all(directory: str) -> None:
    """A .gitignore that keeps the cache out of version control."""
    marker = os.path.join(directory, ".gitignore")
    if not os.path.exists(marker):
        with open(marker, "w", encoding="utf-8") as handle:
            handle.write("# created by ms-lint\n*\n")


def _prune(directory: str, keep: int) -> None:
    """Remove all but the `keep` most recently used option sets under `directory` (and anything else a former
    layout left there)."""
    def last_used(path: str) -> float:
        try:
            return os.stat(os.path.join(path, _USED)).st_mtime
        except OSError:
            return 0.0  # no marker: not an option set of this layout

    sets = [os.path.join(directory, name) for name in os.listdir(directory)
            if os.path.isdir(os.path.join(directory, name))]
    sets.sort(key=last_used, reverse=True)
    for path in sets[keep:] + [path for path in sets[:keep] if last_used(path) == 0.0]:
        shutil.rmtree(path, ignore_errors=True)


def _code_stamp() -> str:
    """Sizes and modification times of ms_lint's own modules: an edited rule (a development install) is a new
    linter, whose results must not come from the cache."""
    package = os.path.dirname(os.path.abspath(__file__))
    stamps = []
    for directory, folders, names in os.walk(package):
        folders.sort()
        for name in sorted(names):
            if name.endswith(".py"):
                status = os.stat(os.path.join(directory, name))
                stamps.append(f"{os.path.relpath(directory, package)}/{name}:{status.st_size}:{status.st_mtime_ns}")
    return hashlib.sha256("|".join(stamps).encode()).hexdigest()


def _stamp(path: Optional[str]):
    if path is None:
        return None
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [path, status.st_mtime_ns, status.st_size]


def _diagnostic(item: Dict) -> Diagnostic:
    fix = item.get("fix")
    if fix is not None:
        fix = Fix(fix["applicability"], fix["message"],
                  tuple(Edit(e["content"], tuple(e["location"]), tuple(e["end_location"])) for e in fix["edits"]),
                  tuple(Import(**i) for i in fix["imports"]))
    return Diagnostic(**{**item, "fix": fix})


class _Worker:
    """Lints files one at a time, with or without the cache (one per process)."""

    def __init__(self, settings: Settings, files: Sequence[str], cache_directory: Optional[str]):
        self.linter = Linter(settings)
        self.linter.index.judged_together = True  # the project rules see every file linted
        for path in files:
            self.linter.index.add_file(path)
        self.cache = Cache(cache_directory, settings) if cache_directory else None

    def lint(self, path: str) -> FileResult:
        if self.cache is None:
            return self.linter.lint_path(path)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return self.linter.lint_path(path)  # reported as MSL099
        content = hashlib.blake2b(data, digest_size=20).hexdigest()
        cached = self.cache.load(path, content, self.linter)
        if cached is not None:
            try:
                cached.source = decode(data, path)
            except SourceError:
                pass
            return cached
        result = self.linter.lint_bytes(data, path)
        self.cache.store(result, content, self.linter)
        return result


_worker: Optional[_Worker] = None


def _initialise(settings, files, cache_directory) -> None:
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to report, once
    _worker = _Worker(settings, files, cache_directory)
    gc.set_threshold(*_THRESHOLDS)  # a worker process only lints
    remember_packages()  # ...one batch
    if cache_directory:
        compile_context.keep_facts_in(_context_directory(cache_directory, settings))


# Linting allocates millions of tree nodes, which reference counting frees as soon as their file is linted
# (`GraphScope.release` breaks their cycles). With the default thresholds (700, 10, 10) the cyclic collector
# scans them again and again while they live: measured, a fifth of a cold run on a large project (and more
# inside pylint, whose own trees the collections triggered by ours scan too).
_THRESHOLDS = (100_000, 20, 100)


@contextlib.contextmanager
def few_collections():
    """Fewer cyclic garbage collections while linting; the previous thresholds are restored afterwards."""
    before = gc.get_threshold()
    gc.set_threshold(*_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextlib.contextmanager
def context_facts_kept(cache_directory: Optional[str], settings: Settings):
    """While linting and judging with a cache, the project scan keeps each file's facts there too (`context`)."""
    if not cache_directory:
        yield
        return
    compile_context.keep_facts_in(_context_directory(cache_directory, settings))
    try:
        yield
    finally:
        compile_context.keep_facts_in(None)


def _context_directory(cache_directory: str, settings: Settings) -> str:
    return os.path.join(Cache(cache_directory, settings).directory, "context")


def _lint_in_worker(path: str) -> FileResult:
    if _worker is None:
        raise RuntimeError("the worker process was not initialised")
    return _worker.lint(path)


def _lint_kept_first(worker: _Worker, files: Sequence[str], on_file: Callable[[], None]) -> List[FileResult]:
    """The results in the order of `files`, linted in that order but for the files whose trees a lookup of another
    module parsed first: those go next, before the index's budget drops the tree and their turn parses them again
    (about 90 parses of mindone's 1,729 files)."""
    waiting: Dict[str, List[int]] = {}
    for position, path in enumerate(files):
        waiting.setdefault(os.path.abspath(path), []).append(position)
    results: List[Optional[FileResult]] = [None] * len(files)
    following = 0
    for _ in range(len(files)):
        kept = next((path for path in worker.linter.index.kept.paths() if path in waiting), None)
        if kept is None:
            while results[following] is not None:
                following += 1
            kept = os.path.abspath(files[following])
        positions = waiting[kept]
        position = positions.pop(0)
        if not positions:
            del waiting[kept]
        results[position] = worker.lint(files[position])
        on_file()
    return results  # type: ignore[return-value]  # every position was linted


def lint_files(settings: Settings, files: Sequence[str], jobs: int = 1, cache_directory: Optional[str] = None,
               on_file: Callable[[], None] = lambda: None) -> List[FileResult]:
    """FileResults in the order of `files`, whatever the number of worker processes; `on_file()` is called as
    each is done (progress)."""
    if cache_directory:
        Cache(cache_directory, settings).open_for_run()
    results: List[FileResult] = []
    if jobs <= 1 or len(files) < 2:
        with few_collections(), remembered_packages():
            return _lint_kept_first(_Worker(settings, files, cache_directory), files, on_file)
    from concurrent.futures import ProcessPoolExecutor  # multiprocessing: 12 ms of start-up a single process spares

    chunk = max(1, min(64, len(files) // (jobs * 4)))
    with ProcessPoolExecutor(max_workers=jobs, initializer=_initialise,
                             initargs=(settings, list(files), cache_directory)) as pool:
        for result in pool.map(_lint_in_worker, files, chunksize=chunk):
            results.append(result)
            on_file()
    return results
