from __future__ import annotations

import ast
import os
import re
from typing import Any, FrozenSet, List, Optional, Tuple

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function, parameter_names, self_parameter
from ms_lint.fixing import edits
from ms_lint.rule import Edit, Fix, Rule
from ms_lint.rules._mindspore_values import (
    bound_values,
    host_kind,
    passed_values,
    receiver_kind,
    self_attribute_calls,
    shown_receiver,
    uses_mindtorch,
)
from ms_lint.source import walk

# PyTorch methods MindSpore 2.10's Tensor and Cell lack (or, for `size`, have as an int property).
MISSING = {"cuda": ("tensor", "cell"), "cpu": ("tensor", "cell"), "detach": ("tensor",), "backward": ("tensor",)}
# Device names `Tensor.to` / `Cell.to` reject in 2.10 (measured: "cuda", "cuda:0", "gpu", "GPU", "mps", "xpu";
# "cpu", "CPU", "Ascend", "npu" and "meta" are accepted).
TORCH_DEVICES = ("cuda", "gpu", "mps", "xpu")
_ON = {"tensor": "on a MindSpore tensor", "cell": "on a MindSpore Cell"}
# What PyTorch's and Paddle's optimizers have and MindSpore's (which are Cells) lack, measured with `hasattr` on
# `nn.Adam`, `nn.SGD`, `nn.AdamWeightDecay` and `mindspore.experimental.optim.Adam`
OPTIMIZER_METHODS = {
    "step": "an optimizer applies gradients when called, `optimizer(grads)`, with the gradients from "
            "`mindspore.value_and_grad`",
    "clear_grad": "MindSpore computes fresh gradients each step: drop it",
    "clear_gradients": "MindSpore computes fresh gradients each step: drop it"}
# `scheduler.step()` on a MindSpore learning-rate schedule (a Cell)
_CELL_STEP = ("a learning-rate schedule (`nn.LearningRateSchedule`) is a Cell the optimizer calls with the global "
              "step: pass it as `learning_rate=`")
# PyTorch tensor attributes MindSpore 2.10's Tensor lacks (not in `mindspore_tensor.ATTRIBUTES`), with what to do
# instead. A Parameter has `requires_grad`, but graph code cannot read it (measured): it is reported in graph code
# only.
TORCH_ATTRIBUTES = {"requires_grad": "gradients come from `mindspore.grad`/`value_and_grad`, not from the tensor",
                    "is_cuda": "place work with `mindspore.set_device`",
                    "grad_fn": "MindSpore tensors carry no autograd graph",
                    "is_leaf": "MindSpore tensors carry no autograd graph",
                    "grad": "gradients are what `mindspore.grad`/`value_and_grad` return, not stored on the tensor"}
# MindSpore's Cell classes that `torch.nn` does not have
_MINDSPORE_ONLY = frozenset({"Cell", "SequentialCell", "CellList", "CellDict", "LossBase", "WithLossCell",
                             "TrainOneStepCell"})
_NO_GRAD = ("torch.no_grad", "torch.autograd.no_grad", "torch.inference_mode")
_NO_GRAD_NAMES = frozenset(qualname.rpartition(".")[2] for qualname in _NO_GRAD)


class TorchTensorApi(Rule):
    """
    ## What it does
    Finds PyTorch-only calls on MindSpore tensors and Cells: `.cuda()`, `.cpu()`, `.detach()`, `.backward()`,
    `.size()`/`.size(dim)`, `.shape(dim)` (PyTorch's `size(dim)` written with `shape`: a tuple is not callable,
    measured to fail in GRAPH_MODE and PyNative), `.to("cuda")`/`.to(torch.device(...))`; PyTorch's autograd
    and device attributes read on a MindSpore tensor (`x.is_cuda`, `x.grad`, `x.grad_fn`, `x.is_leaf`, and in graph code
    `x.requires_grad`: a Parameter has it, but graph code cannot read it); and PyTorch's
    `torch.device(...)` and `torch.no_grad()` applied to MindSpore code; and PyTorch's `nn.Module` methods called
    on a Cell (`net.eval()`, `net.train()`, `net.parameters()`, `net.zero_grad()`, `net.children()`...) and
    PyTorch's or Paddle's optimizer methods (`optimizer.step()`, `optimizer.zero_grad()`, `clear_grad()`,
    `clear_gradients()`; `scheduler.step()` on a MindSpore learning-rate schedule), when the Cell's class is
    known and none of its project classes defines the method. The other way round, a class
    derived from MindSpore's `Cell` (or `SequentialCell`, `CellList`...) spelled on PyTorch's `torch.nn`: `import
    torch.nn as nn` kept in a half-ported module makes `class Block(nn.Cell)` an AttributeError when the module
    is imported (st_gcn's `gcn_utils.py`, issue 19's fourth sample).

    The receiver must be known to be MindSpore's. In graph code (`construct` and what it reaches) that is a tensor
    by the tensor-value analysis. In host code it is a value the module provably builds with MindSpore: a
    `Tensor`/`Parameter`, the result of a `mindspore.ops`/`mindspore.numpy`/`mindspore.mint` call, a MindSpore
    `nn.Cell` subclass instance, a name all of whose bindings in its scope are such values, a `Tensor`-annotated
    argument, a parameter of a module-level function that every call of it in the module passes such a value
    (GGO's `train(model, loader, optimizer, ...)` called with `optimizer = nn.Adam(...)`), a `self.<Parameter>`,
    a `self.<name>` every assignment of which in the class builds a tensor or
    one Cell class (`self.optimizer = nn.AdamWeightDecay(...)`), the result of calling a Cell of MindSpore's own
    (`loss = train_net(x, y)` with `train_net = nn.TrainOneStepCell(...)`; not the RNNs, which give tuples), or
    what a loop over a MindSpore dataset binds (`for image, mask in loader:`,
    `row["image"]` of `create_dict_iterator()`, a dataset kept as `self.loader`; not with `output_numpy=True`;
    converted in place, `image, mask = image.float(), mask.float()`, or assigned a `Tensor` elsewhere, it stays
    one). A name that some binding gives a PyTorch tensor
    (`feat = F.grid_sample(...)[..., 0]`) is not known to be MindSpore's. `torch.device(...)` is reported when
    it reaches `.to(...)` of such a value or a `device=` argument of a MindSpore call; `torch.no_grad()` when the
    `with` block (or the function it decorates) calls MindSpore and never mentions `torch`. Modules that import
    MindTorch (or MSAdapter, its former name) are skipped: its tensors and modules implement these methods.

    ## Why it matters in graph mode
    Measured on MindSpore 2.10: `Tensor` has no `cuda`, `cpu`, `detach`, `backward` (`AttributeError: 'Tensor'
    object has no attribute 'cuda'`), and `Cell` has no `cuda`/`cpu` (`AttributeError: The 'Dense' object has no
    attribute 'cuda'.`), nor `eval`, `train`, `parameters`, `named_parameters`, `zero_grad`, `children`,
    `named_children`, `modules`, `named_modules`, `add_module` (each measured with `hasattr` on `nn.Dense`:
    `AttributeError` when called, in every mode), and its RNNs (`nn.LSTM`, `nn.GRU`, `nn.RNN`) no
    `flatten_parameters`. MindSpore's optimizers (`nn.Adam`, `nn.SGD`,
    `nn.AdamWeightDecay`, `mindspore.experimental.optim.Adam`) have no `step`, `zero_grad`, `clear_grad` or
    `clear_gradients`: an optimizer is a Cell called with the gradients. A `Tensor` has no `requires_grad`,
    `is_cuda`, `grad`, `grad_fn` or `is_leaf` (AttributeError, at compile in graph code; a `Parameter` has no
    `grad` either: an adversarial attack's `delta.grad.clone().detach()`, issue 19's sixteenth sample); a `Parameter`'s
    `requires_grad` reads in PyNative, but in `construct` it fails to compile (`the 'Parameter' object's method
    'requires_grad' is not supported in 'construct'`): GPT-SoVITS's `DoubleSwish` reads `x.requires_grad`
    (issue 19's seventh sample).
    `Tensor.size` is a property, the element count, so `x.size()` and `x.size(0)` raise `TypeError: 'int'
    object is not callable` (in `construct`: `ValueError: The object is not callable.` at compile). In a module
    that imports MindSpore and no package whose tensors have PyTorch's `size(dim)` (PyTorch, MindTorch, MSAdapter,
    x2ms, MindNLP, Paddle, ...), and defines no `size` method, `x.size(0)` is reported whatever `x` is, a local, a
    parameter or an attribute, unless `x` is an instance of a class that is not MindSpore's: a MindSpore tensor,
    a NumPy array (`size` an int) and a PIL image (`size` a tuple) all raise TypeError there (MC-GRA's
    `edge_index.size(1)` in a plain helper, issue 19's tenth sample; mindone's `t_output.size(0)` in
    `diffusers/hooks/faster_cache.py`). The same holds for `opt.zero_grad()` there: no MindSpore optimizer or
    Cell has it (ADC-MADDPG's optimizers unpacked from `zip`, the eleventh sample), for `optim.step()` on a
    receiver named for an optimizer (DOE's `self.proxy_optim.step()`, the twelfth), and for `loss.backward()`,
    `x.cpu()`, `x.cuda()`, `net.parameters()` and `rnn.flatten_parameters()`, which no MindSpore tensor, NumPy
    array or Cell has (AGL-SC's training helper, the fourteenth; MpTMC's `.cuda()` and xuance's
    `self.rnn.flatten_parameters()`, the fifteenth); the branch a multi-backend module runs for another framework
    (TensorLayerX's `elif tlx.BACKEND == 'torch':`) handles that framework's values, a module that imports
    `safetensors.torch` may hold PyTorch tensors, one that imports a name spelling the method (mindformers'
    `enable_mindspore_backward_compat`) may have added it, and a converter of PyTorch's weights (a receiver named
    for torch, a function or file named for the conversion: mindvision's `update_torch_to_ms(torch_param_dict,
    ...)`) is handed PyTorch's tensors: these are left alone. A module imports MindSpore here also through the
    project's re-exports (xuance's learners: `from xuance.mindspore import ...`, or a star import of such a
    package).
    `x.to("cuda")` raises `ValueError: Failed to convert the value "cuda" of input 'device' of 'to' to enum.`, on
    Cells too. In graph code `x.cuda()` and `x.to("cuda")` fail at compile. PyTorch's grad mode
    does not reach MindSpore, which computes gradients only through `mindspore.grad`/`value_and_grad`: a
    `torch.no_grad()` around MindSpore code does nothing but make the module need PyTorch (a warning).
    `.view`, `.permute`, `.item`, `.float`, `.to(dtype)` and `.to("cpu")` exist in 2.10 and are not reported
    (`.to("cpu")` in graph code does not compile on the CPU backend, `Unsupported op [CopyToHost] on CPU`,
    measured; that is a device limit, not PyTorch's API).

    ## Example
    ```python
    class Head(nn.Cell):
        def construct(self, x):
            batch = x.size(0)
            return x.view(batch, -1).detach()
    ```

    ## Use instead
    ```python
    class Head(nn.Cell):
        def construct(self, x):
            batch = x.shape[0]
            return ops.stop_gradient(x.view(batch, -1))
    ```

    ## Fix
    Safe: `.size()` becomes `.shape` and `.size(i)`/`.size(dim=i)` `.shape[i]` (the call raised before);
    `x.detach()` becomes `ops.stop_gradient(x)`, MindSpore's way to cut the gradient, in graph and PyNative mode.
    The others have no fix: device placement is `mindspore.set_device(...)`, backward is
    `mindspore.value_and_grad`.
    """

    code = "MSL064"
    name = "torch-tensor-api"
    severity = "error"
    scope = "module"
    message = "`{call}` {where}: {consequence}"
    fix_applicability = "safe"
    needles = (".size(", ".shape(", ".cuda(", ".cpu(", ".detach(", ".backward(", ".to(", "torch", ".requires_grad",
               ".is_cuda", ".grad", ".is_leaf", *(f".{method}(" for method in framework.TORCH_MODULE_METHODS),
               *(f".{method}(" for method in OPTIMIZER_METHODS))
    call_names = frozenset(MISSING) | frozenset(framework.TORCH_MODULE_METHODS) | frozenset(OPTIMIZER_METHODS) \
        | {"size", "shape", "to"}

    def visit_call(self, node: ast.Call, ctx):
        findings = list(self._call_findings(node, ctx))
        # TensorLayerX's `elif tlx.BACKEND == 'torch':` handles PyTorch's tensors (asked of calls with a finding)
        if findings and not ctx.graph.other_framework_branch(node):
            yield from findings

    def _call_findings(self, node: ast.Call, ctx):
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        method = func.attr
        if method not in MISSING and method not in framework.TORCH_MODULE_METHODS and method not in OPTIMIZER_METHODS \
                and method not in ("size", "shape", "to") \
                or uses_mindtorch(ctx):
            return
        # the device first: most `.to(...)` calls pass a dtype, which rules them out before the costlier receiver
        shown = _torch_device(ctx, _device_argument(node)) if method == "to" else None
        if method == "to" and shown is None:
            return
        kind = receiver_kind(ctx, func.value, node)
        where = _ON.get(kind or "")
        if kind is None and method == "size" and _torch_size_in_mindspore_module(ctx, node):
            kind, where = "tensor", "on a tensor or array of a module that imports MindSpore and no PyTorch"
        lacking = _lacking_in_mindspore_module(ctx, node, func) if kind is None else None
        if lacking is not None:
            owner, advice = lacking
            yield self.report(ctx, node, call=f"{shown_receiver(ctx, func.value)}.{method}()",
                              where="in a module that imports MindSpore and no PyTorch",
                              consequence=f"no MindSpore {owner} has `{method}` (AttributeError); {advice}")
            return
        if kind is None:
            return
        call = f"{shown_receiver(ctx, func.value)}.{method}(...)" if node.args or node.keywords else \
            f"{shown_receiver(ctx, func.value)}.{method}()"
        compiled = ctx.graph.is_compiled(node)
        if method in ("size", "shape"):
            if kind != "tensor":
                return
            failure = ("fails to compile (`ValueError: The object is not callable.`; TypeError in PyNative)"
                       if compiled else "raises TypeError")
            what = ("the element count (an int) in MindSpore" if method == "size"
                    else "a tuple (in PyTorch too: `size(dim)` is the call)")
            yield self.report(ctx, node, call=call, where=where,
                              consequence=f"`{method}` is {what}, so calling it {failure}; use `.shape`",
                              fix=self._size_fix(ctx, node))
        elif method == "to":
            yield self.report(ctx, node, call=call, where=_ON[kind],
                              consequence=f"MindSpore 2.10 rejects the device {shown} (ValueError: Failed to "
                                          f"convert ... to enum); place work with `mindspore.set_device`")
        elif method in framework.TORCH_MODULE_METHODS or method in OPTIMIZER_METHODS:
            if kind == "cell" and _class_lacks(ctx, func.value, method):
                owner = "optimizer" if _builds_optimizer(ctx, func.value) else "Cell"
                advice = framework.TORCH_MODULE_METHODS.get(method) or (
                    OPTIMIZER_METHODS[method] if owner == "optimizer" or method != "step" else _CELL_STEP)
                yield self.report(ctx, node, call=call, where=f"on a MindSpore {owner}",
                                  consequence=f"MindSpore's {owner} has no `{method}` (AttributeError); {advice}")
        elif kind in MISSING[method]:
            yield self.report(ctx, node, call=call, where=_ON[kind], consequence=_missing(method, kind, compiled),
                              fix=self._detach_fix(ctx, node) if method == "detach" else None)

    def visit_attribute(self, node: ast.Attribute, ctx):
        if node.attr not in TORCH_ATTRIBUTES or not isinstance(node.ctx, ast.Load):
            return None  # most attributes (a plain return: no generator for them)
        return self._torch_attribute(node, ctx)

    def _torch_attribute(self, node: ast.Attribute, ctx):
        compiled = ctx.graph.is_compiled(node)
        function = enclosing_function(node)
        if isinstance(node.value, ast.Name) and function is not None and not isinstance(function, ast.Lambda) \
                and node.value.id == self_parameter(function):
            return  # the Cell's own attribute (`self.grad = C.GradOperation(...)` of MindSpore's BERT wrappers)
        if node.attr == "requires_grad" and not compiled or uses_mindtorch(ctx) \
                or receiver_kind(ctx, node.value, node) != "tensor":
            return
        # `construct`'s inputs are tensors: `x.requires_grad` fails in PyNative too; `self.weight.requires_grad`
        # (a Parameter) only once compiled
        on_input = isinstance(node.value, ast.Name) and isinstance(function, ast.FunctionDef) \
            and function.name == "construct" and node.value.id in parameter_names(function)
        failure = "AttributeError, at compile time in graph mode" if compiled else "AttributeError"
        if node.attr != "requires_grad" or on_input:
            consequence = f"MindSpore's Tensor has no `{node.attr}` ({failure}); {TORCH_ATTRIBUTES[node.attr]}"
        else:
            consequence = ("graph code cannot read `requires_grad`: a Tensor has none, and a Parameter's fails to "
                           "compile (`not supported in 'construct'`); read it outside `construct`")
        yield self.report(ctx, node, call=ctx.text(node), where=_ON["tensor"], consequence=consequence,
                          compiled_only=node.attr == "requires_grad" and not on_input)

    def visit_class_def(self, node: ast.ClassDef, ctx):
        """`class Block(nn.Cell)` where `nn` is PyTorch's (`import torch.nn as nn` left in a half-ported module)."""
        for base in node.bases:
            if (base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")) not in _MINDSPORE_ONLY:
                continue  # (most bases: the name alone rules them out)
            qualname = ctx.names.qualname(base) or ""
            package, _, name = qualname.rpartition(".")
            if package == "torch.nn" and name in _MINDSPORE_ONLY and not uses_mindtorch(ctx):
                yield self.report(ctx, base, call=ctx.text(base),
                                  where=f"is `torch.nn.{name}` here (`{ctx.text(base).rpartition('.')[0]}` is "
                                        f"PyTorch's `torch.nn`)",
                                  consequence=f"PyTorch has no `{name}` (AttributeError when the class statement "
                                              f"runs); import MindSpore's: `from mindspore import nn`")

    def visit_with(self, node: ast.With, ctx):
        for item in node.items:
            if _is_no_grad(ctx, item.context_expr, enclosing_function(node)) and not uses_mindtorch(ctx) \
                    and _only_mindspore(ctx, node):
                yield self._no_grad(ctx, item.context_expr)

    def visit_function_def(self, node: ast.FunctionDef, ctx):
        if not node.decorator_list:
            return None  # most defs (a plain return: no generator for them)
        return self._no_grad_decorators(node, ctx)

    def _no_grad_decorators(self, node: ast.FunctionDef, ctx):
        for decorator in node.decorator_list:
            # a decorator's names resolve in the scope of the function it decorates (`GraphScope.qualname`)
            if _is_no_grad(ctx, decorator, node) and not uses_mindtorch(ctx) and _only_mindspore(ctx, node):
                yield self._no_grad(ctx, decorator)

    def visit_keyword(self, node: ast.keyword, ctx):
        """`ops.zeros(2, device=torch.device("cuda"))`: a PyTorch device handed to MindSpore."""
        if node.arg != "device":
            return None  # most keywords (a plain return: no generator for them)
        return self._device(node, ctx)

    def _device(self, node: ast.keyword, ctx):
        call = ctx.parent(node)
        if not isinstance(call, ast.Call) or uses_mindtorch(ctx):
            return
        qualname = ctx.names.qualname(call.func) or ""
        value: Any = node.value
        if qualname.startswith("mindspore.") and _is_torch_device_call(ctx, value):
            yield self.report(ctx, value, call=f"{ctx.text(value.func)}(...)", where="passed to MindSpore",
                              consequence=f"`{qualname}` takes MindSpore device names, not a PyTorch device")

    def _no_grad(self, ctx, expr: ast.expr):
        return self.report(ctx, expr, severity="warning", call=ctx.text(expr), where="around MindSpore code",
                           consequence="PyTorch's grad mode has no effect on MindSpore (gradients come only from "
                                       "`mindspore.grad`/`value_and_grad`); it only makes the module need PyTorch")


    # ----- fixes ----------------------------------------------------------------------------------------------
    @staticmethod
    def _size_fix(ctx, node: ast.Call) -> Optional[Fix]:
        func = node.func
        row, column = ctx.end(func)
        if func.end_lineno != node.end_lineno:
            return None
        dimension = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "dim"), None)
        if len(node.args) + len(node.keywords) > (1 if dimension is not None else 0):
            return None
        replacement = "shape" if dimension is None else f"shape[{ctx.text(dimension)}]"
        called = getattr(func, "attr", "size")  # `size(...)` or `shape(...)`
        edit = Edit(replacement, (row, column - len(called)), ctx.end(node))
        return Fix("safe", f"Use `.{replacement}`", (edit,))

    @staticmethod
    def _detach_fix(ctx, node: ast.Call) -> Optional[Fix]:
        if node.args or node.keywords:
            return None
        ops, imports = edits.reference(ctx.graph, "mindspore.ops")
        return Fix("safe", f"Use `{ops}.stop_gradient`",
                   (ctx.replace(node, f"{ops}.stop_gradient({ctx.text(getattr(node.func, 'value', node.func))})"),),
                   imports)


def _missing(method: str, kind: str, compiled: bool) -> str:
    owner = "Tensor" if kind == "tensor" else "Cell"
    where = "AttributeError, at compile time in graph mode" if compiled else "AttributeError"
    advice = {"cuda": "place work with `mindspore.set_device`", "cpu": "place work with `mindspore.set_device`",
              "detach": "use `ops.stop_gradient`", "backward": "compute gradients with `mindspore.value_and_grad`"}
    return f"MindSpore's {owner} has no `{method}` ({where}); {advice[method]}"


def _class_lacks(ctx, receiver: ast.expr, method: str) -> bool:
    """Is the receiver built by a known class (`Net()`, or a name every binding of which is such a call) none of
    whose project classes defines `method` (a port's own `def train(self, ...)`)?"""
    calls = _building_calls(ctx, receiver)
    if not calls:
        return False
    for call in calls:
        if not isinstance(call, ast.Call):
            return False
        qualname = ctx.graph.names.qualname(call.func) or ""
        if qualname.startswith("mindspore."):
            if method == "parameters" and framework.is_optimizer(qualname):
                return False  # an optimizer's `parameters` is its ParameterTuple (measured)
            continue
        summary = ctx.graph.summary_of(qualname)
        if summary is None:
            return False
        for base in ctx.graph.mro(summary):
            if method in base.methods or method in base.attributes:
                return False
            if any(q and not q.startswith("mindspore.") and ctx.graph.summary_of(q) is None for q in base.bases):
                return False  # a base the project does not hold: it may define the method
    return True


# packages whose tensors (or wrappers) have PyTorch's `size(dim)`: a module importing one may hold such a tensor
# (MindNLP's `core` is a PyTorch-like API over MindSpore, whose modules and optimizers have `zero_grad`)
_TORCH_LIKE = frozenset({"torch", "torchvision", "mindtorch", "msadapter", "x2ms_adapter", "mindnlp", "paddle",
                         "jittor", "oneflow", "tensorflow", "jax", "mxnet", "cupy", "dgl", "torch_geometric"})


def _torch_size_in_mindspore_module(ctx, call: ast.Call) -> bool:
    """`x.size(0)` (one int, or `dim=`) in a module that imports MindSpore and no package whose tensors have
    PyTorch's `size(dim)`, and defines no `size` method of its own: whatever `x` is there (a MindSpore tensor, a
    NumPy array, an image), `size` is not callable with a dimension. The receiver is a local, a parameter or an
    attribute, not a name an import binds, nor a name bound to an instance of a class that is not MindSpore's
    (a project class may define `size(dim)`). MC-GRA's `edge_weight.size(1)` in a plain helper (issue 19's tenth
    sample)."""
    func: Any = call.func
    dimension = call.args[0] if len(call.args) == 1 and not call.keywords else next(
        (k.value for k in call.keywords if k.arg == "dim"), None) if len(call.keywords) == 1 and not call.args \
        else None
    if isinstance(dimension, ast.UnaryOp):
        dimension = dimension.operand
    if not (isinstance(dimension, ast.Constant) and type(dimension.value) is int):
        return False
    return _receiver_of_mindspore_module(ctx, func)


def _optimizer_call_in_mindspore_module(ctx, call: ast.Call, func: ast.Attribute) -> bool:
    """`x.zero_grad()`, or `optim.step()` on a receiver named for an optimizer (`self.proxy_optim.step()`: DOE,
    issue 19's twelfth sample), with no arguments, in a MindSpore-only module (`_receiver_of_mindspore_module`),
    not under `if hasattr(x, "zero_grad")`."""
    if call.args or call.keywords or func.attr not in ("zero_grad", "step", "clear_grad", "clear_gradients"):
        return False  # (Paddle's `clear_grad()`: DPSUR, issue 19's sixteenth sample)
    if func.attr == "step" and "optim" not in (shown_receiver(ctx, func.value) or "").rpartition(".")[2].lower():
        return False  # (`env.step()`, `scheduler.step()`)
    return _receiver_of_mindspore_module(ctx, func) and not _asked_first(ctx, call, func.attr)


def _lacking_in_mindspore_module(ctx, call: ast.Call, func: ast.Attribute) -> Optional[Tuple[str, str]]:
    """(what lacks the method, what to do instead) for PyTorch's optimizer and training-loop calls on a receiver of
    a MindSpore-only module; None for the other calls."""
    method = func.attr
    if _optimizer_call_in_mindspore_module(ctx, call, func):
        return ("optimizer or Cell", framework.TORCH_MODULE_METHODS["zero_grad"]) if method == "zero_grad" \
            else ("optimizer", OPTIMIZER_METHODS[method])
    if method in _TRAINING_CALLS and _training_call_in_mindspore_module(ctx, call, func):
        return _TRAINING_CALLS[method]
    return None


# PyTorch's training-loop calls no MindSpore tensor, array or Cell has (measured with `hasattr` on 2.10's Tensor,
# `nn.Dense`, NumPy's ndarray), reported on any receiver of a MindSpore-only module: AGL-SC's `loss.backward()`,
# `loss.cpu().item()` and `recmodel.parameters()` in a plain training helper (issue 19's fourteenth sample)
_TRAINING_CALLS = {"backward": ("tensor", "compute gradients with `mindspore.value_and_grad`"),
                   "cpu": ("tensor, array or Cell", "place work with `mindspore.set_device`"),
                   "cuda": ("tensor, array or Cell", "place work with `mindspore.set_device`"),
                   "flatten_parameters": ("Cell", framework.TORCH_MODULE_METHODS["flatten_parameters"]),
                   "parameters": ("Cell", framework.TORCH_MODULE_METHODS["parameters"])}


# a function or file that converts PyTorch's weights (`update_torch_to_ms`, `convert_torch_to_mindspore`,
# `torch2ms.py`), not one that kept the PyTorch original's name (`f1_mae_torch`)
_CONVERTER = re.compile(r"torch\w*?(?:2|_to_)(?:ms|mindspore)|convert\w*torch|torch\w*convert")


def _training_call_in_mindspore_module(ctx, call: ast.Call, func: ast.Attribute) -> bool:
    """`loss.backward()`, `x.cpu()`, `x.cuda()` or `net.parameters()` (`backward` and `cuda` with any arguments,
    the others with none) in a MindSpore-only module (`_receiver_of_mindspore_module`), not under `if hasattr(x,
    "<method>")`."""
    if func.attr not in ("backward", "cuda") and (call.args or call.keywords):
        return False  # (`.cuda(device)`: MO-VLN, issue 19's sixteenth sample)
    if any(func.attr in name for name in ctx.graph.imports.names):
        return False  # a shim that adds the method (mindformers' `enable_mindspore_backward_compat`)
    function = getattr(enclosing_function(call), "name", "")
    if "torch" in ctx.text(func.value).lower() or _CONVERTER.search(function.lower()) \
            or _CONVERTER.search(os.path.basename(ctx.source.path or "").lower()):
        return False  # a converter handed PyTorch's tensors (mindvision's `update_torch_to_ms(torch_param_dict, ...)`)
    return _receiver_of_mindspore_module(ctx, func) and not _asked_first(ctx, call, func.attr)


def _receiver_of_mindspore_module(ctx, func: ast.Attribute) -> bool:
    """Is `func` (`x.size`, `opt.zero_grad`) a method of a local, parameter or attribute in a module that imports
    MindSpore and no PyTorch-like package, defines no method of that name, and does not bind `x` to an instance
    of a class that is not MindSpore's?"""
    if not ctx.memo((_receiver_of_mindspore_module, func.attr), lambda: _imports_mindspore_only(ctx, func.attr)):
        return False
    root = func.value
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not isinstance(root, ast.Name) or ctx.names.qualname(root) is not None:
        return False  # an imported name (`np.size`), or no name at all
    if isinstance(func.value, ast.Name):
        for value in bound_values(ctx, func.value):
            if isinstance(value, ast.Call) and not (ctx.names.qualname(value.func) or "").startswith("mindspore.") \
                    and (getattr(value.func, "attr", None) or getattr(value.func, "id", None) or "")[:1].isupper():
                return False  # an instance of a class that may define `size(dim)`
    return True


_USUAL_NAMES = ("mindspore", "ms", "nn", "ops", "Tensor", "torch", "F")


def _names_read(ctx) -> FrozenSet[str]:
    """The names the module's code reads (comments and strings are not code), once per module."""
    return ctx.memo(_names_read, lambda: frozenset(
        node.id for node in ctx.walk.of_kind(ctx.tree, ast.Name) if isinstance(node.ctx, ast.Load)))


def _imports_mindspore_only(ctx, method: str) -> bool:
    """Does the module import MindSpore and no PyTorch-like package, and neither define nor assign `method` (`def
    zero_grad(`, mindone's `self.zero_grad = ...`)?"""
    imports = ctx.graph.imports
    targets = imports.names.values()
    # what the names are through the project's re-exports too (xuance's `from xuance.mindspore import nn`), and
    # what a star import of a project module brings of the usual names
    names = [*imports.names, *(_USUAL_NAMES if imports.stars else ())]
    imported = {target.partition(".")[0] for target in [*targets, *imports.stars]} \
        | {(imports.resolve(name) or "").partition(".")[0] for name in names}
    text = ctx.source.text
    if imports.stars and any(imports.resolve(name) is None for name in _names_read(ctx) & _TORCH_LIKE):
        return False  # `torch.cat(...)` with `torch` from a star import the index cannot follow (CMMS-GCL's scripts)
    return "mindspore" in imported and not imported & _TORCH_LIKE and not uses_mindtorch(ctx) \
        and not any(target.startswith("safetensors.torch") for target in targets) \
        and f"def {method}(" not in text and not re.search(rf"\.{method}\s*=[^=]", text)


def _asked_first(ctx, node: ast.AST, method: str) -> bool:
    """Is `node` under an `if` that asks whether something has `method` (mindformers' `if hasattr(m,
    "zero_grad"): m.zero_grad()`)?"""
    parent = ctx.parent(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(parent, (ast.If, ast.IfExp)) and any(
                isinstance(n, ast.Call) and getattr(n.func, "id", None) == "hasattr" and len(n.args) == 2
                and isinstance(n.args[1], ast.Constant) and n.args[1].value == method for n in ast.walk(parent.test)):
            return True
        parent = ctx.parent(parent)
    return False


def _building_calls(ctx, receiver: ast.expr) -> List[Any]:
    """The calls that build the receiver: itself, every value bound to a name, every `self.<name> = ...`."""
    if isinstance(receiver, ast.Call):
        return [receiver]
    if isinstance(receiver, ast.Name):
        values: List[Any] = []
        for value in bound_values(ctx, receiver):
            if not isinstance(value, ast.arg):
                values.append(value)
                continue
            for passed in passed_values(ctx, value):  # what the function's callers pass (GGO's `train`)
                values += bound_values(ctx, passed) if isinstance(passed, ast.Name) else [passed]
        return values
    return list(self_attribute_calls(ctx, receiver))


def _builds_optimizer(ctx, receiver: ast.expr) -> bool:
    calls = _building_calls(ctx, receiver)
    return bool(calls) and all(isinstance(call, ast.Call) and framework.is_optimizer(
        ctx.graph.names.qualname(call.func)) for call in calls)


def _device_argument(call: ast.Call) -> Optional[ast.expr]:
    return call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)






def _torch_device(ctx, expr: Optional[ast.expr]) -> Optional[str]:
    """How to show `expr` if it is a PyTorch device: a "cuda..." string, `torch.device(...)`, or a name bound
    only to one of those in its scope."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str) \
            and expr.value.lower().startswith(TORCH_DEVICES):
        return repr(expr.value)
    if _is_torch_device_call(ctx, expr):
        return f"`{ctx.text(expr)}`" if len(ctx.text(expr)) < 40 else "`torch.device(...)`"
    if isinstance(expr, ast.Name):
        values = bound_values(ctx, expr)
        if values and all(_torch_device(ctx, v) is not None for v in values if v is not expr):
            return f"`{expr.id}` (a PyTorch device)"
    return None


def _is_torch_device_call(ctx, expr) -> bool:
    return isinstance(expr, ast.Call) and ctx.names.qualname(expr.func) == "torch.device"


def _is_no_grad(ctx, expr: ast.expr, function) -> bool:
    """`expr` (read in `function`, None at module level) is `torch.no_grad`, `torch.no_grad()`..."""
    func = expr.func if isinstance(expr, ast.Call) else expr
    if not _may_end_in(ctx, func, function, _NO_GRAD_NAMES):
        return False
    return ctx.names.qualname(func) in _NO_GRAD


def _may_end_in(ctx, expr: ast.expr, function, last_names) -> bool:
    """Can `ctx.names.qualname(expr)` (`expr` read in `function`) end in one of `last_names`? Spares resolving
    the scopes of most expressions: an attribute's qualname ends in the attribute; a name that no import in its
    function binds resolves through the module's names (whose targets `last_name` reads), to `builtins.<name>`
    or to nothing; anything else has no qualname."""
    if isinstance(expr, ast.Attribute):
        return expr.attr in last_names
    if not isinstance(expr, ast.Name):
        return False
    return (ctx.names.last_name(expr) or expr.id) in last_names or (
        function is not None and ctx.names.spells_import(function))


def _only_mindspore(ctx, block) -> bool:
    """The body of `block` (a `with` or a `def`) calls MindSpore (a `mindspore.*` function or class, or a
    MindSpore Cell the module builds) and never mentions PyTorch."""
    calls_mindspore = False
    for stmt in block.body:
        for node in walk(stmt):
            if isinstance(node, (ast.Name, ast.Attribute)):
                qualname = ctx.names.qualname(node) or ""
                if qualname.partition(".")[0] in ("torch", "torchvision"):
                    return False
            if isinstance(node, ast.Call) and not calls_mindspore:
                qualname = ctx.names.qualname(node.func) or ""
                calls_mindspore = qualname.startswith("mindspore.") or host_kind(ctx, node.func, {}, 0) == "cell"
    return calls_mindspore














