from __future__ import annotations

import ast
from typing import Any, List, Optional, Set

from ms_lint.analysis import bindings, framework
from ms_lint.analysis.framework import STATELESS_LAYERS
from ms_lint.analysis.walk import enclosing_function, self_parameter, spelled_name
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule
from ms_lint.rules._cells import holder_only, holds_no_state

_REGISTERING = frozenset({"insert_child_to_cell", "add_module", "register_module"})
_CELL_ATTRIBUTES = frozenset({"training", "phase", "cells", "construct", "parameters_dict", "compile"})


class CellListAttribute(Rule):
    """
    ## What it does
    Finds a plain Python list, tuple or dict of Cells stored on `self` in a Cell's methods: a literal, a comprehension,
    a local list filled by an `append` loop and assigned later, or `self.x = []` filled with `self.x.append(...)`. A
    literal or comprehension of MindSpore layers without weights or a training mode (`(nn.ReLU(), nn.ReLU())`,
    pooling, padding), or of project Cells that hold no Parameter and build only such layers (mindflow's spectral
    `TransformCell`s, constant matrices), is not reported: there is nothing to register, and it compiles and
    computes as a `CellList` would (measured, LAX, STRICT and PyNative). `nn.Dropout` has a training mode that
    `set_train` cannot reach in a plain list: reported (measured: after `set_train(True)` a Dropout held in a list
    drops nothing, in GRAPH_MODE and PyNative; in a `CellList` it drops half at `p=0.5`). Nor is a list whose Cells
    a loop also adds to a Cell container of the class (F-Conv's `Loss` keeps a dict per loss in `self.loss` and each
    loss Cell in `self.loss_module = nn.CellList()`): they are registered there.

    ## Why it matters in graph mode
    MindSpore registers sub-Cells only through attributes, `nn.CellList`, `nn.SequentialCell` and `nn.CellDict`.
    Measured on 2.10 (every mode): with two or more held Cells that have parameters, compilation fails with
    `RuntimeError: The parameter ... its name 'weight' already exists. Please set a unique name for the
    parameter.`; with one, it compiles and runs but **the held parameters are not registered**:
    `trainable_params()` leaves them out and an optimizer step leaves them unchanged (or raises
    `ValueError: For 'Optimizer', the argument parameters must not be empty`). `nn.CellList` registers them as
    `layers.0.weight`... and they train.

    Lists kept in a local, lists later wrapped (`self.x = nn.CellList(self.x)`, `nn.SequentialCell(*self.x)`,
    or `super().__init__(self.x)` in a class derived from `nn.SequentialCell`, as mindchemistry's
    `FullyConnectedNet` does)
    and Cells registered with `insert_child_to_cell`, `setattr(self, name, cell)` or
    `exec("self.layer_" + str(i) + "= self.layers[" + str(i) + "]")` are fine and not reported; so is a local
    list filled only with weight-free layers (comprehensions, `extend`, `+`), and a list held by a Cell that is
    never a network: no `construct` in its classes, none of its methods asks what it registers
    (`self.trainable_params()`), and no class of the module derives from it (EAL-GAN keeps its discriminators
    in a list and trains each with its own optimizer); nor a dict only looked up in the method that stores it
    and read nowhere else in the module (N-BEATSx's table of activations, whose chosen entry goes into a
    registered `nn.SequentialCell`).

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.blocks = [nn.Dense(4, 4) for _ in range(3)]
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.blocks = nn.CellList([nn.Dense(4, 4) for _ in range(3)])
    ```

    ## Fix
    Unsafe: the value is wrapped in `nn.CellList(...)` (a tuple or generator through `list(...)`, an empty list
    becomes `nn.CellList()`), or `nn.CellDict(...)` for a dict literal with plain string keys whose values are
    layer calls; `nn.ModuleList` and `nn.ModuleDict` for MindTorch modules. Indexing, iteration, `len` and
    `append` keep working, and the Cells' parameters become registered, which is the point; unsafe because
    registering changes the parameter names (`layers.0.weight`) and so the checkpoint keys, and trains weights
    that were frozen. No fix where 2.10 would reject the container (measured: `nn.CellDict` refuses `CellList`,
    `SequentialCell` and `CellDict` values, `nn.CellList` refuses `CellDict` items: `TypeError: For 'CellDict',
    the type of cell can not be ...`), nor for a dict whose values cannot be seen, nor for a list of dicts, lists
    or tuples of Cells (a `CellList` takes Cells only).
    """

    code = "MSL030"
    name = "cell-list-attribute"
    severity = "error"
    scope = "cell"
    message = "Python {container} of Cells stored in `self.{attribute}`: {consequence}"
    fix_applicability = "unsafe"

    def visit_assign(self, node: ast.Assign, ctx):
        if not any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) for t in node.targets):
            return None  # no `self.<attribute> = ...` target (a plain return: no generator for most assignments)
        if not _may_be_container(node.value):
            return None  # `self.conv = nn.Conv2d(...)`, `self.n = 3`: most attribute assignments
        return self._check(node, ctx)

    def _check(self, node: ast.Assign, ctx):
        function = enclosing_function(node)
        if function is None or isinstance(function, ast.Lambda) or ctx.graph.is_compiled(function):
            return
        owner = ctx.graph.owner_class(function)
        self_name = self_parameter(function)
        if owner is None or self_name is None or holder_only(ctx, owner, self_name):
            return
        for target in node.targets:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == self_name):
                continue
            container = self._cell_container(ctx, node.value, function, owner.node, target.attr, self_name)
            if container is None or container == "dict" and _table_while_built(ctx, function, target.attr) \
                    or self._registered_elsewhere(owner.node, target.attr, node.value, self_name) \
                    or _only_stateless_layers(ctx, node.value) \
                    or _filled_only_with_stateless_layers(ctx, node.value, owner.node, target.attr) \
                    or _local_of_stateless_layers(ctx, node.value, function):
                continue
            consequence = ("`set_train()` does not reach its Cells: they stay in eval mode, so they never drop "
                           "while training" if _only_dropouts(ctx, node.value) else
                           "its Cells' parameters are not registered (never trained; two or more fail to compile)")
            holds_containers = _holds_containers(ctx, node.value, owner.node, target.attr)
            yield self.report(ctx, node, container=container, attribute=target.attr, consequence=consequence,
                              fix=None if holds_containers else self._fix(ctx, node.value, container,
                                                                          ctx.graph.cell_of(node)))

    # ----- what the value holds (`_may_be_container` lists the forms accepted) ------------------------------
    def _cell_container(self, ctx, value, function, class_node, attribute, self_name) -> Optional[str]:
        if isinstance(value, (ast.List, ast.Tuple)):
            if any(self._is_cell(ctx, e, function) for e in value.elts):
                return "list" if isinstance(value, ast.List) else "tuple"
            if not value.elts and self._filled_later(ctx, class_node, attribute, self_name, function):
                return "list"
            return None
        if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
            return "list" if self._is_cell(ctx, value.elt, function) else None
        if isinstance(value, ast.Dict):
            return "dict" if any(self._is_cell(ctx, v, function) for v in value.values if v is not None) else None
        if isinstance(value, ast.DictComp):
            return "dict" if self._is_cell(ctx, value.value, function) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple") \
                and len(value.args) == 1:
            if not value.args and self._filled_later(ctx, class_node, attribute, self_name, function):
                return "list"
            return value.func.id if self._cell_container(ctx, value.args[0], function, class_node, attribute,
                                                         self_name) else None
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            return (self._cell_container(ctx, value.left, function, class_node, attribute, self_name)
                    or self._cell_container(ctx, value.right, function, class_node, attribute, self_name))
        if isinstance(value, ast.Name):
            return self._local_container(ctx, value.id, function)
        return None

    def _local_container(self, ctx, name: str, function) -> Optional[str]:
        """A local list/dict of Cells: built as a literal or comprehension, or filled by append/extend/+=/[k]=.
        None when the local is bound to a Cell (`layers = nn.CellList()` filled with `append`: registered)."""
        uses = bindings.uses_of_local(ctx.walk, function, name)
        if any(isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
               and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
               and ctx.graph.is_cell_class(ctx.names.qualname(node.value.func)) for node in uses):
            return None
        for node in uses:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                if not isinstance(node.value, ast.Name):
                    kind = self._cell_container(ctx, node.value, function, None, "", "")
                    if kind:
                        return kind
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                if node.func.attr in ("append", "insert") and node.args and self._is_cell(ctx, node.args[-1], function):
                    return "list"
                if node.func.attr == "extend" and node.args and self._cell_container(
                        ctx, node.args[0], function, None, "", ""):
                    return "list"
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                if self._cell_container(ctx, node.value, function, None, "", ""):
                    return "list"
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Subscript) \
                    and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == name \
                    and self._is_cell(ctx, node.value, function):
                return "dict"
        return None

    def _filled_later(self, ctx, class_node, attribute, self_name, function) -> bool:
        """`self.x = []` followed by `self.x.append(<Cell>)` (or extend / +=) in the class."""
        if class_node is None:
            return False
        for node in _fillers(ctx, class_node, attribute):
            if isinstance(node, ast.Call):
                argument = node.args[-1]
                if self._is_cell(ctx, argument, function) or self._cell_container(ctx, argument, function, None, "",
                                                                                   ""):
                    return True
            elif self._cell_container(ctx, node.value, function, None, "", ""):
                return True
        return False

    def _is_cell(self, ctx, expr, function, depth: int = 0) -> bool:
        """An expression that creates a Cell: `nn.Dense(...)`, `Block(...)`, a local bound to one."""
        if depth > 3:
            return False
        if isinstance(expr, ast.Call):
            return self._creates_cell(ctx, expr.func)
        if isinstance(expr, ast.Name):
            for node in ctx.walk.nodes_of(function).bindings:
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == expr.id
                                                        for t in node.targets):
                    if self._is_cell(ctx, node.value, function, depth + 1):
                        return True
        if isinstance(expr, ast.IfExp):
            return self._is_cell(ctx, expr.body, function, depth + 1) or self._is_cell(ctx, expr.orelse, function,
                                                                                     depth + 1)
        return False

    @staticmethod
    def _creates_cell(ctx, func) -> bool:
        return ctx.graph.is_cell_class(ctx.graph.imports.qualname(func))

    @staticmethod
    def _registered_elsewhere(class_node, attribute, value, self_name) -> bool:
        """Wrapped later (`nn.CellList(self.x)`, `nn.SequentialCell(*self.x)`) or registered one by one, in a
        loop or element by element (`self.layers = [norm, conv]` with `self.insert_child_to_cell("0", norm)`...:
        wrapping it would rename the parameters a checkpoint holds, `1.conv.weight` -> `layers.1.conv.weight`)."""
        local = value.id if isinstance(value, ast.Name) else None
        elements = {e.id for e in value.elts if isinstance(e, ast.Name)} \
            if isinstance(value, (ast.List, ast.Tuple)) and value.elts else set()
        unregistered = set(elements) if len(elements) == len(getattr(value, "elts", ())) else None
        cell_lists = _cell_list_attributes(class_node, self_name)
        for node in ast.walk(class_node):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if unregistered and node.args and isinstance(node.args[-1], ast.Name) and (
                        name in _REGISTERING or _sets_attribute_of(node, self_name)):
                    unregistered.discard(node.args[-1].id)
                    if not unregistered:
                        return True
                if (name in framework.CELL_CONTAINERS or name == "__init__" and _initialises_container_base(
                        class_node, func)) and any(_mentions(a, attribute, local) for a in node.args):
                    return True  # (mindchemistry's `FullyConnectedNet(nn.SequentialCell)`: `super().__init__(self.x)`)
            elif isinstance(node, (ast.For, ast.comprehension)) and (
                    _mentions(node.iter, attribute, local) or (isinstance(node, ast.For) and any(
                        _mentions(stmt, attribute, local) for stmt in node.body))):
                # a loop over the list, or the loop filling it, that registers each item too
                body = node.body if isinstance(node, ast.For) else []
                for sub in (n for stmt in body for n in ast.walk(stmt)):
                    if isinstance(sub, ast.Call) and (
                            (isinstance(sub.func, ast.Attribute) and sub.func.attr in _REGISTERING)
                            or _sets_attribute_of(sub, self_name) or _execs_attribute_store(sub, self_name, attribute)
                            or (_mentions(node.iter, attribute, local) and _appends_to(sub, cell_lists, self_name)
                                and _uses_target(sub, node.target))):
                        return True
        return False

    # ----- fix ------------------------------------------------------------------------------------------------
    @staticmethod
    def _fix(ctx, value, container: str, cell) -> Optional[Fix]:
        mindtorch = cell is not None and cell.kind == "module"
        package = "mindtorch.torch.nn" if mindtorch else "mindspore.nn"
        if container == "dict":
            if not isinstance(value, ast.Dict) or not all(
                    isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value and "." not in k.value
                    and k.value not in _CELL_ATTRIBUTES for k in value.keys):
                return None  # CellDict rejects such keys (and the keys of a dict built otherwise are unknown)
            if not all(isinstance(v, ast.Call) and _layer_name(ctx, v) not in _CONTAINERS for v in value.values):
                return None  # CellDict rejects CellList, SequentialCell and CellDict values (2.10, measured)
            wrapper, imports = edits.reference(ctx.graph, f"{package}.{'ModuleDict' if mindtorch else 'CellDict'}")
            return Fix("unsafe", f"Wrap in `{wrapper}`", (ctx.replace(value, f"{wrapper}({ctx.text(value)})"),),
                       imports)
        wrapper, imports = edits.reference(ctx.graph, f"{package}.{'ModuleList' if mindtorch else 'CellList'}")
        if isinstance(value, (ast.List, ast.Tuple)) and any(
                isinstance(e, ast.Call) and _layer_name(ctx, e) in ("CellDict", "ModuleDict") for e in value.elts):
            return None  # CellList rejects CellDict items (2.10, measured)
        content: Optional[str]
        if isinstance(value, ast.List) and not value.elts:
            content = f"{wrapper}()"
        elif isinstance(value, (ast.List, ast.ListComp, ast.Name)):
            content = f"{wrapper}({ctx.text(value)})"
        elif isinstance(value, ast.Tuple):
            content = f"{wrapper}([{', '.join(ctx.text(e) for e in value.elts)}])"
        elif isinstance(value, ast.Call) and getattr(value.func, "id", "") in ("list", "tuple"):
            inner = ctx.text(value.args[0])
            generator = isinstance(value.args[0], ast.GeneratorExp) and inner.startswith("(")
            content = f"{wrapper}([{inner[1:-1]}])" if generator else f"{wrapper}(list({inner}))"
        elif isinstance(value, ast.GeneratorExp):
            content = f"{wrapper}([{ctx.text(value)[1:-1]}])" if ctx.text(value).startswith("(") else None
        else:
            content = f"{wrapper}(list({ctx.text(value)}))"
        if content is None:
            return None
        return Fix("unsafe", f"Wrap in `{wrapper}`", (ctx.replace(value, content),), imports)


_CONTAINERS = frozenset({"CellList", "SequentialCell", "CellDict", "ModuleList", "ModuleDict", "Sequential"})


def _layer_name(ctx, call: ast.Call) -> str:
    """The class name a call builds (`nn.CellList(...)` -> `CellList`), as spelt or as imported."""
    qualname = ctx.names.qualname(call.func) or ""
    return qualname.rpartition(".")[2] or getattr(call.func, "attr", "") or getattr(call.func, "id", "")


def _fillers(ctx, class_node: ast.ClassDef, attribute: str):
    """The `<name>.<attribute>.append/insert/extend(...)` calls and `<name>.<attribute> += ...` of a class, in
    `ast.walk` order."""
    for node in ctx.walk.in_walk_order(class_node, (ast.Call, ast.AugAssign)):
        if node.__class__ is ast.Call:
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "insert", "extend") \
                    and _is_self_attribute(node.func.value, attribute) and node.args:
                yield node
        elif _is_self_attribute(node.target, attribute):
            yield node


def _holds_containers(ctx, value: ast.expr, class_node: ast.ClassDef, attribute: str) -> bool:
    """Are dicts, lists or tuples of Cells the items (`self.loss.append({"function": nn.MSELoss()})`)? A
    CellList takes Cells only: wrapping would break it, so there is no fix."""
    literals = (ast.Dict, ast.List, ast.Tuple, ast.DictComp, ast.ListComp)
    items = list(getattr(value, "elts", ()))
    items += [filler.args[-1] for filler in _fillers(ctx, class_node, attribute) if isinstance(filler, ast.Call)]
    return any(isinstance(item, literals) for item in items)


def _cell_list_attributes(class_node: ast.ClassDef, self_name: str) -> Set[str]:
    """The attributes the class binds to a Cell container (`self.loss_module = nn.CellList()`)."""
    found: Set[str] = set()
    for node in ast.walk(class_node):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in framework.CELL_CONTAINERS:
                found.update(target.attr for target in node.targets
                             if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                             and target.value.id == self_name)
    return found


def _appends_to(call: ast.Call, cell_lists: Set[str], self_name: str) -> bool:
    """`self.loss_module.append(l["function"])` where `self.loss_module` is a Cell container: registered there
    (F-Conv's `Loss` keeps dicts describing each loss in a list, and the loss Cells in a CellList)."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in ("append", "insert", "extend") \
        and isinstance(func.value, ast.Attribute) and func.value.attr in cell_lists \
        and isinstance(func.value.value, ast.Name) and func.value.value.id == self_name


def _uses_target(call: ast.Call, target: ast.expr) -> bool:
    """Does the call's argument use what the loop binds (`self.loss_module.append(entry["function"])` in
    `for entry in self.loss:`)? An append of something else in a loop over a range registers nothing of the list
    (Twins' `self.patch_embeds.append(...)` beside `self.pos_drops.append(nn.Dropout(...))`)."""
    bound = {node.id for node in ast.walk(target) if isinstance(node, ast.Name)}
    return any(isinstance(node, ast.Name) and node.id in bound for arg in call.args for node in ast.walk(arg))


def _is_self_attribute(expr, attribute: str) -> bool:
    return isinstance(expr, ast.Attribute) and expr.attr == attribute and isinstance(expr.value, ast.Name)


def _sets_attribute_of(call: ast.Call, self_name: str) -> bool:
    """`setattr(self, name, item)`: the item registered as a child Cell under that name."""
    return isinstance(call.func, ast.Name) and call.func.id == "setattr" and len(call.args) == 3 \
        and isinstance(call.args[0], ast.Name) and call.args[0].id == self_name


def _table_while_built(ctx, function, attribute: str) -> bool:
    """Is the dict `.<attribute>` only looked up (`self.x[key]`) in the method that stores it, and read nowhere
    else in the module? A table the Cell is built from (N-BEATSx's `self.activations = {"relu": nn.ReLU(),
    "prelu": nn.PReLU(), ...}`, one entry of which goes into the registered `nn.SequentialCell(layers)`):
    nothing compiled reads it, and the entry used is registered where it is used."""
    start, end = ctx.walk.span(function)
    loads = ctx.memo(_attribute_loads, lambda: _attribute_loads(ctx)).get(attribute, ())
    order = ctx.walk.order
    return bool(loads) and all(start <= position < end and isinstance(ctx.parent(order[position]), ast.Subscript)
                               for position in loads)


def _attribute_loads(ctx) -> dict:
    """Attribute name -> the positions (in the module's walk) of its loads, and of string constants spelling it
    (`getattr(self, "blocks")`)."""
    found: dict = {}
    for position, node in enumerate(ctx.walk.order):
        kind = node.__class__
        if kind is ast.Attribute and node.ctx.__class__ is ast.Load:
            found.setdefault(node.attr, []).append(position)
        elif kind is ast.Constant and node.value.__class__ is str and node.value.isidentifier():
            found.setdefault(node.value, []).append(position)
    return found


def _execs_attribute_store(call: ast.Call, self_name: str, attribute: str) -> bool:
    """`exec("self.layer_" + str(i) + "= self.layers[" + str(i) + "]")` (VFlow): each item stored on the Cell
    as an attribute of its own, so registered (measured: the parameters are there and it compiles)."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "exec" and call.args):
        return False
    pieces = sorted((node.lineno, node.col_offset, node.value) for node in ast.walk(call.args[0])
                    if isinstance(node, ast.Constant) and isinstance(node.value, str))
    text = "".join(piece for _, _, piece in pieces).replace(" ", "")
    return text.startswith(f"{self_name}.") and f"={self_name}.{attribute}[" in text


def _mentions(expr, attribute: str, local: Optional[str]) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.value, ast.Name):
            return True
        if local and isinstance(node, ast.Name) and node.id == local:
            return True
    return False


_CONTAINER_FORMS = frozenset({ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp, ast.Dict, ast.DictComp, ast.Name})


def _only_stateless_layers(ctx, value: ast.expr) -> bool:
    """A literal or comprehension whose every element builds a MindSpore layer without weights or a training mode
    (`(nn.ReLU(), nn.ReLU())`), or a project Cell without weights (mindflow's `TransformCell`s, holding constant
    tensors): nothing to register, and it compiles and computes the same as a CellList (measured). Anything else
    (Dropout, a list filled elsewhere) may hold state."""
    layers = _literal_layers(ctx, value)
    if layers and all(layer in STATELESS_LAYERS for layer in layers):
        return True
    elements = _container_elements(value) or []
    return bool(elements) and all(isinstance(e, ast.Call) and _builds_stateless_cell(ctx, e) for e in elements)


def _initialises_container_base(class_node: ast.ClassDef, func: ast.expr) -> bool:
    """Is `func` the `super().__init__` of a class deriving from a Cell container (`nn.SequentialCell`), which
    registers the Cells it is given?"""
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
        and getattr(func.value.func, "id", None) == "super" \
        and any(spelled_name(base) in framework.CELL_CONTAINERS for base in class_node.bases)


def _filled_only_with_stateless_layers(ctx, value: ast.expr, class_node: ast.ClassDef, attribute: str) -> bool:
    """`self.x = []` filled only by `self.x.append(<a MindSpore layer without weights>)` (EfficientDet's five
    `nn.Range` Cells), or project Cells without weights: as with a literal of them, nothing to register
    (measured: compiles and runs in both modes)."""
    if not (isinstance(value, ast.List) and not value.elts):
        return False
    fillers = list(_fillers(ctx, class_node, attribute))
    return bool(fillers) and all(
        isinstance(filler, ast.Call) and isinstance(filler.func, ast.Attribute)
        and filler.func.attr in ("append", "insert")
        and isinstance(filler.args[-1], ast.Call) and _builds_stateless_cell(ctx, filler.args[-1])
        for filler in fillers)


def _local_of_stateless_layers(ctx, value: ast.expr, function) -> bool:
    """A local list every element of which builds a layer without weights, through comprehensions, `extend` and
    `+` (trm's `poolers = [nn.MaxPool1d(...) for _ in ...]`, then `poolers.extend([nn.MaxPool1d(...)] + [...])`,
    stored as `self.poolers`): measured, such a list compiles and runs in GRAPH_MODE, and holds nothing to
    register."""
    if not isinstance(value, ast.Name):
        return False
    elements = _local_elements(ctx, value.id, function)
    return elements is not None and bool(elements) and all(
        isinstance(e, ast.Call) and _builds_stateless_cell(ctx, e) for e in elements)


def _local_elements(ctx, name: str, function) -> Optional[List[ast.expr]]:
    """Every element expression the local list `name` receives in `function`, or None when one cannot be seen
    (a list from elsewhere, `name[k] = ...`, a method other than append/insert/extend)."""
    found: List[ast.expr] = []
    for node in bindings.uses_of_local(ctx.walk, function, name):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            elements = _container_elements(node.value)
        elif isinstance(node, ast.AugAssign):
            elements = _container_elements(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                and node.func.attr in ("append", "insert", "extend"):
            elements = _container_elements(node.args[0]) if node.func.attr == "extend" else [node.args[-1]]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("pop", "copy"):
            continue  # reads
        else:
            return None
        if elements is None:
            return None
        found += elements
    return found


def _container_elements(value: ast.expr) -> Optional[List[ast.expr]]:
    """The element expressions of a list/tuple literal, a comprehension or a sum of those; None otherwise."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return list(value.elts)
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        return [value.elt]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        left, right = _container_elements(value.left), _container_elements(value.right)
        return None if left is None or right is None else left + right
    return None


def _builds_stateless_cell(ctx, call: ast.Call) -> bool:
    """A MindSpore layer without weights or a training mode, or a project Cell without weights (Sepformer's
    `Resample`: sinc filters computed, no Parameter)."""
    qualname = ctx.names.qualname(call.func)
    layer = framework.mindspore_layer(qualname)
    if layer is not None:
        return layer in STATELESS_LAYERS
    return qualname is not None and not framework.is_framework(qualname) and ctx.graph.is_cell_class(qualname) \
        and holds_no_state(ctx, qualname)


def _only_dropouts(ctx, value: ast.expr) -> bool:
    """A list or tuple (literal or comprehension) of MindSpore dropout layers only: no weights, only a training
    mode."""
    layers = [] if isinstance(value, ast.Dict) else _literal_layers(ctx, value)
    return bool(layers) and all((layer or "").startswith("Dropout") for layer in layers)


def _literal_layers(ctx, value: ast.expr) -> List[Optional[str]]:
    """The MindSpore layer each element of a literal or comprehension builds (`framework.mindspore_layer`; None
    for anything else); empty for other values."""
    if isinstance(value, (ast.List, ast.Tuple)):
        elements = value.elts
    elif isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        elements = [value.elt]
    elif isinstance(value, ast.Dict):
        elements = [v for v in value.values if v is not None]
    else:
        return []
    return [framework.mindspore_layer(ctx.names.qualname(e.func)) if isinstance(e, ast.Call) else None
            for e in elements]


def _may_be_container(value: Any) -> bool:
    """The forms `_cell_container` can find Cells in: literals, comprehensions, `list(...)`/`tuple(...)`, a sum
    of those, a local name."""
    kind = value.__class__
    if kind is ast.Call:
        return value.func.__class__ is ast.Name and value.func.id in ("list", "tuple") and len(value.args) == 1
    if kind is ast.BinOp:
        return value.op.__class__ is ast.Add
    return kind in _CONTAINER_FORMS
