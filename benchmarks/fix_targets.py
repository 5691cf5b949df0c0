"""The classes and functions a fix touched, built and run before and after the fix (the runtime stage of fix_zoos).

fix_zoos.py finds the targets (`targets_of`: the top-level class or function around each fix, in the original
file), runs this file as a worker per batch of modules and copy, and judges each pair of records (`verdict`):

    python benchmarks/fix_targets.py ROOT JOB.json OUT.jsonl

The worker imports the targets' modules from ROOT and, for each target, under MindSpore (CPU, synchronous
PyNative, seeded), within the job's timeout:
* builds it: a class with a small config for a `config` parameter (mindone's transformers configs, mindocr's own:
  SMALL_CONFIG), else with no arguments, else with small values for its required parameters picked by their
  names; a function that takes tensors is run as it is, one that takes sizes is a factory: the cell it returns is
  the target;
* records its parameters (names and shapes);
* runs it (`construct`, or the function) on inputs derived from the parameters' names, trying a few shapes,
  again in GRAPH_MODE where PyNative has no CPU kernel for an op.
The first copy (before) records how it built and ran the target (the "plan"); the second (after) follows that plan
exactly, loads the first copy's weights by name and saves its outputs, so the two differ only by the fix.
Modules MindSpore 2.10 lacks can be stood in for (`_StandIns`), and ops its CPU backend lacks shimmed
(`_install_cpu_shims`), the same for both copies. Each finished target is one JSON line, after a "start" line,
so the caller knows which target a crash or a timeout hit.
"""
from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import inspect
import json
import os
import random
import re
import signal
import sys
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

SEED = 0
SEQUENCE = 8  # tokens in an input sequence
SPATIAL = 16  # height and width of a feature map
SMALL_CONFIG = {  # transformers config attributes, set on whichever the config has
    "num_hidden_layers": 1, "num_layers": 1, "encoder_layers": 1, "decoder_layers": 1, "n_layer": 1,
    "hidden_size": 64, "d_model": 64, "n_embd": 64, "embed_dim": 64, "embedding_size": 64,
    "num_attention_heads": 4, "encoder_attention_heads": 4, "decoder_attention_heads": 4, "n_head": 4,
    "num_key_value_heads": 2, "intermediate_size": 64, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
    "vocab_size": 100, "max_position_embeddings": 128, "image_size": 32, "patch_size": 8,
}


Definition = Union[ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef]


# ----- the targets (parent side) -------------------------------------------------------------------------------
def targets_of(root: str, fixes: List[dict]) -> Tuple[List[dict], List[dict]]:
    """(targets, fixes outside any class or function): a target is the top-level class or function around one
    or more fixes in the original file under `root`, {"module", "qualname", "kind", "fixes": [(code, row)]}."""
    targets: Dict[Tuple[str, str], dict] = {}
    loose = []
    trees: Dict[str, ast.Module] = {}
    for fix in fixes:
        path, row = fix["path"], int(fix["row"])
        if path not in trees:
            with open(os.path.join(root, path), "rb") as handle:
                trees[path] = ast.parse(handle.read(), path)
        node = _top_level_definition(trees[path], row)
        if node is None:
            loose.append(fix)
            continue
        module = path[:-3].replace("/", ".").removesuffix(".__init__")
        target = targets.setdefault((module, node.name), {
            "module": module, "qualname": node.name, "fixes": [],
            "kind": "class" if isinstance(node, ast.ClassDef) else "function"})
        target["fixes"].append((fix["code"], row))
    return list(targets.values()), loose


def _top_level_definition(tree: ast.Module, row: int) -> Optional[Definition]:
    """The class or function among the module's statements (also under a top-level `if`/`try`) holding `row`."""
    statements = list(tree.body)
    while statements:
        node = statements.pop(0)
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first <= row <= (node.end_lineno or node.lineno):
                return node
        elif isinstance(node, (ast.If, ast.Try)):
            statements.extend(node.body + node.orelse + getattr(node, "handlers", []) + getattr(node, "finalbody", []))
        elif isinstance(node, ast.ExceptHandler):
            statements.extend(node.body)
    return None


def verdict(before: dict, after: dict, arrays: str) -> Tuple[str, str]:
    """(verdict, detail) for one target's records: same (a target built but not run is "same" with the reason
    in the detail), broke, changed, helped or not built."""
    if not before.get("built"):
        if after.get("built"):
            return "helped", "built after only"
        return "not built", before.get("why", "no record")
    if not after.get("built"):
        return "broke", f"construction: {after.get('why', 'no record')}"
    if before.get("ran") and not after.get("ran"):
        return "broke", f"forward: {after.get('why', 'no record')}"
    changes = _parameter_changes(before["parameters"], after["parameters"])
    if changes:
        return "changed", "parameters " + changes
    if after.get("ran") and not before.get("ran"):
        return "helped", f"ran after only (before: {before.get('why')})"
    if not before.get("ran"):
        return "same", f"not run: {before.get('why')}"
    if before.get("nondeterministic"):
        return "same", "outputs not compared: two runs before differ"
    difference = _output_difference(os.path.join(arrays, "before", f"{before['id']}.npz"),
                                    os.path.join(arrays, "after", f"{after['id']}.npz"))
    return ("changed", f"outputs {difference}") if difference else ("same", "")


def _parameter_changes(before: List[list], after: List[list]) -> str:
    """'' when the parameters agree, else which were added, removed or reshaped."""
    old, new = {name: shape for name, shape in before}, {name: shape for name, shape in after}
    parts = []
    for label, names in (("added", sorted(set(new) - set(old))), ("removed", sorted(set(old) - set(new))),
                         ("reshaped", sorted(n for n in set(old) & set(new) if old[n] != new[n]))):
        if names:
            parts.append(f"{label} {', '.join(names[:4])}" + (f" (+{len(names) - 4})" if len(names) > 4 else ""))
    return "; ".join(parts)


def _output_difference(before: str, after: str) -> str:
    import numpy as np

    with np.load(before) as old, np.load(after) as new:
        if sorted(old.files) != sorted(new.files):
            return f"differ in what they return: {sorted(old.files)[:4]} vs {sorted(new.files)[:4]}"
        for key in sorted(old.files):
            a, b = old[key], new[key]
            if a.shape != b.shape:
                return f"{key}: shape {a.shape} vs {b.shape}"
            if not np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-4, atol=1e-5, equal_nan=True):
                return f"{key}: max |difference| {np.nanmax(np.abs(a.astype(np.float64) - b)):.3g}"
    return ""


# ----- the worker (child side, under MindSpore) ----------------------------------------------------------------
class TargetTimeout(Exception):
    pass


def main(root: str, job_path: str, out_path: str) -> None:
    with open(job_path) as handle:
        job = json.load(handle)
    sys.path.insert(0, root)
    import mindspore as ms

    # synchronous PyNative: an op's error is raised by the op, not by a later one (of another target)
    ms.set_context(mode=ms.PYNATIVE_MODE, pynative_synchronize=True)
    ms.set_device("CPU")
    if job.get("cpu_shims"):
        _install_cpu_shims()
    signal.signal(signal.SIGALRM, _raise_timeout)
    sys.meta_path.insert(0, _StandIns(job.get("stand_ins", [])))
    imported: Dict[str, Any] = {}
    with open(out_path, "a") as out:
        for target in job["targets"]:
            out.write(json.dumps({"start": target["id"]}) + "\n")
            out.flush()
            signal.alarm(job["timeout"])
            try:
                record = _build_and_run(_import(target["module"], imported), target, job)
            except TargetTimeout:
                record = {"built": False, "why": f"timeout after {job['timeout']} s"}
            except Exception as error:  # a harness error: recorded, so the other targets still run
                record = {"built": False, "why": f"harness error: {_describe(error)}"}
            finally:
                signal.alarm(0)
            out.write(json.dumps({"id": target["id"], **record}) + "\n")
            out.flush()


def _import(name: str, imported: Dict[str, Any]) -> Any:
    """The module, or why it does not import (once per worker: the modules of a batch share their imports)."""
    import importlib

    if name not in imported:
        try:
            imported[name] = importlib.import_module(name)
        except TargetTimeout:
            raise
        except BaseException as error:
            imported[name] = f"import: {_describe(error)}"
    return imported[name]


class _StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """An import hook that stands in for modules this MindSpore lacks (mindocr imports the internal
    `mindspore.parallel._transformer`, gone in 2.10): each name they export is a Cell subclass that builds from
    any arguments, passes a function through when used as a decorator, and fails when called on anything else.
    The same stand-ins serve both copies, so a target that needs them fails alike before and after."""

    def __init__(self, prefixes: List[str]) -> None:
        self.prefixes = prefixes

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if any(name == prefix or name.startswith(prefix + ".") for prefix in self.prefixes):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> Any:
        import types

        module = types.ModuleType(spec.name)
        setattr(module, "__path__", [])  # noqa: B010 (a package, so submodules import)
        setattr(module, "__getattr__", _stand_in)  # noqa: B010 (module-level __getattr__: every name)
        return module

    def exec_module(self, module: Any) -> None:
        pass


def _install_cpu_shims() -> None:
    """Numpy stand-ins for the ops mindone's constructors call that MindSpore 2.10 has no CPU kernel for
    (mint.arange, randn, linspace, zeros_like, constant pad; the in-place initializers normal_, uniform_, fill_,
    zero_): without them most of its models cannot be built on CPU at all. Both copies get them, and the weights
    they draw are replaced by the first copy's anyway."""
    import mindspore as ms
    import numpy as np
    from mindspore import mint

    def tensor(values: Any, dtype: Any = None) -> Any:
        return ms.Tensor(values, dtype) if dtype is not None else ms.Tensor(values)

    def fill(self: Any, values: Any) -> Any:
        value = ms.Tensor(np.asarray(values, np.float32), self.dtype)
        self.set_data(value) if isinstance(self, ms.Parameter) else self.assign_value(value)
        return self

    def arange(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None) -> Any:
        return tensor(np.arange(start) if end is None else np.arange(start, end, step), dtype)

    def pad(input: Any, pad: Any, mode: str = "constant", value: Any = None) -> Any:
        if mode != "constant":
            return original_pad(input, pad, mode, value)
        widths = [(0, 0)] * (input.ndim - len(pad) // 2) + [tuple(pad[i:i + 2]) for i in range(len(pad) - 2, -1, -2)]
        return tensor(np.pad(input.asnumpy(), widths, constant_values=value or 0), input.dtype)

    original_pad = mint.nn.functional.pad
    mint.arange = arange
    mint.linspace = lambda start, end, steps, *, dtype=None: tensor(np.linspace(start, end, steps, dtype=np.float32),
                                                                    dtype)
    mint.randn = lambda *size, generator=None, dtype=None: tensor(np.random.standard_normal(
        size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size).astype(np.float32), dtype)
    mint.zeros_like = lambda input, *, dtype=None: tensor(np.zeros(input.shape, np.float32), dtype or input.dtype)
    mint.nn.functional.pad = pad
    ms.Tensor.normal_ = lambda self, mean=0, std=1, *, generator=None: fill(self, np.random.normal(mean, std,
                                                                                                  self.shape))
    ms.Tensor.uniform_ = lambda self, from_=0, to=1, *, generator=None: fill(self, np.random.uniform(from_, to,
                                                                                                    self.shape))
    ms.Tensor.fill_ = lambda self, value: fill(self, np.full(self.shape, float(value)))
    ms.Tensor.zero_ = lambda self: fill(self, np.zeros(self.shape))


def _stand_in(name: str) -> type:
    import mindspore as ms

    if name.startswith("__"):
        raise AttributeError(name)

    def build(self: Any, *args: Any, **kwargs: Any) -> None:
        ms.nn.Cell.__init__(self)

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        raise NotImplementedError(f"{name} stands in for a name this MindSpore lacks")

    return type(name, (ms.nn.Cell,), {"__init__": build, "__call__": call})


def _raise_timeout(*_: object) -> None:
    raise TargetTimeout()


def _describe(error: BaseException) -> str:
    """The error's type and first telling line (MindSpore's graph errors open with rules of dashes)."""
    text = str(error)
    missing = re.search(r"The kernel (\w+) unregistered|Unsupported op \[(\w+)\] on CPU", text)
    if missing:
        return f"no CPU kernel: {missing.group(1) or missing.group(2)}"
    lines = [line.strip() for line in text.splitlines() if line.strip().strip("-") and not line.startswith("- ")]
    return f"{type(error).__name__}: {(lines or [''])[0][:160]}"


def _build_and_run(module: Any, target: dict, job: dict) -> dict:
    """One target's record: built, why, parameters, plan, ran, nondeterministic; saves weights and outputs."""
    import mindspore as ms

    if isinstance(module, str):
        return {"built": False, "why": module}
    ms.set_context(mode=ms.PYNATIVE_MODE)  # a GRAPH_MODE run of the target before must not leak into this one
    obj = module
    for part in target["qualname"].split("."):
        obj = getattr(obj, part, None)
    plan = target.get("plan") or {}
    if obj is None:
        return {"built": False, "why": "not defined at import"}
    if inspect.isclass(obj) and not issubclass(obj, ms.nn.Cell):
        return {"built": False, "why": "not an nn.Cell"}
    built = _build(obj, plan.get("build"), module)
    if isinstance(built, str):
        return {"built": False, "why": built}
    instance, build_plan, sizes = built
    sizes["hiddens"] = _unique([sizes["hidden"]] + _layer_widths(instance))[:3]
    record: Dict[str, Any] = {"built": True, "parameters": [], "plan": {"build": build_plan}}
    arrays = os.path.join(job["arrays"], job["side"])
    if isinstance(instance, ms.nn.Cell):
        instance.set_train(False)
        weights = os.path.join(job["arrays"], "weights", f"{target['id']}.npz")
        record["parameters"] = _share_weights(instance, weights, save=job["side"] == "before")
        if not _has_construct(instance):
            return {**record, "ran": False, "why": "no construct of its own"}
    call = instance.construct if isinstance(instance, ms.nn.Cell) else instance
    candidates = ([(plan["inputs"], plan.get("mode", "pynative"))] if plan.get("inputs")
                  else [(inputs, "pynative") for inputs in _input_plans(call, sizes)])
    if not candidates:
        return {**record, "ran": False, "why": "no input fits its parameters"}
    errors = []
    for inputs, mode in candidates:
        try:
            outputs = _flatten(_run(instance, inputs, mode))
        except TargetTimeout:
            raise
        except BaseException as error:
            if mode == "pynative" and _kernel_missing(error) and isinstance(instance, ms.nn.Cell):
                candidates.insert(candidates.index((inputs, mode)) + 1, (inputs, "graph"))
            errors.append(_describe(error))
            continue
        record.update(ran=True, plan={"build": build_plan, "inputs": inputs, "mode": mode})
        if job["side"] == "before":
            again = _flatten(_run(instance, inputs, mode))
            record["nondeterministic"] = not _same_arrays(outputs, again)
        import numpy as np

        np.savez(os.path.join(arrays, f"{target['id']}.npz"), **outputs)
        return record
    last = f" (+{len(errors) - 1} tries, the last: {errors[-1]})" if errors[-1] != errors[0] else ""
    return {**record, "ran": False, "why": f"forward: {errors[0]}{last}"}


def _kernel_missing(error: BaseException) -> bool:
    """An op PyNative has no CPU kernel for (mindone's mint ops: Embedding, ...); GRAPH_MODE may have one."""
    return _describe(error).startswith("no CPU kernel")


def _layer_widths(instance: Any) -> List[int]:
    """The input widths of the first layers of a cell (Dense, Conv, norms): what its input may need."""
    widths = []
    for _, cell in getattr(instance, "cells_and_names", lambda: [])():
        for attribute in ("in_channels", "in_features", "num_channels", "num_features", "normalized_shape"):
            value = getattr(cell, attribute, None)
            value = value[-1] if isinstance(value, (tuple, list)) and value else value
            if isinstance(value, int) and not isinstance(value, bool):
                widths.append(value)
                break
        if len(widths) >= 3:
            break
    return widths


def _unique(values: List[Any]) -> List[Any]:
    return [value for i, value in enumerate(values) if value not in values[:i]]


def _has_construct(cell: Any) -> bool:
    import mindspore as ms

    return type(cell).construct is not ms.nn.Cell.construct


# Building: a plan is {"how": "none" | "config" | "kwargs", "kwargs": {...}, "config": "module:Class"}.
def _build(obj: Any, plan: Optional[dict], module: Any) -> Any:
    """(instance, plan, sizes) or why it could not be built: a class built, a function that takes tensors as it
    is, and a function that takes sizes (a factory) the cell it returns."""
    import mindspore as ms

    if (plan or {}).get("how") == "function" or (not plan and not inspect.isclass(obj) and _takes_tensors(obj)):
        return obj, {"how": "function"}, {"hidden": 32, "vocab": 16}
    plans = [plan] if plan else _build_plans(obj, module)
    if not plans:
        return "no way to build it"
    errors = []
    for candidate in plans:
        if isinstance(candidate, str):
            errors.append(candidate)
            continue
        _seed()
        try:
            kwargs, sizes = _realize_build(candidate)
            instance = obj(**kwargs)
        except TargetTimeout:
            raise
        except BaseException as error:
            errors.append(_describe(error))
            continue
        if not isinstance(instance, ms.nn.Cell):
            return f"a function that takes no tensors and returns a {type(instance).__name__}, not a cell"
        return instance, candidate, sizes
    return errors[-1]


def _takes_tensors(function: Any) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    required = [p.name for p in parameters if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL,
                                                                                       p.VAR_KEYWORD)]
    return bool(required) and all(name in _IDS + _FLOATS + _MASKS for name in required)


def _build_plans(cls: type, module: Any) -> List[Any]:
    """Ways to build `cls`, in order; a string where a way does not apply says why."""
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError) as error:
        return [f"no signature: {error}"]
    parameters = [p for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    required = [p for p in parameters if p.default is p.empty]
    plans: List[Any] = []
    if any(p.name == "config" for p in parameters):
        config = _config_class(cls, module)
        if config is None:
            plans.append("no transformers config class found for `config`")
        else:
            extra = {p.name: _small_value(p) for p in required if p.name != "config"}
            missing = [name for name, value in extra.items() if value is None]
            plans.append({"how": "config", "config": f"{config.__module__}:{config.__qualname__}", "kwargs": extra}
                         if not missing else f"required parameter {missing[0]!r} has no small value")
    if not required:
        plans.append({"how": "none", "kwargs": {}})
    elif not any(p.name == "config" for p in required):
        kwargs = {p.name: _small_value(p) for p in required}
        missing = [name for name, value in kwargs.items() if value is None]
        plans.append({"how": "kwargs", "kwargs": kwargs} if not missing
                     else f"required parameter {missing[0]!r} has no small value")
    return plans


def _small_value(parameter: inspect.Parameter) -> Any:
    """A small value for a required constructor parameter, picked by its name (None: no idea)."""
    name = parameter.name.lower()
    rules: List[Tuple[Tuple[str, ...], Any]] = [
        (("idx", "index", "layer_id", "layer_number"), 0), (("bit",), 8),
        (("length", "max_len", "seq_len", "num_tokens"), SEQUENCE),
        (("head_dim", "dim_head", "attention_head_dim", "head_size"), 16),
        (("heads", "num_head", "n_head"), 2),
        (("layers", "depth", "blocks", "n_layer"), 1),
        (("kernel",), 3), (("stride",), 1), (("groups",), 1), (("patch",), 2),
        (("vocab", "num_embeddings", "num_classes", "num_labels", "n_vocab"), 16),
        (("eps",), 1e-5), (("drop", "dropout"), 0.0), (("ratio",), 2.0),
        (("channels", "dim", "size", "features", "width", "hidden", "embed", "d_model", "planes", "units",
          "in_c", "out_c", "shape"), 32),
    ]
    if name in ("h", "w", "height"):  # a feature map's
        return SPATIAL
    for keys, value in rules:
        if any(key in name for key in keys):
            return value
    return 32 if parameter.annotation in (int, "int") else None


def _config_class(cls: type, module: Any) -> Optional[type]:
    """The config class for a `config` parameter: the class's `config_class` (transformers), else one the module
    names (mindone imports transformers' configs; mindocr has its own), the one named after the module first."""
    declared = getattr(cls, "config_class", None)
    if inspect.isclass(declared) and declared.__name__ != "PretrainedConfig":
        return declared
    found = [value for name, value in vars(module).items()
             if inspect.isclass(value) and name.endswith("Config") and name != "PretrainedConfig"]
    model = module.__name__.rsplit(".", 1)[-1].removeprefix("modeling_").replace("_", "")
    named = [value for value in found if value.__name__.lower().startswith(model)]
    return (named or found or [None])[0]  # type: ignore[list-item]


def _realize_build(plan: dict) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The constructor's keyword arguments for a plan, and the sizes inputs should have (hidden, vocab)."""
    kwargs = dict(plan["kwargs"])
    sizes = {"hidden": 32, "vocab": 16}  # _small_value's widths and vocabularies
    if plan["how"] == "config":
        module_name, class_name = plan["config"].split(":")
        config = _small_config(getattr(importlib.import_module(module_name), class_name))
        kwargs["config"] = config
        sizes = {"hidden": getattr(config, "hidden_size", 64) or 64, "vocab": getattr(config, "vocab_size", 100),
                 "channels": getattr(config, "num_channels", 3), "image": getattr(config, "image_size", 32)}
    return kwargs, sizes


def _small_config(config_class: type) -> Any:
    """config_class made small: whichever of SMALL_CONFIG's attributes it has, in its sub-configs too."""
    default = config_class()
    small = {key: value for key, value in SMALL_CONFIG.items() if hasattr(default, key)}
    try:
        config = config_class(**small)
    except TypeError:  # a config that takes no such arguments: set them
        config = default
        for key, value in small.items():
            setattr(config, key, value)
    if getattr(config, "head_dim", None):
        config.head_dim = config.hidden_size // config.num_attention_heads
    for name, value in list(vars(config).items()):
        if type(value).__name__.endswith("Config") and type(value) is not type(config):
            setattr(config, name, _small_config(type(value)))
    return config


# Inputs: a plan is a list of {"name", "kind", "shape"}, realized with a fixed seed in order.
_IDS = ("input_ids", "ids", "token_ids", "tokens", "decoder_input_ids")
_FLOATS = ("hidden_states", "x", "input", "inputs", "inputs_embeds", "feature", "features", "feats", "tensor",
           "encoder_hidden_states", "query", "key", "value", "q", "k", "v", "h", "embeddings", "sample",
           "input_tensor", "input_data", "logits", "pixel_values", "image", "images", "img", "src", "tgt")


_MASKS = ("position_ids", "attention_mask", "labels")


def _input_plans(call: Any, sizes: Dict[str, Any]) -> List[List[dict]]:
    """Input plans for `call`, most likely first; [] when a required parameter has no input by its name."""
    try:
        parameters = [p for p in inspect.signature(call).parameters.values()
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"]
    except (TypeError, ValueError):
        return []
    names = [p.name for p in parameters]
    wanted = [p.name for p in parameters if p.default is p.empty]
    if not wanted:  # all optional (transformers models): the first main input there is
        wanted = [name for name in _IDS + ("pixel_values",) + _FLOATS if name in names][:1]
    if len(wanted) == 1 and wanted[0] not in _IDS + _MASKS:  # one input: a tensor, whatever its name
        return [[{"name": wanted[0], "kind": "normal", "shape": list(shape)}] for shape in _shapes(sizes)]
    if not wanted or any(name not in _IDS + _FLOATS + _MASKS for name in wanted):
        return []
    plans = []
    for shape in _shapes(sizes):
        plan = [_input_of(name, shape, sizes) for name in wanted]
        if "labels" in names and "labels" not in wanted:  # exercise the loss too: 0/1 labels suit any classifier
            plans += [plan + [{"name": "labels", "kind": "labels", "shape": [1, SEQUENCE]}],
                      plan + [{"name": "labels", "kind": "labels", "shape": [1]}]]
        plans.append(plan)
    return _unique(plans)


def _shapes(sizes: Dict[str, Any]) -> List[Tuple[int, ...]]:
    """Shapes to try for a float input: sequences, feature maps, vectors, videos, in the widths likely to fit."""
    widths = sizes.get("hiddens") or [32]
    shapes: List[Tuple[int, ...]] = [(1, SEQUENCE, width) for width in widths]
    shapes += [(1, width, SPATIAL, SPATIAL) for width in widths]
    return shapes + [(1, widths[0]), (1, widths[0], 4, SPATIAL, SPATIAL)]


def _input_of(name: str, shape: Tuple[int, ...], sizes: Dict[str, Any]) -> dict:
    if name in _IDS:
        return {"name": name, "kind": "ids", "shape": [1, SEQUENCE], "high": sizes.get("vocab", 16)}
    if name == "position_ids":
        return {"name": name, "kind": "positions", "shape": [1, SEQUENCE]}
    if name == "attention_mask":
        return {"name": name, "kind": "ones", "shape": [1, SEQUENCE]}
    if name == "labels":
        return {"name": name, "kind": "labels", "shape": [1, SEQUENCE]}
    if name == "pixel_values":
        shape = (1, sizes.get("channels", 3), sizes.get("image", 32), sizes.get("image", 32))
    return {"name": name, "kind": "normal", "shape": list(shape)}


def _run(instance: Any, inputs: List[dict], mode: str) -> Any:
    """instance(**inputs) in PyNative or GRAPH_MODE, the inputs made from their plan with a fixed seed."""
    import mindspore as ms
    import numpy as np

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)

    rng = np.random.default_rng(SEED)
    arguments = {}
    for spec in inputs:
        shape = tuple(spec["shape"])
        if spec["kind"] == "ids":
            value = rng.integers(0, spec.get("high", 16), shape).astype(np.int32)
        elif spec["kind"] == "labels":
            value = rng.integers(0, 2, shape).astype(np.int32)
        elif spec["kind"] == "positions":
            value = np.broadcast_to(np.arange(shape[-1], dtype=np.int32), shape).copy()
        elif spec["kind"] == "ones":
            value = np.ones(shape, np.int32)
        else:
            value = rng.standard_normal(shape).astype(np.float32)
        arguments[spec["name"]] = ms.Tensor(value)
    _seed()
    return instance(**arguments)


def _flatten(value: Any, prefix: str = "out") -> Dict[str, Any]:
    """The arrays in an output (tensors in tuples, lists, dicts, ModelOutputs), by path."""
    import numpy as np

    if value is None:
        return {}
    if hasattr(value, "asnumpy"):
        return {prefix: value.asnumpy()}
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
        return {prefix: np.asarray(value)}
    items: Iterator[Tuple[Any, Any]]
    if isinstance(value, dict):
        items = iter(value.items())
    elif isinstance(value, (tuple, list)):
        items = enumerate(value)
    else:
        return {}
    flat: Dict[str, Any] = {}
    for key, item in items:
        flat.update(_flatten(item, f"{prefix}.{key}"))
    return flat


def _same_arrays(first: Dict[str, Any], second: Dict[str, Any]) -> bool:
    import numpy as np

    return first.keys() == second.keys() and all(
        first[k].shape == second[k].shape and np.allclose(first[k], second[k], rtol=1e-4, atol=1e-5, equal_nan=True)
        for k in first)


def _share_weights(cell: Any, path: str, save: bool) -> List[list]:
    """The cell's sorted [name, shape] parameters; the first copy saves its weights, the second loads them by
    name, so the two agree whatever order their initializers drew random numbers in."""
    import mindspore as ms
    import numpy as np

    parameters = dict(cell.parameters_and_names())
    if save:
        np.savez(path, **{name: p.asnumpy() for name, p in parameters.items()})
    elif os.path.exists(path):
        with np.load(path) as saved:
            for name, parameter in parameters.items():
                if name in saved.files and tuple(saved[name].shape) == tuple(parameter.shape):
                    parameter.set_data(ms.Tensor(saved[name]))
    return sorted([name, list(p.shape)] for name, p in parameters.items())


def _seed() -> None:
    import mindspore as ms
    import numpy as np

    ms.set_seed(SEED)
    np.random.seed(SEED)
    random.seed(SEED)


if __name__ == "__main__":
    main(*sys.argv[1:4])
