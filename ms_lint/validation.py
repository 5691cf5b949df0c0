"""Fix validation: compile the Cells a fix touched, before and after, with real MindSpore (`--validate`).

The linter never imports MindSpore: the work happens in a subprocess (`ms_lint.validation_worker`) with a time
limit. Which Cells to build, and with what inputs, comes from `[tool.ms_lint.validate]`:

    [tool.ms_lint.validate]
    timeout = 600                                     # seconds for the whole run (default 600)
    PortedResNet = "float32[2,3,8,8]"                 # input specs: the Cell is built with no arguments
    "models.vit:VisionTransformer" = "tests.factories:make_vit"   # a factory returning (cell, inputs)

A key is a class name, or `module:Class` when the name alone is ambiguous. A Cell without an entry is reported as
"not validated", never as validated.
"""
from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ms_lint.config import ConfigError
from ms_lint.rule import Diagnostic
from ms_lint.settings import Settings
from ms_lint.source import package_root

DEFAULT_TIMEOUT = 600
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64", "bfloat16")
_INPUT = re.compile(r"^\s*(" + "|".join(DTYPES) + r")\s*\[\s*\d*(\s*,\s*\d+)*\s*\]\s*$")
_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass(frozen=True)
class CellSpec:
    factory: Optional[str] = None  # "pkg.module:make", returning (cell, inputs)
    inputs: Tuple[str, ...] = ()  # "float32[2,3,8,8]", for a Cell built without arguments

    def describe(self) -> str:
        return f"factory {self.factory}" if self.factory else ", ".join(self.inputs)


@dataclass(frozen=True)
class ValidationConfig:
    cells: Tuple[Tuple[str, CellSpec], ...] = ()
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_settings(cls, settings: Settings) -> "ValidationConfig":
        origin = f"{settings.config_path or 'the configuration'}: [tool.ms_lint.validate]"
        cells: list = []
        timeout: float = DEFAULT_TIMEOUT
        for key, value in settings.validate:
            if key == "timeout":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                    raise ConfigError(f"{origin}: `timeout` must be a positive number of seconds, got {value!r}")
                timeout = value
            else:
                cells.append((key, _spec(origin, key, value)))
        return cls(tuple(cells), timeout)

    def spec_for(self, module: str, class_name: str) -> Optional[CellSpec]:
        for key, spec in self.cells:
            if key in (f"{module}:{class_name}", class_name):
                return spec
        return None


def _spec(origin: str, key: str, value) -> CellSpec:
    if isinstance(value, str) and _FACTORY.match(value):
        return CellSpec(factory=value)
    values = [value] if isinstance(value, str) else value
    if isinstance(values, list) and values and all(isinstance(v, str) and _INPUT.match(v) for v in values):
        return CellSpec(inputs=tuple(v.strip() for v in values))
    raise ConfigError(f"{origin}: `{key}` must name a factory (\"package.module:function\" returning (cell, inputs)) "
                      f"or give input specs such as \"float32[2,3,32,32]\" (dtypes: {', '.join(DTYPES)}); "
                      f"got {value!r}")


def mindspore_available() -> bool:
    return importlib.util.find_spec("mindspore") is not None


@dataclass
class Job:
    """One file whose fixes are validated: both texts, and the Cells (top-level classes) the fixes touched."""

    path: str
    module: str
    original_text: str
    fixed_text: str
    strict: bool
    cells: Dict[str, Optional[CellSpec]]  # class name -> its spec (None: not validated)
    roots: Tuple[str, ...] = ()  # sys.path entries: the package root, the project root (for factories)
    fixes: Dict[str, List[Diagnostic]] = field(default_factory=dict)  # class name -> the fixes touching it


def jobs_for(linter, fixes, config: ValidationConfig) -> List[Job]:
    """A job per changed file (`fixes`: autofix.FileFix results), naming the Cells whose code the fixes changed."""
    jobs = []
    for fix in fixes:
        if not fix.changed:
            continue
        source = fix.source
        original, fixed = ast.parse(source.text), ast.parse(fix.text)
        cells, level = linter.cells_and_level(original, source)
        changed = changed_classes(original, source.text, fixed, fix.text, cells)
        if not changed:
            continue
        job = Job(source.path, source.module_name, source.text, fix.text, level == "strict",
                  {name: config.spec_for(source.module_name, name) for name in sorted(changed)},
                  roots=(package_root(os.path.abspath(source.path)), linter.settings.root))
        job.fixes = attribute(original, changed, fix.applied)
        jobs.append(job)
    return jobs


def changed_classes(original: ast.Module, original_text: str, fixed: ast.Module, fixed_text: str,
                    cells: Iterable[str]) -> List[str]:
    """The top-level Cell classes whose code differs; all of them when code outside the classes changed (a helper
    they call, an import they use)."""
    cells = set(cells)
    before, outside_before = _segments(original, original_text)
    after, outside_after = _segments(fixed, fixed_text)
    if outside_before != outside_after:
        return sorted(cells)
    return sorted(name for name in cells if before.get(name) != after.get(name))


def _class_spans(tree: ast.Module) -> Dict[str, Tuple[int, int]]:
    """Top-level class name -> its (first, last) row, decorators included."""
    return {node.name: (min([node.lineno] + [d.lineno for d in node.decorator_list]), node.end_lineno or node.lineno)
            for node in tree.body if isinstance(node, ast.ClassDef)}


def _owner(spans: Dict[str, Tuple[int, int]], row: int) -> Optional[str]:
    """The top-level class `row` lies in, if any."""
    return next((name for name, (first, last) in spans.items() if first <= row <= last), None)


def _segments(tree: ast.Module, text: str):
    """(class name -> its source, the source of everything else with the classes cut out)."""
    lines, spans = text.splitlines(keepends=True), _class_spans(tree)
    classes = {name: "".join(lines[first - 1:last]) for name, (first, last) in spans.items()}
    rest = [line for row, line in enumerate(lines, 1) if _owner(spans, row) is None]
    return classes, "".join(rest)


def attribute(original: ast.Module, cells: Iterable[str], applied: Sequence[Diagnostic]) -> Dict[str, list]:
    """Which fixes touched which of `cells`: by where the fix is reported; a fix outside every class touches them
    all, a fix inside another class none."""
    spans = _class_spans(original)
    touched: Dict[str, List[Diagnostic]] = {name: [] for name in cells}
    for diagnostic in applied:
        owner = _owner(spans, diagnostic.row)
        for name in [owner] if owner else touched:
            if name in touched:
                touched[name].append(diagnostic)
    return touched


@dataclass
class Verdict:
    """What validation found for one Cell."""

    path: str
    cell: str
    spec: Optional[CellSpec]
    before: Optional[dict] = None
    after: Optional[dict] = None
    reason: Optional[str] = None  # why it was not validated

    @property
    def validated(self) -> bool:
        return self.reason is None and self.before is not None and self.after is not None

    @property
    def worse(self) -> bool:
        """The fixed Cell does less well than the original: it no longer builds, compiles, runs or matches PyNative,
        or it no longer runs in PyNative. A build failure is worse unless the original failed to build the same way
        (a fix that breaks construction must not pass because the original did not compile either). A changed
        result alone is not worse: fixing a port changes what the port computed (the report notes it)."""
        if self.before is None or self.after is None or not self.validated:
            return False
        before, after = self.before, self.after
        if not after.get("built"):
            return bool(before.get("built")) or (before.get("stage"), before.get("error")) != (
                after.get("stage"), after.get("error"))
        if before.get("built") and not before.get("pynative_error") and after.get("pynative_error"):
            return True  # PyNative ran the original and fails on the fix
        return _rank(after) < _rank(before)

    @property
    def proven(self) -> bool:
        """The fixed Cell compiles, runs and gives what PyNative gives."""
        return self.validated and self.after is not None and _rank(self.after) == len(_STAGES)


_STAGES = ("built", "compiled", "ran", "matches_pynative")


def _rank(report: dict) -> int:
    rank = 0
    for stage in _STAGES:
        if not report.get(stage):
            break
        rank += 1
    return rank


def run(jobs: Sequence[Job], config: ValidationConfig, python: str = sys.executable) -> List[Verdict]:
    """Validate every job's Cells in one MindSpore subprocess; Cells it did not reach in time are not validated."""
    verdicts = {(job.path, name): Verdict(job.path, name, spec, reason=None if spec else
                                          "no [tool.ms_lint.validate] entry for this Cell")
                for job in jobs for name, spec in job.cells.items()}
    runnable = [job for job in jobs if any(job.cells.values())]
    if not runnable:
        return list(verdicts.values())
    with tempfile.TemporaryDirectory(prefix="ms-lint-validate-") as scratch:
        payload = [_job_payload(job, index, scratch) for index, job in enumerate(runnable)]
        jobs_path, out_path = os.path.join(scratch, "jobs.json"), os.path.join(scratch, "results.jsonl")
        with open(jobs_path, "w", encoding="utf-8") as handle:
            json.dump(payload, handle)
        failure = _run_worker(python, jobs_path, out_path, scratch, config.timeout)
        for line in _read_lines(out_path):
            record = json.loads(line)
            if "crash" in record:
                failure = failure or f"the validation worker failed on {record['path']}:\n{record['crash']}"
                continue
            verdict = verdicts[(record["path"], record["cell"])]
            verdict.before, verdict.after = record["before"], record["after"]
    for verdict in verdicts.values():
        if verdict.reason is None and not verdict.validated:
            verdict.reason = failure or "the validation worker stopped before reaching this Cell"
    return list(verdicts.values())


def _job_payload(job: Job, index: int, scratch: str) -> dict:
    """The worker's view of a job: the fixed text goes to a scratch file that is imported under the module's name."""
    directory = os.path.join(scratch, f"job{index}")
    os.makedirs(directory)
    fixed = os.path.join(directory, os.path.basename(job.path))
    with open(fixed, "w", encoding="utf-8") as handle:
        handle.write(job.fixed_text)
    return {"path": job.path, "module": job.module, "original": os.path.abspath(job.path), "fixed": fixed,
            "strict": job.strict, "roots": list(dict.fromkeys(job.roots)), "scratch": scratch,
            "cells": [{"name": name, "spec": {"factory": spec.factory, "inputs": list(spec.inputs)}}
                      for name, spec in job.cells.items() if spec]}


def _run_worker(python: str, jobs_path: str, out_path: str, scratch: str, timeout: float) -> Optional[str]:
    """Run the worker in `scratch` (MindSpore writes dump directories into its working directory). Returns why it
    failed, or None."""
    environment = dict(os.environ, GLOG_v="3", PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.environ.get("PYTHONPATH", "")]).rstrip(
        os.pathsep))
    try:
        completed = subprocess.run([python, "-m", "ms_lint.validation_worker", jobs_path, out_path], cwd=scratch,
                                   env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"the validation time limit ({timeout:g} s, [tool.ms_lint.validate] timeout) ran out"
    if completed.returncode != 0:
        tail = completed.stderr.strip().splitlines()[-5:]
        return f"the validation worker exited with {completed.returncode}: " + " / ".join(tail)
    return None


def _read_lines(path: str) -> List[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return [line for line in handle if line.strip()]
    except OSError:
        return []


def describe(report: dict) -> str:
    """One version's outcome in words."""
    text = _describe_graph(report)
    if report.get("pynative_error") and report.get("matches_pynative") is None and report.get("built"):
        text += f"; in PyNative it fails too ({report['pynative_error']})"
    return text


def _describe_graph(report: dict) -> str:
    if not report.get("built"):
        where = "import" if report.get("stage") == "import" else "build"
        return f"could not {where} ({report.get('error')})"
    if not report.get("compiled"):
        return f"does not compile in GRAPH_MODE ({report.get('error')})"
    if not report.get("ran"):
        return f"compiles, fails when run ({report.get('error')})"
    if report.get("matches_pynative") is None:
        return "compiles and runs; no PyNative result to compare with"
    if report["matches_pynative"]:
        return "compiles and runs; outputs and parameters equal PyNative"
    return "compiles and runs, but outputs or parameters differ from PyNative"


@dataclass
class Outcome:
    verdicts: List[Verdict]
    replacements: Dict[str, Any]  # path -> the FileFix to use instead (harmful fixes withheld)
    failed: bool  # some fix made a Cell worse
    per_fix: Dict[tuple, str] = field(default_factory=dict)  # (path, row, column, code) -> what validation found


def _per_fix(jobs: Sequence[Job], verdicts: Sequence[Verdict]) -> Dict[tuple, str]:
    """For `--show-fixes`: each fix with the verdicts of the Cells it touched."""
    found: Dict[tuple, List[str]] = {}
    for verdict in verdicts:
        job = next(job for job in jobs if job.path == verdict.path)
        if verdict.worse:
            words = "made worse, not applied"
        elif verdict.proven:
            words = "validated"
        else:
            words = "not validated" if not verdict.validated else "validated as no worse"
        for d in job.fixes.get(verdict.cell, ()):
            found.setdefault((d.path, d.row, d.column, d.code), []).append(f"{verdict.cell}: {words}")
    return {key: "; ".join(notes) for key, notes in found.items()}


def validate_fixes(linter, fixes, applicabilities, project=(), stream=None) -> Outcome:
    """Validate `fixes` (autofix.FileFix per file), print the report, and refix files whose fixes made a Cell
    worse without those fixes (the whole file is left as it was if that does not undo them)."""
    from ms_lint.fixing.passes import FileFix, fix_source

    stream = stream or sys.stderr
    if not mindspore_available():
        raise ConfigError("--validate compiles the fixed Cells with MindSpore, which is not installed here: "
                          "pip install 'ms-lint[validate]' (MindSpore 2.10, numpy<2)")
    config = ValidationConfig.from_settings(linter.settings)
    jobs = jobs_for(linter, fixes, config)
    verdicts = run(jobs, config)
    report(jobs, verdicts, stream)
    replacements = {}
    by_path = {fix.source.path: fix for fix in fixes}
    for job in jobs:
        worse = [v.cell for v in verdicts if v.path == job.path and v.worse]
        if not worse:
            continue
        previous = by_path[job.path]
        refixed = fix_source(linter, previous.source, applicabilities, project, withhold=_inside(worse))
        kept, _ = _segments(ast.parse(refixed.text), refixed.text)
        original, _ = _segments(ast.parse(job.original_text), job.original_text)
        if any(kept.get(name) != original.get(name) for name in worse):  # defensive: never write a harmful class
            refixed = FileFix(previous.source, previous.source.text, remaining=previous.remaining)
        replacements[job.path] = refixed
        print(f"{job.path}: fixes not applied, they make {', '.join(worse)} worse: "
              + ", ".join(f"{d.row}:{d.column + 1} {d.code}" for cell in worse for d in job.fixes.get(cell, ())),
              file=stream)
    return Outcome(verdicts, replacements, bool(replacements), _per_fix(jobs, verdicts))


def _inside(classes: Sequence[str]):
    """A `withhold` predicate: fixes reported inside one of `classes`, or outside every class (those may change
    any Cell), in the text they apply to."""
    spans = functools.lru_cache(maxsize=4)(lambda text: _class_spans(ast.parse(text)))

    def withhold(diagnostic: Diagnostic, text: str) -> bool:
        owner = _owner(spans(text), diagnostic.row)
        return owner is None or owner in classes
    return withhold


def report(jobs: Sequence[Job], verdicts: Sequence[Verdict], stream) -> None:
    """Per Cell the fixes touched: its spec, how the original and the fixed version fared, and the fixes."""
    if not jobs:
        print("Validation: no fix changed a Cell.", file=stream)
        return
    print(f"Validation with MindSpore {_mindspore_version()} on CPU (GRAPH_MODE vs PyNative):", file=stream)
    fixes = {(job.path, name): job.fixes.get(name, []) for job in jobs for name in job.cells}
    levels = {job.path: "STRICT" if job.strict else "LAX" for job in jobs}
    for verdict in verdicts:
        spec = f" [{verdict.spec.describe()}]" if verdict.spec else ""
        print(f"  {verdict.path}: {verdict.cell}{spec} ({levels[verdict.path]})", file=stream)
        if verdict.validated and verdict.before is not None and verdict.after is not None:
            print(f"    before: {describe(verdict.before)}", file=stream)
            print(f"    after:  {describe(verdict.after)}", file=stream)
            if verdict.after.get("matches_original") is False and verdict.before.get("built"):
                print("    note:   the fixed Cell's results differ from the original's PyNative run", file=stream)
            print(f"    result: {_result(verdict)}", file=stream)
        else:
            print(f"    not validated: {verdict.reason}", file=stream)
        touched = fixes.get((verdict.path, verdict.cell), [])
        if touched:
            print("    fixes:  " + ", ".join(f"{d.row}:{d.column + 1} {d.code}" for d in touched), file=stream)


def _result(verdict: Verdict) -> str:
    if verdict.worse:
        return "WORSE than the original: these fixes are not applied"
    if verdict.proven:
        return "validated: the fixed Cell compiles and matches PyNative"
    return "no worse than the original, but the fixed Cell does not compile and match PyNative"


def _mindspore_version() -> str:
    try:
        from importlib.metadata import version

        return version("mindspore")
    except Exception:  # noqa: BLE001 - only for the report header
        return "(version unknown)"
