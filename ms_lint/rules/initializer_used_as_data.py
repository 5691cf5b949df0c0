from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function, self_parameter
from ms_lint.rule import Edit, Fix, Rule

_INITIALIZER = frozenset({"mindspore.common.initializer.initializer", "mindspore.initializer"})


class InitializerUsedAsData(Rule):
    """
    ## What it does
    Finds the result of `mindspore.common.initializer.initializer(...)` used as tensor data: written into an
    element or slice (`self.weight[i] = initializer(HeUniform(), shape)`, `self.cls_token[i] = initializer(...)`),
    or used in arithmetic (errors); stored on a Cell as a plain attribute that no `Parameter` ever holds (a
    warning: only PyNative fails). PyTorch's in-place
    initialisers (`nn.init.kaiming_uniform_(self.weight[i])`, `trunc_normal_(self.cls_token[i])`) are ported
    this way.

    ## Why it matters in graph mode
    `initializer(...)` returns a lazy tensor: a shape, a dtype and how to fill it, but no data until `Parameter`
    takes it, `set_data` receives it or `.init_data()` is called. Measured on MindSpore 2.10: writing it into a
    Parameter's or a tensor's slice raises `RuntimeError: The pointer[device_address] is null` in graph mode and in
    PyNative; arithmetic on it raises `RuntimeError: The Tensor(...) is uninitialized. Maybe the Tensor is create by
    initializer` in both; stored in a list or as a new attribute, graph mode materialises it but PyNative, 2.10's
    default mode, raises the same `uninitialized` error when the Cell reads it. Found building community ports
    (CondConv's and DynamicConv's expert weights, CrossViT's class tokens, issue 19). `Parameter(initializer(...))`,
    `p.set_data(initializer(...))`, `initializer(...).init_data()`, an attribute a `Parameter` holds
    (`self.pos_embed = initializer(...)` after `self.pos_embed = Parameter(...)`: the Cell copies the data in) and
    `weight_init=initializer(...)` are not reported, nor an attribute the class reads only as an initializer
    argument (`weight_init=self.init_tensor`, issue 19's eighth sample: DPTNet). The attribute's warning is an
    info in a project that selects only GRAPH_MODE (docs/project-rules.md, "Run mode").

    ## Example
    ```python
    from mindspore import Parameter, nn, ops
    from mindspore.common.initializer import HeUniform, initializer


    class CondConv(nn.Cell):
        def __init__(self, experts=4):
            super().__init__()
            self.weight = Parameter(ops.zeros((experts, 8, 4, 3, 3)))
            for i in range(experts):
                self.weight[i] = initializer(HeUniform(), (8, 4, 3, 3))
    ```

    ## Use instead
    ```python
    from mindspore import Parameter, nn, ops
    from mindspore.common.initializer import HeUniform, initializer


    class CondConv(nn.Cell):
        def __init__(self, experts=4):
            super().__init__()
            self.weight = Parameter(ops.zeros((experts, 8, 4, 3, 3)))
            for i in range(experts):
                self.weight[i] = initializer(HeUniform(), (8, 4, 3, 3)).init_data()
    ```

    ## Fix
    Safe: appends `.init_data()`, which fills the tensor where it is built, as the code meant (measured: each
    reported form then runs in both modes).
    """

    code = "MSL073"
    name = "initializer-used-as-data"
    severity = "error"
    scope = "module"
    message = ("`{call}` is a lazy tensor without data ({use}): {failure}; call `.init_data()` on it, or wrap it in "
               "`Parameter(...)`")
    fix_applicability = "safe"
    needles = ("initializer",)
    call_names = frozenset({"initializer"})

    def visit_call(self, node: ast.Call, ctx):
        if ctx.names.qualname(node.func) not in _INITIALIZER:
            return None
        use = _use_as_data(ctx, node)
        if use is None:
            return None
        where, failure, severity = use
        fix = Fix(self.fix_applicability, "Call `.init_data()` on it",
                  (Edit.insert(ctx.end(node), ".init_data()"),))
        return iter([self.report(ctx, node, call=ctx.excerpt(node), use=where, failure=failure, fix=fix,
                                 severity=severity, pynative_only=severity == "warning")])


_BOTH_MODES = "MindSpore 2.10 raises in graph mode and in PyNative"


def _use_as_data(ctx, call: ast.Call) -> Optional[tuple]:
    parent = ctx.parent(call)
    if isinstance(parent, (ast.BinOp, ast.UnaryOp)):
        return (f"an operand of `{ctx.excerpt(parent)}`",
                f"{_BOTH_MODES} (`The Tensor(...) is uninitialized`)", None)
    if not (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1):
        return None
    target = parent.targets[0]
    if isinstance(target, ast.Subscript):
        return (f"written into `{ctx.excerpt(target)}`",
                f"writing it into a Parameter or tensor {_BOTH_MODES} (`The pointer[device_address] is null`); "
                f"kept in a list, PyNative raises `The Tensor(...) is uninitialized` when it is read", None)
    function = enclosing_function(call)
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and function is not None \
            and target.value.id == self_parameter(function):
        cell = ctx.graph.cell_of(function)
        if cell is not None and not _held_by_parameter(ctx, cell.node, target.attr) \
                and _read_as_data(ctx, cell.node, target.attr):
            return (f"stored as `self.{target.attr}` of Cell `{cell.node.name}`",
                    "graph mode fills it when the Cell is compiled, but PyNative, MindSpore 2.10's default mode, "
                    "raises `The Tensor(...) is uninitialized` when the Cell reads it", "warning")
    return None


def _read_as_data(ctx, class_node: ast.ClassDef, attribute: str) -> bool:
    """Does the class read `self.<attribute>` other than as an initializer argument (`weight_init=self.<name>`,
    `Parameter(self.<name>)`, which take a lazy tensor)? DPTNet's `self.init_tensor = initializer(...)` is only
    passed as `nn.Conv1d(..., weight_init=self.init_tensor)`: nothing reads the data."""
    for node in ctx.walk.of_kind(class_node, ast.Attribute):
        if node.attr != attribute or not isinstance(node.ctx, ast.Load):
            continue
        parent = ctx.parent(node)
        if isinstance(parent, ast.keyword) and (parent.arg or "").endswith("_init"):
            continue
        if isinstance(parent, ast.Call) and node in parent.args \
                and ctx.names.qualname(parent.func) in framework.PARAMETER_CLASSES:
            continue
        return True
    return False


def _held_by_parameter(ctx, class_node: ast.ClassDef, attribute: str) -> bool:
    """Does the class ever make `self.<attribute>` a Parameter, or fill it (`init_data`, `set_data`)? Then the
    attribute holds data: a Cell copies an assigned tensor into an existing Parameter."""
    for node in ctx.walk.of_kind(class_node, ast.Attribute):
        if node.attr != attribute:
            continue
        parent = ctx.parent(node)
        if isinstance(parent, ast.Attribute) and parent.attr in ("init_data", "set_data"):
            return True
        assign = parent if isinstance(parent, ast.Assign) and node in parent.targets else None
        values = [] if assign is None else [assign.value.body, assign.value.orelse] \
            if isinstance(assign.value, ast.IfExp) else [assign.value]
        for value in values:  # `Parameter(...)`, or `Parameter(...) if class_token else None`
            if isinstance(value, ast.Call) and ctx.names.qualname(value.func) in framework.PARAMETER_CLASSES:
                return True
    return False

