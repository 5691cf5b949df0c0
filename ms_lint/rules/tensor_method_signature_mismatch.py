from __future__ import annotations

import ast
from typing import List, Optional

from ms_lint.analysis import mindspore_tensor
from ms_lint.rule import Edit, Fix, Rule
from ms_lint.rules._mindspore_values import receiver_kind, shown_receiver, uses_mindtorch

# A keyword -> the names other conventions give the same parameter (PyTorch's `dim`/`keepdim`, NumPy's and older
# MindSpore's `axis`/`keepdims`/`keep_dims`, `Tensor.norm`'s `p` for `ord`). The fix renames only when exactly
# one of them is a keyword the method takes, in graph code and in PyNative.
_SAME_MEANING = {"dim": ("axis",), "axis": ("dim",), "keepdim": ("keepdims", "keep_dims"),
                 "keepdims": ("keepdim", "keep_dims"), "keep_dims": ("keepdim", "keepdims"), "p": ("ord",)}
# What a method used to mean where 2.10 changed it: the old NumPy-style `repeat(repeats, axis)`.
_OLD_MEANING = {("repeat", "axis"): "`Tensor.repeat` is PyTorch's tile in 2.10; the old `repeat(n, axis=a)` is "
                                    "`repeat_interleave(n, a)`"}


class TensorMethodSignatureMismatch(Rule):
    """
    ## What it does
    Finds calls of MindSpore `Tensor` methods with a keyword argument none of the method's 2.10 signatures takes
    (`x.squeeze(dim=1)`, `x.softmax(dim=-1)`, `x.norm(p=2, dim=1)`, `x.repeat(2, axis=0)`,
    `x.split(axis=0, output_num=2)`, `x.prod(axis=0)`, `x.tile(multiples=...)`), or, outside graph code, more
    positional arguments than any signature takes. Also `x.repeat(n, 0)` (or a negative last argument): the old
    NumPy-style `repeat(repeats, axis)` given positionally, which 2.10 reads as PyTorch's counts per dimension,
    the last of them 0. The signatures are those of the installed 2.10 wheel,
    recorded in `ms_lint/analysis/mindspore_tensor.py` by `tools/tensor_signatures.py` (an oracle test keeps
    them equal), not a hand-written list: what PyNative's argument parser accepts for each method, and, for
    graph code, which methods the graph compiler checks the same way and which extra keywords it accepts
    (`x.transpose(axes=...)` compiles, and raises in PyNative).

    The receiver must be a MindSpore tensor for certain: in graph code, tensor data by the tensor analysis; in
    host code, a value the module provably builds with MindSpore (a `Tensor`, an `ops`/`mint`/`numpy` result,
    a Parameter). NumPy arrays (`a.repeat(2, axis=0)` is right there), modules that import MindTorch (its
    tensors take PyTorch's arguments), calls with `**kwargs` and methods the project replaces with its own when
    imported (MindNLP 0.3's `Tensor.repeat = _repeat`) are not reported.

    ## Why it matters in graph mode
    Each call fails wherever it runs: measured on MindSpore 2.10, `x.squeeze(dim=1)` raises `TypeError:
    Failed calling squeeze with "squeeze(dim=int)"` in PyNative and in GRAPH_MODE, `x.softmax(dim=1)`
    `Got an unexpected keyword argument 'dim'`, and `x.repeat(2, axis=0)` `unexpected keyword argument
    'axis'`; `x.repeat(2, 0)` on a 3-D tensor `ValueError: For repeat, number of items of repeats can not be
    smaller than the number of dimensions` in graph mode (on fewer dimensions it repeats the last one zero
    times: an empty tensor). Ports carry PyTorch's keyword names (`dim`, `keepdim`, `p`) where a method
    takes MindSpore's, and code written for older MindSpore carries signatures 2.10 removed (`repeat(n,
    axis)`, which 2.10 made PyTorch's tile, `split(axis, output_num)`, `tile(multiples)`).

    ## Example
    ```python
    from mindspore import nn, ops


    class Head(nn.Cell):
        def construct(self, x):
            x = ops.relu(x).squeeze(dim=1)
            return x.softmax(dim=-1)
    ```

    ## Use instead
    ```python
    from mindspore import nn, ops


    class Head(nn.Cell):
        def construct(self, x):
            x = ops.relu(x).squeeze(axis=1)
            return x.softmax(axis=-1)
    ```

    ## Fix
    Safe: a keyword is renamed to the one other name of the same parameter the method takes in PyNative and in
    graph code (`dim` <-> `axis`, `keepdim` <-> `keepdims`/`keep_dims`, `p` -> `ord`): the call raised before,
    and the argument keeps its meaning; `x.repeat(n, 0)` becomes `x.repeat_interleave(n, 0)`, the old meaning
    (measured: NumPy's `repeat` in both modes). Other findings have no fix: `repeat(n, axis=a)` means
    `repeat_interleave(n, a)` now, which the message says, and a removed signature needs its replacement's
    arguments.
    """

    code = "MSL069"
    name = "tensor-method-signature-mismatch"
    severity = "error"
    scope = "module"
    message = "`{call}` {problem} in MindSpore {version}: {consequence}"
    fix_applicability = "safe"
    call_names = frozenset(mindspore_tensor.METHODS)

    def visit_call(self, node: ast.Call, ctx):
        """The findings of a tensor method call, None for the calls ruled out (most: no generator is made)."""
        func = node.func
        if not isinstance(func, ast.Attribute) or any(k.arg is None for k in node.keywords):
            return None
        method = func.attr
        if method not in mindspore_tensor.METHODS:
            return None
        keywords, most_positional = mindspore_tensor.METHODS[method]
        if f"mindspore.Tensor.{method}" in ctx.compile_context.replaced_api:
            return None  # the project's own method (MindNLP's `Tensor.repeat = _repeat`), with its own signature
        if method == "repeat" and not node.keywords and len(node.args) == 2 and _axis_literal(node.args[1]):
            return self._old_repeat(ctx, node)
        if not node.keywords and (most_positional is None or len(node.args) <= most_positional):
            return None  # most calls (`x.view(b, -1)`, `x.sum(1)`): nothing to check, nor where they run
        return self._findings(node, ctx, func, method, keywords, most_positional)

    def _findings(self, node: ast.Call, ctx, func: ast.Attribute, method: str, keywords, most_positional):
        compiled = ctx.graph.is_compiled(node)
        unknown = self._unknown_keywords(node, method, keywords, compiled)
        too_many = (not compiled and most_positional is not None and len(node.args) > most_positional
                    and not any(isinstance(a, ast.Starred) for a in node.args))
        if not unknown and not too_many or uses_mindtorch(ctx) or receiver_kind(ctx, func.value, node) != "tensor":
            return
        shown = f"{shown_receiver(ctx, func.value)}.{method}(...)"
        failure = "fails to compile" if compiled else "raises TypeError"
        if unknown:
            names = [keyword.arg or "" for keyword in unknown]
            renames = [self._rename(node, method, name, keywords) for name in names]
            old = _OLD_MEANING.get((method, names[0]))
            hint = (f"; {old}" if old else "; it takes " + ", ".join(f"`{r}`" for r in renames if r)
                    if any(renames) else _takes(keywords))
            fix = _rename_fix(ctx, unknown, renames) if all(renames) else None
            listed = ", ".join(f"`{name}=`" for name in names)
            yield self.report(ctx, node, call=shown, version=mindspore_tensor.VERSION, fix=fix,
                              problem=f"passes {listed}, {'a keyword' if len(names) == 1 else 'keywords'} no "
                                      f"signature of `Tensor.{method}` takes",
                              consequence=f"the call {failure}{hint}")
        if too_many:
            yield self.report(ctx, node, call=shown, version=mindspore_tensor.VERSION,
                              problem=f"passes {len(node.args)} positional arguments; `Tensor.{method}` takes at "
                                      f"most {most_positional}",
                              consequence="the call raises TypeError")

    def _old_repeat(self, ctx, node: ast.Call):
        """`x.repeat(n, 0)`: the old NumPy-style `repeat(repeats, axis)` read by 2.10 as PyTorch's counts per
        dimension, the last of them 0 (or negative): no one repeats a dimension zero times on purpose."""
        func = node.func
        if not isinstance(func, ast.Attribute) or uses_mindtorch(ctx) \
                or receiver_kind(ctx, func.value, node) != "tensor":
            return
        row, column = ctx.end(func)  # the method's name ends the attribute, on one line
        fix = Fix("safe", "Use `repeat_interleave`",
                  (Edit("repeat_interleave", (row, column - len("repeat")), (row, column)),))
        axis = ctx.text(node.args[1])
        yield self.report(ctx, node, call=f"{shown_receiver(ctx, func.value)}.repeat(...)",
                          version=mindspore_tensor.VERSION, fix=fix,
                          problem=f"passes `({ctx.text(node.args[0])}, {axis})`, the old `repeat(repeats, axis)`; "
                                  f"`Tensor.repeat` is PyTorch's tile",
                          consequence=f"{axis} is read as the count of the last dimension, so the result is empty, "
                                      f"or a ValueError where the tensor has more than two dimensions; the old "
                                      f"meaning is `repeat_interleave({ctx.text(node.args[0])}, {axis})`")

    @staticmethod
    def _unknown_keywords(node: ast.Call, method: str, keywords, compiled: bool) -> List[ast.keyword]:
        if keywords is None:
            return []
        unknown = [k for k in node.keywords if k.arg not in keywords]
        if compiled:  # only what the graph compiler rejects as well
            if method not in mindspore_tensor.GRAPH_CHECKED:
                return []
            graph_keywords = mindspore_tensor.GRAPH_KEYWORDS.get(method, frozenset())
            unknown = [k for k in unknown if k.arg not in graph_keywords]
        return unknown

    @staticmethod
    def _rename(node: ast.Call, method: str, name: str, keywords) -> Optional[str]:
        """The one other name of the same parameter that the method takes, if not given already."""
        if name == "p" and method != "norm":
            return None
        taken = [other for other in _SAME_MEANING.get(name, ()) if other in keywords]
        if len(taken) == 1 and taken[0] not in {k.arg for k in node.keywords}:
            return taken[0]
        return None


def _axis_literal(expr: ast.expr) -> bool:
    """0 or a negative int literal: an axis, never a repeat count."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return isinstance(expr.operand, ast.Constant) and type(expr.operand.value) is int
    return isinstance(expr, ast.Constant) and type(expr.value) is int and expr.value == 0


def _rename_fix(ctx, keywords: List[ast.keyword], renames: List[Optional[str]]) -> Fix:
    edits = []
    for keyword, renamed in zip(keywords, renames):
        row, column = ctx.start(keyword)
        edits.append(Edit(renamed or "", (row, column), (row, column + len(keyword.arg or ""))))
    described = ", ".join(f"`{k.arg}` to `{r}`" for k, r in zip(keywords, renames))
    return Fix("safe", f"Rename {described}", tuple(edits))


def _takes(keywords) -> str:
    if not keywords:
        return "; it takes no keyword arguments"
    names = sorted(keywords)
    return "; it takes " + ", ".join(f"`{name}`" for name in names[:6]) + (", ..." if len(names) > 6 else "")

