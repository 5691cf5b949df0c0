"""Which values are MindSpore tensors or Cells for certain: what the rules on MindSpore's Tensor API (MSL064,
MSL069) ask of a method call's receiver.

A module of `ms_lint.rules` that defines no rule (discovery only takes `Rule` subclasses), so that neither rule
imports the other.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

from ms_lint.analysis import bindings, framework
from ms_lint.analysis.walk import enclosing_function, parent_of, self_parameter
from ms_lint.rules import _dataset_values as dataset_values
from ms_lint.source import walk

# Tensor methods returning tensors: `t.reshape(2, 3).size()` is still a tensor's `size`.
_TENSOR_METHODS = frozenset({"reshape", "view", "astype", "float", "half", "long", "int", "double", "bool", "byte",
                             "transpose", "permute", "squeeze",
                             "unsqueeze", "expand_dims", "flatten", "copy", "clone", "contiguous", "abs", "sum",
                             "mean", "exp", "log", "sqrt", "matmul", "to", "type_as"})
_MINDSPORE_TENSOR_PACKAGES = ("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")
_MAX_DEPTH = 8


def receiver_kind(ctx, receiver: ast.expr, call: ast.AST) -> Optional[str]:
    """"tensor" or "cell" if `receiver`, read at `call` (a call or an attribute), is MindSpore's, else None."""
    if mentions_torch(ctx, receiver) or (isinstance(receiver, ast.Name) and any(
            isinstance(value, ast.expr) and _torch_value(ctx, value) for value in bound_values(ctx, receiver))):
        return None  # (a name bound to a PyTorch tensor too: ICON's `point_feat = F.grid_sample(...)[..., 0]`)
    if ctx.graph.is_compiled(call):
        tensors = ctx.tensors(call)
        cell = ctx.graph.cell_of(enclosing_function(call))
        if cell is not None and cell.kind == "module":
            return None
        return "tensor" if tensors.is_graph_tensor(receiver) else None
    return host_kind(ctx, receiver, {}, 0)


# MindTorch, and MSAdapter, its name before 2024 (`import msadapter.pytorch as torch`): their tensors and modules
# implement PyTorch's methods
MINDTORCH_PACKAGES = ("mindtorch", "msadapter")


def uses_mindtorch(ctx) -> bool:
    """Computed once per module: every candidate call asks."""
    imports = ctx.graph.imports
    return ctx.memo(uses_mindtorch, lambda: imports.mstorch or any(
        target.partition(".")[0] in MINDTORCH_PACKAGES for target in imports.names.values()))


def _torch_value(ctx, expr: ast.expr) -> bool:
    """Is `expr` a PyTorch call, or an item or method result of one (`F.grid_sample(...)[..., 0]`)?"""
    while isinstance(expr, (ast.Subscript, ast.Call)):
        func = expr.func if isinstance(expr, ast.Call) else None
        if func is not None:
            qualname = ctx.names.qualname(func)
            if qualname:
                return qualname.partition(".")[0] in ("torch", "torchvision")
            if not isinstance(func, ast.Attribute):
                return False
            expr = func.value
        else:
            expr = expr.value  # type: ignore[union-attr]
    return False


def mentions_torch(ctx, expr: ast.expr) -> bool:
    for node in walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)):
            qualname = ctx.names.qualname(node)
            if qualname and qualname.partition(".")[0] in ("torch", "torchvision"):
                return True
    return False


# ----- host values provably built with MindSpore --------------------------------------------------------------
def host_kind(ctx, expr: ast.expr, memo: Dict[int, Optional[str]], depth: int) -> Optional[str]:
    """"tensor" or "cell" if `expr` provably holds a MindSpore tensor or Cell in host code, else None."""
    if depth > _MAX_DEPTH:
        return None
    key = id(expr)
    if key in memo:
        return memo[key]
    memo[key] = None
    result = _host_kind_of(ctx, expr, memo, depth + 1)
    memo[key] = result
    return result


def _host_kind_of(ctx, expr, memo, depth) -> Optional[str]:
    graph = ctx.graph
    if isinstance(expr, ast.Call):
        qualname = graph.names.qualname(expr.func)
        if qualname and _is_mindspore_tensor_call(qualname):
            return "tensor"
        if qualname and _is_mindspore_cell_class(ctx, qualname):
            return "cell"
        if isinstance(expr.func, ast.Call):  # ops.ReLU()(x)
            inner = graph.names.qualname(expr.func.func) or ""
            if inner.startswith("mindspore.ops.") and inner.rpartition(".")[2][:1].isupper() \
                    and not framework.returns_metadata(inner):
                return "tensor"
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _TENSOR_METHODS:
            receiver = host_kind(ctx, expr.func.value, memo, depth)
            return receiver if receiver == "tensor" or expr.func.attr == "to" else None
        if isinstance(expr.func, (ast.Name, ast.Attribute, ast.Call)) \
                and _calls_a_tensor_cell(ctx, expr.func, memo, depth):
            return "tensor"  # `train_net(x, y)` with `train_net = nn.TrainOneStepCell(...)`; `nn.MSELoss()(q, t)`
        return None
    if isinstance(expr, ast.Name):
        values = bound_values(ctx, expr)
        if not values:
            looped = dataset_values.loop_item(ctx, expr, bound_values,
                                              lambda value: host_kind(ctx, value, memo, depth) == "tensor")
            return "tensor" if looped == dataset_values.TUPLES else None
        kinds = {_parameter_kind(ctx, v, memo, depth) if isinstance(v, ast.arg) else host_kind(ctx, v, memo, depth)
                 for v in values}
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        return _self_attribute(ctx, expr)
    if isinstance(expr, ast.Subscript):
        if isinstance(expr.value, ast.Name) \
                and dataset_values.loop_item(ctx, expr.value, bound_values) == dataset_values.DICTS:
            return "tensor"  # `data["image"]` of `for data in dataset.create_dict_iterator():`
        return "tensor" if host_kind(ctx, expr.value, memo, depth) == "tensor" else None
    if isinstance(expr, ast.BinOp):
        operands = [host_kind(ctx, o, memo, depth) for o in (expr.left, expr.right)]
        numbers = [isinstance(o, ast.Constant) and type(o.value) in (int, float) for o in (expr.left, expr.right)]
        if "tensor" in operands and all(k == "tensor" or n for k, n in zip(operands, numbers)):
            return "tensor"
    return None


def _is_mindspore_tensor_call(qualname: str) -> bool:
    if qualname.startswith("mindspore.") and (qualname in framework.TENSOR_CLASSES
                                              or qualname in framework.PARAMETER_CLASSES):
        return True
    return qualname.startswith(_MINDSPORE_TENSOR_PACKAGES) and not qualname.rpartition(".")[2][:1].isupper() \
        and framework.returns_tensor(qualname)


def _is_mindspore_cell_class(ctx, qualname: str) -> bool:
    for cell in ctx.graph.cells.values():
        if cell.summary.qualname == qualname:
            return cell.kind == "cell" and not cell.assumed
    return ctx.graph.index.class_kind(qualname) == "cell"


def _parameter_kind(ctx, arg: ast.arg, memo, depth) -> Optional[str]:
    """A parameter's kind: its `Tensor` annotation, else what every call of its function in the module passes
    (GGO's `train(model, loader, optimizer, ...)`, called once with `optimizer = nn.Adam(...)`)."""
    annotated = _annotated_kind(ctx, arg)
    if annotated is not None:
        return annotated
    passed = passed_values(ctx, arg)
    if not passed:
        return None
    kinds = {host_kind(ctx, value, memo, depth) for value in passed}
    return kinds.pop() if len(kinds) == 1 else None


def passed_values(ctx, arg: ast.arg) -> List[ast.expr]:
    """What the calls of a module-level function, by its name, in its module pass for the parameter `arg`; empty
    when the function is not module-level, has no call, or a call passes `*args`/`**kwargs` or leaves `arg` to its
    default. Only functions called by name: a method's callers are not known."""
    arguments = parent_of(arg)
    function = parent_of(arguments) if arguments is not None else None
    if not isinstance(function, ast.FunctionDef) or parent_of(function) is not ctx.walk.tree \
            or function.decorator_list:
        return []
    if arg.arg in ctx.memo((_type_tested, function), lambda: _type_tested(ctx, function)):
        return []  # the function tests the value's type itself (`isinstance(x, torch.Tensor)`): it takes several
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    values: List[ast.expr] = []
    for call in ctx.memo(_calls_by_name, lambda: _calls_by_name(ctx)).get(function.name, ()):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return []
        given = next((k.value for k in call.keywords if k.arg == arg.arg), None)
        if given is None and arg.arg in positional and positional.index(arg.arg) < len(call.args):
            given = call.args[positional.index(arg.arg)]
        if given is None:
            return []
        values.append(given)
    return values


def _calls_by_name(ctx) -> Dict[str, List[ast.Call]]:
    """The module's calls of a plain name (`train(...)`), by that name: indexed once per module."""
    found: Dict[str, List[ast.Call]] = {}
    for call in ctx.walk.of_kind(ctx.walk.tree, ast.Call):
        if call.func.__class__ is ast.Name:
            found.setdefault(call.func.id, []).append(call)
    return found


def _type_tested(ctx, function: ast.FunctionDef) -> frozenset:
    """The names the function passes to `isinstance`/`type` (tst_2023's `torch_cov2` converts a PyTorch tensor)."""
    return frozenset(call.args[0].id for call in ctx.walk.nodes_of(function).calls
                     if getattr(call.func, "id", None) in ("isinstance", "type")
                     and call.args and isinstance(call.args[0], ast.Name))


def _annotated_kind(ctx, arg: ast.arg) -> Optional[str]:
    if arg.annotation is None:
        return None
    qualname = ctx.names.qualname(arg.annotation) or ""
    return "tensor" if qualname.startswith("mindspore.") and qualname in framework.TENSOR_CLASSES else None


def _self_attribute(ctx, expr: ast.Attribute) -> Optional[str]:
    """A `self.<Parameter>`, or a `self.<name>` every assignment of which in its class (of this module) builds a
    MindSpore tensor (VFlow's `self.h = Tensor(np.zeros(...))` before `self.h.shape()`) or a MindSpore Cell of
    one class (AMT's `self.optimizer = AdamWeightDecay(...)` before `self.optimizer.zero_grad()`)."""
    owner = _owner_of_self(ctx, expr)
    if owner is None:
        return None
    if any(expr.attr in summary.parameters for summary in ctx.graph.mro(owner)):
        return "tensor"
    built = attribute_calls(ctx, owner.node, expr.attr)
    qualnames = {ctx.graph.names.qualname(call.func) or "" for call in built}
    if built and all(_is_mindspore_tensor_call(qualname) for qualname in qualnames):
        return "tensor"
    if len(qualnames) == 1 and _is_mindspore_cell_class(ctx, next(iter(qualnames))):
        return "cell"
    return None


def self_attribute_calls(ctx, expr: ast.expr) -> List[ast.Call]:
    """For `self.<name>` in a method of a class of this module: the calls every assignment of it builds
    (`attribute_calls`); empty for anything else."""
    if not isinstance(expr, ast.Attribute):
        return []
    owner = _owner_of_self(ctx, expr)
    return attribute_calls(ctx, owner.node, expr.attr) if owner is not None else []


def _owner_of_self(ctx, expr: ast.Attribute):
    """The class summary of the method `self.<name>` is read in, when it is read on the method's `self`."""
    function = enclosing_function(expr)
    owner = ctx.graph.owner_class(function) if function is not None else None
    if owner is None or function is None or getattr(expr.value, "id", None) != self_parameter(function):
        return None
    return owner


def attribute_calls(ctx, class_node: Optional[ast.ClassDef], attribute: str) -> List[ast.Call]:
    """The calls every `self.<attribute> = ...` of the class (of this module) assigns; empty when some
    assignment is not a call, or when there is none."""
    if class_node is None or not ctx.walk.spans(class_node):
        return []
    values = [node.value for node, target in bindings.attribute_stores(ctx.walk, class_node).get(attribute, ())
              if isinstance(node, ast.Assign) and getattr(target.value, "id", None) in ("self", "cls")]
    calls = [value for value in values if isinstance(value, ast.Call)]
    return calls if len(calls) == len(values) else []


# MindSpore Cells whose call gives a tuple (or a tensor and a state), not one tensor
_TUPLE_CELLS = ("LSTM", "GRU", "RNN", "LossScale", "MultiheadAttention")


def _calls_a_tensor_cell(ctx, func: ast.expr, memo, depth) -> bool:
    """Is `func` a MindSpore Cell of MindSpore's own (a loss, `TrainOneStepCell`, a layer) whose call gives a
    tensor? A project Cell's `construct` may return anything."""
    if host_kind(ctx, func, memo, depth) != "cell":
        return False
    calls = [func] if isinstance(func, ast.Call) else bound_values(ctx, func) if isinstance(func, ast.Name) else []
    qualnames = {ctx.graph.names.qualname(call.func) or "" if isinstance(call, ast.Call) else "" for call in calls}
    return bool(qualnames) and all(q.startswith("mindspore.") and not any(part in q.rpartition(".")[2]
                                                                          for part in _TUPLE_CELLS)
                                   for q in qualnames)


def bound_values(ctx, name: ast.Name) -> List[Any]:
    """Every value bound to `name` in its scope (the function it is in, else the module): assigned values, or
    the `ast.arg` of a parameter. Empty when any binding is of another form (loop target, unpacking, `with`,
    augmented assignment, import, `global`), which the rule does not follow."""
    function = enclosing_function(name)
    if function is not None and not ctx.names.is_local(function, name.id):
        function = None  # a module name read inside a function
    values: List[Any] = []  # expressions, and the `ast.arg` of a parameter
    if function is not None:
        arguments = function.args
        for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            if arg.arg == name.id:
                values.append(arg)
    for node in bindings.binders(ctx.walk, function, name.id):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name.id:
                    values.append(node.value)
                elif any(isinstance(n, ast.Name) and n.id == name.id for n in ast.walk(target)):
                    return []
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name.id:
            if node.value is None:
                continue
            values.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.withitem,
                               ast.NamedExpr)):
            bound = getattr(node, "target", None) or getattr(node, "optional_vars", None)
            if bound is not None and any(isinstance(n, ast.Name) and n.id == name.id for n in ast.walk(bound)):
                return []
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name.id in node.names:
            return []
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = [(a.asname or a.name).partition(".")[0] for a in node.names] if isinstance(
                node, (ast.Import, ast.ImportFrom)) else [node.name]
            if name.id in bound:
                return []
    return values


def shown_receiver(ctx, expr: ast.expr) -> str:
    """How a message shows a method's receiver: its text when short, else "..."."""
    text = ctx.text(expr)
    if len(text) > 30 or "\n" in text:
        return "..."
    return text if isinstance(expr, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)) else f"({text})"
