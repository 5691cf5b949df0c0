"""Cache and parallel runs: same findings, in the same order, as a cold single-process run."""
from __future__ import annotations

import os

from support import CLEAN, ROOT, run_cli

from ms_lint.cli.run import automatic_jobs

BLOCKS = "from mindspore import nn\n\n\nclass Block(nn.Cell):\n    pass\n"
MODEL = ("from blocks import Block\nfrom mindspore import nn\n\n\nclass Net(Block):\n    def __init__(self):\n"
         "        super().__init__()\n        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]\n")


def test_parallel_and_cached_runs_print_the_same_as_a_cold_run(tmp_path):
    cache = str(tmp_path / "cache")
    fixtures = str(ROOT / "fixtures")
    cold = run_cli("check", "--select", "ALL", "--no-cache", "-j", "1", fixtures)
    assert run_cli("check", "--select", "ALL", "--no-cache", "-j", "2", fixtures) == cold
    assert run_cli("check", "--select", "ALL", "--no-cache", fixtures) == cold  # as many workers as CPUs
    assert run_cli("check", "--select", "ALL", "--cache-dir", cache, fixtures) == cold
    assert os.listdir(cache)
    assert run_cli("check", "--select", "ALL", "--cache-dir", cache, "-j", "2", fixtures) == cold


def test_without_jobs_a_run_takes_a_worker_per_cpu_once_there_are_files_enough():
    assert automatic_jobs(3, 8) == 1  # a few files: starting workers would cost more than it saves
    assert automatic_jobs(70, 8) == 2
    assert automatic_jobs(2000, 8) == 8
    assert automatic_jobs(2000, None) == 1  # the CPU count unknown


def test_cache_is_invalidated_by_an_edit_of_a_module_the_analysis_read(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "blocks.py").write_text("class Block:\n    pass\n")
    (project / "model.py").write_text(MODEL)
    cache = str(tmp_path / "cache")
    assert run_cli("check", "--cache-dir", cache, str(project)) == (0, CLEAN)
    assert run_cli("check", "--cache-dir", cache, str(project)) == (0, CLEAN)
    (project / "blocks.py").write_text(BLOCKS)  # Block becomes a Cell: model.py has a finding now
    code, out = run_cli("check", "--cache-dir", cache, str(project))
    assert code == 1 and "MSL030" in out


def test_cache_is_invalidated_by_options(tmp_path):
    (tmp_path / "model.py").write_text(MODEL.replace("from blocks import Block\n", "").replace("(Block)", "(nn.Cell)"))
    cache = str(tmp_path / "cache")
    assert run_cli("check", "--cache-dir", cache, str(tmp_path))[0] == 1
    assert run_cli("check", "--cache-dir", cache, "--ignore", "MSL030", str(tmp_path))[0] == 0


def test_force_exclude_applies_excludes_to_named_files(tmp_path):
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "m.py").write_text(MODEL.replace("from blocks import Block\n", "").replace("(Block)",
                                                                                                     "(nn.Cell)"))
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint]\nextend-exclude = ["legacy"]\n')
    named = str(tmp_path / "legacy" / "m.py")
    assert run_cli("check", "--no-cache", named)[0] == 1  # named explicitly: linted
    assert run_cli("check", "--no-cache", "--force-exclude", named) == (0, CLEAN)
    assert run_cli("check", "--no-cache", str(tmp_path)) == (0, CLEAN)  # directories honour excludes anyway
