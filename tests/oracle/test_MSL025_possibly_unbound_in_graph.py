"""MSL025: 2.10 joins both branches of an `if` and the paths around a loop; a local assigned on some only fails."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, construct body, does GRAPH_MODE reject it). PyNative runs every one of them.
CASES = [
    ("TensorIf", "if x.sum() > 0:\n    y = x * 2\nreturn y", True),
    ("ElifOverConstantList", "t = x\nfor kind in ['avg', 'max']:\n    if kind == 'avg':\n        y = x * 2\n"
                             "    elif kind == 'max':\n        y = x * 3\n    t = t + y\nreturn t", True),
    ("ForBody", "for i in range(3):\n    y = x * i\nreturn y", True),
    ("WhileBody", "i = 0\nwhile i < 3:\n    y = x * i\n    i += 1\nreturn y", True),
    ("BoolArgument", "if flag:\n    y = x * 2\nif flag:\n    return x + y\nreturn x", True),
    ("IsNoneArgument", "if m is None:\n    y = x * 2\nif m is None:\n    return y\nreturn x", True),
    ("LiteralTrue", "if True:\n    y = x * 2\nreturn y", True),
    ("LiteralCompare", "if 1 > 0:\n    y = x * 2\nreturn y", True),
    ("FlagAndLiteral", "if self.flag and True:\n    y = x * 2\nreturn y", True),
    ("AttributeOfAConfig", "if self.config.use_extra:\n    y = x * 2\nreturn y", True),
    ("BothBranches", "if x.sum() > 0:\n    y = x * 2\nelse:\n    y = x\nreturn y", False),
    ("OtherBranchReturns", "if x.sum() > 0:\n    y = x * 2\nelse:\n    return x\nreturn y", False),
    ("AssignedBefore", "y = x\nif x.sum() > 0:\n    y = x * 2\nreturn y", False),
    ("ReadInside", "if x.sum() > 0:\n    y = x * 2\n    x = y + 1\nreturn x", False),
    ("AttributeFlag", "if self.flag:\n    y = x * 2\nreturn y", False),
    ("AttributeCompare", "if self.grid > 1:\n    y = x * 2\nif self.grid > 1:\n    x = x + y\nreturn x", False),
]
TEMPLATE = """
from mindspore import nn


class Config:
    use_extra = True


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flag = True
        self.grid = 2
        self.config = Config()

    def construct(self, x, m=None, flag=True):
{body}
"""


def _source(name: str, body: str) -> str:
    return TEMPLATE.format(name=name, body="\n".join("        " + line for line in body.splitlines()))


@pytest.mark.parametrize("name, body, rejected", CASES, ids=[case[0] for case in CASES])
def test_msl025_fires_exactly_where_graph_mode_rejects_the_join(oracle, name, body, rejected):
    source = _source(name, body)
    x = oracle.tensor([1.0, 2.0])
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        if rejected:
            assert not outcome.ok and outcome.error_type == "UnboundLocalError", (mode, outcome.message)
            assert "not defined in false branch" in outcome.message or "loop body" in outcome.message
        else:
            assert outcome.ok, (mode, outcome.message)
    assert oracle.call("pynative", getattr(oracle.load(source), name)(), x).ok
    found = Linter(Settings(select=("MSL025",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert bool(found) == rejected, [d.message for d in found]


# (name, construct body): a local read before anything assigns it fails in every mode
READ_FIRST = [
    ("MisspeltParameter", "n = target.shape[0]\nif x.sum() > 0:\n    target = x * 2\nelse:\n    target = x\n"
                          "return target + n"),
    ("ReadOnTheRight", "x, y = self.pair(x, y)\nreturn x + y"),
]
READ_FIRST_TEMPLATE = """
from mindspore import nn


class {name}(nn.Cell):
    def pair(self, a, b):
        return a * 2, b

    def construct(self, x):
{body}
"""


@pytest.mark.parametrize("name, body", READ_FIRST, ids=[case[0] for case in READ_FIRST])
def test_msl025_a_read_before_any_assignment_fails_in_every_mode(oracle, name, body):
    """DiVE's `target` with the parameter spelt `targe`, DAPS's `boxes, ... = self.select(boxes, ...)` (issue
    19's seventeenth sample): UnboundLocalError in PyNative, NameError when compiled; MSL025 reports the read
    as an error that no PyNative project lowers."""
    source = READ_FIRST_TEMPLATE.format(name=name, body="\n".join("        " + line for line in body.splitlines()))
    x = oracle.tensor([1.0, 2.0])
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        assert not outcome.ok and outcome.error_type == "NameError", (mode, outcome.message)
    outcome = oracle.call("pynative", getattr(oracle.load(source), name)(), x)
    assert not outcome.ok and outcome.error_type == "UnboundLocalError", outcome.message
    found = Linter(Settings(select=("MSL025",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert [(d.row, d.severity) for d in found] == [(10, "error")], [d.message for d in found]
