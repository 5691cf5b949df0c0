"""MSL029: graph dicts have no working `pop`, on `**kwargs` or on a local dict; `get` and `[...]` compile."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

LAX = "For 'TupleGetItem', input[0] should be Sequence"
STRICT = "cannot get attributes pop"
# (name, construct body, the keywords passed, does LAX reject it, the severity ms_lint gives at LAX); STRICT
# rejects every one that pops. PyNative runs them all. `name = kwargs.pop(k)` fails at LAX for a Python number and
# compiles for a tensor ("tensor": a tensor is passed): the linter cannot see which, so it warns at LAX.
CASES = [
    ("Assigned", "s = kwargs.pop('scale')\nreturn x * s", {"scale": 2.0}, True, "warning"),
    ("AssignedTensor", "s = kwargs.pop('scale')\nreturn x * s", {"scale": "tensor"}, False, "warning"),
    ("AssignedAbsentWithDefault", "s = kwargs.pop('scale', 1.0)\nreturn x * s", {}, True, "error"),
    ("LocalDictReadAfter", "d = {'a': 1, 'b': 2}\nd.pop('a')\nreturn x * d['b']", {}, True, "error"),
    ("GuardedAndPassed", "s = 1.0\nif 'scale' in kwargs:\n    s = kwargs.pop('scale')\nreturn x * s", {"scale": 2.0},
     True, "warning"),
    ("GuardedAndAbsent", "s = 1.0\nif 'scale' in kwargs:\n    s = kwargs.pop('scale')\nreturn x * s", {}, False,
     "warning"),
    ("InAnExpression", "return x * kwargs.pop('scale', 1.0)", {"scale": 2.0}, False, "warning"),
    ("Get", "return x * kwargs.get('scale', 1.0)", {"scale": 2.0}, False, None),
    ("Item", "return x * kwargs['scale']", {"scale": 2.0}, False, None),
]
TEMPLATE = """
from mindspore import nn


class {name}(nn.Cell):
    def construct(self, x, **kwargs):
{body}
"""


@pytest.mark.parametrize("name, body, passed, rejected, severity", CASES, ids=[case[0] for case in CASES])
def test_msl029_fires_where_graph_mode_cannot_pop(oracle, name, body, passed, rejected, severity):
    source = TEMPLATE.format(name=name, body="\n".join("        " + line for line in body.splitlines()))
    x = oracle.tensor([1.0, 2.0])
    passed = {key: oracle.tensor([2.0, 2.0]) if value == "tensor" else value for key, value in passed.items()}
    for mode, message in (("lax", LAX), ("strict", STRICT)):
        outcome = oracle.call(mode, lambda: getattr(oracle.load(source), name)()(x, **passed))
        if mode == "strict" and ".pop(" in body and (passed or "if " not in body):
            assert not outcome.ok and message in outcome.message, (mode, outcome.message)
        elif rejected and mode == "lax":
            assert not outcome.ok and message in outcome.message, (mode, outcome.message)
        else:
            assert outcome.ok, (mode, outcome.message)
    assert oracle.call("pynative", lambda: getattr(oracle.load(source), name)()(x, **passed)).ok
    found = Linter(Settings(select=("MSL029",))).lint_source(  # (the default level, LAX)
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert [d.severity for d in found] == ([severity] if severity else []), [d.message for d in found]
