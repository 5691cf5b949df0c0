"""How much of what MindSpore 2.10's graph compiler rejects ms_lint reports, on MindSpore's own graph-syntax tests.

    python benchmarks/graph_failures.py import GIT_DIR [--rev REV] [--limit 150]   # build the corpus, once
    python benchmarks/graph_failures.py [--jobs 2] [--timeout 300] [--json OUT]    # label (cached), lint, report

Corpus. Test files of the MindSpore repository (github.com/mindspore-ai/mindspore; any clone or mirror sharing its
history, e.g. the `mindspore-ai/mindspore_test` snapshot) under tests/ut/python/graph_syntax,
tests/st/compiler/graph_syntax, tests/st/compiler/syntax, tests/ut/python/pipeline/parse and
tests/st/compiler/fallback (the old tests/st/{fallback,syntax}), one file of each directory in turn up to the limit,
copied verbatim by `import` from commit REV into ~/.cache/ms-lint-corpora/mindspore-tests/<same path>, with
MANIFEST.txt (repository, commit, path, blob of each file). A file is taken when it has module-level `def test_*`
functions and graph code (`construct`, `jit`) and needs no device but the CPU, no dataset, no distributed setup, no
subprocess and no IR dumps, no other framework. The corpus is reference data: never commit it.

Labels. Each file runs in one subprocess per mode (`--child`), every module-level `test_*` function called in
turn (once per `pytest.mark.parametrize` case; a test with other parameters, i.e. fixtures, is skipped), after
the module's AST is rewritten: the body of each `with pytest.raises(...)` block runs directly (statements that
read the block's `as` name afterwards are dropped, transitively), `pytest.raises(E, f, *a)` becomes `f(*a)`, the
decorators of test functions are dropped. Before each test the environment and syntax level the module left at
import are restored and the mode is set again.
  GRAPH: `set_context(mode=GRAPH_MODE, device_target="CPU")`; a test's own `set_context(mode=...)` keeps GRAPH.
  EAGER: `MS_JIT=0` (2.10's switch: `@jit`/`jit(...)` functions call the Python function, `Cell.__call__` skips
  graph compilation) and PYNATIVE_MODE forced the same way; `Cell.compile` and `_cell_graph_executor.compile`
  call the Cell instead of compiling it.
A test is a *graph-only failure* when GRAPH raises something other than AssertionError (or the compiler kills
the process) and EAGER passes, *compiles* when GRAPH passes; *wrong value* (GRAPH raises AssertionError; listed
when EAGER passes), *fails differently* (both raise, different exception types; counted apart), *both fail* and
*skipped* (fixtures, `pytest.skip`, timeouts, EAGER crashes, modules that do not import) are left out of the
figures. Labels are cached in
~/.cache/ms-lint-corpora/mindspore-tests-labels.json, keyed by the file's SHA-256 and LABEL_VERSION: re-runs only
lint.

Lint and match. `ms-lint check --select ALL --output-format json --no-cache` once over the corpus. A test's code
is its function plus every module-level class, function or assignment it reaches by name, transitively (a class
with its whole body); a finding counts for a test when its line lies in that code. Reported: recall (graph-only
failures with a finding, with an error finding), false errors (compiling tests with an error finding, each
finding listed), and the graph-only failures grouped by exception type and masked message head, most missed
first. `--json OUT` writes all of it.
"""
from __future__ import annotations

import argparse
import ast
import collections
import concurrent.futures
import contextlib
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

CACHE_ROOT = os.path.join(os.path.expanduser("~"), ".cache", "ms-lint-corpora")
DEFAULT_CORPUS = os.path.join(CACHE_ROOT, "mindspore-tests")
DEFAULT_LABELS = os.path.join(CACHE_ROOT, "mindspore-tests-labels.json")
LABEL_VERSION = "3"
SOURCE_DIRECTORIES = (
    "tests/ut/python/graph_syntax",
    "tests/st/compiler/graph_syntax",
    "tests/st/compiler/syntax",
    "tests/ut/python/pipeline/parse",
    "tests/st/compiler/fallback",
    # before the move to tests/st/compiler (older commits)
    "tests/st/syntax",
    "tests/st/fallback",
)
# helpers the tests import (`from tests.mark_utils import arg_mark`): copied too, never labelled
SUPPORT_FILES = ("tests/mark_utils.py", "tests/st/common/random_generator.py", "tests/st/compiler/utils.py",
                 "tests/ut/python/ut_filter.py")
EXCLUDING_PATTERNS = {
    "device": re.compile(r"[\"'](Ascend|GPU)[\"']|platform_ascend'\]|jit_level=[\"']O2"),
    "dataset": re.compile(r"mindspore\.dataset|import dataset"),
    "distributed": re.compile(r"communication|auto_parallel|parallel_mode"),
    "subprocess": re.compile(r"\bsubprocess\b|os\.system"),
    "IR dumps": re.compile(r"SAVE_GRAPHS|DUMP_IR|save_graphs"),
    "test framework": re.compile(r"mindspore_test_framework|security_utils"),
    "other frameworks": re.compile(r"^\s*(import|from)\s+(torch|tensorflow|jax|paddle)\b", re.MULTILINE),
}
STACK_SECTION = re.compile(r"^\s*- (C\+\+ Call Stack|Python Call Stack|The Traceback)", re.MULTILINE)
GRAPH_CODE = re.compile(r"\bdef construct\b|\bjit\b")
PASS, ASSERT, FAIL, SKIP, TIMEOUT, CRASH = "pass", "assert", "fail", "skip", "timeout", "crash"
GRAPH_ONLY, COMPILES, BOTH_FAIL, DIFFERENT, WRONG_VALUE, SKIPPED = (
    "graph-only failure", "compiles", "both fail", "fails differently", "wrong value", "skipped")


# ----------------------------------------------------------------------------------------------------- corpus ---

def excluded_because(source: str) -> Optional[str]:
    """Why a test file is not taken into the corpus (None: it is taken)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "unparsable"
    if not any(isinstance(node, ast.FunctionDef) and node.name.startswith("test_") for node in tree.body):
        return "no module-level test_ function"
    if not GRAPH_CODE.search(source):
        return "no graph code"
    for reason, pattern in EXCLUDING_PATTERNS.items():
        if pattern.search(source):
            return reason
    return None


def git(git_dir: str, *arguments: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *arguments], check=True, capture_output=True,
                          text=True).stdout


def import_corpus(git_dir: str, rev: str, destination: str, limit: int, repository: str) -> None:
    """Copy up to `limit` test files of commit `rev` of the MindSpore repository at `git_dir` into `destination`.

    The eligible files of SOURCE_DIRECTORIES are taken in turn, one of each directory, in path order.
    """
    commit = git(git_dir, "rev-parse", rev).strip()
    listing = git(git_dir, "ls-tree", "-r", commit, "--", *SOURCE_DIRECTORIES, *SUPPORT_FILES).splitlines()
    blobs = {line.split("\t", 1)[1]: line.split()[2] for line in listing}
    eligible: List[List[str]] = []
    reasons: collections.Counter = collections.Counter()
    for directory in SOURCE_DIRECTORIES:
        taken = []
        for path in sorted(p for p in blobs if p.startswith(directory + "/")):
            name = os.path.basename(path)
            if name.startswith("test_") and name.endswith(".py"):
                reason = excluded_because(git(git_dir, "cat-file", "blob", blobs[path]))
                reasons[reason or "eligible"] += 1
                if reason is None:
                    taken.append(path)
        eligible.append(taken)
    # one file of each directory in turn, so that a limit keeps every directory represented
    interleaved = [p for row in itertools.zip_longest(*eligible) for p in row if p is not None]
    chosen = sorted(interleaved[:limit])
    if os.path.isdir(destination):
        shutil.rmtree(destination)
    rows = []
    for path in chosen + [p for p in SUPPORT_FILES if p in blobs]:
        target = os.path.join(destination, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(subprocess.run(["git", "--git-dir", git_dir, "cat-file", "blob", blobs[path]],
                                        check=True, capture_output=True).stdout)
        rows.append(f"{repository}\t{commit}\t{path}\t{blobs[path]}")
    with open(os.path.join(destination, "MANIFEST.txt"), "w") as handle:
        handle.write(f"# copied by benchmarks/graph_failures.py from {git_dir} ({rev}), {len(chosen)} test files\n")
        handle.write("# repository\tcommit\tpath\tblob (support files: tests/mark_utils.py & co, not labelled)\n")
        handle.write("\n".join(rows) + "\n")
    print(f"{len(chosen)} test files from {repository}@{commit[:12]} into {destination}; "
          f"files seen: {dict(reasons)}")


def corpus_files(corpus: str) -> List[str]:
    """The labelled test files of the corpus, as listed in its MANIFEST.txt."""
    with open(os.path.join(corpus, "MANIFEST.txt")) as handle:
        paths = [line.split("\t")[2] for line in handle if line.strip() and not line.startswith("#")]
    return [os.path.join(corpus, p) for p in paths if os.path.basename(p).startswith("test_")]


# ------------------------------------------------------------------------------------------ test rewriting ---

def is_pytest_call(node: ast.AST, attribute: str) -> bool:
    """`pytest.<attribute>(...)` (or a bare `<attribute>(...)` imported from pytest)."""
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    if isinstance(function, ast.Attribute):
        return function.attr == attribute and isinstance(function.value, ast.Name) and function.value.id == "pytest"
    return isinstance(function, ast.Name) and function.id == attribute


def reads_any(node: ast.AST, names: Set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def unwrap_block(block: List[ast.stmt]) -> List[ast.stmt]:
    """The statements of `block` with each `pytest.raises` block replaced by its body.

    Statements after it that read the block's `as` name are dropped, and so, transitively, are the statements
    reading a name a dropped statement binds (`info = str(exc.value)`, then `assert "..." in info`).
    """
    result: List[ast.stmt] = []
    dropped: Set[str] = set()
    for statement in block:
        if dropped and reads_any(statement, dropped):
            dropped |= {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            continue
        if isinstance(statement, ast.With) and any(is_pytest_call(i.context_expr, "raises") for i in statement.items):
            for item in statement.items:
                if is_pytest_call(item.context_expr, "raises") and isinstance(item.optional_vars, ast.Name):
                    dropped.add(item.optional_vars.id)
            others = [i for i in statement.items if not is_pytest_call(i.context_expr, "raises")]
            if others:
                statement.items = others
                result.append(statement)
            else:
                result.extend(statement.body)
        elif (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
              and is_pytest_call(statement.value, "raises") and len(statement.value.args) >= 2):
            call = statement.value
            statement.value = ast.Call(func=call.args[1], args=call.args[2:], keywords=call.keywords)
            result.append(statement)
        else:
            result.append(statement)
    return result


class RaisesUnwrapper(ast.NodeTransformer):
    """Runs the code under `pytest.raises` directly, in every statement list of a module."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, unwrap_block(block) or [ast.Pass()])
        return node


def test_functions(tree: ast.Module) -> Dict[str, ast.FunctionDef]:
    """Module-level `test_*` functions by name (the last definition of a name wins, as at run time)."""
    return {node.name: node for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def rewrite_module(source: str) -> Tuple[ast.Module, Dict[str, List[Tuple[str, str]]]]:
    """The module to run, and each test's parametrize decorators as (argnames, argvalues) source texts."""
    tree = ast.parse(source)
    parametrize: Dict[str, List[Tuple[str, str]]] = {}
    for name, function in test_functions(tree).items():
        specs = []
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) \
                    and decorator.func.attr == "parametrize" and len(decorator.args) >= 2:
                specs.append((ast.unparse(decorator.args[0]), ast.unparse(decorator.args[1])))
        parametrize[name] = specs[::-1]
        function.decorator_list = []
    tree = RaisesUnwrapper().visit(tree)
    return ast.fix_missing_locations(tree), parametrize


# ------------------------------------------------------------------------------ child: running one file ---

def patch_mindspore(mode: str) -> Any:
    """Import MindSpore with the mode of `mode` forced on every `set_context` and, for EAGER, no compilation."""
    import mindspore
    from mindspore import context
    from mindspore.common.api import _cell_graph_executor

    forced = mindspore.GRAPH_MODE if mode == "graph" else mindspore.PYNATIVE_MODE
    original = mindspore.set_context

    def set_context(**kwargs):
        if "mode" in kwargs:
            kwargs["mode"] = forced
        return original(**kwargs)

    mindspore.set_context = context.set_context = set_context
    if mode == "eager":
        def call_instead(obj, *args, **kwargs):
            return obj(*args)

        def cell_compile(self, *args, **kwargs):
            return self(*args, **kwargs)

        _cell_graph_executor.compile = call_instead
        mindspore.nn.Cell.compile = cell_compile
    return mindspore


def expand_cases(module: Any, function: Any, specs: List[Tuple[str, str]]) -> List[Tuple[str, Optional[dict]]]:
    """(case id, keyword arguments) for each parametrize case; None arguments: the test cannot be called."""
    import inspect

    import pytest
    parameters = list(inspect.signature(function).parameters)
    axes = []
    for names_source, values_source in specs:
        names = eval(names_source, vars(module), {"pytest": pytest})
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        values = list(eval(values_source, vars(module), {"pytest": pytest}))
        rows = []
        for value in values:
            if type(value).__name__ == "ParameterSet":  # pytest.param(...)
                value = tuple(value.values) if len(names) > 1 else value.values[0]
            rows.append(dict(zip(names, value)) if len(names) > 1 else {names[0]: value})
        axes.append(rows)
    cases = []
    for index, combination in enumerate(itertools.product(*axes)):
        arguments: dict = {}
        for row in combination:
            arguments.update(row)
        missing = [p for p in parameters if p not in arguments]
        case_id = function.__name__ + (f"[{index}]" if axes else "")
        cases.append((case_id, None if missing else arguments))
    return cases


def describe(error: BaseException) -> Tuple[str, str]:
    """The exception's type and the first meaningful line of its message (before MindSpore's call stacks)."""
    lines = [line.strip() for line in STACK_SECTION.split(str(error), 1)[0].splitlines()]
    lines = [line for line in lines if line and not set(line) <= set("-= ") and not line.startswith("Traceback")]
    return type(error).__name__, (lines[0] if lines else "")[:300]


def run_case(function: Any, arguments: dict) -> dict:
    import pytest
    started = time.time()
    result: Dict[str, Any]
    try:
        function(**arguments)
        result = {"status": PASS}
    except AssertionError as error:
        result = {"status": ASSERT, "type": "AssertionError", "message": describe(error)[1]}
    except pytest.skip.Exception as error:
        result = {"status": SKIP, "type": "Skipped", "message": describe(error)[1]}
    except BaseException as error:  # noqa: B036 - SystemExit and MindSpore's own errors are test outcomes too
        kind, message = describe(error)
        result = {"status": FAIL, "type": kind, "message": message}
    result["seconds"] = round(time.time() - started, 3)
    return result


def child_main(path: str, mode: str, start: int, out: str) -> None:
    """Run the tests of `path` from case number `start`, appending one JSON line per event to `out`."""
    os.environ["MS_JIT"] = "0" if mode == "eager" else "1"
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    mindspore = patch_mindspore(mode)
    forced = mindspore.GRAPH_MODE if mode == "graph" else mindspore.PYNATIVE_MODE
    corpus_root = path[:path.index(os.sep + "tests" + os.sep)] if os.sep + "tests" + os.sep in path else None
    if corpus_root:
        sys.path.insert(0, corpus_root)
    with open(path) as handle:
        source = handle.read()
    tree, parametrize = rewrite_module(source)

    def emit(record: dict) -> None:
        with open(out, "a") as handle:
            handle.write(json.dumps(record) + "\n")

    import types
    relative = os.path.relpath(path, corpus_root) if corpus_root else os.path.basename(path)
    module = types.ModuleType(os.path.splitext(relative)[0].replace(os.sep, "."))
    module.__file__ = path
    module.__package__ = module.__name__.rpartition(".")[0]
    sys.modules[module.__name__] = module
    mindspore.set_context(mode=forced, device_target="CPU")
    try:
        exec(compile(tree, path, "exec"), vars(module))
    except BaseException as error:  # noqa: B036
        kind, message = describe(error)
        emit({"event": "import-error", "type": kind, "message": message})
        return
    environment = dict(os.environ)
    syntax_level = mindspore.get_context("jit_syntax_level")
    cases: List[Tuple[str, Any, Optional[dict]]] = []
    for name in parametrize:
        try:
            cases.extend((case_id, vars(module)[name], arguments)
                         for case_id, arguments in expand_cases(module, vars(module)[name], parametrize[name]))
        except Exception as error:
            cases.append((name, None, {"error": "parametrize: " + " ".join(describe(error))}))
    emit({"event": "cases", "cases": [case_id for case_id, _, _ in cases]})
    for index, (case_id, function, arguments) in enumerate(cases):
        if index < start:
            continue
        emit({"event": "start", "index": index})
        if function is None or arguments is None:
            why = (arguments or {}).get("error", "needs fixtures")
            emit({"event": "result", "index": index, "case": case_id, "status": SKIP, "type": "Skipped",
                  "message": why, "seconds": 0})
            continue
        os.environ.clear()
        os.environ.update(environment)
        mindspore.set_context(mode=forced, device_target="CPU")
        with contextlib.suppress(Exception):
            mindspore.set_context(jit_syntax_level=syntax_level)
        emit({"event": "result", "index": index, "case": case_id, **run_case(function, arguments)})
        sys.stdout.flush()


# ------------------------------------------------------------------------------------- parent: labelling ---

def read_events(out: str) -> Tuple[List[str], Dict[str, dict], Optional[int], Optional[dict]]:
    """What a child wrote: its cases, their results, the case it was running when it stopped, its import error."""
    cases: List[str] = []
    results: Dict[str, dict] = {}
    current = import_error = None
    with open(out) as handle:
        for line in handle:
            record = json.loads(line)
            if record["event"] == "import-error":
                import_error = {k: v for k, v in record.items() if k != "event"}
            elif record["event"] == "cases":
                cases = record["cases"]
            elif record["event"] == "start":
                current = record["index"]
            elif record["event"] == "result":
                case_id = record.pop("case")
                results[case_id] = {k: v for k, v in record.items() if k not in ("event", "index")}
                current = None
    return cases, results, current, import_error


def run_child(path: str, mode: str, deadline: float) -> Tuple[Dict[str, dict], Optional[dict]]:
    """Results per case of one file in one mode, and the import error if the module did not import.

    A child that dies or runs out of time loses the case it was running (CRASH, TIMEOUT); after a crash a new
    child goes on with the next case, after the deadline the cases not run are TIMEOUT.
    """
    results: Dict[str, dict] = {}
    start = 0
    environment = {**os.environ, "GLOG_v": "3", "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory(prefix="ms-graph-failures-") as work:
        out = os.path.join(work, "events.jsonl")
        while True:
            open(out, "w").close()
            command = [sys.executable, os.path.abspath(__file__), "--child", mode, "--start", str(start), path, out]
            timed_out = False
            try:
                done = subprocess.run(command, cwd=work, env=environment, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, timeout=max(deadline - time.time(), 1))
                code = done.returncode
            except subprocess.TimeoutExpired:
                timed_out, code = True, None
            cases, new, current, import_error = read_events(out)
            results.update(new)
            if import_error or not cases:
                return {}, import_error or {"type": "TIMEOUT" if timed_out else f"exit {code}", "message": ""}
            if current is not None:
                results[cases[current]] = ({"status": TIMEOUT, "seconds": None} if timed_out else
                                           {"status": CRASH, "type": "Crash", "seconds": None,
                                            "message": f"the process died (exit code {code})"})
            if timed_out or current is None or current + 1 >= len(cases):
                for case_id in cases:
                    results.setdefault(case_id, {"status": TIMEOUT if timed_out else CRASH, "seconds": None})
                return results, None
            start = current + 1


def label(graph: Optional[dict], eager: Optional[dict]) -> str:
    """The label of one test from its GRAPH and EAGER results.

    A GRAPH crash (the compiler killing the process) is a failure like an exception. Both failing with different
    exception types (`raise UserWarning(...)`: RuntimeError in GRAPH, UserWarning in EAGER) is "fails differently".
    """
    if graph is None or eager is None or graph["status"] in (SKIP, TIMEOUT):
        return SKIPPED
    if graph["status"] == PASS:
        return COMPILES
    if graph["status"] == ASSERT:
        return WRONG_VALUE
    if eager["status"] == PASS:
        return GRAPH_ONLY
    if eager["status"] in (SKIP, TIMEOUT, CRASH):
        return SKIPPED
    return BOTH_FAIL if eager.get("type") == graph.get("type") else DIFFERENT


def label_file(path: str, timeout: float) -> dict:
    """Both modes of one file: {"tests": {case: {"graph", "eager", "label"}}, "seconds", "import_error"}.

    When the module does not import in a mode, its tests are all skipped (the import error is kept).
    """
    started = time.time()
    modes, import_errors = {}, {}
    for mode in ("graph", "eager"):
        modes[mode], import_errors[mode] = run_child(path, mode, time.time() + timeout)
    tests: Dict[str, dict] = {}
    if any(import_errors.values()):
        with open(path) as handle:
            names = list(test_functions(ast.parse(handle.read())))
        for case_id in list(modes["graph"]) + list(modes["eager"]) + names:
            tests.setdefault(case_id, {"graph": modes["graph"].get(case_id), "eager": modes["eager"].get(case_id),
                                       "label": SKIPPED})
    else:
        for case_id in list(modes["graph"]) + [c for c in modes["eager"] if c not in modes["graph"]]:
            graph, eager = modes["graph"].get(case_id), modes["eager"].get(case_id)
            tests[case_id] = {"graph": graph, "eager": eager, "label": label(graph, eager)}
    return {"tests": tests, "seconds": round(time.time() - started, 1),
            "import_error": {m: e for m, e in import_errors.items() if e}}


def file_hash(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(LABEL_VERSION.encode() + b"\0" + handle.read()).hexdigest()


def load_labels(cache: str) -> dict:
    if os.path.exists(cache):
        with open(cache) as handle:
            return json.load(handle)
    return {"files": {}}


def save_labels(cache: str, labels: dict) -> None:
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    with open(cache + ".tmp", "w") as handle:
        json.dump(labels, handle, indent=1, sort_keys=True)
    os.replace(cache + ".tmp", cache)


def label_corpus(files: Sequence[str], corpus: str, cache: str, jobs: int, timeout: float) -> Tuple[dict, dict]:
    """Labels of every file (from the cache, or computed `jobs` files at a time) and the labelling run's timing."""
    labels = load_labels(cache)
    todo = [p for p in files if file_hash(p) not in labels["files"]]
    lock = threading.Lock()
    started = time.time()

    def work(path: str) -> None:
        result = label_file(path, timeout)
        result["path"] = os.path.relpath(path, corpus)
        with lock:
            labels["files"][file_hash(path)] = result
            save_labels(cache, labels)
            done = sum(1 for p in todo if file_hash(p) in labels["files"])
            print(f"  labelled {done}/{len(todo)} {result['path']} ({result['seconds']} s)", file=sys.stderr)

    if todo:
        print(f"labelling {len(todo)} files, {jobs} at a time", file=sys.stderr)
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(work, todo))
        labels.setdefault("runs", []).append({"files": len(todo), "jobs": jobs, "timeout": timeout,
                                              "wall_seconds": round(time.time() - started, 1)})
        save_labels(cache, labels)
    return {p: labels["files"][file_hash(p)] for p in files}, {"labelled_now": len(todo),
                                                               "runs": labels.get("runs", [])}


# ------------------------------------------------------------------------------------- lint and matching ---

def ms_lint_version() -> str:
    """The commit of the ms_lint checkout that lints (with `+dirty` when ms_lint/ has uncommitted changes)."""
    import ms_lint
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(ms_lint.__file__)))
    try:
        commit = git(os.path.join(checkout, ".git"), "rev-parse", "--short=12", "HEAD").strip()
        dirty = subprocess.run(["git", "-C", checkout, "status", "--porcelain", "--", "ms_lint"],
                               capture_output=True, text=True).stdout.strip()
    except (subprocess.CalledProcessError, OSError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def run_lint(files: Sequence[str]) -> Tuple[List[dict], dict]:
    """ms_lint's findings on `files` (every rule, no cache) and how the run went."""
    command = [sys.executable, "-m", "ms_lint", "check", "--select", "ALL", "--output-format", "json",
               "--no-cache", "--exit-zero", "-q", *files]
    started = time.time()
    done = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir())
    status = {"exit_code": done.returncode, "seconds": round(time.time() - started, 1), "ms_lint": ms_lint_version(),
              "stderr": done.stderr.strip()[-2000:]}
    try:
        findings = json.loads(done.stdout)
    except json.JSONDecodeError:
        status["crash"] = "output is not JSON: " + done.stdout[:500]
        return [], status
    if done.returncode not in (0, 1) or "Traceback" in done.stderr:
        status["crash"] = done.stderr.strip()[-2000:]
    return findings, status


def top_level_names(tree: ast.Module) -> Dict[str, List[ast.stmt]]:
    """Module-level classes, functions and assignments by the names they bind."""
    names: Dict[str, List[ast.stmt]] = collections.defaultdict(list)
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[statement.name].append(statement)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        names[node.id].append(statement)
    return names


def statement_lines(statement: ast.stmt) -> Tuple[int, int]:
    decorators = getattr(statement, "decorator_list", [])
    first = min([statement.lineno] + [d.lineno for d in decorators])
    return first, statement.end_lineno or statement.lineno


def test_code_lines(tree: ast.Module) -> Dict[str, List[Tuple[int, int]]]:
    """The line ranges of each test's code: its function and what it reaches by name, transitively."""
    names = top_level_names(tree)
    regions = {}
    for name, function in test_functions(tree).items():
        seen: Set[int] = {id(function)}
        reached: List[ast.stmt] = [function]
        queue: List[ast.stmt] = [function]
        while queue:
            statement = queue.pop()
            for used in {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}:
                for definition in names.get(used, ()):
                    if id(definition) not in seen:
                        seen.add(id(definition))
                        reached.append(definition)
                        queue.append(definition)
        regions[name] = sorted(statement_lines(s) for s in reached)
    return regions


def findings_by_test(path: str, findings: Iterable[dict]) -> Dict[str, List[dict]]:
    with open(path) as handle:
        regions = test_code_lines(ast.parse(handle.read()))
    matched: Dict[str, List[dict]] = {name: [] for name in regions}
    for finding in findings:
        row = finding["location"]["row"]
        for name, ranges in regions.items():
            if any(first <= row <= last for first, last in ranges):
                matched[name].append(finding)
    return matched


# ------------------------------------------------------------------------------------------------- report ---

def message_head(kind: str, message: str) -> str:
    """Exception type and the first ~80 characters of its message, quoted names and numbers masked."""
    head = re.sub(r"(/[\w.\-]+)+", "/…", message)
    head = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'_'", head)
    head = re.sub(r"0x[0-9a-fA-F]+|\b\d+(\.\d+)?\b", "N", head)
    head = re.sub(r"\s+", " ", head).strip()
    return f"{kind}: {head[:80]}"


def function_of(case_id: str) -> str:
    return case_id.split("[", 1)[0]


def collect(labels: Dict[str, dict], findings: List[dict], corpus: str) -> List[dict]:
    """One row per test case: file, case, label, GRAPH result, the findings in its code."""
    per_file: Dict[str, List[dict]] = collections.defaultdict(list)
    for finding in findings:
        per_file[os.path.realpath(os.path.join(tempfile.gettempdir(), finding["filename"]))].append(finding)
    rows = []
    for path, result in labels.items():
        matched = findings_by_test(path, per_file.get(os.path.realpath(path), []))
        for case_id, test in result["tests"].items():
            found = matched.get(function_of(case_id), [])
            rows.append({"file": os.path.relpath(path, corpus), "test": case_id, "label": test["label"],
                         "graph": test["graph"], "eager": test["eager"],
                         "findings": [{"line": f["location"]["row"], "code": f["code"], "severity": f["severity"],
                                       "message": f["message"]} for f in found]})
    return rows


def has_error(row: dict) -> bool:
    return any(f["severity"] == "error" for f in row["findings"])


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100.0 * part / whole:.1f}%" if whole else f"{part}/0"


def group_failures(rows: List[dict]) -> List[dict]:
    """Graph-only failures grouped by exception type and masked message head, most missed first."""
    groups: Dict[str, dict] = {}
    for row in rows:
        if row["label"] != GRAPH_ONLY:
            continue
        key = message_head(row["graph"]["type"], row["graph"].get("message", ""))
        group = groups.setdefault(key, {"key": key, "count": 0, "any": 0, "error": 0, "rules": collections.Counter(),
                                        "missed_example": None, "example": None})
        group["count"] += 1
        group["any"] += bool(row["findings"])
        group["error"] += has_error(row)
        group["rules"].update({f["code"] for f in row["findings"]})
        example = f"{row['file']}::{row['test']} ({row['graph'].get('message', '')[:100]})"
        group["example"] = group["example"] or example
        if not row["findings"] and group["missed_example"] is None:
            group["missed_example"] = example
    ordered = sorted(groups.values(), key=lambda g: (-(g["count"] - g["any"]), -g["count"], g["key"]))
    for group in ordered:
        group["rules"] = dict(group["rules"].most_common())
    return ordered


def false_errors(rows: List[dict]) -> List[dict]:
    """Each error finding in the code of a compiling test, with the compiling tests it is in."""
    seen: Dict[Tuple[str, int, str, str], List[str]] = collections.defaultdict(list)
    for row in rows:
        if row["label"] == COMPILES:
            for finding in row["findings"]:
                if finding["severity"] == "error":
                    seen[(row["file"], finding["line"], finding["code"], finding["message"])].append(row["test"])
    return [{"file": f, "line": line, "code": code, "message": message, "tests": tests}
            for (f, line, code, message), tests in sorted(seen.items())]


LABEL_PRIORITY = (GRAPH_ONLY, COMPILES, WRONG_VALUE, DIFFERENT, BOTH_FAIL, SKIPPED)


def by_function(rows: List[dict]) -> List[dict]:
    """One row per test function: a graph-only failure if one of its cases is, else compiles if one case does."""
    functions: Dict[Tuple[str, str], dict] = {}
    for row in rows:
        key = (row["file"], function_of(row["test"]))
        kept = functions.setdefault(key, row)
        if LABEL_PRIORITY.index(row["label"]) < LABEL_PRIORITY.index(kept["label"]):
            functions[key] = row
    return list(functions.values())


def silent_differences(rows: List[dict]) -> List[dict]:
    """Tests whose GRAPH run gives a wrong value (AssertionError) where EAGER passes: not in the figures."""
    return [{"file": r["file"], "test": r["test"], "message": r["graph"].get("message", ""),
             "findings": sorted({f["code"] for f in r["findings"]})}
            for r in rows if r["label"] == WRONG_VALUE and r["eager"] and r["eager"]["status"] == PASS]


def summarize(rows: List[dict], lint_status: dict, timing: dict, files: int) -> dict:
    counts = collections.Counter(row["label"] for row in rows)
    functions = by_function(rows)
    function_failures = [r for r in functions if r["label"] == GRAPH_ONLY]
    function_compiling = [r for r in functions if r["label"] == COMPILES]
    failures = [r for r in rows if r["label"] == GRAPH_ONLY]
    compiling = [r for r in rows if r["label"] == COMPILES]
    different = [r for r in rows if r["label"] == DIFFERENT]
    return {
        "files": files, "tests": len(rows), "labels": dict(counts), "functions": len(functions),
        "function_labels": dict(collections.Counter(r["label"] for r in functions)),
        "function_recall_any": [sum(bool(r["findings"]) for r in function_failures), len(function_failures)],
        "function_recall_error": [sum(has_error(r) for r in function_failures), len(function_failures)],
        "function_false_error": [sum(has_error(r) for r in function_compiling), len(function_compiling)],
        "recall_any": [sum(bool(r["findings"]) for r in failures), len(failures)],
        "recall_error": [sum(has_error(r) for r in failures), len(failures)],
        "false_error_tests": [sum(has_error(r) for r in compiling), len(compiling)],
        "compiles_with_any_finding": [sum(bool(r["findings"]) for r in compiling), len(compiling)],
        "different_any": [sum(bool(r["findings"]) for r in different), len(different)],
        "different_error": [sum(has_error(r) for r in different), len(different)],
        "lint": lint_status, "labelling": timing,
    }


def print_report(summary: dict, groups: List[dict], errors: List[dict], silent: List[dict], top: int) -> None:
    print(f"corpus: {summary['files']} files, {summary['tests']} test cases; labels: {summary['labels']}")
    print(f"lint: ms_lint {summary['lint']['ms_lint']}, {summary['lint']['seconds']} s, "
          f"exit {summary['lint']['exit_code']}"
          + (f", CRASH: {summary['lint']['crash'][:300]}" if "crash" in summary["lint"] else ""))
    runs = summary["labelling"]["runs"]
    if runs:
        print(f"labelling: last run {runs[-1]['wall_seconds']} s for {runs[-1]['files']} files "
              f"({runs[-1]['jobs']} at a time); {summary['labelling']['labelled_now']} files labelled now")
    print()
    print(f"recall, any finding:   {share(*summary['recall_any'])} graph-only failures")
    print(f"recall, error finding: {share(*summary['recall_error'])} graph-only failures")
    print(f"false errors:          {share(*summary['false_error_tests'])} compiling tests have an error finding "
          f"(any finding: {share(*summary['compiles_with_any_finding'])})")
    print(f"per test function ({summary['functions']}, parametrize cases merged): recall any "
          f"{share(*summary['function_recall_any'])}, error {share(*summary['function_recall_error'])}; "
          f"false errors {share(*summary['function_false_error'])}")
    print(f"(not in the figures) tests failing differently in GRAPH and EAGER: {summary['different_any'][1]}, "
          f"with a finding {summary['different_any'][0]}, with an error finding {summary['different_error'][0]}")
    print()
    print(f"graph-only failures by exception and message head, most missed first (top {top}):")
    print(f"{'n':>4} {'any':>4} {'err':>4} {'miss':>4}  group | rules | example (a missed one if any)")
    for group in groups[:top]:
        rules = ",".join(group["rules"]) or "-"
        print(f"{group['count']:>4} {group['any']:>4} {group['error']:>4} {group['count'] - group['any']:>4}  "
              f"{group['key']} | {rules} | {group['missed_example'] or group['example']}")
    if len(groups) > top:
        rest = groups[top:]
        print(f"... {len(rest)} more groups, {sum(g['count'] for g in rest)} failures, "
              f"{sum(g['count'] - g['any'] for g in rest)} missed")
    print()
    print(f"(not in the figures) wrong values in GRAPH where EAGER passes ({len(silent)}):")
    for row in silent:
        print(f"  {row['file']}::{row['test']} findings: {','.join(row['findings']) or '-'}")
    print()
    print(f"error findings in the code of compiling tests ({len(errors)}):")
    for error in errors:
        print(f"  {error['file']}:{error['line']} {error['code']} {error['message'][:140]} "
              f"[{len(error['tests'])} test(s): {', '.join(error['tests'][:3])}]")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="run", choices=("run", "import"))
    parser.add_argument("git_dir", nargs="?", help="import: the git directory of a MindSpore clone")
    parser.add_argument("--rev", default="HEAD", help="import: the commit to copy the tests from")
    parser.add_argument("--repository", default="mindspore-ai/mindspore", help="import: the name in MANIFEST.txt")
    parser.add_argument("--limit", type=int, default=150, help="import: the most test files to take")
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    parser.add_argument("--labels", default=DEFAULT_LABELS, help="the label cache (JSON)")
    parser.add_argument("--jobs", type=int, default=2, help="files labelled at a time")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per file and mode")
    parser.add_argument("--top", type=int, default=40, help="groups of failures printed")
    parser.add_argument("--json", metavar="OUT", help="write figures, groups, false errors and every test")
    args = parser.parse_args(argv)
    if args.command == "import":
        if not args.git_dir:
            parser.error("import needs the git directory of a MindSpore clone")
        import_corpus(args.git_dir, args.rev, args.corpus, args.limit, args.repository)
        return 0
    files = corpus_files(args.corpus)
    labels, timing = label_corpus(files, args.corpus, args.labels, args.jobs, args.timeout)
    findings, lint_status = run_lint(files)
    rows = collect(labels, findings, args.corpus)
    summary = summarize(rows, lint_status, timing, len(files))
    groups, errors, silent = group_failures(rows), false_errors(rows), silent_differences(rows)
    print_report(summary, groups, errors, silent, args.top)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"summary": summary, "groups": groups, "false_errors": errors, "silent_differences": silent,
                       "tests": rows,
                       "import_errors": {os.path.relpath(p, args.corpus): r["import_error"]
                                         for p, r in labels.items() if r["import_error"]}}, handle, indent=1)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        # --child MODE --start K PATH OUT: run in a fresh process, away from this checkout's modules
        child_main(sys.argv[5], sys.argv[2], int(sys.argv[4]), sys.argv[6])
        sys.exit(0)
    sys.exit(main())
