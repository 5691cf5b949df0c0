from __future__ import annotations

import ast
import re
from typing import Optional

from ms_lint.analysis import framework, mindspore_nn
from ms_lint.analysis.folding import self_attribute
from ms_lint.analysis.framework import STATELESS_LAYERS
from ms_lint.analysis.walk import enclosing_function, parent_of, self_parameter
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule
from ms_lint.rules._cells import holds_no_state

# distributions and bijectors: Cells without weights (`nn.probability.distribution.Gumbel(...)` in construct)
_WEIGHT_FREE_PACKAGES = ("mindspore.nn.probability.distribution.", "mindspore.nn.probability.bijector.")

# Names a hoisted attribute must not take: public nn.Cell members (shadowing them breaks the Cell, MSL034).
_CELL_MEMBERS = frozenset({"cells", "to", "compile", "phase", "training", "cast", "apply", "shard", "recompute",
                           "offload", "construct", "parameters_dict", "buffers", "state_dict"})
# Layers whose behaviour follows the training flag: a Cell created in graph code is in eval mode (measured:
# `nn.Dropout(p=0.5)` drops nothing, `nn.BatchNorm2d` uses its initial moving statistics, PyNative alike).
_TRAINING_LAYERS = ("Dropout", "BatchNorm", "SyncBatchNorm")
# Layers whose default initialisers draw nothing (`gamma_init="ones"`, `beta_init="zeros"` in 2.10)
_DETERMINISTIC_BY_DEFAULT = frozenset({"LayerNorm", "GroupNorm"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While, *_COMPREHENSIONS)


class CellCreatedInGraph(Rule):
    """
    ## What it does
    Finds an `nn.Cell` (a MindSpore layer such as `nn.Dense`, a MindTorch module, or any Cell subclass of the
    project) instantiated inside graph-compiled code, e.g. `nn.Dense(4, 4)(x)` in `construct`.

    ## Why it matters in graph mode
    A Cell created in `construct` is not an attribute of the network, so its weights are never registered:
    `trainable_params()` leaves them out and no optimizer trains them. Worse, MindSpore 2.10 builds the Cell
    once, at compile time: with the default random initialisation, **every call reuses the one draw frozen at
    compile time**, while PyNative draws new weights at every call (measured: two graph calls return the same
    output, two PyNative calls differ; LAX and STRICT alike). There is no error and no warning. In a project
    that runs its Cells in PyNative the error stays, and the message says what happens there: new weights at
    every call, never trained (GPT-SoVITS builds an `nn.Embedding` in `dequantize` and assigns its `weight`,
    which the layer never reads: it looks up its own random `embedding_table`, measured).

    A new Cell is also in eval mode and `set_train()` on the network never reaches it: `nn.Dropout(p=0.5)(x)` in
    `construct` drops nothing and `nn.BatchNorm2d` normalises with its initial moving statistics, in graph mode and
    PyNative alike (measured). Switched by its own `set_train()` (`drop = nn.Dropout(p)`, `drop.set_train()`), it
    drops in PyNative but not compiled (measured: mRASP2, issue 19's eighth sample): an error of compiled code only,
    lowered where the project runs in PyNative. Framework layers without weights or a training mode (`nn.ReLU`,
    `nn.Softmax`, pooling, padding, losses) compute the right result (measured for Softmax, ReLU, AvgPool2d), and so
    do project Cells without weights (no Parameter, or only Parameters made with `requires_grad=False` from values
    that draw nothing, and only weight-free layers inside): these are warnings only (the layer is rebuilt at every
    compilation; lowered where the project runs in PyNative). So is a layer whose `weight_init` draws nothing (a
    tensor, `"ones"`, `Constant(...)`) and which has no random bias: `nn.Conv2d(1, 1, 3, weight_init=sobel)`
    computes the same fixed filter at every call (its weights are never trained, which such code means), and so does
    a `nn.LayerNorm` or `nn.GroupNorm` left at its default initialisation (ones and zeros). `ops` primitives
    (`ops.ReLU()(x)`) and functional `ops.*` are not Cells: not reported.

    A framework layer given tensor data as its settings, `nn.Conv2dTranspose(x, w, stride=2)`, is PyTorch's
    functional form (`F.conv_transpose2d(x, w)`) ported as the layer class: building it fails with a
    `TypeError` in every mode (measured), and the message says so (no fix). A probability distribution built from
    tensors, `Categorical(self.actor(state))`, or given a value computed in the function by keyword,
    `Categorical(probs=actions_prob)`, works in PyNative and fails to compile in graph mode (measured: "all
    arguments are required to be constants"): an error of compiled code only, lowered where the project runs in
    PyNative. A class given more positional arguments than its 2.10 `__init__` takes (`nn.Sigmoid(x)`) fails when
    built: MSL067 reports it, not this rule (whose warning would say it works).

    ## Example
    ```python
    class Head(nn.Cell):
        def construct(self, x):
            return nn.Dense(16, 10)(x)
    ```

    ## Use instead
    ```python
    class Head(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(16, 10)

        def construct(self, x):
            return self.dense(x)
    ```

    ## Fix
    Unsafe: when the constructor arguments use no local of the graph function, the call is outside loops and
    the class defines `__init__`, the instantiation moves to the end of `__init__` as `self.<name>` (named
    after the class in snake case: `dense`, `batch_norm2d`, `mse_loss`; numbered when taken) and the call site
    uses the attribute. A weight-free layer built the same way already (in `__init__` or by another hoist) is
    reused instead. The moved call keeps its continuation lines aligned and is wrapped to the project
    formatter's line length (`[tool.ruff]`/`[tool.black]` `line-length`), else to the file's longest line.
    Unsafe because the Cell is then created once and trained, which changes results (that is the point, but it
    is a behaviour change; the fix says when the hoisted layer brings weights, which checkpoints then hold).
    Only classes 2.10 has are hoisted (`mint.nn.functional.Log_softmax` is no Cell), and not a layer with weights
    that `construct` stores on `self` (`new = nn.Embedding(...)`; `self.bias = new`): it replaces a layer at run
    time, and a hoisted copy would add parameters no checkpoint holds.
    """

    code = "MSL006"
    name = "cell-created-in-graph"
    severity = "error"
    scope = "graph"
    message = "Cell `{cell}` instantiated in graph code reached from `{entry}`: {consequence}"
    fix_applicability = "unsafe"
    insertions_compose = True  # unique hoisted names across the module (`_attribute_name`)

    def visit_call(self, node: ast.Call, ctx):
        """The findings of a call of a Cell class, None for the other calls (most: no generator is made)."""
        qualname = ctx.names.qualname(node.func)
        if not (qualname and ctx.graph.is_cell_class(qualname)):
            return None
        return self._findings(node, ctx, qualname)

    def _findings(self, node: ast.Call, ctx, qualname: str):
        if _too_many_arguments(node, qualname):
            return  # `nn.Sigmoid(x)`: building it fails, which MSL067 reports (not a layer that "works")
        layer = qualname.rpartition(".")[2] if qualname is not None and framework.is_framework(qualname) else ""
        severity, consequence = None, ("its weights are not registered (never trained) and its random "
                                       "initialisation is frozen at compile time")
        compiled_only = False
        entry = ctx.graph.entry_of(node)
        pynative = ctx.compile_context.pynative_source
        if pynative is not None and (entry is None or entry.kind != "jit"):
            # nothing compiles: each call builds the layer again (GPT-SoVITS's `nn.Embedding` in `dequantize`)
            consequence = (f"its weights are not registered (never trained) and are drawn afresh at every call "
                           f"(this project runs its Cells in PyNative: {pynative.describe()})")
        if layer in STATELESS_LAYERS or qualname.startswith(_WEIGHT_FREE_PACKAGES) or (
                not layer and holds_no_state(ctx, qualname)):
            severity, consequence = "warning", ("it holds no weights to train or draw, so it works, but it is "
                                                "rebuilt at every compile")
        elif layer.startswith(_TRAINING_LAYERS):
            consequence = "it is created in eval mode and `set_train()` never reaches it"
            if _set_train_called(ctx, node):  # mRASP2's `drop = nn.Dropout(...)`, `drop.set_train()`
                consequence = ("it is created in eval mode, and its own `set_train()` switches it in PyNative only: "
                               "compiled, it stays in eval mode")
                compiled_only = True
        elif layer in _DETERMINISTIC_BY_DEFAULT and not any(k.arg in ("gamma_init", "beta_init")
                                                            for k in node.keywords):
            severity, consequence = "warning", ("its default initialisation (ones and zeros) draws nothing, so "
                                                "each call normalises as a fresh layer would, but it is rebuilt "
                                                "at every compile and never trained")
        elif _fixed_weights(node, layer):
            severity, consequence = "warning", ("its `weight_init` fixes the weights, so each call computes the "
                                                "same fixed filter, but it is rebuilt at every compile and never "
                                                "trained")
        distribution = qualname.startswith(_WEIGHT_FREE_PACKAGES)
        if layer and (any(ctx.tensors(node).derives_locally(argument) for argument in node.args)
                      or distribution and _computed_settings(ctx, node)):
            if distribution:  # `Categorical(probs)`: measured, PyNative builds it
                yield self.report(ctx, node, severity="error", cell=ctx.text(node.func), compiled_only=True,
                                  consequence="it is built from tensor data, and graph mode builds a Cell in graph "
                                              "code from constants only (`TypeError` when it compiles; PyNative "
                                              "builds it at every call)")
                return
            # `nn.Conv2dTranspose(x, w, stride=2)`: PyTorch's functional form ported as the layer class
            yield self.report(ctx, node, severity="error", cell=ctx.text(node.func),
                              consequence="it is given tensor data as its settings, as PyTorch's functional form "
                                          "takes its inputs, and building it fails (`TypeError`) in every mode")
            return
        weightless = severity == "warning" and not _fixed_weights(node, layer) \
            and layer not in _DETERMINISTIC_BY_DEFAULT
        # the warnings say the layer works but is rebuilt at every compile: a claim about compiled code
        yield self.report(ctx, node, severity=severity, cell=ctx.text(node.func), consequence=consequence,
                          compiled_only=compiled_only or severity == "warning",
                          # a layer switched by its own `set_train()` in construct: hoisted, the call stays there
                          fix=None if compiled_only else self._hoist(ctx, node, qualname, weightless))

    def _hoist(self, ctx, node: ast.Call, qualname: str, weightless: bool) -> Optional[Fix]:
        function = enclosing_function(node)
        owner = ctx.graph.owner_class(function)
        self_name = self_parameter(function) if owner is not None and function is not None else None
        if self_name is None or owner.node is None or self._in_loop(ctx, node, function) \
                or not weightless and _stored_on_self(ctx, node, function, self_name):
            return None
        init = next((s for s in owner.node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None or self_parameter(init) != self_name \
                or init.body[0].lineno == init.lineno or isinstance(init.body[-1], ast.Return):
            return None
        # Names must mean the same at the end of __init__: no local of either function (but `self`).
        is_local = ctx.names.is_local
        if any(isinstance(sub, (ast.Lambda, *_COMPREHENSIONS)) or isinstance(sub, ast.Name) and sub.id != self_name
               and (is_local(function, sub.id) or is_local(init, sub.id)) for sub in ast.walk(node)):
            return None
        built = " ".join(ctx.text(node).split())
        existing = _same_layer(ctx, owner, init, self_name, built) if weightless else None
        if existing is not None:  # a weight-free layer built the same way already: shared, nothing is added
            return Fix("unsafe", f"Use `{self_name}.{existing}`, built the same way in `__init__`",
                       (ctx.replace(node, f"{self_name}.{existing}"),))
        attribute = _attribute_name(ctx, owner, qualname.rpartition(".")[2])
        if weightless:
            ctx.memo((_same_layer, owner.qualname), dict)[built] = attribute
        last = init.body[-1]
        indentation = ctx.indentation(init.body[0])
        head = f"{indentation}{self_name}.{attribute} = "
        statement = edits.wrapped_call(ctx, node, head, indentation, edits.line_width(ctx)) \
            or head + _moved(ctx.text(node), len(head) - node.col_offset)
        insertion = ctx.insert(last.end_lineno, len(ctx.source.line(last.end_lineno)), "\n" + statement)
        note = "" if weightless else " (its weights become parameters of the network: trained, and in checkpoints)"
        return Fix("unsafe", f"Create the Cell once in `__init__` as `{self_name}.{attribute}`{note}",
                   (insertion, ctx.replace(node, f"{self_name}.{attribute}")))

    @staticmethod
    def _in_loop(ctx, node: ast.AST, function) -> bool:
        while node is not None and node is not function and not isinstance(node, _LOOPS):
            node = ctx.parent(node)
        return isinstance(node, _LOOPS)


def _set_train_called(ctx, call: ast.Call) -> bool:
    """Is the new layer switched to training itself: `nn.Dropout(p).set_train()`, or `drop = nn.Dropout(p)` and
    `drop.set_train(...)` in the same function?"""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Attribute) and parent.attr == "set_train":
        return True
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    function = enclosing_function(call)
    return function is not None and any(
        isinstance(node.func, ast.Attribute) and node.func.attr == "set_train"
        and isinstance(node.func.value, ast.Name) and node.func.value.id == name
        for node in ctx.walk.nodes_of(function).calls)


def _stored_on_self(ctx, call: ast.Call, function, self_name: str) -> bool:
    """Does `function` store the layer `call` builds on `self` (`new = nn.Embedding(...)`, then
    `self.bias = new`)? A layer with weights stored so replaces one at run time: hoisting it would register a
    second copy of its weights (mindone's UDOP relative bias: six extra parameters no checkpoint holds)."""
    parent = parent_of(call)
    if not isinstance(parent, ast.Assign):
        return False
    if any(self_attribute(t, self_name) for t in parent.targets):
        return True
    if len(parent.targets) != 1 or not isinstance(parent.targets[0], ast.Name):
        return False
    local = parent.targets[0].id
    return any(isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id == local
               and any(self_attribute(t, self_name) for t in n.targets)
               for n in ctx.walk.nodes_of(function).bindings)


def _moved(text: str, shift: int) -> str:
    """`text` (a call spanning lines) with its continuation lines shifted by `shift` columns, so that they keep
    their alignment at the new place (spaces only; a line with less indentation than a negative shift keeps it)."""
    lines = text.split("\n")
    for index in range(1, len(lines)):
        line = lines[index]
        if shift > 0 and line.strip():
            lines[index] = " " * shift + line
        elif shift < 0:
            spaces = len(line) - len(line.lstrip(" "))
            lines[index] = line[min(spaces, -shift):]
    return "\n".join(lines)


def _same_layer(ctx, owner, init: ast.FunctionDef, self_name: str, built: str) -> Optional[str]:
    """The attribute `__init__` (or another hoist of this module) already builds a weight-free layer into with the
    same call text, if any."""
    for statement in init.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == self_name and " ".join(ctx.text(statement.value).split()) == built:
                return target.attr
    return ctx.memo((_same_layer, owner.qualname), dict).get(built)


def _attribute_name(ctx, owner, class_name: str) -> str:
    """`Dense` -> `dense`, `BatchNorm2d` -> `batch_norm2d`, `MSELoss` -> `mse_loss`, `ReLU` -> `relu`; numbered
    when taken, by the class or by another hoist of this module (their fixes apply in one pass:
    `insertions_compose`)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", class_name)
    base = re.sub(r"\W", "_", words.lower())
    handed_out = ctx.memo((_attribute_name, owner.qualname), set)
    taken = _CELL_MEMBERS.union(handed_out, *(s.attributes | s.methods for s in ctx.graph.mro(owner)))
    name, counter = base, 1
    while name in taken:
        counter += 1
        name = f"{base}_{counter}"
    handed_out.add(name)
    return name


# initializer names that draw at random (`nn.Conv2d`'s default, None, is HeUniform)
_RANDOM_INITS = frozenset({"normal", "uniform", "heuniform", "henormal", "xavieruniform", "xaviernormal",
                           "truncatednormal", "he_uniform", "he_normal", "xavier_uniform", "xavier_normal",
                           "truncated_normal", "orthogonal", "sparse", "dirac"})


def _fixed_weights(call: ast.Call, layer: str) -> bool:
    """A layer built with a `weight_init` that draws nothing (a tensor, "ones", `Constant(...)`) and no random
    bias: `nn.Conv2d(1, 1, 3, weight_init=sobel)` computes the same thing at every call."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    init = keywords.get("weight_init")
    if init is None:
        return False
    if isinstance(init, ast.Constant):
        if not isinstance(init.value, str) or init.value.lower() in _RANDOM_INITS:
            return False
    elif isinstance(init, ast.Call):
        name = init.func.attr if isinstance(init.func, ast.Attribute) else getattr(init.func, "id", "")
        if name.lower() in _RANDOM_INITS or name.replace("_", "").lower() in _RANDOM_INITS:
            return False
    bias = keywords.get("has_bias")
    bias_init = keywords.get("bias_init")
    no_bias = isinstance(bias, ast.Constant) and bias.value is False
    # a convolution has no bias unless asked (`has_bias=False` by default); a Dense draws one
    return no_bias or bias_init is not None or (bias is None and layer.startswith("Conv"))


def _too_many_arguments(node: ast.Call, qualname: str) -> bool:
    """More positional arguments than the MindSpore class's `__init__` takes (2.10's signatures)."""
    signature = mindspore_nn.SIGNATURES.get(qualname)
    return signature is not None and not signature[3] and not any(isinstance(a, ast.Starred) for a in node.args) \
        and len(node.args) > len(signature[0])


_SETTINGS = frozenset({"dtype", "name", "seed"})


def _computed_settings(ctx, node: ast.Call) -> bool:
    """Does a distribution get a value computed in the function as a setting (`Categorical(probs=actions_prob)`
    with `actions_prob = self.get_boltzmann_policy(q)`: xuance's MFQ network, issue 19's fifteenth sample)? Graph
    mode builds one from constants only; a literal, a module constant or an attribute of `self` may be one."""
    function = enclosing_function(node)
    for argument in [*node.args, *(k.value for k in node.keywords if k.arg not in _SETTINGS)]:
        if isinstance(argument, ast.Call) and _constant_tensor(ctx, argument):
            continue  # `Gumbel(loc=ms.tensor(0.0, ms.float32), ...)`: a constant, measured to compile (mindone)
        if isinstance(argument, (ast.Call, ast.Subscript, ast.BinOp)) or isinstance(argument, ast.Name) \
                and function is not None and ctx.names.is_local(function, argument.id):
            return True
    return False


_TENSOR_FUNCTIONS = ("mindspore.tensor", "mindspore.common.tensor.tensor")


def _constant_tensor(ctx, call: ast.Call) -> bool:
    """`ms.tensor(0.0, dtype)`, `Tensor([1, 2])`: a tensor made of literals."""
    qualname = ctx.names.qualname(call.func) or ""
    if not (qualname in framework.TENSOR_CLASSES or qualname in _TENSOR_FUNCTIONS) or not call.args:
        return False
    return all(isinstance(element, ast.Constant) for element in ast.walk(call.args[0])
               if isinstance(element, ast.expr) and not isinstance(element, (ast.List, ast.Tuple, ast.UnaryOp)))
