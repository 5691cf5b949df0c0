"""MSL073: initializer() returns a lazy tensor without data. Written into a slice or used in arithmetic it fails in
both modes; stored as a plain attribute it fails in PyNative only; wrapped in Parameter, given to set_data or
filled with init_data() it works."""
from __future__ import annotations

import numpy as np
import pytest

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, statements of __init__ that build `self.value`, the outcome per mode, the severity reported or None)
CASES = [
    ("SliceWrite", "self.value = Parameter(ops.zeros((2, 1, 4)))\n"
                   "        self.value[0] = initializer(Normal(), (1, 4), ms.float32)", (False, False), "error"),
    ("Arithmetic", "self.value = Parameter(initializer(Normal(), (1, 1, 4), ms.float32) * 2)", (False, False),
     "error"),
    ("ListElement", "self.value = [Parameter(ops.zeros((1, 1, 4)), name='v0')]\n"
                    "        self.value[0] = initializer(Normal(), (1, 1, 4), ms.float32)", (True, False), "error"),
    ("Attribute", "self.value = initializer(Normal(), (1, 1, 4), ms.float32)", (True, False), "warning"),
    ("OverParameter", "self.value = Parameter(ops.zeros((1, 1, 4)))\n"
                      "        self.value = initializer(Normal(), (1, 1, 4), ms.float32)", (True, True), None),
    ("Wrapped", "self.value = Parameter(initializer(Normal(), (1, 1, 4), ms.float32))", (True, True), None),
    ("Filled", "self.value = initializer(Normal(), (1, 1, 4), ms.float32).init_data()", (True, True), None),
    ("SliceFilled", "self.value = Parameter(ops.zeros((2, 1, 4)))\n"
                    "        self.value[0] = initializer(Normal(), (1, 4), ms.float32).init_data()",
     (True, True), None),
]
TEMPLATE = """
import mindspore as ms
from mindspore import Parameter, nn, ops
from mindspore.common.initializer import Normal, initializer


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        {build}

    def construct(self, x):
        return x + self.value[0]
"""


@pytest.mark.parametrize("name, build, works, severity", CASES, ids=[case[0] for case in CASES])
def test_msl073_fires_where_the_lazy_tensor_is_read_without_data(oracle, name, build, works, severity):
    source = TEMPLATE.format(name=name, build=build)
    module = oracle.load(source)
    x = oracle.tensor(np.ones((1, 1, 4)))
    for mode, expected in zip(("lax", "pynative"), works):
        outcome = oracle.call(mode, lambda: getattr(module, name)()(x).asnumpy())  # read: errors surface here
        assert outcome.ok is expected, (mode, outcome.message)
        if not expected:
            assert "null" in outcome.message or "uninitialized" in outcome.message, (mode, outcome.message)
    linted = Linter(Settings(select=("MSL073",))).lint_source(SourceFile(path="cell.py", text=source,
                                                                         module_name="cell"))
    assert [d.severity for d in linted.diagnostics] == ([severity] if severity else [])
