"""`ms-lint check --fix/--diff`: verified passes and writes that lose nothing."""
from __future__ import annotations

import os
import stat

import pytest
from support import run_cli

from ms_lint.engine import Linter
from ms_lint.fixing import passes
from ms_lint.fixing.passes import WriteError, fix_source, write_atomically
from ms_lint.settings import Settings
from ms_lint.source import decode

LIST = ("from mindspore import nn\n\n\nclass N(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]\n\n    def construct(self, x):\n        return x\n")
FIXED = LIST.replace("[nn.Dense(2, 2), nn.Dense(2, 2)]", "nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])")


def test_fix_writes_the_file_and_reports_what_is_left(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(LIST)
    code, out = run_cli("check", "--fix", "--unsafe-fixes", str(path))
    assert code == 0 and out == ""
    assert path.read_text() == FIXED


def test_diff_changes_nothing_and_exits_1_only_when_there_is_a_diff(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(LIST)
    code, out = run_cli("check", "--diff", "--unsafe-fixes", str(path))
    assert code == 1 and "-        self.layers = [nn.Dense" in out and "+        self.layers = nn.CellList(" in out
    assert path.read_text() == LIST
    path.write_text(FIXED)
    assert run_cli("check", "--diff", "--unsafe-fixes", str(path)) == (0, "")


def test_unsafe_fixes_need_the_flag_and_exit_non_zero_on_fix(tmp_path):
    path = tmp_path / "m.py"
    source = ("import numpy as np\nfrom mindspore import nn\n\n\nclass N(nn.Cell):\n    def construct(self, x):\n"
              "        return np.exp(x)\n")
    path.write_text(source)
    assert run_cli("check", "--fix", str(path))[0] == 1 and path.read_text() == source
    assert run_cli("check", "--fix-only", "--unsafe-fixes", "--exit-non-zero-on-fix", str(path))[0] == 1
    assert "return ops.exp(x)" in path.read_text() and "from mindspore import nn, ops" in path.read_text()


def test_crlf_bom_latin1_and_permissions_are_kept(tmp_path):
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(b"\xef\xbb\xbf" + LIST.replace("\n", "\r\n").encode())
    os.chmod(crlf, 0o750)
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + LIST.encode())
    run_cli("check", "--fix", "--unsafe-fixes", str(tmp_path))
    assert crlf.read_bytes() == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(os.stat(crlf).st_mode) == 0o750
    assert latin.read_bytes() == b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXED.encode()


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(LIST)
    original = path.read_bytes()
    source = decode(original, str(path))
    path.write_text(LIST + "# edited meanwhile\n")
    with pytest.raises(WriteError, match="changed on disk"):
        write_atomically(source, FIXED, original)
    assert path.read_text() == LIST + "# edited meanwhile\n"


def test_a_failed_write_leaves_the_file_untouched(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(LIST)

    def disk_full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(passes.os, "replace", disk_full)
    code, _ = run_cli("check", "--fix", "--unsafe-fixes", str(path))
    assert code == 2 and path.read_text() == LIST
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]  # no temporary file left behind


def test_a_fix_that_breaks_the_code_is_rejected(monkeypatch):
    from ms_lint.rule import Fix
    from ms_lint.rules import cell_list_attribute

    def broken_fix(ctx, value, container, cell):
        return Fix("safe", "break it", (ctx.replace(value, "nn.CellList([)"),))

    monkeypatch.setattr(cell_list_attribute.CellListAttribute, "_fix", staticmethod(broken_fix))
    result = fix_source(Linter(Settings()), decode(LIST.encode(), "m.py"), ("safe",))
    assert not result.changed and result.applied == []
    assert len(result.rejected) == 1 and "does not parse" in result.rejected[0][1]
