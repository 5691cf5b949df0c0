"""Fix validation without MindSpore: the `[tool.ms_lint.validate]` table, which Cells a fix touched, and what happens
to fixes that validation finds harmful (the MindSpore runs are in test_validation.py)."""
from __future__ import annotations

import ast

import pytest
from support import run_cli

from ms_lint import validation
from ms_lint.config import ConfigError, from_mapping
from ms_lint.engine import Linter
from ms_lint.fixing.passes import fix_source
from ms_lint.settings import Settings
from ms_lint.source import SourceFile
from ms_lint.validation import CellSpec, ValidationConfig, Verdict, changed_classes, jobs_for


def _config(table):
    return ValidationConfig.from_settings(from_mapping({"validate": table}, "pyproject.toml"))


def test_specs_name_a_factory_or_inputs():
    config = _config({"timeout": 30, "Net": "float32[2,3,8,8]", "pkg.models:Vit": "tests.factories:make_vit",
                      "Pair": ["float32[2, 4]", "int64[2]"], "Scalar": "float32[]"})
    assert config.timeout == 30
    assert config.spec_for("any.module", "Net") == CellSpec(inputs=("float32[2,3,8,8]",))
    assert config.spec_for("pkg.models", "Vit") == CellSpec(factory="tests.factories:make_vit")
    assert config.spec_for("other.models", "Vit") is None  # `module:Class` keys name one module
    assert config.spec_for("m", "Pair").inputs == ("float32[2, 4]", "int64[2]")
    assert config.spec_for("m", "Scalar").inputs == ("float32[]",)
    assert ValidationConfig.from_settings(Settings()).timeout == validation.DEFAULT_TIMEOUT


@pytest.mark.parametrize("table, message", [
    ({"Net": "float31[2]"}, "`Net` must name a factory"),
    ({"Net": "make"}, "`Net` must name a factory"),
    ({"Net": 3}, "`Net` must name a factory"),
    ({"Net": []}, "`Net` must name a factory"),
    ({"timeout": -1}, "`timeout` must be a positive number"),
    ({"timeout": "60"}, "`timeout` must be a positive number"),
])
def test_bad_specs_are_configuration_errors(table, message):
    with pytest.raises(ConfigError, match=message):
        _config(table)


ORIGINAL = '''\
from mindspore import nn


def helper(x):
    return x


class A(nn.Cell):
    def construct(self, x):
        return x


class B(nn.Cell):
    def construct(self, x):
        return x
'''


def _changed(fixed_text):
    return changed_classes(ast.parse(ORIGINAL), ORIGINAL, ast.parse(fixed_text), fixed_text, {"A", "B"})


def test_changed_classes_are_the_cells_whose_code_changed():
    assert _changed(ORIGINAL) == []
    assert _changed(ORIGINAL.replace("        return x\n\n\nclass B", "        return x * 2\n\n\nclass B")) == ["A"]
    # a change outside the classes (a helper, an import) may change every Cell
    assert _changed(ORIGINAL.replace("    return x\n\n\nclass A", "    return -x\n\n\nclass A")) == ["A", "B"]
    assert _changed(ORIGINAL.replace("import nn", "import nn, ops")) == ["A", "B"]


PORT = '''\
from mindspore import nn


class Good(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]

    def construct(self, x):
        return x


class Bad(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]

    def construct(self, x):
        return x
'''


def _port(tmp_path):
    path = tmp_path / "port.py"
    path.write_text(PORT, encoding="utf-8")
    linter = Linter(Settings(validate=(("Good", "float32[1,2]"), ("Bad", "float32[1,2]"))))
    source = SourceFile(path=str(path), text=PORT, module_name="port")
    return linter, source


def test_jobs_name_each_changed_cell_with_its_spec_and_fixes(tmp_path):
    linter, source = _port(tmp_path)
    fixed = fix_source(linter, source, ("safe", "unsafe"))
    [job] = jobs_for(linter, [fixed], ValidationConfig.from_settings(linter.settings))
    assert job.module == "port" and not job.strict
    assert job.cells == {"Good": CellSpec(inputs=("float32[1,2]",)), "Bad": CellSpec(inputs=("float32[1,2]",))}
    assert [d.row for d in job.fixes["Good"]] == [7] and [d.row for d in job.fixes["Bad"]] == [16]


def test_fixes_that_make_a_cell_worse_are_withheld(tmp_path, monkeypatch, capsys):
    linter, source = _port(tmp_path)
    fixed = fix_source(linter, source, ("safe", "unsafe"))
    ran = {"built": True, "compiled": True, "ran": True, "matches_pynative": True}
    broken = {"built": True, "compiled": False, "ran": False, "matches_pynative": None, "error": "E"}

    def fake_run(jobs, config):
        return [Verdict(job.path, name, spec, before=ran, after=broken if name == "Bad" else ran)
                for job in jobs for name, spec in job.cells.items()]

    monkeypatch.setattr(validation, "run", fake_run)
    monkeypatch.setattr(validation, "mindspore_available", lambda: True)
    outcome = validation.validate_fixes(linter, [fixed], ("safe", "unsafe"))
    assert outcome.failed
    kept = outcome.replacements[source.path]
    assert "self.layers = nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])" in kept.text  # Good's fix stays
    assert kept.text.count("nn.CellList(") == 1  # Bad's is withheld
    report = capsys.readouterr().err
    assert "result: WORSE than the original: these fixes are not applied" in report
    assert "fixes not applied, they make Bad worse: 16:9 MSL030" in report


def test_validate_needs_fixes_and_mindspore(tmp_path, monkeypatch, capsys):
    (tmp_path / "m.py").write_text(PORT, encoding="utf-8")
    assert run_cli("check", "--validate", str(tmp_path))[0] == 2
    assert "--validate checks fixes" in capsys.readouterr().err
    monkeypatch.setattr(validation, "mindspore_available", lambda: False)
    original = (tmp_path / "m.py").read_text(encoding="utf-8")
    assert run_cli("check", "--fix", "--validate", str(tmp_path))[0] == 2
    assert "pip install 'ms-lint[validate]'" in capsys.readouterr().err
    assert (tmp_path / "m.py").read_text(encoding="utf-8") == original  # nothing written without validation


def _verdict(before: dict, after: dict) -> Verdict:
    return Verdict("m.py", "Net", CellSpec(inputs=("float32[1,2]",)), before=before, after=after)


GOOD = {"built": True, "compiled": True, "ran": True, "matches_pynative": True}
NOT_COMPILED = {"built": True, "compiled": False, "ran": False, "matches_pynative": None, "stage": "compile",
                "error": "RuntimeError: x"}


def _not_built(error: str) -> dict:
    return {"built": False, "compiled": False, "ran": False, "matches_pynative": None, "stage": "build",
            "error": error}


def test_a_fix_that_breaks_construction_is_worse_unless_the_original_broke_the_same_way():
    assert _verdict(NOT_COMPILED, _not_built("NameError: Log_softmax")).worse
    assert _verdict(_not_built("TypeError: bias"), _not_built("NameError: Log_softmax")).worse
    assert not _verdict(_not_built("TypeError: bias"), _not_built("TypeError: bias")).worse
    assert not _verdict(_not_built("TypeError: bias"), GOOD).worse


def test_a_fix_that_breaks_pynative_is_worse():
    assert _verdict(NOT_COMPILED, {**NOT_COMPILED, "pynative_error": "TypeError: y"}).worse
    assert not _verdict({**NOT_COMPILED, "pynative_error": "TypeError: y"},
                        {**NOT_COMPILED, "pynative_error": "TypeError: y"}).worse
    assert not _verdict(NOT_COMPILED, GOOD).worse
