"""MSL077: a Cell called with arguments its `construct` cannot bind fails in every mode; a matching call runs."""
from __future__ import annotations

import numpy as np
import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

CELLS = """
from mindspore import nn, ops


class Double(nn.Cell):
    def construct(self, x, scale=2.0):
        return x * scale


class Keyword(nn.Cell):
    def construct(self, x):
        return Double()(x, size=3)


class TooMany(nn.Cell):
    def construct(self, x):
        return Double()(x, 2.0, 3.0)


class Missing(nn.Cell):
    def __init__(self):
        super().__init__()
        self.double = Double()

    def construct(self, x):
        return self.double()


class Matching(nn.Cell):
    def __init__(self):
        super().__init__()
        self.double = Double()

    def construct(self, x):
        return self.double(x, scale=3.0) + Double()(x)
"""


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
@pytest.mark.parametrize("cell, fails", [("Keyword", True), ("TooMany", True), ("Missing", True),
                                         ("Matching", False)])
def test_msl077_fires_exactly_where_the_call_fails(oracle, mode, cell, fails):
    outcome = oracle.call(mode, getattr(oracle.load(CELLS), cell)(), oracle.tensor(np.ones((2,), np.float32)))
    assert outcome.ok != fails, outcome.message
    if fails and mode == "pynative":
        assert outcome.error_type == "TypeError", outcome.message
    result = Linter(Settings(select=("MSL077",))).lint_source(SourceFile(path="cells.py", text=CELLS,
                                                                         module_name="cells"))
    rows = {d.row for d in result.diagnostics}
    lines = CELLS.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith(f"class {cell}("))
    end = next((i for i, line in enumerate(lines, 1) if i > start and line.startswith("class ")), len(lines) + 1)
    assert any(start <= row < end for row in rows) == fails
