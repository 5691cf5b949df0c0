"""`ms-lint server` in a real Neovim, configured with the Lua blocks docs/editors.md gives (read from the page, so the
documentation and this test cannot drift apart).

Neovim runs headless with those blocks as its init.lua and tests/neovim/driver.lua as the script: it opens a file
with findings, waits for the diagnostics, applies an MSL001 quick fix from `vim.lsp.buf.code_action()`'s menu, then
the documented "fix all" mapping, and writes what it saw to a JSON file checked here. `ms-lint` on Neovim's PATH is
this interpreter's. The Neovim is `$MS_LINT_NVIM` or `nvim` on PATH (Debian's 0.7.2 in CI, installed by .ci/run);
without one the test skips, except under CI (CI=true), where it fails.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "editors.md"
DRIVER = Path(__file__).resolve().parent / "neovim" / "driver.lua"
MARKER = "<!-- tests/test_neovim.py runs this block in a real Neovim -->"
TIMEOUT = 120  # seconds for the whole Neovim run; a guard against a hang, never waited out by a passing run

MODEL = """\
import numpy as np
from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Dense(4, 4), nn.Dense(4, 4)]
        self.drop = nn.Dropout(keep_prob=0.9)

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return np.exp(x), np.tanh(x)
"""
LIST = "        self.layers = [nn.Dense(4, 4), nn.Dense(4, 4)]\n"
CELL_LIST = "        self.layers = nn.CellList([nn.Dense(4, 4), nn.Dense(4, 4)])\n"
NUMPY = "        return np.exp(x), np.tanh(x)\n"
QUICK_FIXED = MODEL.replace("from mindspore import nn\n", "from mindspore import nn, ops\n").replace(
    NUMPY, "        return ops.exp(x), np.tanh(x)\n")
FIXED_ALL = QUICK_FIXED.replace("keep_prob=0.9", "p=0.1")  # MSL062's fix is safe; MSL030's is not


def documented_blocks() -> list:
    """The ```lua blocks of docs/editors.md that follow the marker comment, in order."""
    blocks = re.findall(re.escape(MARKER) + r"\n```lua\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 2, "docs/editors.md must mark the Neovim setup and the fix-all mapping for this test"
    return blocks


def find_nvim() -> str:
    nvim = os.environ.get("MS_LINT_NVIM") or shutil.which("nvim")
    if nvim is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("nvim is missing under CI: .ci/run installs Debian's neovim package")
        pytest.skip("nvim is not installed (apt-get install neovim)")
    return nvim


def run_neovim(tmp_path: Path, init: str, wait_ms: int = 30000) -> dict:
    nvim = find_nvim()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "ms-lint"  # the documented `cmd = { "ms-lint", "server" }`, run by this interpreter
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ms_lint.cli "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n', encoding="utf-8")
    model = project / "pkg" / "model.py"
    model.write_text(MODEL, encoding="utf-8")
    (tmp_path / "init.lua").write_text(init, encoding="utf-8")
    result = tmp_path / "result.json"
    home = tmp_path / "home"  # no user configuration, plugins, shada or logs from the machine
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", HOME=str(home),
               XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               XDG_STATE_HOME=str(home / "state"), XDG_CACHE_HOME=str(home / "cache"),
               MS_LINT_NVIM_FILE=str(model), MS_LINT_NVIM_RESULT=str(result), MS_LINT_NVIM_TIMEOUT=str(wait_ms))
    env.pop("VIMINIT", None)
    process = subprocess.run(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", str(tmp_path / "init.lua"), "-c", f"luafile {DRIVER}"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
    output = f"exit status {process.returncode}\nstdout: {process.stdout}\nstderr: {process.stderr}"
    assert result.exists(), f"Neovim wrote no result\n{output}"
    seen = json.loads(result.read_text(encoding="utf-8"))
    seen["output"] = output
    seen["file"] = model.read_text(encoding="utf-8")
    return seen


def diagnostics(found) -> list:
    return [(d["code"], d["line"], d["col"], d["source"]) for d in found]


def test_documented_neovim_setup_lints_and_fixes(tmp_path):
    seen = run_neovim(tmp_path, "\n".join(documented_blocks()))
    context = json.dumps({k: v for k, v in seen.items() if k != "file"}, indent=1)
    assert not seen["errors"], context
    assert seen["filetype"] == "python"
    assert seen["clients"] == ["ms-lint"], context
    # 0-based lines and columns: the list attribute (MSL030), keep_prob (MSL062) and the two NumPy calls (MSL001)
    assert diagnostics(seen["diagnostics"]) == [
        ("MSL030", 7, 8, "ms-lint"), ("MSL062", 8, 20, "ms-lint"), ("MSL001", 13, 15, "ms-lint"),
        ("MSL001", 13, 26, "ms-lint")], context
    # the menu of the code action on `np.exp`: its fix first, then its suppression, nothing for the other finding
    assert seen["menus"][0] == ["MSL001: Replace with `ops.exp` (unsafe)", "Suppress MSL001 with # noqa"], context
    assert seen["after_quick_fix"] == QUICK_FIXED, context
    assert diagnostics(seen["diagnostics_after_quick_fix"]) == [
        ("MSL030", 7, 8, "ms-lint"), ("MSL062", 8, 20, "ms-lint"), ("MSL001", 13, 27, "ms-lint")], context
    # fix all: the safe fix (`p=`) only; the unsafe ones (nn.CellList, `np.tanh`) stay findings
    assert seen["after_fix_all"] == FIXED_ALL, context
    assert diagnostics(seen["diagnostics_after_fix_all"]) == [
        ("MSL030", 7, 8, "ms-lint"), ("MSL001", 13, 27, "ms-lint")], context
    assert seen["file"] == MODEL, "the edits stay in the buffer until it is saved"


def test_broken_server_command_fails_the_run(tmp_path):
    """The check above is real: with a server command that does not exist, no diagnostics come and the driver says
    so."""
    init = "\n".join(documented_blocks()).replace('"ms-lint", "server"', '"ms-lint-missing", "server"')
    assert "ms-lint-missing" in init
    seen = run_neovim(tmp_path, init, wait_ms=3000)
    assert seen["errors"] and "timed out" in seen["errors"][0], seen
