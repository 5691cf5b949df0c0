"""What ms_lint knows about the MindSpore / MindTorch API surface, by qualified name (MindSpore is never imported)."""
from __future__ import annotations

import ast
from typing import Callable, FrozenSet, Iterable, Optional, Set

from ms_lint.analysis import mindspore_nn

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
# A function these decorate runs in Python while its caller compiles, on constant arguments: host code.
COMPILE_TIME_DECORATORS = frozenset(
    {"mindspore.ops.constexpr", "mindspore.ops.primitive.constexpr", "mindspore.ops._primexpr",
     "mindspore.ops.primitive._primexpr"}
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
     "numel", "size", "Size", "get_rank", "get_group_size", "get_world_size", "get_local_rank",
     "ScalarCast", "scalar_cast",  # a Python number cast to another number type
     "tuple_len", "list_len"}  # a sequence's length
)
HOST_NUMERIC_PACKAGES = ("numpy", "scipy")
# NumPy functions that build an array from shapes or Python values.
NUMPY_ARRAY_CONSTRUCTORS = frozenset({"array", "asarray", "zeros", "ones", "full", "empty", "arange", "linspace",
                                      "eye", "identity", "tri", "triu", "tril", "diag", "meshgrid", "logspace"})


def class_kind(qualname: str) -> Optional[str]:
    """"cell" or "module" for MindSpore/MindTorch classes that are Cells, None for anything else."""
    package, _, last = qualname.rpartition(".")
    if not last[:1].isupper() or last in _NOT_CELLS or ".metrics" in package or ".functional" in package:
        return None
    if package in mindspore_nn.NAMES and last not in mindspore_nn.NAMES[package]:
        return None  # no such class in 2.10 (`mint.nn.Log_softmax`): calling it builds nothing
    package += "."
    if package.startswith(_MODULE_PACKAGES):
        return "module"
    if package.startswith(_CELL_PACKAGES):
        return "cell"
    return None


def last_names(*qualnames: Iterable[str]) -> FrozenSet[str]:
    """The last components of qualified names (`mindspore.ops.assign` -> `assign`), for `Rule.call_names`."""
    return frozenset(qualname.rpartition(".")[2] for names in qualnames for qualname in names)


def mindspore_layer(qualname: Optional[str]) -> Optional[str]:
    """The class name of a layer of MindSpore's own `nn` package ("Conv2d" for `mindspore.nn.Conv2d` and
    `mindspore.nn.layer.conv.Conv2d`); None for anything else, including `mindspore.mint.nn` and MindTorch's
    `torch.nn`, whose layers take PyTorch's arguments and semantics."""
    if not qualname or not qualname.startswith("mindspore.nn."):
        return None
    package, _, name = qualname.rpartition(".")
    if package in ("mindspore.nn", "mindspore.nn.layer") or package.startswith("mindspore.nn.layer."):
        return name
    return None


def is_framework(qualname: Optional[str]) -> bool:
    return qualname is not None and qualname.split(".", 1)[0] in ("mindspore", "mindtorch")


def is_host_numeric(qualname: Optional[str]) -> bool:
    """NumPy or SciPy (never `mindspore.numpy`: qualified names are resolved through imports)."""
    return qualname is not None and qualname.split(".", 1)[0] in HOST_NUMERIC_PACKAGES


def returns_tensor(qualname: Optional[str]) -> bool:
    if not qualname:
        return False
    if qualname in TENSOR_CLASSES or qualname in PARAMETER_CLASSES:
        return True
    if not qualname.startswith(_TENSOR_OP_PACKAGES):
        return False
    return qualname.rpartition(".")[2] not in _NON_TENSOR_OPS


# `nn.Cell` itself, as a base is spelled (`nn.Cell`, `mindspore.nn.cell.Cell`)
CELL_BASES = frozenset({"mindspore.nn.Cell", "mindspore.nn.cell.Cell"})


def constructs_primitive(qualname: Optional[str]) -> bool:
    """A `mindspore.ops` primitive class (`ops.MaxPool3D`, `P.ReduceSum`): calling it builds an operator, not data."""
    return qualname is not None and qualname.startswith("mindspore.ops.") and \
        qualname.rpartition(".")[2][:1].isupper() and qualname not in TENSOR_CLASSES


# MindSpore's optimizers (Cells that hold a `parameters` tuple): the optim packages, and the classes `mindspore.nn`
# exports
_OPTIMIZER_PACKAGES = ("mindspore.nn.optim", "mindspore.experimental.optim", "mindspore.mint.optim")
_NN_OPTIMIZERS = frozenset({
    "Momentum", "SGD", "Adam", "AdamWeightDecay", "AdamOffload", "AdamW", "Lamb", "LARS", "RMSProp", "Adagrad",
    "FTRL", "ProximalAdagrad", "LazyAdam", "AdaMax", "Adadelta", "ASGD", "Rprop", "Optimizer", "ThorGpu",
})


def is_optimizer(qualname: Optional[str]) -> bool:
    """A MindSpore optimizer class (`nn.Adam`, `mindspore.experimental.optim.Adam`)."""
    if not qualname:
        return False
    package, _, last = qualname.rpartition(".")
    return package.startswith(_OPTIMIZER_PACKAGES) or (package == "mindspore.nn" and last in _NN_OPTIMIZERS)


def returns_metadata(qualname: Optional[str]) -> bool:
    """MindSpore/MindTorch functions and primitive classes returning Python shapes, ranks, dtypes or booleans
    (`ops.shape(x)`, `P.Shape()(x)`), never tensor data."""
    return qualname is not None and qualname.startswith(_TENSOR_OP_PACKAGES) and \
        qualname.rpartition(".")[2] in _NON_TENSOR_OPS


# The members of `nn.Cell` in MindSpore 2.10, from `dir(nn.Cell)` and `vars(nn.Cell())` (measured; ORACLE.md,
# "Case 11 detail"). Public methods: an attribute of the same name shadows them and breaks their callers.
CELL_METHODS = frozenset({
    "add_flags", "add_flags_recursive", "apply", "buffers", "cast_inputs", "cells", "cells_and_names",
    "check_names", "check_names_and_refresh_name", "compile", "compile_and_run", "construct", "extend_repr",
    "generate_scope", "get_buffer", "get_extra_state", "get_flags", "get_func_graph_proto", "get_inputs",
    "get_mixed_precision_type", "get_parameters", "get_scope", "get_sub_cell", "init_parameters_data",
    "insert_child_to_cell", "insert_param_to_cell", "load_state_dict", "name_cells", "named_buffers", "offload",
    "parameters_and_names", "parameters_broadcast_dict", "parameters_dict", "recompute",
    "register_backward_hook", "register_backward_pre_hook", "register_buffer", "register_forward_hook",
    "register_forward_pre_hook", "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_parameter_forward_hook", "register_saved_tensors_hooks", "register_state_dict_post_hook",
    "register_state_dict_pre_hook", "remove_redundant_parameters", "run_construct", "set_boost",
    "set_broadcast_flag", "set_comm_fusion", "set_data_parallel", "set_extra_state", "set_grad", "set_inputs",
    "set_jit_config", "set_mixed_precision_type", "set_train", "shard", "state_dict", "to", "to_empty",
    "to_float", "trainable_params", "untrainable_params", "update_cell_prefix", "update_cell_type",
    "update_parameters_name"
})
# Properties without a setter: assigning one raises AttributeError in `__init__`.
CELL_READONLY_PROPERTIES = frozenset({
    "cls_name", "compile_cache", "compiled", "create_time", "enable_backward_hook", "exist_names", "exist_objs",
    "jit_config_dict", "param_prefix", "phase_cache"
})
# Properties with a setter and public data attributes: assigning them is their intended use.
CELL_SETTABLE_MEMBERS = frozenset({
    "IGNORE_LIST", "T_destination", "arguments_key", "bprop_debug", "cell_init_args", "cell_type",
    "compile_phase", "global_cells", "grad_ops_label", "has_bprop", "is_top_cell", "mixed_precision_type",
    "parallel_parameter_merge_net_dict", "parallel_parameter_name_list", "parameter_layout_dict", "phase",
    "pipeline_segment", "pipeline_stage", "requires_grad", "sequence_modified", "total_instance_count",
    "training"
})
# Private methods and the private attributes `Cell.__init__` sets.
CELL_PRIVATE_MEMBERS = frozenset({
    "_add_attr", "_add_init_args", "_add_mixed_precision_flag", "_amp_level", "_apply", "_auto_prefix",
    "_backward_hook", "_backward_pre_hook", "_bprop_debug", "_buffers", "_call_custom_bprop",
    "_call_post_process", "_call_pre_process", "_cell_backward_hook", "_cell_backward_pre_hook", "_cell_tag",
    "_cells", "_check_construct_args", "_check_parameter_consistency", "_children_scope_recursive",
    "_compile_cache", "_compile_phase", "_compiled", "_complex_call", "_construct_sig", "_create_time",
    "_del_attr", "_dynamic_shape_inputs", "_exist_names", "_exist_objs", "_forward_hook",
    "_forward_hook_always_called", "_forward_hook_with_kwargs", "_forward_pre_hook",
    "_forward_pre_hook_with_kwargs", "_get_attr_from_cell", "_get_cell_parallel_mode", "_get_compile_args",
    "_get_name", "_get_prims_recursively", "_has_config_recompute", "_has_mutable_args_list", "_id",
    "_in_strategy", "_init_check", "_init_flag", "_is_check_and_refresh", "_is_recursion_hook",
    "_jit_backward_hook", "_jit_backward_pre_hook", "_jit_config_dict", "_jit_forward_hook",
    "_jit_forward_pre_hook", "_jit_graph_name", "_lazy_backward_hook", "_lazy_backward_pre_hook",
    "_lazy_construct_sig", "_lazy_forward_hook", "_lazy_forward_hook_always_called",
    "_lazy_forward_hook_with_kwargs", "_lazy_forward_pre_hook", "_lazy_forward_pre_hook_with_kwargs",
    "_lazy_load_state_dict_post_hooks", "_lazy_load_state_dict_pre_hooks", "_lazy_non_persistent_buffers_set",
    "_lazy_state_dict_hooks", "_lazy_state_dict_pre_hooks", "_lazy_user_parameters", "_load_from_state_dict",
    "_load_state_dict_post_hooks", "_load_state_dict_pre_hooks", "_mp_comm_recompute", "_named_members",
    "_no_auto_lazy_inline", "_non_persistent_buffers_set", "_out_strategy",
    "_parallel_optimizer_comm_recompute", "_parallel_parameter_merge_net_dict", "_parallel_parameter_name_list",
    "_param_prefix", "_parameter_layout_dict", "_params", "_params_list", "_phase", "_phase_cache", "_predict",
    "_primitives", "_recompute", "_recompute_cell", "_recompute_slice_activation", "_run_construct",
    "_run_forward_hook", "_run_forward_pre_hook", "_run_grad_construct", "_save_to_state_dict",
    "_saved_tensors_pack_hook", "_saved_tensors_unpack_hook", "_scope", "_self_check", "_set_attr_for_cell",
    "_set_attr_for_object", "_set_attr_for_param_or_param_tuple", "_set_attr_for_parameter_in_list_or_tuple",
    "_set_attr_for_params", "_set_jit_graph_name", "_set_recompute_scope", "_set_scope", "_shard_fn",
    "_state_dict_hooks", "_state_dict_pre_hooks", "_update_local_parameters_name", "_user_parameters"
})
CELL_MEMBERS = CELL_METHODS | CELL_READONLY_PROPERTIES | CELL_SETTABLE_MEMBERS | CELL_PRIVATE_MEMBERS

# MindSpore's convolution layers: `pad_mode` is their 5th parameter (default "same") and `padding` their 6th.
CONV_LAYERS = frozenset({"Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose"})
PAD_MODE_POSITION, PADDING_POSITION = 4, 5
# MindSpore's pooling layers: `pad_mode` is their 3rd parameter (default "valid"), `padding` their 4th (inspected).
POOL_LAYERS = frozenset({"MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d"})
# The layers that take `padding` only with `pad_mode="pad"`: layer -> (pad_mode position, padding position)
PADDED_LAYERS = {**{layer: (PAD_MODE_POSITION, PADDING_POSITION) for layer in CONV_LAYERS},
                 **{layer: (2, 3) for layer in POOL_LAYERS}}
# The 39 public in-place methods of mindspore.Tensor 2.10 (`dir(Tensor)`, names ending in `_`), less the three
# that do not write tensor data (requires_grad_, index_of_parent_, parent_tensor_).
INPLACE_METHODS = frozenset({
    "add_", "addmm_", "bernoulli_", "clamp_", "copy_", "delete_", "div_", "erfinv_", "exp_", "exponential_", "fill_",
    "fill_diagonal_", "floor_", "floor_divide_", "index_add_", "index_copy_", "index_fill_", "index_put_", "log_",
    "masked_fill_", "masked_scatter_", "mul_", "normal_", "put_", "random_", "remainder_", "scatter_",
    "scatter_add_", "set_", "sigmoid_", "sign_", "sub_", "tanh_", "to_", "uniform_", "zero_",
})
# Framework layers without Parameters (checked: `parameters_dict()` is empty in 2.10), or whose only Parameters
# are fixed windows built without randomness and never trained (SSIM's and MSSSIM's Gaussian filters,
# `requires_grad=False`), whose output does not depend on the training flag: created in graph code (MSL006) or
# kept in a plain Python list (MSL030) they compute the right result (measured for Softmax, ReLU, AvgPool2d, and
# PSNR/SSIM built in construct).
STATELESS_LAYERS = frozenset("""
    ReLU ReLU6 LeakyReLU GELU FastGelu SiLU Sigmoid Tanh Softmax LogSoftmax Softmin Softsign ELU CELU SELU GLU HSigmoid
    HSwish Hardswish Hardsigmoid Mish Hardtanh HShrink SoftShrink LogSigmoid Tanhshrink Softmax2d Identity Flatten
    Unflatten AvgPool1d AvgPool2d AvgPool3d MaxPool1d MaxPool2d MaxPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d
    AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d ResizeBilinear Upsample Unfold PixelShuffle PixelUnshuffle
    ZeroPad2d Pad ConstantPad1d ConstantPad2d ConstantPad3d ReflectionPad1d ReflectionPad2d ReplicationPad1d
    ReplicationPad2d ReplicationPad3d L1Loss MSELoss SmoothL1Loss HuberLoss CrossEntropyLoss NLLLoss KLDivLoss BCELoss
    BCEWithLogitsLoss SoftmaxCrossEntropyWithLogits CosineEmbeddingLoss MarginRankingLoss SoftMarginLoss
    MultiLabelSoftMarginLoss MultiMarginLoss MultilabelMarginLoss PoissonNLLLoss GaussianNLLLoss TripletMarginLoss
    CTCLoss Norm Range OneHot ClipByNorm Moments Tril Triu MatrixDiag PSNR SSIM MSSSIM
    MatMul MatDet MatInverse MatrixDiagPart MatrixSetDiag SparseTensorDenseMatmul SparseToDense DiGamma IGamma LBeta
    LGamma ImageGradients LRN LogSoftmaxExt MaxPool2dExt RReLU SeLU L1LossExt MAELoss RMSELoss DiceLoss
    MultiClassDiceLoss FocalLoss HingeEmbeddingLoss TripletMarginWithDistanceLoss
    ReduceLogSumExp AdaptiveMaxPool3d AvgPool1dExt AvgPool2dExt AvgPool3dExt CentralCrop ChannelShuffle L1Regularizer
    LPPool1d LPPool2d MaxUnpool1d MaxUnpool2d MaxUnpool3d ReflectionPad3d Roll Threshold""".split())
# (the second group: the nn Cells of 2.10 that, built with simple arguments, hold no Parameter and no sub-Cell and
# draw nothing (measured; FractionalMaxPool and SampledSoftmaxLoss draw samples: left out))


def repeated_parameter_name(created: ast.expr, qualname: Callable[[ast.expr], Optional[str]]) -> Optional[str]:
    """The literal name two Parameters of a literal list/tuple share, or the one a comprehension gives every
    Parameter it makes (`[Parameter(t, name="w") for _ in range(n)]`); None otherwise. `ParameterTuple` refuses
    such a sequence in every mode (measured on 2.10: `ValueError: ... its name 'w' already exists`)."""
    if isinstance(created, (ast.ListComp, ast.GeneratorExp)):
        name = literal_parameter_name(created.elt, qualname)
        return name if name is not None and not _single_iteration(created) else None
    if isinstance(created, (ast.List, ast.Tuple)):
        seen: Set[str] = set()
        for element in created.elts:
            name = literal_parameter_name(element, qualname)
            if name is not None and name in seen:
                return name
            seen.add(name or "")
    return None


def literal_parameter_name(expr: ast.expr, qualname: Callable[[ast.expr], Optional[str]]) -> Optional[str]:
    """"w" for `Parameter(t, name="w")` (or `Parameter(t, "w")`); None for anything else."""
    if not (isinstance(expr, ast.Call) and qualname(expr.func) in PARAMETER_CLASSES):
        return None
    given = next((k.value for k in expr.keywords if k.arg == "name"), expr.args[1] if len(expr.args) > 1 else None)
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else None


def _single_iteration(comprehension: ast.expr) -> bool:
    """`for _ in range(1)` or over a one-element literal: one Parameter, no clash."""
    generators = getattr(comprehension, "generators", [])
    if len(generators) != 1:
        return False
    iterated = generators[0].iter
    if isinstance(iterated, (ast.List, ast.Tuple)):
        return len(iterated.elts) <= 1
    return isinstance(iterated, ast.Call) and getattr(iterated.func, "id", None) == "range" \
        and len(iterated.args) == 1 and isinstance(iterated.args[0], ast.Constant) and iterated.args[0].value in (0, 1)


def is_known_non_cell(qualname: str) -> bool:
    """Builtins, the standard library and well-known libraries are never nn.Cell subclasses."""
    head = qualname.split(".", 1)[0]
    return head in ("builtins", "abc", "typing", "enum", "collections", "dataclasses", "numpy", "torch", "object",
                    "mindspore", "mindtorch", "typing_extensions")


# The `mindspore.ops` primitive classes 2.10 has (by name), and the packages that export them
OPS_PRIMITIVE_PACKAGES = ("mindspore.ops", "mindspore.ops.operations")
OPS_PRIMITIVES = frozenset(name.rpartition(".")[2] for name in mindspore_nn.SIGNATURES
                           if name.startswith("mindspore.ops.") and name.rpartition(".")[2][:1].isupper())


# MindSpore's jit decorators 2.x removed -> what replaces them (MSL065 reports them; MSL078 leaves their imports to it)
REMOVED_JIT_API = {"ms_function": "jit", "ms_class": "jit_class"}
# PyTorch's `nn.Module` methods MindSpore 2.10's Cell lacks (measured, `hasattr` on `nn.Dense`), with what a Cell
# has instead; reported only where the receiver's class is known and no class of its project MRO defines one
TORCH_MODULE_METHODS = {
    "eval": "use `set_train(False)`", "train": "use `set_train(True)`",
    "parameters": "use `trainable_params()` or `get_parameters()`", "named_parameters": "use `parameters_and_names()`",
    "zero_grad": "MindSpore computes fresh gradients each step: drop it", "children": "use `cells()`",
    "named_children": "use `name_cells()`", "modules": "use `cells_and_names()`",
    "named_modules": "use `cells_and_names()`", "add_module": "use `insert_child_to_cell`",
    "flatten_parameters": "MindSpore's RNN layers keep their weights in place: drop it",
}
