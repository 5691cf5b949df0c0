"""MSL051: on CPU, AMP O2's default DynamicLossScaleManager (and any manager with an update cell) raises when the
train network is built; O3, `loss_scale_manager=None` and a non-updating FixedLossScaleManager build."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 2)
        self.bn = nn.BatchNorm1d(2)

    def construct(self, x):
        return self.bn(self.dense(x))
"""
MESSAGE = ("Only `loss_scale_manager=None` or `loss_scale_manager=FixedLossScaleManager(drop_overflow_update=False)`"
           "are supported on device `CPU`.")


@pytest.fixture
def build(oracle):
    import mindspore as ms
    from mindspore import nn
    from mindspore.train import Model

    assert ms.get_context("device_target") == "CPU"
    module = oracle.load(CELLS)

    def model(level, **kwargs):
        net = module.Net()
        return oracle.call("lax", lambda: Model(net, nn.MSELoss(), nn.SGD(net.trainable_params()), amp_level=level,
                                                **kwargs))

    return model


def test_msl051_o2_with_the_default_manager_raises_on_cpu(build):
    outcome = build("O2")
    assert not outcome.ok and outcome.error_type == "ValueError"
    assert MESSAGE in outcome.message


def test_msl051_build_train_network_o2_raises_on_cpu(oracle):
    from mindspore import amp, nn

    module = oracle.load(CELLS)
    net = module.Net()
    outcome = oracle.call("lax", amp.build_train_network, net, nn.SGD(net.trainable_params()), nn.MSELoss(), "O2")
    assert not outcome.ok and MESSAGE in outcome.message


@pytest.mark.parametrize("level", ["O0", "O1", "O3", "auto"])
def test_msl051_levels_without_a_default_manager_build(build, level):
    outcome = build(level)
    assert outcome.ok, outcome.error


def test_msl051_explicit_managers(build):
    import mindspore as ms

    assert build("O2", loss_scale_manager=None).ok
    assert build("O2", loss_scale_manager=ms.FixedLossScaleManager(1024.0, drop_overflow_update=False)).ok
    for manager in (ms.FixedLossScaleManager(1024.0), ms.DynamicLossScaleManager()):
        outcome = build("O0", loss_scale_manager=manager)
        assert not outcome.ok and MESSAGE in outcome.message
