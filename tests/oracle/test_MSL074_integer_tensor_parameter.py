"""MSL074: a Parameter of Tensor(integer literals) is int64; the forward pass runs, the optimizer rejects it."""
from __future__ import annotations

import numpy as np
import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, how `self.rate` is built, dtype, an optimizer over trainable_params() trains)
CASES = [
    ("Scalar", "ms.Parameter(ms.Tensor(1))", "Int64", False),
    ("List", "Parameter(Tensor([0, 0, 0, 0]))", "Int64", False),
    ("Given", "Parameter(Tensor(1, ms.float32))", "Float32", True),
    ("Floats", "Parameter(Tensor([0.5]))", "Float32", True),
    ("Frozen", "Parameter(Tensor(1), requires_grad=False)", "Int64", True),
]
TEMPLATE = """
import mindspore as ms
from mindspore import Parameter, Tensor, nn


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        self.rate = {build}
        self.dense = nn.Dense(4, 4)

    def construct(self, x):
        return self.dense(x) * self.rate
"""


def _train_step(ms, nn, cell, x):
    optimizer = nn.SGD(cell.trainable_params(), 0.1)

    def loss(data):
        return cell(data).sum()

    grad_fn = ms.value_and_grad(loss, None, optimizer.parameters)
    _, grads = grad_fn(x)
    return optimizer(grads)


@pytest.mark.parametrize("name, build, dtype, trains", CASES, ids=[case[0] for case in CASES])
def test_msl074_fires_where_the_optimizer_rejects_the_parameter(oracle, name, build, dtype, trains):
    import mindspore as ms
    from mindspore import nn

    source = TEMPLATE.format(name=name, build=build)
    cell = getattr(oracle.load(source), name)()
    x = oracle.tensor(np.ones((2, 4)))
    assert str(cell.rate.dtype) == dtype
    for mode in ("lax", "pynative"):
        assert oracle.call(mode, cell, x).ok  # the forward pass runs either way
        outcome = oracle.call(mode, _train_step, ms, nn, cell, x)
        assert outcome.ok is trains, (mode, outcome.message)
        if not trains:
            assert outcome.error_type == "TypeError" and "Float32" in outcome.message, outcome.message
    linted = Linter(Settings(select=("MSL074",))).lint_source(SourceFile(path="cell.py", text=source,
                                                                         module_name="cell"))
    assert [d.code for d in linted.diagnostics] == ([] if trains else ["MSL074"])
