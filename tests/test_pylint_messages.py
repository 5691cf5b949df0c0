"""pylint reports each finding at the severity the CLI reports it, and names the function or class around it."""
from __future__ import annotations

import json
import subprocess
import sys

from support import run_cli

from ms_lint.catalog import pylint_message, rule_by_code

SOURCE = '''from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 2)

    def construct(self, x):
        x = nn.ReLU()(x)
        return nn.Dense(2, 2)(x)
'''


def pylint_messages(tmp_path, *extra):
    (tmp_path / "model.py").write_text(SOURCE)
    (tmp_path / "train.py").write_text("import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n")
    run = subprocess.run([sys.executable, "-m", "pylint", "--load-plugins", "ms_lint", "--disable", "all",
                          "--enable", "ms-lint", "--output-format", "json", "--score", "n", *extra, "model.py"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.stdout.strip().startswith("["), run.stderr
    return [(m["line"], m["message-id"], m["symbol"], m["obj"]) for m in json.loads(run.stdout)]


def test_message_ids_follow_the_severity_the_cli_reports(tmp_path):
    found = pylint_messages(tmp_path)
    assert (10, "W8706", "cell-created-in-graph-warning", "Net.construct") in found  # weight-free: a warning
    assert (11, "E8706", "cell-created-in-graph", "Net.construct") in found
    _, out = run_cli("check", "--no-cache", "--output-format", "json", str(tmp_path / "model.py"))
    cli = {(item["location"]["row"], item["severity"]) for item in json.loads(out)}
    letters = {"E": "error", "W": "warning", "C": "info"}
    assert {(row, letters[msgid[0]]) for row, msgid, _, _ in found} == cli


def test_either_symbol_disables_its_severity_only(tmp_path):
    found = pylint_messages(tmp_path, "--disable", "cell-created-in-graph-warning")
    assert [m[1] for m in found if m[1].endswith("8706")] == ["E8706"]


def test_a_suppression_comment_by_any_pylint_name_of_the_rule_works(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE.replace("x = nn.ReLU()(x)", "x = nn.ReLU()(x)  # pylint: disable=W8706"))
    _, out = run_cli("check", "--no-cache", "--output-format", "json", str(tmp_path / "m.py"))
    assert [item["location"]["row"] for item in json.loads(out) if item["code"] == "MSL006"] == [11]


def test_every_rule_has_a_distinct_message_per_severity():
    from ms_lint.catalog import all_rules

    names = [pylint_message(rule, severity) for rule in all_rules() for severity in ("error", "warning", "info")]
    assert len({msgid for msgid, _ in names}) == len({symbol for _, symbol in names}) == len(names)
    level = rule_by_code("MSL001")
    assert level is not None and level.severity == "level"
    assert pylint_message(level, "warning") == ("W8701", "numpy-in-graph")
    assert pylint_message(level, "error") == ("E8701", "numpy-in-graph-error")
