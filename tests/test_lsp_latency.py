"""benchmarks/lsp_latency.py runs (on a small generated file: a smoke test, not a measurement), and the server's
garbage-collector pause is undone whatever happens inside it."""
from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "lsp_latency.py"


def test_collector_paused_restores_the_collector():
    pytest.importorskip("pygls")
    from ms_lint.lsp import _collector_paused

    assert gc.isenabled()
    with _collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), _collector_paused():
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with _collector_paused():
            pass
        assert not gc.isenabled(), "a collector disabled by the caller stays disabled"
    finally:
        gc.enable()


def test_benchmark_runs():
    process = subprocess.run(
        [sys.executable, str(BENCHMARK), "--source", "generated", "--lines", "200", "--edits", "2", "--opens", "2"],
        capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr
    for label in ("first diagnostics (didOpen)", "update after an edit (didChange), raw", "ms debounce",
                  "save (didSave)"):
        assert label in process.stdout, process.stdout
    assert "diagnostics in the file: 0" not in process.stdout, process.stdout
