"""MSL033: a Cell with `forward` and no `construct` fails at the first call; a delegating construct fixes it."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn

class ForwardOnly(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 2)

    def forward(self, x, y=None):
        out = self.dense(x)
        if y is not None:
            out = out + y
        return out

class Fixed(ForwardOnly):
    def construct(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

class Aliased(ForwardOnly):
    construct = ForwardOnly.forward
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl033_forward_only_cell_fails_and_the_delegating_construct_runs(oracle, mode):
    cells = oracle.load(CELLS)
    x, y = oracle.tensor([[1.0, 2.0]]), oracle.tensor([[10.0, 10.0]])
    broken = oracle.call(mode, cells.ForwardOnly(), x)
    assert not broken.ok and broken.error_type == "AttributeError"
    assert "For 'Cell', the method 'construct' is not defined." in broken.message
    fixed = cells.Fixed()
    alone = oracle.call(mode, fixed, x)
    assert alone.ok, alone.error
    with_y = oracle.call(mode, fixed, x, y)
    assert with_y.ok and (with_y.value - alone.value).asnumpy().tolist() == [[10.0, 10.0]]
    with_keyword = oracle.call(mode, lambda: fixed(x, y=y))
    assert with_keyword.ok and with_keyword.value.asnumpy().tolist() == with_y.value.asnumpy().tolist()
    assert oracle.call(mode, cells.Aliased(), x).ok
