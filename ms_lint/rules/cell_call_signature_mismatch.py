from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Optional

from ms_lint.analysis import bindings, framework
from ms_lint.analysis.signatures import Signature
from ms_lint.analysis.walk import enclosing_function, self_parameter
from ms_lint.rule import Rule


class CellCallSignatureMismatch(Rule):
    """
    ## What it does
    Finds calls of a project Cell whose arguments its `construct` cannot take: more positional arguments than it
    has parameters, a keyword it does not name, or a required parameter left out. The Cell is one the source shows
    for certain: built where it is called (`Upsample()(x, size=s, mode="nearest")`), or an attribute every
    assignment of which in the class builds the same class (`self.head = Head(...)`, then `self.head(x, y)`).
    Its `construct` is the first one of its classes (all of the project, up to `nn.Cell`).

    Not reported: calls with `*args` or `**kwargs`, a `construct` that takes them or is decorated, classes that
    define `__call__`, MindTorch modules (they run `forward`), and Cells whose class is not known for certain
    (passed in as a parameter, chosen at run time).

    ## Why it matters in graph mode
    `Cell.__call__` hands its arguments to `construct`, so Python binds them there: measured on MindSpore 2.10, a
    keyword `construct` lacks raises `TypeError: construct() got an unexpected keyword argument 'size'` in
    PyNative, and graph mode fails to compile the call. Ports meet it where a PyTorch functional call
    (`F.interpolate(x, size=s, mode=m)`) became a small Cell with one input (FakeDiffer's
    `MSUpsamplingNearest2d()(pred, size=..., mode=..., align_corners=...)`, issue 19's seventh sample), or where
    a Cell gained or lost an input and one caller was not updated.

    ## Example
    ```python
    from mindspore import nn, ops


    class Upsample(nn.Cell):
        def construct(self, x):
            return ops.interpolate(x, scale_factor=2.0, mode="nearest")


    class Decoder(nn.Cell):
        def construct(self, x, skip):
            return Upsample()(x, size=skip.shape[2:], mode="nearest") + skip
    ```

    ## Use instead
    ```python
    from mindspore import nn, ops


    class Decoder(nn.Cell):
        def construct(self, x, skip):
            return ops.interpolate(x, size=skip.shape[2:], mode="nearest") + skip
    ```

    ## Fix
    None: which arguments the call meant is the author's to say.
    """

    code = "MSL077"
    name = "cell-call-signature-mismatch"
    severity = "error"
    scope = "graph"
    message = "`{call}` calls `{cls}.construct{signature}` with {problem}: TypeError when it runs, in every mode"

    def visit_call(self, node: ast.Call, ctx):
        """The finding of a call of a known project Cell, None for the others (most calls: no generator)."""
        func = node.func
        if isinstance(func, ast.Call):
            qualname = ctx.names.qualname(func.func)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if ctx.names.qualname(func) is not None:
                return None  # `ops.relu(x)`, `nn.Dense(...)`: a name an import binds, not `self` (most calls)
            qualname = _attribute_class(ctx, node, func)
        else:
            return None
        if qualname is None or any(isinstance(a, ast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords):
            return None
        construct = _construct_of(ctx, qualname)
        if construct is None:
            return None
        problem = construct.binding_problem(node)
        if problem is None:
            return None
        return [self.report(ctx, node, call=_shown(ctx, node), cls=qualname.rpartition(".")[2],
                            signature=_signature(construct), problem=problem)]


def _attribute_class(ctx, call: ast.Call, func: ast.Attribute) -> Optional[str]:
    """The class every assignment of `self.<attr>` in the Cell around the call builds, if one."""
    if func.attr not in ctx.memo(_attributes_built, lambda: _attributes_built(ctx)):
        return None  # (most calls: no class of the module builds an attribute of that name)
    cell = ctx.graph.cell_of(call)
    if cell is None or cell.kind != "cell" or not ctx.walk.spans(cell.node) \
            or getattr(func.value, "id", None) != _self_name(call):
        return None
    # once per Cell and attribute: a base class of many Cells (transformers' `PreTrainedModel`) calls the same
    # attribute again and again, and each call would go over every Cell deriving from it
    return ctx.memo((_attribute_class, cell.node, func.attr), lambda: _built_by_every_cell(ctx, cell, func.attr))


def _built_by_every_cell(ctx, cell, attr: str) -> Optional[str]:
    # `self` may be a subclass of the module that builds the attribute from another class (Twins' blocks)
    classes = {_built_attributes(ctx, other.node).get(attr, "") if ctx.walk.spans(other.node) else None
               for other in ctx.graph.cells_deriving_from(cell.summary.qualname)}
    classes.discard("")  # a subclass that leaves the attribute alone
    return classes.pop() if len(classes) == 1 else None  # (None among them: uncertain)


def _self_name(call: ast.Call) -> Optional[str]:
    function = enclosing_function(call)
    return self_parameter(function) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _attributes_built(ctx) -> FrozenSet[str]:
    """The attribute names some `<name>.<attr> = <call>` of the module assigns."""
    return frozenset(target.attr for node in ctx.walk.of_kind(ctx.tree, ast.Assign) if isinstance(node.value, ast.Call)
                     for target in node.targets if isinstance(target, ast.Attribute))


def _built_attributes(ctx, class_node: ast.ClassDef) -> Dict[str, Optional[str]]:
    """Attribute -> the qualified name of the class its every assignment in the class calls (`x.attr = C(...)`),
    None when the assignments differ or are not such calls (any receiver counts, so another object's attribute of
    the same name only makes it uncertain)."""
    def collect() -> Dict[str, Optional[str]]:
        built: Dict[str, Optional[str]] = {}
        for attribute, stores in bindings.attribute_stores(ctx.walk, class_node).items():
            kinds = {ctx.names.qualname(node.value.func)
                     if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) else None
                     for node, _ in stores}
            built[attribute] = kinds.pop() if len(kinds) == 1 else None
        return built
    return ctx.memo((_built_attributes, class_node), collect)


def _construct_of(ctx, qualname: str) -> Optional[Signature]:
    """The signature of the `construct` a call of an instance of the project class `qualname` runs, when certain
    (once per class and module: a module calls the same sub-Cells again and again)."""
    return ctx.memo((_construct_of, qualname), lambda: _certain_construct(ctx, qualname))


def _certain_construct(ctx, qualname: str) -> Optional[Signature]:
    summary = ctx.graph.summary_of(qualname)
    if summary is None or not ctx.graph.is_cell_class(qualname) \
            or not ctx.graph.external_bases(summary) <= framework.CELL_BASES:
        return None
    for current in ctx.graph.mro(summary):
        if current.dynamic or "__call__" in current.methods:
            return None
        if "construct" in current.methods:
            return current.construct  # (kept by the summary: another module's tree is not parsed again)
    return None


def _signature(construct: Signature) -> str:
    return "(" + ", ".join(construct.positional) + ")"


def _shown(ctx, call: ast.Call) -> str:
    text = ctx.text(call.func)
    return (text if len(text) <= 40 else text[:37] + "...") + "(...)"
