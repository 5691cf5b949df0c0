"""The pre-commit hooks: well-formed, and their entries work as pre-commit runs them (file names appended)."""
from __future__ import annotations

import shlex
import shutil
import subprocess

import yaml
from support import ROOT

SOURCE = ("from mindspore import nn\n\n\nclass N(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
          "        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]\n")


def hooks():
    return {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def run_hook(hook_id, *files, cwd):
    command = shlex.split(hooks()[hook_id]["entry"])
    command[0] = shutil.which(command[0])
    return subprocess.run([*command, *files], cwd=cwd, capture_output=True, text=True)


def test_hooks_are_declared_for_python_files_without_validation():
    declared = hooks()
    assert set(declared) == {"ms-lint", "ms-lint-fix"}
    for hook in declared.values():
        assert hook["language"] == "python" and "python" in hook["types_or"]
        assert "--validate" not in hook["entry"]


def test_check_hook_fails_on_findings_and_honours_excludes(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint]\nextend-exclude = ["vendored"]\n')
    (tmp_path / "vendored").mkdir()
    (tmp_path / "model.py").write_text(SOURCE)
    (tmp_path / "vendored" / "old.py").write_text(SOURCE)
    assert run_hook("ms-lint", "model.py", cwd=tmp_path).returncode == 1
    assert run_hook("ms-lint", "vendored/old.py", cwd=tmp_path).returncode == 0  # --force-exclude


def test_fix_hook_fixes_and_fails_so_the_commit_is_redone(tmp_path):
    # safe fixes only: `ms_function` (gone in 2.10) becomes `jit`; the list of Cells (an unsafe fix) stays
    (tmp_path / "model.py").write_text("from mindspore import ms_function\n\n\n@ms_function\ndef f(x):\n"
                                       "    return x\n")
    assert run_hook("ms-lint-fix", "model.py", cwd=tmp_path).returncode == 1
    assert (tmp_path / "model.py").read_text() == "from mindspore import jit\n\n\n@jit\ndef f(x):\n    return x\n"
    assert run_hook("ms-lint-fix", "model.py", cwd=tmp_path).returncode == 0
