"""What `check` and its fixing share: the run (arguments, settings, files, progress), linting and judging, and
the report."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from ms_lint import formats, runner
from ms_lint.cli.terminal import Paint, Progress, is_terminal, wants_colour
from ms_lint.engine import FileResult, Linter
from ms_lint.notebook import Notebook, is_notebook, located
from ms_lint.rule import Diagnostic
from ms_lint.settings import Settings
from ms_lint.source import split_lines

# Without `--jobs`, a worker process per this many files, up to one per CPU: starting a worker (fork, its own
# project index) costs what it saves at about 32 files of a zoo (measured on mindcv's models, 2 CPUs).
AUTO_JOBS_FILES = 32


def automatic_jobs(files: int, cpus: Optional[int]) -> int:
    """Every CPU, as flake8 and ruff use by default, where the files outweigh starting the workers."""
    return max(1, min(cpus or 1, files // AUTO_JOBS_FILES))

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


@dataclass
class Run:
    """One invocation: its arguments, settings and files, and what reports its progress."""

    args: argparse.Namespace
    settings: Settings
    files: List[str]
    missing: List[str]
    progress: Progress
    stdin: Optional[bytes] = None  # the code read from standard input, linted as files[0]

    @property
    def applicabilities(self) -> Sequence[str]:
        return ("safe", "unsafe") if self.args.unsafe_fixes else ("safe",)

    @property
    def jobs(self) -> int:
        jobs = self.args.jobs
        if jobs is None:
            return automatic_jobs(len(self.files), os.cpu_count())
        return jobs if jobs > 0 else (os.cpu_count() or 1)

    @property
    def cache_directory(self) -> Optional[str]:
        args = self.args
        if args.no_cache or self.stdin is not None:
            return None
        return args.cache_dir or os.path.join(self.settings.root, runner.CACHE_DIRECTORY)

    def note(self, message: str) -> None:
        """A `-v` line on standard error."""
        if self.args.verbose:
            self.progress.done()
            print(f"ms-lint: {message}", file=sys.stderr)


def lint_and_judge(run: Run):
    """Every file's findings (from the cache where it is still valid) and the project rules' judgement of them
    together, sorted."""
    linter = Linter(run.settings)
    linter.index.judged_together = True  # the project rules see every file linted
    if run.stdin is not None:
        results = [linter.lint_bytes(run.stdin, run.files[0])] if run.files else []
        return results, sorted([d for r in results for d in r.diagnostics] + linter.judge(results),
                               key=Diagnostic.sort_key)
    for path in run.files:
        linter.index.add_file(path)
    cache_directory = run.cache_directory
    run.progress.start("linting", len(run.files))
    # judging too: else a full collection scans every result once linting ends (and a run from the cache may scan
    # the project for the judges' compile context)
    with runner.few_collections(), runner.context_facts_kept(cache_directory, run.settings):
        results = runner.lint_files(run.settings, run.files, jobs=run.jobs, cache_directory=cache_directory,
                                    on_file=run.progress.advance)
        run.progress.start("judging the project rules")
        diagnostics = [d for result in results for d in result.diagnostics] + linter.judge(results)
    run.progress.done()
    diagnostics.sort(key=Diagnostic.sort_key)
    return results, diagnostics


def report(run: Run, diagnostics: List[Diagnostic], results: Sequence[FileResult] = (),
           texts: Optional[Dict[str, str]] = None) -> None:
    """`texts`: path -> the text the diagnostics were found in, where it is not the results' (a fixed file)."""
    args = run.args
    texts = {**{r.path: r.source.text for r in results if r.source is not None}, **(texts or {})}
    notebooks = {path: text for path, text in texts.items() if is_notebook(path)}
    diagnostics = located(diagnostics, notebooks) if notebooks else diagnostics
    if args.statistics:
        sys.stdout.write(formats.statistics(diagnostics, run.applicabilities))
        return
    colour = wants_colour(sys.stdout)
    width = shutil.get_terminal_size().columns if is_terminal(sys.stdout) else None
    # snippets are shown only for findings: most files have none, and splitting every linted text took 1.5 % of
    # a cold run of a large code base
    shown = {d.path for d in diagnostics}
    sources: Dict[object, List[str]] = {path: split_lines(text) for path, text in texts.items()
                                         if path in shown and path not in notebooks}
    for path, text in notebooks.items():
        sources.update(((path, cell), lines) for cell, lines in Notebook.cell_lines(text).items())
    view = formats.View(sources=sources, paint=Paint(colour), width=width, quiet=args.quiet)
    sys.stdout.write(formats.render(args.output_format, diagnostics, run.files, run.applicabilities,
                                    view))


def print_fixes(title: str, diagnostics: List[Diagnostic], validated=None) -> None:
    """`validated`: (path, row, column, code) -> what --validate found for that fix."""
    if not diagnostics:
        return
    print(f"{title}:")
    for d in diagnostics:
        note = (validated or {}).get((d.path, d.row, d.column, d.code))
        fix = d.fix
        assert fix is not None  # only diagnostics with fixes are listed
        print(f"  {d.path}:{d.row}:{d.column + 1}: {d.code} ({fix.applicability}) {fix.message}"
              + (f" [{note}]" if note else ""))
