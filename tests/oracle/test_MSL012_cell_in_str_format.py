"""MSL012: `str.format` of a sub-Cell, used, fails to compile at both levels; f-strings and `%` compile."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

CASES = [
    ("Format", "print('layer {}'.format(self.dense))", True),
    ("FString", "print(f'layer {self.dense}')", False),
    ("Percent", "print('layer %s' % self.dense)", False),
    ("PlainAttribute", "print('name {}'.format(self.label))", False),
]
TEMPLATE = """
from mindspore import nn


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 2)
        self.label = "net"

    def construct(self, x):
        {line}
        return self.dense(x)
"""


@pytest.mark.parametrize("name, line, fails", CASES, ids=[case[0] for case in CASES])
def test_msl012_fires_exactly_where_graph_mode_cannot_format_the_cell(oracle, name, line, fails):
    source = TEMPLATE.format(name=name, line=line)
    x = oracle.tensor([[1.0, 2.0]])
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        if fails:
            assert not outcome.ok and "Unsupported parameter type for python primitive" in outcome.message, mode
        else:
            assert outcome.ok, (mode, outcome.message)
    assert oracle.call("pynative", getattr(oracle.load(source), name)(), x).ok
    found = Linter(Settings(select=("MSL012",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert bool(found) == fails, [d.message for d in found]
