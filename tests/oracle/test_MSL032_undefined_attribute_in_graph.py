"""MSL032: reading an attribute the Cell never assigns fails to compile; the renamed attribute compiles."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn

class Typo(nn.Cell):
    def __init__(self):
        super().__init__()
        self.pose_net = nn.Dense(2, 2)

    def construct(self, x):
        return self.poss_net(x)

class Renamed(Typo):
    def construct(self, x):
        return self.pose_net(x)

class HasattrGuard(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 2)

    def construct(self, x):
        if hasattr(self, "extra"):
            x = self.extra(x)
        return self.dense(x)

class FlagGuard(nn.Cell):
    def __init__(self, enabled):
        super().__init__()
        self.enabled = enabled

    def construct(self, x):
        if self.enabled:
            x = self.add_label(x, 0)
        return x * 2

class ShortCircuitGuard(nn.Cell):
    def __init__(self, use_past):
        super().__init__()
        self.use_past = use_past

    def construct(self, x):
        if not self.use_past or (self.use_past and self.is_first_iteration):
            return x + 1
        return x
"""


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl032_typo_attribute_fails_to_compile_and_the_rename_compiles(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([[1.0, 2.0]])
    outcome = oracle.compile(mode, cells.Typo(), x)
    assert not outcome.ok and outcome.error_type == "AttributeError"
    assert "object has no attribute 'poss_net'" in outcome.message
    assert oracle.compile(mode, cells.Renamed(), x).ok


def test_msl032_pynative_fails_at_the_call(oracle):
    cells = oracle.load(CELLS)
    outcome = oracle.call("pynative", cells.Typo(), oracle.tensor([[1.0, 2.0]]))
    assert not outcome.ok and outcome.error_type == "AttributeError"
    assert "The 'Typo' object has no attribute 'poss_net'" in outcome.message


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl032_reads_in_branches_folded_at_compile_time_are_not_compiled(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([[1.0, 2.0]])
    assert oracle.call(mode, cells.HasattrGuard(), x).ok
    assert oracle.call(mode, cells.FlagGuard(False), x).ok
    enabled = oracle.compile(mode, cells.FlagGuard(True), x)
    assert not enabled.ok and "no attribute 'add_label'" in enabled.message


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl032_a_read_behind_a_short_circuit_on_a_flag_is_folded_too(oracle, mode):
    """mindformers' `not self.use_past or (self.use_past and self.is_first_iteration)` (issue 19)."""
    cells = oracle.load(CELLS)
    x = oracle.tensor([[1.0, 2.0]])
    assert oracle.call(mode, cells.ShortCircuitGuard(False), x).ok
    flagged = cells.ShortCircuitGuard(True)
    assert not oracle.compile(mode, flagged, x).ok
    flagged.add_flags_recursive(is_first_iteration=True)
    assert oracle.call(mode, flagged, x).ok


FLASH = """
from mindspore import nn


class Attention(nn.Cell):
    def __init__(self):
        super().__init__()
        self.num_attention_heads = 2

    def construct(self, x):
        return x * self.num_attention_heads


class FlashAttention(Attention):
    def __init__(self):
        super().__init__()
        self.heads = self.num_heads
"""


def test_msl032_a_read_in_init_of_a_name_never_set_fails_building_the_cell(oracle):
    """mindone's `GPTJFlashAttention2` reads `self.num_heads`, which its base calls `num_attention_heads`."""
    cells = oracle.load(FLASH)
    outcome = oracle.call("pynative", cells.FlashAttention)
    assert not outcome.ok and outcome.error_type == "AttributeError" and "num_heads" in outcome.message, \
        outcome.message
    assert oracle.call("pynative", cells.Attention).ok
