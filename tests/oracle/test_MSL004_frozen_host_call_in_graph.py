"""MSL004: random/time/env/file reads in construct are evaluated once at compile time; `ops.rand` re-samples."""
from __future__ import annotations

import os
import time

import pytest

CELLS = """
import os
import random
import time
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor

class PyRandom(nn.Cell):
    def construct(self, x):
        return x * random.random()

class NpRandom(nn.Cell):
    def construct(self, x):
        return x + Tensor(np.random.rand(3), ms.float32)

class Clock(nn.Cell):
    def __init__(self):
        super().__init__()
        self.start = time.time()

    def construct(self, x):
        return x * (time.time() - self.start)

class Env(nn.Cell):
    def construct(self, x):
        return x * float(os.getenv("MSL004_LEVEL", "1"))

class EnvItem(nn.Cell):
    def construct(self, x):
        return x * float(os.environ["MSL004_LEVEL"])

class File(nn.Cell):
    def __init__(self, path):
        super().__init__()
        self.path = path

    def construct(self, x):
        return x * float(open(self.path).read())

class WithOpen(File):
    def construct(self, x):
        with open(self.path) as handle:
            value = float(handle.read())
        return x * value

class Fixed(nn.Cell):
    def construct(self, x):
        return x + ops.rand((3,), dtype=ms.float32)

class OtherSamplers(nn.Cell):
    def construct(self, x):
        low, high = Tensor(0.0, ms.float32), Tensor(1.0, ms.float32)
        return x + ops.uniform((3,), low, high) + ops.standard_normal((3,))

class Graph:
    num_nodes = 1000

def subgraph(data):
    return Tensor(np.random.randint(0, data.num_nodes, (1,)), ms.int32)

class Subgraph(nn.Cell):
    def construct(self, data, x):
        return subgraph(data) + x

class FixedScalar(nn.Cell):
    def construct(self, x):
        if ops.rand(()) < 0.5:
            x = x * 2
        return x + ops.randn(x.shape, dtype=ms.float32)
"""


def _two_calls(oracle, mode, net, x, between):
    def run():
        first = net(x).asnumpy().tolist()
        between(2)
        return first, net(x).asnumpy().tolist()

    outcome = oracle.call(mode, run)
    assert outcome.ok, outcome.error
    return outcome.value


@pytest.fixture
def cells(oracle, tmp_path):
    module = oracle.load(CELLS)
    path = tmp_path / "level.txt"

    def between(value):
        time.sleep(0.05)
        os.environ["MSL004_LEVEL"] = str(value)
        path.write_text(str(value))

    def nets():
        return [module.PyRandom(), module.NpRandom(), module.Clock(), module.Env(), module.EnvItem(),
                module.File(str(path))]

    between(1)
    yield module, nets, between
    os.environ.pop("MSL004_LEVEL", None)


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl004_host_reads_are_frozen_at_compile_time_in_graph_mode(oracle, cells, mode):
    _, nets, between = cells
    x = oracle.tensor([1.0, 2.0, 3.0])
    for net in nets():
        between(1)
        first, second = _two_calls(oracle, mode, net, x, between)
        assert first == second, f"{type(net).__name__} changed between calls under {mode}"


def test_msl004_pynative_re_evaluates_every_call(oracle, cells):
    _, nets, between = cells
    x = oracle.tensor([1.0, 2.0, 3.0])
    for net in nets():
        between(1)
        first, second = _two_calls(oracle, "pynative", net, x, between)
        assert first != second, f"{type(net).__name__} did not change in PyNative"


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl004_graph_samplers_and_the_ops_fix_re_sample_every_call(oracle, cells, mode):
    module, _, between = cells
    x = oracle.tensor([1.0, 2.0, 3.0])
    for net in (module.Fixed(), module.FixedScalar(), module.OtherSamplers()):
        first, second = _two_calls(oracle, mode, net, x, between)
        assert first != second


def test_msl004_open_as_a_context_manager_fails_to_compile(oracle, cells, tmp_path):
    module, _, _ = cells
    outcome = oracle.compile("lax", module.WithOpen(str(tmp_path / "level.txt")), oracle.tensor([1.0, 2.0, 3.0]))
    assert not outcome.ok and outcome.error_type == "TypeError"
    assert "issubclass() arg 1 must be a class" in outcome.message


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl004_a_draw_on_an_object_passed_in_is_frozen_per_object(oracle, cells, mode):
    """CMMS-GCL (issue 19's seventeenth sample): `np.random.randint(0, data.num_nodes, ...)` with `data` a plain
    object passed to `construct`: 2.10 compiles again, and draws again, for each new object; the same object
    keeps one draw. MSL004 says so at warning level."""
    module, _, _ = cells
    x = oracle.tensor([0.0])
    net = module.Subgraph()

    def draws(same):
        shared = module.Graph()
        return [float(net(shared if same else module.Graph(), x).asnumpy()[0]) for _ in range(4)]

    fresh = oracle.call(mode, lambda: draws(False))
    kept = oracle.call(mode, lambda: draws(True))
    assert fresh.ok and kept.ok, (fresh.error, kept.error)
    assert len(set(fresh.value)) > 1 and len(set(kept.value)) == 1, (fresh.value, kept.value)
