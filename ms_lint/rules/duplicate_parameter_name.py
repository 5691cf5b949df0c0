from __future__ import annotations

import ast

from ms_lint.analysis import framework
from ms_lint.rule import Rule


class DuplicateParameterName(Rule):
    """
    ## What it does
    Finds a `ParameterTuple`, or a list or tuple stored on `self`, built from Parameters that share a literal
    name: two elements with the same `name=`, or a comprehension that gives every Parameter it makes one fixed
    name (`[Parameter(t, name="w") for _ in range(n)]`).

    ## Why it matters in graph mode
    A Cell's Parameters need unique names. Measured on 2.10, in GRAPH_MODE and PyNative alike, a
    `ParameterTuple` or a list stored on `self` of Parameters named alike fails when the Cell is built:
    `ValueError: The value Parameter (name=w, ...), its name 'w' already exists. Please set a unique name for
    the parameter.` Parameters stored as attributes
    are renamed after the attribute, and unnamed ones become `Parameter$1`, `Parameter$2`: neither clashes.
    PyTorch code, where `nn.ParameterList` names nothing, is the usual source.

    ## Example
    ```python
    class Mixture(nn.Cell):
        def __init__(self, n):
            super().__init__()
            self.weights = ParameterTuple(
                [Parameter(Tensor(np.ones(4), ms.float32), name="weight") for _ in range(n)])
    ```

    ## Use instead
    ```python
    class Mixture(nn.Cell):
        def __init__(self, n):
            super().__init__()
            self.weights = ParameterTuple(
                [Parameter(Tensor(np.ones(4), ms.float32), name=f"weight{i}") for i in range(n)])
    ```

    ## Fix
    None: choose the names (an index in an f-string, or no name at all).
    """

    code = "MSL038"
    name = "duplicate-parameter-name"
    severity = "error"
    scope = "module"
    message = ("{container} of Parameters sharing the name {name!r}: 2.10 refuses it in every mode "
               "(`ValueError: ... its name {name!r} already exists`)")
    needles = ("Parameter",)
    call_names = frozenset({"ParameterTuple"})

    def visit_assign(self, node: ast.Assign, ctx):
        if not (isinstance(node.value, (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)) and any(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                for t in node.targets)):
            return None
        name = framework.repeated_parameter_name(node.value, ctx.names.qualname)
        if name is None:
            return None
        return iter((self.report(ctx, node.value, name=name, container="a list stored on `self`"),))

    def visit_call(self, node: ast.Call, ctx):
        if not (node.args and (ctx.names.qualname(node.func) or "").endswith("ParameterTuple")):
            return
        name = framework.repeated_parameter_name(node.args[0], ctx.names.qualname)
        if name is not None:
            yield self.report(ctx, node, name=name, container="`ParameterTuple`")
