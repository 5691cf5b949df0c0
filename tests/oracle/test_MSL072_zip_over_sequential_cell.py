"""MSL072: zip over an nn.SequentialCell fails to compile in graph mode (PyNative runs it); CellList, enumerate,
iteration and indexing compile."""
from __future__ import annotations

import numpy as np
import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, the container class, the statement of construct that pairs layers with parts, fails in graph mode)
CASES = [
    ("ZipComprehension", "nn.SequentialCell", "outs = [conv(x) for conv, x in zip(self.convs, parts)]", True),
    ("ZipLoop", "nn.SequentialCell", "outs = []\n        for conv, x in zip(self.convs, parts):\n"
                                     "            outs.append(conv(x))", True),
    ("ZipSecond", "nn.SequentialCell", "outs = [conv(x) for x, conv in zip(parts, self.convs)]", True),
    ("CellList", "nn.CellList", "outs = [conv(x) for conv, x in zip(self.convs, parts)]", False),
    ("Enumerate", "nn.SequentialCell", "outs = [conv(parts[i]) for i, conv in enumerate(self.convs)]", False),
    ("Indexed", "nn.SequentialCell", "outs = [self.convs[0](parts[0]), self.convs[1](parts[1])]", False),
]
TEMPLATE = """
from mindspore import nn, ops


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        self.convs = {container}([nn.Conv2d(c, c, 3, pad_mode="pad", padding=1, group=c) for c in (2, 3)])
        self.norm = nn.LayerNorm((4,))

    def construct(self, v):
        parts = ops.split(v, [2, 3], axis=1)
        {pairing}
        return self.norm(ops.cat(outs, axis=1))
"""


@pytest.mark.parametrize("name, container, pairing, fails", CASES, ids=[case[0] for case in CASES])
def test_msl072_fires_exactly_where_graph_mode_fails(oracle, name, container, pairing, fails):
    source = TEMPLATE.format(name=name, container=container, pairing=pairing)
    x = oracle.tensor(np.ones((1, 5, 4, 4)))
    outcomes = {mode: oracle.call(mode, getattr(oracle.load(source), name)(), x) for mode in ("lax", "pynative")}
    assert outcomes["pynative"].ok, outcomes["pynative"].message
    assert outcomes["lax"].ok is not fails, outcomes["lax"].message
    if not fails:
        assert outcomes["lax"].value.shape == outcomes["pynative"].value.shape == (1, 5, 4, 4)
    linted = Linter(Settings(select=("MSL072",))).lint_source(SourceFile(path="cell.py", text=source,
                                                                         module_name="cell"))
    assert [d.code for d in linted.diagnostics] == (["MSL072"] if fails else [])
