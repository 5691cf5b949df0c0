"""MSL035: `self.x = ...` in graph code: STRICT compile error; under LAX a stored tensor stays at its first value."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

CELLS = """
import numpy as np
from mindspore import nn, ops, Parameter, Tensor

class Cache(nn.Cell):
    def __init__(self):
        super().__init__()
        self.cache = Tensor(np.zeros(2, np.float32))

    def construct(self, x):
        out = x + self.cache
        self.cache = x
        return out

class Counter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.count = 0

    def construct(self, x):
        if x.sum() > 0:
            self.count = self.count + 1
        return x * 1

class ParameterCache(nn.Cell):
    def __init__(self):
        super().__init__()
        self.cache = Parameter(Tensor(np.zeros(2, np.float32)), name="cache", requires_grad=False)

    def construct(self, x):
        out = x + self.cache
        ops.assign(self.cache, x)
        return out

class ParameterAttribute(nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = Parameter(Tensor(np.zeros(2, np.float32)), name="p")

    def construct(self, x):
        self.p = x * 2
        return self.p + 0
"""


def outputs(oracle, mode, net, values):
    results = []
    for value in values:
        outcome = oracle.call(mode, net, oracle.tensor([value, value]))
        assert outcome.ok, outcome.error
        results.append(outcome.value.asnumpy()[0].item())
    return results


def test_msl035_strict_rejects_assigning_a_non_parameter_attribute(oracle):
    cells = oracle.load(CELLS)
    for cell in (cells.Cache, cells.Counter):
        outcome = oracle.call("strict", cell(), oracle.tensor([1.0, 1.0]))
        assert not outcome.ok and outcome.error_type == "TypeError"
        assert "In JIT strict mode, if need to modify a member attribute of a class" in outcome.message


def test_msl035_lax_keeps_a_stored_tensor_at_its_first_value(oracle):
    cells = oracle.load(CELLS)
    values = [1.0, 10.0, 100.0, 1000.0]
    graph = cells.Cache()
    assert outputs(oracle, "lax", graph, values) == [1.0, 11.0, 101.0, 1001.0]
    assert graph.cache.asnumpy().tolist() == [1.0, 1.0]
    pynative = cells.Cache()
    assert outputs(oracle, "pynative", pynative, values) == [1.0, 11.0, 110.0, 1100.0]
    assert pynative.cache.asnumpy().tolist() == [1000.0, 1000.0]


def test_msl035_lax_writes_python_numbers_back(oracle):
    cells = oracle.load(CELLS)
    counter = cells.Counter()
    outputs(oracle, "lax", counter, [1.0, -1.0, 1.0])
    assert counter.count == 2


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl035_parameters_are_the_graph_safe_state(oracle, mode):
    cells = oracle.load(CELLS)
    assert outputs(oracle, mode, cells.ParameterCache(), [1.0, 10.0, 100.0, 1000.0]) == [1.0, 11.0, 110.0, 1100.0]
    attribute = cells.ParameterAttribute()
    outputs(oracle, mode, attribute, [3.0])
    assert attribute.p.asnumpy().tolist() == [6.0, 6.0]


ITEM_STORES = """
from mindspore import nn


class ItemStore(nn.Cell):
    def __init__(self):
        super().__init__()
        self.cache = {"x": 1}

    def construct(self, x):
        self.cache["x"] = 3
        return x * self.cache["x"]
"""


def test_msl035_item_stores_on_a_held_dict_work_at_lax_and_fail_under_strict(oracle):
    module = oracle.load(ITEM_STORES)
    cell = module.ItemStore()
    lax = oracle.call("lax", cell, oracle.tensor([1.0, 1.0]))
    assert lax.ok and cell.cache["x"] == 3, lax.message  # written back
    strict = oracle.call("strict", module.ItemStore(), oracle.tensor([1.0, 1.0]))
    assert strict.error_type == "TypeError" and "should be initialized as a 'Parameter'" in strict.message
    found = Linter(Settings(select=("MSL035",))).lint_source(
        SourceFile(path="cell.py", text=ITEM_STORES, module_name="cell")).diagnostics
    assert [d.severity for d in found] == ["warning"]
