"""Fix validation with real MindSpore 2.10 (GRAPH_MODE, CPU): the compile cases of fixtures/compile and the bundled
example's fix session. The validation runs in its own subprocess, as users run it. In CI a missing MindSpore fails
these tests; elsewhere they skip."""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

from ms_lint.catalog import all_rules
from ms_lint.config import load
from ms_lint.engine import Linter
from ms_lint.fixing.passes import fix_source
from ms_lint.source import read
from ms_lint.validation import ValidationConfig, jobs_for, run

if importlib.util.find_spec("mindspore") is None:  # pragma: no cover - depends on the machine
    if os.environ.get("CI"):
        raise RuntimeError("MindSpore 2.10 must be installed for the validation tests in CI")
    pytest.skip("MindSpore is not installed (`pip install -e .[validate]`); CI runs these tests",
                allow_module_level=True)

CASES = ROOT / "fixtures" / "compile"
PROJECTS = (CASES, CASES / "strict")  # strict/ is a STRICT project of its own
APPLICABILITIES = ("safe", "unsafe")


def _cases(project: Path):
    return sorted(p for p in project.glob("msl*.py") if not p.name.endswith(".fixed.py"))


ALL_CASES = [case for project in PROJECTS for case in _cases(project)]


def _expected_before(case: Path) -> str:
    """The case's `EXPECT_BEFORE`, read without importing it (importing would import MindSpore here)."""
    for node in ast.parse(case.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "EXPECT_BEFORE":
            return node.value.value
    raise AssertionError(f"{case.name} has no EXPECT_BEFORE")


@pytest.fixture(scope="module")
def verdicts():
    """Every case fixed and validated, one MindSpore subprocess per project: file name -> Verdict."""
    found = {}
    for project in PROJECTS:
        settings = load(str(project))
        linter = Linter(settings)
        fixes = [fix_source(linter, read(str(case)), APPLICABILITIES) for case in _cases(project)]
        config = ValidationConfig.from_settings(settings)
        for verdict in run(jobs_for(linter, fixes, config), config):
            found[Path(verdict.path).name] = verdict
    return found


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda p: p.stem)
def test_the_fix_gives_the_expected_fixed_file(case):
    result = fix_source(Linter(load(str(case))), read(str(case)), APPLICABILITIES)
    assert not result.rejected
    assert result.text == case.with_suffix(".fixed.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda p: p.stem)
def test_the_original_fails_as_the_case_says(case, verdicts):
    verdict = verdicts[case.name]
    assert verdict.validated, verdict.reason
    before, expected = verdict.before, _expected_before(case)
    if expected == "import":
        assert before["stage"] == "import" and not before["built"], before
    elif expected == "build":
        assert before["stage"] == "build" and not before["built"], before
    elif expected == "compile":
        assert before["built"] and not before["compiled"], before
    elif expected == "run":
        assert before["compiled"] and not before["ran"], before
    else:
        assert expected == "diverges", expected
        assert before["ran"] and before["matches_pynative"] is False, before


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda p: p.stem)
def test_the_fixed_cell_compiles_and_matches_pynative(case, verdicts):
    verdict = verdicts[case.name]
    assert verdict.proven, verdict.after
    assert not verdict.worse
    assert verdict.after["max_difference"] is not None and verdict.after["max_difference"] <= 1e-4


def test_strict_project_cases_compile_at_strict(verdicts):
    settings = load(str(CASES / "strict"))
    linter = Linter(settings)
    case = _cases(CASES / "strict")[0]
    jobs = jobs_for(linter, [fix_source(linter, read(str(case)), APPLICABILITIES)],
                    ValidationConfig.from_settings(settings))
    assert [job.strict for job in jobs] == [True]
    assert "Kernel select failed" in verdicts[case.name].before["error"]  # STRICT refuses str.format on a tensor


def test_every_fix_has_a_compile_case_or_a_stated_reason():
    with_case = {case.name[:6].upper() for case in ALL_CASES}
    readme = (CASES / "README.md").read_text(encoding="utf-8")
    explained = set(re.findall(r"MSL\d{3}", readme.split("## Fixes with no compile case")[1]))
    fixable = {rule.code for rule in all_rules() if rule.fix_applicability}
    assert fixable - with_case - explained == set()
    assert with_case & explained == set()


def _ms_lint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ms_lint.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)


@pytest.fixture
def example(tmp_path):
    """A copy of the bundled example, a project of its own (examples/pyproject.toml holds its validation specs)."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    assert 'PortedResNet = "float32[2,3,8,8]"' in (tmp_path / "examples" / "pyproject.toml").read_text("utf-8")
    return tmp_path


def _write_spec(example, *lines):
    text = "\n".join(["[tool.ms_lint.validate]", *lines]) + "\n"
    (example / "examples" / "pyproject.toml").write_text(text, encoding="utf-8")


def test_example_fix_session_validates_the_fixed_network(example):
    model = example / "examples" / "ported_resnet" / "model.py"
    original = model.read_text(encoding="utf-8")
    completed = _ms_lint("check", "--fix", "--unsafe-fixes", "--validate", "--show-fixes", "examples", cwd=example)
    assert completed.returncode == 0, completed.stderr
    assert "model.py:30:9: MSL030 (unsafe) Wrap in `nn.CellList` [PortedResNet: validated]" in completed.stdout
    report = completed.stderr
    assert "examples/ported_resnet/model.py: PortedResNet [float32[2,3,8,8]] (LAX)" in report
    assert "before: does not compile in GRAPH_MODE (RuntimeError: The parameter" in report
    assert "after:  compiles and runs; outputs and parameters equal PyNative" in report
    assert "result: validated: the fixed Cell compiles and matches PyNative" in report
    assert "ResidualBlock" not in report  # no fix changed it
    fixed = model.read_text(encoding="utf-8")
    assert fixed != original and "nn.CellList(" in fixed and "ops.mean(x, axis=(2, 3))" in fixed
    assert not any(name in os.listdir(example) for name in ("rank_0", "rewritten_network"))  # dumps stay away


def test_validate_command_reports_and_changes_nothing(example):
    model = example / "examples" / "ported_resnet" / "model.py"
    original = model.read_text(encoding="utf-8")
    completed = _ms_lint("validate", "--unsafe-fixes", "examples", cwd=example)
    assert completed.returncode == 0, completed.stderr
    assert "validated: the fixed Cell compiles and matches PyNative" in completed.stdout
    assert model.read_text(encoding="utf-8") == original


def test_cells_without_a_spec_are_not_validated(example):
    _write_spec(example, 'ResidualBlock = "float32[2,16,8,8]"')
    completed = _ms_lint("validate", "--unsafe-fixes", "examples", cwd=example)
    assert completed.returncode == 0, completed.stderr
    assert "PortedResNet (LAX)\n    not validated: no [tool.ms_lint.validate] entry for this Cell" in completed.stdout
    assert "validated: the fixed Cell" not in completed.stdout


def test_the_time_limit_leaves_cells_not_validated(example):
    _write_spec(example, "timeout = 0.5", 'PortedResNet = "float32[2,3,8,8]"')
    completed = _ms_lint("validate", "--unsafe-fixes", "examples", cwd=example)
    assert "not validated: the validation time limit (0.5 s, [tool.ms_lint.validate] timeout) ran out" in \
        completed.stdout


def test_a_cell_imported_through_its_package_is_validated_in_its_fixed_form(tmp_path):
    """The factory imports the Cell as real code does (`from pkg import Net`, re-exported by `pkg/__init__.py`):
    the "after" run must build the fixed class, not the original the package bound first."""
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint.validate]\n"pkg.model:Net" = "factories:make"\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .model import Net\n")
    (tmp_path / "pkg" / "model.py").write_text(
        "from mindspore import nn\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.dense = nn.Dense(2, 2, bias=False)\n\n    def construct(self, x):\n"
        "        return self.dense(x)\n")
    (tmp_path / "factories.py").write_text(
        "import numpy as np\nfrom mindspore import Tensor\n\nfrom pkg import Net\n\n\ndef make():\n"
        "    return Net(), (Tensor(np.ones((1, 2), np.float32)),)\n")
    completed = _ms_lint("validate", "--no-cache", "pkg", cwd=tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "before: could not build (TypeError: Dense.__init__() got an unexpected keyword argument" in \
        completed.stdout
    assert "after:  compiles and runs; outputs and parameters equal PyNative" in completed.stdout
    assert not (tmp_path / ".ms_lint_cache").exists()  # --no-cache
