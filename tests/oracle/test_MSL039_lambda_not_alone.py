"""MSL039: a lambda graph code calls must be the whole value of its assignment, or 2.10 cannot parse it."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

NOT_ALONE = "Parse Lambda Function Fail. Node type must be Lambda, but got {}."
# (name, __init__ parameters, what __init__ stores, what construct returns, the compiler's message or None)
CASES = [
    ("DefaultArgument", ", fn=lambda x: x + 1", "self.fn = fn", "self.fn(x)",
     "An error occurred while parsing the positional information of the lambda expression."),
    ("Fallback", ", act=None", "self.fn = act if act is not None else (lambda x: x)", "self.fn(x)",
     NOT_ALONE.format("IfExp")),
    ("InAList", "", "self.fns = [lambda x: x + 1, lambda x: x * 2]", "self.fns[1](x)", NOT_ALONE.format("List")),
    ("InADict", "", "self.fn = {'a': lambda x: x + 1}['a']", "self.fn(x)", NOT_ALONE.format("Subscript")),
    ("Alone", "", "self.fn = lambda x: x + 1", "self.fn(x)", None),
    ("NeverCalled", "", "self.fns = [lambda x: x + 1]", "x", None),
]
TEMPLATE = """
from mindspore import nn


class {name}(nn.Cell):
    def __init__(self{parameters}):
        super().__init__()
        {stored}

    def construct(self, x):
        return {returned}
"""


@pytest.mark.parametrize("name, parameters, stored, returned, message", CASES, ids=[case[0] for case in CASES])
def test_msl039_fires_exactly_where_graph_mode_cannot_find_the_lambda(oracle, name, parameters, stored, returned,
                                                                       message):
    source = TEMPLATE.format(name=name, parameters=parameters, stored=stored, returned=returned)
    x = oracle.tensor([1.0, 2.0])
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        if message:
            assert not outcome.ok and message in outcome.message, (mode, outcome.message)
        else:
            assert outcome.ok, (mode, outcome.message)
    assert oracle.call("pynative", getattr(oracle.load(source), name)(), x).ok
    found = Linter(Settings(select=("MSL039",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert bool(found) == bool(message), [d.message for d in found]
