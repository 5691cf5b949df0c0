"""Output formats of `ms-lint check`: full (the default) and concise for people, json, sarif, github, gitlab,
junit for machines. Translation only.

Every format receives the same diagnostics (1-based rows, 0-based character columns inside) and the files
linted; columns are printed 1-based everywhere.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence

from ms_lint import __version__
from ms_lint.rule import Diagnostic, Fix

FORMATS = ("full", "concise", "text", "json", "sarif", "github", "gitlab", "junit")
HUMAN_FORMATS = ("full", "concise", "text")  # `text`: the name `full` had before, kept for scripts


@dataclass
class View:
    """How the human formats look: the linted lines for snippets (path -> lines; a file missing there gets no
    snippet), colour, the terminal's width (None: never wrap), and whether to print anything besides findings."""

    sources: Mapping[object, Sequence[str]] = field(default_factory=dict)  # by path, by (path, cell) in notebooks
    paint: Callable[[str, str], str] = field(default=lambda style, text: text)
    width: Optional[int] = None
    quiet: bool = False


def fixable(diagnostic: Diagnostic, applicabilities: Sequence[str]) -> bool:
    return diagnostic.fix is not None and diagnostic.fix.applicability in applicabilities


def render(name: str, diagnostics: List[Diagnostic], files: Sequence[str],
           applicabilities: Sequence[str] = ("safe",), view: Optional[View] = None) -> str:
    renderer = _RENDERERS[name]
    if name in HUMAN_FORMATS:
        return renderer(diagnostics, files, applicabilities, view or View())
    return renderer(diagnostics, files, applicabilities)


# ----- full and concise ---------------------------------------------------------------------------------------
_SEVERITY_STYLES = {"error": "red+bold", "warning": "yellow+bold", "info": "blue+bold"}


def full(diagnostics, files, applicabilities, view: View) -> str:
    """Each finding's line (as `concise` prints it), then the source lines it points at with the range marked and
    the fix it offers."""
    lines = []
    for d in diagnostics:
        lines.append(_headline(d, applicabilities, view))
        lines.extend(_snippet(d, view))
    return _joined(lines + _summary(diagnostics, files, applicabilities, view))


def concise(diagnostics, files, applicabilities, view: View) -> str:
    return _joined([_headline(d, applicabilities, view) for d in diagnostics]
                   + _summary(diagnostics, files, applicabilities, view))


def _headline(d: Diagnostic, applicabilities, view: View) -> str:
    paint = view.paint
    mark = " " + paint("cyan", "[*]") if fixable(d, applicabilities) else ""
    where = paint("bold", d.path) + paint("cyan", ":") + (f"cell {d.cell}" + paint("cyan", ":") if d.cell else "") \
        + f"{d.row}" + paint("cyan", ":") + f"{d.column + 1}"
    head = f"{where}{paint('cyan', ':')} {paint(_SEVERITY_STYLES[d.severity], d.code)} [{d.severity}]{mark} "
    if view.width is None:
        return head + d.message
    indent = len(f"{_where(d)}: {d.code} [{d.severity}]") + (4 if mark else 0) + 1
    return head + "\n".join(_wrapped(d.message, view.width, indent))


def _where(d: Diagnostic) -> str:
    """`path:row:column`, `path:cell N:row:column` in a notebook (as ruff prints them)."""
    return f"{d.path}:{f'cell {d.cell}:' if d.cell else ''}{d.row}:{d.column + 1}"


def _in_cell(d: Diagnostic) -> str:
    """"cell N: " before a notebook finding's message where the format has no place for the cell."""
    return f"cell {d.cell}: " if d.cell else ""


def _wrapped(message: str, width: int, indent: int) -> List[str]:
    """`message` in lines of at most `width` (the first `indent` columns shorter), later lines indented by 4."""
    import textwrap

    first = max(20, width - indent)
    wrapped = textwrap.wrap(message, width=first, break_long_words=False, break_on_hyphens=False)
    if len(wrapped) <= 1:
        return wrapped or [message]
    rest = textwrap.wrap(message[len(wrapped[0]):].strip(), width=max(20, width - 4), break_long_words=False,
                         break_on_hyphens=False)
    return [wrapped[0], *("    " + line for line in rest)]


def _snippet(d: Diagnostic, view: View) -> List[str]:
    lines = view.sources.get((d.path, d.cell) if d.cell is not None else d.path)
    if not lines or not 0 < d.row <= len(lines):
        return []
    last = min(d.end_row if d.end_row >= d.row else d.row, d.row + 2, len(lines))
    first = d.row - 1 if d.row > 1 and lines[d.row - 2].strip() else d.row
    gutter = len(str(last))
    paint = view.paint
    bar = paint("blue+bold", " " * gutter + " |")
    out = [bar]
    for row in range(first, last + 1):
        text = lines[row - 1].expandtabs(4) if "\t" in lines[row - 1] else lines[row - 1]
        out.append(paint("blue+bold", f"{row:>{gutter}} |") + (" " + text if text else ""))
        if row == d.row:
            start = _display_column(lines[row - 1], d.column)
            end = _display_column(lines[row - 1], d.end_column) if d.end_row == d.row else len(text.rstrip())
            carets = "^" * max(1, end - start)
            out.append(bar + " " + " " * start + paint(_SEVERITY_STYLES[d.severity], carets))
    if last < min(d.end_row, len(lines)):
        out.append(paint("blue+bold", " " * gutter + " :"))
    out.append(bar)
    if d.fix is not None:
        out.append(paint("blue+bold", " " * gutter + " =") + f" help: {d.fix.message} ({d.fix.applicability} fix)")
    out.append("")
    return out


def _display_column(line: str, column: int) -> int:
    """Where character `column` of `line` appears once its tabs are expanded."""
    return len(line[:column].expandtabs(4)) if "\t" in line[:column] else column


def _summary(diagnostics, files, applicabilities, view: View) -> List[str]:
    if view.quiet:
        return []
    if not diagnostics:
        return [view.paint("green+bold", "All checks passed!")]
    counts = {s: sum(d.severity == s for d in diagnostics) for s in ("error", "warning", "info")}
    parts = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n]
    count = sum(fixable(d, applicabilities) for d in diagnostics)
    hidden = 0 if "unsafe" in applicabilities else sum(
        d.fix is not None and d.fix.applicability == "unsafe" for d in diagnostics)
    line = (f"Found {len(diagnostics)} finding{'s' if len(diagnostics) != 1 else ''} ({', '.join(parts)}) "
            f"in {len(files)} file{'s' if len(files) != 1 else ''}.")
    if count:
        line += f" [*] {count} fixable with `--fix`."
    if hidden:
        line += f" {hidden} more with `--fix --unsafe-fixes`."
    return [line]


def statistics(diagnostics: List[Diagnostic], applicabilities: Sequence[str] = ("safe",)) -> str:
    """`--statistics`: one line per rule, most frequent first."""
    counts = Counter(d.code for d in diagnostics)
    first: Dict[str, Diagnostic] = {}
    for d in diagnostics:
        first.setdefault(d.code, d)
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        d = first[code]
        mark = "[*]" if any(fixable(x, applicabilities) for x in diagnostics if x.code == code) else "   "
        lines.append(f"{count:>6}  {code}  {mark} {d.symbol} [{d.severity}]")
    return _joined(lines)


# ----- json ---------------------------------------------------------------------------------------------------
def to_json(d: Diagnostic) -> dict:
    """ruff's shape, 1-based rows and columns."""
    return {
        "code": d.code,
        "symbol": d.symbol,
        "message": d.message,
        "severity": d.severity,
        "filename": d.path,
        "cell": d.cell,
        "location": {"row": d.row, "column": d.column + 1},
        "end_location": {"row": d.end_row, "column": d.end_column + 1},
        "fix": _fix_json(d.fix),
        "url": d.url,
    }


def _fix_json(fix: Optional[Fix]):
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.message,
        "edits": [{"content": e.content, "location": {"row": e.location[0], "column": e.location[1] + 1},
                   "end_location": {"row": e.end_location[0], "column": e.end_location[1] + 1}} for e in fix.edits],
        "imports": [{"module": i.module, "name": i.name} for i in fix.imports],
    }


def json_format(diagnostics, files, applicabilities) -> str:
    return json.dumps([to_json(d) for d in diagnostics], indent=2) + "\n"


# ----- sarif --------------------------------------------------------------------------------------------------
_SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def sarif(diagnostics, files, applicabilities) -> str:
    """SARIF 2.1.0 as GitHub code scanning reads it; fingerprints are left to the uploader."""
    from ms_lint.catalog import all_rules

    rules = list(all_rules())
    index = {rule.code: position for position, rule in enumerate(rules)}
    results = []
    for d in diagnostics:
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _SARIF_LEVELS[d.severity],
            "message": {"text": _in_cell(d) + d.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(d.path)},
                                                "region": _region(d.row, d.column, d.end_row, d.end_column)}}],
        }
        if d.fix is not None:
            result["fixes"] = [{
                "description": {"text": f"{d.fix.message} ({d.fix.applicability})"},
                "artifactChanges": [{
                    "artifactLocation": {"uri": _uri(d.path)},
                    "replacements": [{"deletedRegion": _region(*e.location, *e.end_location),
                                      "insertedContent": {"text": e.content}} for e in d.fix.edits],
                }],
            }]
        results.append(result)
    driver = {
        "name": "ms-lint",
        "version": __version__,
        "informationUri": "https://github.com/ms-lint/ms-lint",
        "rules": [{
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary()},
            "fullDescription": {"text": rule.docs()},
            "helpUri": Diagnostic(rule.code, rule.name, "", "", "", 0, 0, 0, 0).url,
            "defaultConfiguration": {"level": _SARIF_LEVELS.get(rule.severity, "warning")},
            "properties": {"tags": [rule.scope], "severity": rule.severity},
        } for rule in rules],
    }
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results, "columnKind": "unicodeCodePoints"}],
    }
    return json.dumps(document, indent=2) + "\n"


def _uri(path: str) -> str:
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    return relative.replace(os.sep, "/")


def _region(row: int, column: int, end_row: int, end_column: int) -> Dict[str, int]:
    return {"startLine": row, "startColumn": column + 1, "endLine": end_row, "endColumn": end_column + 1}


# ----- github -------------------------------------------------------------------------------------------------
_GITHUB_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def github(diagnostics, files, applicabilities) -> str:
    """GitHub Actions workflow commands: each finding becomes an annotation on the pull request."""
    lines = []
    for d in diagnostics:
        properties = ",".join(f"{key}={_escape_property(str(value))}" for key, value in (
            ("file", d.path), ("line", d.row), ("col", d.column + 1), ("endLine", d.end_row),
            ("endColumn", d.end_column + 1), ("title", d.code)))
        lines.append(f"::{_GITHUB_COMMANDS[d.severity]} {properties}::"
                     f"{_escape_data(f'{_in_cell(d)}{d.code} {d.message}')}")
    return _joined(lines)


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


# ----- gitlab -------------------------------------------------------------------------------------------------
_GITLAB_SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}


def gitlab(diagnostics, files, applicabilities) -> str:
    """GitLab code quality report; the fingerprint ignores line numbers so that edits elsewhere keep it."""
    issues = []
    seen: Counter = Counter()
    for d in diagnostics:
        base = f"{_uri(d.path)}\0{d.code}\0{d.message}"
        seen[base] += 1
        fingerprint = hashlib.sha256(f"{base}\0{seen[base]}".encode()).hexdigest()
        issues.append({
            "description": f"{_in_cell(d)}{d.code} {d.message}",
            "check_name": d.code,
            "fingerprint": fingerprint,
            "severity": _GITLAB_SEVERITIES[d.severity],
            "location": {"path": _uri(d.path), "lines": {"begin": d.row, "end": d.end_row}},
        })
    return json.dumps(issues, indent=2) + "\n"


# ----- junit --------------------------------------------------------------------------------------------------
def junit(diagnostics, files, applicabilities) -> str:
    """One test suite per file, one failing test case per finding (a passing case for a clean file)."""
    from xml.sax.saxutils import escape, quoteattr  # imports urllib: 30 ms of every run's start-up otherwise

    by_file: Dict[str, List[Diagnostic]] = {path: [] for path in files}
    for d in diagnostics:
        by_file.setdefault(d.path, []).append(d)
    suites = []
    for path, found in by_file.items():
        cases = [
            f'    <testcase name={quoteattr(f"{d.code} {_where(d)}")} '
            f'classname={quoteattr(_uri(path))}>\n'
            f'      <failure type={quoteattr(d.code)} message={quoteattr(d.message)}>'
            f'{escape(f"{_where(d)}: {d.code} [{d.severity}] {d.message}")}</failure>\n'
            f'    </testcase>'
            for d in found
        ] or [f'    <testcase name="no findings" classname={quoteattr(_uri(path))}/>']
        suites.append(f'  <testsuite name={quoteattr(_uri(path))} tests="{max(len(found), 1)}" '
                      f'failures="{len(found)}" errors="0" skipped="0">\n' + "\n".join(cases) + "\n  </testsuite>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="ms-lint" tests="{sum(max(len(v), 1) for v in by_file.values())}" '
            f'failures="{len(diagnostics)}">\n' + "\n".join(suites) + "\n</testsuites>\n")


def _joined(lines: List[str]) -> str:
    return "".join(line + "\n" for line in lines)


_RENDERERS: Dict[str, Callable[..., str]] = {
    "full": full, "concise": concise, "text": full, "json": json_format, "sarif": sarif, "github": github,
    "gitlab": gitlab, "junit": junit}
