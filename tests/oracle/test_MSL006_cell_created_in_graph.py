"""MSL006: a Cell built in construct freezes its random init at compile time and is not registered."""
from __future__ import annotations

import numpy as np
import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

CELLS = """
from mindspore import nn

class Inline(nn.Cell):
    def construct(self, x):
        return nn.Dense(3, 3)(x)

class InlineDropout(nn.Cell):
    def construct(self, x):
        return nn.Dropout(p=0.5)(x)

class InlineDropoutSwitched(nn.Cell):
    def construct(self, x):
        drop = nn.Dropout(p=0.5)
        drop.set_train()
        return drop(x)

class InlineBatchNorm(nn.Cell):
    def construct(self, x):
        return nn.BatchNorm2d(1)(x)

class InlineSoftmax(nn.Cell):
    def construct(self, x):
        return nn.Softmax(axis=-1)(x)

class InlineNorm(nn.Cell):
    def construct(self, x):
        return nn.Norm(axis=-1)(x)

class InlineLayerNorm(nn.Cell):
    def construct(self, x):
        return nn.LayerNorm((3,))(x)

class InlineRange(nn.Cell):
    def construct(self, x):
        return x + nn.Range(0, 3, 1)()

class Hoisted(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 3)

    def construct(self, x):
        return self.dense(x)
"""


def _two_outputs(oracle, mode, net, x):
    outcome = oracle.call(mode, lambda: (net(x).asnumpy().tolist(), net(x).asnumpy().tolist()))
    assert outcome.ok, outcome.error
    return outcome.value


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl006_inline_cell_init_is_frozen_in_graph_and_unregistered(oracle, mode):
    cells = oracle.load(CELLS)
    net, x = cells.Inline(), oracle.tensor([[1.0, 2.0, 3.0]])
    first, second = _two_outputs(oracle, mode, net, x)
    assert first == second  # one random init, drawn at compile time
    assert net.trainable_params() == []


def test_msl006_pynative_draws_new_weights_every_call(oracle):
    cells = oracle.load(CELLS)
    first, second = _two_outputs(oracle, "pynative", cells.Inline(), oracle.tensor([[1.0, 2.0, 3.0]]))
    assert first != second


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl006_hoisted_cell_is_registered_and_matches_pynative(oracle, mode):
    cells = oracle.load(CELLS)
    net, x = cells.Hoisted(), oracle.tensor([[1.0, 2.0, 3.0]])
    graph, _ = _two_outputs(oracle, mode, net, x)
    eager, _ = _two_outputs(oracle, "pynative", net, x)
    assert [p.name for p in net.trainable_params()] == ["dense.weight", "dense.bias"]
    assert graph[0] == pytest.approx(eager[0], abs=1e-6)


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl006_inline_dropout_and_batchnorm_stay_in_eval_mode(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor(np.arange(32, dtype=np.float32).reshape(2, 1, 4, 4))
    for cell in (cells.InlineDropout, cells.InlineBatchNorm):
        net = cell()
        net.set_train(True)
        outcome = oracle.call(mode, net, x)
        assert outcome.ok, outcome.error
        # Dropout drops nothing; BatchNorm uses its initial moving statistics (mean 0, variance 1)
        assert np.allclose(outcome.value.asnumpy(), x.asnumpy(), atol=1e-3)


@pytest.mark.parametrize("mode", ["lax", "strict"])
@pytest.mark.parametrize("cell", ["InlineSoftmax", "InlineNorm", "InlineRange", "InlineLayerNorm"])
def test_msl006_inline_parameter_free_layer_matches_pynative(oracle, mode, cell):
    """Layers without weights or a training mode compute the right result when built in construct (nn.Norm and
    nn.Range were errors on community ports, issue 19): MSL006 only warns about the rebuild."""
    cells = oracle.load(CELLS)
    x = oracle.tensor([[1.0, 2.0, 3.0]])
    graph = oracle.call(mode, getattr(cells, cell)(), x)
    eager = oracle.call("pynative", getattr(cells, cell)(), x)
    assert graph.ok and eager.ok, (graph.message, eager.message)
    assert np.allclose(graph.value.asnumpy(), eager.value.asnumpy())


FIXED_FILTER = """
from mindspore import nn


class FixedFilter(nn.Cell):
    def construct(self, x):
        return nn.Conv2d(1, 1, 3, pad_mode="same", weight_init="ones")(x)
"""


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl006_a_layer_with_a_fixed_weight_init_computes_the_same_filter_as_pynative(oracle, mode):
    """The warning case of issue 19: no random draw to freeze, so every call matches PyNative."""
    import numpy as np

    cell = oracle.load(FIXED_FILTER).FixedFilter()
    x = oracle.tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    first, second = oracle.call(mode, cell, x), oracle.call(mode, cell, x)
    eager = oracle.call("pynative", cell, x)
    assert first.ok and second.ok and eager.ok
    assert first.value.asnumpy().tolist() == second.value.asnumpy().tolist() == eager.value.asnumpy().tolist()


FIXED_STATE = """
import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops


class Scale(nn.Cell):
    def __init__(self, p):
        super().__init__()
        self.p = Parameter(Tensor(p, ms.float32), name="p", requires_grad=False)

    def construct(self, x):
        return self.p * x


class Outer(nn.Cell):
    def construct(self, x):
        return Scale(3)(x)
"""


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl006_a_cell_with_fixed_parameters_computes_as_in_pynative(oracle, mode):
    """Parameters made with requires_grad=False from a value that draws nothing: set, not drawn or trained."""
    from ms_lint.engine import Linter
    from ms_lint.settings import Settings
    from ms_lint.source import SourceFile

    cell = oracle.load(FIXED_STATE).Outer()
    x = oracle.tensor([1.0, 2.0])
    graph, eager = oracle.call(mode, cell, x), oracle.call("pynative", cell, x)
    assert graph.ok and eager.ok, (graph.message, eager.message)
    assert graph.value.asnumpy().tolist() == eager.value.asnumpy().tolist() == [3.0, 6.0]
    found = Linter(Settings(select=("MSL006",))).lint_source(
        SourceFile(path="cell.py", text=FIXED_STATE, module_name="cell")).diagnostics
    assert [d.severity for d in found] == ["warning"]


FUNCTIONAL_PORT = """
import numpy as np
from mindspore import Tensor, nn


class Upsample(nn.Cell):
    def __init__(self):
        super().__init__()
        self.filt = Tensor(np.ones((3, 1, 4, 4), np.float32))

    def construct(self, x):
        return nn.Conv2dTranspose(x, self.filt, stride=2, padding=1)
"""


@pytest.mark.parametrize("mode", ["lax", "pynative"])
def test_msl006_a_layer_class_given_tensors_fails_in_every_mode(oracle, mode):
    """PyTorch's `F.conv_transpose2d(x, w)` ported as the layer class (SinGAN, issue 19): a TypeError, not a
    layer with frozen weights."""
    cell = oracle.load(FUNCTIONAL_PORT).Upsample()
    outcome = oracle.call(mode, cell, oracle.tensor(np.ones((1, 3, 8, 8), dtype=np.float32)))
    assert not outcome.ok and outcome.error_type == "TypeError", outcome.message


DISTRIBUTION = """
from mindspore import nn
from mindspore.nn.probability.distribution import Categorical

class Policy(nn.Cell):
    def __init__(self):
        super().__init__()
        self.softmax = nn.Softmax(axis=-1)

    def construct(self, logits):
        return Categorical(self.softmax(logits)).log_prob(logits.argmax(-1))
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl006_a_distribution_built_from_tensors_fails_only_once_compiled(oracle, mode):
    """DRL-MindSpore's PPO (issue 19's fifth sample): `Categorical(self.actor(state))` in construct."""
    cell = oracle.load(DISTRIBUTION).Policy()
    outcome = oracle.call(mode, cell, oracle.tensor(np.array([[0.5, 1.5]], dtype=np.float32)))
    if mode == "pynative":
        assert outcome.ok, outcome.error
    else:
        assert not outcome.ok and outcome.error_type == "TypeError", outcome.message
        assert "constants" in outcome.message


KEYWORD_DISTRIBUTION = """
from mindspore import nn, ops
from mindspore.nn.probability.distribution import Categorical

class MeanFieldQ(nn.Cell):
    def boltzmann(self, q):
        return ops.softmax(q * 2, axis=-1)

    def construct(self, q):
        probs = self.boltzmann(q)
        return Categorical(probs=probs).prob(q.argmax(-1))
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl006_a_distribution_given_computed_probabilities_by_keyword_fails_once_compiled(oracle, mode):
    """xuance's MFQ network (issue 19's fifteenth sample): `Categorical(probs=actions_prob)`, an error of compiled
    code (ms_lint's warning said "it works")."""
    cell = oracle.load(KEYWORD_DISTRIBUTION).MeanFieldQ()
    outcome = oracle.call(mode, cell, oracle.tensor(np.array([[0.5, 1.5]], dtype=np.float32)))
    if mode == "pynative":
        assert outcome.ok, outcome.error
    else:
        assert not outcome.ok and "constants" in outcome.message, outcome.message
    found = Linter(Settings(select=("MSL006",))).lint_source(
        SourceFile(path="policy.py", text=KEYWORD_DISTRIBUTION, module_name="policy")).diagnostics
    assert [(d.row, d.severity) for d in found] == [(11, "error")], [d.message for d in found]


CONSTANT_DISTRIBUTION = """
import mindspore as ms
from mindspore import nn

class Router(nn.Cell):
    def construct(self, x):
        gumbel = nn.probability.distribution.Gumbel(loc=ms.tensor(0.0, ms.float32), scale=ms.tensor(1.0, ms.float32))
        return gumbel.prob(x)
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl006_a_distribution_given_literal_tensors_compiles(oracle, mode):
    """mindone's NLLB-MoE router: `Gumbel(loc=mindspore.tensor(0.0, ...), ...)` in construct compiles (literal
    tensors are constants): a warning, not the error of computed settings."""
    outcome = oracle.call(mode, oracle.load(CONSTANT_DISTRIBUTION).Router(),
                          oracle.tensor(np.array([0.5, 1.5], dtype=np.float32)))
    assert outcome.ok, outcome.message
    found = Linter(Settings(select=("MSL006",))).lint_source(
        SourceFile(path="router.py", text=CONSTANT_DISTRIBUTION, module_name="router")).diagnostics
    assert [(d.row, d.severity) for d in found] == [(7, "warning")], [d.message for d in found]


def test_msl006_the_layers_it_calls_weight_free_hold_no_parameters():
    """Every layer of `STATELESS_LAYERS` that builds with its defaults has no Parameter, or only fixed ones (SSIM's
    windows): ISANet's `nn.MatMul(sim_map, value)` (issue 19's eighth sample) is no weighted layer."""
    import inspect

    from mindspore import nn as ms_nn

    from ms_lint.analysis.framework import STATELESS_LAYERS

    built = 0
    for name in sorted(STATELESS_LAYERS):
        layer_class = getattr(ms_nn, name, None)
        if layer_class is None:
            continue  # a name of `mint.nn` or MindTorch (`Hardsigmoid`)
        assert inspect.isclass(layer_class) and issubclass(layer_class, ms_nn.Cell), name
        try:
            layer = layer_class()
        except (TypeError, ValueError):
            continue  # needs arguments: measured elsewhere (Range, Pad, Unflatten...)
        built += 1
        assert not [p for p in layer.get_parameters() if p.requires_grad], name
    assert built > 60


@pytest.mark.parametrize("mode", ["lax", "pynative"])
def test_msl006_a_new_dropout_switched_by_its_own_set_train_drops_in_pynative_only(oracle, mode):
    """mRASP2 (issue 19's eighth sample): `drop = nn.Dropout(...)`, `drop.set_train()` in construct."""
    cells = oracle.load(CELLS)
    x = oracle.tensor(np.ones((20, 10), np.float32))
    outcome = oracle.call(mode, cells.InlineDropoutSwitched(), x)
    assert outcome.ok, outcome.error
    zeroed = int((outcome.value.asnumpy() == 0).sum())
    assert (zeroed > 0) == (mode == "pynative"), zeroed
