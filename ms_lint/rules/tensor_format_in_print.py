from __future__ import annotations

import ast
import string
from typing import Any, List, Optional

from ms_lint.rule import Fix, Rule

# What each formatting does with a tensor under STRICT (measured on CPU, MindSpore 2.10).
_STRICT = {
    "f-string": "prints garbage (`Tensor(shape=[1], dtype=Int64, value=[...])`) instead of the value",
    "str.format": "fails to compile (`RuntimeError: Unsupported op [Format] on CPU`)",
    "%-format": "fails to compile (`ValueError: ... the inputs should be constant, but found variable`)",
}


class TensorFormatInPrint(Rule):
    """
    ## What it does
    Finds tensors formatted into a string inside `print(...)` in graph-compiled code: f-strings
    (`print(f"loss={loss}")`), `str.format` and `%` formatting of tensor data.

    ## Why it matters in graph mode
    The graph `print` prints tensors itself, but building a string from a tensor is Python work. Measured on
    MindSpore 2.10 (CPU): at the default LAX level all three forms are formatted on the host through JIT
    Fallback and print the value, as in PyNative. Under STRICT an f-string compiles but **prints garbage**: a
    one-element Int64 tensor holding whatever was in memory (`Tensor(shape=[1], dtype=Int64, value=[0])`, or
    `value=[8390891584407297887]`), with a WARNING. `str.format` fails to compile with
    `RuntimeError: Unsupported op [Format] on CPU`, and `%` with `ValueError: When handling script '"x=%s" % x
    in graph mode', the inputs should be constant, but found variable 'x' to be nonconstant.` The same holds for
    host values taken from a tensor (`f"{x.sum().item()}"`).

    `print("x:", x)` is supported at both levels and is not reported, nor is formatting shapes, Python numbers
    or strings (`f"shape={x.shape}"`).

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            loss = self.loss_fn(x)
            print(f"loss {loss} at scale {self.scale}")
            return loss
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            loss = self.loss_fn(x)
            print("loss", loss, "at scale", self.scale)
            return loss
    ```

    ## Fix
    Unsafe: an f-string, or a `str.format` call on a literal with plain `{}`/`{0}`/`{name}` fields, passed
    directly to `print` becomes separate `print` arguments (one space next to a value is dropped). Only the
    layout of the printed text changes (graph `print` puts each argument on its own line), but that is output
    a log parser may read: a fix that changes what is written is not safe. No fix for
    conversions or format specs (`{x!r}`, `{x:.3f}`) or for `%`.
    """

    code = "MSL024"
    name = "tensor-format-in-print"
    severity = "level"
    compiled_only = True
    scope = "graph"
    message = "{kind} of tensor data in `print` in graph code reached from `{entry}`: {consequence}"
    fix_applicability = "unsafe"
    needles = ("print",)
    call_names = frozenset({"print"})

    def visit_call(self, node: ast.Call, ctx):
        if ctx.names.qualname(node.func) != "builtins.print":
            return
        tensors = ctx.tensors(node)
        for argument in node.args:
            for formatted in ast.walk(argument):
                kind, values = _formatting(formatted)
                if kind and any(tensors.derives(v) for v in values):
                    if ctx.graph.level_of(node) == "strict":
                        consequence = _STRICT[kind] + " at the STRICT syntax level"
                    else:
                        consequence = (f"formatted on the host through JIT Fallback at the default LAX level; "
                                       f"under STRICT it {_STRICT[kind]}")
                    fix = _fix(ctx, formatted) if formatted is argument else None
                    yield self.report(ctx, formatted, kind=kind, consequence=consequence, fix=fix)


def _formatting(node: ast.AST):
    """(kind, formatted values) when `node` formats values into a string, else (None, ())."""
    if isinstance(node, ast.JoinedStr):
        return "f-string", [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
        return "str.format", [*node.args, *(k.value for k in node.keywords)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
            and isinstance(node.left.value, str):
        return "%-format", node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
    return None, ()


def _fix(ctx, node: ast.expr) -> Optional[Fix]:
    parts = _parts(node)
    if parts is None or "\n" in ctx.text(node):
        return None
    arguments: List[str] = []
    for index, part in enumerate(parts):
        if isinstance(part, str):
            part = part.removeprefix(" ") if index > 0 else part  # print puts a separator there
            part = part.removesuffix(" ") if index < len(parts) - 1 else part
            if part:
                plain = part.isprintable() and '"' not in part and "\\" not in part
                arguments.append(f'"{part}"' if plain else repr(part))
        else:
            arguments.append(ctx.text(part))
    return Fix("unsafe", "Pass the values to `print` as separate arguments",
               (ctx.replace(node, ", ".join(arguments) or '""'),))


def _parts(node: Any):
    """The literal text and value expressions, in order; None when a conversion or format spec is used."""
    if isinstance(node, ast.JoinedStr):
        if any(isinstance(v, ast.FormattedValue) and (v.conversion != -1 or v.format_spec) for v in node.values):
            return None
        return [getattr(v, "value", None) for v in node.values]  # the literal text or the formatted expression
    if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args) \
            and all(k.arg for k in node.keywords):
        keywords = {k.arg: k.value for k in node.keywords}
        parts, automatic = [], 0
        try:
            template: Any = node.func  # `"...".format(...)`: the caller checked the form
            fields = list(string.Formatter().parse(template.value.value))
        except ValueError:
            return None
        for literal, field, spec, conversion in fields:
            parts.append(literal)
            if field is None:
                continue
            if spec or conversion:
                return None
            if field == "":
                field, automatic = str(automatic), automatic + 1
            value = node.args[int(field)] if field.isdigit() and int(field) < len(node.args) \
                else keywords.get(field)
            if value is None:
                return None  # an attribute or index field (`{0.shape}`, `{d[k]}`)
            parts.append(value)
        return parts
    return None
