from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Set

from ms_lint.analysis import bindings
from ms_lint.analysis.walk import enclosing_function, self_parameter
from ms_lint.rule import Rule

_SEQUENTIAL = "SequentialCell"


class ZipOverSequentialCell(Rule):
    """
    ## What it does
    Finds `zip(...)` in graph code with an `nn.SequentialCell` attribute of the Cell among its arguments:
    `[conv(x) for conv, x in zip(self.conv_list, parts)]`, where the class builds `self.conv_list` only as
    `nn.SequentialCell(...)` (PyTorch's `nn.ModuleList` or `nn.Sequential` used as a container of layers to pair
    with inputs).

    ## Why it matters in graph mode
    Graph mode cannot zip a `SequentialCell`. Measured on MindSpore 2.10, the same Cell with the layers in an
    `nn.SequentialCell` fails to compile, as a comprehension or a `for` loop and in either argument position:
    `ValueError: negative dimensions are not allowed`, `RuntimeError: Nested execution during JIT execution for
    'Conv2d.construct' is not supported`, or `For primitive[Concat], the elements size must be greater than 0`
    (the loop ran zero times); PyNative runs it. With `nn.CellList`, or with `enumerate(self.conv_list)`, plain
    iteration or indexing of the `SequentialCell`, graph mode compiles and matches PyNative. Found building
    community ports (CoaT's convolutional position encoding, CrossViT's branches, issue 19).
    `zip` over a `CellList`, a tuple or a list, and a `SequentialCell` attribute the class also assigns something
    else than `None`, are not reported.

    ## Example
    ```python
    from mindspore import nn, ops


    class Branches(nn.Cell):
        def __init__(self):
            super().__init__()
            self.convs = nn.SequentialCell([nn.Conv2d(2, 2, 3), nn.Conv2d(3, 3, 3)])

        def construct(self, x):
            parts = ops.split(x, [2, 3], axis=1)
            return ops.cat([conv(part) for conv, part in zip(self.convs, parts)], axis=1)
    ```

    ## Use instead
    ```python
    from mindspore import nn, ops


    class Branches(nn.Cell):
        def __init__(self):
            super().__init__()
            self.convs = nn.CellList([nn.Conv2d(2, 2, 3), nn.Conv2d(3, 3, 3)])

        def construct(self, x):
            parts = ops.split(x, [2, 3], axis=1)
            return ops.cat([conv(part) for conv, part in zip(self.convs, parts)], axis=1)
    ```

    ## Fix
    None: a `SequentialCell` may also be called as a whole elsewhere (`self.convs(x)` runs the layers in
    sequence), which an `nn.CellList` cannot; build the layers as `nn.CellList` where they are only paired with
    inputs, or zip over `range(len(...))` and index.
    """

    code = "MSL072"
    name = "zip-over-sequential-cell"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = ("`zip(...)` over `{attribute}`, an `nn.SequentialCell`, in graph code reached from `{entry}`: graph "
               "mode cannot zip a SequentialCell and fails to compile (PyNative runs it); build it as "
               "`nn.CellList` or use `enumerate({attribute})`")
    needles = ("SequentialCell",)
    call_names = frozenset({"zip"})

    def visit_call(self, node: ast.Call, ctx):
        if not isinstance(node.func, ast.Name) or ctx.names.qualname(node.func) not in (None, "builtins.zip"):
            return None  # a zip some import or local binds is not the builtin
        cell = ctx.graph.cell_of(node)
        if cell is None:
            return None
        attributes = [argument for argument in node.args if isinstance(argument, ast.Attribute)
                      and isinstance(argument.value, ast.Name)]
        if not attributes:
            return None
        sequential = _sequential_attributes(ctx, cell.node)
        return self._report(ctx, node, [a for a in attributes if a.attr in sequential and _is_self(a)])

    def _report(self, ctx, node: ast.Call, found):
        for attribute in found[:1]:
            yield self.report(ctx, node, attribute=ctx.text(attribute))


def _is_self(attribute: ast.Attribute) -> bool:
    """`self.x` where `self` is the first parameter of the method around it (through comprehensions)."""
    function = enclosing_function(attribute)
    while function is not None and isinstance(function, ast.Lambda):
        function = enclosing_function(function)
    return function is not None and isinstance(attribute.value, ast.Name) \
        and attribute.value.id == self_parameter(function)


def _sequential_attributes(ctx, class_node: ast.ClassDef) -> FrozenSet[str]:
    """The attributes every assignment of which in the class's methods is an `nn.SequentialCell(...)` (or None:
    `if len(self.blocks) == 0: self.blocks = None`, which zip cannot take either)."""
    def collect() -> FrozenSet[str]:
        kinds: Dict[str, Set[bool]] = {}
        for attribute, stores in bindings.attribute_stores(ctx.walk, class_node).items():
            for assign, _ in stores:
                if isinstance(assign, ast.Assign) \
                        and not (isinstance(assign.value, ast.Constant) and assign.value.value is None):
                    kinds.setdefault(attribute, set()).add(_is_sequential(ctx, assign.value))
        return frozenset(name for name, found in kinds.items() if found == {True})
    return ctx.memo((_sequential_attributes, class_node), collect)


def _is_sequential(ctx, value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    qualname = ctx.names.qualname(value.func) or ""
    return qualname.startswith("mindspore.") and qualname.rpartition(".")[2] == _SEQUENTIAL
