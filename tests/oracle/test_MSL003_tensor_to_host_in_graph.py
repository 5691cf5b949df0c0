"""MSL003: `.asnumpy()`, `.numpy()`, `.tolist()` in construct run through JIT Fallback at LAX, fail under STRICT."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn, Tensor

class AsNumpy(nn.Cell):
    def construct(self, x):
        return Tensor(x.asnumpy() * 2)

class Numpy(nn.Cell):
    def construct(self, x):
        return Tensor(x.numpy() * 2)

class ToList(nn.Cell):
    def construct(self, x):
        return x.tolist()

class Scalars(nn.Cell):
    def construct(self, x):
        return x[0].item() + int(x[0]) + float(x.sum())
"""


def _plain(value):
    return value.asnumpy().tolist() if hasattr(value, "asnumpy") else value


def test_msl003_host_copies_run_under_lax_like_pynative(oracle):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0, 3.0])
    for cell in (cells.AsNumpy, cells.Numpy, cells.ToList):
        lax = oracle.call("lax", cell(), x)
        pynative = oracle.call("pynative", cell(), x)
        assert lax.ok and pynative.ok, lax.error
        assert _plain(lax.value) == _plain(pynative.value)


@pytest.mark.parametrize("cell_name, attribute", [("AsNumpy", "asnumpy"), ("Numpy", "numpy"), ("ToList", "asnumpy")])
def test_msl003_host_copies_fail_to_compile_under_strict(oracle, cell_name, attribute):
    cells = oracle.load(CELLS)
    outcome = oracle.compile("strict", getattr(cells, cell_name)(), oracle.tensor([1.0, 2.0, 3.0]))
    assert not outcome.ok and outcome.error_type == "AttributeError"
    assert f"cannot get attributes {attribute}" in outcome.message


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl003_item_int_and_float_compile_at_both_levels(oracle, mode):
    cells = oracle.load(CELLS)
    outcome = oracle.call(mode, cells.Scalars(), oracle.tensor([1.0, 2.0, 3.0]))
    assert outcome.ok, outcome.error
    assert outcome.value == pytest.approx(8.0)
