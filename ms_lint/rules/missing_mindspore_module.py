from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis import framework, mindspore_modules, mindspore_nn
from ms_lint.analysis.walk import enclosing_handler, inside_handler
from ms_lint.rule import Rule

# Modules of MindSpore 1.x that 2.x folded into their package: `from <package> import <name>` fails as well (the
# package has no attribute of that name either; the oracle test checks both)
FOLDED = frozenset({"c_transforms", "py_transforms"})
# a name of a C extension that 2.10 defines under another name (measured: `TensorPy` is the C++ tensor class)
_RENAMED = {("mindspore._c_expression", "Tensor"): "TensorPy"}
# where the API of a missing module lives in 2.10 (the oracle test imports each)
INSTEAD = {"mindspore.distributed": ("mindspore.communication", "mindspore.mint.distributed"),
           "mindspore.nn.lr_scheduler": ("mindspore.experimental.optim.lr_scheduler",)}
_CATCHING = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")


class MissingMindsporeModule(Rule):
    """
    ## What it does
    Finds imports of `mindspore.*` modules that MindSpore 2.10 does not have: modules of 1.x that 2.x removed
    or folded into their package (`mindspore.dataset.vision.c_transforms` and `py_transforms`,
    `mindspore.dataset.transforms.c_transforms`, `mindspore.nn.probability.dpn`, `mindspore.nn.metrics.accuracy`),
    and PyTorch's module names written under `mindspore` (`import mindspore.distributed as dist`,
    `mindspore.nn.lr_scheduler`). Both `import mindspore.a.b` and `from mindspore.a.b import x` are checked, and
    `from mindspore.dataset.vision import c_transforms`. So are the names imported from `mindspore`,
    `mindspore.nn`, `mindspore.mint.nn`, `mindspore.ops` and `mindspore.ops.operations` that neither the package
    nor its submodules have: a course's PyTorch-style `from mindspore import nn, optim`, `from mindspore.nn import
    Module`, `from mindspore.ops.operations import LGamma` (2.10 spells it `Lgamma`); the removed `ms_function`
    and `ms_class` are MSL065's, and a name the project itself binds on the package (`replaced_api`) is left alone.

    The public modules 2.10 has are those of the installed wheel (the CPU wheel CI installs), recorded in
    `ms_lint/analysis/mindspore_modules.py` by `tools/mindspore_modules.py` (an oracle test keeps them equal), not a
    hand-written list. Private modules (`mindspore._checkparam`, `mindspore.ops._grad`) are not recorded, so imports
    of them are never reported, except names imported from the wheel's C extensions (`from mindspore._c_expression
    import Tensor`: MindNLP 0.3's `injection.py`, so `import mindnlp` fails on 2.10, issue 19's thirteenth sample),
    whose names are recorded too. Not reported either: an import inside a `try` whose handler catches the
    ImportError, or inside that handler (fallbacks for other versions); in a branch that tests the MindSpore
    version; any import in a project that holds its own `mindspore` package (MindSpore's sources).

    ## Why it matters in graph mode
    The script stops before any Cell is built, in every mode: measured on MindSpore 2.10,
    `import mindspore.dataset.vision.c_transforms` raises `ModuleNotFoundError: No module named
    'mindspore.dataset.vision.c_transforms'`, and `from mindspore.dataset.vision import c_transforms` `ImportError:
    cannot import name 'c_transforms'`. MindSpore 2.0 merged the C++ and Python transforms into
    `mindspore.dataset.vision` and `mindspore.dataset.transforms`: the classes keep their names there. Community
    ports written for 1.x carry these imports by the hundred (issue 19's samples); FakeDiffer's
    `import mindspore.distributed as dist` stops its training script (issue 19's seventh sample).

    ## Example
    ```python
    import mindspore.dataset.vision.c_transforms as C

    resize = C.Resize((224, 224))
    ```

    ## Use instead
    ```python
    import mindspore.dataset.vision as C

    resize = C.Resize((224, 224))
    ```

    ## Fix
    None. The merged packages mostly keep the class names, but not their defaults: 2.x's `vision.Normalize`
    takes HWC images unless told `is_hwc=False`, where `py_transforms.Normalize` took the CHW arrays its
    `ToTensor` made. Rewriting the import could change what a pipeline computes without failing.
    """

    code = "MSL078"
    name = "missing-mindspore-module"
    severity = "error"
    scope = "module"
    message = "{what}: {consequence}{hint}"
    needles = ("mindspore",)

    def visit_import(self, node: ast.Import, ctx):
        for alias in node.names:
            missing = _first_missing(alias.name)
            if missing and not self._excused(node, ctx):
                yield self._report(ctx, alias if hasattr(alias, "lineno") else node, f"`import {alias.name}`",
                                   missing)

    def visit_import_from(self, node: ast.ImportFrom, ctx):
        if node.level or not node.module or node.module.partition(".")[0] != "mindspore":
            return
        names = mindspore_modules.EXTENSION_NAMES.get(node.module)
        if names is not None:
            yield from self._missing_names(ctx, node, names)
            return
        missing = _first_missing(node.module)
        if missing:
            if not self._excused(node, ctx):
                yield self._report(ctx, node, f"`from {node.module} import ...`", missing)
            return
        if node.module in mindspore_nn.NAMES:
            yield from self._absent_names(ctx, node, mindspore_nn.NAMES[node.module])
            return
        for alias in node.names:
            if alias.name in FOLDED and f"{node.module}.{alias.name}" not in mindspore_modules.MODULES \
                    and not self._excused(node, ctx):
                yield self.report(ctx, alias if hasattr(alias, "lineno") else node,
                                  what=f"`from {node.module} import {alias.name}`",
                                  consequence=f"MindSpore {mindspore_modules.VERSION}'s `{node.module}` has no "
                                              f"`{alias.name}` (ImportError when the import runs)",
                                  hint=_folded_hint(node.module))

    def _absent_names(self, ctx, node: ast.ImportFrom, names):
        """`from mindspore import optim`, `from mindspore.ops.operations import LGamma`: a name that neither the
        package nor its submodules have in 2.10 (the removed `ms_function` and `ms_class` are MSL065's)."""
        module = node.module or ""
        for alias in node.names:
            name = alias.name
            if name == "*" or name.startswith("_") or name in names or f"{module}.{name}" in mindspore_modules.MODULES \
                    or module == "mindspore" and name in framework.REMOVED_JIT_API \
                    or f"{module}.{name}" in ctx.compile_context.replaced_api or self._excused(node, ctx):
                continue
            yield self.report(ctx, alias if hasattr(alias, "lineno") else node, what=f"`from {module} import {name}`",
                              consequence=f"MindSpore {mindspore_modules.VERSION}'s `{module}` has no `{name}` "
                                          f"(ImportError when the import runs)", hint="")

    def _missing_names(self, ctx, node: ast.ImportFrom, names):
        """`from mindspore._c_expression import Tensor`: a name the C extension of 2.10 does not define."""
        module = node.module or ""
        for alias in node.names:
            if alias.name != "*" and alias.name not in names and not self._excused(node, ctx):
                renamed = _RENAMED.get((module, alias.name))
                yield self.report(ctx, alias if hasattr(alias, "lineno") else node,
                                  what=f"`from {node.module} import {alias.name}`",
                                  consequence=f"MindSpore {mindspore_modules.VERSION}'s extension module "
                                              f"`{node.module}` has no `{alias.name}` (ImportError when the import "
                                              f"runs)", hint=f"; 2.10 names it `{renamed}`" if renamed else "")

    def _report(self, ctx, node: ast.AST, what: str, missing: str):
        parent = missing.rpartition(".")[0]
        hint = _folded_hint(parent) if missing.rpartition(".")[2] in FOLDED else ""
        if missing in INSTEAD:
            hint = "; use " + " or ".join(f"`{name}`" for name in INSTEAD[missing])
        return self.report(ctx, node, what=what,
                           consequence=f"MindSpore {mindspore_modules.VERSION} has no module `{missing}` "
                                       f"(ModuleNotFoundError when the import runs)", hint=hint)

    @staticmethod
    def _excused(node: ast.AST, ctx) -> bool:
        """A fallback for other versions, or a project with MindSpore's own sources."""
        return enclosing_handler(node, _CATCHING) is not None or inside_handler(node, _CATCHING) \
            or ctx.graph.version_guarded(node)


def _first_missing(dotted: str) -> Optional[str]:
    """The first prefix of the `mindspore.*` module name `dotted` that 2.10 lacks; None when all exist, when the
    name is not MindSpore's, or when that prefix is private (not recorded)."""
    parts = dotted.split(".")
    if parts[0] != "mindspore" or len(parts) < 2:
        return None
    for end in range(2, len(parts) + 1):
        prefix = ".".join(parts[:end])
        if prefix not in mindspore_modules.MODULES:
            return None if any(part.startswith("_") for part in parts[:end]) else prefix
    return None


def _folded_hint(package: str) -> str:
    return f"; MindSpore 2.x merged its transforms into `{package}` (same class names; check `Normalize`'s `is_hwc`)"
