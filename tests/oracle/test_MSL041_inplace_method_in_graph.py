"""MSL041: in-place tensor methods differ between graph mode and PyNative; the out-of-place fix agrees."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn

class AddInplace(nn.Cell):
    def construct(self, x):
        x.add_(1)
        return x

class SubInplace(nn.Cell):
    def construct(self, x):
        x.sub_(1)
        return x

class ClampInplace(nn.Cell):
    def construct(self, x):
        x.clamp_(0, 1)
        return x

class FillInplace(nn.Cell):
    def construct(self, x):
        x.fill_(3.0)
        return x

class CopyInto(nn.Cell):
    def construct(self, x, y):
        x.copy_(y)
        return x * 1

class AddFixed(nn.Cell):
    def construct(self, x):
        x = x.add(1)
        return x

class SubFixed(nn.Cell):
    def construct(self, x):
        x = x.sub(1)
        return x

class ClampFixed(nn.Cell):
    def construct(self, x):
        x = x.clamp(0, 1)
        return x

class OnATemporary(nn.Cell):
    def construct(self, x):
        return (x * 1).add_(1), (x * 1).sub_(1), (x * 1).mul_(2), (x * 1).div_(2)

class ExpOnATemporary(nn.Cell):
    def construct(self, x):
        return (x * 1).exp_()
"""


def _run(oracle, mode, cell):
    """(outcome holding the returned values, the caller's tensor afterwards); PyNative kernels fail lazily,
    so the result is read inside the call."""
    x = oracle.tensor([0.5, 2.0])
    outcome = oracle.call(mode, lambda t: cell(t).asnumpy().tolist(), x)
    return outcome, x.asnumpy().tolist()


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl041_graph_add_mutates_the_callers_tensor_and_sub_does_nothing(oracle, mode):
    cells = oracle.load(CELLS)
    added, caller = _run(oracle, mode, cells.AddInplace())
    assert added.value == [1.5, 3.0] and caller == [1.5, 3.0]
    subtracted, caller = _run(oracle, mode, cells.SubInplace())
    assert subtracted.value == [0.5, 2.0] and caller == [0.5, 2.0]  # silently a no-op


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl041_graph_clamp_and_fill_have_no_cpu_kernel(oracle, mode):
    cells = oracle.load(CELLS)
    for cell, kernel in ((cells.ClampInplace(), "InplaceClampScalar"), (cells.FillInplace(), "InplaceFillScalar")):
        outcome, _ = _run(oracle, mode, cell)
        assert not outcome.ok and outcome.error_type == "RuntimeError"
        assert f"Unsupported op [{kernel}] on CPU" in outcome.message


def test_msl041_pynative_cpu_does_not_mutate(oracle):
    cells = oracle.load(CELLS)
    added, caller = _run(oracle, "pynative", cells.AddInplace())
    assert added.value == [0.5, 2.0] and caller == [0.5, 2.0]
    clamped, _ = _run(oracle, "pynative", cells.ClampInplace())
    assert not clamped.ok and "The kernel InplaceClampScalar unregistered" in clamped.message


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl041_out_of_place_fix_agrees_in_every_mode(oracle, mode):
    cells = oracle.load(CELLS)
    for cell, expected in ((cells.AddFixed(), [1.5, 3.0]), (cells.SubFixed(), [-0.5, 1.0]),
                           (cells.ClampFixed(), [0.5, 1.0])):
        outcome, caller = _run(oracle, mode, cell)
        assert outcome.ok and outcome.value == expected
        assert caller == [0.5, 2.0]  # the caller's tensor is left alone


@pytest.mark.parametrize("mode", ["lax", "pynative"])
def test_msl041_copy_writes_the_callers_tensor_in_both_modes(oracle, mode):
    """The one in-place method measured to agree (issue 19's second sample): not reported."""
    cells = oracle.load(CELLS)
    x, y = oracle.tensor([0.25, 0.25]), oracle.tensor([1.0, 1.0])
    outcome = oracle.call(mode, cells.CopyInto(), x, y)
    assert outcome.ok, outcome.message
    assert outcome.value.asnumpy().tolist() == x.asnumpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl041_a_temporarys_result_is_the_same_in_every_mode(oracle, mode):
    """`eps.mul(std).add_(mu)` (HOOD, issue 19's third sample): not reported; `exp_` compiles in PyNative only."""
    cells = oracle.load(CELLS)
    x = oracle.tensor([0.5, 2.0])
    outcome = oracle.call(mode, lambda t: [y.asnumpy().tolist() for y in cells.OnATemporary()(t)], x)
    assert outcome.ok, outcome.message
    assert outcome.value == [[1.5, 3.0], [-0.5, 1.0], [1.0, 4.0], [0.25, 1.0]]
    assert x.asnumpy().tolist() == [0.5, 2.0]
    exp, _ = _run(oracle, mode, cells.ExpOnATemporary())
    assert exp.ok is (mode == "pynative")
