"""Fixes measured to break or change working code on the PyPI zoos (issue 17): each case, as a test."""
from __future__ import annotations

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile


def lint(text: str, *codes: str):
    linter = Linter(Settings(select=codes or ("ALL",)))
    result = linter.lint_source(SourceFile(path="model.py", text=text, module_name="model"))
    return result.diagnostics + linter.judge([result])


def test_msl032_never_suggests_a_member_of_cell_itself():
    text = ("from mindspore import nn\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.dense = nn.Dense(2, 2)\n\n    def construct(self, x):\n        return self.base(x)\n")
    (found,) = lint(text, "MSL032")
    assert "`phase`" not in found.message and "self.base" in found.message


def test_msl006_says_when_a_hoist_adds_weights():
    text = ("from mindspore import nn\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n\n"
            "    def construct(self, x):\n        return nn.ReLU()(nn.Dense(2, 2)(x))\n")
    messages = {d.message.split("`")[1]: d.fix.message for d in lint(text, "MSL006") if d.fix}
    assert "weights become parameters" in messages["nn.Dense"]
    assert "weights" not in messages["nn.ReLU"]


def test_msl030_is_silent_on_cells_registered_by_name():
    text = ("from mindspore import nn\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = []\n        for i in range(4):\n            layer = nn.Dense(2, 2)\n"
            "            self.insert_child_to_cell(str(i), layer)\n            self.layers.append(layer)\n\n"
            "    def construct(self, x):\n        for layer in self.layers:\n            x = layer(x)\n"
            "        return x\n")
    assert lint(text, "MSL030") == []


def test_no_safe_fix_registers_cells_or_parameters():
    text = ("from mindspore import Parameter, Tensor, nn\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n"
            "        super().__init__()\n        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]\n"
            "        self.ws = [Parameter(Tensor([1.0])), Parameter(Tensor([2.0]))]\n\n"
            "    def construct(self, x):\n        return x\n")
    fixes = {d.code: d.fix.applicability for d in lint(text, "MSL030", "MSL031") if d.fix}
    assert fixes == {"MSL030": "unsafe", "MSL031": "unsafe"}


def test_msl031_an_optimizers_own_state_is_a_warning():
    """Issue 19's seventh sample: a Muon optimizer's list of moment Parameters is state it updates itself, never
    trained: a warning about checkpoints, with no safe fix."""
    text = ("import numpy as np\nimport mindspore as ms\nfrom mindspore import Parameter, Tensor, nn\n\n\n"
            "class Muon(nn.Optimizer):\n    def __init__(self, params):\n        super().__init__(0.02, params)\n"
            "        self.moments = [Parameter(Tensor(np.zeros(p.shape), ms.float32)) for p in self.parameters]\n\n"
            "    def construct(self, gradients):\n        return gradients\n")
    (found,) = lint(text, "MSL031")
    assert found.severity == "warning" and "optimizer state" in found.message
    assert found.fix is None or found.fix.applicability == "unsafe"
