"""MSL079: NumPy cannot read MindSpore's dtypes, nor MindSpore's Tensor, ops and Cast NumPy's, in every mode."""
from __future__ import annotations

import ast
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "MSL079.py"
FIXED = FIXTURE.with_name("MSL079.fixed.py")


def _assigned_calls(source: str, function: str):
    """(row, expression text) of each assignment in `function` of the fixture."""
    tree = ast.parse(source)
    body = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == function).body
    return [(node.lineno, ast.unparse(node.value)) for node in body if isinstance(node, ast.Assign)]


def test_every_flagged_call_raises_type_error_and_its_fix_runs(oracle):
    source = FIXTURE.read_text(encoding="utf-8")
    module = oracle.load(source)
    fixed = oracle.load(FIXED.read_text(encoding="utf-8"))
    x = ms.Tensor(np.ones(4, np.float32))
    calls = _assigned_calls(source, "masks")
    assert len(calls) == 7
    for row, expression in calls:
        assert "# expect: MSL079" in source.splitlines()[row - 1]
        with pytest.raises(TypeError, match="data type|dtype"):
            eval(expression, vars(module), {"size": 4, "x": x})  # noqa: S307 - the fixture's own line
    results = fixed.masks(4, x)
    assert results[0].dtype == np.float32 and results[1].dtype == np.int32 and results[2].dtype == np.float32
    assert results[3].dtype == ms.int32 and results[4].dtype == ms.float16 and results[6].dtype == ms.bool_


def test_the_look_alikes_run(oracle):
    module = oracle.load(FIXTURE.read_text(encoding="utf-8"))
    x = ms.Tensor(np.ones(4, np.float32))
    causal, table, half, converted, graph_numpy, scalar, given = module.look_alikes(4, x, np.float32)
    assert converted.dtype == ms.float16  # Tensor.astype converts NumPy's dtypes
    assert graph_numpy.dtype == ms.float32 and given.dtype == np.float32


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_a_numpy_dtype_in_a_cast_fails_in_graph_code(oracle, mode):
    module = oracle.load(FIXTURE.read_text(encoding="utf-8"))
    x = ms.Tensor(np.ones(4, np.float32))
    outcome = oracle.compile(mode, module.Gate(), x) if mode != "pynative" else oracle.call(mode, module.Gate(), x)
    assert not outcome.ok and outcome.error_type == "TypeError", outcome.message
    fixed = oracle.load(FIXED.read_text(encoding="utf-8"))
    outcome = oracle.compile(mode, fixed.Gate(), x) if mode != "pynative" else oracle.call(mode, fixed.Gate(), x)
    assert outcome.ok, outcome.message
