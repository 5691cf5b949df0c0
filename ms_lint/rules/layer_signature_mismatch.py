from __future__ import annotations

import ast
from typing import Any, Iterator, List, Optional, Tuple

from ms_lint.analysis import framework, mindspore_nn
from ms_lint.analysis.walk import enclosing_function, spelled_name
from ms_lint.rule import Diagnostic, Edit, Fix, Rule
from ms_lint.rules._mindspore_values import bound_values

_PACKAGES = ("mindspore.nn", "mindspore.mint.nn", "mindspore.ops", "mindspore.ops.operations", "mindspore")
# PyTorch keyword -> MindSpore's name for the same parameter, renamed only where the class takes the new name and
# not the old one (a MindSpore class with `bias`, `mint.nn.Linear`, keeps it).
_RENAMES = {"bias": "has_bias", "groups": "group", "eps": "epsilon", "dim": "axis", "in_features": "in_channels",
            "out_features": "out_channels", "num_embeddings": "vocab_size", "embedding_dim": "embedding_size"}
# PyTorch containers -> MindSpore's (same arguments, same child names).
_CLASS_RENAMES = {"Sequential": "SequentialCell", "ModuleList": "CellList", "ModuleDict": "CellDict"}
# torch.nn names that a port may leave behind and `mindspore.nn` may lack (the verdict comes from the wheel's
# names in `mindspore_nn.NAMES`; this list only says which calls to look at)
_TORCH_NAMES = frozenset({
    "Sequential", "ModuleList", "ModuleDict", "Module", "Linear", "Parameter", "ParameterList", "ParameterDict",
    "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Softplus", "Softmin", "Softsign", "Threshold",
    "UpsamplingNearest2d", "UpsamplingBilinear2d", "Bilinear", "AlphaDropout", "FeatureAlphaDropout",
    "AdaptiveLogSoftmaxWithLoss", "LazyLinear", "LazyConv2d", "Unflatten", "ChannelShuffle", "Mish", "RReLU",
    "SELU", "CELU", "GLU", "LPPool2d", "FractionalMaxPool2d", "MaxUnpool2d", "TransformerEncoder",
    "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer", "Transformer",
    "MultiheadAttention", "LocalResponseNorm", "CrossMapLRN2d", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "LayerNorm", "GroupNorm", "SyncBatchNorm", "Embedding", "EmbeddingBag", "RNN", "LSTM", "GRU",
    "RNNCell", "LSTMCell", "GRUCell", "PixelShuffle", "PixelUnshuffle", "Upsample", "Identity", "Flatten",
    "CosineSimilarity", "PairwiseDistance", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
    "ReplicationPad2d", "ConstantPad1d", "ConstantPad2d", "Hardswish", "Hardsigmoid", "SiLU", "GELU",
    "LogSoftmax", "Softmax", "Softmax2d", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "NLLLoss",
    "KLDivLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "MarginRankingLoss", "TripletMarginLoss",
    "CTCLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CosineEmbeddingLoss", "MultiLabelSoftMarginLoss",
})
_SIGNATURE_NAMES = frozenset(name.rpartition(".")[2] for name in mindspore_nn.SIGNATURES)


class LayerSignatureMismatch(Rule):
    """
    ## What it does
    Finds calls of `mindspore.nn`, `mindspore.mint.nn`, `mindspore.ops` and `mindspore.ops.operations` classes
    and functions, and of names of `mindspore` itself (`mindspore.max(x, dim=-1)`, PyTorch's `torch.max` ported
    by name), that MindSpore 2.10 cannot make: a name the package does not have (`nn.Sequential`,
    `nn.ModuleList`, `nn.Parameter`, `nn.ResizeBilinear`, `ops.ResizeBilinear`, `P.LGamma` for `P.Lgamma`), a
    keyword argument the class's `__init__` or the function does not take (PyTorch's `nn.Conv2d(...,
    bias=False)`, `groups=`, `nn.ReLU(inplace=True)`, `nn.LayerNorm(..., eps=...)`, `nn.Softmax(dim=...)`,
    `ops.cat(..., dim=0)`; older MindSpore's
    `ops.interpolate(x, sizes=...)`, `ops.pad(x, paddings=...)`, `ops.split(x, axis=1, output_num=2)`), more
    positional arguments than it takes (`ops.Zeros(2, 3, ms.float32)`: a primitive takes its settings when built
    and its inputs when called), PyTorch's sizes given one by one where the second parameter is the `dtype`
    (`ops.zeros(1, 133)`, `ops.ones(n, len(x))`: an int for certain, not a name that may hold a dtype;
    measured, `TypeError: For 'Zeros', the input 'dtype' should be mindspore dtype, but got 133`; safe fix:
    one tuple, when every size is an int for certain), or a required argument left out. Names and signatures
    are those of the installed 2.10 wheel, recorded in `ms_lint/analysis/mindspore_nn.py` by
    `tools/nn_signatures.py` (an oracle test keeps them equal), not a hand-written list; the `ops` functions
    2.10 dispatches in C++ (`ops.max`, `ops.where`, ...) accept more than their Python signature and are not
    checked.

    A class base the package lacks is reported too: `class MLLoss(nn.Module)` with MindSpore's `nn` raises
    `AttributeError: module 'mindspore.nn' has no attribute 'Module'` when the class statement runs (measured),
    so the module cannot be imported.

    Not reported: calls with `*args` or `**kwargs` (for the checks those hide), classes whose `__init__` takes
    `**kwargs` (for keywords), MindTorch's `torch.nn` (it takes PyTorch's arguments), names of other packages,
    and calls of what the module inspects to adapt to the installed version (`inspect.signature(ops.split)`,
    `hasattr(nn, "ResizeBilinear")`: a compatibility layer picks the arguments the version takes), nor calls in
    a branch that tests the version (`if is_old_ms_version(): ops.split(x, output_num=2)`), nor names
    the project replaces with its own when imported (MindNLP 0.3's `ops.zeros = _zeros`, `nn.LayerNorm =
    LayerNorm` in `injection.py`: `analysis/replaced_api.py`), nor anything in a project that holds its own
    `mindspore` package (MindSpore's sources of another version, whose names its code resolves to).

    ## Why it matters in graph mode
    The call fails when the network is built, before anything compiles: measured on MindSpore 2.10,
    `nn.Conv2d(3, 8, 3, bias=False)` raises `TypeError: __init__() got an unexpected keyword argument 'bias'`,
    `nn.Sequential(...)` raises `AttributeError: module 'mindspore.nn' has no attribute 'Sequential'`, a
    missing argument raises `TypeError: __init__() missing 1 required positional argument`, and
    `ops.interpolate(x, sizes=(4, 4))` `TypeError: interpolate() got an unexpected keyword argument 'sizes'`,
    in graph code as well. Ports of PyTorch
    code carry these by the dozen (70 such calls in 38 files of the community ports measured for issue 19); a
    linter finds them all at once instead of one per run.

    ## Example
    ```python
    from mindspore import nn

    conv = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, bias=False, groups=1)
    body = nn.Sequential(conv, nn.ReLU(inplace=True))
    ```

    ## Use instead
    ```python
    from mindspore import nn

    conv = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=False, group=1)
    body = nn.SequentialCell(conv, nn.ReLU())
    ```

    ## Fix
    Safe: a keyword with a one-to-one MindSpore name is renamed when the class takes that name (`bias` ->
    `has_bias`, `groups` -> `group`, `eps` -> `epsilon`, `dim` -> `axis`, `in_features`/`out_features` ->
    `in_channels`/`out_channels`, `num_embeddings`/`embedding_dim` -> `vocab_size`/`embedding_size`): the
    argument keeps its meaning. Unsafe: `inplace=...` is removed (MindSpore has no in-place layers: code that
    relied on the input being overwritten changes), and `nn.Sequential`/`nn.ModuleList`/`nn.ModuleDict` become
    `nn.SequentialCell`/`nn.CellList`/`nn.CellDict`. Other findings have no fix: the MindSpore equivalent takes
    other arguments.
    """

    code = "MSL067"
    name = "layer-signature-mismatch"
    severity = "error"
    scope = "module"
    message = "`{call}` {problem} in MindSpore {version}: {consequence}"
    fix_applicability = "safe"
    needles = ("nn", "ops", "mindspore")  # (`mindspore.max(...)` in a module that spells neither)
    # every call: a class the package lacks (`nn.ResizeBilinear`) has a name no list holds

    def visit_call(self, node: ast.Call, ctx) -> Optional[List[Diagnostic]]:
        """The findings of a call, None for the calls ruled out (most: no generator is made for them)."""
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if last not in _SIGNATURE_NAMES and last not in _TORCH_NAMES \
                and not (isinstance(func, ast.Attribute) and (last[:1].isupper() or _on_a_package(ctx, func))) \
                or not _may_be_imported(ctx, func):
            return None
        qualname = ctx.names.qualname(func) or ""
        package, _, name = qualname.rpartition(".")
        if package not in _PACKAGES:
            return None
        findings = list(self._findings(ctx, node, qualname, package, name))
        # asked only of calls with a finding (few): the module's inspections are found by a scan of its calls
        if not findings or _rebound_before(ctx, node) or qualname in _adapted(ctx) \
                or qualname in ctx.compile_context.replaced_api \
                or ctx.graph.version_guarded(node):  # (MindSpore's own sources of another version too)
            return None  # a module that inspects the callee (`inspect.signature(ops.split)`) adapts to the version
        return findings

    def visit_class_def(self, node: ast.ClassDef, ctx) -> Optional[List[Diagnostic]]:
        """A base the package lacks (`class MLLoss(nn.Module)` with MindSpore's `nn`): AttributeError when the
        class statement runs, so the module fails to import."""
        found = []
        for base in node.bases:
            if not isinstance(base, ast.Attribute) or not _may_be_imported(ctx, base):
                continue
            package, _, name = (ctx.names.qualname(base) or "").rpartition(".")
            if package in _PACKAGES and name not in mindspore_nn.NAMES[package] and not ctx.graph.version_guarded(node):
                replacement = _CLASS_RENAMES.get(name, "Cell" if name == "Module" else None)
                hint = f"; use `{replacement}`" if replacement in mindspore_nn.NAMES[package] else ""
                found.append(self.report(ctx, base, call=ctx.text(base), version=mindspore_nn.VERSION,
                                         problem=f"is a base of `{node.name}` that `{package}` does not have",
                                         consequence=f"AttributeError when the class statement runs, so importing "
                                                     f"the module fails{hint}"))
        return found or None

    def _findings(self, ctx, node: ast.Call, qualname: str, package: str, name: str) -> Iterator[Diagnostic]:
        if package == "mindspore" and name in framework.REMOVED_JIT_API:
            return  # `ms.ms_function(...)`: MSL065's
        if name not in mindspore_nn.NAMES[package]:  # (`visit_call` drops it in a version branch)
            yield self._missing_name(ctx, node, package, name)
            return
        signature = mindspore_nn.SIGNATURES.get(qualname)
        if signature is None:
            return  # a constant or module of the package, or a signature that could not be read
        yield from self._check_arguments(ctx, node, signature, _when(package, name))

    def _missing_name(self, ctx, node: ast.Call, package: str, name: str):
        replacement = _CLASS_RENAMES.get(name)
        fix = None
        if replacement in mindspore_nn.NAMES[package] and isinstance(node.func, ast.Attribute):
            (row, column) = ctx.end(node.func)
            fix = Fix("unsafe", f"Use `{replacement}`", (Edit(replacement, (row, column - len(name)), (row, column)),))
        hint = f"; use `{replacement}`" if replacement in mindspore_nn.NAMES[package] else ""
        if package == "mindspore" and name in mindspore_nn.NAMES["mindspore.ops"]:
            hint = f"; `mindspore.ops.{name}` exists"  # PyTorch's `torch.max(...)` ported as `mindspore.max(...)`
        return self.report(ctx, node, call=_shown(ctx, node), version=mindspore_nn.VERSION, fix=fix,
                           problem=f"names `{name}`, which `{package}` does not have",
                           consequence=f"AttributeError {_when(package, name)}{hint}")

    def _check_arguments(self, ctx, node: ast.Call, signature: Tuple, when: str):
        positional, keyword_only, required, takes_args, takes_kwargs = signature
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        expanded = any(k.arg is None for k in node.keywords)
        accepted = {*positional, *keyword_only}
        unknown = [] if takes_kwargs else [k for k in node.keywords if k.arg is not None and k.arg not in accepted]
        for keyword in unknown:
            yield self._unknown_keyword(ctx, node, keyword, accepted, when)
        if starred:
            return
        if not takes_args and len(node.args) > len(positional):
            kind = "function" if when == _WHEN_CALLED else "class"
            hint = (f"; a primitive takes its settings when built and its inputs when called: "
                    f"`{ctx.text(node.func)}()(...)`") if when == _WHEN_PRIMITIVE else ""
            yield self.report(ctx, node, call=_shown(ctx, node), version=mindspore_nn.VERSION,
                              problem=f"passes {len(node.args)} positional arguments; the {kind} takes "
                                      f"{len(positional)} ({', '.join(positional) or 'none'})",
                              consequence=f"TypeError {when}{hint}")
            return
        if "dtype" in positional[1:len(node.args)] and when == _WHEN_CALLED:
            finding = self._size_as_dtype(ctx, node, positional.index("dtype"))
            if finding is not None:
                yield finding
                return
        given = {*positional[:len(node.args)], *(k.arg for k in node.keywords if k.arg)}
        given |= {_RENAMES[name] for name in given if name in _RENAMES}  # reported as a keyword to rename
        missing = [name for name in required if name not in given]
        if missing and not expanded and not unknown:  # a misnamed keyword is the missing argument, most often
            yield self.report(ctx, node, call=_shown(ctx, node), version=mindspore_nn.VERSION,
                              problem=f"leaves out the required argument{'s' * (len(missing) > 1)} "
                                      f"{', '.join(f'`{name}`' for name in missing)}",
                              consequence=f"TypeError {when}")

    def _size_as_dtype(self, ctx, node: ast.Call, index: int) -> Optional[Diagnostic]:
        """`ops.zeros(2, 3)`: PyTorch's sizes given one by one, the second taken for the `dtype` (measured on
        2.10: `TypeError: For 'Zeros', the input 'dtype' should be mindspore dtype, but got 3`). Only an int for
        certain: a literal, arithmetic on them, `len(...)`, a shape item, or a local bound to such values only."""
        if not _int_for_certain(ctx, node.args[index]):
            return None
        sizes = node.args[:index + 1]
        fix = None
        if all(_int_for_certain(ctx, size) for size in sizes) and not any(k.arg == "dtype" for k in node.keywords) \
                and len(node.args) == index + 1:
            start, end = ctx.start(sizes[0]), ctx.end(sizes[-1])
            fix = Fix("safe", "Pass the sizes as one tuple",
                      (Edit("(" + ", ".join(ctx.text(size) for size in sizes) + ")", start, end),))
        return self.report(ctx, node, call=_shown(ctx, node), version=mindspore_nn.VERSION, fix=fix,
                           problem=f"passes the int `{ctx.text(node.args[index])}` as `dtype`, its argument "
                                   f"{index + 1} (PyTorch's sizes one by one)",
                           consequence=f"TypeError {_WHEN_CALLED}; pass the shape as one tuple")

    def _unknown_keyword(self, ctx, node: ast.Call, keyword: ast.keyword, accepted, when: str):
        name = keyword.arg or ""
        renamed = _RENAMES.get(name)
        fix: Optional[Fix] = None
        hint = ""
        if renamed is not None and renamed in accepted and not any(k.arg == renamed for k in node.keywords):
            row, column = ctx.start(keyword)
            fix = Fix("safe", f"Rename `{name}` to `{renamed}`",
                      (Edit(renamed, (row, column), (row, column + len(name))),))
            hint = f"; MindSpore names it `{renamed}`"
        elif name == "inplace":
            edit = _removal(ctx, node, keyword)
            fix = Fix("unsafe", "Remove `inplace=` (MindSpore layers never work in place)", (edit,)) if edit else None
            hint = "; MindSpore layers never work in place"
        return self.report(ctx, node, call=_shown(ctx, node), version=mindspore_nn.VERSION, fix=fix,
                           problem=f"passes `{name}=`, a keyword the "
                                   f"{'function' if when == _WHEN_CALLED else 'class'} does not take",
                           consequence=f"TypeError {when}{hint}")


_WHEN_BUILT, _WHEN_PRIMITIVE, _WHEN_CALLED = ("when the network is built", "when the primitive is built",
                                             "when the call runs")


def _shown(ctx, call: ast.Call) -> str:
    """How a finding shows the call: its callee as written (read only for findings: the text is split into lines
    for it)."""
    return f"{ctx.text(call.func)}(...)"


def _when(package: str, name: str) -> str:
    """When a call of `package.name` fails: layers with the network, primitives when built, functions when run."""
    if package == "mindspore" and name[:1].islower():
        return _WHEN_CALLED  # `mindspore.zeros_like(x)`
    if package != "mindspore.ops":
        return _WHEN_BUILT
    return _WHEN_PRIMITIVE if name[:1].isupper() else _WHEN_CALLED


_INSPECTIONS = frozenset({"signature", "getfullargspec", "hasattr"})


def _on_a_package(ctx, func: ast.Attribute) -> bool:
    """Is `func` spelled as an attribute of an import of a checked package (`ops.chumk`, `ms.ops.chumk`): a
    function name the package may lack (ADC-MADDPG's typo, issue 19's eleventh sample)?"""
    receiver = func.value
    if func.attr.startswith("_"):
        return False  # (private names are not in the package's public list)
    if isinstance(receiver, ast.Name):
        spelled = receiver.id
    elif isinstance(receiver, ast.Attribute) and receiver.attr in ("ops", "nn") \
            and isinstance(receiver.value, ast.Name):
        spelled = f"{receiver.value.id}.{receiver.attr}"
    else:
        return False
    return spelled in ctx.memo(_on_a_package, lambda: _package_spellings(ctx))


def _package_spellings(ctx) -> frozenset:
    """How the module spells the checked packages: `ops` for `from mindspore import ops`, `ms.ops` for `import
    mindspore as ms`."""
    spellings = set()
    for local, target in ctx.graph.imports.names.items():
        for package in _PACKAGES:
            if target == package:
                spellings.add(local)
            elif package.startswith(target + "."):
                spellings.add(local + package[len(target):])
    return frozenset(spellings)


def _may_be_imported(ctx, func: ast.expr) -> bool:
    """Can `func` name something an import binds: its first name is a module-level import, or the def it is in
    spells an import of its own? Spares resolving `x.sum(...)`, `self.norm(...)` (most calls named like an
    `ops` function are tensor methods or the Cell's own)."""
    head = func
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name):
        return False
    if head.id in ctx.graph.imports.names or ctx.graph.imports.stars:
        return True  # (what a star import binds is asked of the index only when resolved)
    function = enclosing_function(func)
    return function is not None and ctx.names.spells_import(function)


def _adapted(ctx) -> frozenset:
    """The qualified names the module inspects to adapt to the installed version: `inspect.signature(ops.split)`,
    `hasattr(nn, "ResizeBilinear")` (mindcv's compatibility layer picks `sizes=` or `size=` that way)."""
    def collect() -> frozenset:
        found = set()
        if "signature" not in ctx.source.text and "hasattr" not in ctx.source.text:
            return frozenset()
        for call in ctx.walk.of_kind(ctx.tree, ast.Call):
            if not call.args or spelled_name(call.func) not in _INSPECTIONS:
                continue
            callee = ctx.names.qualname(call.func) or ""
            if callee in ("inspect.signature", "inspect.getfullargspec"):
                found.add(ctx.names.qualname(call.args[0]) or "")
            elif callee == "builtins.hasattr" and len(call.args) == 2 and isinstance(call.args[1], ast.Constant) \
                    and isinstance(call.args[1].value, str):
                found.add(f"{ctx.names.qualname(call.args[0])}.{call.args[1].value}")
        return frozenset(found)
    return ctx.memo(_adapted, collect)


def _rebound_before(ctx, call: ast.Call) -> bool:
    """Is a module-level call's first name bound by several module-level imports, the one before the call not
    MindSpore's?
    (`import torch.nn as nn` ... `nn.ReLU(inplace=True)` ... `import mindspore.nn as nn`: the names of a module
    are resolved by its last import)."""
    if enclosing_function(call) is not None:
        return False  # a function runs after the whole module: it sees the last import
    head: Any = call.func
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name):
        return False
    imports = ctx.memo(_rebound_before, lambda: _import_rows(ctx.tree))
    rows = imports.get(head.id)
    if not rows or len(rows) < 2:
        return False
    before = [target for row, target in rows if row < call.lineno]
    return bool(before) and not before[-1].startswith("mindspore")


def _import_rows(tree: ast.Module) -> dict:
    """Name -> [(row, imported module)] of the module-level imports binding it."""
    found: dict = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                name = alias.asname or alias.name.partition(".")[0]
                found.setdefault(name, []).append((stmt.lineno, alias.name if alias.asname else name))
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for alias in stmt.names:
                found.setdefault(alias.asname or alias.name, []).append((stmt.lineno, f"{stmt.module}.{alias.name}"))
    return found


def _removal(ctx, call: ast.Call, keyword: ast.keyword) -> Optional[Edit]:
    """An edit removing `keyword` with the comma that separates it from its neighbour."""
    arguments: List[Any] = sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))
    index = arguments.index(keyword)
    if index > 0:
        return Edit("", ctx.end(arguments[index - 1]), ctx.end(keyword))
    if len(arguments) > 1:
        return Edit("", ctx.start(keyword), ctx.start(arguments[1]))
    return Edit("", ctx.start(keyword), ctx.end(keyword))


def _int_for_certain(ctx, expr: ast.expr, depth: int = 0) -> bool:
    """An int literal, arithmetic on such values, `len(...)`, an item of a `.shape`, or a local every binding of
    which is one (never a dtype)."""
    if depth > 3:
        return False
    if isinstance(expr, ast.Constant):
        return type(expr.value) is int
    if isinstance(expr, ast.UnaryOp):
        return _int_for_certain(ctx, expr.operand, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _int_for_certain(ctx, expr.left, depth + 1) and _int_for_certain(ctx, expr.right, depth + 1)
    if isinstance(expr, ast.Call):
        return isinstance(expr.func, ast.Name) and expr.func.id in ("len", "int")
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape"
    if isinstance(expr, ast.Name):
        values = bound_values(ctx, expr)
        return bool(values) and all(isinstance(value, ast.expr) and _int_for_certain(ctx, value, depth + 1)
                                    for value in values)
    return False
