"""Code that no MindSpore 2.10 run reaches as written: a branch for another framework's backend, a tree of
MindSpore's own sources (of another version). The removed-API rules stay silent there
(`GraphScope.version_guarded`, `GraphScope.other_framework_branch`)."""
from __future__ import annotations

import ast
import functools
import os
from typing import Optional

from ms_lint.analysis import run_mode

# Framework names a multi-backend module compares its backend setting with
OTHER_FRAMEWORKS = frozenset({"torch", "pytorch", "tensorflow", "tf", "paddle", "paddlepaddle", "jittor", "oneflow",
                              "jax", "mxnet"})


def backend_selected(test: ast.expr) -> Optional[bool]:
    """For `<x>.BACKEND == "torch"` (a name or attribute spelling "backend", and a framework other than MindSpore):
    True when the `if` body is that framework's branch, False when its `else` is (`!=`); None for other tests."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    name = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else ""
    if "backend" not in name.lower() or not isinstance(right, ast.Constant) \
            or str(right.value).lower() not in OTHER_FRAMEWORKS:
        return None
    return isinstance(test.ops[0], ast.Eq)


_OWN_MINDSPORE = (("mindspore", "__init__.py"), ("mindspore", "python", "mindspore", "__init__.py"))


@functools.lru_cache(maxsize=4096)
def holds_own_mindspore(directory: str) -> bool:
    """Is `directory`, or a directory above it, a tree of MindSpore's own sources: it holds a top-level
    `mindspore` package (`mindspore/__init__.py` in a directory that is no package, or
    `mindspore/python/mindspore/__init__.py` as MindSpore's repository does)? Asked per module, not per run: a
    directory of community repositories may hold one such tree (issue 19's samples) without the others
    resolving their names to it."""
    parent = os.path.dirname(directory)
    top_level = not os.path.isfile(os.path.join(directory, "__init__.py"))  # (xuance's `xuance/mindspore/` is not)
    if top_level and any(os.path.isfile(os.path.join(directory, *parts)) for parts in _OWN_MINDSPORE):
        return True
    return parent != directory and holds_own_mindspore(parent)


run_mode.when_forgetting(holds_own_mindspore.cache_clear)  # (the server: files change)
