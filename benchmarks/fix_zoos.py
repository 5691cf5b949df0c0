"""Fixes on real code: `ms-lint check --fix --unsafe-fixes --select ALL` over copies of the PyPI zoos, judged.

    python benchmarks/fix_zoos.py [--corpora mindcv,mindocr] [--models-per-module 2] [--keep DIR]
        [--targets-per-module 4] [--runtime-timeout 60] [--runtime-budget 2400] [--jobs 2] [--modules-per-worker 8]

For each corpus (benchmarks/corpora.py) a copy is fixed, then:
* every changed file must parse and compile to bytecode, and a second run must change nothing (idempotence);
* under MindSpore 2.10, every changed module is imported from the original and from the fixed copy (a process
  each): a module that imported before and fails after is "broke";
* for mindcv, under MindSpore 2.10 (CPU, PyNative), every model registered in a module the fixes changed (up to
  `--models-per-module` per module) is built with `create_model(name, num_classes=10)` and run on a fixed
  input, once from the original copy and once from the fixed one, each in a process of its own: a model that
  ran before and fails after is "broke", one whose output differs is "changed", one that failed before and runs
  after is "helped";
* for mindocr and mindone, the top-level class or function around each fix (a "target"; up to
  `--targets-per-module`, those with most fixes first) is built and run by benchmarks/fix_targets.py, from the
  original copy and then from the fixed one (a worker process per copy and `--modules-per-worker` modules, a new
  one after a crash, `--runtime-timeout` seconds per target, `--jobs` workers at once, no batch started after
  `--runtime-budget` seconds): small ints or a small config to build it, seeded inputs derived from the
  parameters' names to run it (PyNative, synchronous; GRAPH_MODE where PyNative has no CPU kernel; for mindone
  numpy stand-ins for the initializers and a few constructors' ops without a CPU kernel), the second copy
  following the plan of the first and loading its weights by name. "broke": built or ran before, fails after;
  "changed": parameters added, removed or reshaped (named), or outputs not allclose; "helped": fails before,
  builds or runs after; "same": otherwise, also when it was built but could not be run. A target not built
  before is not judged. Why targets were not built or not run is counted.
The table gives, per rule, the fixes applied, the changed modules' import verdicts, for mindcv the models in
modules its fixes touched that broke, changed or were helped, and for mindocr and mindone the targets: built
(before), ran (before), same, broke, changed, helped, not built. The runtime stage's seconds are printed.

Imports need each zoo's own dependencies; without them a module fails before and after alike. In a virtual
environment with the system's MindSpore: `python -m venv --system-site-packages ENV; ENV/bin/pip install -c
<(echo 'numpy<2') omegaconf transformers==4.57.1 trampoline better-profanity nltk 'huggingface-hub<1.0'` (mindone)
and `opencv-python-headless shapely pyclipper lmdb rapidfuzz addict albumentations matplotlib pycocotools
sentencepiece jieba seqeval` (part of mindocr; its package imports `mindspore.parallel._transformer`, which
MindSpore 2.10 lacks: the target workers stand in for it); mindformers 2.1.0 needs MindSpore 2.11.
"""
from __future__ import annotations

import argparse
import ast
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, NamedTuple, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpora import CORPORA, fetch  # noqa: E402
from fix_targets import targets_of  # noqa: E402
from fix_targets import verdict as target_verdict  # noqa: E402

_FIXED = re.compile(r"^  (?P<path>.+?):(?P<row>\d+):(?P<column>\d+): (?P<code>MSL\d{3}) \((?P<kind>[a-z-]+)\)")


_REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ms_lint(*args: str, cwd: str) -> subprocess.CompletedProcess:
    # this checkout's ms_lint, installed or not (cwd is the copy being fixed)
    path = os.pathsep.join(filter(None, [_REPOSITORY, os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "ms_lint", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": path})


def fix_copy(package: str, work: str) -> Tuple[str, str, List[dict]]:
    """Copies of the package (original, fixed) under `work`, and the fixes applied to the fixed one."""
    name = os.path.basename(package)
    original, fixed = os.path.join(work, "original"), os.path.join(work, "fixed")
    for target in (original, fixed):
        shutil.copytree(package, os.path.join(target, name))
    done = ms_lint("check", "--fix", "--unsafe-fixes", "--select", "ALL", "--no-cache", "--show-fixes",
                   "--exit-zero", "-q", "--output-format", "concise", name, cwd=fixed)
    fixes = [match.groupdict() for match in map(_FIXED.match, done.stdout.splitlines()) if match]
    return original, fixed, fixes


def static_checks(original: str, fixed: str) -> Dict[str, Any]:
    """Changed files that do not parse or compile, and what a second fixing run would still change."""
    changed, broken = [], []
    for directory, _, names in os.walk(fixed):
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, fixed)
            with open(path, "rb") as handle:
                data = handle.read()
            with open(os.path.join(original, relative), "rb") as handle:
                if handle.read() == data:
                    continue
            changed.append(relative)
            try:
                compile(ast.parse(data, relative), relative, "exec")
            except (SyntaxError, ValueError) as error:
                broken.append(f"{relative}: {error}")
    again = ms_lint("check", "--diff", "--unsafe-fixes", "--select", "ALL", "--no-cache", ".", cwd=fixed)
    return {"changed": changed, "broken": broken, "second_run_diff": again.stdout.count("\n+++ ")
            + again.stdout.startswith("+++ ")}


# ----- mindcv under MindSpore ---------------------------------------------------------------------------------
_RUN_MODELS = r"""
import importlib, json, sys
import numpy as np
root, names, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
sys.path.insert(0, root)
import mindspore as ms
ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")
from mindcv.models import create_model
from mindcv.models.registry import model_entrypoint
results = {}
for name in names:
    ms.set_seed(0)
    np.random.seed(0)
    try:
        module = importlib.import_module(model_entrypoint(name).__module__)
        size = getattr(module, "default_cfgs", {}).get(name, {}).get("input_size", (3, 224, 224))
        net = create_model(name, num_classes=10, pretrained=False)
        net.set_train(False)
        x = ms.Tensor(np.random.default_rng(0).standard_normal((1, *size)).astype(np.float32))
        y = net(x)
        y = y[0] if isinstance(y, (tuple, list)) else y
        results[name] = {"ok": True, "output": y.asnumpy().ravel()[:64].tolist(),
                         "parameters": sorted(p.name for p in net.get_parameters())}
    except Exception as error:
        message = (str(error).splitlines() or [""])[0][:200]
        results[name] = {"ok": False, "error": f"{type(error).__name__}: {message}"}
with open(out, "w") as handle:
    json.dump(results, handle)
"""

def mindcv_models(original: str, fixed: str, fixes: List[dict], per_module: int) -> Dict[str, dict]:
    """model name -> {"module", "before", "after", "verdict"} for the models of the modules the fixes changed."""
    modules = {fix["path"][:-3].replace("/", ".") for fix in fixes if fix["path"].startswith("mindcv/models/")}
    if not modules:
        return {}
    listing = subprocess.run([sys.executable, "-c", (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from mindcv.models.registry import list_models, model_entrypoint;"
        "print(json.dumps({n: model_entrypoint(n).__module__ for n in list_models()}))"), original],
        capture_output=True, text=True)
    if listing.returncode != 0:
        raise RuntimeError(f"cannot list mindcv's models: {listing.stderr[-500:]}")
    by_module: Dict[str, List[str]] = collections.defaultdict(list)
    for name, module in json.loads(listing.stdout).items():
        if module in modules and len(by_module[module]) < per_module:
            by_module[module].append(name)
    names = [name for found in by_module.values() for name in found]
    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, root in (("before", original), ("after", fixed)):
            out = os.path.join(scratch, f"{label}.json")
            subprocess.run([sys.executable, "-c", _RUN_MODELS, root, json.dumps(names), out], cwd=scratch,
                           capture_output=True, text=True, env={**os.environ, "GLOG_v": "3"})
            with open(out) as handle:
                runs[label] = json.load(handle)
    models = {}
    for module, found in by_module.items():
        for name in found:
            before, after = runs["before"][name], runs["after"][name]
            models[name] = {"module": module, "before": before, "after": after, "verdict": _verdict(before, after)}
    return models


_IMPORT_MODULES = r"""
import importlib, json, sys, traceback
root, names, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
sys.path.insert(0, root)
results = {}
for name in names:
    try:
        importlib.import_module(name)
        results[name] = {"ok": True}
    except BaseException as error:
        message = (str(error).splitlines() or [""])[0][:200]
        results[name] = {"ok": False, "error": f"{type(error).__name__}: {message}"}
with open(out, "w") as handle:
    json.dump(results, handle)
"""


def imported_modules(original: str, fixed: str, changed: List[str]) -> Dict[str, str]:
    """module -> verdict for every changed module, imported under MindSpore from each copy (a process each): a
    fix that breaks a module at import (a name it no longer defines, a class body that raises) shows here."""
    names = [path[:-3].replace(os.sep, ".").removesuffix(".__init__") for path in changed]
    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, root in (("before", original), ("after", fixed)):
            out = os.path.join(scratch, f"{label}.json")
            subprocess.run([sys.executable, "-c", _IMPORT_MODULES, root, json.dumps(names), out], cwd=scratch,
                           capture_output=True, text=True, env={**os.environ, "GLOG_v": "3"}, timeout=1800)
            with open(out) as handle:
                runs[label] = json.load(handle)
    verdicts = {}
    for name in names:
        before, after = runs["before"][name], runs["after"][name]
        verdicts[name] = ("imports" if after["ok"] else "broke") if before["ok"] else (
            "helped" if after["ok"] else "fails before and after")
    return verdicts


# ----- mindocr and mindone: the classes and functions the fixes touched, under MindSpore ------------------------
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fix_targets.py")
_IMPORT_ALLOWANCE = 180  # seconds a worker may spend importing its module (mindone's pull in transformers)
# modules a corpus imports that MindSpore 2.10 lacks: the workers stand in for them (fix_targets._StandIns)
_STAND_INS = {"mindocr": ["mindspore.parallel._transformer", "mindspore.nn.layer.flash_attention"]}
_CPU_SHIMS = ("mindone",)  # corpora whose constructors call mint ops that have no CPU kernel


class _Runtime(NamedTuple):
    """What the workers of one corpus share."""
    original: str
    fixed: str
    arrays: str  # the workers' jobs, records, weights and outputs
    timeout: int  # seconds per target
    deadline: float  # time.monotonic() after which no module starts
    stand_ins: List[str]  # modules MindSpore lacks (fix_targets._StandIns)
    cpu_shims: bool  # numpy stand-ins for ops without a CPU kernel (fix_targets._install_cpu_shims)


def fixed_targets(original: str, fixed: str, fixes: List[dict], work: str, options: argparse.Namespace,
                  corpus: str) -> List[dict]:
    """The targets of the fixes (fix_targets.targets_of), each with "before", "after" records and a "verdict",
    "detail"; batches of modules run in `options.jobs` parallel pairs of workers (before, then after), until the
    budget is spent."""
    targets, _ = targets_of(original, fixes)
    chosen = _limit_per_module(targets, options.targets_per_module)
    arrays = os.path.join(work, "runtime")
    for side in ("before", "after", "weights", "jobs"):
        os.makedirs(os.path.join(arrays, side), exist_ok=True)
    runtime = _Runtime(original, fixed, arrays, options.runtime_timeout,
                       time.monotonic() + options.runtime_budget, _STAND_INS.get(corpus, []), corpus in _CPU_SHIMS)
    modules = sorted({t["module"] for t in chosen})  # neighbours share imports: batched together
    batches = [modules[start:start + options.modules_per_worker]
               for start in range(0, len(modules), options.modules_per_worker)]
    with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
        futures = [pool.submit(_judge_batch, [t for t in chosen if t["module"] in batch], runtime)
                   for batch in batches]
        for future in futures:
            future.result()
    return targets


def _limit_per_module(targets: List[dict], limit: int) -> List[dict]:
    """The targets to build, numbered (id), at most `limit` a module and those with most fixes first; the others
    get their verdict."""
    by_module: Dict[str, List[dict]] = collections.defaultdict(list)
    for target in targets:
        by_module[target["module"]].append(target)
    chosen: List[dict] = []
    for module_targets in by_module.values():
        module_targets.sort(key=lambda t: -len(t["fixes"]))
        for target in module_targets[:limit]:
            target["id"] = len(chosen)
            chosen.append(target)
        for target in module_targets[limit:]:
            target.update(verdict="not built", detail=f"over --targets-per-module {limit}")
    return chosen


def _judge_batch(targets: List[dict], runtime: _Runtime) -> None:
    if time.monotonic() > runtime.deadline:
        for target in targets:
            target.update(verdict="not built", detail="--runtime-budget spent")
        return
    before = _run_worker(runtime.original, targets, "before", runtime)
    for target in targets:
        target["plan"] = before[target["id"]].get("plan")
    after = _run_worker(runtime.fixed, targets, "after", runtime)
    for target in targets:
        target["before"], target["after"] = before[target["id"]], after[target["id"]]
        target["verdict"], target["detail"] = target_verdict(target["before"], target["after"], runtime.arrays)


def _run_worker(root: str, targets: List[dict], side: str, runtime: _Runtime) -> Dict[int, dict]:
    """id -> record for the targets, built and run from `root` by fix_targets.py; a worker that crashes or
    overruns costs the target it was on, and a new worker takes the rest."""
    records: Dict[int, dict] = {}
    remaining = list(targets)
    while remaining:
        job = os.path.join(runtime.arrays, "jobs", f"{side}-{remaining[0]['id']}.json")
        out = job[:-5] + ".jsonl"
        with open(job, "w") as handle:
            json.dump({"side": side, "arrays": runtime.arrays, "timeout": runtime.timeout,
                       "stand_ins": runtime.stand_ins, "cpu_shims": runtime.cpu_shims,
                       "targets": [{key: t.get(key) for key in ("id", "module", "qualname", "plan")}
                                   for t in remaining]}, handle)
        with open(job[:-5] + ".stderr", "w") as errors:  # kept with --keep, for a worker that crashed
            try:
                subprocess.run([sys.executable, _WORKER, root, job, out], cwd=runtime.arrays, stdout=errors,
                               stderr=errors, timeout=_IMPORT_ALLOWANCE + 2 * runtime.timeout * len(remaining),
                               env={**os.environ, "GLOG_v": "3", "PYTHONWARNINGS": "ignore"})
                lost = "worker crashed"
            except subprocess.TimeoutExpired:
                lost = "worker overran its timeout"
        started = []
        if os.path.exists(out):
            with open(out) as handle:
                for line in map(json.loads, handle):
                    if "start" in line:
                        started.append(line["start"])
                    else:
                        records[line["id"]] = line
        for target in remaining:
            if target["id"] in started and target["id"] not in records:
                records[target["id"]] = {"id": target["id"], "built": False, "why": lost}
        if not started:  # the worker died before its first target: nothing more to learn
            for target in remaining:
                records[target["id"]] = {"id": target["id"], "built": False, "why": lost + " starting"}
        remaining = [t for t in remaining if t["id"] not in records]
    return records


def runtime_reasons(targets: List[dict]) -> collections.Counter:
    """Why targets were not built or not run, by kind (names and details dropped)."""
    reasons: collections.Counter = collections.Counter()
    for target in targets:
        if target["verdict"] == "not built" or target["detail"].startswith("not run"):
            why = re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "…", target["detail"])
            reasons[("" if target["detail"].startswith("not run") else "not built: ")
                    + ": ".join(why.split(": ")[:4])[:110]] += 1
    return reasons


def _verdict(before: dict, after: dict) -> str:
    if before["ok"] and not after["ok"]:
        return "broke"
    if not before["ok"]:
        return "helped" if after["ok"] else "fails before and after"
    if before["parameters"] != after["parameters"]:
        return "changed (parameters)"
    import numpy as np

    same = np.allclose(np.array(before["output"]), np.array(after["output"]), rtol=1e-4, atol=1e-5)
    return "same" if same else "changed (outputs)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default=",".join(CORPORA))
    parser.add_argument("--models-per-module", type=int, default=2)
    parser.add_argument("--keep", help="keep the fixed copies under this directory")
    parser.add_argument("--targets-per-module", type=int, default=4,
                        help="mindocr, mindone: build and run at most this many fixed classes or functions a module")
    parser.add_argument("--runtime-timeout", type=int, default=60, help="seconds to build and run one target")
    parser.add_argument("--runtime-budget", type=int, default=2400,
                        help="seconds per corpus after which no more modules are started")
    parser.add_argument("--jobs", type=int, default=2, help="workers run at once")
    parser.add_argument("--modules-per-worker", type=int, default=8,
                        help="modules whose targets one worker builds and runs (they share the imports' cost)")
    args = parser.parse_args()
    table: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    work_root = args.keep or tempfile.mkdtemp(prefix="ms-lint-fix-zoos-")
    try:
        for corpus in args.corpora.split(","):
            package = fetch(corpus, CORPORA[corpus])
            original, fixed, fixes = fix_copy(package, os.path.join(work_root, corpus))
            checks = static_checks(original, fixed)
            for fix in fixes:
                table[fix["code"]][f"{fix['kind']} fixes"] += 1
            print(f"{corpus}: {len(fixes)} fixes in {len(checks['changed'])} files; "
                  f"{len(checks['broken'])} do not parse or compile; second run changes "
                  f"{checks['second_run_diff']} files")
            for problem in checks["broken"]:
                print(f"  broken: {problem}")
            if _has_mindspore():
                modules = imported_modules(original, fixed, checks["changed"])
                counts = collections.Counter(modules.values())
                print(f"  modules imported under MindSpore, before and after: {dict(counts)}")
                for name, verdict in sorted(modules.items()):
                    if verdict in ("broke", "helped"):
                        print(f"  {name}: {verdict}")
                    codes = {f["code"] for f in fixes if f["path"][:-3].replace("/", ".").removesuffix(".__init__")
                             == name}
                    for code in codes:
                        table[code][f"modules {verdict}"] += 1
            if corpus == "mindcv" and _has_mindspore():
                models = mindcv_models(original, fixed, fixes, args.models_per_module)
                for name, model in sorted(models.items()):
                    print(f"  {name} ({model['module']}): {model['verdict']}"
                          + (f" [{model['after'].get('error')}]" if not model["after"]["ok"] else ""))
                    codes = {f["code"] for f in fixes if f["path"][:-3].replace("/", ".") == model["module"]}
                    for code in codes:
                        table[code][f"models {model['verdict']}"] += 1
            if corpus in _TARGET_CORPORA and _has_mindspore():
                _report_targets(corpus, original, fixed, fixes, os.path.join(work_root, corpus), args, table)
    finally:
        if not args.keep:
            shutil.rmtree(work_root, ignore_errors=True)
    columns = sorted({column for counts in table.values() for column in counts})
    print("\n| rule | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    for code in sorted(table):
        print(f"| {code} | " + " | ".join(str(table[code][column]) for column in columns) + " |")
    return 0


_TARGET_CORPORA = ("mindocr", "mindone")
_TARGET_VERDICTS = ("same", "broke", "changed", "helped", "not built")
_REASONS_SHOWN = 25  # why targets were not built or run: the commonest


def _report_targets(corpus: str, original: str, fixed: str, fixes: List[dict], work: str,
                    args: argparse.Namespace, table: Dict[str, collections.Counter]) -> None:
    """Builds and runs the targets of the fixes; prints the telling ones and why others were not built, and
    counts per rule: targets, built, ran, same, broke, changed, helped, not built."""
    started = time.monotonic()
    targets = fixed_targets(original, fixed, fixes, work, args, corpus)
    counts = collections.Counter(target["verdict"] for target in targets)
    print(f"  targets built and run under MindSpore, before and after ({len(targets)} classes and functions, "
          f"{time.monotonic() - started:.0f} s): {dict(counts)}")
    for target in sorted(targets, key=lambda t: (t["module"], t["qualname"])):
        if target["verdict"] in ("broke", "changed", "helped"):
            print(f"  {target['module']}.{target['qualname']} [{_rows(target)}]: {target['verdict']}: "
                  f"{target['detail']}")
            others = [other for other in targets if other["module"] == target["module"] and other is not target]
            if others and target["verdict"] != "helped":  # a class a fix changed may be built into this one
                print("    the module's other fixed targets: " + "; ".join(
                    f"{other['qualname']} [{_rows(other)}]" for other in others[:4])
                    + (f" (+{len(others) - 4})" if len(others) > 4 else ""))
    reasons = runtime_reasons(targets).most_common()
    for reason, count in reasons[:_REASONS_SHOWN]:
        print(f"    {count:4d} {reason}")
    if len(reasons) > _REASONS_SHOWN:
        print(f"    {sum(count for _, count in reasons[_REASONS_SHOWN:]):4d} for "
              f"{len(reasons) - _REASONS_SHOWN} other reasons")
    for target in targets:
        before = target.get("before", {})
        for code in {code for code, _ in target["fixes"]}:
            row = table[code]
            row.update({f"targets {verdict}": 0 for verdict in _TARGET_VERDICTS})  # every column, zeros too
            row["targets"] += 1
            row["targets built"] += bool(before.get("built"))
            row["targets ran"] += bool(before.get("ran"))
            row[f"targets {target['verdict']}"] += 1


def _rows(target: dict) -> str:
    return ", ".join(f"{code}:{row}" for code, row in sorted(target["fixes"], key=lambda fix: fix[1]))


def _has_mindspore() -> bool:
    import importlib.util

    return importlib.util.find_spec("mindspore") is not None


if __name__ == "__main__":
    sys.exit(main())
