"""MSL028: a graph dict's keys are fixed at compile time; a tensor computed or passed at run time cannot be one."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, body of the jit function, the evaluator named in the compiler's message, or None where it compiles)
CASES = [
    ("Literal", "d = {x: 10}\nreturn d.values()", "make_dict"),
    ("Computed", "d = {x + 1: 10}\nreturn d.values()", "make_dict"),
    ("SetItem", "d = {}\nd[x] = 10\nreturn d.values()", "dict_setitem"),
    ("StaticShape", "d = {x.shape[0]: 10}\nreturn d.values()", None),
    ("NamedKey", "d = {'x': x}\nreturn d.values()", None),
    ("ConstantTensor", "d = {ms.Tensor([1, 2]): 10}\nreturn d.values()", None),
]
TEMPLATE = """
import mindspore as ms


@ms.jit
def {name}(x):
{body}


def run():
    return {name}(ms.Tensor([1, 2]))
"""


@pytest.mark.parametrize("name, body, evaluator", CASES, ids=[case[0] for case in CASES])
def test_msl028_fires_exactly_where_graph_mode_refuses_the_key(oracle, name, body, evaluator):
    source = TEMPLATE.format(name=name, body="\n".join("    " + line for line in body.splitlines()))
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, oracle.load(source).run)
        if evaluator:
            assert not outcome.ok and f"{evaluator} evaluator key only supports string, number, type, none, " \
                "constant tensor and tuple" in outcome.message, (mode, outcome.message)
        else:
            assert outcome.ok, (mode, outcome.message)
    found = Linter(Settings(select=("MSL028",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert bool(found) == bool(evaluator), [d.message for d in found]
