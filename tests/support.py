"""Helpers shared by the tests: fixture expectations, an in-process CLI runner, the generated tables' check."""
from __future__ import annotations

import importlib.util
import io
import os
import re
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>MSL\d{3}(?:\s*,\s*MSL\d{3})*)")


_REQUIRES = re.compile(r"requires:\s*python\s*>=\s*(\d+)\.(\d+)", re.I)


def fixture_files():
    return sorted(p for p in FIXTURES.glob("MSL*.py") if not p.name.endswith(".fixed.py"))


def fixture_params(paths):
    """pytest params for fixtures; a fixture whose docstring says `requires: python >= 3.10` (syntax or `ast`
    positions older Pythons lack) is skipped on older interpreters only (CI runs 3.11)."""
    import sys

    import pytest

    params = []
    for path in paths:
        head = path.read_text(encoding="utf-8", errors="replace")[:600]
        match = _REQUIRES.search(head)
        marks = []
        if match and sys.version_info < (int(match.group(1)), int(match.group(2))):
            marks.append(pytest.mark.skip(reason=f"needs Python >= {match.group(1)}.{match.group(2)}"))
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


def expected_findings(path: Path):
    """{(row, code)} from `# expect: MSL001[, MSL002]` comments."""
    found = set()
    for row, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found.update((row, code.strip()) for code in match.group("codes").split(","))
    return found


CLEAN = "All checks passed!\n"  # what `ms-lint check` prints on a clean run


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


def assert_generated_module_is_current(tool: str) -> None:
    """The module `tools/<tool>.py` writes (from the installed MindSpore) is the one in the checkout."""
    spec = importlib.util.spec_from_file_location(tool, ROOT / "tools" / f"{tool}.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    with open(generator.TARGET, encoding="utf-8") as handle:
        assert handle.read() == generator.render(), f"run tools/{tool}.py"
