"""Reliability on a large real code base: the CLI lints CPython's standard library (about 1,800 files, with
deliberately broken ones in its tests) with every rule, in worker processes, without a crash."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time

from ms_lint.config import Settings
from ms_lint.files import discover

STDLIB = sysconfig.get_paths()["stdlib"]


def test_the_cli_survives_the_standard_library(tmp_path, record_property):
    command = [sys.executable, "-m", "ms_lint", "check", "--no-cache", "--select", "ALL", "-j", "2", "--exit-zero",
               STDLIB]
    started = time.monotonic()
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    seconds = time.monotonic() - started
    record_property("seconds", round(seconds, 1))
    print(f"linted {STDLIB} in {seconds:.1f} s")
    assert result.returncode == 0, result.stderr[-5000:]
    assert "Traceback" not in result.stderr, result.stderr[-5000:]
    assert "internal error" not in result.stderr and "nested too deeply" not in result.stderr, result.stderr[-5000:]
    assert "site-packages" not in result.stdout


def test_the_standard_library_is_discovered_without_site_packages():
    files = discover([STDLIB], Settings())
    assert len(files) > 500 and not [f for f in files if "site-packages" in f.split(os.sep)]
