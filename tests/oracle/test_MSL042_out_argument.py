"""MSL042: `mindspore.mint` 2.10 takes no `out=` (MindTorch is not installed: its behaviour is not run here)."""
from __future__ import annotations

import inspect

import pytest

CELLS = """
from mindspore import mint, nn, ops

class AddOut(nn.Cell):
    def construct(self, x):
        y = ops.zeros_like(x)
        mint.add(x, x, out=y)
        return y

class SumOut(nn.Cell):
    def construct(self, x):
        y = ops.zeros_like(x)
        mint.sum(x, out=y)
        return y

class Fixed(nn.Cell):
    def construct(self, x):
        y = mint.add(x, x)
        return y
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl042_mint_rejects_out_in_every_mode(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0])
    add = oracle.call(mode, cells.AddOut(), x)
    assert not add.ok and add.error_type == "TypeError"
    assert 'Failed calling add with "add(Tensor, Tensor, out=Tensor)"' in add.message
    summed = oracle.call(mode, cells.SumOut(), x)
    # PyNative: TypeError "sum() got an unexpected keyword argument 'out'"; graph: RuntimeError, same words
    assert not summed.ok and summed.error_type in ("TypeError", "RuntimeError")
    assert "unexpected keyword argument 'out'" in summed.message
    fixed = oracle.call(mode, cells.Fixed(), x)
    assert fixed.ok and fixed.value.asnumpy().tolist() == [2.0, 4.0]


def test_msl042_no_mint_function_declares_out():
    from mindspore import mint

    declared = []
    for name in dir(mint):
        function = getattr(mint, name)
        if callable(function) and not isinstance(function, type):
            try:
                parameters = inspect.signature(function).parameters
            except (TypeError, ValueError):
                continue
            if "out" in parameters:
                declared.append(name)
    assert declared == []
