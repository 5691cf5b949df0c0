"""Star imports and re-exports (`from .layers import *`, `__all__`): names resolve through them in every front end."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import run_cli

from ms_lint.analysis.project import ProjectIndex
from ms_lint.catalog import all_rules, pylint_message

FILES = {
    "pkg/__init__.py": "from .layers import *\nfrom .heads import *\nfrom .plain import *\nfrom .extended import *\n",
    "pkg/layers.py": ("from mindspore import nn\n__all__ = [\"Block\"]\n\n\nclass Block(nn.Cell):\n"
                      "    def construct(self, x):\n        return x\n\n\nclass Hidden(nn.Cell):\n"
                      "    def construct(self, x):\n        return x\n"),
    "pkg/heads.py": ("from mindspore import nn\n\n\nclass _Private(nn.Cell):\n    pass\n\n\n"
                     "class Head(nn.Cell):\n    pass\n"),
    "pkg/plain.py": "class Plain:\n    def construct(self, x):\n        return x\n",
    "pkg/extended.py": ("from mindspore import nn\n__all__ = [\"A\"]\n__all__ += [\"B\"]\n__all__.extend([\"C\"])\n\n\n"
                        "class A(nn.Cell):\n    pass\n\n\nclass B(nn.Cell):\n    pass\n\n\n"
                        "class C(nn.Cell):\n    pass\n\n\nclass D(nn.Cell):\n    pass\n"),
    "pkg/cycle_a.py": "from .cycle_b import *\n",
    "pkg/cycle_b.py": "from .cycle_a import *\n",
    "model.py": ("import numpy as np\nfrom pkg import *\n\n\nclass Net(Block):\n    def construct(self, x):\n"
                 "        return np.exp(x)\n\n\nclass NotACell(Plain):\n    def construct(self, x):\n"
                 "        return np.exp(x)\n"),
}


def _write_project(root, files):
    for name, text in files.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text)
    (root / "pyproject.toml").write_text("[tool.ms_lint]\n")
    return root


@pytest.fixture
def project(tmp_path):
    return _write_project(tmp_path, FILES)


def test_the_index_follows_star_imports_and_honours_all(project):
    index = ProjectIndex()
    index.add_file(str(project / "model.py"))
    with index.importing(str(project / "model.py")):
        assert index.class_kind("pkg.Block") == "cell"  # through pkg/__init__ and layers' __all__
        assert index.lookup_class("pkg.Hidden") is None  # not in layers' __all__
        assert index.lookup_class("pkg._Private") is None  # private names are not star-exported
        assert index.lookup_class("pkg.Head") is not None  # no __all__: every public name
        assert index.class_kind("pkg.Plain") is None  # a plain class, known now, is no Cell
        assert [index.lookup_class(f"pkg.{n}") is not None for n in "ABCD"] == [True, True, True, False]
        assert index.star_exports("pkg.cycle_a", "Anything") is False  # a cycle of star imports ends


def test_a_class_star_imported_from_elsewhere_is_known_in_every_front_end(project):
    code, out = run_cli("check", "--no-cache", "--output-format", "json", str(project / "model.py"))
    rows = [(item["location"]["row"], item["code"]) for item in json.loads(out)]
    assert rows == [(7, "MSL001")]  # Net(Block) is a Cell; NotACell(Plain) is not one (it was, unresolved)
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "MSL", "model.py"], cwd=project,
                            capture_output=True, text=True)
    assert [line.split(":")[1] for line in flake8.stdout.splitlines()] == ["7"]
    pylint = subprocess.run([sys.executable, "-m", "pylint", "--load-plugins", "ms_lint", "--disable", "all",
                             "--enable", "ms-lint", "--output-format", "json", "--score", "n", "model.py"],
                            cwd=project, capture_output=True, text=True)
    assert [m["line"] for m in json.loads(pylint.stdout)] == [7]


# A package that re-exports MindSpore's and NumPy's modules (`from .common import *`, `from pkg import nn`): what
# the names are is followed to MindSpore, for every rule that asks "is this the MindSpore X" (issue 15).
REEXPORTS = {
    "zoo/__init__.py": "from .common import *\n",
    "zoo/common.py": ("import numpy as np\nimport mindspore as ms\nfrom mindspore import nn, ops\n\n"
                      "__all__ = [\"np\", \"ms\", \"nn\", \"ops\"]\n"),
    "star_model.py": ("from zoo import *\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3, bias=False)\n"
                      "        self.drop = nn.Dropout(0.1)\n\n    def construct(self, x):\n"
                      "        return self.drop(self.conv(x)) + np.random.rand(3)[0]\n\n\n"
                      "class Ported(nn.Cell):\n    def forward(self, x):\n        return x\n"),
    "named_model.py": ("from zoo import nn, np\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n"
                       "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3, bias=False)\n"
                       "        self.drop = nn.Dropout(0.1)\n\n    def construct(self, x):\n"
                       "        return self.drop(self.conv(x)) + np.random.rand(3)[0]\n\n\n"
                       "class Ported(nn.Cell):\n    def forward(self, x):\n        return x\n"),
}
# (line, code) in each model: the conv's PyTorch keyword, the positional Dropout rate, the NumPy draw in graph
# code, and a Cell with forward only; before, `nn` and `np` resolved to `zoo.nn`/`zoo.np` and none of them fired
REEXPORTED = {(7, "MSL067"), (8, "MSL062"), (11, "MSL004"), (14, "MSL033")}


@pytest.fixture
def reexporting(tmp_path):
    return _write_project(tmp_path, REEXPORTS)


def test_the_index_follows_reexported_modules_to_mindspore(reexporting):
    index = ProjectIndex()
    index.add_file(str(reexporting / "star_model.py"))
    with index.importing(str(reexporting / "star_model.py")):
        assert index.canonical("zoo.nn.Conv2d") == "mindspore.nn.Conv2d"  # through zoo/__init__'s star import
        # what a star import binds is followed from a plain module too; a plain module's name imported as such
        # is where it is (following every name through every module it passes cost 4x on mindone)
        assert index.canonical("zoo.common.np.random.rand", reexported=True) == "numpy.random.rand"
        assert index.canonical("zoo.common.np.random.rand") == "zoo.common.np.random.rand"
        assert index.canonical("zoo.missing.name") == "zoo.missing.name"  # what cannot be followed stays


@pytest.mark.parametrize("model", ["star_model.py", "named_model.py"])
def test_reexported_modules_are_mindspore_in_every_front_end(reexporting, model):
    codes = ",".join(sorted({code for _, code in REEXPORTED}))
    _, out = run_cli("check", "--no-cache", "--select", codes, "--output-format", "json", str(reexporting / model))
    assert {(item["location"]["row"], item["code"]) for item in json.loads(out)} == REEXPORTED
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", codes, "--format", "%(row)d|%(code)s",
                             model], cwd=reexporting, capture_output=True, text=True)
    assert {(int(row), code) for row, code in (line.split("|") for line in flake8.stdout.splitlines())} \
        == REEXPORTED
    symbols = {pylint_message(rule, severity)[1]: rule.code for rule in all_rules()
               for severity in ("error", "warning", "info") if rule.code in codes}
    for jobs in ("1", "2"):
        pylint = subprocess.run([sys.executable, "-m", "pylint", "--load-plugins", "ms_lint", "--disable", "all",
                                 "--enable", ",".join(symbols), "--output-format", "json", "-j", jobs, model],
                                cwd=reexporting, capture_output=True, text=True)
        assert {(item["line"], symbols[item["symbol"]]) for item in json.loads(pylint.stdout)} == REEXPORTED, jobs


RE_EXPORTS = {
    "xu/__init__.py": "",
    "xu/ms/__init__.py": "import mindspore as ms\nfrom mindspore import nn, ops\n",
    "xu/th/__init__.py": "import torch\nfrom torch import nn\n",
    "xu/ms/star.py": "from xu.ms import *\n\n\ndef update(loss):\n    loss.backward()\n",
    "xu/ms/named.py": "from xu.ms import nn\n\n\ndef update(loss):\n    loss.backward()\n",
    "xu/th/star.py": "from xu.th import *\n\n\ndef update(loss):\n    loss.backward()\n",
    "xu/plain.py": "from xu import helpers\n\n\ndef update(loss):\n    loss.backward()\n",
    "xu/ms/script.py": ("from xu.ms import *\nfrom missing_utils import *\n\n\ndef evaluate(output):\n"
                        "    return torch.cat((output.cpu(),), 0)\n"),
    "xu/ms/commented.py": ("from xu.ms import *\nfrom missing_utils import *\n\n\ndef update(loss):\n"
                           "    # was: torch.sum(loss).backward()\n    loss.backward()\n"),
    "xu/ms/nlp.py": "from xu.ms import *\nfrom mindnlp.transformers import *\n\n\ndef count(model):\n"
                    "    return model.parameters()\n",
}


def test_a_module_importing_mindspore_through_the_projects_re_exports_is_mindspore_only(tmp_path):
    """xuance's learners import MindSpore only through `from xuance.mindspore import ...` (issue 19's fifteenth
    sample): PyTorch's `loss.backward()` there is MSL064's, as in a module importing MindSpore itself; not where
    the re-exports are PyTorch's, nor where nothing brings MindSpore, nor where `torch` comes from a star import
    the index cannot follow (CMMS-GCL's scripts, the seventeenth sample: `torch.cat((output.cpu(), ...))`; a
    `torch.` in a comment is no such name), nor after a star import of a PyTorch-like package (MindNLP's models
    have `parameters()`)."""
    root = _write_project(tmp_path, RE_EXPORTS)
    _, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL064", str(root))
    found = sorted((finding["filename"].replace(str(root) + "/", ""), finding["location"]["row"])
                   for finding in json.loads(out))
    assert found == [("xu/ms/commented.py", 7), ("xu/ms/named.py", 5), ("xu/ms/star.py", 5)]
