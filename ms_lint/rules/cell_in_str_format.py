from __future__ import annotations

import ast

from ms_lint.rule import Rule


class CellInStrFormat(Rule):
    """
    ## What it does
    Finds `"...".format(...)` in graph-compiled code given a sub-Cell of the network (`"layer {}".format(
    self.dense)`) whose result is used (printed, returned, stored).

    ## Why it matters in graph mode
    Measured on MindSpore 2.10, LAX and STRICT alike: `print("layer {}".format(self.dense))` in `construct` fails
    with `TypeError: Unsupported parameter type for python primitive, the parameter value is DeadNode`. The same
    Cell in an f-string (`f"layer {self.dense}"`) or with `%` compiles, and so does `str.format` of plain
    attributes (`"{}".format(self.name)`). PyNative runs all of them.

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(2, 2)

        def construct(self, x):
            print("layer {}".format(self.dense))
            return self.dense(x)
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(2, 2)

        def construct(self, x):
            print(f"layer {self.dense}")
            return self.dense(x)
    ```

    ## Fix
    None: describe the layer in `__init__` (`self.description = str(self.dense)`) or use an f-string.
    """

    code = "MSL012"
    name = "cell-in-str-format"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = ("`{call}` formats the sub-Cell `self.{cell}` in graph code reached from `{entry}`: 2.10 fails to "
               "compile it (`TypeError: Unsupported parameter type for python primitive, the parameter value is "
               "DeadNode`); use an f-string")
    needles = (".format(",)
    call_names = frozenset({"format"})

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant)
                and isinstance(func.value.value, str)) or isinstance(ctx.parent(node), ast.Expr):
            return
        tensors = ctx.tensors(node)
        method = tensors.method()
        owner = ctx.graph.owner_class(method) if method is not None else None
        if owner is None:
            return
        members = ctx.graph.member_kinds(owner)
        for argument in (*node.args, *(k.value for k in node.keywords)):
            if isinstance(argument, ast.Attribute) and tensors.is_self(argument.value) \
                    and members.get(argument.attr) in ("cell", "container"):
                yield self.report(ctx, node, call=f"{ctx.text(func)}(...)", cell=argument.attr)
                return
