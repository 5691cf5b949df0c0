"""MSL069: the Tensor method signatures it checks are the wheel's, and it fires exactly on the calls 2.10 rejects,
in PyNative (host code) and in GRAPH_MODE (construct); its renames run in both."""
from __future__ import annotations

import numpy as np
import pytest
from support import assert_generated_module_is_current

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (call on a float tensor `x` of shape (2, 1, 3), claimed in graph code, claimed in host code); a claim is "the
# call fails there", and the test measures both. `None`: the rule makes no claim (it stays silent).
CALLS = [
    ("x.squeeze(dim=1)", True, True),
    ("x.softmax(dim=-1)", True, True),
    ("x.norm(p=2, dim=1)", True, True),
    ("x.repeat(2, axis=0)", True, True),
    ("x.split(axis=0, output_num=2)", True, True),
    ("x.logsumexp(axis=0)", True, True),
    ("x.tile(multiples=(1, 2, 1))", True, True),
    ("x.repeat_interleave(2, axis=0)", True, True),
    ("x.prod(axis=0)", None, True),  # graph code may resolve `prod` to a function with `axis`: not claimed there
    ("x.transpose(axes=(1, 0, 2))", False, True),  # graph code takes `axes`; PyNative does not
    ("x.squeeze(axis=1)", False, False),
    ("x.softmax(axis=-1)", False, False),
    ("x.sum(axis=1, keepdims=True)", False, False),
    ("x.mean(dim=1, keepdim=True)", False, False),
    ("x.mean(axis=1, keep_dims=True)", False, False),
    ("x.view(3, 2, 1)", False, False),
    ("x.permute(1, 0, 2)", False, False),
    ("x.repeat_interleave(2, 0)", False, False),
]
# the fixes' renames: the fixed call runs in both modes
RENAMED = ["x.squeeze(axis=1)", "x.softmax(axis=-1)", "x.norm(ord=2, dim=1)", "x.logsumexp(dim=0)", "x.prod(dim=0)"]
GRAPH = """
import mindspore as ms
from mindspore import nn


class Probe(nn.Cell):
    def construct(self, x):
        return {call}
"""
HOST = """
import mindspore as ms
import numpy as np


def probe():
    x = ms.Tensor(np.ones((2, 1, 3), np.float32))
    return {call}
"""


def _fires(source: str) -> bool:
    result = Linter(Settings(select=("MSL069",))).lint_source(SourceFile(path="probe.py", text=source,
                                                                         module_name="probe"))
    return any(d.code == "MSL069" for d in result.diagnostics)


def test_msl069_signatures_are_those_of_the_installed_wheel():
    assert_generated_module_is_current("tensor_signatures")


@pytest.mark.parametrize("call, in_graph, in_host", CALLS, ids=[case[0] for case in CALLS])
def test_msl069_fires_exactly_where_the_call_fails(oracle, call, in_graph, in_host):
    x = oracle.tensor(np.ones((2, 1, 3)))
    graph = GRAPH.format(call=call)
    compiled = oracle.call("lax", oracle.load(graph).Probe(), x)
    if in_graph is not None:
        assert compiled.ok is not in_graph, compiled.message
    assert _fires(graph) is bool(in_graph)
    host = HOST.format(call=call)
    eager = oracle.call("pynative", oracle.load(host).probe)
    assert eager.ok is not in_host, eager.message
    if in_host:
        assert isinstance(eager.error, TypeError), eager.message
    assert _fires(host) is in_host


@pytest.mark.parametrize("call", RENAMED)
def test_msl069_renamed_keywords_run_in_both_modes(oracle, call):
    x = oracle.tensor(np.ones((2, 1, 3)))
    assert oracle.call("lax", oracle.load(GRAPH.format(call=call)).Probe(), x).ok
    assert oracle.call("pynative", oracle.load(HOST.format(call=call)).probe).ok


def test_msl069_positional_repeat_axis_is_read_as_counts_per_dimension(oracle):
    """`x.repeat(2, 0)`, the old NumPy-style `repeat(repeats, axis)`: 2.10 reads (2, 0) as PyTorch's counts per
    dimension, too few for a 3-D tensor (graph mode: ValueError; the CPU build has no PyNative `repeat` kernel to
    show the eager result), while `repeat_interleave(2, 0)`, the fix, is NumPy's `repeat` in both modes."""
    x = oracle.tensor(np.arange(6).reshape((2, 1, 3)))
    compiled = oracle.call("lax", oracle.load(GRAPH.format(call="x.repeat(2, 0)")).Probe(), x)
    assert not compiled.ok and "number of items of repeats" in compiled.message, compiled.message
    assert _fires(GRAPH.format(call="x.repeat(2, 0)")) and _fires(HOST.format(call="x.repeat(2, 0)"))
    assert not _fires(GRAPH.format(call="x.repeat(2, 1, 1)")) and not _fires(HOST.format(call="x.repeat(2, 1)"))
    fixed = GRAPH.format(call="x.repeat_interleave(2, 0)")
    for mode in ("lax", "pynative"):
        outcome = oracle.call(mode, oracle.load(fixed).Probe(), x)
        assert outcome.ok, (mode, outcome.message)
        assert np.array_equal(outcome.value.asnumpy(), np.arange(6).reshape((2, 1, 3)).repeat(2, 0))
