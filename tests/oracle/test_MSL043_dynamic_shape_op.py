"""MSL043: data-dependent shapes compile and run on CPU, matching PyNative, with shapes that vary per call."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn, ops

class Mask(nn.Cell):
    def construct(self, x):
        return x[x > 1]

class SliceFromData(nn.Cell):
    def construct(self, x):
        n = int(x.sum()) // 3
        return x[:n]

class NonZero(nn.Cell):
    def construct(self, x):
        return ops.nonzero(x > 1)

class MaskedSelect(nn.Cell):
    def construct(self, x):
        return ops.masked_select(x, x > 0)

class Unique(nn.Cell):
    def construct(self, x):
        return ops.unique(x)[0]
"""


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl043_dynamic_shapes_run_on_cpu_like_pynative(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0, 3.0, 2.0])
    for cell in (cells.Mask, cells.SliceFromData, cells.NonZero, cells.MaskedSelect, cells.Unique):
        graph, eager = oracle.call(mode, cell(), x), oracle.call("pynative", cell(), x)
        assert graph.ok and eager.ok, (cell.__name__, graph.message, eager.message)
        assert sorted(graph.value.asnumpy().ravel().tolist()) == sorted(eager.value.asnumpy().ravel().tolist())
    assert oracle.call(mode, cells.NonZero(), x).value.shape == (3, 1)


def test_msl043_one_graph_returns_data_dependent_shapes(oracle):
    cells = oracle.load(CELLS)
    net = cells.Mask()
    few = oracle.call("lax", net, oracle.tensor([0.0, 0.0, 5.0, 0.0]))
    many = oracle.call("lax", net, oracle.tensor([5.0, 5.0, 5.0, 0.0]))
    assert few.value.shape == (1,) and many.value.shape == (3,)
