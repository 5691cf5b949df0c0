"""Bad input gets a diagnostic and the run goes on: never a traceback, never a file silently skipped."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

from support import run_cli

CELL = "import numpy as np{nl}from mindspore import nn{nl}class N(nn.Cell):{nl}    def construct(self, x):{nl}" \
       "        return np.exp(x){nl}"


def findings(directory):
    code, out = run_cli("check", "--no-cache", "--select", "ALL", "--output-format", "json", str(directory))
    return code, {(os.path.basename(d["filename"]), d["code"], d["location"]["row"]): d["message"]
                  for d in json.loads(out)}


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
        return True
    except (RecursionError, MemoryError, SyntaxError):
        return False


def test_hostile_files_are_reported_and_the_run_goes_on(tmp_path):
    (tmp_path / "loop.py").symlink_to("loop.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..")  # a directory loop: not followed
    (tmp_path / "deep.py").write_text("x = " + "1+" * 20000 + "1\n")
    (tmp_path / "parens.py").write_text("x = " + "(" * 300 + "1" + ")" * 300 + "\n")
    (tmp_path / "binary.py").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "cr.py").write_bytes(CELL.format(nl="\r").encode())
    (tmp_path / "tabs.py").write_text(CELL.format(nl="\n").replace("    ", "\t"))
    (tmp_path / "big.py").write_text("".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(25000)))
    code, found = findings(tmp_path)
    assert code == 1
    expected = {("loop.py", "MSL099", 1), ("parens.py", "MSL099", 1), ("binary.py", "MSL099", 2),
                ("cr.py", "MSL001", 5), ("tabs.py", "MSL001", 5)}
    if not _parses((tmp_path / "deep.py").read_text()):  # depends on the Python and its recursion limit
        expected.add(("deep.py", "MSL099", 1))
        assert "nested too deeply" in found[("deep.py", "MSL099", 1)]
    assert set(found) == expected
    assert "symbolic links" in found[("loop.py", "MSL099", 1)]
    assert "byte 0x80 at offset 128" in found[("binary.py", "MSL099", 2)]


def test_a_file_deleted_after_discovery_is_a_diagnostic(tmp_path, monkeypatch):
    from ms_lint.cli import check as cli

    (tmp_path / "gone.py").write_text("x = 1\n")
    discover = cli.discover

    def discover_then_delete(paths, settings, **options):
        files = discover(paths, settings, **options)
        os.unlink(tmp_path / "gone.py")
        return files

    monkeypatch.setattr(cli, "discover", discover_then_delete)
    code, found = findings(tmp_path)
    assert code == 1 and list(found) == [("gone.py", "MSL099", 1)]
    assert "No such file" in next(iter(found.values()))


BANNER = "#" * 200


def test_comment_banners_after_a_mode_selection_and_a_target_are_read_in_linear_time(tmp_path):
    """W-MAE (issue 19's sixteenth sample): a `#####` banner after the last `set_context(mode=GRAPH_MODE)` of a
    self-test made the run-mode scan backtrack exponentially (every `#` could start another comment): 53 of them
    never finished. The same shape after `device_target`. Run in a child process with a generous deadline: before
    the fix this input would not finish in a lifetime."""
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n")
    (tmp_path / "vit.py").write_text(
        "import mindspore as ms\nfrom mindspore import context, nn\n\n\nclass Block(nn.Cell):\n"
        "    def construct(self, x):\n        return x\n\n\nif __name__ == '__main__':\n"
        "    context.set_context(mode=context.GRAPH_MODE)\n"
        f"    {BANNER}\n    print(Block()(1))\n"
        f"    device = args.device_target  {BANNER}\n    print(device)\n")
    done = subprocess.run([sys.executable, "-m", "ms_lint", "check", "--no-cache", "--output-format", "json", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert isinstance(json.loads(done.stdout), list)
