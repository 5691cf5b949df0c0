"""MSL066: MindSpore's custom backward is a Cell's `bprop`; a PyTorch-style Function's `backward` is never used."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest

CELLS = """
import mindspore as ms
from mindspore import nn, ops

class ClipCell(nn.Cell):
    def construct(self, x):
        return ops.clamp(x, -1.0, 1.0)

    def bprop(self, x, out, dout):
        return (dout,)

class PlainClip(nn.Cell):
    def construct(self, x):
        return ops.clamp(x, -1.0, 1.0)

class TorchStyleClip:
    # the shape of a torch.autograd.Function port, without PyTorch
    @staticmethod
    def forward(ctx, x):
        return ops.clamp(x, -1.0, 1.0)

    @staticmethod
    def backward(ctx, grad):
        return grad

def through_function(x):
    return TorchStyleClip.forward(None, x).sum()
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_bprop_replaces_the_gradient_and_a_function_backward_is_ignored(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([0.5, 2.0, -3.0])
    with oracle.mode(mode):
        custom = ms.grad(cells.ClipCell())(x)
        plain = ms.grad(cells.PlainClip())(x)
        function_style = ms.grad(cells.through_function)(x)
    assert np.allclose(custom.asnumpy(), [1.0, 1.0, 1.0])  # bprop: straight-through
    assert np.allclose(plain.asnumpy(), [1.0, 0.0, 0.0])  # clamp's own gradient
    assert np.allclose(function_style.asnumpy(), plain.asnumpy())  # `backward` never ran


def test_mindspore_has_no_autograd_namespace():
    assert not hasattr(ms, "autograd")
