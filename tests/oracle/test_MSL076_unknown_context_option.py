"""MSL076: the context options 2.10 does not recognise raise ValueError at the call; the recorded ones do not."""
from __future__ import annotations

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

_CALL = """
import sys
import mindspore
try:
    getattr(mindspore, sys.argv[1])(**{{sys.argv[2]: {value!r}}})
    print("ok")
except ValueError as error:
    print("ValueError", error)
"""


@pytest.mark.parametrize("function, keyword, value", CALLS, ids=[f"{f}-{k}" for f, k, _ in CALLS])
def test_msl076_fires_exactly_where_the_call_raises(function, keyword, value):
    run = subprocess.run([sys.executable, "-c", _CALL.format(value=value), function, keyword], capture_output=True,
                         text=True, check=True)
    answer = run.stdout.strip().splitlines()[-1]
    source = f"import mindspore\nmindspore.{function}({keyword}={value!r})\n"
    result = Linter(Settings(select=("MSL076",))).lint_source(SourceFile(path="probe.py", text=source,
                                                                         module_name="probe"))
    if any(d.code == "MSL076" for d in result.diagnostics):
        assert answer.startswith("ValueError") and "not recognized" in answer, answer
    else:
        assert answer == "ok", answer


def test_msl076_options_are_those_of_the_installed_wheel():
    assert_generated_module_is_current("context_options")
