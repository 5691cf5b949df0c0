"""Values through project functions of other modules (issue 15): a helper that returns a tensor's shape gives
Python numbers wherever it is defined, in every front end (x2ms's `tensor_api.x2ms_size`, issue 19's sample)."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap

from support import run_cli
from test_project_rules import write

from ms_lint.analysis.python_numbers import metadata_functions

ADAPTER = '''
    import functools

    import mindspore


    def dispatch(func):
        @functools.wraps(func)
        def wrapper(obj, *args, **kwargs):
            return func(obj, *args, **kwargs)
        return wrapper


    def tensor_size(tensor, dim=None):
        if dim is None:
            return tensor.shape
        return tensor.shape[dim]


    @dispatch
    def x2ms_size(obj, *args, **kwargs):
        return tensor_size(obj, *args, **kwargs)


    def total(tensor):
        return tensor.sum()
'''
MODEL = '''
    import adapter.tensor_api
    from mindspore import nn


    class Net(nn.Cell):
        def construct(self, weight):
            for i in range(adapter.tensor_api.x2ms_size(weight)[0]):
                weight = weight * i
            for i in range(adapter.tensor_api.total(weight)):
                weight = weight + i
            return weight
'''
FILES = {"adapter/__init__.py": "", "adapter/tensor_api.py": ADAPTER, "model.py": MODEL,
         "train.py": "import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n"}
# the shape's row compiles; the sum's is a tensor
EXPECTED = {("model.py", 9, "MSL023")}


def test_a_def_returning_shape_metadata_or_such_a_def_of_its_module_is_known():
    tree = ast.parse(textwrap.dedent(ADAPTER))
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert metadata_functions(defs) == {"tensor_size", "x2ms_size"}


def test_the_cli_and_pylint_know_a_helper_of_another_module_returns_shape_numbers(tmp_path):
    files = write(tmp_path, FILES)
    code, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL023", ".", cwd=tmp_path)
    assert {(item["filename"].removeprefix("./"), item["location"]["row"], item["code"])
            for item in json.loads(out)} == EXPECTED, out
    run = subprocess.run([sys.executable, "-m", "pylint", "--load-plugins", "ms_lint", "--disable", "all",
                          "--enable", "range-over-tensor", "--output-format", "json", *files],
                         cwd=tmp_path, capture_output=True, text=True)
    assert {(item["path"], item["line"]) for item in json.loads(run.stdout)} == {("model.py", 9)}, run.stderr


def test_flake8_resolves_the_helper_through_the_index(tmp_path):
    """flake8 lints one file; the helper's module is read on demand."""
    write(tmp_path, FILES)
    run = subprocess.run([sys.executable, "-m", "flake8", "--select", "MSL023", "--format", "%(path)s|%(row)d",
                          "model.py"], cwd=tmp_path, capture_output=True, text=True)
    assert run.stdout.split() == ["model.py|9"], run.stdout + run.stderr
