"""What ms_lint knows about the MindSpore / MindTorch API surface, by qualified name (MindSpore is never imported)."""
from __future__ import annotations

from typing import Optional

# Packages whose public CapWords classes are nn.Cell subclasses. `mindtorch.torch.nn.Module` is a Cell whose
# graph entry point is `forward` (MindTorch's construct calls it).
_CELL_PACKAGES = ("mindspore.nn.", "mindspore.mint.nn.")
_MODULE_PACKAGES = ("mindtorch.torch.nn.",)
# CapWords names under those packages that are not Cells.
_NOT_CELLS = frozenset(
    {
        "Metric", "Accuracy", "Precision", "Recall", "F1", "Fbeta", "Loss", "MAE", "MSE", "Top1CategoricalAccuracy",
        "Top5CategoricalAccuracy", "TopKCategoricalAccuracy", "ConfusionMatrix", "ConfusionMatrixMetric", "Dice",
        "HausdorffDistance", "MeanSurfaceDistance", "RootMeanSquareDistance", "OcclusionSensitivity", "Perplexity",
        "ROC", "BleuScore", "CosineSimilarity", "Model", "Callback", "LossMonitor", "TimeMonitor", "CheckpointConfig",
        "ModelCheckpoint", "SummaryCollector", "LearningRateScheduler", "LossScaleManager", "FixedLossScaleManager",
        "DynamicLossScaleManager", "RunContext", "DynamicLossScaler", "StaticLossScaler", "LossScaler", "Parameter",
        "ParameterTuple", "Tensor", "Dataset", "Function",
    }
)
# Cells that register the Cells they hold; a list wrapped in one of these is fine (MSL030).
CELL_CONTAINERS = frozenset({"CellList", "SequentialCell", "CellDict", "ModuleList", "Sequential", "ModuleDict"})

JIT_DECORATORS = frozenset(
    {"mindspore.jit", "mindspore.common.api.jit", "mindspore.common.jit", "mindspore.ms_function",
     "mindspore.common.api.ms_function"}
)
PARAMETER_CLASSES = frozenset(
    {"mindspore.Parameter", "mindspore.common.Parameter", "mindspore.common.parameter.Parameter",
     "mindtorch.torch.nn.Parameter", "mindtorch.torch.nn.parameter.Parameter"}
)
TENSOR_CLASSES = frozenset(
    {"mindspore.Tensor", "mindspore.common.Tensor", "mindspore.common.tensor.Tensor", "mindtorch.torch.Tensor",
     "mindtorch.torch.tensor"}
)
# Packages whose calls return graph tensors (Primitive instances called, functional ops, mindspore.numpy).
_TENSOR_OP_PACKAGES = ("mindspore.ops.", "mindspore.numpy.", "mindspore.mint.", "mindtorch.torch.")
# ...except these, which return Python shapes, ranks, dtypes or booleans.
_NON_TENSOR_OPS = frozenset(
    {"shape", "Shape", "rank", "Rank", "dtype", "DType", "is_tensor", "typeof", "dyn_shape", "is_floating_point",
     "numel", "size", "Size", "get_rank", "get_group_size"}
)
HOST_NUMERIC_PACKAGES = ("numpy", "scipy")
# NumPy functions that build an array from shapes or Python values.
NUMPY_ARRAY_CONSTRUCTORS = frozenset({"array", "asarray", "zeros", "ones", "full", "empty", "arange", "linspace",
                                      "eye", "identity", "tri", "triu", "tril", "diag", "meshgrid", "logspace"})


def class_kind(qualname: str) -> Optional[str]:
    """"cell" or "module" for MindSpore/MindTorch classes that are Cells, None for anything else."""
    package, _, last = qualname.rpartition(".")
    if not last[:1].isupper() or last in _NOT_CELLS or ".metrics" in package:
        return None
    package += "."
    if package.startswith(_MODULE_PACKAGES):
        return "module"
    if package.startswith(_CELL_PACKAGES):
        return "cell"
    return None


def is_framework(qualname: Optional[str]) -> bool:
    return bool(qualname) and qualname.split(".", 1)[0] in ("mindspore", "mindtorch")


def is_host_numeric(qualname: Optional[str]) -> bool:
    """NumPy or SciPy (never `mindspore.numpy`: qualified names are resolved through imports)."""
    return bool(qualname) and qualname.split(".", 1)[0] in HOST_NUMERIC_PACKAGES


def returns_tensor(qualname: Optional[str]) -> bool:
    if not qualname:
        return False
    if qualname in TENSOR_CLASSES or qualname in PARAMETER_CLASSES:
        return True
    if not qualname.startswith(_TENSOR_OP_PACKAGES):
        return False
    return qualname.rpartition(".")[2] not in _NON_TENSOR_OPS
