"""MSL078: the modules it reports missing fail to import under 2.10; those it leaves alone import."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import ROOT

from ms_lint.engine import Linter
from ms_lint.rules.missing_mindspore_module import FOLDED, INSTEAD
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# what the fixture and the community ports import (issue 19's samples)
STATEMENTS = [
    "import mindspore.dataset.vision.c_transforms",
    "import mindspore.dataset.transforms.py_transforms",
    "import mindspore.distributed",
    "from mindspore.nn.metrics.accuracy import Accuracy",
    "from mindspore.nn.lr_scheduler import StepLR",
    "from mindspore.profiler.profiling import Profiler",
    "from mindspore.nn.transformer import TransformerEncoder",
    "from mindspore.cuda.amp import autocast",
    "from mindspore.dataset.vision import c_transforms",
    "from mindspore.dataset.transforms import py_transforms",
    "import mindspore.dataset.vision",
    "import mindspore.communication.management",
    "from mindspore.nn.metrics import Accuracy",
    "from mindspore.dataset.vision import Inter, Resize",
    "from mindspore.communication.management import get_rank, init",
    # names of the C extension (recorded, unlike other private modules): MindNLP 0.3's, and others the community uses
    "from mindspore._c_expression import Tensor",
    "from mindspore._c_expression import TensorPy",
    "from mindspore._c_expression import typing, MSContext, security",
    "from mindspore._c_expression import MpiConfig",
    "from mindspore._c_dataengine import *",
    # names of the packages themselves (issue 19's fifteenth sample): a 2023 course's `optim`, Ms_cvpr2023's `LGamma`
    "from mindspore import nn, optim",
    "from mindspore import Tensor, context, dataset, jit, set_seed, numpy, log",
    "from mindspore import dtype",  # `mindspore.common.dtype`: no module `mindspore.dtype` (mindcv, mindformers)
    "from mindspore.ops import P",  # `mindspore.ops.operations`, bound as `P` (HAKE)
    "from mindspore.mint.nn import F",
    "from mindspore.nn import Module",
    "from mindspore.nn import Cell, Dense, probability",
    "from mindspore.ops import LGamma",
    "from mindspore.ops import operations, composite, functional, constexpr, Primitive, prim_attr_register",
    "from mindspore.ops.operations import LGamma",
    "from mindspore.ops.operations import Lgamma, nn_ops, ResizeBilinearV2",
    "from mindspore.mint.nn import Linear, functional",
]

_FOLDED_IMPORTS = [f"from {package} import {name}" for package in ("mindspore.dataset.vision",
                   "mindspore.dataset.transforms", "mindspore.dataset.text") for name in sorted(FOLDED)]
_HOMES = [f"import {home}" for homes in INSTEAD.values() for home in homes]

# every statement in one child process (importing MindSpore takes seconds); each answer on a line of its own
_RUN = """
import json, sys
for statement in json.loads(sys.argv[1]):
    try:
        exec(statement, {})
        answer = "ok"
    except ImportError as error:
        answer = type(error).__name__
    print("ANSWER", json.dumps([statement, answer]))
"""


@pytest.fixture(scope="module")
def answers():
    statements = STATEMENTS + _FOLDED_IMPORTS + _HOMES
    run = subprocess.run([sys.executable, "-c", _RUN, json.dumps(statements)], capture_output=True, text=True,
                         check=True)
    found = dict(json.loads(line[len("ANSWER "):]) for line in run.stdout.splitlines() if line.startswith("ANSWER "))
    assert set(found) == set(statements), run.stderr
    return found


@pytest.mark.parametrize("statement", STATEMENTS)
def test_msl078_fires_exactly_where_the_import_fails(statement, answers):
    result = Linter(Settings(select=("MSL078",))).lint_source(SourceFile(path="probe.py", text=statement + "\n",
                                                                         module_name="probe"))
    if any(d.code == "MSL078" for d in result.diagnostics):
        assert answers[statement] in ("ModuleNotFoundError", "ImportError"), answers[statement]
    else:
        assert answers[statement] == "ok", answers[statement]


def test_msl078_folded_modules_are_neither_modules_nor_attributes_of_the_dataset_packages(answers):
    assert {statement: answers[statement] for statement in _FOLDED_IMPORTS} == dict.fromkeys(_FOLDED_IMPORTS,
                                                                                               "ImportError")


def test_msl078_suggested_homes_exist(answers):
    assert {statement: answers[statement] for statement in _HOMES} == dict.fromkeys(_HOMES, "ok")


def test_msl078_modules_are_those_of_the_installed_wheel():
    # in a process of its own: what the generator imports, and what the tests before it imported, would mix
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "mindspore_modules.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
