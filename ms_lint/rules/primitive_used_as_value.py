from __future__ import annotations

import ast
from typing import Iterator, Optional

from ms_lint.analysis import framework, mindspore_nn
from ms_lint.analysis.walk import enclosing_function
from ms_lint.rule import Diagnostic, Rule
from ms_lint.rules._mindspore_values import bound_values

_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class PrimitiveUsedAsValue(Rule):
    """
    ## What it does
    Finds a name that holds a `mindspore.ops` primitive, `rand = ops.UniformReal()`, used as a number or tensor in
    arithmetic or an ordering (`rand - 0.5`, `-rand`, `rand > 0.5`) without being called: the random draw (or
    the result) was meant, `rand(shape) - 0.5`. Every binding of the name in its scope must be a primitive built
    from `mindspore.ops` (a name also assigned a tensor is not judged); the first such use of each name is reported,
    and not a primitive given its inputs when built (`ops.Maximum(-x, 0)`: MSL067 reports that call).

    ## Why it matters in graph mode
    A primitive is an operation: it takes its settings when built and its inputs when called. Arithmetic on the
    object itself fails wherever it runs: measured on MindSpore 2.10, `ops.UniformReal() - 0.5` raises
    `TypeError: unsupported operand type(s) for -: 'UniformReal' and 'float'` in PyNative, and the same code in
    `construct` fails to compile in graph mode (at LAX and STRICT; the fallback reports `NameError: name
    '__input_key_0__' is not defined`). Found by hand in a community port of PointRCNN (issue 19's fifth
    sample: `rand = ops.UniformReal()` then `((rand - 0.5) / 0.5) * np.pi / 12` in a box augmentation branch).

    ## Example
    ```python
    import numpy as np
    from mindspore import ops


    def jitter(angle):
        rand = ops.UniformReal()
        return angle + ((rand - 0.5) / 0.5) * np.pi / 12
    ```

    ## Use instead
    ```python
    import numpy as np
    from mindspore import ops


    def jitter(angle):
        rand = ops.UniformReal()
        return angle + ((rand((1,)) - 0.5) / 0.5) * np.pi / 12
    ```

    ## Fix
    None: the primitive's inputs (a shape, tensors) are the author's to give.
    """

    code = "MSL075"
    name = "primitive-used-as-value"
    severity = "error"
    scope = "module"
    message = ("`{name}` holds the primitive `{built}`, not its result: `{use}` raises TypeError (unsupported "
               "operand) in PyNative and fails to compile in graph mode; call it with its inputs (`{name}(...)`)")
    needles = ("ops", "P.")

    def visit_assign(self, node: ast.Assign, ctx) -> Optional[Iterator[Diagnostic]]:
        """The uses of a name assigned a primitive, None for the other assignments (most)."""
        value = node.value
        if not (isinstance(value, ast.Call) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            return None
        func = value.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if last not in framework.OPS_PRIMITIVES or not _is_primitive(ctx, value) or _built_with_inputs(ctx, value):
            return None
        return self._uses(node.targets[0], value, ctx)

    def _uses(self, target: ast.Name, built: ast.Call, ctx) -> Iterator[Diagnostic]:
        function = enclosing_function(target)
        if function is None:
            return
        for load in ctx.walk.nodes_of(function).loads.get(target.id, ()):
            parent = ctx.parent(load)
            if not isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)) or (isinstance(parent, ast.UnaryOp) and (
                    isinstance(parent.op, ast.Not))) or (isinstance(parent, ast.Compare) and not all(
                    isinstance(op, _ORDERING) for op in parent.ops)):
                continue  # (`not op`, `op is None`, `op == other`: what any object supports)
            values = bound_values(ctx, load)
            if not values or not all(isinstance(v, ast.Call) and _is_primitive(ctx, v) for v in values):
                continue
            if values[0] is not built:
                continue  # reported once, from the name's first binding
            yield self.report(ctx, load, name=target.id, built=f"{ctx.text(built.func)}()",
                              use=ctx.excerpt(parent))
            return  # the first use fails: one finding per name


def _built_with_inputs(ctx, call: ast.Call) -> bool:
    """`ops.Maximum(-x, 0)`: more positional arguments than the primitive takes when built, which MSL067 reports
    (its construction fails first)."""
    signature = mindspore_nn.SIGNATURES.get(ctx.names.qualname(call.func) or "")
    return signature is not None and not signature[3] and len(call.args) > len(signature[0])


def _is_primitive(ctx, call: ast.Call) -> bool:
    qualname = ctx.names.qualname(call.func) or ""
    package, _, name = qualname.rpartition(".")
    return package in framework.OPS_PRIMITIVE_PACKAGES and name in framework.OPS_PRIMITIVES
