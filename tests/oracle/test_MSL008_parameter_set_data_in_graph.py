"""MSL008: `set_data`, `initializer`, `load_param_into_net` in construct fail to compile; `ops.assign` works."""
from __future__ import annotations

import pytest

CELLS = """
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Parameter, Tensor
from mindspore.common.initializer import initializer

class Base(nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = Parameter(Tensor(np.zeros(3, np.float32)), name="p")
        self.checkpoint = {"p": Parameter(Tensor(np.ones(3, np.float32)), name="p")}

class SetData(Base):
    def construct(self, x):
        self.p.set_data(x)
        return self.p * 1

class Initializer(Base):
    def construct(self, x):
        return x + initializer("ones", [3], ms.float32)

class LoadParam(Base):
    def construct(self, x):
        ms.load_param_into_net(self, self.checkpoint)
        return self.p * x

class Fixed(Base):
    def construct(self, x):
        ops.assign(self.p, x)
        return self.p * 1
"""

STRICT_ERRORS = {"SetData": ("AttributeError", "cannot get attributes set_data"),
                 "Initializer": ("RuntimeError", "'mindspore.common.initializer.initializer' is not supported"),
                 "LoadParam": ("RuntimeError", "is not supported in 'construct'")}
LAX_ERRORS = dict(STRICT_ERRORS, SetData=("RuntimeError", "method 'set_data' is not supported in 'construct'"))


@pytest.mark.parametrize("mode, errors", [("lax", LAX_ERRORS), ("strict", STRICT_ERRORS)])
@pytest.mark.parametrize("cell_name", sorted(STRICT_ERRORS))
def test_msl008_host_parameter_initialisation_fails_to_compile(oracle, mode, errors, cell_name):
    cells = oracle.load(CELLS)
    outcome = oracle.compile(mode, getattr(cells, cell_name)(), oracle.tensor([1.0, 2.0, 3.0]))
    error_type, text = errors[cell_name]
    assert not outcome.ok and outcome.error_type == error_type
    assert text in outcome.message


def test_msl008_pynative_runs_set_data_and_load_param_into_net(oracle):
    cells = oracle.load(CELLS)
    for cell in (cells.SetData, cells.LoadParam):
        assert oracle.call("pynative", cell(), oracle.tensor([1.0, 2.0, 3.0])).ok


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl008_the_ops_assign_fix_updates_the_parameter(oracle, mode):
    cells = oracle.load(CELLS)
    net = cells.Fixed()
    outcome = oracle.call(mode, net, oracle.tensor([1.0, 2.0, 3.0]))
    assert outcome.ok and outcome.value.asnumpy().tolist() == [1.0, 2.0, 3.0]
    assert net.p.asnumpy().tolist() == [1.0, 2.0, 3.0]
