"""MSL067: the names and signatures it checks are the wheel's, and it fires exactly on the calls 2.10 cannot
construct."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
from mindspore import mint, nn, ops
from mindspore.ops import operations as P
from support import assert_generated_module_is_current

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (call, what 2.10 raises when it is evaluated, or None when it constructs)
CALLS = [
    ('nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, bias=False)', "unexpected keyword argument 'bias'"),
    ('nn.Conv2d(8, 8, 3, groups=8, pad_mode="same")', "unexpected keyword argument 'groups'"),
    ("nn.ReLU(inplace=True)", "unexpected keyword argument 'inplace'"),
    ("nn.LayerNorm((8,), eps=1e-6)", "unexpected keyword argument 'eps'"),
    ("nn.Softmax(dim=-1)", "unexpected keyword argument 'dim'"),
    ("nn.Embedding(num_embeddings=10, embedding_dim=8)", "unexpected keyword argument 'num_embeddings'"),
    ("nn.Sequential(nn.ReLU())", "has no attribute 'Sequential'"),
    ("nn.ModuleList([nn.ReLU()])", "has no attribute 'ModuleList'"),
    ("nn.Parameter(ms.Tensor(1.0))", "has no attribute 'Parameter'"),
    ("nn.Dense(8, 4, None, None, True, None, ms.float32, 1)", "positional argument"),
    ("nn.MaxPool2d(kernel_size=2, stride=2, count_include_pad=True)", "unexpected keyword argument"),
    ("nn.Dense(8)", "missing 1 required positional argument"),
    ('nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=False, group=1)', None),
    ("nn.ReLU()", None),
    ("nn.LayerNorm((8,), epsilon=1e-6)", None),
    ("nn.Softmax(axis=-1)", None),
    ("nn.Embedding(vocab_size=10, embedding_size=8, padding_idx=0)", None),
    ("nn.SequentialCell(nn.ReLU())", None),
    ("nn.CellList([nn.ReLU()])", None),
    ("nn.Dropout(p=0.1)", None),
    ("nn.BatchNorm2d(8, eps=1e-5, momentum=0.9)", None),
    ("nn.Linear(8, 4, bias=False)", None),
    ("mint.nn.Linear(8, 4, bias=False)", None),
    ("mint.nn.Conv2d(3, 8, 3, padding=1, bias=False)", None),
    ("nn.Identity(anything=1)", None),
    # `mindspore.ops`: names, primitive settings and function keywords older MindSpore took
    ("nn.ResizeBilinear()", "has no attribute 'ResizeBilinear'"),
    ("ops.ResizeBilinear((4, 4))", "has no attribute 'ResizeBilinear'"),
    ("ops.Zeros(2, 3, ms.float32)", "too many positional arguments"),
    ("ops.L2Normalize(eps=1e-6)", "unexpected keyword argument 'eps'"),
    ("ops.interpolate(X, sizes=(4, 4))", "unexpected keyword argument 'sizes'"),
    ("ops.pad(X, paddings=((0, 0), (0, 0), (0, 1), (0, 1)))", "unexpected keyword argument 'paddings'"),
    ("ops.cat((X, X), dim=0)", "unexpected keyword argument 'dim'"),
    ("ops.sum(X, axis=1)", "unexpected keyword argument 'axis'"),
    ("ops.split(X, axis=1, output_num=2)", "unexpected keyword argument 'output_num'"),
    ("ops.Zeros()", None),
    # PyTorch's sizes one by one: the second taken for the dtype (issue 19's sixth sample, KANO)
    ("ops.zeros(1, 133)", "the input 'dtype' should be mindspore dtype"),
    ("ops.ones(2, len((1, 2)))", "the input 'dtype' should be mindspore dtype"),
    ("ops.zeros((1, 133))", None),
    ("ops.zeros(2, ms.float32)", None),
    ("ops.L2Normalize(epsilon=1e-6)", None),
    ("ops.interpolate(X, size=(4, 4))", None),
    ("ops.cat((X, X), axis=0)", None),
    ("ops.sum(X, dim=1)", None),
    ("ops.split(X, 1, axis=1)", None),
    # `mindspore.ops.operations` and `mindspore` itself (issue 19's fifteenth and sixteenth samples)
    ("P.LGamma()", "has no attribute 'LGamma'"),
    ("P.Lgamma()", None),
    ("ms.max(X, dim=-1)", "has no attribute 'max'"),
    ("ms.zeros_like(X)", "has no attribute 'zeros_like'"),
    ("ms.tensor(1.0)", None),
]
X = ms.Tensor(np.ones((1, 2, 2, 2), np.float32))
# the same keywords in graph code: the compiler binds a function's arguments as Python does
GRAPH_CALLS = [("ops.cat((x, x), dim=0)", "unexpected keyword argument 'dim'"),
               ("ops.interpolate(x, sizes=(4, 4))", "unexpected keyword argument 'sizes'"),
               ("ops.cat((x, x), axis=0)", None)]
PRELUDE = "import mindspore as ms\nfrom mindspore import mint, nn, ops\nfrom mindspore.ops import operations as P\n\n"


def _fires(call: str) -> bool:
    source = SourceFile(path="ported.py", text=f"{PRELUDE}layer = {call}\n", module_name="ported")
    return any(d.code == "MSL067" for d in Linter(Settings(select=("MSL067",))).lint_source(source).diagnostics)


def test_msl067_names_and_signatures_are_those_of_the_installed_wheel():
    assert_generated_module_is_current("nn_signatures")


@pytest.mark.parametrize("call, raised", CALLS)
def test_msl067_fires_exactly_where_construction_fails(call, raised):
    try:
        eval(call, {"ms": ms, "nn": nn, "mint": mint, "ops": ops, "P": P, "X": X})  # noqa: S307 - the measured call, a literal of this table
        failure = None
    except (TypeError, AttributeError) as error:
        failure = str(error)
    if raised is None:
        assert failure is None, failure
    else:
        assert failure is not None and raised in failure, failure
    assert _fires(call) == (raised is not None)


@pytest.mark.parametrize("call, raised", GRAPH_CALLS)
def test_msl067_function_keywords_fail_in_graph_code_too(oracle, call, raised):
    source = f"{PRELUDE}\nclass Probe(nn.Cell):\n    def construct(self, x):\n        return {call}\n"
    outcome = oracle.call("lax", oracle.load(source).Probe(), X)
    if raised is None:
        assert outcome.ok, outcome.message
    else:
        assert not outcome.ok and raised in outcome.message, outcome.message
    linted = Linter(Settings(select=("MSL067",))).lint_source(SourceFile(path="probe.py", text=source,
                                                                         module_name="probe"))
    assert any(d.code == "MSL067" for d in linted.diagnostics) == (raised is not None)


@pytest.mark.parametrize("base, raised", [("nn.Module", "has no attribute 'Module'"), ("nn.Cell", None)])
def test_msl067_a_base_the_package_lacks_fails_when_the_class_statement_runs(base, raised):
    statement = f"class Loss({base}):\n    pass\n"
    try:
        exec(statement, {"nn": nn})  # noqa: S102 - the measured statement, a literal of this table
        failure = None
    except AttributeError as error:
        failure = str(error)
    assert (failure is None) if raised is None else (failure is not None and raised in failure), failure
    source = SourceFile(path="ported.py", text=f"{PRELUDE}{statement}", module_name="ported")
    fires = any(d.code == "MSL067" for d in Linter(Settings(select=("MSL067",))).lint_source(source).diagnostics)
    assert fires == (raised is not None)
