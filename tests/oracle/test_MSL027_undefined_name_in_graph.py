"""MSL027: the graph compiler resolves every name it compiles, in branches on tensor data too."""
from __future__ import annotations

import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, construct body, fails in GRAPH_MODE, the severity ms_lint gives). PyNative runs all but `Live`: only
# there does the missing name's line run.
CASES = [
    ("Live", "return x * undefined_scale", True, "error"),
    ("TensorBranchNeverTaken", "if x.sum() > 100:\n    return x * undefined_scale\nreturn x", True, "error"),
    ("MissingHelper", "if x.sum() > 100:\n    return helper_missing(x)\nreturn x", True, "error"),
    ("FoldedFlag", "if self.flag:\n    return x * undefined_scale\nreturn x", False, "warning"),
    ("DefinedLater", "return x * LATER", False, None),
]
TEMPLATE = """
from mindspore import nn


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flag = False

    def construct(self, x):
{body}


LATER = 2.0
"""


@pytest.mark.parametrize("name, body, fails, severity", CASES, ids=[case[0] for case in CASES])
def test_msl027_fires_where_graph_mode_cannot_resolve_a_name(oracle, name, body, fails, severity):
    source = TEMPLATE.format(name=name, body="\n".join("        " + line for line in body.splitlines()))
    x = oracle.tensor([1.0, 2.0])
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        if fails:
            assert outcome.error_type == "NameError" and "is not defined, or not supported in graph mode" \
                in outcome.message, (mode, outcome.message)
        else:
            assert outcome.ok, (mode, outcome.message)
    assert oracle.call("pynative", getattr(oracle.load(source), name)(), x).ok == (name != "Live")
    found = Linter(Settings(select=("MSL027",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert [d.severity for d in found] == ([severity] if severity else []), [d.message for d in found]


PORTED = """
from mindspore import nn


class Ported(nn.Cell):
    def __init__(self, scale=2.0):
        super().__init__()
        self.scale = scale

    def construct(self, x):
        return x * scale
"""


def test_msl027_a_name_bound_only_in_init_is_undefined_in_construct(oracle):
    """CIGF (issue 19's fourteenth sample): a parameter of `__init__` read in `construct` (the value is
    `self.scale`) is no name of `construct`'s scope: NameError in every mode."""
    x = oracle.tensor([1.0, 2.0])
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, oracle.load(PORTED).Ported(), x)
        assert outcome.error_type == "NameError" and "'scale' is not defined" in outcome.message, outcome.message
    outcome = oracle.call("pynative", oracle.load(PORTED).Ported(), x)
    assert outcome.error_type == "NameError", outcome.message
    found = Linter(Settings(select=("MSL027",))).lint_source(
        SourceFile(path="cell.py", text=PORTED, module_name="cell")).diagnostics
    assert [(d.row, d.severity) for d in found] == [(11, "error")], [d.message for d in found]
    assert "bound only inside `__init__` (line 6)" in found[0].message
