from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule


class DropoutPositionalKeepProb(Rule):
    """
    ## What it does
    Finds MindSpore's `nn.Dropout` built with a positional argument (`nn.Dropout(0.1)`) or with the deprecated
    `keep_prob=` keyword. An error where the argument reads as PyTorch's drop rate (a literal under 0.5, or a
    name that says drop or rate: `nn.Dropout(config.hidden_dropout)`); a warning, for the deprecation only, where
    it reads as the probability to keep (`keep_prob=0.9`, `nn.Dropout(0.9)`, `nn.Dropout(1 - rate)`): that code
    works as intended on 2.10. A warning too for a name the function assigns once, to 0.5
    (`dropout_ratio = 0.5`): keeping or zeroing half is the same. And a warning, without a fix, for a literal
    `p=` above 0.5 (`nn.Dropout(p=0.9)` zeroes 90 %, measured): the keep probability of older MindSpore code
    carried into `p` (a community SegFormer head ported with `p=0.9` for PyTorch's dropout of 0.1).

    ## Why it matters in graph mode
    In MindSpore 2.10 the first parameter of `nn.Dropout` is still `keep_prob`, the probability of **keeping** an
    element; PyTorch's first parameter is `p`, the probability of **zeroing** it. A line carried over from PyTorch
    as `nn.Dropout(0.1)` silently does the opposite. Measured on MindSpore 2.10 (training mode, 10^6 elements):
    `nn.Dropout(0.1)` zeroes 90 % of the elements and scales the rest by 10, `nn.Dropout(p=0.1)` zeroes 10 %.
    Both run without error; the positional and `keep_prob=` forms only log
    `For Dropout, this parameter `keep_prob` will be deprecated, please use `p` instead.`
    (and `keep_prob` must be a float: `nn.Dropout(1)` raises `TypeError`).

    `nn.Dropout(p=...)`, `nn.Dropout()`, `ops.Dropout(keep_prob=...)` (a primitive whose parameter is not
    deprecated), `mindspore.mint.nn.Dropout` and MindTorch's `nn.Dropout` (both take `p` first) are not reported,
    nor is compatibility code in a branch of an `if` that tests the MindSpore version
    (`if is_version_ge(ms.__version__, "1.11.0"): ... else: nn.Dropout(keep_prob=...)`).

    ## Example
    ```python
    from mindspore import nn

    drop = nn.Dropout(0.9)
    ```

    ## Use instead
    ```python
    from mindspore import nn

    drop = nn.Dropout(p=0.1)
    ```

    ## Fix
    Safe: a number literal becomes `p=1 - value`, computed and printed as written (`0.9` -> `p=0.1`), and
    `keep_prob=1 - x` becomes `p=x`: the layer keeps exactly the behaviour it has now. That is what MindSpore
    runs today, but maybe not what the author meant: a `nn.Dropout(0.1)` ported from PyTorch becomes
    `nn.Dropout(p=0.9)`, which makes the 90 % visible; write `p=0.1` if PyTorch's meaning was intended. Other
    expressions have no fix.
    """

    code = "MSL062"
    name = "dropout-positional-keep-prob"
    severity = "error"
    scope = "module"
    message = "`{call}` {problem}"
    fix_applicability = "safe"
    needles = ("Dropout",)
    call_names = frozenset({"Dropout"})

    def visit_call(self, node: ast.Call, ctx):
        if ctx.names.last_name(node.func) not in ("Dropout", None) or not (node.args or node.keywords):
            return
        if framework.mindspore_layer(ctx.names.qualname(node.func)) != "Dropout" or ctx.graph.version_guarded(node):
            return
        keyword = next((k for k in node.keywords if k.arg == "keep_prob"), None)
        value = node.args[0] if node.args else (keyword.value if keyword else None)
        if value is None:
            yield from self._high_drop_rate(ctx, node)
            return
        if isinstance(value, ast.Starred):
            return
        kept = _number(value)
        call = f"{ctx.text(node.func)}({ctx.text(value) if node.args else 'keep_prob=' + ctx.text(value)})"
        drop_rate = bool(node.args) and _reads_as_drop_rate(ctx.text(value), kept)
        if drop_rate and kept is None and _local_literal(ctx, node, value) == 0.5:
            drop_rate = False  # `dropout_ratio = 0.5` just above: keeping or zeroing half is the same
        if drop_rate:
            meaning = "the first argument is `keep_prob` in MindSpore, not PyTorch's `p`"
        else:
            meaning = "works as written, but `keep_prob` is deprecated in MindSpore 2.10: use `p=`"
        if kept is not None and 0 < kept <= 1:
            problem = f"keeps {kept * 100:g} % and zeroes {(1 - kept) * 100:g} % of the elements: {meaning}"
        elif drop_rate:
            problem = f"sets the probability to keep an element: {meaning}; use `p=` (probability to zero)"
        else:
            problem = f"sets the probability to keep an element: {meaning} (probability to zero)"
        yield self.report(ctx, node, call=call, problem=problem, fix=self._fix(ctx, node, value, kept),
                          severity=None if drop_rate else "warning")

    def _high_drop_rate(self, ctx, node: ast.Call):
        """`nn.Dropout(p=0.8)`: a literal `p` above 0.5 zeroes most elements, what a keep probability carried
        over into `p` does (SegFormer's head ported with `p=0.9` for a dropout of 0.1); a warning, no fix."""
        value = next((k.value for k in node.keywords if k.arg == "p"), None)
        rate = _number(value) if value is not None else None
        if value is not None and rate is not None and 0.5 < rate < 1:
            text = ctx.text(value)
            yield self.report(ctx, node, call=f"{ctx.text(node.func)}(p={text})",
                              problem=f"zeroes {rate * 100:g} % of the elements: `p` is the probability to zero; "
                                      f"if {text} is the probability to keep, use `p={edits.complement(text)}`",
                              severity="warning")

    @staticmethod
    def _fix(ctx, node: ast.Call, value: ast.expr, kept: Optional[float]) -> Optional[Fix]:
        if any(k.arg == "p" or k.arg is None for k in node.keywords) or len(node.args) > 1:
            return None
        if kept is not None:
            if not 0 < kept <= 1:
                return None  # MindSpore rejects it either way
            p = edits.complement(ctx.text(value))
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub) and _number(value.left) == 1:
            p = ctx.text(value.right)  # keep_prob=1 - rate -> p=rate
            if isinstance(value.right, ast.NamedExpr):
                p = f"({p})"
        else:
            return None
        target = value if node.args else next(k for k in node.keywords if k.arg == "keep_prob")
        return Fix("safe", f"Use `p={p}`", (ctx.replace(target, f"p={p}"),))


def _reads_as_drop_rate(text: str, kept: Optional[float]) -> bool:
    """Does a positional argument read as PyTorch's probability to zero? A literal under 0.5 (keeping fewer than
    half the elements is almost never meant), or a name that says drop or rate without saying keep
    (`config.hidden_dropout`, `drop_rate`, `p`). `1 - rate`, `0.9` and `keep_prob` read as what MindSpore takes."""
    if kept is not None:
        return kept < 0.5
    words = text.lower()
    if "keep" in words or text.replace(" ", "").startswith(("1-", "1.0-")):
        return False
    last = words.rpartition(".")[2]
    return "drop" in last or "rate" in last or last == "p"


def _local_literal(ctx, call: ast.Call, value: ast.expr) -> Optional[float]:
    """The number a local name holds when the function around `call` assigns it exactly once, a literal."""
    function = enclosing_function(call)
    if not isinstance(value, ast.Name) or function is None or isinstance(function, ast.Lambda):
        return None
    assigned = [n for n in ast.walk(function) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id == value.id
                        for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    if len(assigned) != 1 or not isinstance(assigned[0], ast.Assign):
        return None
    return _number(assigned[0].value)


def _number(expr: ast.expr) -> Optional[float]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    return None
