"""--write-baseline / --baseline: recorded findings stay hidden through unrelated edits; new ones are reported."""
from __future__ import annotations

import json

from support import CLEAN, run_cli

SOURCE = ("import numpy as np\nfrom mindspore import nn\n\n\nclass N(nn.Cell):\n    def construct(self, x):\n"
          "        return np.exp(x)\n")


def test_baseline_hides_recorded_findings_only(tmp_path):
    model = tmp_path / "model.py"
    model.write_text(SOURCE)
    baseline = tmp_path / "baseline.json"
    assert run_cli("check", "--write-baseline", str(baseline), str(tmp_path))[0] == 0
    entries = json.loads(baseline.read_text())["findings"]
    assert [(e["file"], e["code"], e["count"]) for e in entries] == [("model.py", "MSL001", 1)]
    assert run_cli("check", "--baseline", str(baseline), str(tmp_path)) == (0, CLEAN)
    # an edit elsewhere moves the finding: still hidden
    model.write_text("# a new header comment\n\n" + SOURCE)
    assert run_cli("check", "--baseline", str(baseline), str(tmp_path))[0] == 0
    # a new pitfall is reported, the recorded one stays hidden
    model.write_text(SOURCE.replace("return np.exp(x)", "y = np.log(x)\n        return np.exp(x)"))
    code, out = run_cli("check", "--baseline", str(baseline), str(tmp_path))
    assert code == 1 and "np.log" in out and "np.exp" not in out


def test_fixed_findings_drop_out_when_the_baseline_is_rewritten(tmp_path):
    (tmp_path / "model.py").write_text(SOURCE)
    baseline = tmp_path / "baseline.json"
    run_cli("check", "--write-baseline", str(baseline), str(tmp_path))
    (tmp_path / "model.py").write_text(SOURCE.replace("np.exp(x)", "x"))
    run_cli("check", "--write-baseline", str(baseline), str(tmp_path))
    assert json.loads(baseline.read_text())["findings"] == []


def test_a_broken_baseline_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "model.py").write_text(SOURCE)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert run_cli("check", "--baseline", str(bad), str(tmp_path))[0] == 2
    assert "not a baseline file" in capsys.readouterr().err
