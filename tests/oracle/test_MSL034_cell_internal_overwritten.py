"""MSL034: names nn.Cell owns, overwritten by a subclass, break graph calls, construction or training."""
from __future__ import annotations

import mindspore as ms
import pytest
from mindspore import nn

from ms_lint.analysis import framework

CELLS = """
from mindspore import nn

class Base(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 2)

    def construct(self, x):
        return self.dense(x)

class CompileFlag(Base):
    def __init__(self):
        super().__init__()
        self.compile = True

class CompileClassAttribute(Base):
    compile = True

class ParametersDict(Base):
    def __init__(self):
        super().__init__()
        self.parameters_dict = {}

class TrainableParams(Base):
    def __init__(self):
        super().__init__()
        self.trainable_params = True

class ParamPrefix(Base):
    def __init__(self):
        super().__init__()
        self.param_prefix = "net"

class ToCell(Base):
    def __init__(self):
        super().__init__()
        self.to = nn.Dense(2, 2)

class Allowed(Base):
    def __init__(self):
        super().__init__()
        self.phase = "custom"
        self.training = False
        self.requires_grad = True
        self.cast = True
        self.construct = self.twice

    def twice(self, x):
        return self.dense(x) * 2

class WrongBprop(nn.Cell):
    def construct(self, x):
        return x * x

    def bprop(self, x):
        return (x * 0,)

class WrongInputCount(nn.Cell):
    def construct(self, x, y):
        return x * y

    def bprop(self, x, out, dout):
        return dout, dout

class RightBprop(nn.Cell):
    def construct(self, x):
        return x * x

    def bprop(self, x, out, dout):
        return (dout * 100,)
"""


def test_msl034_the_cell_member_lists_match_mindspore():
    public = {name for name in dir(nn.Cell) if not name.startswith("__")}
    public |= set(vars(nn.Cell()))
    assert public <= framework.CELL_MEMBERS, sorted(public - framework.CELL_MEMBERS)
    for name in framework.CELL_READONLY_PROPERTIES:
        attribute = getattr(nn.Cell, name)
        assert isinstance(attribute, property) and attribute.fset is None


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl034_compile_and_parameters_dict_break_graph_calls_only(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([[1.0, 2.0]])
    for cell in (cells.CompileFlag, cells.CompileClassAttribute, cells.ParametersDict):
        outcome = oracle.call(mode, cell(), x)
        assert not outcome.ok and outcome.error_type == "TypeError" and "is not callable" in outcome.message
        assert oracle.call("pynative", cell(), x).ok


def test_msl034_trainable_params_breaks_optimizers(oracle):
    cells = oracle.load(CELLS)
    with pytest.raises(TypeError, match="'bool' object is not callable"):
        nn.SGD(cells.TrainableParams().trainable_params(), 0.1)


def test_msl034_read_only_property_and_cell_on_a_method_name_raise_at_construction(oracle):
    cells = oracle.load(CELLS)
    with pytest.raises(AttributeError, match="property 'param_prefix' of 'ParamPrefix' object has no setter"):
        cells.ParamPrefix()
    with pytest.raises(KeyError, match="the to child cell already exists"):
        cells.ToCell()


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl034_settable_names_and_construct_are_fine(oracle, mode):
    cells = oracle.load(CELLS)
    assert oracle.call(mode, cells.Allowed(), oracle.tensor([[1.0, 2.0]])).ok


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl034_bprop_with_the_wrong_signature_breaks_every_gradient(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0])
    assert oracle.call(mode, cells.WrongBprop(), x).ok  # the forward pass is unaffected
    few = oracle.call(mode, ms.grad(cells.WrongBprop()), x)
    assert not few.ok and "requires at least 2 params 'out' and 'dout'" in few.message
    count = oracle.call(mode, ms.grad(cells.WrongInputCount(), grad_position=(0, 1)), x, x)
    assert not count.ok and "requires the forward inputs as well as the 'out' and 'dout'" in count.message
    right = oracle.call(mode, ms.grad(cells.RightBprop()), x)
    assert right.ok and right.value.asnumpy().tolist() == [100.0, 100.0]  # replaces autodiff's [2, 4]


WRAPPER = """
from mindspore import nn, ops, ParameterTuple

class TrainStepWrap(nn.Cell):
    def __init__(self, network):
        super().__init__(auto_prefix=False)
        self.network = network
        self.trainable_params = network.trainable_params()
        self.weights = ParameterTuple(self.trainable_params)
        self.optimizer = nn.Adam(self.trainable_params, learning_rate=0.01)
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)

    def construct(self, x, label):
        loss = self.network(x, label)
        grads = self.grad(self.network, self.weights)(x, label, ops.fill(loss.dtype, loss.shape, 1.0))
        return ops.depend(loss, self.optimizer(grads))
"""


def test_msl034_a_training_wrapper_keeping_its_networks_parameters_trains_through_model(oracle):
    """The warning case: `self.trainable_params = network.trainable_params()` (wide_and_deep's TrainStepWrap)."""
    import mindspore.dataset as ds
    import numpy as np

    wrapper = oracle.load(WRAPPER).TrainStepWrap(nn.WithLossCell(nn.Dense(4, 1), nn.MSELoss()))
    data = ds.NumpySlicesDataset({"x": np.ones((8, 4), np.float32), "y": np.zeros((8, 1), np.float32)},
                                 shuffle=False).batch(4)
    with oracle.mode("lax"):
        ms.Model(wrapper).train(1, data, dataset_sink_mode=False)
    with pytest.raises(TypeError, match="'list' object is not callable"):
        wrapper.trainable_params()
