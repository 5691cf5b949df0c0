"""MSL007: `Parameter(...)` and `ParameterTuple(...)` in construct fail to compile; PyNative runs them."""
from __future__ import annotations

import pytest

CELLS = """
import numpy as np
from mindspore import nn, Parameter, ParameterTuple, Tensor

class MakeParameter(nn.Cell):
    def construct(self, x):
        gamma = Parameter(Tensor(np.ones(3, np.float32)), name="gamma")
        return x * gamma

class MakeTuple(nn.Cell):
    def __init__(self):
        super().__init__()
        self.gamma = Parameter(Tensor(np.ones(3, np.float32)), name="gamma")

    def construct(self, x):
        group = ParameterTuple((self.gamma,))
        return x * group[0]
"""


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl007_parameter_in_construct_fails_to_compile(oracle, mode):
    cells = oracle.load(CELLS)
    outcome = oracle.compile(mode, cells.MakeParameter(), oracle.tensor([1.0, 2.0, 3.0]))
    assert not outcome.ok and outcome.error_type == "ValueError"
    assert "creating class 'mindspore.common.parameter.Parameter' instances is not supported" in outcome.message


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl007_parameter_tuple_in_construct_fails_to_compile(oracle, mode):
    cells = oracle.load(CELLS)
    outcome = oracle.compile(mode, cells.MakeTuple(), oracle.tensor([1.0, 2.0, 3.0]))
    assert not outcome.ok and outcome.error_type == "TypeError"
    assert "'type' object is not iterable" in outcome.message


def test_msl007_pynative_runs_both(oracle):
    cells = oracle.load(CELLS)
    for cell in (cells.MakeParameter, cells.MakeTuple):
        outcome = oracle.call("pynative", cell(), oracle.tensor([1.0, 2.0, 3.0]))
        assert outcome.ok and outcome.value.asnumpy().tolist() == [1.0, 2.0, 3.0]
