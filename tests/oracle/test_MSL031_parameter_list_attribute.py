"""MSL031: Parameters held in a Python list/tuple are not registered and never train; ParameterTuple fixes it."""
from __future__ import annotations

import mindspore as ms
import pytest
from mindspore import nn

CELLS = """
import numpy as np
from mindspore import nn, Parameter, ParameterTuple, Tensor

def weight():
    return Tensor(np.ones(2, np.float32))

class InList(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ws = [Parameter(weight(), name="w1"), Parameter(weight(), name="w2")]
        self.b = Parameter(Tensor(np.zeros(2, np.float32)), name="b")

    def construct(self, x):
        return x * self.ws[0] * self.ws[1] + self.b

class InTuple(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ws = tuple(Parameter(weight()) for _ in range(2))
        self.b = Parameter(Tensor(np.zeros(2, np.float32)), name="b")

    def construct(self, x):
        return x * self.ws[0] * self.ws[1] + self.b

class OnlyList(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ws = [Parameter(weight(), name="w1")]

    def construct(self, x):
        return x * self.ws[0]

class Fixed(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ws = ParameterTuple([Parameter(weight(), name="w1"), Parameter(weight(), name="w2")])
        self.b = Parameter(Tensor(np.zeros(2, np.float32)), name="b")

    def construct(self, x):
        return x * self.ws[0] * self.ws[1] + self.b

class FixedUnnamed(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ws = ParameterTuple([Parameter(weight()) for _ in range(2)])

    def construct(self, x):
        return x * self.ws[0] * self.ws[1]

class DuplicateNamesInList(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ws = [Parameter(weight(), name="w"), Parameter(weight(), name="w")]

    def construct(self, x):
        return x

class DuplicateNamesFixed(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ws = ParameterTuple([Parameter(weight(), name="w"), Parameter(weight(), name="w")])

    def construct(self, x):
        return x
"""


def sgd_step(net, x):
    optimizer = nn.SGD(net.trainable_params(), 0.1)

    def loss(inputs):
        return (net(inputs) ** 2).sum()

    _, grads = ms.value_and_grad(loss, None, optimizer.parameters)(x)
    optimizer(grads)


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl031_parameters_in_a_list_or_tuple_are_not_registered_and_never_train(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0])
    for broken in (cells.InList(), cells.InTuple()):
        assert oracle.call(mode, broken, x).ok  # the forward pass works
        assert [p.name for p in broken.trainable_params()] == ["b"]
        assert list(broken.parameters_dict()) == ["b"]
        assert oracle.call(mode, sgd_step, broken, x).ok
        assert [w.asnumpy().tolist() for w in broken.ws] == [[1.0, 1.0], [1.0, 1.0]], "held Parameters changed"
        assert broken.b.asnumpy().tolist() != [0.0, 0.0], "the registered Parameter did not train"


def test_msl031_with_nothing_else_registered_the_optimizer_refuses(oracle):
    cells = oracle.load(CELLS)
    net = cells.OnlyList()
    assert net.trainable_params() == []
    with pytest.raises(ValueError, match="must not be empty"):
        nn.SGD(net.trainable_params(), 0.1)


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl031_parameter_tuple_registers_them_and_they_train(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0])
    fixed = cells.Fixed()
    assert [p.name for p in fixed.trainable_params()] == ["w1", "w2", "b"]
    assert oracle.call(mode, sgd_step, fixed, x).ok
    assert all(w.asnumpy().tolist() != [1.0, 1.0] for w in fixed.ws)
    unnamed = cells.FixedUnnamed()
    names = [p.name for p in unnamed.trainable_params()]
    assert len(names) == 2 and all(name.startswith("Parameter$") for name in names)


def test_msl031_duplicate_names_fail_the_same_with_or_without_the_fix(oracle):
    cells = oracle.load(CELLS)
    for cell in (cells.DuplicateNamesInList, cells.DuplicateNamesFixed):
        with pytest.raises(ValueError, match="its name 'w' already exists"):
            cell()
