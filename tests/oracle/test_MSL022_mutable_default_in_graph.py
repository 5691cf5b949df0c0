"""MSL022: graph mode and PyNative disagree on mutable defaults; the fix makes them agree."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn

class ListDefault(nn.Cell):
    def construct(self, x, acc=[]):
        acc.append(1)
        return x * len(acc)

class DictDefault(nn.Cell):
    def construct(self, x, cache={}):
        cache["n"] = cache.get("n", 0) + 1
        return x * cache["n"]

class OnlyRead(nn.Cell):
    def construct(self, x, scales=[1.0, 2.0], table={"a": 1}):
        y = x * scales[0] * len(scales) * table.get("a", 1)
        for scale in scales:
            y = y + scale
        return y

class Fixed(nn.Cell):
    def construct(self, x, acc=None):
        if acc is None:
            acc = []
        acc.append(1)
        return x * len(acc)
"""


def _two_calls(oracle, mode, net):
    x = oracle.tensor([1.0, 2.0])
    outcomes = [oracle.call(mode, net, x) for _ in range(2)]
    assert all(o.ok for o in outcomes), [o.message for o in outcomes]
    return [o.value.asnumpy().tolist() for o in outcomes]


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl022_graph_freezes_the_default_while_pynative_shares_it(oracle, mode):
    cells = oracle.load(CELLS)
    for cell in (cells.ListDefault, cells.DictDefault):
        assert _two_calls(oracle, mode, cell()) == [[1.0, 2.0], [1.0, 2.0]]
        assert _two_calls(oracle, "pynative", cell()) == [[1.0, 2.0], [2.0, 4.0]]


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl022_fixed_form_agrees_in_every_mode(oracle, mode):
    cells = oracle.load(CELLS)
    assert _two_calls(oracle, mode, cells.Fixed()) == [[1.0, 2.0], [1.0, 2.0]]


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_msl022_a_default_only_read_gives_the_same_results_in_every_mode(oracle, mode):
    """Why MSL022 stays silent on defaults a function never changes (issue 19): nothing to freeze or share."""
    cells = oracle.load(CELLS)
    assert _two_calls(oracle, mode, cells.OnlyRead()) == [[5.0, 7.0], [5.0, 7.0]]
