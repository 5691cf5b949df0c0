"""MSL037: attributes of a Parameter, of a sub-Cell or of an indexed member cannot be set in graph code."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, construct body, the compiler's message, or None where GRAPH_MODE runs it). PyNative runs every one.
CASES = [
    ("ParameterFlag", "self.weight.requires_grad = False\nreturn x * self.weight",
     "Do not support to set attribute for a parameter."),
    ("ParameterName", "self.weight.name = 'w'\nreturn x * self.weight",
     "Do not support to set attribute for a parameter."),
    ("SubCell", "self.block.use_cache = True\nreturn self.block(x)", "does not support this kernel data type"),
    ("IndexedMember", "self.blocks[0].use_cache = True\nreturn x",
     "only attribute and name of class members can be assigned. But got Subscript."),
    ("LoopOverCellList", "for block in self.blocks:\n    block.use_cache = True\nreturn x",
     "does not support this kernel data type"),
    ("PlainObject", "self.cfg.scale = 2\nreturn x", None),
    ("LocalDict", "values = {}\nvalues['x'] = x\nreturn values['x']", None),
]
TEMPLATE = """
import numpy as np
from mindspore import Parameter, Tensor, nn


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.use_cache = False

    def construct(self, x):
        return x * 2 if self.use_cache else x


class Config:
    scale = 1


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        self.weight = Parameter(Tensor(np.ones(2, np.float32)), name="weight")
        self.block = Block()
        self.blocks = nn.CellList([Block(), Block()])
        self.cfg = Config()

    def construct(self, x):
{body}
"""


@pytest.mark.parametrize("name, body, message", CASES, ids=[case[0] for case in CASES])
def test_msl037_fires_exactly_where_graph_mode_refuses_the_assignment(oracle, name, body, message):
    source = TEMPLATE.format(name=name, body="\n".join("        " + line for line in body.splitlines()))
    x = oracle.tensor([1.0, 2.0])
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        if message:
            assert not outcome.ok and message in outcome.message, (mode, outcome.message)
        else:
            assert outcome.ok, (mode, outcome.message)
    assert oracle.call("pynative", getattr(oracle.load(source), name)(), x).ok
    found = Linter(Settings(select=("MSL037",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert [d.severity for d in found] == (["error"] if message else []), [d.message for d in found]
