"""Every rule's documentation is executed: its `## Example` must fire, its `## Use instead` must not.

The blocks are linted as users read them in docs/rules/: a block that leaves out its imports (most do, to stay
short) gets the imports of the well-known names it uses (`np`, `nn`, `ops`, `Model`, `threading`...), and nothing
else. Project rules are judged on the block as a one-module project, as the CLI would.
"""
from __future__ import annotations

import ast
import builtins
import re

import pytest

from ms_lint.catalog import all_rules
from ms_lint.engine import Linter
from ms_lint.settings import Settings

RULES = all_rules()
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
# The imports a block may leave out, by the name it uses.
_KNOWN_IMPORTS = {
    "np": "import numpy as np",
    "ms": "import mindspore as ms",
    "mindspore": "import mindspore",
    "nn": "from mindspore import nn",
    "ops": "from mindspore import ops",
    "mint": "from mindspore import mint",
    "Tensor": "from mindspore import Tensor",
    "Parameter": "from mindspore import Parameter",
    "ParameterTuple": "from mindspore import ParameterTuple",
    "Model": "from mindspore import Model",
    "jit": "from mindspore import jit",
    "ds": "import mindspore.dataset as ds",
    "init": "from mindspore.communication import init",
    "get_rank": "from mindspore.communication import get_rank",
    "threading": "import threading",
    "random": "import random",
    "time": "import time",
    "os": "import os",
    "torch": "import torch",
}


def blocks(rule, heading: str):
    """The code blocks under `## <heading>` of the rule's docstring."""
    match = re.search(rf"^## {heading}\n(.*?)(?=^## |\Z)", rule.docs(), re.S | re.M)
    return _BLOCK.findall(match.group(1)) if match else []


def with_imports(code: str) -> str:
    """`code` with the imports of the well-known names it reads but never binds."""
    tree = ast.parse(code)
    bound = set(vars(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).partition(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    imports = sorted({_KNOWN_IMPORTS[name] for name in used - bound if name in _KNOWN_IMPORTS})
    return "".join(f"{line}\n" for line in imports) + ("\n" if imports else "") + code


def findings(rule, code: str, tmp_path):
    """The rule's findings on `code` as the module `example.py` of a project of its own."""
    path = tmp_path / "example.py"
    path.write_text(code if rule.code == "MSL099" else with_imports(code), encoding="utf-8")
    linter = Linter(Settings(select=(rule.code,)))
    linter.index.add_file(str(path))
    result = linter.lint_path(str(path))
    assert not result.internal_errors, result.internal_errors
    return [d for d in result.diagnostics + linter.judge([result]) if d.code == rule.code]


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_the_example_fires(rule, tmp_path):
    examples = blocks(rule, "Example")
    assert examples, f"{rule.code} documents no example"
    for code in examples:
        assert findings(rule, code, tmp_path), f"{rule.code}'s example does not fire:\n{code}"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_what_to_use_instead_does_not_fire(rule, tmp_path):
    for code in blocks(rule, "Use instead"):
        found = findings(rule, code, tmp_path)
        assert not found, f"{rule.code} fires on what its docs say to use instead:\n{code}\n{found}"


def test_a_block_gets_the_imports_it_leaves_out_and_only_those():
    code = "import numpy as np\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        return np.sum(x)\n"
    assert with_imports(code) == "from mindspore import nn\n\n" + code
    assert with_imports("x = 1\n") == "x = 1\n"
