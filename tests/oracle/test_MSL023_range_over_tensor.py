"""MSL023: `range()` over a tensor fails to compile; Python-number bounds compile and follow the value."""
from __future__ import annotations

import re

import mindspore as ms
import pytest

CELLS = """
import mindspore as ms
from mindspore import nn, Parameter, Tensor

class RangeInput(nn.Cell):
    def construct(self, x, n):
        for _ in range(n):
            x = x + 1
        return x

class RangeSum(nn.Cell):
    def construct(self, x, n):
        for _ in range(x.sum()):
            x = x + 1
        return x

class RangeParameter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.steps = Parameter(Tensor(2, ms.int32), name="steps", requires_grad=False)
    def construct(self, x, n):
        for _ in range(self.steps):
            x = x + 1
        return x

class RangeInt(nn.Cell):
    def construct(self, x, n):
        for _ in range(int(n)):
            x = x + 1
        return x

class RangeItem(nn.Cell):
    def construct(self, x, n):
        for _ in range(n.item()):
            x = x + 1
        return x
"""


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl023_range_over_tensor_fails_to_compile(oracle, mode):
    cells = oracle.load(CELLS)
    x, n = oracle.tensor([1.0, 2.0]), ms.Tensor(2, ms.int32)
    for cell in (cells.RangeInput, cells.RangeSum, cells.RangeParameter):
        outcome = oracle.call(mode, cell(), x, n)
        assert not outcome.ok, f"{cell.__name__} compiled under {mode}"
        assert outcome.error_type == "TypeError" and "make_range" in outcome.message
        assert re.search(r"int scalar but got Abstract(Ref)?Tensor", outcome.message), outcome.message
    assert oracle.call("pynative", cells.RangeInput(), x, n).value.asnumpy().tolist() == [3.0, 4.0]


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl023_python_number_bounds_compile_and_follow_the_value(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0])
    for cell in (cells.RangeInt(), cells.RangeItem()):
        two = oracle.call(mode, cell, x, ms.Tensor(2, ms.int32))
        five = oracle.call(mode, cell, x, ms.Tensor(5, ms.int32))
        assert two.ok and five.ok, (two.message, five.message)
        assert two.value.asnumpy().tolist() == [3.0, 4.0]
        assert five.value.asnumpy().tolist() == [6.0, 7.0]


STATIC_SHAPE_CALLER = """
from mindspore import nn, ops


def chunks(x, start, end, steps):
    for i in range(start, end, steps):
        x = x + i
    return x


class StaticShapeCaller(nn.Cell):
    def construct(self, x):
        height = ops.shape(x)[2]
        return chunks(x, 0, height // 2, 1) + chunks(x, 0, int(x.shape[3]), 2)
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl023_a_helper_given_static_shape_ints_by_its_caller_compiles(oracle, mode):
    """The fixture's silent `range(start, end, steps)` (issue 19): shape ints are Python ints in the graph."""
    import numpy as np

    cell = oracle.load(STATIC_SHAPE_CALLER).StaticShapeCaller()
    outcome = oracle.call(mode, cell, ms.Tensor(np.zeros((1, 1, 4, 4), np.float32)))
    assert outcome.ok, outcome.message
    assert float(outcome.value.asnumpy()[0, 0, 0, 0]) == 1.0 + 2.0  # (0 + 1) + (0 + 2)
