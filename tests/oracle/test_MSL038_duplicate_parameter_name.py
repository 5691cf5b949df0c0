"""MSL038: Parameters sharing a literal name in one ParameterTuple or list fail when the Cell is built."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, what __init__ stores, does building the Cell fail)
CASES = [
    ("TupleOfTwo", "self.ps = ParameterTuple([Parameter(ONES, name='w'), Parameter(ONES, name='w')])", True),
    ("Comprehension", "self.ps = ParameterTuple([Parameter(ONES, name='w') for _ in range(2)])", True),
    ("PlainList", "self.ps = [Parameter(ONES, name='w') for _ in range(2)]", True),
    ("IndexedNames", "self.ps = ParameterTuple([Parameter(ONES, name=f'w{i}') for i in range(2)])", False),
    ("Unnamed", "self.ps = ParameterTuple([Parameter(ONES) for _ in range(2)])", False),
    ("Attributes", "self.a = Parameter(ONES, name='w')\n        self.b = Parameter(ONES, name='w')", False),
]
TEMPLATE = """
import numpy as np
from mindspore import Parameter, ParameterTuple, Tensor, nn

ONES = Tensor(np.ones(2, np.float32))


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        {stored}

    def construct(self, x):
        return x
"""


@pytest.mark.parametrize("name, stored, fails", CASES, ids=[case[0] for case in CASES])
def test_msl038_fires_exactly_where_building_the_cell_fails(oracle, name, stored, fails):
    source = TEMPLATE.format(name=name, stored=stored)
    x = oracle.tensor([1.0, 2.0])
    for mode in ("lax", "pynative"):
        outcome = oracle.call(mode, lambda: getattr(oracle.load(source), name)()(x))
        if fails:
            assert outcome.error_type == "ValueError" and "its name 'w' already exists" in outcome.message, outcome
        else:
            assert outcome.ok, (mode, outcome.message)
    found = Linter(Settings(select=("MSL038",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert bool(found) == fails, [d.message for d in found]


GRAPH_CALLS = """
import mindspore as ms
from mindspore import Parameter, Tensor


def closure():
    a = Parameter(Tensor([1.0]), name="{first}")
    b = Parameter(Tensor([2.0]), name="{second}")

    @ms.jit
    def add():
        return a + b

    return add()


def arguments():
    @ms.jit
    def add(x, y):
        return x + y

    a = Parameter(Tensor([1.0]), name="{first}")
    b = Parameter(Tensor([2.0]), name="{second}")
    return add(a, b)
"""


@pytest.mark.parametrize("first, second", [("w", "w"), ("w1", "w2")])
def test_msl038_a_jit_function_given_parameters_named_alike_fails_to_compile(oracle, first, second):
    source = GRAPH_CALLS.format(first=first, second=second)
    module = oracle.load(source)
    for function in (module.closure, module.arguments):
        outcome = oracle.call("lax", function)
        if first == second:
            assert not outcome.ok and f"its name '{first}' already exists" in outcome.message, outcome.message
        else:
            assert outcome.ok, outcome.message
    found = Linter(Settings(select=("MSL038",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert len(found) == (2 if first == second else 0), [d.message for d in found]
