"""Shared test helpers: fixture expectations and the three front ends run over the fixtures."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

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


@pytest.fixture(scope="session")
def fixture_tree(tmp_path_factory):
    """A copy of fixtures/ that selects every rule, as a user's project would configure it."""
    directory = tmp_path_factory.mktemp("fixtures")
    for path in fixture_files():
        shutil.copy(path, directory / path.name)
    (directory / "pyproject.toml").write_text('[tool.ms_lint]\nselect = ["ALL"]\n', encoding="utf-8")
    return directory


@pytest.fixture(scope="session")
def front_end_findings(fixture_tree):
    """{front end: {file name: {(row, column, code)}}}, columns 1-based, from one run of each front end."""
    results = {"cli": {}, "flake8": {}, "pylint": {}}
    code, out = run_cli("check", "--output-format", "json", ".", cwd=fixture_tree)
    assert code in (0, 1), out
    for item in json.loads(out):
        results["cli"].setdefault(Path(item["filename"]).name, set()).add(
            (item["location"]["row"], item["location"]["column"], item["code"]))

    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "MSL,E999", "--format", "%(path)s|%(row)d|%(col)d|%(code)s", "."],
        cwd=fixture_tree, capture_output=True, text=True)
    assert flake8.returncode in (0, 1), flake8.stderr
    for line in flake8.stdout.splitlines():
        path, row, column, code = line.split("|")
        code = "MSL099" if code == "E999" else code
        results["flake8"].setdefault(Path(path).name, set()).add((int(row), int(column), code))

    from ms_lint.engine import all_rules, pylint_id

    symbols = {rule.name: rule.code for rule in all_rules()}
    pylint = subprocess.run(
        [sys.executable, "-m", "pylint", "--load-plugins", "ms_lint", "--disable", "all",
         "--enable", ",".join([*symbols, "syntax-error"]), "--output-format", "json", "--score", "n",
         *sorted(p.name for p in fixture_tree.glob("*.py"))],
        cwd=fixture_tree, capture_output=True, text=True)
    assert pylint.stdout.strip().startswith("["), pylint.stderr
    for item in json.loads(pylint.stdout):
        code = "MSL099" if item["symbol"] == "syntax-error" else symbols[item["symbol"]]
        results["pylint"].setdefault(Path(item["path"]).name, set()).add((item["line"], item["column"] + 1, code))
    return results
