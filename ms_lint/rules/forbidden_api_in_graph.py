from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis.folding import method_flag
from ms_lint.rule import Rule

# 2.10's own forbidden list (mindspore/graph/_utils/check_jit_forbidden_api.py): every class or function of
# these modules, and the methods registered with `@jit_forbidden_register`. tests/oracle checks both against the
# wheel. `initializer()` itself is MSL008's; `ParallelMode` is a class read for its constants, which compiles.
FORBIDDEN_MODULES = {
    "mindspore.common.initializer": frozenset({
        "Constant", "Dirac", "HeNormal", "HeUniform", "Identity", "Initializer", "Normal", "One", "Orthogonal",
        "Sparse", "TruncatedNormal", "Uniform", "VarianceScaling", "XavierNormal", "XavierUniform", "Zero"}),
    "mindspore.context": frozenset({
        "get_auto_parallel_context", "get_context", "get_jit_config", "get_ps_context",
        "reset_auto_parallel_context", "reset_ps_context", "set_auto_parallel_context", "set_context",
        "set_ps_context"}),
    "mindspore.log": frozenset({
        "critical", "debug", "error", "get_level", "get_log_config", "info", "parse_vlog_level", "vlog_print",
        "warning"}),
}
# What `import mindspore` re-exports from those modules (`ms.get_context`).
TOP_LEVEL = frozenset({
    "get_auto_parallel_context", "get_context", "get_level", "get_log_config", "get_ps_context",
    "reset_auto_parallel_context", "reset_ps_context", "set_auto_parallel_context", "set_context",
    "set_ps_context"})
# `Tensor` methods registered as forbidden: the names are Tensor's alone, so any receiver counts.
TENSOR_METHODS = frozenset({"assign_value", "set_const_arg"})
# `nn.Cell` methods registered as forbidden (MSL010 reports trainable_params/untrainable_params/get_parameters).
# Names no tensor has count on any receiver; `to`, `buffers` and `_apply` only on `self`.
CELL_METHODS = frozenset({
    "get_buffer", "get_sub_cell", "load_state_dict", "named_buffers", "register_backward_hook",
    "register_backward_pre_hook", "register_buffer", "register_forward_hook", "register_forward_pre_hook",
    "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook", "register_saved_tensors_hooks",
    "register_state_dict_post_hook", "register_state_dict_pre_hook", "state_dict", "to_empty"})
SELF_ONLY_CELL_METHODS = frozenset({"to", "buffers", "_apply"})

# Public functions whose body logs through `mindspore.log` before anything else (deprecated interfaces, mostly):
# compiling a call of one compiles that log call, which 2.10 refuses (measured for soft_shrink, matrix_determinant,
# dtype_to_nptype, pytype_to_dtype). Read from the wheel; tests/oracle checks the list. {qualified name: defined in}
LOGGING_FUNCTIONS = {
    "mindspore.dtype_to_nptype": "mindspore.common.dtype.dtype_to_nptype",
    "mindspore.common.dtype.dtype_to_nptype": "mindspore.common.dtype.dtype_to_nptype",
    "mindspore.dtype_to_pytype": "mindspore.common.dtype.dtype_to_pytype",
    "mindspore.common.dtype.dtype_to_pytype": "mindspore.common.dtype.dtype_to_pytype",
    "mindspore.get_py_obj_dtype": "mindspore.common.dtype.get_py_obj_dtype",
    "mindspore.common.dtype.get_py_obj_dtype": "mindspore.common.dtype.get_py_obj_dtype",
    "mindspore.pytype_to_dtype": "mindspore.common.dtype.pytype_to_dtype",
    "mindspore.common.dtype.pytype_to_dtype": "mindspore.common.dtype.pytype_to_dtype",
    "mindspore.set_deterministic": "mindspore.device_manager.set_deterministic",
    "mindspore.load_mindir": "mindspore.graph._utils.mindir_util.load_mindir",
    "mindspore.save_mindir": "mindspore.graph._utils.mindir_util.save_mindir",
    "mindspore.ops.log_matrix_determinant": "mindspore.ops.function.math_func.log_matrix_determinant",
    "mindspore.ops.functional.log_matrix_determinant": "mindspore.ops.function.math_func.log_matrix_determinant",
    "mindspore.ops.matrix_determinant": "mindspore.ops.function.math_func.matrix_determinant",
    "mindspore.ops.functional.matrix_determinant": "mindspore.ops.function.math_func.matrix_determinant",
    "mindspore.ops.soft_shrink": "mindspore.ops.function.nn_func.soft_shrink",
    "mindspore.ops.functional.soft_shrink": "mindspore.ops.function.nn_func.soft_shrink",
    "mindspore.empty_cache": "mindspore.runtime.memory.empty_cache",
    "mindspore.async_ckpt_thread_status": "mindspore.train.serialization.async_ckpt_thread_status",
}

_ALL_NAMES = frozenset().union(*FORBIDDEN_MODULES.values(), TOP_LEVEL, TENSOR_METHODS, CELL_METHODS,
                               SELF_ONLY_CELL_METHODS, (name.rpartition(".")[2] for name in LOGGING_FUNCTIONS))


class ForbiddenApiInGraph(Rule):
    """
    ## What it does
    Finds calls in graph-compiled code of the MindSpore APIs that 2.10 itself lists as forbidden in graph code:
    the initializer classes (`Normal()`, `XavierUniform()`, ...), everything in `mindspore.context`
    (`ms.get_context(...)`, `set_context`, `set_auto_parallel_context`...), MindSpore's logger (`from mindspore
    import log as logger; logger.warning(...)`), `Tensor.assign_value`, `Tensor.set_const_arg`, and the `nn.Cell`
    methods for hooks, buffers and state dicts (`register_forward_hook`, `state_dict`, `get_sub_cell`,
    `self.to(...)`, ...), and the public functions that log through `mindspore.log` first (deprecated
    interfaces such as `ms.dtype_to_nptype`, `ops.soft_shrink`, `ops.matrix_determinant`).

    ## Why it matters in graph mode
    MindSpore 2.10 keeps a list of APIs its graph compiler refuses (`mindspore/graph/_utils/
    check_jit_forbidden_api.py`: the modules `mindspore.common.initializer`, `mindspore.context` and
    `mindspore.log`, and the methods decorated with `@jit_forbidden_register`). Measured at LAX and STRICT alike,
    a call of any of them in `construct` fails: `RuntimeError: Failed to compile in GRAPH_MODE because the method
    or function 'mindspore.context.get_context' is not supported in 'construct' or function with @jit
    decorator.` (`the class 'mindspore.common.initializer.XavierUniform'`, `the 'Tensor' object's method
    'assign_value'` for the others). A branch on tensor data does not help: both sides are compiled. PyNative
    runs all of them. Python's own `logging` compiles; reading `ParallelMode.DATA_PARALLEL` compiles too.

    A call in a branch on a Cell attribute (`if self.verbose:`), or in a helper that is only called in such a
    branch (`if "dynamic" in self.rope_type: self._update(...)`), is compiled only when the flag takes that
    side as the Cell is compiled (measured: the folded branch is never resolved): there the finding is a
    warning. A test on tensor data (`if seq_len > self.cached:`) folds nothing.

    ## Example
    ```python
    from mindspore import log as logger

    class Net(nn.Cell):
        def construct(self, x):
            if ms.get_context("device_target") == "Ascend":
                x = self.fast(x)
            logger.info("forward done")
            return x
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.on_ascend = ms.get_context("device_target") == "Ascend"

        def construct(self, x):
            if self.on_ascend:
                x = self.fast(x)
            return x
    ```

    ## Fix
    None: read the context, build initializers, register hooks and move the Cell in `__init__` or in host code,
    and keep what the graph needs as an attribute (a Python constant is folded when the Cell is compiled).
    """

    code = "MSL011"
    name = "forbidden-api-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "`{call}(...)` in graph code reached from `{entry}`: 2.10 refuses {what} in graph code{when}"
    needles = ("initializer", "context", "log", "assign_value", "set_const_arg", "register_", "state_dict",
               "buffer", "get_sub_cell", "to_empty", ".to(", "_apply(")
    call_names = _ALL_NAMES

    def visit_call(self, node: ast.Call, ctx):
        what = self._forbidden(node, ctx)
        if what is None or ctx.graph.at_compile_time(node):
            return  # (a `@constexpr` body is Python run while compiling)
        flag = method_flag(node, ctx.graph.call_sites, ctx.tensors.derives)
        when = ""
        if flag is not None:
            when = f" (compiled only when `self.{flag}` takes this branch as the Cell is compiled)"
        yield self.report(ctx, node, call=ctx.text(node.func), what=what, when=when,
                          severity="warning" if flag is not None else None)

    @staticmethod
    def _forbidden(node: ast.Call, ctx) -> Optional[str]:
        """What 2.10 calls the API (`the method 'mindspore.log.info'`), or None when the call is allowed."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in TENSOR_METHODS | CELL_METHODS | SELF_ONLY_CELL_METHODS:
            tensors = ctx.tensors(node)
            on_self = tensors.is_self(func.value)
            if func.attr in SELF_ONLY_CELL_METHODS and not on_self:
                return None
            if on_self:
                owner = ctx.graph.owner_class(tensors.method())
                if owner is not None and any(func.attr in s.methods for s in ctx.graph.mro(owner)):
                    return None  # the class defines its own method of that name: compiled like any other
            return f"`{'Tensor' if func.attr in TENSOR_METHODS else 'nn.Cell'}.{func.attr}`"
        qualname = ctx.names.qualname(func) or ""
        if qualname in LOGGING_FUNCTIONS:
            return f"`mindspore.log`, which `{qualname}` calls first,"
        module, _, name = qualname.rpartition(".")
        if module == "mindspore" and name in TOP_LEVEL:
            return f"`mindspore.{name}`"
        if name in FORBIDDEN_MODULES.get(module, ()):
            if module == "mindspore.common.initializer" and _inside_initializer_call(node, ctx):
                return None  # `initializer(Normal(), ...)`: MSL008 reports the call, once
            kind = "the class" if name[:1].isupper() else "the function"
            return f"{kind} `{qualname}`"
        return None


def _inside_initializer_call(node: ast.AST, ctx) -> bool:
    parent = ctx.parent(node)
    while isinstance(parent, ast.expr):
        if isinstance(parent, ast.Call) and (ctx.names.qualname(parent.func) or "").endswith(
                "initializer.initializer"):
            return True
        parent = ctx.parent(parent)
    return False
