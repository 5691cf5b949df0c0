"""Helpers shared by the tests: fixture expectations and an in-process CLI runner."""
from __future__ import annotations

import io
import os
import re
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>MSL\d{3}(?:\s*,\s*MSL\d{3})*)")


def fixture_files():
    return sorted(p for p in FIXTURES.glob("MSL*.py") if not p.name.endswith(".fixed.py"))


def expected_findings(path: Path):
    """{(row, code)} from `# expect: MSL001[, MSL002]` comments."""
    found = set()
    for row, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found.update((row, code.strip()) for code in match.group("codes").split(","))
    return found


def run_cli(*args: str, cwd=None):
    """Run `ms-lint` in-process; returns (exit code, stdout)."""
    from ms_lint.cli import main

    buffer = io.StringIO()
    old = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        with redirect_stdout(buffer):
            code = main(list(args))
    finally:
        os.chdir(old)
    return code, buffer.getvalue()


