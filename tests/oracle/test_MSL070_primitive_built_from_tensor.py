"""MSL070: a primitive built from tensor data fails to compile in graph mode; built from constants, it runs."""
from __future__ import annotations

import numpy as np
import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, construct body over q, k (2x3x3), an image x, conv weights w and scale (a 0-d tensor), fails to compile).
# A bare argument is not claimed (a `@jit` function's argument may be a Python int, which compiles as a constant):
# the rule reports tensor data the function computes, or host data read from a tensor.
CASES = [
    ("PrimitiveOfTensors", "q, k = ops.relu(q), ops.relu(k)\n"
                           "        return ops.softmax(ops.BatchMatMul(q, k), -1)", True),
    ("SettingFromValue", "width = int(8 * scale.asnumpy().item())\n"
                         "        return ops.Conv2D(out_channel=width, kernel_size=3)(x, w)", True),
    ("SettingIsTensor", "return ops.ReduceSum(keep_dims=ops.relu(scale) > 0)(q, 1)", True),
    ("ConstantConv", "return ops.Conv2D(out_channel=8, kernel_size=3)(x, w)", False),
    ("Called", "return ops.softmax(ops.BatchMatMul()(q, k), -1)", False),
    ("ConstantSetting", "return ops.ReduceSum(keep_dims=True)(q, 1)", False),
    ("StaticShape", "return ops.BroadcastTo(q.shape)(k)", False),
]
TEMPLATE = """
import mindspore as ms
from mindspore import nn, ops


class {name}(nn.Cell):
    def construct(self, q, k, x, w, scale):
        {body}
"""


@pytest.mark.parametrize("name, body, fails", CASES, ids=[case[0] for case in CASES])
def test_msl070_fires_exactly_where_graph_mode_fails(oracle, name, body, fails):
    source = TEMPLATE.format(name=name, body=body)
    q, scale = oracle.tensor(np.ones((2, 3, 3))), oracle.tensor(1.0)
    x, w = oracle.tensor(np.ones((1, 4, 6, 6))), oracle.tensor(np.ones((8, 4, 3, 3)))
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), q, q, x, w, scale)
        assert outcome.ok is not fails, (mode, outcome.message)
    linted = Linter(Settings(select=("MSL070",))).lint_source(SourceFile(path="cell.py", text=source,
                                                                         module_name="cell"))
    assert [d.code for d in linted.diagnostics] == (["MSL070"] if fails else [])
