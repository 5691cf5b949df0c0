"""MSL075: arithmetic on a primitive object (not its result) fails in every mode."""
from __future__ import annotations

import numpy as np
import pytest

CELLS = """
from mindspore import nn, ops


class Jitter(nn.Cell):
    def construct(self, x):
        rand = ops.UniformReal()
        return x + (rand - 0.5)


class Called(nn.Cell):
    def construct(self, x):
        rand = ops.UniformReal()
        return x + (rand((2,)) - 0.5)
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl075_arithmetic_on_the_primitive_fails_and_on_its_draw_runs(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor(np.zeros((2,), dtype=np.float32))
    outcome = oracle.call(mode, cells.Jitter(), x)
    assert not outcome.ok, outcome.value
    if mode == "pynative":
        assert outcome.error_type == "TypeError" and "unsupported operand" in outcome.message, outcome.message
    assert oracle.call(mode, cells.Called(), x).ok
