"""MSL071: a tensor made from NumPy's float64 data turns a float32 network's results float64, and the next
Conv2D/MatMul/Dense raises; with a dtype, from `mindspore.numpy` or from Python floats it stays float32."""
from __future__ import annotations

import numpy as np
import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, the statement of __init__ that builds `self.extra`, how construct uses it, the outcome in both modes:
# "raises" (TypeError), "float64" (runs, float64 result) or "float32" (runs, float32 result))
CASES = [
    ("ConvWeight", "a = np.array([1., 2., 1.])\n        self.extra = ms.Tensor(np.tile(a[:, None] * a[None, :], "
                   "(4, 1, 1, 1)))", "return ops.conv2d(x, self.extra, groups=4)", "raises"),
    ("BeforeDense", "self.extra = Parameter(Tensor(np.ones((1, 4, 1, 1))), requires_grad=False)",
                    "return self.dense((x * self.extra).mean((2, 3)))", "raises"),
    ("NoiseBeforeConv", "self.extra = Tensor(np.random.uniform(0.99, 1.01, (1, 4, 1, 1)))",
                        "return self.conv(x * self.extra)", "raises"),
    ("OutputOnly", "self.extra = Tensor(np.full((1, 4, 1, 1), 0.5))", "return self.conv(x) * self.extra", "float64"),
    ("Given", "self.extra = Tensor(np.ones((1, 4, 1, 1)), ms.float32)", "return self.conv(x * self.extra)",
              "float32"),
    ("MindSporeNumpy", "self.extra = Tensor(mnp.ones((1, 4, 1, 1)))", "return self.conv(x * self.extra)", "float32"),
    ("PythonFloats", "self.extra = Tensor([[[[0.5]], [[0.5]], [[0.5]], [[0.5]]]])", "return self.conv(x * self.extra)",
                     "float32"),
    ("CastOnRead", "self.extra = Tensor(np.ones((1, 4, 1, 1)))", "return self.conv(x * self.extra.astype(x.dtype))",
                   "float32"),
]
TEMPLATE = """
import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore import numpy as mnp


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3)
        self.dense = nn.Dense(4, 2)
        {build}

    def construct(self, x):
        {use}
"""


@pytest.mark.parametrize("name, build, use, outcome", CASES, ids=[case[0] for case in CASES])
def test_msl071_fires_where_float64_data_enters_the_network(oracle, name, build, use, outcome):
    source = TEMPLATE.format(name=name, build=build, use=use)
    x = oracle.tensor(np.ones((1, 4, 6, 6)))
    for mode in ("lax", "pynative"):
        result = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        if outcome == "raises":
            assert not result.ok and result.error_type == "TypeError", (mode, result.message)
            assert "type" in result.message, (mode, result.message)
        else:
            assert result.ok, (mode, result.message)
            assert str(result.value.dtype) == outcome.capitalize(), (mode, result.value.dtype)
    linted = Linter(Settings(select=("MSL071",))).lint_source(SourceFile(path="cell.py", text=source,
                                                                         module_name="cell"))
    assert [d.code for d in linted.diagnostics] == ([] if outcome == "float32" else ["MSL071"])


def test_a_float32_checkpoint_keeps_a_float64_parameter_float64(oracle, tmp_path):
    """Loading weights does not repair the dtype: the Parameter stays float64 and the MatMul still raises."""
    module = oracle.load(TEMPLATE.format(name="Loaded", build="self.extra = Parameter(Tensor(np.ones((4, 2))), "
                                                              "name='extra')",
                                         use="return ops.matmul(x.mean((2, 3)), self.extra)"))
    import mindspore as ms

    cell = module.Loaded()
    checkpoint = str(tmp_path / "extra.ckpt")
    ms.save_checkpoint([{"name": "extra", "data": ms.Tensor(np.ones((4, 2), np.float32))}], checkpoint)
    ms.load_param_into_net(cell, ms.load_checkpoint(checkpoint))
    assert str(cell.extra.dtype) == "Float64"
    result = oracle.call("lax", cell, oracle.tensor(np.ones((1, 4, 6, 6))))
    assert not result.ok and result.error_type == "TypeError", result.message
