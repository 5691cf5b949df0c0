"""MSL024: formatting a tensor inside `print` works at LAX and breaks under STRICT; the fixed form works."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn

class FString(nn.Cell):
    def construct(self, x):
        print(f"x={x}")
        return x

class ItemFString(nn.Cell):
    def construct(self, x):
        print(f"s={x.sum().item()}")
        return x

class Format(nn.Cell):
    def construct(self, x):
        print("x={}".format(x))
        return x

class Percent(nn.Cell):
    def construct(self, x):
        print("x=%s" % x)
        return x

class Fixed(nn.Cell):
    def construct(self, x):
        print("x=", x)
        return x
"""


def test_msl024_lax_formats_on_the_host(oracle, capfd):
    cells = oracle.load(CELLS)
    for cell in (cells.FString, cells.Format, cells.Percent):
        assert oracle.call("lax", cell(), oracle.tensor([1.0, 2.0, 3.0])).ok
        assert "x=[1. 2. 3.]" in capfd.readouterr().out


def test_msl024_strict_fstring_prints_a_placeholder(oracle, capfd):
    cells = oracle.load(CELLS)
    for cell in (cells.FString, cells.ItemFString):
        outcome = oracle.call("strict", cell(), oracle.tensor([1.0, 2.0, 3.0]))
        assert outcome.ok
        printed = capfd.readouterr().out
        # a one-element Int64 tensor holding whatever was in memory (measured: 0, or a large random number)
        assert "Tensor(shape=[1], dtype=Int64, value=[" in printed and "[1. 2. 3.]" not in printed


def test_msl024_strict_format_and_percent_fail_to_compile(oracle):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0, 3.0])
    formatted = oracle.compile("strict", cells.Format(), x)
    assert not formatted.ok and formatted.error_type == "RuntimeError"
    assert "Unsupported op [Format] on CPU" in formatted.message
    percent = oracle.compile("strict", cells.Percent(), x)
    assert not percent.ok and percent.error_type == "ValueError" and "should be constant" in percent.message


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl024_fixed_print_shows_the_value(oracle, capfd, mode):
    cells = oracle.load(CELLS)
    assert oracle.call(mode, cells.Fixed(), oracle.tensor([1.0, 2.0, 3.0])).ok
    printed = capfd.readouterr().out
    assert "x=" in printed and "value=[ 1.00000000e+00  2.00000000e+00  3.00000000e+00]" in printed
