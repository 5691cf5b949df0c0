from __future__ import annotations

import ast
import re
from typing import Optional

from ms_lint.analysis import mindspore_nn
from ms_lint.analysis.framework import CONV_LAYERS, PAD_MODE_POSITION
from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule
from ms_lint.rules._conv import mindspore_conv

KERNEL_POSITION, STRIDE_POSITION = 2, 3
TORCH_PACKAGES = ("torch", "torchvision", "torchaudio", "mindtorch")
# A module header that says the code comes from PyTorch: "Adapted from https://github.com/pytorch/vision/...",
# "ported from torchvision", "Modified from the PyTorch implementation".
_TORCH_ORIGIN = re.compile(
    r"\b(?:adapted|ported|migrated|converted|modified|copied|translated|borrowed)\s+from\b[^\n]*?"
    r"\b(?:py)?torch(?:vision|audio)?\b", re.IGNORECASE)
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t]+(?:torch|torchvision|torchaudio|mindtorch)\b",
                          re.MULTILINE)


class ConvImplicitSamePadding(Rule):
    """
    ## What it does
    In code that comes from PyTorch, finds MindSpore convolution layers (`nn.Conv1d/2d/3d` and their transposed
    forms) built without an explicit `pad_mode`. "Comes from PyTorch" means, precisely: the module imports
    `torch`, `torchvision`, `torchaudio` or `mindtorch` anywhere (a module-level, function-level or guarded
    import), or its header (the comments and docstring before the first statement that is not an import) says
    it was adapted, ported, migrated, converted, modified, copied, translated or borrowed from PyTorch,
    torchvision or torchaudio on one line.

    ## Why it matters in graph mode
    PyTorch's `nn.Conv2d` pads nothing by default; MindSpore's defaults to `pad_mode="same"`. A line carried over
    as `nn.Conv2d(3, 8, 3)` builds and runs in both, with silently different shapes. Measured on MindSpore 2.10:
    on an 8x8 input, `nn.Conv2d(3, 8, 3)` outputs 8x8 ("same"), `nn.Conv2d(3, 8, 3, pad_mode="valid")`
    6x6 (PyTorch's default result). Pretrained PyTorch weights then meet shifted feature maps, and layers that
    depend on sizes break far from the cause. Kernels of size 1 (`kernel_size=1`, `(1, 1)`) pad nothing in
    either mode (measured: identical outputs) and are not reported, nor is a kernel equal to its stride (patch
    embeddings: "same" pads nothing when the size is a multiple of the stride, measured; a transposed conv gives
    the same output at any size); neither are calls with `**kwargs`, a
    positional `pad_mode`, a nonzero literal `padding` (that raises at construction: MSL060), or a keyword the
    layer does not take (PyTorch's `groups=`, `bias=`: that raises too, MSL067).

    MindSpore-native code relies on "same" on purpose and is not reported: the rule looks only at modules that
    come from PyTorch as defined above. `mindspore.mint.nn` and MindTorch layers use PyTorch's default and are
    never reported.

    ## Example
    ```python
    import torch  # weights are converted from the PyTorch checkpoint
    from mindspore import nn

    stem = nn.Conv2d(3, 64, 3, stride=2)
    ```

    ## Use instead
    ```python
    import torch
    from mindspore import nn

    stem = nn.Conv2d(3, 64, 3, stride=2, pad_mode="valid")  # PyTorch's padding=0
    ```

    ## Fix
    Unsafe: `pad_mode="valid"` is added, which is PyTorch's default (`padding=0`). It changes the output shape
    of the layer: right when the PyTorch original had no padding, wrong when the code relied on "same".
    """

    code = "MSL061"
    name = "conv-implicit-same-padding"
    severity = "warning"
    scope = "module"
    message = "`{call}` without `pad_mode` in code {origin}: MindSpore pads \"same\" by default, PyTorch pads 0"
    fix_applicability = "unsafe"
    needles = ("Conv",)
    call_names = CONV_LAYERS

    def visit_call(self, node: ast.Call, ctx):
        if mindspore_conv(ctx, node) is None:
            return
        if len(node.args) > PAD_MODE_POSITION or any(k.arg == "pad_mode" for k in node.keywords):
            return
        kernel = node.args[KERNEL_POSITION] if len(node.args) > KERNEL_POSITION else next(
            (k.value for k in node.keywords if k.arg == "kernel_size"), None)
        stride = node.args[STRIDE_POSITION] if len(node.args) > STRIDE_POSITION else next(
            (k.value for k in node.keywords if k.arg == "stride"), None)
        if kernel is None or _is_unit_kernel(kernel) or _patch_embedding(kernel, stride):
            return
        padding = next((k.value for k in node.keywords if k.arg == "padding"), None)
        if padding is not None and _nonzero_literal(padding):
            return  # raises at construction: MSL060
        if _takes_unknown_keyword(ctx, node):
            return  # `groups=`, `bias=`: raises at construction (MSL067), no padding to get wrong
        origin = torch_origin(ctx)
        if origin is None:
            return
        edit = edits.append_argument(ctx, node, 'pad_mode="valid"')
        yield self.report(ctx, node, call=f"{ctx.text(node.func)}(...)", origin=origin,
                          fix=Fix("unsafe", 'Add `pad_mode="valid"` (PyTorch\'s padding=0)', (edit,)) if edit else None)


def _takes_unknown_keyword(ctx, node: ast.Call) -> bool:
    signature = mindspore_nn.SIGNATURES.get(ctx.names.qualname(node.func) or "")
    if signature is None or signature[4]:  # (unknown, or it takes **kwargs)
        return False
    accepted = {*signature[0], *signature[1]}
    return any(keyword.arg is not None and keyword.arg not in accepted for keyword in node.keywords)


def torch_origin(ctx) -> Optional[str]:
    """Why the module counts as ported from PyTorch ("that imports `torch`", "whose header says ..."), or None.
    Computed once per module."""
    return ctx.memo(torch_origin, lambda: _torch_origin(ctx))


def _torch_origin(ctx) -> Optional[str]:
    if _IMPORT_LINE.search(ctx.source.text):
        for node in ast.walk(ctx.tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                if name.partition(".")[0] in TORCH_PACKAGES:
                    return f"that imports `{name.partition('.')[0]}`"
    match = _TORCH_ORIGIN.search(_header(ctx))
    if match:
        return f"whose header says \"{' '.join(match.group(0).split())[:60]}\""
    return None


def _header(ctx) -> str:
    """The module's text before its first statement that is neither an import nor the docstring."""
    body = ctx.tree.body
    for index, stmt in enumerate(body):
        docstring = index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
            and isinstance(stmt.value.value, str)
        if not (docstring or isinstance(stmt, (ast.Import, ast.ImportFrom))):
            return "\n".join(ctx.source.lines[:stmt.lineno - 1])
    return ctx.source.text


def _is_unit_kernel(kernel: ast.expr) -> bool:
    items = kernel.elts if isinstance(kernel, (ast.Tuple, ast.List)) else [kernel]
    return all(isinstance(item, ast.Constant) and item.value == 1 and type(item.value) is int for item in items)


def _patch_embedding(kernel: ast.expr, stride: Optional[ast.expr]) -> bool:
    """`kernel_size=16, stride=16`: "same" pads nothing when the input size is a multiple of the stride, as a patch
    embedding's image size is a multiple of its patch size; a transposed conv with kernel == stride gives the same
    output at every size (both measured). `kernel_size=patch_size, stride=patch_size` is the same value too."""
    if stride is None:
        return False
    if _literal_ints(kernel) is not None:
        return _literal_ints(kernel) == _literal_ints(stride)
    return ast.dump(kernel) == ast.dump(stride)


def _literal_ints(expr: ast.expr) -> Optional[tuple]:
    items = expr.elts if isinstance(expr, (ast.Tuple, ast.List)) else [expr]
    values = tuple(item.value for item in items if isinstance(item, ast.Constant) and type(item.value) is int)
    return values if len(values) == len(items) else None


def _nonzero_literal(expr: ast.expr) -> bool:
    items = expr.elts if isinstance(expr, (ast.Tuple, ast.List)) else [expr]
    return any(isinstance(item, ast.Constant) and type(item.value) is int and item.value for item in items)
