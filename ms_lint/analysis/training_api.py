"""MindSpore's training APIs as the project rules read them: which calls train or cast a network, and their arguments.

`Model`, `build_train_network`, `auto_mixed_precision` and `TrainOneStepCell`: where each takes the network, the
AMP level and the optimizer, what loss scale a call sets up, and the float16-only operators of Ascend.
"""
from __future__ import annotations

import ast
from typing import Callable, Iterable, Optional

MODEL = frozenset({"mindspore.Model", "mindspore.train.Model", "mindspore.train.model.Model"})

BUILD_TRAIN_NETWORK = frozenset({"mindspore.build_train_network", "mindspore.amp.build_train_network",
                                 "mindspore.train.amp.build_train_network", "mindspore.train.build_train_network"})

AUTO_MIXED_PRECISION = frozenset({"mindspore.amp.auto_mixed_precision", "mindspore.train.amp.auto_mixed_precision",
                                  "mindspore.auto_mixed_precision"})

TRAIN_ONE_STEP = frozenset({"mindspore.nn.TrainOneStepCell", "mindspore.nn.wrap.TrainOneStepCell",
                            "mindspore.nn.wrap.cell_wrapper.TrainOneStepCell"})

LOSS_SCALE_NAMES = ("LossScaleManager", "LossScaler", "TrainOneStepWithLossScaleCell", "scale_sense")

# (network argument, level argument name and position, optimizer position) of each AMP entry point
_SIGNATURES = {
    "Model": ("network", ("amp_level", 6), 2),
    "build_train_network": ("network", ("level", 3), 1),
    "auto_mixed_precision": ("network", ("amp_level", 1), None),
    "TrainOneStepCell": ("network", None, 1),
}

# `to_float` exceptions AMP O2 keeps by itself: `_auto_black_list` / `_do_keep_batchnorm_fp32` cast these
# classes back to float32 (mindspore/train/amp.py AMP_BLACK_LIST, measured for BatchNorm1d).
AMP_O2_FP32_CLASSES = frozenset({"mindspore.nn.BatchNorm1d", "mindspore.nn.BatchNorm2d",
                                 "mindspore.nn.BatchNorm3d", "mindspore.nn.LayerNorm"})

FLOAT_TYPES = ("float16", "float32", "bfloat16")


# Operators that are fp16-only or lose accuracy in float32 on Ascend (docs/RULES.md MSL052; ORACLE.md case 19 quotes
# the 2.10 docstrings: Conv3d/Conv3dTranspose "only float16 in Ascend", adaptive_max_pool1d "Ascend platform only
# supports float16", Sort "If use float32, it may cause loss of accuracy"; TopK follows the migration guide).
# Qualified name under `mindspore.` -> the name messages show.
_FP16_OPERATORS = {
    "nn.Conv3d": "nn.Conv3d", "nn.Conv3dTranspose": "nn.Conv3dTranspose", "mint.nn.Conv3d": "mint.nn.Conv3d",
    "ops.Conv3D": "ops.Conv3D", "ops.operations.Conv3D": "ops.Conv3D", "ops.Conv3DTranspose": "ops.Conv3DTranspose",
    "ops.operations.Conv3DTranspose": "ops.Conv3DTranspose", "ops.conv3d": "ops.conv3d",
    "ops.conv3d_transpose": "ops.conv3d_transpose", "ops.Sort": "ops.Sort", "ops.operations.Sort": "ops.Sort",
    "ops.sort": "ops.sort", "ops.function.sort": "ops.sort", "mint.sort": "mint.sort", "ops.TopK": "ops.TopK",
    "ops.operations.TopK": "ops.TopK", "ops.topk": "ops.topk", "ops.function.topk": "ops.topk",
    "mint.topk": "mint.topk", "ops.adaptive_max_pool1d": "ops.adaptive_max_pool1d",
    "nn.AdaptiveMaxPool1d": "nn.AdaptiveMaxPool1d",
}
FP16_OPS = {f"mindspore.{name}": shown for name, shown in _FP16_OPERATORS.items()}


def constant_string(expr: Optional[ast.AST], bindings: Iterable[ast.AST] = ()) -> Optional[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    values = list(bindings)
    if isinstance(expr, ast.Name) and len(values) == 1:
        return constant_string(values[0])
    return None


def argument(call: ast.Call, name: str, position: Optional[int]) -> Optional[ast.expr]:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position is not None and position < len(call.args) and \
            not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        return call.args[position]
    return None


def api_of(qualname: Optional[str]) -> Optional[str]:
    """"Model", "build_train_network", "auto_mixed_precision", "TrainOneStepCell" or None."""
    for api, names in (("Model", MODEL), ("build_train_network", BUILD_TRAIN_NETWORK),
                       ("auto_mixed_precision", AUTO_MIXED_PRECISION), ("TrainOneStepCell", TRAIN_ONE_STEP)):
        if qualname in names:
            return api
    return None


def level_argument(call: ast.Call, api: str) -> Optional[ast.expr]:
    spec = _SIGNATURES[api][1]
    return argument(call, *spec) if spec else None


def has_optimizer(call: ast.Call, api: str) -> bool:
    position = _SIGNATURES[api][2]
    return position is None or given(argument(call, "optimizer", position))


def loss_scale_kind(call: ast.Call, api: str, qualname: Callable[[ast.expr], Optional[str]]) -> str:
    """"default" (not given), "none" (None), "static" (FixedLossScaleManager(..., drop_overflow_update=False),
    `sens=`), "updating" (DynamicLossScaleManager, FixedLossScaleManager dropping overflows: an update cell, which
    CPU rejects), "unknown" (a variable, **kwargs)."""
    if any(k.arg is None for k in call.keywords):
        return "unknown"
    if api == "TrainOneStepCell":
        return "static" if argument(call, "sens", 2) is not None else "default"
    value = argument(call, "loss_scale_manager", None)
    if value is None:
        return "default"
    if isinstance(value, ast.Constant) and value.value is None:
        return "none"
    if isinstance(value, ast.Call):
        name = (qualname(value.func) or "").rpartition(".")[2]
        if name == "DynamicLossScaleManager":
            return "updating"
        if name == "FixedLossScaleManager":
            drop = argument(value, "drop_overflow_update", 1)
            return "static" if isinstance(drop, ast.Constant) and drop.value is False else "updating"
    return "unknown"


def module_constant(tree: ast.Module, expr: Optional[ast.expr]) -> Optional[str]:
    """A string literal, or a module-level name assigned one string literal once."""
    if isinstance(expr, ast.Name):
        values = [s.value for s in tree.body if isinstance(s, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == expr.id for t in s.targets)]
        return constant_string(expr, values)
    return constant_string(expr)


def given(expr: Optional[ast.expr]) -> bool:
    return expr is not None and not (isinstance(expr, ast.Constant) and expr.value is None)
