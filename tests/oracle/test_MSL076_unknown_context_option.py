"""MSL076: the context options 2.10 does not recognise raise ValueError at the call; the recorded ones do not."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import assert_generated_module_is_current

from ms_lint.engine import Linter
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (function, keyword, value): what the fixture and the community ports pass
CALLS = [
    ("set_context", "enable_mem_reuse", True),
    ("set_context", "enable_dynamic_memory", True),
    ("set_context", "device_num", 8),
    ("set_auto_parallel_context", "mirror_mean", True),
    ("set_context", "max_call_depth", 2000),
    ("set_context", "save_graphs", False),
    ("set_auto_parallel_context", "gradients_mean", True),
    ("set_auto_parallel_context", "device_num", 8),
]

# every call in one child process (importing MindSpore takes seconds; a refused option changes nothing)
_CALLS = """
import json, sys
import mindspore
for function, keyword, value in json.loads(sys.argv[1]):
    try:
        getattr(mindspore, function)(**{keyword: value})
        answer = "ok"
    except ValueError as error:
        answer = f"ValueError {error}"
    print("ANSWER", json.dumps([function, keyword, answer]))
"""


@pytest.fixture(scope="module")
def answers():
    run = subprocess.run([sys.executable, "-c", _CALLS, json.dumps(CALLS)], capture_output=True, text=True,
                         check=True)
    found = {(f, k): a for f, k, a in (json.loads(line[len("ANSWER "):]) for line in run.stdout.splitlines()
                                       if line.startswith("ANSWER "))}
    assert len(found) == len(CALLS), run.stderr
    return found


@pytest.mark.parametrize("function, keyword, value", CALLS, ids=[f"{f}-{k}" for f, k, _ in CALLS])
def test_msl076_fires_exactly_where_the_call_raises(function, keyword, value, answers):
    answer = answers[(function, keyword)]
    source = f"import mindspore\nmindspore.{function}({keyword}={value!r})\n"
    result = Linter(Settings(select=("MSL076",))).lint_source(SourceFile(path="probe.py", text=source,
                                                                         module_name="probe"))
    if any(d.code == "MSL076" for d in result.diagnostics):
        assert answer.startswith("ValueError") and "not recognized" in answer, answer
    else:
        assert answer == "ok", answer


def test_msl076_options_are_those_of_the_installed_wheel():
    assert_generated_module_is_current("context_options")
