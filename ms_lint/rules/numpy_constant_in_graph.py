from __future__ import annotations

import ast
import re
from typing import Optional

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function, self_parameter
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule


class NumpyConstantInGraph(Rule):
    """
    ## What it does
    Finds NumPy arrays built from constants inside graph-compiled code, such as
    `Tensor(np.zeros((2, 3)))` or `np.arange(10)` in `construct`.

    ## Why it matters in graph mode
    MindSpore 2.10 folds such arrays into the graph as constants when it compiles (`Tensor(np.array(..))`
    constants compile and run at both syntax levels, measured), so the code works. But the array is built on the
    host again at every compilation (each new input shape or Python-int argument value triggers one), and the
    intent reads better as a constant created once. This is advice, not a bug: the rule is info-level and
    selected only with `--select MSL002` or `ALL`.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            bias = Tensor(np.ones((1, 4)), mindspore.float32)
            return x + bias
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.bias = Tensor(np.ones((1, 4)), mindspore.float32)

        def construct(self, x):
            return x + self.bias
    ```
    When the shape depends on the inputs (`Tensor(np.zeros((B, H, W)))`, common in model zoos), build it in the
    graph instead: `ops.zeros((B, H, W), mindspore.float32)`.

    ## Fix
    Unsafe: when the array is wrapped in `Tensor(...)`, uses only constants and module-level names, and the
    Cell has an `__init__`, the `Tensor(...)` expression is hoisted to the end of `__init__` as `self.<name>`
    (named after the variable it was assigned to). Unsafe because the value is now shared across calls and
    visible as an attribute. Arrays built from local values (shapes, arguments) get no fix.
    """

    code = "MSL002"
    name = "numpy-constant-in-graph"
    severity = "info"
    compiled_only = True
    scope = "graph"
    message = ("NumPy array `{call}` built from constants in graph code reached from `{entry}`: rebuilt at every "
               "compilation")
    fix_applicability = "unsafe"
    needles = ("numpy",)
    call_names = framework.NUMPY_ARRAY_CONSTRUCTORS

    def visit_call(self, node: ast.Call, ctx):
        qualname = ctx.names.qualname(node.func) or ""
        if not qualname.startswith("numpy.") or qualname.rpartition(".")[2] not in framework.NUMPY_ARRAY_CONSTRUCTORS \
                or qualname.count(".") != 1:
            return
        tensors = ctx.tensors(node)
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if any(tensors.derives(a) for a in arguments):
            return  # numpy on tensor data: MSL001
        if any(isinstance(a, ast.Name) and _filled_in_place(ctx, node, a.id) for a in arguments):
            return  # `np.array(spans)` after `spans.append(...)` in a loop: not a constant
        yield self.report(ctx, node, call=ctx.text(node.func), fix=self._hoist(ctx, node))

    def _hoist(self, ctx, node: ast.Call) -> Optional[Fix]:
        wrapper = ctx.parent(node)
        tensor, _ = edits.reference(ctx.graph, "mindspore.Tensor")
        if not (isinstance(wrapper, ast.Call) and ctx.names.qualname(wrapper.func) in (
                "mindspore.Tensor", "mindspore.common.tensor.Tensor")):
            return None
        function = enclosing_function(node)
        local_names = ctx.names.local_names(function)
        if any(isinstance(n, ast.Name) and n.id in local_names for n in ast.walk(wrapper)):
            return None  # depends on a local or an argument: cannot be computed in __init__
        owner = ctx.graph.owner_class(function)
        init = _method(owner.node, "__init__") if owner is not None and owner.node is not None else None
        self_name = self_parameter(init) if init is not None and init.body else None
        if init is None or self_name is None:
            return None
        attribute = self._attribute_name(ctx, wrapper, owner)
        last = init.body[-1]
        indent = ctx.indentation(last)
        insertion = ctx.insert(last.end_lineno, len(ctx.source.line(last.end_lineno)),
                               f"\n{indent}{self_name}.{attribute} = {ctx.text(wrapper)}")
        use = (self_parameter(function) if function is not None else None) or self_name
        return Fix("unsafe", f"Create the constant once in `__init__` as `{self_name}.{attribute}`",
                   (insertion, ctx.replace(wrapper, f"{use}.{attribute}")))

    @staticmethod
    def _attribute_name(ctx, value: ast.AST, owner) -> str:
        statement = ctx.parent(value)
        base = "constant"
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0],
                                                                                              ast.Name):
            base = statement.targets[0].id
        taken = set()
        for summary in ctx.graph.mro(owner):
            taken |= summary.attributes | summary.methods
        name, counter = base, 1
        while name in taken:
            counter += 1
            name = f"{base}_{counter}"
        return re.sub(r"\W", "_", name)


def _method(class_node: ast.ClassDef, name: str):
    for stmt in class_node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            return stmt
    return None


def _filled_in_place(ctx, node: ast.Call, name: str) -> bool:
    """Does the function around `node` call `<name>.append/extend/insert(...)`?"""
    function = enclosing_function(node)
    if function is None:
        return False
    return any(isinstance(call.func, ast.Attribute) and call.func.attr in ("append", "extend", "insert")
               and isinstance(call.func.value, ast.Name) and call.func.value.id == name
               for call in ctx.walk.nodes_of(function).calls)
