"""Helpers rules use to build fixes in the file's own style."""
from __future__ import annotations

import ast
from decimal import Decimal, InvalidOperation
from typing import Any, List, Optional, Tuple

from ms_lint.analysis.graph import GraphScope
from ms_lint.rule import Edit, Import


def reference(graph: GraphScope, qualname: str) -> Tuple[str, Tuple[Import, ...]]:
    """How to spell `qualname` (e.g. "mindspore.ops") in this module, and the import needed if it is not bound.

    Reuses an existing alias (`ops`, `P`...), or an imported parent (`ms.ops`); else asks for
    `from mindspore import ops`.
    """
    names = graph.imports.names
    for alias, target in names.items():
        if target == qualname:
            return alias, ()
    parent, _, last = qualname.rpartition(".")
    while parent:
        for alias, target in names.items():
            if target == parent:
                return f"{alias}.{qualname[len(parent) + 1:]}", ()
        parent = parent.rpartition(".")[0]
    if last in names or last in graph.summary.functions or last in graph.summary.classes:
        return qualname, (Import(qualname.partition(".")[0]),)
    module = qualname.rpartition(".")[0]
    return last, (Import(module, last),)


def append_argument(ctx, call: ast.Call, argument: str) -> Optional[Edit]:
    """An edit adding `argument` (`pad_mode="pad"`) after the last argument of `call`; None for a call without
    arguments. Multi-line calls and trailing commas keep their layout: the text goes right after the last value."""
    arguments: List[Any] = [*call.args, *call.keywords]
    last = max(arguments, key=lambda node: (node.end_lineno, node.end_col_offset), default=None)
    if last is None:
        return None
    row, column = ctx.end(last)
    return ctx.insert(row, column, f", {argument}")


def complement(literal: str) -> Optional[str]:
    """`1 - x` for the source text of a number literal, as a person writes it: "0.9" -> "0.1" (float arithmetic
    would give 0.09999999999999998), "0.97" -> "0.03", "1" -> "0.0". None if the text is not a number."""
    try:
        value = Decimal(literal.replace("_", ""))
    except InvalidOperation:
        return None
    return repr(float(Decimal(1) - value))


def float_fill(ctx, value: ast.expr) -> str:
    """The text of `value` as a float: `Tensor.fill_diagonal` takes a float fill only (2.10: `TypeError: For
    'FillDiagonal', the type of 'fill_value' should be 'float', but got type 'int'`, measured): `0` -> `0.0`,
    `n` -> `float(n)`."""
    if isinstance(value, ast.Constant) and type(value.value) is float:
        return ctx.text(value)
    if isinstance(value, ast.Constant) and type(value.value) is int:
        return repr(float(value.value))
    return f"float({ctx.text(value)})"


def line_width(ctx) -> int:
    """How long a line a fix may write in this module: the project formatter's line length when its
    pyproject.toml sets one, else the longest code line of the file (at least 79, at most 120)."""
    def measure() -> int:
        from ms_lint.config import formatter_line_length  # the catalog behind config imports every rule

        configured = formatter_line_length(ctx.settings.config_path)
        if configured:
            return configured
        longest = max((len(line) for line in ctx.source.lines if not line.lstrip().startswith("#")), default=0)
        return min(max(longest, 79), 120)

    return ctx.memo(line_width, measure)


def wrapped_call(ctx, call: ast.Call, head: str, indentation: str, width: int) -> Optional[str]:
    """`head` + the text of a one-line `call`, broken after its opening parenthesis when the line would be longer
    than `width` (the arguments on one continuation line, else one per line); None when it fits or when the call
    spans lines already (its own layout is kept)."""
    text = ctx.text(call)
    if "\n" in text or len(head) + len(text) <= width:
        return None
    arguments = [ctx.text(a) for a in call.args] + [
        f"{k.arg}={ctx.text(k.value)}" if k.arg else f"**{ctx.text(k.value)}" for k in call.keywords]
    if not arguments:
        return None
    inner = indentation + "    "
    one_line = f"{head}{ctx.text(call.func)}(\n{inner}{', '.join(arguments)})"
    if len(one_line.rsplit("\n", 1)[1]) <= width:
        return one_line
    return f"{head}{ctx.text(call.func)}(\n" + ",\n".join(inner + a for a in arguments) + ")"
