"""MSL021: a global assigned in graph code is silently frozen (the claim in its docs)."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn

COUNTER = 0

class Counter(nn.Cell):
    def construct(self, x):
        global COUNTER
        COUNTER = COUNTER + 1
        return x * COUNTER
"""


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl021_graph_drops_the_global_assignment(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0])
    net = cells.Counter()
    first, second = oracle.call(mode, net, x), oracle.call(mode, net, x)
    assert first.ok and second.ok
    assert first.value.asnumpy().tolist() == [0.0, 0.0]  # x * 0: the assignment never happened
    assert second.value.asnumpy().tolist() == [0.0, 0.0]
    assert cells.COUNTER == 0


def test_msl021_pynative_updates_the_global(oracle):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0])
    net = cells.Counter()
    first, second = oracle.call("pynative", net, x), oracle.call("pynative", net, x)
    assert first.value.asnumpy().tolist() == [1.0, 2.0]
    assert second.value.asnumpy().tolist() == [2.0, 4.0]
    assert cells.COUNTER == 2
