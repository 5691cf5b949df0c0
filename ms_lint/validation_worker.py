"""The MindSpore side of fix validation: runs in its own process (`python -m ms_lint.validation_worker JOBS OUT`).

For each job (one file, its original and fixed text, the Cells the fixes touched) and each version of the file, the
module is installed under its real name (so factories and sibling modules import it as usual), each Cell is built
from its spec with fixed seeds, run in PyNative, then compiled (`cell.compile`) and run in GRAPH_MODE on the CPU;
outputs and parameters after the run are compared. One JSON line per Cell goes to OUT as soon as it is known, so a
time limit loses only the Cells not reached yet.

This module imports MindSpore; the linter never imports it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import json
import os
import random
import re
import sys
import traceback
from typing import Optional

import mindspore as ms
import numpy as np

RTOL, ATOL = 1e-4, 1e-5  # graph kernels may fuse and reorder float arithmetic
# Each Cell is called twice on the same inputs: what a graph freezes at compile time (a random draw, a mutable
# default, an inline layer's weights) only shows on the second call. The observation is both calls' outputs, the
# inputs afterwards (in-place methods may change them) and the parameters afterwards.
CALLS = 2
INPUT_SPEC = re.compile(r"^\s*(\w+)\s*\[\s*([\d\s,]*)\]\s*$")


class Failed(Exception):
    """A stage failed; `stage` is where (build, compile, run) and the message is the user's error, shortened."""

    def __init__(self, stage: str, error: BaseException):
        super().__init__(_describe(error))
        self.stage = stage


def _describe(error: BaseException) -> str:
    lines = [line.strip(" -") for line in str(error).splitlines() if line.strip(" -")]
    text = " ".join(lines[:2]) if lines and lines[0].endswith(":") else (lines[0] if lines else "")
    if len(text) > 240:
        text = text[:237] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _seed() -> None:
    ms.set_seed(0)
    np.random.seed(0)
    random.seed(0)


class _Redirect(importlib.abc.MetaPathFinder):
    """Imports `module` from `path` whatever imports it first: its package's `__init__` re-exporting it
    (`from .model import Net`), a factory's `from pkg import Net`, or `_install` itself. Without it a parent
    package imported first would bind the original module's classes, and the "after" run would build those."""

    def __init__(self, module: str, path: str, original: str):
        self.module, self.path, self.original = module, path, original

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.module:
            return None
        package = os.path.basename(self.original) == "__init__.py"
        return importlib.util.spec_from_file_location(
            fullname, self.path, submodule_search_locations=[os.path.dirname(self.original)] if package else None)


def _install(module: str, path: str, original: str) -> None:
    """Import `path` as `module` (and as what every import of `module` gets until `_purge`)."""
    for finder in [f for f in sys.meta_path if isinstance(f, _Redirect)]:
        sys.meta_path.remove(finder)
    sys.meta_path.insert(0, _Redirect(module, path, original))
    sys.modules.pop(module, None)
    importlib.import_module(module)


def _purge(keep: set, roots) -> None:
    """Forget the project's modules imported by the last version, so the next one imports afresh."""
    for finder in [f for f in sys.meta_path if isinstance(f, _Redirect)]:
        sys.meta_path.remove(finder)
    for name in [n for n in sys.modules if n not in keep]:
        path = getattr(sys.modules[name], "__file__", None) or ""
        if any(os.path.abspath(path).startswith(root + os.sep) for root in roots):
            del sys.modules[name]


def _inputs_from_specs(specs):
    rng = np.random.default_rng(0)
    inputs = []
    for spec in specs:
        match = INPUT_SPEC.match(spec)
        dtype, dims = match.group(1), [int(d) for d in match.group(2).replace(" ", "").split(",") if d]
        if dtype.startswith("float") or dtype == "bfloat16":
            array = rng.standard_normal(dims).astype(np.float32)
        elif dtype == "bool":
            array = rng.integers(0, 2, dims).astype(np.bool_)
        else:
            array = rng.integers(0, 10, dims).astype(np.int64)
        inputs.append(ms.Tensor(array, dtype=getattr(ms, dtype)))
    return tuple(inputs)


def _build(module: str, class_name: str, spec: dict):
    _seed()
    if spec.get("factory"):
        target, _, function = spec["factory"].partition(":")
        made = getattr(importlib.import_module(target), function)()
        if not (isinstance(made, tuple) and len(made) == 2):
            raise TypeError(f"the factory {spec['factory']} must return (cell, inputs), got {type(made).__name__}")
        cell, inputs = made
        if not isinstance(inputs, (tuple, list)):
            inputs = (inputs,)
        return cell, tuple(inputs)
    cls = getattr(sys.modules[module], class_name)
    return cls(), _inputs_from_specs(spec["inputs"])


def _flatten(value):
    """Outputs as a list of (shape, array) leaves, so structures compare element by element."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _flatten(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in _flatten(value[key])]
    if isinstance(value, ms.Tensor):
        return [value.asnumpy()]
    return [np.asarray(value)]


def _parameters(cell) -> dict:
    return {name: p.asnumpy().copy() for name, p in cell.parameters_dict().items()}


def _load(cell, weights: dict) -> None:
    """Give `cell` the reference weights wherever a parameter has the same name and shape."""
    for name, parameter in cell.parameters_dict().items():
        value = weights.get(name)
        if value is not None and value.shape == tuple(parameter.shape):
            parameter.set_data(ms.Tensor(value, dtype=parameter.dtype))


def _same(left, right):
    """(equal, max abs difference) of two observations (outputs + parameters)."""
    if left is None or right is None:
        return None, None
    outputs_l, params_l = left
    outputs_r, params_r = right
    shared = sorted(set(params_l) & set(params_r))
    pairs = list(zip(outputs_l, outputs_r)) + [(params_l[n], params_r[n]) for n in shared]
    if len(outputs_l) != len(outputs_r):
        return False, None
    worst = 0.0
    for a, b in pairs:
        if a.shape != b.shape:
            return False, None
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            if not np.allclose(a64, b64, rtol=RTOL, atol=ATOL, equal_nan=True):
                return False, float(np.nanmax(np.abs(a64 - b64))) if a.size else None
            if a.size:
                worst = max(worst, float(np.nanmax(np.abs(a64 - b64))))
        elif not np.array_equal(a, b):
            return False, None
    return True, worst


class Version:
    """One version (original or fixed) of one Cell: built, run in PyNative, compiled and run in GRAPH_MODE."""

    def __init__(self, module: str, class_name: str, spec: dict, strict: bool):
        self.module, self.class_name, self.spec, self.strict = module, class_name, spec, strict

    def build(self):
        try:
            return _build(self.module, self.class_name, self.spec)
        except Exception as error:  # noqa: BLE001 - the user's code decides what fails
            raise Failed("build", error) from error

    def observe(self, mode: str, inputs, weights):
        """What a fresh Cell with `weights` does in `mode` (see CALLS); raises Failed."""
        ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
        cell, _ = self.build()
        stage = "run"
        try:
            _load(cell, weights)
            inputs = _copy_inputs(inputs)  # a run may update its inputs in place
            if mode == "graph":
                if self.strict:
                    cell.set_jit_config(ms.JitConfig(jit_syntax_level="STRICT"))
                stage = "compile"
                cell.compile(*inputs)
                stage = "run"
            outputs = [_flatten(cell(*inputs)) for _ in range(CALLS)]  # kernels may run lazily: errors surface here
            return [leaf for call in outputs for leaf in call] + _flatten(inputs), _parameters(cell)
        except Exception as error:  # noqa: BLE001 - the user's code decides what fails
            raise Failed(stage, error) from error


def _copy_inputs(inputs):
    return tuple(ms.Tensor(x.asnumpy().copy(), dtype=x.dtype) if isinstance(x, ms.Tensor) else
                 ms.Tensor(x) if isinstance(x, np.ndarray) else x for x in inputs)


def _failed_before_building(stage: Optional[str], error: Optional[str]) -> dict:
    return {"built": False, "compiled": False, "ran": False, "stage": stage, "error": error,
            "matches_pynative": None, "max_difference": None, "matches_original": None}


def validate_version(version: Version, reference):
    """Run one version of a Cell. `reference` is (inputs, initial weights, PyNative observation) of the original,
    or None when there is none yet (this is the original, or the original could not be built): then this version's
    own freshly built Cell provides them. Returns (report, the reference for the next version)."""
    report = _failed_before_building(None, None)
    try:
        if reference is None:
            ms.set_context(mode=ms.PYNATIVE_MODE)
            cell, inputs = version.build()
            inputs, weights, original = _copy_inputs(inputs), _parameters(cell), None
        else:
            inputs, weights, original = reference
    except Failed as failure:
        report["stage"], report["error"] = failure.stage, str(failure)
        return report, None
    report["built"] = True
    eager = None
    try:
        eager = version.observe("pynative", inputs, weights)  # what the Python says: this version's reference
    except Failed as failure:
        report["pynative_error"] = str(failure)
    original = eager if original is None else original
    try:
        graph = version.observe("graph", inputs, weights)
    except Failed as failure:
        report["compiled"] = failure.stage == "run"
        report["stage"], report["error"] = failure.stage, str(failure)
        return report, (inputs, weights, original)
    report["compiled"] = report["ran"] = True
    report["matches_pynative"], report["max_difference"] = _same(graph, eager)
    report["matches_original"], _ = _same(graph, original)
    return report, (inputs, weights, original)


def run_job(job: dict, out) -> None:
    baseline = set(sys.modules)
    roots = [os.path.abspath(r) for r in (*job["roots"], job["scratch"])]
    for entry in job["roots"]:
        if entry not in sys.path:
            sys.path.insert(0, entry)
    for cell in job["cells"]:
        result = {"path": job["path"], "cell": cell["name"]}
        reference = None
        for version, path in (("before", job["original"]), ("after", job["fixed"])):
            try:
                _install(job["module"], path, job["original"])
            except Exception as error:  # noqa: BLE001
                result[version] = _failed_before_building("import", _describe(error))
            else:
                result[version], measured = validate_version(
                    Version(job["module"], cell["name"], cell["spec"], job["strict"]), reference)
                if version == "before":
                    reference = measured
            finally:
                _purge(baseline, roots)
        out.write(json.dumps(result) + "\n")
        out.flush()


def main(argv) -> int:
    jobs_path, out_path = argv
    with open(jobs_path, encoding="utf-8") as handle:
        jobs = json.load(handle)
    ms.set_device("CPU")
    with open(out_path, "w", encoding="utf-8") as out:
        for job in jobs:
            try:
                run_job(job, out)
            except Exception:  # noqa: BLE001 - report and go on with the next file
                out.write(json.dumps({"path": job["path"], "crash": traceback.format_exc(limit=5)}) + "\n")
                out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
