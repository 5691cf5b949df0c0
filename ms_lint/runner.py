"""Linting many files: a content-keyed cache and `-j N` worker processes, with output in input order.

A cache entry is valid for the same ms_lint version, settings and file bytes, and only while every other project
module its analysis consulted (a base class in another file, say) still resolves to the same file with the same
size and modification time: editing `blocks.py` re-lints `model.py` whose Cells derive from it.
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import sys
from dataclasses import asdict
from typing import Dict, List, Optional, Sequence

from ms_lint import __version__, store
from ms_lint.analysis import compile_context
from ms_lint.catalog import all_rules
from ms_lint.engine import FileResult, Linter
from ms_lint.rule import Diagnostic, Edit, Fix, Import
from ms_lint.settings import Settings
from ms_lint.source import SourceError, decode, remember_packages, remembered_packages

CACHE_DIRECTORY = ".ms_lint_cache"


class Cache:
    def __init__(self, directory: str, settings: Settings):
        self.directory = directory
        codes = ",".join(rule.code for rule in all_rules())
        python = sys.version.split()[0]  # ast differs across Python versions
        self.key = hashlib.sha256(f"{__version__}|{_code_stamp()}|{python}|{codes}|{settings!r}".encode()).hexdigest()

    def _entry_path(self, path: str) -> str:
        name = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:32]
        return os.path.join(self.directory, name[:2], f"{name}.json")

    def load(self, path: str, content: str, linter: Linter) -> Optional[FileResult]:
        try:
            with open(self._entry_path(path), encoding="utf-8") as handle:
                entry = json.load(handle)
        except (OSError, ValueError):
            return None
        if entry.get("key") != self.key or entry.get("content") != content:
            return None
        with linter.index.importing(path):
            for name, recorded in entry.get("dependencies", {}).items():
                if _stamp(linter.index.find(name)) != recorded:
                    return None
        try:
            diagnostics = [_diagnostic(item) for item in entry["diagnostics"]]
        except (KeyError, TypeError):
            return None
        return FileResult(path, diagnostics, facts=entry.get("facts", {}))

    def store(self, result: FileResult, content: str) -> None:
        if result.internal_errors:
            return  # never cache a crash
        entry = {
            "key": self.key,
            "content": content,
            "dependencies": {name: _stamp(found) for name, found in result.dependencies.items()},
            "diagnostics": [asdict(d) for d in result.diagnostics],
            "facts": result.facts,
        }
        target = self._entry_path(result.path)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            marker = os.path.join(self.directory, ".gitignore")
            if not os.path.exists(marker):
                with open(marker, "w", encoding="utf-8") as handle:
                    handle.write("# created by ms-lint\n*\n")
            store.write_json(target, entry)
        except OSError:
            pass  # an unwritable cache costs time, never correctness


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
        self.cache.store(result, content)
        return result


_worker: Optional[_Worker] = None


def _initialise(settings, files, cache_directory) -> None:
    global _worker
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
    return os.path.join(cache_directory, f"context-{Cache(cache_directory, settings).key[:24]}")


def _lint_in_worker(path: str) -> FileResult:
    if _worker is None:
        raise RuntimeError("the worker process was not initialised")
    return _worker.lint(path)


def lint_files(settings: Settings, files: Sequence[str], jobs: int = 1,
               cache_directory: Optional[str] = None) -> List[FileResult]:
    """FileResults in the order of `files`, whatever the number of worker processes."""
    if jobs <= 1 or len(files) < 2:
        with few_collections(), remembered_packages():
            worker = _Worker(settings, files, cache_directory)
            return [worker.lint(path) for path in files]
    from concurrent.futures import ProcessPoolExecutor  # multiprocessing: 12 ms of start-up a single process spares

    chunk = max(1, min(64, len(files) // (jobs * 4)))
    with ProcessPoolExecutor(max_workers=jobs, initializer=_initialise,
                             initargs=(settings, list(files), cache_directory)) as pool:
        return list(pool.map(_lint_in_worker, files, chunksize=chunk))
