"""Benchmark ms_lint on real MindSpore code bases from PyPI, against the `ast.parse` floor and the other front ends.

    python benchmarks/run.py [--corpora mindcv,mindone,mindformers] [--runs 3] [--skip-pylint]

For each corpus (downloaded once with `pip download --no-deps`, see corpora.py) it prints: files, lines, the stdlib
`ast.parse` floor (read + parse every file, in process), `ms-lint check` cold (`--no-cache`, `-j 1`: one process),
warm (cache filled by a previous run), cold as run by default (`-j` unset: a worker per CPU on a large corpus),
`-j 2`, peak memory of the cold run, `pylint --load-plugins ms_lint` (ms_lint messages only), the same pylint run
without the plugin, and `flake8 --select MSL`; each the median of `--runs` runs, with its ratio to the floor, and
the cold run's ratio to the floor measured just before it, run by run (the steadiest figure on a shared machine);
the warm run's ratio to the cold run; pylint with the plugin against pylint without it, the two alternated and
compared run by run. Every tool runs as a subprocess, the way users run it, with its modules compiled to bytecode as
installed packages are.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpora import CORPORA, DEFAULT_DIRECTORY, fetch  # noqa: E402

DEFAULT_CORPORA = ("mindcv", "mindone", "mindformers")


def python_files(package: str):
    for directory, _, names in os.walk(package):
        for name in sorted(names):
            if name.endswith(".py"):
                yield os.path.join(directory, name)


def parse_floor(files) -> float:
    start = time.perf_counter()
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    return time.perf_counter() - start


# Children run with their modules compiled to bytecode, as installed packages are (pip compiles them): without
# it (PYTHONDONTWRITEBYTECODE, a source checkout) every run of every tool would compile its modules again.
BYTECODE = tempfile.mkdtemp(prefix="ms-lint-bench-bytecode-")
CHILD_ENVIRONMENT = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                     "PYTHONPYCACHEPREFIX": BYTECODE}


def timed(command, cwd) -> tuple:
    """(wall seconds, peak resident memory in MB of the child) for one run of `command`. The peak is the child's
    own (`wait4`): RUSAGE_CHILDREN would report the largest child so far, a pylint run of an earlier corpus."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors, env=CHILD_ENVIRONMENT)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 1):
            errors.seek(0)
            raise SystemExit(f"{' '.join(command)} failed ({child.returncode}):\n"
                             f"{errors.read().decode(errors='replace')[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024


def median_run(command, cwd, runs, prepare=None) -> tuple:
    times, peaks = [], []
    for _ in range(runs):
        if prepare:
            prepare()
        elapsed, peak = timed(command, cwd)
        times.append(elapsed)
        peaks.append(peak)
    return statistics.median(times), max(peaks)


def measure(name: str, package: str, runs: int, skip_pylint: bool):
    root = os.path.dirname(package)
    target = os.path.basename(package)
    files = list(python_files(package))
    lines = sum(open(f, "rb").read().count(b"\n") for f in files)
    cache = tempfile.mkdtemp(prefix="ms-lint-bench-cache-")
    ms_lint = [sys.executable, "-m", "ms_lint.cli", "check", "--select", "ALL", "--exit-zero", target]
    package_directory = importlib.util.find_spec("ms_lint").submodule_search_locations[0]
    timed([sys.executable, "-m", "compileall", "-q", package_directory], root)  # ms_lint's bytecode
    # the floor and the cold run alternate, so that each pair meets the same load on a shared machine
    floors, colds, cold_peak = [], [], 0.0
    for _ in range(runs):
        floors.append(parse_floor(files))
        elapsed, peak = timed([*ms_lint, "--no-cache", "-j", "1"], root)  # one process: the cost of linting
        colds.append(elapsed)
        cold_peak = max(cold_peak, peak)
    floor = statistics.median(floors)
    rows = [("ast.parse floor", floor, None), ("ms-lint check cold (-j 1)", statistics.median(colds), cold_peak)]
    paired = sorted(cold / floor for cold, floor in zip(colds, floors))
    timed([*ms_lint, "--cache-dir", cache, "-j", "1"], root)  # fill the cache
    warm, _ = median_run([*ms_lint, "--cache-dir", cache, "-j", "1"], root, runs)
    rows.append(("ms-lint check warm (cache)", warm, None))
    default, _ = median_run([*ms_lint, "--no-cache"], root, runs)
    rows.append(("ms-lint check cold (default -j)", default, None))
    parallel, _ = median_run([*ms_lint, "--no-cache", "-j", "2"], root, runs)
    rows.append(("ms-lint check -j 2 (cold)", parallel, None))
    shutil.rmtree(cache, ignore_errors=True)
    plugin_ratios = []
    if not skip_pylint:
        # the same pylint run without and with the plugin (pylint wants --option=value here), alternated like the
        # floor and the cold run: run as two blocks, the load of the moment made the ratio anything from 1.0x to 1.3x
        base = [sys.executable, "-m", "pylint", "--score=n", "--exit-zero", "--disable=all", "--enable=unused-import"]
        plains, pluggeds = [], []
        for _ in range(runs):
            plains.append(timed([*base, target], root)[0])
            pluggeds.append(timed([*base, "--load-plugins=ms_lint", "--enable=ms-lint", "--ms-lint-select=ALL",
                                   target], root)[0])
        rows.append(("pylint (one message, no plugin)", statistics.median(plains), None))
        rows.append(("pylint + ms_lint plugin", statistics.median(pluggeds), None))
        plugin_ratios = sorted(plugged / plain for plain, plugged in zip(plains, pluggeds))
    flake8, _ = median_run([sys.executable, "-m", "flake8", "--exit-zero", "--select", "MSL", target], root, runs)
    rows.append(("flake8 --select MSL", flake8, None))
    return files, lines, floor, rows, paired, plugin_ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default=",".join(DEFAULT_CORPORA),
                        help=f"comma-separated, from {', '.join(CORPORA)}")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement (the median is reported)")
    parser.add_argument("--directory", default=DEFAULT_DIRECTORY, help="where the corpora are downloaded")
    parser.add_argument("--skip-pylint", action="store_true", help="pylint takes minutes on the large corpora")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"{platform.platform()}; median of {args.runs} runs")
    for name in args.corpora.split(","):
        package = fetch(name, CORPORA[name], args.directory)
        files, lines, floor, rows, paired, plugin_ratios = measure(name, package, args.runs, args.skip_pylint)
        print(f"\n{name} {CORPORA[name]}: {len(files)} files, {lines:,} lines")
        print("| measurement | seconds | x floor | peak MB |\n|---|---|---|---|")
        for label, seconds, peak in rows:
            print(f"| {label} | {seconds:.2f} | {seconds / floor:.1f} | {f'{peak:.0f}' if peak else ''} |")
        print(f"cold / floor, run by run (each cold run right after its floor): median "
              f"{statistics.median(paired):.2f}x ({', '.join(f'{ratio:.2f}' for ratio in paired)})")
        seconds = {label: value for label, value, _ in rows}
        print(f"warm / cold: {seconds['ms-lint check warm (cache)'] / seconds['ms-lint check cold (-j 1)']:.3f}x")
        if plugin_ratios:
            print(f"pylint with the plugin / without, run by run (each right after the other): median "
                  f"{statistics.median(plugin_ratios):.2f}x ({', '.join(f'{r:.2f}' for r in plugin_ratios)})")


if __name__ == "__main__":
    main()
