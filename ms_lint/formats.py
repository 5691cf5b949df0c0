"""Output formats of `ms-lint check`: text, json, sarif, github, gitlab, junit. Translation only.

Every format receives the same diagnostics (1-based rows, 0-based character columns inside) and the files
linted; columns are printed 1-based everywhere.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from typing import Callable, Dict, List, Optional, Sequence

from ms_lint import __version__
from ms_lint.rule import Diagnostic, Fix

FORMATS = ("text", "json", "sarif", "github", "gitlab", "junit")


def fixable(diagnostic: Diagnostic, applicabilities: Sequence[str]) -> bool:
    return diagnostic.fix is not None and diagnostic.fix.applicability in applicabilities


def render(name: str, diagnostics: List[Diagnostic], files: Sequence[str],
           applicabilities: Sequence[str] = ("safe",)) -> str:
    renderer: Callable = _RENDERERS[name]
    return renderer(diagnostics, files, applicabilities)


# ----- text ---------------------------------------------------------------------------------------------------
def text(diagnostics, files, applicabilities) -> str:
    lines = []
    for d in diagnostics:
        mark = " [*]" if fixable(d, applicabilities) else ""
        lines.append(f"{d.path}:{d.row}:{d.column + 1}: {d.code} [{d.severity}]{mark} {d.message}")
    if diagnostics:
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
        lines.append(line)
    return _joined(lines)


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
            "message": {"text": d.message},
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
        lines.append(f"::{_GITHUB_COMMANDS[d.severity]} {properties}::{_escape_data(f'{d.code} {d.message}')}")
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
            "description": f"{d.code} {d.message}",
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
            f'    <testcase name={quoteattr(f"{d.code} {d.path}:{d.row}:{d.column + 1}")} '
            f'classname={quoteattr(_uri(path))}>\n'
            f'      <failure type={quoteattr(d.code)} message={quoteattr(d.message)}>'
            f'{escape(f"{d.path}:{d.row}:{d.column + 1}: {d.code} [{d.severity}] {d.message}")}</failure>\n'
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


_RENDERERS = {"text": text, "json": json_format, "sarif": sarif, "github": github, "gitlab": gitlab,
              "junit": junit}
