"""MSL026: the sides of a condition on tensor data are joined; a tensor against a tuple, a number or None fails."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

JOIN = "Cannot join the return values of different branches"
# (name, construct body, fails at LAX, fails at STRICT, the severity ms_lint gives at LAX). PyNative runs them.
CASES = [
    ("TupleAgainstTensor", "if x.sum() > 0:\n    return x * 2, x\nreturn x * 2", True, True, "error"),
    ("NumberAgainstTensor", "if x.sum() > 0:\n    return x - 1\nreturn 0", True, True, "error"),
    ("AssignedNumber", "if x.max() > 1:\n    s = ops.sqrt(x)\nelse:\n    s = 1.0\nreturn s", True, True,
     "error"),
    ("InlineNumber", "y = x - 1 if x.mean() > 0 else 0\nreturn y", True, True, "error"),
    ("NoneAgainstTensor", "if x.sum() > 0:\n    return x - 1\nreturn None", False, True, "warning"),
    ("NoneBefore", "m = None\nif x.sum() > 0:\n    m = x > 0.5\nif m is None:\n    return x\nreturn m", False,
     True, "warning"),
    ("TuplesOfTwoLengths", "if x.sum() > 0:\n    return x, x\nreturn x, x, x", False, False, None),
    ("FoldedFlag", "if self.training:\n    return x, x\nreturn x", False, False, None),
    ("StaticShape", "if x.shape[0] > 1:\n    return x\nreturn None", False, False, None),
    ("NoneTest", "if m is None:\n    e = 0\nelse:\n    e = m * 2\nreturn x + e", False, False, None),
]
TEMPLATE = """
from mindspore import nn, ops


class {name}(nn.Cell):
    def construct(self, x, m=None):
{body}
"""


@pytest.mark.parametrize("name, body, lax, strict, severity", CASES, ids=[case[0] for case in CASES])
def test_msl026_fires_where_graph_mode_cannot_join_the_sides(oracle, name, body, lax, strict, severity):
    source = TEMPLATE.format(name=name, body="\n".join("        " + line for line in body.splitlines()))
    x = oracle.tensor([1.0, 2.0])
    for mode, fails in (("lax", lax), ("strict", strict)):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        if fails:
            assert outcome.error_type == "TypeError" and JOIN in outcome.message, (mode, outcome.message)
        else:
            assert outcome.ok, (mode, outcome.message)
    assert oracle.call("pynative", getattr(oracle.load(source), name)(), x).ok
    found = Linter(Settings(select=("MSL026",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert [d.severity for d in found] == ([severity] if severity else []), [d.message for d in found]


HOST_CALLS = """
import mindspore as ms


def run(a, b):
    @ms.jit
    def pick(x, y):
        if x < y:
            return ms.Tensor([1, 2, 3])
        return 0

    return pick({a}, {b})
"""


@pytest.mark.parametrize("a, b, fails", [("ms.Tensor(2.0)", "ms.Tensor(6.0)", True), ("2", "6", False)])
def test_msl026_a_jit_function_joins_only_what_its_caller_passes_as_tensors(oracle, a, b, fails):
    """Python numbers passed to a `@jit` function are constants: the compiler specializes on them and folds."""
    source = HOST_CALLS.format(a=a, b=b)
    outcome = oracle.call("lax", oracle.load(source).run, None, None)
    assert (not outcome.ok and JOIN in outcome.message) if fails else outcome.ok, outcome.message
    found = Linter(Settings(select=("MSL026",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert bool(found) == fails, [d.message for d in found]


BOOL_OPS = """
import mindspore as ms


def run(a, b):
    @ms.jit
    def both(x, y):
        return {expression}

    return both(a, b)
"""


@pytest.mark.parametrize("expression, dtypes, fails", [
    ("x and y", ("int32", "float32"), True), ("x or y", ("int32", "float32"), True),
    ("x and y", ("int32", "int32"), False), ("(x > 0) and (y > 0)", ("int32", "float32"), False)])
def test_msl026_and_or_join_their_operands(oracle, expression, dtypes, fails):
    """`x and y` is `y if x else x`: operands of two dtypes cannot join; comparisons give bools and can."""
    import numpy as np

    source = BOOL_OPS.format(expression=expression)
    a, b = (oracle.tensor([1], getattr(np, dtype)) for dtype in dtypes)
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, oracle.load(source).run, a, b)
        assert (not outcome.ok and JOIN in outcome.message) if fails else outcome.ok, (mode, outcome.message)
    eager = source.replace("    @ms.jit\n", "")  # (a @jit function is compiled in PyNative mode too)
    assert oracle.call("pynative", oracle.load(eager).run, a, b).ok
    host = source.replace("return both(a, b)", "return both(ms.Tensor([1]), ms.Tensor([1.0]))")
    found = Linter(Settings(select=("MSL026",))).lint_source(
        SourceFile(path="cell.py", text=host, module_name="cell")).diagnostics
    assert [d.severity for d in found] == (["warning"] if expression.startswith("x ") else [])


SCALARS = """
import mindspore as ms


@ms.jit
def pick(x):
    if x < 10:
        return {first}
    return {second}
"""


@pytest.mark.parametrize("first, second, fails", [
    ("1", "2.5", True), ("1", "'a'", True), ("1", "(1, 2)", True),
    ("1", "[1]", False), ("1", "None", False), ("'a'", "'b'", False), ("(1,)", "[1]", False)])
def test_msl026_python_values_on_the_two_sides_of_a_tensor_decision(oracle, first, second, fails):
    """Which Python values 2.10 joins when a tensor decides between them (both levels)."""
    source = SCALARS.format(first=first, second=second)
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, oracle.load(source).pick, ms_tensor(9))
        assert (not outcome.ok and JOIN in outcome.message) if fails else outcome.ok, (mode, outcome.message)
    host = source + "\n\ndef run():\n    return pick(ms.Tensor(9))\n"
    found = Linter(Settings(select=("MSL026",))).lint_source(
        SourceFile(path="cell.py", text=host, module_name="cell")).diagnostics
    assert bool(found) == fails, [d.message for d in found]


def ms_tensor(value):
    import mindspore as ms

    return ms.Tensor(value)
