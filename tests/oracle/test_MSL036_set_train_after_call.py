"""MSL036: `set_train(True)` after a first graph-mode call silently keeps the inference graph."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(2)

    def construct(self, x):
        return self.bn(x)

class Wrapper(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def construct(self, x):
        return self.net(x) * 1
"""
EVAL_OUTPUT = [1.0, 2.0]  # a new BatchNorm in inference mode: identity on the first row
TRAIN_OUTPUT = [-1.0, -1.0]  # batch-normalised


def run(oracle, mode, sequence):
    """Apply `sequence` ("call", True, False) to a new Net; first-row outputs and the final moving mean."""
    cells = oracle.load(CELLS)
    net, x, outputs = cells.Net(), oracle.tensor([[1.0, 2.0], [2.0, 6.0]]), []

    def steps():
        for step in sequence:
            if step == "call":
                outputs.append([round(v, 3) for v in net(x).asnumpy()[0].tolist()])
            else:
                net.set_train(step)
        return [round(v, 3) for v in net.bn.moving_mean.asnumpy().tolist()]

    outcome = oracle.call(mode, steps)
    assert outcome.ok, outcome.error
    return outputs, outcome.value


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl036_set_train_after_the_first_call_keeps_the_inference_graph(oracle, mode):
    assert run(oracle, mode, ["call", True, "call"]) == ([EVAL_OUTPUT, EVAL_OUTPUT], [0.0, 0.0])
    stale = run(oracle, mode, ["call", False, "call", True, "call"])
    assert stale == ([EVAL_OUTPUT] * 3, [0.0, 0.0])


def test_msl036_pynative_switches(oracle):
    assert run(oracle, "pynative", ["call", True, "call"]) == ([EVAL_OUTPUT, TRAIN_OUTPUT], [0.15, 0.4])


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl036_set_train_before_the_first_call_works_and_can_switch_later(oracle, mode):
    assert run(oracle, mode, [True, "call"]) == ([TRAIN_OUTPUT], [0.15, 0.4])
    outputs, _ = run(oracle, mode, [True, "call", False, "call", True, "call"])
    assert outputs[0] == TRAIN_OUTPUT and outputs[1] != TRAIN_OUTPUT and outputs[2] == TRAIN_OUTPUT


def test_pynative_is_the_default_mode():
    """Why MSL036 needs a module that selects GRAPH_MODE (issue 19): without set_context(mode=...), MindSpore 2.10
    runs PyNative, where set_train after a call switches correctly (measured above)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import mindspore as ms; print(ms.get_context('mode'))"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "1"  # ms.PYNATIVE_MODE


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl036_a_wrapper_called_after_set_train_compiles_in_training_mode(oracle, mode):
    """cambrian's test (issue 19's third sample): the net ran once, then `set_train()`, then a wrapper Cell built
    from it is called: the wrapper's own graph is compiled in training mode, the BatchNorm updates."""
    cells = oracle.load(CELLS)
    net, x = cells.Net(), oracle.tensor([[1.0, 2.0], [2.0, 6.0]])
    wrapper = cells.Wrapper(net)

    def steps():
        net(x)
        net.set_train()
        wrapper.set_train()
        first = [round(v, 3) for v in wrapper(x).asnumpy()[0].tolist()]
        return first, [round(v, 3) for v in net.bn.moving_mean.asnumpy().tolist()]

    outcome = oracle.call(mode, steps)
    assert outcome.ok, outcome.error
    assert outcome.value == (TRAIN_OUTPUT, [0.15, 0.4])
