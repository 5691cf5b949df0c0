"""Configuration loading and the CLI contract (output, exit codes, rule docs)."""
from __future__ import annotations

import json

import pytest
from support import run_cli

from ms_lint.config import ConfigError, load
from ms_lint.settings import Settings

BAD = ("import numpy as np\nfrom mindspore import nn\n\nclass N(nn.Cell):\n    def construct(self, x):\n"
       "        return np.exp(x)\n")


def write_project(tmp_path, table="", source=BAD):
    # a bare model with no script would run in PyNative (`run_mode`): these tests are about the options
    (tmp_path / "pyproject.toml").write_text(f"[tool.ms_lint]\nmode = \"graph\"\n{table}\n", encoding="utf-8")
    (tmp_path / "model.py").write_text(source, encoding="utf-8")
    return tmp_path


def test_selection_semantics():
    assert Settings().is_selected("MSL001", "level") and not Settings().is_selected("MSL002", "info")
    assert Settings(select=("ALL",)).is_selected("MSL002", "info")
    assert not Settings(ignore=("MSL0",)).is_selected("MSL001", "level")
    assert Settings(select=("MSL001",), ignore=("MSL0",)).is_selected("MSL001", "level")  # more specific wins
    assert Settings(extend_select=("MSL002",)).is_selected("MSL002", "info")


def test_unknown_key_and_bad_values_are_named(tmp_path):
    write_project(tmp_path, 'selct = ["MSL001"]')
    with pytest.raises(ConfigError, match=r"unknown key `selct`.*did you mean `select`"):
        load(str(tmp_path))
    write_project(tmp_path, 'syntax-level = "loose"')
    with pytest.raises(ConfigError, match="syntax-level` must be one of lax, strict"):
        load(str(tmp_path))
    write_project(tmp_path, 'select = ["MSL999"]')
    with pytest.raises(ConfigError, match="unknown rule code or prefix 'MSL999'"):
        load(str(tmp_path))
    write_project(tmp_path, '[tool.ms_lint.severity]\nMSL001 = "fatal"')
    with pytest.raises(ConfigError, match='MSL001` must be "error"'):
        load(str(tmp_path))


def test_cli_reports_a_config_error_with_exit_2(tmp_path, capsys):
    write_project(tmp_path, "target = 3")
    code, _ = run_cli("check", str(tmp_path))
    assert code == 2 and "`target` must be one of" in capsys.readouterr().err


def test_text_output_names_the_entry_point_and_exit_codes(tmp_path):
    write_project(tmp_path)
    code, out = run_cli("check", str(tmp_path / "model.py"))
    assert code == 1
    assert f"{tmp_path / 'model.py'}:6:16: MSL001 [warning] NumPy call `np.exp` on tensor data in graph code " \
           "reached from `N.construct`" in out
    assert run_cli("check", "--exit-zero", str(tmp_path))[0] == 0
    assert run_cli("check", "--ignore", "MSL001", str(tmp_path))[0] == 0


def test_flags_override_the_file(tmp_path):
    write_project(tmp_path, 'syntax-level = "lax"\n[tool.ms_lint.severity]\nMSL030 = "warning"')
    _, out = run_cli("check", "--syntax-level", "strict", "--output-format", "json", str(tmp_path))
    assert json.loads(out)[0]["severity"] == "error"
    assert "fails to compile at the STRICT syntax level" in json.loads(out)[0]["message"]


def test_per_file_ignores_and_severity_override(tmp_path):
    write_project(tmp_path, '[tool.ms_lint.per-file-ignores]\n"model.py" = ["MSL001"]')
    assert run_cli("check", str(tmp_path))[0] == 0
    write_project(tmp_path, '[tool.ms_lint.severity]\nMSL001 = "info"')
    _, out = run_cli("check", "--output-format", "json", str(tmp_path))
    assert json.loads(out)[0]["severity"] == "info"


def test_json_schema(tmp_path):
    write_project(tmp_path)
    _, out = run_cli("check", "--output-format", "json", str(tmp_path))
    (item,) = json.loads(out)
    assert set(item) == {"code", "symbol", "message", "severity", "filename", "cell", "location", "end_location",
                         "fix", "url"}
    assert item["cell"] is None  # a notebook cell number, in notebooks only
    assert item["location"] == {"row": 6, "column": 16} and item["end_location"] == {"row": 6, "column": 25}
    assert item["fix"]["applicability"] == "unsafe"
    assert item["fix"]["edits"] == [{"content": "ops.exp(x)", "location": {"row": 6, "column": 16},
                                     "end_location": {"row": 6, "column": 25}}]
    assert item["url"].endswith("docs/rules/MSL001.md")


def test_unicode_columns_are_characters(tmp_path):
    write_project(tmp_path, source=BAD.replace("return np.exp(x)", "y = 'ü'; return np.exp(x)"))
    _, out = run_cli("check", "--output-format", "json", str(tmp_path))
    assert json.loads(out)[0]["location"]["column"] == 25  # 26 if UTF-8 bytes were counted


def test_bad_input_is_a_diagnostic_not_a_crash(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"x = '\xff'\n")
    (tmp_path / "nul.py").write_bytes(b"x = 1\0\n")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    code, out = run_cli("check", "--output-format", "json", str(tmp_path))
    found = {(item["filename"].rsplit("/", 1)[1], item["code"]) for item in json.loads(out)}
    assert found == {("latin.py", "MSL099"), ("nul.py", "MSL099"), ("bom.py", "MSL001")}
    assert code == 1


def test_missing_path_is_a_usage_error(tmp_path, capsys):
    assert run_cli("check", str(tmp_path / "nope.py"))[0] == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_rule_docs_and_list():
    code, out = run_cli("rule", "MSL001")
    assert code == 0 and out.startswith("# MSL001: numpy-in-graph") and "## Why it matters in graph mode" in out
    assert run_cli("rule", "numpy-in-graph")[1] == out
    assert run_cli("rule", "MSL777")[0] == 2
    code, out = run_cli("rules")
    assert code == 0 and "MSL030  cell-list-attribute" in out
