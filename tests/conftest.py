"""Session fixtures: the fixtures/ tree copied with `select = ["ALL"]` and the three front ends run over it; the
`--update-fixed` option (see tests/test_fixes.py)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import fixture_files, run_cli


def pytest_addoption(parser):
    parser.addoption("--update-fixed", action="store_true", default=False,
                     help="rewrite fixtures/MSL0NN.fixed.py from what the fixes produce now (review the diff!)")


@pytest.fixture
def update_fixed(request) -> bool:
    return request.config.getoption("--update-fixed")


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

    from ms_lint.catalog import all_rules, pylint_message

    # every rule at every severity (`MSL006` reports `cell-created-in-graph-warning` for its warnings)
    symbols = {pylint_message(rule, severity)[1]: rule.code for rule in all_rules()
               for severity in ("error", "warning", "info")}
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
