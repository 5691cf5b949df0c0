"""MSL062: `nn.Dropout(x)` is keep_prob=x in MindSpore 2.10; the computed `p=` fix keeps the behaviour."""
from __future__ import annotations

import types
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import nn

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

DROPOUTS = """
from mindspore import nn

class Drop(nn.Cell):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def construct(self, x):
        return self.layer(x)
"""


def zeroed_fraction(oracle, mode, layer):
    cells = oracle.load(DROPOUTS)
    net = cells.Drop(layer)
    net.set_train()
    outcome = oracle.call(mode, net, ms.Tensor(np.ones((200, 500), np.float32)))
    assert outcome.ok, outcome.error
    values = outcome.value.asnumpy()
    return float((values == 0).mean()), float(values.max())


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_positional_argument_is_the_probability_to_keep(oracle, mode):
    zeroed, scale = zeroed_fraction(oracle, mode, nn.Dropout(0.1))
    assert zeroed == pytest.approx(0.9, abs=0.01)
    assert scale == pytest.approx(10.0, rel=1e-5)


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_p_is_the_probability_to_zero(oracle, mode):
    zeroed, scale = zeroed_fraction(oracle, mode, nn.Dropout(p=0.1))
    assert zeroed == pytest.approx(0.1, abs=0.01)
    assert scale == pytest.approx(1 / 0.9, rel=1e-5)


def test_keep_prob_keyword_equals_the_computed_p(oracle):
    keep, _ = zeroed_fraction(oracle, "lax", nn.Dropout(keep_prob=0.9))
    fixed, _ = zeroed_fraction(oracle, "lax", nn.Dropout(p=0.1))
    assert keep == pytest.approx(0.1, abs=0.01) and fixed == pytest.approx(0.1, abs=0.01)


def test_keep_prob_must_be_a_float():
    with pytest.raises(TypeError, match="keep_prob"):
        nn.Dropout(1)


def test_fixed_fixture_builds_the_same_dropout_primitives(oracle):
    config = types.SimpleNamespace(attention_dropout=0.25, hidden_dropout=0.5, dropout=0.125)
    original = oracle.load((FIXTURES / "MSL062.py").read_text(encoding="utf-8")).Fires(config)
    fixed = oracle.load((FIXTURES / "MSL062.fixed.py").read_text(encoding="utf-8")).Fires(config)
    for name in ("ported", "keep", "keyword", "imported", "qualified", "complement", "positional_complement",
                 "split"):
        before, after = getattr(original, name), getattr(fixed, name)
        assert before.p is None and after.p is not None, name
        assert after.dropout.keep_prob == pytest.approx(before.dropout.keep_prob, abs=1e-12), name
    assert fixed.ported.p == 0.9 and fixed.keep.p == 0.1  # the values are printed as written, not 0.0999...


def test_a_p_above_one_half_zeroes_most_elements(oracle):
    """`nn.Dropout(p=0.9)` (a keep probability carried into `p`) zeroes 90 %: the warning's claim."""
    zeroed, _ = zeroed_fraction(oracle, "lax", nn.Dropout(p=0.9))
    assert zeroed == pytest.approx(0.9, abs=0.01)


def test_a_zero_keep_probability_is_refused_when_the_layer_is_built(oracle):
    """PyTorch's "no dropout" carried over as the first argument: `nn.Dropout(0.)` raises ValueError, and so does
    the fixture's block built with its default `drop=0.`."""
    with pytest.raises(ValueError, match="keep_prob"):
        nn.Dropout(0.)
    with pytest.raises(ValueError, match="keep_prob"):
        nn.Dropout(keep_prob=0.0)
    cells = oracle.load((FIXTURES / "MSL062.py").read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match="keep_prob"):
        cells.ZeroByDefault()
