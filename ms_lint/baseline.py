"""Baselines: record today's findings, then report only new ones.

A finding is matched by its file (relative to the baseline), its rule and a fingerprint of the offending line's
text (whitespace-insensitive), not by its line number: edits elsewhere in the file do not revive it. Identical
lines are counted, so a second copy of a recorded pitfall is reported.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from typing import Dict, Iterable, List, Tuple

from ms_lint.rule import Diagnostic

VERSION = 1
Key = Tuple[str, str, str]


class BaselineError(Exception):
    pass


def _relative(path: str, baseline_path: str) -> str:
    base = os.path.dirname(os.path.abspath(baseline_path))
    return os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/")


def fingerprint(line: str) -> str:
    return hashlib.sha256(" ".join(line.split()).encode("utf-8")).hexdigest()[:16]


def key(diagnostic: Diagnostic, line: str, baseline_path: str) -> Key:
    return _relative(diagnostic.path, baseline_path), diagnostic.code, fingerprint(line)


def write(baseline_path: str, entries: Iterable[Tuple[Diagnostic, str]]) -> int:
    counts = Counter(key(d, line, baseline_path) for d, line in entries)
    document = {
        "version": VERSION,
        "tool": "ms-lint",
        "findings": [{"file": f, "code": c, "fingerprint": p, "count": n} for (f, c, p), n in sorted(counts.items())],
    }
    temporary = f"{baseline_path}.tmp"
    with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
    os.replace(temporary, baseline_path)
    return sum(counts.values())


def load(baseline_path: str) -> Dict[Key, int]:
    try:
        with open(baseline_path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as error:
        raise BaselineError(f"{baseline_path}: cannot read the baseline: {error.strerror or error}") from None
    except ValueError as error:
        raise BaselineError(f"{baseline_path}: not a baseline file (invalid JSON: {error})") from None
    if not isinstance(document, dict) or document.get("version") != VERSION or not isinstance(
            document.get("findings"), list):
        raise BaselineError(f"{baseline_path}: not an ms-lint baseline (version {VERSION} expected)")
    try:
        return {(e["file"], e["code"], e["fingerprint"]): int(e["count"]) for e in document["findings"]}
    except (KeyError, TypeError, ValueError) as error:
        raise BaselineError(f"{baseline_path}: malformed entry ({error})") from None


def new_findings(baseline_path: str, recorded: Dict[Key, int],
                 entries: Iterable[Tuple[Diagnostic, str]]) -> List[Diagnostic]:
    """The findings not covered by the baseline, in their original order."""
    left = dict(recorded)
    fresh = []
    for diagnostic, line in entries:
        k = key(diagnostic, line, baseline_path)
        if left.get(k, 0) > 0:
            left[k] -= 1
        else:
            fresh.append(diagnostic)
    return fresh
