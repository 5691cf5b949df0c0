"""Star imports and re-exports (`from .layers import *`, `__all__`): names resolve through them in every front end."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import run_cli

from ms_lint.analysis.project import ProjectIndex

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


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pyproject.toml").write_text("[tool.ms_lint]\n")
    return tmp_path


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
