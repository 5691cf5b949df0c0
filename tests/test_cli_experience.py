"""The command line as ruff users expect it: flags, settings, standard input, noqa comments, output, cache."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from support import CLEAN, ROOT, run_cli

BAD = ("import numpy as np\nfrom mindspore import nn\n\n\nclass N(nn.Cell):\n    def __init__(self):\n"
       "        super().__init__()\n        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]\n\n"
       "    def construct(self, x):\n        return np.exp(x)\n")


# a bare model with no script would run in PyNative (`run_mode`): these tests are about the command line
def project(tmp_path, table="[tool.ms_lint]\nmode = \"graph\"\n", source=BAD, name="model.py"):
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    (tmp_path / name).write_text(source, encoding="utf-8")
    return tmp_path / name


def codes(out: str):
    return sorted(item["code"] for item in json.loads(out))


# ----- flags --------------------------------------------------------------------------------------------------
def test_repeated_and_comma_separated_selectors_accumulate(tmp_path):
    path = str(project(tmp_path))
    assert codes(run_cli("check", "--output-format", "json", path)[1]) == ["MSL001", "MSL030"]
    assert run_cli("check", "--ignore", "MSL001", "--ignore", "MSL030", path) == (0, CLEAN)
    assert run_cli("check", "--ignore", "MSL001,MSL030", path) == (0, CLEAN)
    out = run_cli("check", "--output-format", "json", "--select", "MSL001", "--select", "MSL030", path)[1]
    assert codes(out) == ["MSL001", "MSL030"]


def test_bare_command_prints_help():
    code, out = run_cli()
    assert code == 0 and out.startswith("usage: ms-lint") and "check" in out


def test_rules_and_rule_as_json():
    code, out = run_cli("rules", "--output-format", "json")
    rules = json.loads(out)
    assert code == 0 and len(rules) == len({r["code"] for r in rules}) > 40
    first = next(r for r in rules if r["code"] == "MSL030")
    assert first["name"] == "cell-list-attribute" and first["fix"] == "unsafe" and first["pylint_id"] == "E8730"
    assert first["explanation"].startswith("# MSL030")
    assert json.loads(run_cli("rule", "MSL030", "--output-format", "json")[1]) == first


def test_a_missing_path_is_reported_and_the_others_still_linted(tmp_path, capsys):
    path = str(project(tmp_path))
    code, out = run_cli("check", "--output-format", "concise", str(tmp_path / "nope.py"), path)
    assert code == 2 and "MSL030" in out
    assert "nope.py: no such file or directory" in capsys.readouterr().err


def test_keyboard_interrupt_is_one_line_and_exit_130(tmp_path, capsys, monkeypatch):
    from ms_lint.cli import check

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(check, "lint_and_judge", interrupted)
    assert run_cli("check", str(project(tmp_path)))[0] == 130
    assert capsys.readouterr().err.strip() == "ms-lint: interrupted"


# ----- settings -----------------------------------------------------------------------------------------------
def test_the_dashed_table_is_read_and_both_tables_are_an_error(tmp_path, capsys):
    path = str(project(tmp_path, '[tool.ms-lint]\nignore = ["MSL001"]\n'))
    assert codes(run_cli("check", "--output-format", "json", path)[1]) == ["MSL030"]
    project(tmp_path, '[tool.ms-lint]\nignore = ["MSL001"]\n[tool.ms_lint]\nignore = ["MSL030"]\n')
    assert run_cli("check", path)[0] == 2
    assert "both [tool.ms_lint] and [tool.ms-lint]" in capsys.readouterr().err


def test_show_settings_says_where_each_setting_came_from(tmp_path):
    path = project(tmp_path, '[tool.ms_lint]\ntarget = "gpu"\n')
    code, out = run_cli("check", "--show-settings", "--ignore", "MSL001", "--output-format", "json", str(path))
    shown = json.loads(out)
    assert code == 0 and shown["config_path"] == str(tmp_path / "pyproject.toml")
    assert shown["settings"]["target"] == {"value": "gpu", "source": str(tmp_path / "pyproject.toml")}
    assert shown["settings"]["ignore"] == {"value": ["MSL001"], "source": "command line"}
    assert shown["settings"]["syntax-level"] == {"value": None, "source": "default"}
    assert shown["files"] == [str(path)]
    text = run_cli("check", "--show-settings", str(path))[1]
    assert 'target            = "gpu"  # ' + str(tmp_path / "pyproject.toml") in text


def test_show_files_lists_what_would_be_linted(tmp_path):
    project(tmp_path, '[tool.ms_lint]\nextend-exclude = ["skipped"]\n')
    (tmp_path / "skipped").mkdir()
    (tmp_path / "skipped" / "x.py").write_text("x = 1\n")
    (tmp_path / "other.py").write_text("y = 2\n")
    code, out = run_cli("check", "--show-files", str(tmp_path))
    assert code == 0 and out.splitlines() == [str(tmp_path / "model.py"), str(tmp_path / "other.py")]


# ----- standard input -----------------------------------------------------------------------------------------
def stdin_cli(monkeypatch, data: bytes, *args):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    return run_cli("check", *args)


def test_standard_input_uses_the_filename_for_configuration(tmp_path, monkeypatch):
    path = project(tmp_path, '[tool.ms_lint]\nignore = ["MSL001"]\n', source="x = 1\n")
    code, out = stdin_cli(monkeypatch, BAD.encode(), "--output-format", "json", "--stdin-filename", str(path), "-")
    assert code == 1 and codes(out) == ["MSL030"]
    assert json.loads(out)[0]["filename"] == str(path)
    assert path.read_text() == "x = 1\n"  # the file on disk is neither read for the findings nor written


def test_standard_input_fix_writes_the_fixed_code_to_standard_output(tmp_path, monkeypatch, capsys):
    path = project(tmp_path, source="x = 1\n")
    code, out = stdin_cli(monkeypatch, BAD.encode(), "--fix", "--unsafe-fixes", "--select", "MSL030",
                          "--stdin-filename", str(path), "-")
    assert out == BAD.replace("[nn.Dense(2, 2), nn.Dense(2, 2)]", "nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])")
    assert code == 0
    code, out = stdin_cli(monkeypatch, BAD.encode(), "--fix", "--stdin-filename", str(path), "-")
    assert out == BAD and code == 1  # nothing safe to fix: the code back as it came
    assert "MSL001" in capsys.readouterr().err  # what is left goes to standard error
    assert stdin_cli(monkeypatch, b"x = 1\n", "--fix", "--stdin-filename", str(path), "-") == (0, "x = 1\n")
    assert path.read_text() == "x = 1\n"


def test_standard_input_honours_force_exclude(tmp_path, monkeypatch):
    path = project(tmp_path, '[tool.ms_lint]\nextend-exclude = ["model.py"]\n')
    assert stdin_cli(monkeypatch, BAD.encode(), "--stdin-filename", str(path), "-")[0] == 1
    assert stdin_cli(monkeypatch, BAD.encode(), "--force-exclude", "--stdin-filename", str(path), "-") == (0, CLEAN)


def test_standard_input_cannot_mix_with_paths(tmp_path, monkeypatch, capsys):
    assert stdin_cli(monkeypatch, b"x = 1\n", "-", str(tmp_path))[0] == 2
    assert "cannot be combined" in capsys.readouterr().err


# ----- --add-noqa ---------------------------------------------------------------------------------------------
def test_add_noqa_comments_every_finding_once_and_keeps_other_comments(tmp_path):
    source = BAD.replace("return np.exp(x)", "y = np.exp(x)  # see the ported code\n"
                         "        return np.exp(x) + len('''a\nb''')").replace(
        "nn.Dense(2, 2)]\n", "nn.Dense(2, 2)]  # noqa: E501\n")
    path = project(tmp_path, source=source)
    assert run_cli("check", "--add-noqa", str(path))[0] == 0
    text = path.read_text()
    assert "self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]  # noqa: E501, MSL030\n" in text
    assert "y = np.exp(x)  # noqa: MSL001  # see the ported code\n" in text
    assert "        return np.exp(x) + len('''a\n" in text  # a line ending inside a string takes no comment
    assert run_cli("check", str(path))[0] == 1  # so its finding is left
    assert run_cli("check", "--add-noqa", str(path))[0] == 0
    assert path.read_text() == text  # idempotent


def test_add_noqa_leaves_a_bare_noqa_alone(tmp_path):
    path = project(tmp_path, source=BAD.replace("np.exp(x)", "np.exp(x)  # noqa").replace(
        "nn.Dense(2, 2)]", "nn.Dense(2, 2)]  # noqa: MSL030"))
    before = path.read_text()
    assert run_cli("check", "--add-noqa", str(path))[0] == 0 and path.read_text() == before


# ----- output -------------------------------------------------------------------------------------------------
def test_full_output_shows_the_source_and_concise_does_not(tmp_path):
    path = str(project(tmp_path))
    out = run_cli("check", path)[1]
    assert f"{path}:11:16: MSL001 [warning] NumPy call `np.exp`" in out
    assert "11 |         return np.exp(x)\n   |                ^^^^^^^^^\n" in out
    assert "= help: Replace with `ops.exp` (unsafe fix)" in out
    concise = run_cli("check", "--output-format", "concise", path)[1].splitlines()
    assert len(concise) == 3 and concise[0].startswith(f"{path}:8:9: MSL030") and concise[2].startswith("Found 2")
    assert run_cli("check", "--output-format", "text", path)[1] == out  # the former name of `full`


def test_quiet_prints_findings_only(tmp_path):
    path = str(project(tmp_path))
    out = run_cli("check", "-q", "--output-format", "concise", path)[1]
    assert len(out.splitlines()) == 2 and "Found" not in out
    assert run_cli("check", "-q", "--ignore", "MSL0", path) == (0, "")


def test_colour_follows_no_color_and_force_color(tmp_path, monkeypatch):
    path = str(project(tmp_path))
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\033[" in run_cli("check", path)[1]
    assert "\033[" not in run_cli("check", "--output-format", "json", path)[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\033[" not in run_cli("check", path)[1]


def test_long_messages_wrap_at_the_terminal_width_only(tmp_path):
    from ms_lint import formats
    from ms_lint.rule import Diagnostic

    found = [Diagnostic("MSL001", "numpy-in-graph", "word " * 60, "warning", "m.py", 1, 0, 1, 1)]
    wrapped = formats.render("concise", found, ["m.py"], view=formats.View(width=80, quiet=True))
    assert len(wrapped.splitlines()) > 3 and max(len(line) for line in wrapped.splitlines()) <= 80
    assert len(formats.render("concise", found, ["m.py"], view=formats.View(quiet=True)).splitlines()) == 1


def test_progress_is_drawn_on_a_terminal_only_and_erased():
    from ms_lint.cli.terminal import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    progress = Progress(enabled=True, delay=0.0, stream=screen)
    progress.start("linting", 3)
    progress.advance()
    progress.done()
    assert "ms-lint: linting 0/3 files" in screen.getvalue() and screen.getvalue().endswith("\r")
    piped = io.StringIO()
    progress = Progress(enabled=True, delay=0.0, stream=piped)
    progress.start("linting", 3)
    progress.done()
    assert piped.getvalue() == ""


# ----- cache --------------------------------------------------------------------------------------------------
def test_runs_with_different_options_keep_their_own_cache_entries(tmp_path, monkeypatch):
    from ms_lint import engine

    path = str(project(tmp_path))
    cache = str(tmp_path / "cache")
    for options in (("--select", "MSL001"), ()):
        run_cli("check", "--cache-dir", cache, *options, path)
    linted = []
    original = engine.Linter.lint_bytes
    monkeypatch.setattr(engine.Linter, "lint_bytes", lambda self, *a: linted.append(a) or original(self, *a))
    for options in (("--select", "MSL001"), (), ("--select", "MSL001")):
        run_cli("check", "--cache-dir", cache, *options, path)
    assert linted == []  # every run came from the cache


def test_the_cache_keeps_a_bounded_number_of_option_sets(tmp_path):
    from ms_lint.runner import KEPT_OPTION_SETS

    path = str(project(tmp_path))
    cache = tmp_path / "cache"
    selections = ["MSL001", "MSL002", "MSL003", "MSL004", "MSL005", "MSL006", "MSL007", "MSL008", "MSL009",
                  "MSL010"]
    for code in selections:
        run_cli("check", "--cache-dir", str(cache), "--select", code, path)
    assert len([p for p in cache.iterdir() if p.is_dir()]) == KEPT_OPTION_SETS < len(selections)


# ----- the command itself -------------------------------------------------------------------------------------
def test_the_installed_command_runs_from_a_subprocess(tmp_path):
    path = str(project(tmp_path))
    result = subprocess.run([sys.executable, "-m", "ms_lint.cli", "check", "--no-cache", "--output-format",
                             "concise", path], capture_output=True, text=True, cwd=str(ROOT),
                            env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == 1 and "MSL030" in result.stdout and result.stderr == ""


@pytest.mark.parametrize("flag", ["--fix", "--diff"])
def test_add_noqa_refuses_to_combine_with_fixing(tmp_path, flag, capsys):
    assert run_cli("check", "--add-noqa", flag, str(project(tmp_path)))[0] == 2
    assert "--add-noqa cannot be combined" in capsys.readouterr().err


# ----- fixing -------------------------------------------------------------------------------------------------
def test_fix_lints_only_the_files_it_fixes(tmp_path, monkeypatch):
    from ms_lint import engine

    path = project(tmp_path)
    for index in range(3):
        (tmp_path / f"clean{index}.py").write_text("x = 1\n")
    linted = []
    original = engine.Linter.lint_source
    monkeypatch.setattr(engine.Linter, "lint_source", lambda self, source: linted.append(source.path)
                        or original(self, source))
    assert run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", "--select", "MSL030", str(tmp_path))[0] == 0
    assert "nn.CellList([nn.Dense" in path.read_text()
    assert sorted(set(linted)) == sorted(str(p) for p in tmp_path.glob("*.py"))  # the first pass: every file
    assert linted.count(str(tmp_path / "clean0.py")) == 1  # never again: nothing to fix there


def test_a_fix_that_raises_a_new_project_finding_is_not_applied(tmp_path, monkeypatch):
    from ms_lint import engine
    from ms_lint.rule import Diagnostic

    path = project(tmp_path)
    judge = engine.Linter.judge

    def judge_with_a_project_finding_once_fixed(self, results):
        found = judge(self, results)
        for result in results:
            if result.path == str(path) and (result.source is None or "CellList" in result.source.text):
                found.append(Diagnostic("MSL053", "distributed-without-seed", "raised by the fix", "error",
                                        str(path), 1, 0, 1, 1))
        return found

    monkeypatch.setattr(engine.Linter, "judge", judge_with_a_project_finding_once_fixed)
    assert run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", "--select", "MSL030", str(path))[0] == 1
    assert path.read_text() == BAD  # the careful second attempt rejected the fix


def test_add_noqa_keeps_crlf_line_endings(tmp_path):
    path = project(tmp_path, source="")
    path.write_bytes(BAD.replace("\n", "\r\n").encode())
    assert run_cli("check", "--add-noqa", str(path))[0] == 0
    data = path.read_bytes()
    assert b"return np.exp(x)  # noqa: MSL001\r\n" in data and data.count(b"\r\n") == BAD.count("\n")
    assert b"\n" not in data.replace(b"\r\n", b"")


# ----- MSL098 unused-noqa ---------------------------------------------------------------------------------------
NOQA = BAD.replace("return np.exp(x)", "y = np.exp(x)  # noqa: MSL001\n        return ops.exp(y)  # noqa: MSL001"
                   ).replace("from mindspore import nn", "from mindspore import nn, ops")


def test_unused_noqa_only_for_rules_that_run(tmp_path):
    path = str(project(tmp_path, source=NOQA))
    found = json.loads(run_cli("check", "--no-cache", "--extend-select", "MSL098", "--output-format", "json",
                               path)[1])
    assert [(item["code"], item["location"]["row"]) for item in found] == [("MSL030", 8), ("MSL098", 12)]
    # MSL001 does not run: its noqa comments are not judged
    assert run_cli("check", "--no-cache", "--select", "MSL098", path) == (0, CLEAN)
    project(tmp_path, '[tool.ms_lint]\nextend-select = ["MSL098"]\n[tool.ms_lint.per-file-ignores]\n'
            '"model.py" = ["MSL001"]\n', source=NOQA)
    assert codes(run_cli("check", "--no-cache", "--output-format", "json", path)[1]) == ["MSL030"]


def test_unused_noqa_from_the_cache_and_fixed(tmp_path):
    path = project(tmp_path, source=NOQA)
    cache = str(tmp_path / "cache")
    cold = run_cli("check", "--cache-dir", cache, "--extend-select", "MSL098", str(path))
    assert "MSL098" in cold[1] and run_cli("check", "--cache-dir", cache, "--extend-select", "MSL098",
                                           str(path)) == cold
    assert run_cli("check", "--no-cache", "--extend-select", "MSL098", "--fix", "--select", "MSL098,MSL001",
                   str(path))[0] == 0  # nothing left: the other noqa is used
    assert "        return ops.exp(y)\n" in path.read_text() and "np.exp(x)  # noqa: MSL001" in path.read_text()


def test_a_project_rules_fix_applies_once(tmp_path):
    source = (ROOT / "fixtures" / "MSL053.py").read_text()
    path = project(tmp_path, source=source)
    run_cli("check", "--no-cache", "--select", "MSL053", "--fix", "--unsafe-fixes", str(path))
    fixed = path.read_text()
    assert fixed.count("set_seed(") == 1 and run_cli("check", "--no-cache", "--select", "MSL053", str(path)) == (
        0, CLEAN)
