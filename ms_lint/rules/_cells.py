"""What the rules about Cells built or stored as plain Python values (MSL006, MSL030) share: which project Cell
classes hold no weights, so that building one in `construct` or keeping several in a list loses nothing.

A module of `ms_lint.rules` that defines no rule (discovery only takes `Rule` subclasses).
"""
from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis import framework
from ms_lint.analysis.framework import STATELESS_LAYERS
from ms_lint.analysis.walk import spelled_name

_CELL_BASES = framework.CELL_BASES | {"mindtorch.torch.nn.Module"}


def holds_no_state(ctx, qualname: str, depth: int = 0) -> bool:
    """A project Cell class without weights: no Parameter anywhere in its MRO, and every Cell it builds is a
    weight-free MindSpore layer or, recursively, such a project Cell (a loss storing its options qualifies).
    Bases must be resolvable and attributes not created dynamically."""
    summary = ctx.graph.summary_of(qualname)
    if summary is None or depth > 4:
        return False
    mro = list(ctx.graph.mro(summary))
    known = {current.qualname for current in mro}
    for current in mro:
        if current.dynamic or not all(b in known or _weight_free_base(b) for b in current.bases):
            return False
        creates_parameters = current.parameters or any(
            built in framework.PARAMETER_CLASSES or built.endswith(".ParameterTuple") for built in current.constructed)
        if creates_parameters and not _fixed_parameters(ctx, current):
            return False
        for built in current.constructed:
            if built in framework.PARAMETER_CLASSES or built.endswith(".ParameterTuple"):
                continue  # fixed ones (above)
            if not ctx.graph.is_cell_class(built):
                continue  # ops primitives, tensors, plain Python objects: no weights
            layer = built.rpartition(".")[2] if framework.is_framework(built) else ""
            if layer and layer not in STATELESS_LAYERS or not layer and not holds_no_state(ctx, built, depth + 1):
                return False
    return True


def _fixed_parameters(ctx, summary) -> bool:
    """Does the class create every Parameter of its own with `requires_grad=False` from a value that draws
    nothing (`Parameter(Tensor(p), requires_grad=False)`)? Such state is set, not trained nor drawn: built in
    graph code, the Cell computes what it does in PyNative (MindSpore's own property tests do this)."""
    node = summary.node
    if node is None:
        return False
    created = [call for call in ast.walk(node) if isinstance(call, ast.Call)
               and (spelled_name(call.func) or "") in ("Parameter", "ParameterTuple")]
    return bool(created) and all(
        any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is False
            for k in call.keywords)
        and not any(isinstance(sub, ast.Call) and _draws(spelled_name(sub.func) or "") for sub in ast.walk(call))
        for call in created)


def _draws(name: str) -> bool:
    """A call that may draw random values: an initializer, a `rand*`/`*normal*`/`uniform` function."""
    lowered = name.lower()
    return lowered in ("initializer", "normal", "uniform", "truncatednormal", "heuniform", "henormal",
                       "xavieruniform", "xaviernormal") or lowered.startswith(("rand", "standard_normal"))


def _weight_free_base(qualname: Optional[str]) -> bool:
    """nn.Cell itself, nn.LossBase, or a weight-free MindSpore layer."""
    if qualname in _CELL_BASES:
        return True
    layer = qualname.rpartition(".")[2] if qualname is not None and framework.is_framework(qualname) else ""
    return layer == "LossBase" or layer in STATELESS_LAYERS


# what a Cell offers about the Cells and Parameters it registers: a class calling one on itself relies on them
_REGISTRY_METHODS = frozenset({"trainable_params", "untrainable_params", "get_parameters", "parameters_dict",
                               "parameters_and_names", "cells", "cells_and_names", "name_cells", "set_train",
                               "to_float", "set_grad", "update_parameters_name", "construct"})


def holder_only(ctx, summary, self_name: str) -> bool:
    """A Cell that is never a network: no `construct` anywhere in its MRO (every base resolved, up to `nn.Cell`)
    and no use of what it registers on itself (`self.trainable_params()`). EAL-GAN's `CB_GAN` holds its
    discriminators in a list and trains each with its own optimizer and `TrainOneStepCell`: nothing of it
    compiles, and registering the list would change nothing."""
    mro = list(ctx.graph.mro(summary))
    known = {current.qualname for current in mro}
    if any(current.dynamic or "construct" in current.methods
           or not all(base in known or base in _CELL_BASES for base in current.bases) for current in mro):
        return False
    if len(ctx.graph.cells_deriving_from(summary.qualname)) > 1:
        return False  # a base class whose subclasses of the module are networks
    if not any(not method.startswith("__") for method in summary.methods):
        return False  # nothing but `__init__`: a base for networks elsewhere, not a manager with its own methods
    node = summary.node
    return node is not None and ctx.walk.spans(node) and not any(
        isinstance(call.func, ast.Attribute) and call.func.attr in _REGISTRY_METHODS
        and isinstance(call.func.value, ast.Name) and call.func.value.id == self_name
        for call in ctx.walk.of_kind(node, ast.Call))
