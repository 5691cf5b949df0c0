"""MSL060: a nonzero `padding` without `pad_mode="pad"` raises when the layer is built; the fix builds."""
from __future__ import annotations

from pathlib import Path

import pytest
from mindspore import nn

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.parametrize("layer, args", [
    (nn.Conv1d, (3, 8, 3)), (nn.Conv2d, (3, 8, 3)), (nn.Conv3d, (3, 8, 3)),
    (nn.Conv1dTranspose, (3, 8, 3)), (nn.Conv2dTranspose, (3, 8, 3)), (nn.Conv3dTranspose, (3, 8, 3)),
])
def test_padding_with_the_default_pad_mode_raises_at_construction(layer, args):
    with pytest.raises(ValueError, match="'pad' must be zero"):
        layer(*args, padding=1)


def test_the_message_names_the_default_same_mode():
    with pytest.raises(ValueError) as raised:
        nn.Conv2d(3, 8, 3, padding=1)
    assert str(raised.value).startswith("For 'Conv2D', the 'pad' must be zero when 'pad_mode' is not 'pad', but got "
                                        "'pad': 1 and 'pad_mode': same.")


def test_explicit_same_or_valid_with_padding_raises_too():
    for mode in ("same", "valid"):
        with pytest.raises(ValueError, match="'pad' must be zero"):
            nn.Conv2d(3, 8, 3, pad_mode=mode, padding=1)


def test_torch_positional_padding_lands_in_pad_mode():
    with pytest.raises(TypeError, match="'pad_mode' should be 'str'"):
        nn.Conv2d(3, 8, 3, 1, 1)


def test_zero_padding_builds_with_any_mode():
    nn.Conv2d(3, 8, 3, padding=0)
    nn.Conv2d(3, 8, 3, padding=(0, 0, 0, 0))


PADDED = """
from mindspore import nn

class Padded(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1)

    def construct(self, x):
        return self.conv(x)
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_pad_mode_pad_keeps_the_padding(oracle, mode):
    cells = oracle.load(PADDED)
    x = oracle.tensor([[[[1.0] * 8] * 8] * 3])
    outcome = oracle.call(mode, cells.Padded(), x)
    assert outcome.ok, outcome.error
    assert outcome.value.shape == (1, 8, 8, 8)


def test_the_fixture_raises_and_its_fixed_version_builds_and_runs(oracle):
    original = oracle.load((FIXTURES / "MSL060.py").read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match="'pad' must be zero"):
        original.Fires()
    fixed = oracle.load((FIXTURES / "MSL060.fixed.py").read_text(encoding="utf-8"))
    net = fixed.Fires()
    x = oracle.tensor([[[[1.0] * 8] * 8] * 3])
    outcome = oracle.call("lax", net, x)
    assert outcome.ok, outcome.error
    assert outcome.value.shape == (1, 8, 8, 8)
    assert net.f.pad_mode == "pad" and net.f.padding == 1 and net.g.padding == 0
    # the padding held in a local (`padw = 1`): the same ValueError, and the fix builds
    with pytest.raises(ValueError, match="'pad' must be zero"):
        original.discriminator()
    assert [layer.pad_mode for layer in fixed.discriminator()] == ["pad", "same"]


@pytest.mark.parametrize("layer", ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d"])
def test_pooling_padding_needs_pad_mode_pad_too(layer):
    """Issue 19: the pooling layers take `padding` only with `pad_mode="pad"` (3rd parameter, default "valid")."""
    from mindspore import nn

    cls = getattr(nn, layer)
    with pytest.raises(ValueError):
        cls(3, 2, padding=1)
    with pytest.raises(TypeError, match="pad_mode"):
        cls(3, 2, 1)  # PyTorch's positional padding lands on pad_mode
    cls(3, 2, pad_mode="pad", padding=1)  # the fix builds
