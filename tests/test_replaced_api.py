"""A project that replaces MindSpore names with its own when imported (MindNLP 0.3's `injection.py`: `ops.zeros =
_zeros`, `nn.Dropout = CustomDropout`, `Tensor.repeat = _repeat`; issue 19's thirteenth sample): the checks of
2.10's own signatures and semantics (MSL067, MSL062, MSL069) stay silent on those names, in every front end, and
still fire on the names it leaves alone and in a project that replaces nothing."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import run_cli
from test_project_rules import write

from ms_lint.analysis.replaced_api import names_replaced

INJECTION = '''
    from mindspore import nn, ops, Tensor


    def _zeros(*size, dtype=None):
        return ops.fill(dtype, size, 0)


    class CustomDropout(nn.Cell):
        def __init__(self, p=0.5):
            super().__init__()
            self.p = p

        def construct(self, x):
            return ops.dropout(x, self.p, self.training)


    def _repeat(self, *sizes):
        return ops.tile(self, sizes)


    def _patched(func):
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        return wrapper


    ops.zeros = _zeros
    nn.Dropout = CustomDropout
    setattr(Tensor, "repeat", _repeat)
    origin_cat = ops.cat
    ops.cat = _patched(origin_cat)
    ops.cumsum = _patched(ops.cumsum)
    '''
MODEL = '''
    from mindspore import nn, ops


    class Block(nn.Cell):
        def __init__(self, dim, rate):
            super().__init__()
            self.drop = nn.Dropout(rate)
            self.dim = dim

        def construct(self, x):
            pad = ops.zeros(1, 1, self.dim)
            ones = ops.ones(1, 1, self.dim)
            x = ops.cat((x, x), dim=1)
            return self.drop(x.repeat(2, axis=0)) + pad + ones
    '''
# without the injection: Dropout's positional keep_prob (row 7), ops.zeros (row 11), Tensor.repeat (row 14);
# ops.ones (row 12), which the project does not replace, fires in both, and so does `ops.cat(..., dim=1)` (row
# 13): the project's wrapper hands its arguments on to MindSpore's `ops.cat`
PLAIN = {("model.py", 7, "MSL062"), ("model.py", 11, "MSL067"), ("model.py", 12, "MSL067"),
         ("model.py", 13, "MSL067"), ("model.py", 14, "MSL069")}
INJECTED = {("pkg/model.py", 12, "MSL067"), ("pkg/model.py", 13, "MSL067")}


def _findings(out):
    return {(item["filename"].removeprefix("./"), item["location"]["row"], item["code"]) for item in json.loads(out)}


def test_the_replaced_names_of_a_module_are_read_from_its_top_level(tmp_path):
    path = tmp_path / "injection.py"
    write(tmp_path, {"injection.py": INJECTION})
    assert names_replaced(str(path), path.read_bytes()) == {
        "mindspore.ops.zeros", "mindspore.nn.Dropout", "mindspore.Tensor.repeat"}


def test_without_an_injection_the_checks_fire(tmp_path):
    write(tmp_path, {"model.py": MODEL})
    _, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL062,MSL067,MSL069", ".",
                     cwd=tmp_path)
    assert _findings(out) == PLAIN, out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_cli_leaves_the_projects_own_names_alone(tmp_path, jobs):
    write(tmp_path, {"pkg/__init__.py": "from . import injection\n", "pkg/injection.py": INJECTION,
                     "pkg/model.py": MODEL})
    _, out = run_cli("check", "--no-cache", "-j", jobs, "--output-format", "json",
                     "--select", "MSL062,MSL067,MSL069", ".", cwd=tmp_path)
    assert _findings(out) == INJECTED, out


def test_flake8_reads_the_project_for_one_file(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "from . import injection\n", "pkg/injection.py": INJECTION,
                     "pkg/model.py": MODEL})
    run = subprocess.run([sys.executable, "-m", "flake8", "--select", "MSL062,MSL067,MSL069",
                          "--format", "%(path)s|%(row)d|%(code)s", "pkg/model.py"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.stdout.split() == ["pkg/model.py|12|MSL067", "pkg/model.py|13|MSL067"], run.stdout + run.stderr
