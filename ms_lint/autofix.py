"""Fixing files: passes of fixes to a fixed point, each verified, then an atomic write that loses nothing.

A pass applies every non-overlapping fix (`fixer.apply_fixes`). Its result must parse and must not raise a finding
the original did not have; otherwise the pass's fixes are retried one at a time and the ones that break the code
are rejected (reported, never written). Passes repeat until no fix applies, up to `MAX_PASSES`.
"""
from __future__ import annotations

import ast
import codecs
import functools
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from ms_lint.engine import FileResult, Linter
from ms_lint.fixer import apply_fixes
from ms_lint.rule import Diagnostic
from ms_lint.source import SourceFile

MAX_PASSES = 10


@dataclass
class FileFix:
    source: SourceFile
    text: str  # the fixed text
    applied: List[Diagnostic] = field(default_factory=list)
    rejected: List[Tuple[Diagnostic, str]] = field(default_factory=list)
    remaining: List[Diagnostic] = field(default_factory=list)  # findings of the fixed text
    converged: bool = True

    @property
    def changed(self) -> bool:
        return self.text != self.source.text


def fix_source(linter: Linter, source: SourceFile, applicabilities: Sequence[str],
               project: Sequence[FileResult] = (),
               withhold: Optional[Callable[[Diagnostic, str], bool]] = None) -> FileFix:
    """`project`: the other modules' results, whose facts project rules judge this file with (without them, the
    file is judged alone, as flake8 does). `withhold(diagnostic, text)`: true for a fix not to apply to `text`
    (validation found it harmful)."""
    text = source.text
    result = FileFix(source, text)
    lint = functools.partial(_lint, project=[r for r in project if r.path != source.path])
    diagnostics = lint(linter, source, text)
    rejected_keys = set()
    for _ in range(MAX_PASSES):
        candidates = [d for d in diagnostics if d.fix is not None and d.fix.applicability in applicabilities
                      and _key(d) not in rejected_keys and not (withhold and withhold(d, text))]
        if not candidates:
            break
        text, diagnostics, applied = _verified_pass(lint, linter, source, text, diagnostics, candidates, result,
                                                    rejected_keys, applicabilities)
        if not applied:
            break
        result.applied.extend(applied)
    else:
        result.converged = False
    result.text = text
    result.remaining = diagnostics
    return result


def _verified_pass(lint, linter, source, text, diagnostics, candidates, result, rejected_keys, applicabilities):
    attempt = apply_fixes(text, candidates, applicabilities)
    problem, after = _check(lint, linter, source, text, diagnostics, attempt.text, attempt.applied)
    if problem is None:
        return attempt.text, after, attempt.applied
    applied = []  # one at a time, to keep the good fixes and name the bad one
    for diagnostic in attempt.applied:
        single = apply_fixes(text, [diagnostic], applicabilities)
        problem, after = _check(lint, linter, source, text, diagnostics, single.text, [diagnostic])
        if problem is None:
            text, diagnostics = single.text, after
            applied.append(diagnostic)
            break  # positions of the other fixes are stale now: re-lint in the next pass
        result.rejected.append((diagnostic, problem))
        rejected_keys.add(_key(diagnostic))
    return text, diagnostics, applied


def _check(lint, linter, source, before_text, before, after_text, applied):
    """None if `after_text` parses and has no finding `before_text` lacked, else the reason."""
    try:
        ast.parse(after_text)
    except (SyntaxError, ValueError) as error:
        return f"the fixed code does not parse ({getattr(error, 'msg', error)})", []
    after = lint(linter, source, after_text)
    expected = Counter(_key(d) for d in before) - Counter(_key(d) for d in applied)
    new = Counter(_key(d) for d in after) - expected
    if new:
        code, message = next(iter(new))
        return f"the fix introduces {code}: {message}", after
    return None, after


def _key(diagnostic: Diagnostic) -> Tuple[str, str]:
    return diagnostic.code, diagnostic.message


def _lint(linter: Linter, source: SourceFile, text: str, project: Sequence[FileResult] = ()) -> List[Diagnostic]:
    current = SourceFile(path=source.path, text=text, encoding=source.encoding, bom=source.bom,
                         module_name=source.module_name)
    result = linter.lint_source(current)
    found = [d for d in linter.judge([*project, result]) if d.path == source.path]  # project rules' findings here
    return sorted(result.diagnostics + found, key=Diagnostic.sort_key)


class WriteError(Exception):
    pass


def write_atomically(source: SourceFile, text: str, original: bytes) -> None:
    """Replace the file with `text` in its encoding, BOM, and permissions; refuse if it changed since it was read.

    The new content goes to a temporary file in the same directory, is flushed to disk, then renamed over the
    original: a failure at any point leaves the original untouched.
    """
    path = source.path
    try:
        with open(path, "rb") as handle:
            if handle.read() != original:
                raise WriteError(f"{path}: changed on disk since it was read; not overwritten")
        status = os.stat(path)
    except OSError as error:
        raise WriteError(f"{path}: cannot read back before writing: {error.strerror or error}") from None
    try:
        data = (codecs.BOM_UTF8 if source.bom else b"") + text.encode(source.encoding)
    except UnicodeEncodeError as error:
        raise WriteError(f"{path}: the fixed text cannot be encoded as {source.encoding} ({error.reason}); "
                         "left unchanged") from None
    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(prefix=".ms-lint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, status.st_mode & 0o7777)
        os.replace(temporary, path)
    except OSError as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise WriteError(f"{path}: cannot write the fixed file: {error.strerror or error}; left unchanged") from None
