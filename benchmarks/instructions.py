"""Instructions of a cold run against the `ast.parse` floor, counted by callgrind: the load does not change them.

    python benchmarks/instructions.py [--corpus mindone] [--every N]

Seconds on a shared machine vary by a fifth from one minute to the next, and the floor varies more than the cold
run does (mindone's floor took 4.6 s in one session and 10.7 s in another, for the same parse). Instructions do
not vary: this counts them for the floor (read + `ast.parse` of every file, one process, as `run.py` times it)
and for `ms-lint check --select ALL --no-cache -j 1` on the same files, with ms_lint's bytecode compiled first.
They rank versions and give the ratio of work done; they are not seconds: the parser's C code does more per cycle
than the interpreter does, so a run three times the floor's instructions takes about four times its seconds.

`--every N` counts every Nth file of the corpus (sorted by path, copied with their directories) instead of all of
it: the whole of mindone takes about an hour under callgrind, every 12th file a few minutes. Needs valgrind
(`apt-get install valgrind`).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpora import CORPORA, DEFAULT_DIRECTORY, fetch  # noqa: E402
from run import BYTECODE, CHILD_ENVIRONMENT  # noqa: E402

# the floor as `run.py` times it, in a process of its own (the interpreter's start is in both counts)
FLOOR = """
import ast, os, sys
for directory, _, names in os.walk(sys.argv[1]):
    for name in sorted(names):
        if name.endswith(".py"):
            with open(os.path.join(directory, name), "rb") as handle:
                data = handle.read()
            try:
                ast.parse(data)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                pass
"""
_COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(command, cwd: str) -> int:
    """The instructions callgrind counts for one run of `command` (its whole process)."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", *command],
                              cwd=cwd, env=CHILD_ENVIRONMENT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    found = _COLLECTED.search(done.stderr)
    if done.returncode not in (0, 1) or found is None:
        raise SystemExit(f"{' '.join(command)} failed under callgrind ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def sampled(package: str, every: int, into: str) -> str:
    """Every `every`th `.py` file of `package`, sorted by path, copied under `into` with its directories."""
    root = os.path.dirname(package)
    files = sorted(os.path.relpath(os.path.join(directory, name), root)
                   for directory, _, names in os.walk(package) for name in names if name.endswith(".py"))
    for relative in files[::every]:
        os.makedirs(os.path.join(into, os.path.dirname(relative)), exist_ok=True)
        shutil.copyfile(os.path.join(root, relative), os.path.join(into, relative))
    return os.path.join(into, os.path.basename(package))


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="mindone", choices=sorted(CORPORA))
    parser.add_argument("--every", type=_positive, default=1, help="count every Nth file only (default: all of them)")
    parser.add_argument("--directory", default=DEFAULT_DIRECTORY, help="where the corpora are downloaded")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed (apt-get install valgrind)")
    package = fetch(args.corpus, CORPORA[args.corpus], args.directory)
    with tempfile.TemporaryDirectory(prefix="ms-lint-instructions-") as copy:
        if args.every > 1:
            package = sampled(package, args.every, copy)
        root, target = os.path.dirname(package), os.path.basename(package)
        files = sum(name.endswith(".py") for _, _, names in os.walk(package) for name in names)
        lint = [sys.executable, "-m", "ms_lint.cli", "check", "--select", "ALL", "--exit-zero", "--no-cache",
                "-j", "1", "-q", target]
        # ms_lint's modules compiled to bytecode (`BYTECODE`), as an installed package has them
        subprocess.run(lint, cwd=root, env=CHILD_ENVIRONMENT, stdout=subprocess.DEVNULL, check=False)
        floor = instructions([sys.executable, "-c", FLOOR, target], root)
        cold = instructions(lint, root)
    shutil.rmtree(BYTECODE, ignore_errors=True)
    sample = f", every {args.every}th file" if args.every > 1 else ""
    print(f"{args.corpus} {CORPORA[args.corpus]}{sample}: {files} files")
    print(f"floor (read + ast.parse): {floor:,} instructions")
    print(f"ms-lint check cold (-j 1, --select ALL): {cold:,} instructions, {cold / floor:.2f}x the floor")


if __name__ == "__main__":
    main()
