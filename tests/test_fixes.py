"""Fix expectations: applying every fix of a fixture (safe and unsafe, to a fixed point) gives MSL0NN.fixed.py.

After changing a fix on purpose, `python -m pytest tests/test_fixes.py --update-fixed` rewrites the expectations
from what the fixes produce now (the tests still fail on that run, naming each file rewritten): review the diff
with `git diff fixtures/` before committing. A run without the option never writes anything.
"""
from __future__ import annotations

import ast

import pytest
from support import FIXTURES, fixture_files, fixture_params

from ms_lint.engine import Linter
from ms_lint.fixing.apply import add_imports, apply_fixes
from ms_lint.rule import Import
from ms_lint.settings import Settings
from ms_lint.source import SourceFile, module_name

FIXED = [p for p in fixture_files() if (FIXTURES / f"{p.stem}.fixed.py").exists()]


def fix_to_fixed_point(path, text, passes=10):
    linter = Linter(Settings(select=("ALL",)))
    for _ in range(passes):
        result = linter.lint_source(SourceFile(path=str(path), text=text, module_name=module_name(str(path))))
        fixed = apply_fixes(text, result.diagnostics + linter.judge([result]), ("safe", "unsafe"))
        if fixed.text == text:
            return text
        text = fixed.text
    raise AssertionError(f"fixes did not converge in {passes} passes")


def expect_fixed(fixture, fixed: str, update: bool) -> None:
    """`fixed` is the fixture's .fixed.py; with --update-fixed, a different one is rewritten (and the test fails)."""
    expected = FIXTURES / f"{fixture.stem}.fixed.py"
    if update and expected.read_text(encoding="utf-8") != fixed:
        expected.write_text(fixed, encoding="utf-8", newline="")
        pytest.fail(f"rewrote {expected.name}: review `git diff {expected.relative_to(FIXTURES.parent)}`")
    assert fixed == expected.read_text(encoding="utf-8")


@pytest.mark.parametrize("fixture", fixture_params(FIXED))
def test_fixes_produce_the_fixed_fixture(fixture, update_fixed):
    fixed = fix_to_fixed_point(fixture, fixture.read_text(encoding="utf-8"))
    ast.parse(fixed)
    expect_fixed(fixture, fixed, update_fixed)


def test_every_rule_with_a_fix_has_a_fixed_fixture():
    from ms_lint.catalog import all_rules

    missing = [r.code for r in all_rules() if r.fix_applicability and not (FIXTURES / f"{r.code}.fixed.py").exists()]
    assert missing == []


def test_fixes_keep_crlf_line_endings():
    text = ("import numpy as np\r\nfrom mindspore import nn\r\n\r\nclass N(nn.Cell):\r\n"
            "    def construct(self, x):\r\n        return np.exp(x)\r\n")
    fixed = fix_to_fixed_point("crlf.py", text)
    assert "ops.exp(x)" in fixed and "\n" not in fixed.replace("\r\n", "")
    assert "from mindspore import nn, ops\r\n" in fixed


def test_imports_extend_the_existing_from_import_once():
    text = "from mindspore import nn  # layers\nimport numpy as np\n"
    result = add_imports(text, [Import("mindspore", "ops"), Import("mindspore", "ops")])
    assert result == "from mindspore import nn, ops  # layers\nimport numpy as np\n"


def test_imports_go_after_the_docstring_when_there_are_none():
    result = add_imports('"""Doc."""\nx = 1\n', [Import("mindspore", "ops")])
    assert result == '"""Doc."""\nfrom mindspore import ops\nx = 1\n'


def test_overlapping_fixes_are_deferred_to_the_next_pass():
    text = ("import numpy as np\nfrom mindspore import Parameter, Tensor, nn\n\nclass N(nn.Cell):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.p = Parameter(Tensor(np.zeros(4, np.float32)), name='p')\n\n"
            "    def construct(self, x):\n        self.p[0:2] = np.exp(x)\n        return x\n")
    linter = Linter(Settings(select=("ALL",)))
    result = linter.lint_source(SourceFile(path="o.py", text=text))
    first = apply_fixes(text, result.diagnostics, ("safe", "unsafe"))
    assert len(first.applied) == 1 and len(first.deferred) == 1
    fixed = fix_to_fixed_point("o.py", text)
    assert "p_updated[0:2] = ops.exp(x)" in fixed and "ops.assign(self.p, p_updated)" in fixed


def test_hoists_into_one_init_apply_in_one_pass_with_distinct_names_in_order():
    text = ("from mindspore import nn\n\nclass N(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.relu = nn.ReLU()\n        self.dense = nn.Dense(2, 2)\n\n    def construct(self, x):\n"
            "        return nn.Dense(2, 2)(nn.Dense(2, 2)(nn.ReLU()(nn.ReLU()(x))))\n")
    linter = Linter(Settings(select=("MSL006",)))
    result = linter.lint_source(SourceFile(path="h.py", text=text))
    fixed = apply_fixes(text, result.diagnostics, ("safe", "unsafe"))
    assert len(fixed.applied) == 4 and fixed.deferred == []
    # layers with weights get weights of their own; weight-free ones share the attribute built the same way
    assert "        self.dense = nn.Dense(2, 2)\n        self.dense_2 = nn.Dense(2, 2)\n" \
           "        self.dense_3 = nn.Dense(2, 2)\n" in fixed.text
    assert "return self.dense_2(self.dense_3(self.relu(self.relu(x))))" in fixed.text
    ast.parse(fixed.text)


@pytest.mark.parametrize("fixture", fixture_params(FIXED))
def test_verified_fixing_as_the_cli_does_gives_the_fixed_fixture_too(fixture, update_fixed):
    """`ms-lint check --fix --unsafe-fixes` verifies each pass (re-lint, no new finding, no undefined name): none of
    a fixture's fixes may be rejected on the way to its .fixed.py."""
    from ms_lint.fixing.passes import fix_source
    from ms_lint.source import read

    result = fix_source(Linter(Settings(select=("ALL",))), read(str(fixture)), ("safe", "unsafe"))
    assert result.rejected == [] and result.converged
    expect_fixed(fixture, result.text, update_fixed)


def test_a_hoisted_call_keeps_its_continuation_lines_aligned():
    text = ("from mindspore import nn\n\nclass N(nn.Cell):\n    def __init__(self):\n        super().__init__()\n\n"
            "    def construct(self, x):\n        if x.shape[0] > 1:\n            x = nn.Dense(2,\n"
            "                         2)(x)\n        return x\n")
    linter = Linter(Settings(select=("MSL006",)))
    result = linter.lint_source(SourceFile(path="a.py", text=text))
    fixed = apply_fixes(text, result.diagnostics, ("safe", "unsafe")).text
    assert "        self.dense = nn.Dense(2,\n                              2)\n" in fixed
    assert "            x = self.dense(x)\n" in fixed


def test_a_hoisted_call_is_wrapped_to_the_formatters_line_length(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ms_lint]\n[tool.ruff]\nline-length = 88\n")
    path = tmp_path / "w.py"
    text = ("from mindspore import nn\n\nclass N(nn.Cell):\n    def __init__(self):\n        super().__init__()\n\n"
            "    def construct(self, x):\n"
            "        return nn.Conv2d(64, 64, 3, pad_mode=\"pad\", padding=1, weight_init=\"normal\", "
            "has_bias=True)(x)\n")
    path.write_text(text)
    from ms_lint.config import load

    linter = Linter(load(str(path)))
    result = linter.lint_source(SourceFile(path=str(path), text=text))
    fixed = apply_fixes(text, result.diagnostics, ("safe", "unsafe")).text
    assert ("        self.conv2d = nn.Conv2d(\n"
            "            64, 64, 3, pad_mode=\"pad\", padding=1, weight_init=\"normal\", has_bias=True)\n") in fixed
    assert max(len(line) for line in fixed.splitlines()) <= 88
