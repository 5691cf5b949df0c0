"""Reliability on a large real code base: the CLI lints CPython's standard library (about 1,800 files, with
deliberately broken ones in its tests) with every rule, in worker processes, without a crash."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time

from ms_lint import suppression
from ms_lint.files import discover
from ms_lint.settings import Settings
from ms_lint.source import SourceError, parse, read

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


def test_comments_are_found_as_the_tokenizer_finds_them():
    """`suppression` finds the comments on the lines that hold a marker from the lines and the string literals of
    the tree, tokenizing only where those cannot tell: on every line of the standard library that holds a `#`,
    it must find exactly the comments the tokenizer finds."""
    compared = 0
    for path in discover([STDLIB], Settings()):
        try:
            source = read(path)
            tree = parse(source)
        except SourceError:
            continue  # the deliberately broken files of the test suite
        text = source.text
        lines = text.split("\n")
        rows = [row for row, line in enumerate(lines, 1) if "#" in line]
        if not rows:
            continue
        rows_set = set(rows)
        tokenized = [c for c in suppression._tokenized_comments(text, lines, rows[-1]) if c[0] in rows_set]
        assert suppression._comments_on(text, lines, tree, rows) == tokenized, path
        compared += len(rows)
    assert compared > 50_000
