"""Fixing files: passes of fixes to a fixed point, each verified, then an atomic write that loses nothing.

A pass applies every non-overlapping fix (`fixer.apply_fixes`). Its result must parse, leave no name undefined and
not raise a finding the original did not have; otherwise the fix that spoils it is found and rejected (reported,
never written) and the others apply. Passes repeat until no fix applies, up to `MAX_PASSES`.
"""
from __future__ import annotations

import ast
import builtins
import codecs
import functools
import os
import re
import tempfile
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Set, Tuple

from ms_lint.engine import FileResult, Linter
from ms_lint.fixing.apply import apply_fixes
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
    facts: dict = field(default_factory=dict)  # the project rules' facts of the fixed text
    facts_by_text: dict = field(default_factory=dict, repr=False)  # of each text linted on the way


    @property
    def changed(self) -> bool:
        return self.text != self.source.text


@dataclass
class Linted:
    """What a run already knows of a file before fixing it: its findings (project rules' included), its project
    facts, and the project rules' findings in it. Given it, `fix_source` does not judge the project (the run
    judges every fixed file together once, `FileFix.facts`), and keeps the project rules' findings as they were:
    so none of them may have a fix to apply (their positions go stale and their fixes would apply again)."""

    diagnostics: List[Diagnostic]
    facts: dict
    judged: List[Diagnostic]


def fix_source(linter: Linter, source: SourceFile, applicabilities: Sequence[str],
               project: Sequence[FileResult] = (),
               withhold: Optional[Callable[[Diagnostic, str], bool]] = None,
               linted: Optional[Linted] = None) -> FileFix:
    """`project`: the other modules' results, whose facts project rules judge this file with (without them, the
    file is judged alone, as flake8 does). `withhold(diagnostic, text)`: true for a fix not to apply to `text`
    (validation found it harmful). `linted`: the file's findings and facts as the run linted `source`."""
    text = source.text
    result = FileFix(source, text, facts=dict(linted.facts) if linted is not None else {})
    lint = functools.partial(_lint, project=[r for r in project if r.path != source.path], linted=linted,
                             fixed=result)
    diagnostics = list(linted.diagnostics) if linted is not None else lint(linter, source, text)
    rejected_keys: Set[tuple] = set()
    stale = set(linted.judged) if linted is not None else set()  # never fixed from here (`Linted`)
    for _ in range(MAX_PASSES):
        candidates = [d for d in diagnostics if d.fix is not None and d.fix.applicability in applicabilities
                      and _key(d) not in rejected_keys and not (withhold and withhold(d, text)) and d not in stale]
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
    result.facts = result.facts_by_text.get(text, result.facts)
    result.facts_by_text.clear()
    return result


def _verified_pass(lint, linter, source, text, diagnostics, candidates, result, rejected_keys, applicabilities):
    """Apply the pass's fixes together if the result checks out; else find the fix that spoils it (one left out at a
    time: fixes that only work together, an import renamed with its uses, stay together), else keep what checks out
    alone. Returns (text, its findings, the fixes applied)."""
    check = functools.partial(_check, lint, linter, source, text, diagnostics)

    def attempt(fixes):
        applied = apply_fixes(text, fixes, applicabilities)
        return (*check(applied.text, applied.applied), applied)

    problem, after, together = attempt(candidates)
    if problem is None:
        return together.text, after, together.applied
    chosen = together.applied
    for culprit in chosen if len(chosen) > 1 else ():
        rest = [d for d in chosen if d is not culprit]
        problem_without, after, applied = attempt(rest)
        if problem_without is None:
            result.rejected.append((culprit, check(apply_fixes(text, [culprit], applicabilities).text,
                                                   [culprit])[0] or problem))
            rejected_keys.add(_key(culprit))
            return applied.text, after, applied.applied
    good = []
    for diagnostic in chosen:
        alone, _, _ = attempt([diagnostic])
        if alone is None:
            good.append(diagnostic)
        else:
            result.rejected.append((diagnostic, alone))
            rejected_keys.add(_key(diagnostic))
    for fixes in (good, good[:1]):  # the good ones together, else the first alone (the rest next pass)
        if fixes:
            problem, after, applied = attempt(fixes)
            if problem is None:
                return applied.text, after, applied.applied
    return text, diagnostics, []


def _check(lint, linter, source, before_text, before, after_text, applied):
    """None if `after_text` parses, leaves no name undefined and raises no finding `before_text` lacked (a rule's
    finding that a fix turns into another of the same rule, its count not growing, is not new); else the reason."""
    try:
        after_tree = ast.parse(after_text)
    except (SyntaxError, ValueError) as error:
        return f"the fixed code does not parse ({getattr(error, 'msg', error)})", []
    # a name the fixes leave undefined is one their edits read or one whose binding they replace: the text before
    # is parsed again only when such a name is undefined after
    suspects = _undefined_in(after_text, after_tree) & _touched_names(before_text, applied)
    undefined = suspects - _undefined_in(before_text) if suspects else set()
    if undefined:
        return f"the fix leaves {', '.join(f'`{n}`' for n in sorted(undefined))} undefined", []
    after = lint(linter, source, after_text, after_tree)
    new = new_findings(before, after, applied)
    if new:
        code, message = new[0]
        return f"the fix introduces {code}: {message}", after
    return None, after


def new_findings(before: Sequence[Diagnostic], after: Sequence[Diagnostic],
                 applied: Sequence[Diagnostic] = ()) -> List[Tuple[str, str]]:
    """(code, message) of the findings of `after` that `before` (less the `applied` fixes' findings) lacks, of
    the rules whose count grew: a finding a fix turns into another of the same rule is not new."""
    expected = Counter(_key(d) for d in before) - Counter(_key(d) for d in applied)
    new = Counter(_key(d) for d in after) - expected
    codes_before, codes_after = Counter(d.code for d in before), Counter(d.code for d in after)
    return [k for k in new if codes_after[k[0]] > codes_before[k[0]]]


_IDENTIFIER = re.compile(r"[^\W\d]\w*")


def _touched_names(text: str, applied: Sequence[Diagnostic]) -> Set[str]:
    """The identifiers in what the fixes of `applied` insert and on the lines of `text` they replace. A line of
    them with a star import may unbind anything: then every name of the text."""
    lines = text.split("\n")
    touched: Set[str] = set()
    for diagnostic in applied:
        assert diagnostic.fix is not None  # applied fixes exist
        for edit in diagnostic.fix.edits:
            replaced = "\n".join(lines[edit.location[0] - 1:edit.end_location[0]]) \
                if edit.location != edit.end_location else ""
            if "*" in replaced and "import" in replaced:
                return set(_IDENTIFIER.findall(text))
            touched.update(_IDENTIFIER.findall(edit.content), _IDENTIFIER.findall(replaced))
    return touched


_UNDEFINED: "OrderedDict[str, frozenset]" = OrderedDict()


def _undefined_in(text: str, tree: Optional[ast.Module] = None) -> frozenset:
    """`_undefined_names` of a text, remembered for the last few texts: a pass's result is the next pass's
    starting point, and every attempt of a pass is compared with that."""
    found = _UNDEFINED.get(text)
    if found is None:
        found = _UNDEFINED[text] = frozenset(_undefined_names(tree if tree is not None else ast.parse(text)))
        while len(_UNDEFINED) > 8:
            _UNDEFINED.popitem(last=False)
    return found


def _undefined_names(tree: ast.AST) -> set:
    """Names read somewhere and bound nowhere in the module (scopes ignored: cheap, and it never blames a name
    that some scope binds). A plain stack walk over each node class's fields: ast.walk's generators cost 2.7x as
    much on large modules, and this runs on every fixed text."""
    loaded: Set[str] = set()
    bound = set(_ALWAYS_BOUND)
    stack: list = [tree]
    pop, push, append = stack.pop, stack.extend, stack.append
    while stack:
        node = pop()
        kind = node.__class__
        if kind is ast.Name:
            (loaded if node.ctx.__class__ is ast.Load else bound).add(node.id)
            continue
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:  # list items may be None (dict unpacking) or strings (match class keywords)
            fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f != "ctx") \
                if issubclass(kind, ast.AST) else ()
        if kind in _DEFINITIONS:
            bound.add(node.name)
        elif kind is ast.alias:
            bound.add((node.asname or node.name).partition(".")[0])
        elif kind is ast.arg:
            bound.add(node.arg)
        elif kind is ast.Global or kind is ast.Nonlocal:
            bound.update(node.names)
        elif kind is ast.ExceptHandler:
            if node.name:
                bound.add(node.name)
        elif kind is ast.ImportFrom:
            if any(a.name == "*" for a in node.names):
                return set()  # a star import may bind anything
        elif kind.__name__ in _CAPTURES:  # 3.10+: named, 3.9 imports this
            captured = getattr(node, _CAPTURES[kind.__name__], None)
            if captured:
                bound.add(captured)
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                push(value)
            elif isinstance(value, ast.AST):
                append(value)
    return loaded - bound


_ALWAYS_BOUND = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__",
                                            "__builtins__", "__loader__", "__package__", "__annotations__"}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_CAPTURES = {"MatchAs": "name", "MatchStar": "name", "MatchMapping": "rest"}
_CHILD_FIELDS: dict = {}


def _key(diagnostic: Diagnostic) -> Tuple[str, str]:
    return diagnostic.code, diagnostic.message


def _lint(linter: Linter, source: SourceFile, text: str, tree: Optional[ast.Module] = None,
          project: Sequence[FileResult] = (), linted: Optional[Linted] = None,
          fixed: Optional[FileFix] = None) -> List[Diagnostic]:
    current = SourceFile(path=source.path, text=text, encoding=source.encoding, bom=source.bom,
                         module_name=source.module_name)
    result = linter.lint_tree(tree, current) if tree is not None else linter.lint_source(current)
    if fixed is not None:
        fixed.facts_by_text[text] = result.facts
    if linted is not None:
        found = linted.judged  # the run judges the fixed files together, once
    else:  # the project rules' findings here
        found = [d for d in linter.judge([*project, result]) if d.path == source.path]
    return sorted(result.diagnostics + found, key=Diagnostic.sort_key)


class WriteError(Exception):
    pass


def write_atomically(source: SourceFile, text: str, original: bytes) -> None:
    """Replace the file with `text` in its encoding, BOM, and permissions; refuse if it changed since it was read.

    The new content goes to a temporary file in the same directory, is flushed to disk, then renamed over the
    original: a failure at any point leaves the original untouched.
    """
    path = source.path
    if source.notebook is not None:  # the fixed code cells go back into the notebook's JSON
        from ms_lint.notebook import NotebookError

        try:
            text = source.notebook.updated(text)
        except NotebookError as error:
            raise WriteError(f"{path}: {error}") from None
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
