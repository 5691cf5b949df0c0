"""MSL050: AMP O2/O3 re-cast the whole network and silently reset a sub-cell's `to_float(float32)`; O1 keeps it."""
from __future__ import annotations

import pytest

CELLS = """
import numpy as np
import mindspore as ms
from mindspore import nn, Parameter, Tensor


class Inner(nn.Cell):
    def __init__(self):
        super().__init__()
        self.small = Parameter(Tensor(np.array([1e-4], np.float32)), name="small")

    def construct(self, x):
        return x + self.small  # 1.0 + 1e-4 is 1.0001 in float32, exactly 1.0 in float16


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def construct(self, x):
        return self.inner(x) - 1.0


class WithNorm(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 2)
        self.bn = nn.BatchNorm1d(2)

    def construct(self, x):
        return self.bn(self.dense(x))
"""


@pytest.fixture
def cells(oracle):
    return oracle.load(CELLS)


def _precision(cell):
    flags = cell.get_flags()
    return {name: flags.get(name) for name in ("fp16", "fp32")}


def _excepted(cells):
    import mindspore as ms

    net = cells.Outer()
    net.inner.to_float(ms.float32)
    return net


def test_msl050_the_exception_alone_keeps_float32(oracle, cells):
    net = _excepted(cells)
    outcome = oracle.call("lax", net, oracle.tensor([[1.0]]))
    assert outcome.ok, outcome.error
    assert _precision(net.inner) == {"fp16": False, "fp32": True}
    assert abs(float(outcome.value.asnumpy()[0, 0]) - 1e-4) < 1e-6


@pytest.mark.parametrize("level", ["O2", "O3"])
def test_msl050_auto_mixed_precision_o2_o3_silently_reset_the_exception(oracle, cells, level):
    from mindspore import amp

    net = _excepted(cells)
    wrapped = amp.auto_mixed_precision(net, level)
    assert _precision(net.inner) == {"fp16": True, "fp32": False}
    outcome = oracle.call("lax", wrapped, oracle.tensor([[1.0]]))
    assert outcome.ok, outcome.error  # no error, no warning: the sub-cell now adds in float16
    assert float(outcome.value.asnumpy()[0, 0]) == 0.0


@pytest.mark.parametrize("level", ["O2", "O3"])
def test_msl050_build_train_network_o2_o3_reset_the_exception(cells, level):
    from mindspore import amp, nn

    net = _excepted(cells)
    amp.build_train_network(net, nn.SGD(net.trainable_params(), 0.0), nn.MSELoss(), level=level,
                            loss_scale_manager=None)
    assert _precision(net.inner) == {"fp16": True, "fp32": False}


def test_msl050_o1_keeps_the_exception(oracle, cells):
    from mindspore import amp, nn

    net = _excepted(cells)
    wrapped = amp.auto_mixed_precision(net, "O1")
    assert _precision(net.inner) == {"fp16": False, "fp32": True}
    outcome = oracle.call("lax", wrapped, oracle.tensor([[1.0]]))
    assert outcome.ok, outcome.error
    assert abs(float(outcome.value.asnumpy()[0, 0]) - 1e-4) < 1e-6
    other = _excepted(cells)
    amp.build_train_network(other, nn.SGD(other.trainable_params(), 0.0), nn.MSELoss(), level="O1")
    assert _precision(other.inner) == {"fp16": False, "fp32": True}


@pytest.mark.parametrize("level, kept", [("O2", True), ("O3", False)])
def test_msl050_o2_keeps_batchnorm_in_float32_itself_o3_does_not(cells, level, kept):
    import mindspore as ms
    from mindspore import amp, nn

    for build in (lambda n: amp.auto_mixed_precision(n, level),
                  lambda n: amp.build_train_network(n, nn.SGD(n.trainable_params()), nn.MSELoss(), level=level,
                                                    loss_scale_manager=None)):
        net = cells.WithNorm()
        net.bn.to_float(ms.float32)
        build(net)
        norm = next(cell for _, cell in net.cells_and_names() if isinstance(cell, nn.BatchNorm1d))
        assert _precision(norm) == ({"fp16": False, "fp32": True} if kept else {"fp16": True, "fp32": False})


def test_msl050_an_exception_made_after_the_amp_call_survives(oracle, cells):
    import mindspore as ms
    from mindspore import amp, nn

    class FirstOutput(nn.Cell):
        def construct(self, out, label):
            return out.reshape(-1)[0] + label.sum() * 0

    net = cells.Outer()
    train = amp.build_train_network(net, nn.SGD(net.trainable_params(), 0.0), FirstOutput(), level="O2",
                                    loss_scale_manager=None)
    for _, cell in train.cells_and_names():
        if isinstance(cell, cells.Inner):
            cell.to_float(ms.float32)
    assert _precision(net.inner) == {"fp16": False, "fp32": True}
    outcome = oracle.call("lax", train, oracle.tensor([[1.0]]), oracle.tensor([[0.0]]))
    assert outcome.ok, outcome.error
    assert abs(float(outcome.value.asnumpy()) - 1e-4) < 1e-6
