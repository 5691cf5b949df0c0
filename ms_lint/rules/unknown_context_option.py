from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis import mindspore_context
from ms_lint.analysis.walk import enclosing_handler
from ms_lint.rule import Edit, Fix, Rule

_FUNCTIONS = {"mindspore.set_context": "set_context", "mindspore.context.set_context": "set_context",
              "mindspore.set_auto_parallel_context": "set_auto_parallel_context",
              "mindspore.context.set_auto_parallel_context": "set_auto_parallel_context"}
# options MindSpore renamed, keeping their meaning: the fix renames them
_RENAMED = {"mirror_mean": "gradients_mean"}


class UnknownContextOption(Rule):
    """
    ## What it does
    Finds keyword arguments of `mindspore.set_context(...)` and `mindspore.set_auto_parallel_context(...)` (also
    through `mindspore.context`) that MindSpore 2.10 does not recognise: options of older versions
    (`enable_mem_reuse`, `enable_dynamic_memory`, `enable_hccl`, `enable_loop_sink`, `mirror_mean`), typos, and
    an option of one function given to the other (`set_context(device_num=8)`). The options each function takes
    are those of the installed 2.10 wheel, recorded in `ms_lint/analysis/mindspore_context.py` by
    `tools/context_options.py` (an oracle test keeps them equal), not a hand-written list.

    Calls in a branch that tests the MindSpore version (`if ms.__version__ < "2.0":`) are not reported, nor
    `**kwargs` passed on. Inside a `try` whose handler catches the ValueError (`except Exception:`), the script
    goes on without the option and without the rest of the `try` block: a warning.

    ## Why it matters in graph mode
    Both functions take `**kwargs` and refuse what they do not handle, before anything else runs: measured on
    MindSpore 2.10, `set_context(enable_mem_reuse=True)` raises `ValueError: For 'context.set_context', the
    keyword argument enable_mem_reuse is not recognized!` and `set_auto_parallel_context(mirror_mean=True)`
    `ValueError: Set context keyword mirror_mean is not recognized!`. The script stops at its first line of
    set-up, in every mode. Found in community ports written for MindSpore 0.x and 1.x (issue 19's sixth sample:
    VFlow's trainer sets `enable_mem_reuse` and `enable_dynamic_memory`, and its distributed branch
    `mirror_mean`, which MindSpore renamed `gradients_mean`).

    ## Example
    ```python
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE, enable_mem_reuse=True)
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, mirror_mean=True)
    ```

    ## Use instead
    ```python
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    ```

    ## Fix
    Safe for an option MindSpore renamed with the same meaning (`mirror_mean` -> `gradients_mean`): the call
    raised before. Others have no fix: a removed option has no replacement to write (memory reuse is always on),
    and an option of the other function belongs in a call of it.
    """

    code = "MSL076"
    name = "unknown-context-option"
    severity = "error"
    scope = "module"
    message = "`{call}` passes `{option}=`, which MindSpore {version} does not recognise: {consequence}{hint}"
    fix_applicability = "safe"
    needles = ("set_context", "set_auto_parallel_context")
    call_names = frozenset({"set_context", "set_auto_parallel_context"})

    def visit_call(self, node: ast.Call, ctx):
        """The findings of a context call, None for the calls ruled out (most: no generator is made)."""
        if not node.keywords:
            return None
        function = _FUNCTIONS.get(ctx.names.qualname(node.func) or "")
        if function is None:
            return None
        known = mindspore_context.OPTIONS[function]
        unknown = [k for k in node.keywords if k.arg is not None and k.arg not in known]
        if not unknown or ctx.graph.version_guarded(node):
            return None
        return self._findings(node, ctx, function, unknown)

    def _findings(self, node: ast.Call, ctx, function: str, unknown):
        handler = enclosing_handler(node, _CATCHING)
        for keyword in unknown:
            option = keyword.arg or ""
            consequence = "ValueError at the call, before anything runs" if handler is None else (
                f"ValueError at the call, which the `except` at line {handler.lineno} catches: the option, and the "
                f"rest of the `try` block, are not applied")
            yield self.report(ctx, keyword, call=f"{ctx.text(node.func)}(...)", option=option,
                              version=mindspore_context.VERSION, hint=_hint(function, option),
                              consequence=consequence, severity=None if handler is None else "warning",
                              fix=self._rename_fix(ctx, node, keyword, function))

    @staticmethod
    def _rename_fix(ctx, node: ast.Call, keyword: ast.keyword, function: str) -> Optional[Fix]:
        renamed = _RENAMED.get(keyword.arg or "")
        if renamed is None or renamed not in mindspore_context.OPTIONS[function] \
                or any(k.arg == renamed for k in node.keywords):
            return None  # (given both: renaming would repeat a keyword)
        row, column = ctx.start(keyword)
        return Fix("safe", f"Rename `{keyword.arg}` to `{renamed}`",
                   (Edit(renamed, (row, column), (row, column + len(keyword.arg or ""))),))


_CATCHING = ("ValueError", "Exception", "BaseException")


def _hint(function: str, option: str) -> str:
    if option in _RENAMED:
        return f"; it was renamed `{_RENAMED[option]}`"
    other = "set_auto_parallel_context" if function == "set_context" else "set_context"
    if option in mindspore_context.OPTIONS[other]:
        return f"; it is an option of `{other}`"
    return ""
