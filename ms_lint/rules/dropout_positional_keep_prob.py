from __future__ import annotations

import ast
from typing import Dict, List, Optional

from ms_lint.analysis import framework
from ms_lint.analysis.bindings import assignments_of, binders
from ms_lint.analysis.walk import enclosing_function, parameter_defaults, parameter_names, parent_of, self_parameter
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule


class DropoutPositionalKeepProb(Rule):
    """
    ## What it does
    Finds MindSpore's `nn.Dropout` built with a positional argument (`nn.Dropout(0.1)`) or with the deprecated
    `keep_prob=` keyword. An error where the argument is PyTorch's drop rate for certain: a literal under 0.5,
    or a name whose every value the module shows is under 0.5 (a local's assignments, a parameter's default, the
    keywords of that name the module passes, a module constant, what `self.<name>` is assigned). A warning where
    only the name says drop or rate (`nn.Dropout(config.hidden_dropout)`): MindSpore 1.x code, its own model zoo
    among it, passes keep probabilities under such names (`final_drop=0.8`, `dropout_ratio = 1.0` in a test
    phase). A warning, for the deprecation only, where it reads as the probability to keep (`keep_prob=0.9`,
    `nn.Dropout(0.9)`, `nn.Dropout(1 - rate)`, a value above 0.5 reaching the name): that code works as intended
    on 2.10, but for a positional literal the message also names `p=<value>`, since a port of PyTorch's
    `nn.Dropout(0.7)` meant to zero 70 % (WS-VAD, issue 19's third sample); and where every value is 0.5
    (`dropout_ratio = 0.5`): keeping or zeroing half is the same. And a warning, without a fix, for a literal
    `p=` above 0.5 (`nn.Dropout(p=0.9)` zeroes 90 %, measured): the keep probability of older MindSpore code
    carried into `p` (a community SegFormer head ported with `p=0.9` for PyTorch's dropout of 0.1). An error
    where the value is one 2.10 refuses to build: `nn.Dropout(0.)` (ValueError: `keep_prob` must be in (0, 1]),
    `nn.Dropout(1)` (TypeError: an int), and a name whose default or assignment is zero, PyTorch's "no dropout"
    (`def __init__(self, drop=0.)` then `nn.Dropout(drop)`, CIGF's block in issue 19's sixteenth sample), unless a
    test of the name guards the call (`if self.final_drop > 0:`) or the module's calls pass the name values. Not
    reported where the project replaces `nn.Dropout` with its own class when imported (MindNLP 0.3's
    `nn.Dropout = CustomDropout`, which takes PyTorch's `p`).

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
        qualname = ctx.names.qualname(node.func)
        if framework.mindspore_layer(qualname) != "Dropout" or ctx.graph.version_guarded(node) \
                or qualname in ctx.compile_context.replaced_api:  # (MindNLP's `nn.Dropout = CustomDropout`)
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
        rejected = self._rejected_value(ctx, node, value, kept)
        if rejected is not None:
            yield self.report(ctx, node, call=call, problem=rejected)
            return
        drop_rate = bool(node.args) and _reads_as_drop_rate(value, ctx.text(value), kept)
        known: List[float] = []
        if node.args and kept is None and not _complement(value):
            known = [v for v in _values_reaching(ctx, value, 0) if 0 < v <= 1]
        if known:  # what the code assigns or passes says which probability the author meant
            drop_rate = max(known) < 0.5
        # a name alone is no proof: MindSpore 1.x code (its own model zoo too) passes keep probabilities under
        # names like `dropout_rate` or `final_drop` (`0.8`), so a name that only reads as a drop rate is a warning
        certain = drop_rate and (kept is not None or bool(known))
        if drop_rate:
            meaning = "the first argument is `keep_prob` in MindSpore, not PyTorch's `p`"
        elif node.args and kept is not None and kept == 0.5:  # either reading zeroes half
            meaning = "the first argument is `keep_prob`, deprecated in MindSpore 2.10: write `p=0.5`"
        elif node.args and kept is not None:  # `nn.Dropout(0.7)`: a keep probability, or a port's drop rate
            meaning = (f"the first argument is `keep_prob`, deprecated in MindSpore 2.10; if {ctx.text(value)} was "
                       f"meant as PyTorch's probability to zero, write `p={ctx.text(value)}`, else "
                       f"`p={edits.complement(ctx.text(value))}`")
        else:
            meaning = "works as written, but `keep_prob` is deprecated in MindSpore 2.10: use `p=`"
        if kept is not None and 0 < kept <= 1:
            problem = f"keeps {kept * 100:g} % and zeroes {(1 - kept) * 100:g} % of the elements: {meaning}"
        elif certain:
            shown = ", ".join(f"{v:g}" for v in sorted(set(known)))
            problem = (f"keeps a share of {shown} of the elements (`{ctx.text(value)}` is {shown} in this module): "
                       f"{meaning}; use `p=` (probability to zero)")
        elif drop_rate:
            problem = (f"sets the probability to keep an element, and `{ctx.text(value)}` reads as PyTorch's "
                       f"probability to zero: if it is one, use `p=` (MindSpore 2.10's first argument is `keep_prob`)")
        else:
            problem = f"sets the probability to keep an element: {meaning} (probability to zero)"
        yield self.report(ctx, node, call=call, problem=problem, fix=self._fix(ctx, node, value, kept),
                          severity=None if certain else "warning")

    @staticmethod
    def _rejected_value(ctx, node: ast.Call, value: ast.expr, kept: Optional[float]) -> Optional[str]:
        """The problem of a keep probability 2.10 refuses to build: a literal outside (0, 1] (`nn.Dropout(0.)`:
        ValueError; an int: TypeError), or a name whose default or assignment is zero, PyTorch's "no dropout"
        (CIGF's `def __init__(self, drop=0.)` then `nn.Dropout(drop)`), where no test of the name guards the call
        (ghostnet's `if self.final_drop > 0:`)."""
        literal = value if kept is not None else None
        named = value.id if isinstance(value, ast.Name) else getattr(value, "attr", None)
        if literal is None and named is not None and not _tested_around(node, named) \
                and not any(_keyword_literals(ctx).get(named, ())):  # callers pass it: the values say which
            literal = next(iter(_zeros_reaching(ctx, value)), None)
        if literal is None:
            return None
        number = _number(literal)
        if isinstance(literal, ast.Constant) and isinstance(literal.value, int):
            failure = "TypeError (`keep_prob` must be a float)"
        elif number is not None and not 0 < number <= 1:
            failure = "ValueError (`keep_prob` must be in (0, 1])"
        else:
            return None
        if literal is value:
            return (f"raises {failure} when the layer is built (the first argument is the probability to keep); "
                    f"PyTorch's `p` is `p=` in MindSpore")
        return (f"raises {failure} when the layer is built with `{ctx.text(value)}` = {ctx.text(literal)} (line "
                f"{literal.lineno}): the first argument is the probability to keep, and {ctx.text(literal)} is "
                f"PyTorch's `p` for no dropout; use `p={ctx.text(value)}`")

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


def _reads_as_drop_rate(value: ast.expr, text: str, kept: Optional[float]) -> bool:
    """Does a positional argument read as PyTorch's probability to zero? A literal under 0.5 (keeping fewer than
    half the elements is almost never meant), or a name that says drop or rate without saying keep
    (`config.hidden_dropout`, `drop_rate`, `p`). `1 - rate`, `0.9` and `keep_prob` read as what MindSpore takes."""
    if kept is not None:
        return kept < 0.5
    words = text.lower()
    if "keep" in words or _complement(value):
        return False
    last = words.rpartition(".")[2]
    return "drop" in last or "rate" in last or last == "p"


def _values_reaching(ctx, value: ast.expr, depth: int) -> List[float]:
    """The literal numbers that can reach `value`: a local's assignments, a parameter's default and the keywords
    of that name the module passes to calls (`partial(ghostnet, final_drop=0.8)`), and what `self.<name>` is
    assigned in the class. MindSpore 1.x code names keep probabilities `dropout`, `dropout_ratio` or `final_drop`
    (`dropout_ratio = 1.0` in a test phase, `final_drop=0.8`): the values tell, where the name cannot."""
    number = _number(value)
    if number is not None:
        return [number]
    if depth > 3:
        return []
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "float" and value.args:
        return _values_reaching(ctx, value.args[0], depth + 1)
    if _complement(value) and isinstance(value, ast.BinOp):
        # `dropout_rate = 1 - dropout_rate`: the name holds a keep probability from here on
        return [1 - number for number in _values_reaching(ctx, value.right, depth + 1)] or [1.0]
    function = enclosing_function(value)
    if function is None or isinstance(function, ast.Lambda):
        return []
    found = [number for source in _direct_sources(ctx, value, function)
             for number in _values_reaching(ctx, source, depth + 1)]
    if isinstance(value, ast.Name):
        found += _keyword_literals(ctx).get(value.id, [])
    return found


def _direct_sources(ctx, value: ast.expr, function) -> List[ast.expr]:
    """What a name or `self.<name>` is given directly: its assignments (in the function, else at module level),
    a parameter's default, or the values the class assigns to `self.<name>`."""
    sources: List[ast.expr] = []
    if isinstance(value, ast.Name):
        bound_here = binders(ctx.walk, function, value.id) or value.id in parameter_names(function)
        for binding in binders(ctx.walk, function if bound_here else None, value.id):  # else a module constant
            sources += [assigned for _, _, assigned in assignments_of(binding) if isinstance(assigned, ast.expr)]
        default = parameter_defaults(function.args).get(value.id)
        if default is not None:
            sources.append(default)
    elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) \
            and value.value.id == self_parameter(function):
        cell = ctx.graph.cell_of(function)
        for assign in ctx.walk.of_kind(cell.node, ast.Assign) if cell is not None else ():
            if any(isinstance(t, ast.Attribute) and t.attr == value.attr and isinstance(t.value, ast.Name)
                   and t.value.id == value.value.id for t in assign.targets):
                sources.append(assign.value)
    return sources


def _zeros_reaching(ctx, value: ast.expr) -> List[ast.expr]:
    """The literal zeros a name or `self.<name>` can hold: its default, its assignments (in the function, the
    module or the class), not what callers pass."""
    function = enclosing_function(value)
    if function is None or isinstance(function, ast.Lambda):
        return []
    sources = _direct_sources(ctx, value, function)
    if isinstance(value, ast.Attribute):  # `self.drop = drop` then `nn.Dropout(self.drop)`: the parameter's default
        sources = [default for source in sources for default in
                   ([source] if not isinstance(source, ast.Name) else _zeros_reaching(ctx, source) or [source])]
    return [source for source in sources if _number(source) == 0]


def _tested_around(node: ast.AST, name: str) -> bool:
    """Is `node` under an `if` (statement or expression) whose test reads `name` (`if drop > 0:`,
    `nn.Dropout(drop) if drop else nn.Identity()`)? Then a zero never reaches the call."""
    child, parent = node, parent_of(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and any(
                getattr(n, "id", None) == name or getattr(n, "attr", None) == name for n in ast.walk(parent.test)):
            return True
        child, parent = parent, parent_of(parent)
    return False


def _keyword_literals(ctx) -> Dict[str, List[float]]:
    """{keyword: the numbers the module passes under that name in calls}, once per module."""
    def collect() -> Dict[str, List[float]]:
        found: Dict[str, List[float]] = {}
        for call in ctx.walk.of_kind(ctx.tree, ast.Call):
            for keyword in call.keywords:
                number = _number(keyword.value) if keyword.arg else None
                if number is not None:
                    found.setdefault(keyword.arg, []).append(number)
        return found
    return ctx.memo(_keyword_literals, collect)


def _complement(value: ast.expr) -> bool:
    """`1 - rate`, `1. - rate`, `float(1 - rate)`: a keep probability computed from a drop rate."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "float" \
            and len(value.args) == 1:
        value = value.args[0]
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub) and _number(value.left) == 1


def _number(expr: ast.expr) -> Optional[float]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    return None
