"""MSL068: PyTorch's two-axis transpose and expand(*sizes) fail (or silently differ) in GRAPH_MODE only."""
from __future__ import annotations

import numpy as np
import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, construct body, input shape, the compiler's message, or "unchanged" for the silent 2-D no-op)
CASES = [
    ("Transpose3d", "return x.transpose(1, 2)", (2, 3, 4), "the number of axes must be equal to the dimension"),
    ("Transpose2dNoOp", "return x.transpose(0, 1)", (2, 3), "unchanged"),
    ("ExpandInts", "return x.expand(2, 3, 4)", (1, 3, 4), "The parameters number of the function is 2"),
    ("ExpandTuple", "return x.expand((2, 3, 4))", (1, 3, 4), "GetShapeVector()"),
]
TEMPLATE = """
import mindspore as ms
from mindspore import nn

ms.set_context(mode=ms.GRAPH_MODE)


class {name}(nn.Cell):
    def construct(self, x):
        {body}
"""


def _input(oracle, shape):
    return oracle.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))


@pytest.mark.parametrize("name, body, shape, failure", CASES, ids=[case[0] for case in CASES])
def test_msl068_graph_mode_rejects_or_ignores_what_pynative_runs(oracle, name, body, shape, failure):
    source = TEMPLATE.format(name=name, body=body)
    x = _input(oracle, shape)
    eager = oracle.call("pynative", getattr(oracle.load(source), name)(), x)
    assert eager.ok, eager.message
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        if failure == "unchanged":
            assert outcome.ok and outcome.value.shape == x.shape != eager.value.shape, (mode, outcome.message)
        else:
            assert not outcome.ok and failure in outcome.message, (mode, outcome.message)
    assert [d.severity for d in _lint(source)] == ["error"]
    fixed = source.replace(body, body.replace("transpose", "swapaxes").replace(
        "expand(2, 3, 4)", "broadcast_to((2, 3, 4))").replace("expand((2, 3, 4))", "broadcast_to((2, 3, 4))"))
    assert fixed != source
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(fixed), name)(), x)
        assert outcome.ok and outcome.value.asnumpy().tolist() == eager.value.asnumpy().tolist(), mode


def test_msl068_is_silent_where_nothing_selects_graph_mode():
    """A PyNative project runs PyTorch's forms as PyTorch does: nothing to report there."""
    source = TEMPLATE.format(name="Plain", body="return x.transpose(1, 2)").replace(
        "ms.set_context(mode=ms.GRAPH_MODE)\n", "")
    assert _lint(source) == []


def _lint(source: str):
    """MSL068 is a project rule: lint the module, then judge its facts."""
    linter = Linter(Settings(select=("MSL068",)))
    result = linter.lint_source(SourceFile(path="cell.py", text=source, module_name="cell"))
    return result.diagnostics + linter.judge([result])
