from __future__ import annotations

import ast
import os
from collections import deque
from typing import Dict, Optional

from ms_lint.analysis import projects
from ms_lint.analysis.compile_context import selects_graph_mode
from ms_lint.rule import Edit, Fix, Rule

# Two-axis transposes that swap the two axes of a 2-D tensor in both readings (PyTorch's dims, MindSpore's
# permutation): only a tensor with more axes tells them apart, and the linter cannot see its rank.
_SWAPS_EITHER_WAY = frozenset({(1, 0), (-1, -2), (-1, 0), (1, -2)})


class TorchAxisMethodInGraph(Rule):
    """
    ## What it does
    Finds PyTorch's `x.transpose(dim0, dim1)` and `x.expand(*sizes)` on MindSpore tensors in code compiled in
    GRAPH_MODE: a `@jit` function, or a Cell of a project (or module) that selects
    `set_context(mode=GRAPH_MODE)`.

    ## Why it matters in graph mode
    In MindSpore `Tensor.transpose(*axes)` takes a full permutation and `Tensor.expand` a size tensor. PyNative
    2.10 accepts PyTorch's forms, GRAPH_MODE does not (measured, LAX and STRICT alike): `x.transpose(1, 2)` on a
    3-D tensor fails with `ValueError: For Tensor.transpose, the number of axes must be equal to the dimension of
    Tensor, but got 2`, and **`x.transpose(0, 1)` on a 2-D tensor returns it unchanged** (the identity
    permutation) where PyNative swaps the axes: a silent wrong result. `x.expand(2, 3, 4)` fails with `TypeError:
    The parameters number of the function is 2, but the number of provided arguments is 4.`, `x.expand((2, 3,
    4))` with `RuntimeError: The method 'GetShapeVector()' doesn't implement`. `x.swapaxes(0, 1)` and
    `x.broadcast_to((2, 3, 4))` compute PyTorch's results in every mode.

    Code that is never compiled (a project that runs PyNative, as most ports of Hugging Face models do) runs
    these calls as PyTorch would: they are reported only where GRAPH_MODE is selected or the function is `@jit`.

    ## Front ends
    A project rule: the CLI and pylint see which script selects GRAPH_MODE and what it imports. flake8 and the
    language server see one file: there only a module that selects GRAPH_MODE itself, or a `@jit` function, is
    known to be compiled, and the rule is silent elsewhere.

    ## Example
    ```python
    ms.set_context(mode=ms.GRAPH_MODE)

    class Attention(nn.Cell):
        def construct(self, q, k):
            return ops.matmul(q, k.transpose(1, 2))
    ```

    ## Use instead
    ```python
    ms.set_context(mode=ms.GRAPH_MODE)

    class Attention(nn.Cell):
        def construct(self, q, k):
            return ops.matmul(q, k.swapaxes(1, 2))
    ```

    ## Fix
    Unsafe: `x.transpose(i, j)` becomes `x.swapaxes(i, j)` and `x.expand(a, b)` becomes `x.broadcast_to((a, b))`
    (`x.expand(*sizes)`: `x.broadcast_to(tuple(sizes))`). In PyNative the result is the same; in GRAPH_MODE the
    call now computes what PyTorch computed, where it failed or (2-D `transpose(0, 1)`) returned `x` unchanged.
    """

    code = "MSL068"
    name = "torch-axis-method-in-graph"
    severity = "error"
    scope = "module"
    message = "`{call}` in graph code reached from `{entry}`, compiled in GRAPH_MODE ({why}): {consequence}"
    fix_applicability = "unsafe"

    def collect(self, ctx):
        """The PyTorch calls of the module's graph code, whether the module selects GRAPH_MODE, and the modules it
        imports: which of them compile in GRAPH_MODE is a fact of the project (`judge`)."""
        text = ctx.source.text
        may_select = "GRAPH_MODE" in text or "mode=0" in text or "mode = 0" in text
        graph_mode = selects_graph_mode(text.encode("utf-8", errors="replace")) if may_select else None
        calls = list(self._calls(ctx)) if ".transpose(" in text or ".expand(" in text else []
        if not calls and graph_mode is None:
            return None
        return {"graph_mode": graph_mode, "calls": calls, "imports": projects.imported_files(ctx)}

    def judge(self, project):
        modules = {os.path.abspath(path): (path, facts) for path, facts in project.modules.items() if facts}
        reasons = _compiled_in_graph_mode(modules)
        for path, facts in project.modules.items():
            if not facts:
                continue
            reason = reasons.get(os.path.abspath(path))
            for call in facts["calls"]:
                why = "a `@jit` function" if call["jit"] else reason
                if why is None:
                    continue
                (row, column, end_row, end_column), replacement = call["span"], call["replacement"]
                fix = Fix("unsafe", f"Use `.{replacement.rpartition('.')[2].partition('(')[0]}`",
                          (Edit(replacement, (row, column), (end_row, end_column)),))
                yield self.report_at(project, path, ((row, column), (end_row, end_column)), fix=fix,
                                     call=call["call"], entry=call["entry"], why=why, consequence=call["consequence"])

    def _calls(self, ctx):
        if "mindtorch" in ctx.source.text or "msadapter" in ctx.source.text:
            return  # (searched once, not once per call)
        # only `.transpose(...)` and `.expand(...)` calls are kept and sorted (not every call of the graph code)
        nodes = {id(node): node for function in ctx.graph.compiled for node in ctx.walk.nodes_of(function).calls
                 if node.func.__class__ is ast.Attribute and node.func.attr in ("transpose", "expand")}
        for node in sorted(nodes.values(), key=lambda call: (call.lineno, call.col_offset)):
            func = node.func
            if node.keywords or not ctx.graph.is_compiled(node):
                continue
            if func.attr == "transpose":
                axes = _two_ints(node)
                if axes is None or axes in _SWAPS_EITHER_WAY:
                    continue
                consequence = ("2.10 takes a full permutation there: on more than two axes it fails to compile "
                               "(`ValueError: For Tensor.transpose, the number of axes must be equal to the "
                               "dimension of Tensor`)")
                if sorted(axes) in ([0, 1], [-2, -1]) or axes in ((0, -1), (-2, 1)):
                    consequence += (", and on a 2-D tensor it returns the tensor unchanged where PyTorch swaps the "
                                    "axes")
                replacement = f"{ctx.text(func.value)}.swapaxes({ctx.text(node.args[0])}, {ctx.text(node.args[1])})"
            elif _sizes(node):
                consequence = ("2.10 takes a size tensor there and fails to compile (`TypeError: The parameters "
                               "number of the function is 2`, or `The method 'GetShapeVector()' doesn't implement`)")
                replacement = f"{ctx.text(func.value)}.broadcast_to({_shape_text(ctx, node)})"
            else:
                continue
            if not ctx.tensors(node).derives(func.value):
                continue
            entry = ctx.graph.entry_of(node)
            (row, column), (end_row, end_column) = ctx.start(node), ctx.end(node)
            yield {"span": [row, column, end_row, end_column], "call": f"{ctx.text(func)}(...)",
                   "entry": entry.name if entry else "", "jit": bool(entry and entry.kind == "jit"),
                   "consequence": consequence, "replacement": replacement}


def _compiled_in_graph_mode(modules) -> Dict[str, str]:
    """{module's absolute path: why it compiles in GRAPH_MODE} for the modules that select it and every linted
    module they import (`projects.imported_files`), directly or through other linted modules: a model file's
    `__main__` block selecting GRAPH_MODE makes its own imports graph code, not the whole project (a library like
    mindone runs most models in PyNative)."""
    reasons: Dict[str, str] = {}
    queue: deque = deque()
    for name, (path, facts) in sorted(modules.items()):
        if facts.get("graph_mode"):
            reasons[name] = "this module selects it"
            queue.append((name, f"`{os.path.basename(path)}` line {facts['graph_mode']} selects it and imports it"))
    while queue:
        name, why = queue.popleft()
        for imported in modules[name][1].get("imports", ()):
            if imported in modules and imported not in reasons:
                reasons[imported] = why
                queue.append((imported, why))
    return reasons


def _two_ints(node: ast.Call) -> Optional[tuple]:
    if len(node.args) != 2:
        return None
    values = [_int(a) for a in node.args]
    return (values[0], values[1]) if None not in values else None


def _int(expr: ast.expr) -> Optional[int]:
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant) \
            and type(expr.operand.value) is int:
        return -expr.operand.value
    return None


def _sizes(node: ast.Call) -> bool:
    """PyTorch's sizes: several ints, `*sizes`, or one tuple/list display (not a size tensor)."""
    args = node.args
    if len(args) > 1:
        return True
    return len(args) == 1 and (isinstance(args[0], (ast.Starred, ast.Tuple, ast.List)) or _int(args[0]) is not None)


def _shape_text(ctx, node: ast.Call) -> str:
    args = node.args
    if len(args) == 1 and isinstance(args[0], ast.Starred):
        return f"tuple({ctx.text(args[0].value)})"
    if len(args) == 1 and isinstance(args[0], ast.Tuple):
        return ctx.text(args[0])
    if len(args) == 1 and isinstance(args[0], ast.List):
        return f"tuple({ctx.text(args[0])})"
    return f"({', '.join(ctx.text(a) for a in args)}{',' if len(args) == 1 else ''})"
