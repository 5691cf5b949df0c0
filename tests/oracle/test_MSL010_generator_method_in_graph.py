"""MSL010: Cell-tree walking methods in construct fail to compile at both syntax levels; PyNative runs them."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn

class Base(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 3)
        self.relu = nn.ReLU()

class TrainableParams(Base):
    def construct(self, x):
        return x * len(self.trainable_params())

class UntrainableParams(Base):
    def construct(self, x):
        return x * (len(self.untrainable_params()) + 1)

class GetParameters(Base):
    def construct(self, x):
        n = 0
        for _ in self.dense.get_parameters():
            n += 1
        return x * n

class ParametersDict(Base):
    def construct(self, x):
        return x * len(self.parameters_dict())

class CellsAndNames(Base):
    def construct(self, x):
        n = 0
        for _ in self.cells_and_names():
            n += 1
        return x * n

class ParametersAndNames(Base):
    def construct(self, x):
        n = 0
        for _ in self.parameters_and_names():
            n += 1
        return x * n

class Cells(Base):
    def construct(self, x):
        for cell in self.cells():
            x = cell(x)
        return x

class NameCells(Base):
    def construct(self, x):
        return x * len(self.name_cells())
"""

ERRORS = {
    "TrainableParams": "'mindspore.nn.cell.Cell.trainable_params' is not supported",
    "UntrainableParams": "'mindspore.nn.cell.Cell.untrainable_params' is not supported",
    "GetParameters": "'mindspore.nn.cell.Cell.get_parameters' is not supported",
    "ParametersDict": "'mindspore.nn.cell.Cell.get_parameters' is not supported",
    "CellsAndNames": "Unsupported expression 'Yield'",
    "ParametersAndNames": "Unsupported expression 'Yield'",
    "Cells": None,
    "NameCells": None,
}


@pytest.mark.parametrize("mode", ["lax", "strict"])
@pytest.mark.parametrize("cell_name", sorted(ERRORS))
def test_msl010_cell_tree_walks_fail_to_compile(oracle, mode, cell_name):
    cells = oracle.load(CELLS)
    outcome = oracle.compile(mode, getattr(cells, cell_name)(), oracle.tensor([[1.0, 2.0, 3.0]]))
    assert not outcome.ok
    expected = ERRORS[cell_name]
    if expected is None:  # cells()/name_cells() with two sub-cells: an internal error whose text depends on the level
        expected = "The pointer[node] is null" if mode == "lax" else "__py_exec_index0_setitem__"
    assert expected in outcome.message


@pytest.mark.parametrize("cell_name", sorted(ERRORS))
def test_msl010_pynative_runs_them(oracle, cell_name):
    cells = oracle.load(CELLS)
    assert oracle.call("pynative", getattr(cells, cell_name)(), oracle.tensor([[1.0, 2.0, 3.0]])).ok


STACK = """
from mindspore import nn

class FeatureStack(nn.Cell):
    def __init__(self):
        super().__init__()
        self.features = nn.SequentialCell([nn.Dense(2, 2, weight_init="ones", bias_init="zeros"), nn.ReLU()])

    def construct(self, x):
        for _, module in self.features.cells_and_names():
            x = module(x)
        return x
"""


def test_msl010_cells_and_names_yields_the_stack_first_so_a_loop_calling_each_runs_it_twice(oracle):
    """Wrong in PyNative too (issue 19's third sample): the items are the SequentialCell, then each layer."""
    cells = oracle.load(STACK)
    net = cells.FeatureStack()
    assert [type(cell).__name__ for _, cell in net.features.cells_and_names()] == ["SequentialCell", "Dense", "ReLU"]
    outcome = oracle.call("pynative", lambda t: net(t).asnumpy().tolist(), oracle.tensor([[1.0, 2.0]]))
    assert outcome.ok, outcome.message
    assert outcome.value == [[6.0, 6.0]]  # dense(dense(x)) = 2 * (1 + 2) * 1: the stack once, then its layers
