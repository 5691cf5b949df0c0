from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis import framework, subclasses
from ms_lint.analysis.walk import self_parameter
from ms_lint.rule import Fix, Rule

# External bases known not to define `construct`: any other MindSpore layer (nn.Dense...) or an unresolvable
# base may define it.
_KNOWN_BASES = framework.CELL_BASES | {"builtins.object", "abc.ABC"}


class ForwardWithoutConstruct(Rule):
    """
    ## What it does
    Finds an `nn.Cell` subclass that defines `forward` (the PyTorch name) while neither the class nor any of its
    base classes defines `construct`. MindTorch `nn.Module` subclasses are not reported: their `construct`
    calls `forward`.

    The rule stays silent when a base class cannot be resolved or is a MindSpore layer other than `nn.Cell`
    (it may define `construct`), when the class defines `__call__` or `__getattr__`, and when a subclass defines
    `construct` (an abstract base), in the same module or, for the CLI and pylint, in another linted file
    (minddet's `BaseDetector`, issue 19's fourteenth sample).

    ## Why it matters in graph mode
    `Cell.__call__` runs `construct`; MindSpore never calls `forward`. Measured on MindSpore 2.10 (CPU), at both
    syntax levels and in PyNative, the first call fails:
    `AttributeError: For 'Cell', the method 'construct' is not defined.` A `construct` that delegates to
    `forward` compiles and runs in GRAPH_MODE (LAX and STRICT) and PyNative, with positional and keyword
    arguments; so do `construct = forward` in the class body and `self.construct = self.forward`.

    ## Example
    ```python
    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(4, 4)

        def forward(self, x):
            return self.dense(x)
    ```

    ## Use instead
    ```python
    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(4, 4)

        def construct(self, *args, **kwargs):
            return self.forward(*args, **kwargs)

        def forward(self, x):
            return self.dense(x)
    ```

    ## Fix
    Safe: a `construct` delegating to `forward` is inserted just before `forward`. Every call of the Cell then
    runs `forward` with the same arguments, and code that calls `forward` directly keeps working. (Renaming
    `forward` to `construct` would also work, but breaks callers of `forward`.) A subclass whose base is
    reported too gets no fix of its own: the base's new `construct` serves it.
    """

    code = "MSL033"
    name = "forward-without-construct"
    severity = "error"
    scope = "cell"
    message = ("`{cls}` is an nn.Cell with `forward` but no `construct`: calling it fails with "
               "`AttributeError: For 'Cell', the method 'construct' is not defined.`")
    fix_applicability = "safe"
    needles = ("forward",)

    def visit_class_def(self, node: ast.ClassDef, ctx):
        cell = ctx.graph.cells.get(node)
        if cell is None or cell.kind != "cell" or cell.assumed:
            return
        forward = next((s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and s.name == "forward"), None)
        if forward is None or not ctx.graph.external_bases(cell.summary) <= _KNOWN_BASES:
            return
        mro = list(ctx.graph.mro(cell.summary))
        for summary in mro:
            members = summary.methods | summary.attributes | summary.properties
            if _may_create(summary, _CALL_MEMBERS) or _CALL_MEMBERS & members:
                return
        if self._subclass_defines_construct(ctx, cell):
            return
        # a base with `forward` is reported too, and the construct its fix adds serves this class as well
        base_is_reported = any("forward" in summary.methods for summary in mro[1:])
        yield self.report(ctx, node, cls=node.name, fix=None if base_is_reported else self._fix(ctx, forward))

    @staticmethod
    def _subclass_defines_construct(ctx, cell) -> bool:
        for other in ctx.graph.cells.values():
            mro = list(ctx.graph.mro(other.summary))
            if other is not cell and any(s.qualname == cell.summary.qualname for s in mro) and any(
                    "construct" in s.methods | s.attributes for s in mro):
                return True
        # in another module of the run (minddet's `BaseDetector`, whose detectors define `construct` elsewhere)
        defined = subclasses.defined_by_subclasses(ctx.graph.index, cell.summary.qualname)
        return defined is not None and "construct" in defined

    @staticmethod
    def _fix(ctx, forward) -> Optional[Fix]:
        if isinstance(forward, ast.AsyncFunctionDef) or not forward.args.args or any(
                getattr(d, "id", None) in ("staticmethod", "classmethod") for d in forward.decorator_list):
            return None
        self_name = self_parameter(forward)
        indent = ctx.indentation(forward)
        first = forward.body[0]
        body_indent = ctx.indentation(first) if first.lineno > forward.lineno else indent + "    "
        row = forward.decorator_list[0].lineno if forward.decorator_list else forward.lineno
        text = (f"{indent}def construct({self_name}, *args, **kwargs):\n"
                f"{body_indent}return {self_name}.forward(*args, **kwargs)\n\n")
        return Fix("safe", "Add a `construct` that calls `forward`", (ctx.insert(row, 0, text),))


_CALL_MEMBERS = frozenset({"construct", "__call__", "__getattr__"})


def _may_create(summary, names) -> bool:
    """Can the class's dynamically named attributes be one of `names`? Not when every such name starts with a
    literal none of them starts with (`insert_child_to_cell("layer_%d" % i, ...)`)."""
    if not summary.dynamic:
        return False
    prefixes = summary.dynamic_prefixes
    return prefixes is None or any(name.startswith(prefix) for prefix in prefixes for name in names)
