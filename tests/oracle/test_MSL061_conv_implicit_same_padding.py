"""MSL061: MindSpore convolutions pad "same" by default, PyTorch's pad 0; `pad_mode="valid"` gives PyTorch's shapes."""
from __future__ import annotations

import pytest

CONVS = """
from mindspore import nn

class Default(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def construct(self, x):
        return self.conv(x)

class Valid(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="valid")

    def construct(self, x):
        return self.conv(x)

class StridedValid(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, pad_mode="valid")

    def construct(self, x):
        return self.conv(x)

class TransposedDefault(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2dTranspose(3, 8, 3)

    def construct(self, x):
        return self.conv(x)

class TransposedValid(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2dTranspose(3, 8, 3, pad_mode="valid")

    def construct(self, x):
        return self.conv(x)

class Pointwise(nn.Cell):
    def __init__(self, mode):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 1, pad_mode=mode)

    def construct(self, x):
        return self.conv(x)

class Patches(nn.Cell):
    def __init__(self, mode):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 4, stride=4, pad_mode=mode)

    def construct(self, x):
        return self.conv(x)

class Upsample(nn.Cell):
    def __init__(self, mode):
        super().__init__()
        self.conv = nn.Conv2dTranspose(3, 8, 2, stride=2, pad_mode=mode)

    def construct(self, x):
        return self.conv(x)
"""


def torch_conv_size(size, kernel, stride=1, padding=0):
    """PyTorch's documented output size of nn.Conv2d."""
    return (size + 2 * padding - kernel) // stride + 1


def torch_transposed_size(size, kernel, stride=1, padding=0):
    """PyTorch's documented output size of nn.ConvTranspose2d."""
    return (size - 1) * stride - 2 * padding + kernel


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_default_pads_same_and_valid_matches_pytorch(oracle, mode):
    cells = oracle.load(CONVS)
    x = oracle.tensor([[[[1.0] * 8] * 8] * 3])
    shapes = {}
    for name in ("Default", "Valid", "StridedValid", "TransposedDefault", "TransposedValid"):
        outcome = oracle.call(mode, getattr(cells, name)(), x)
        assert outcome.ok, outcome.error
        shapes[name] = outcome.value.shape[2:]
    assert shapes["Default"] == (8, 8)  # silently "same"
    assert shapes["Valid"] == (torch_conv_size(8, 3),) * 2 == (6, 6)
    assert shapes["StridedValid"] == (torch_conv_size(8, 3, stride=2),) * 2
    assert shapes["TransposedDefault"] == (8, 8)
    assert shapes["TransposedValid"] == (torch_transposed_size(8, 3),) * 2 == (10, 10)


def test_kernel_size_one_is_the_same_in_both_modes(oracle):
    cells = oracle.load(CONVS)
    x = oracle.tensor([[[[float(i + j) for i in range(8)] for j in range(8)]] * 3])
    same = cells.Pointwise("same")
    valid = cells.Pointwise("valid")
    valid.conv.weight.set_data(same.conv.weight.data)
    a = oracle.call("lax", same, x)
    b = oracle.call("lax", valid, x)
    assert a.ok and b.ok
    assert a.value.shape == b.value.shape == (1, 8, 8, 8)
    assert (a.value.asnumpy() == b.value.asnumpy()).all()


def _patches(oracle, size, layer="Patches"):
    cells = oracle.load(CONVS)
    x = oracle.tensor([[[[float(i + j) for i in range(size)] for j in range(size)]] * 3])
    same, valid = getattr(cells, layer)("same"), getattr(cells, layer)("valid")
    valid.conv.weight.set_data(same.conv.weight.data)
    a, b = oracle.call("lax", same, x), oracle.call("lax", valid, x)
    assert a.ok and b.ok
    return a.value, b.value


def test_kernel_equal_to_stride_pads_nothing_when_the_size_divides(oracle):
    """Why MSL061 stays silent on patch embeddings (`kernel_size=16, stride=16`, issue 19): "same" adds no
    padding when the input size is a multiple of the stride, as a patch size always divides the image size."""
    same, valid = _patches(oracle, 8)
    assert same.shape == valid.shape == (1, 8, 2, 2)
    assert (same.asnumpy() == valid.asnumpy()).all()
    same, valid = _patches(oracle, 10)  # the assumption matters: 10 is not a multiple of 4
    assert same.shape == (1, 8, 3, 3) and valid.shape == (1, 8, 2, 2)
    for size in (4, 5):  # a transposed conv with kernel == stride: the same output for every size
        same, valid = _patches(oracle, size, "Upsample")
        assert same.shape == valid.shape == (1, 8, 2 * size, 2 * size)
        assert (same.asnumpy() == valid.asnumpy()).all()
