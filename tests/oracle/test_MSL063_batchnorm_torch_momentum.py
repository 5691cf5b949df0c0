"""MSL063: MindSpore's BatchNorm momentum weighs the old moving statistics (PyTorch's weighs the batch)."""
from __future__ import annotations

from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import nn

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

NORMS = """
from mindspore import nn

class Norm(nn.Cell):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def construct(self, x):
        return self.layer(x)
"""


def moving_mean_after_one_step(oracle, mode, layer, shape):
    net = oracle.load(NORMS).Norm(layer)
    net.set_train()
    outcome = oracle.call(mode, net, ms.Tensor(np.full(shape, 1.5, np.float32)))
    assert outcome.ok, outcome.error
    return layer.moving_mean.asnumpy()


def torch_running_mean(momentum, old=0.0, batch=1.5):
    """PyTorch's documented update: running = (1 - momentum) * running + momentum * batch."""
    return (1 - momentum) * old + momentum * batch


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_momentum_weighs_the_old_statistics(oracle, mode):
    mindspore_default = moving_mean_after_one_step(oracle, mode, nn.BatchNorm2d(2, momentum=0.9), (4, 2, 3, 3))
    torch_value = moving_mean_after_one_step(oracle, mode, nn.BatchNorm2d(2, momentum=0.1), (4, 2, 3, 3))
    assert np.allclose(mindspore_default, 0.15)
    assert np.allclose(torch_value, 1.35)  # PyTorch's momentum=0.1 carried over: 9x the intended step
    assert np.allclose(mindspore_default, torch_running_mean(0.1))


def test_batchnorm1d_has_the_same_meaning(oracle):
    assert np.allclose(moving_mean_after_one_step(oracle, "lax", nn.BatchNorm1d(2, momentum=0.1), (4, 2)), 1.35)
    assert np.allclose(moving_mean_after_one_step(oracle, "lax", nn.BatchNorm1d(2, momentum=0.9), (4, 2)), 0.15)


def test_fixed_fixture_uses_the_complement(oracle):
    original = oracle.load((FIXTURES / "MSL063.py").read_text(encoding="utf-8")).Fires()
    fixed = oracle.load((FIXTURES / "MSL063.fixed.py").read_text(encoding="utf-8")).Fires()
    # MindSpore stores 1 - momentum as the batch weight of its BatchNorm primitive
    assert original.bn.momentum == pytest.approx(0.9) and fixed.bn.momentum == pytest.approx(0.1)
    assert fixed.bn3d.bn2d.momentum == pytest.approx(0.03)
    layer = fixed.bn
    assert np.allclose(moving_mean_after_one_step(oracle, "lax", layer, (4, 8, 3, 3)), torch_running_mean(0.1))


@pytest.mark.parametrize("mode", ["lax", "pynative"])
def test_momentum_has_no_effect_without_batch_statistics(oracle, mode):
    """Why MSL063 stays silent on `use_batch_statistics=False` (issue 19): the moving statistics never move."""
    layer = nn.BatchNorm2d(1, momentum=0.1, use_batch_statistics=False)
    assert moving_mean_after_one_step(oracle, mode, layer, (2, 1, 2, 2)).tolist() == [0.0]
