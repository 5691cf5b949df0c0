from __future__ import annotations

import ast
from typing import Optional, Tuple

from ms_lint.fixing import edits
from ms_lint.rule import Fix, Rule
from ms_lint.rules._mindspore_values import attribute_calls

# the dtype names both libraries spell alike (`bool_` too); MindSpore's `bfloat16` has no NumPy twin
SHARED_DTYPES = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                           "uint32", "uint64", "bool_", "complex64", "complex128"})
_MINDSPORE_DTYPE_MODULES = frozenset({"mindspore", "mindspore.common.dtype", "mindspore.dtype",
                                      "mindspore.common.mstype"})
_NUMPY_ONLY = frozenset({"float_", "int_", "double", "single", "half", "longlong", "intc", "uintc"})
_DTYPE_NAMES = SHARED_DTYPES | _NUMPY_ONLY | {"bfloat16"}
# where NumPy's functions take the dtype positionally (`np.ones(shape, dtype)`); any of them takes `dtype=`
_NUMPY_POSITION = {"zeros": 1, "ones": 1, "empty": 1, "full": 2, "array": 1, "asarray": 1, "ascontiguousarray": 1,
                   "frombuffer": 1, "identity": 1, "zeros_like": 1, "ones_like": 1, "empty_like": 1,
                   "full_like": 2, "dtype": 0}
# where MindSpore's constructors and ops take it (`Tensor(data, dtype)`, `ops.cast(x, dtype)`)
_MINDSPORE_POSITION = {"mindspore.Tensor": 1, "mindspore.tensor": 1, "mindspore.common.tensor.Tensor": 1,
                       "mindspore.ops.cast": 1, "mindspore.ops.ones": 1, "mindspore.ops.zeros": 1,
                       "mindspore.ops.full": 2, "mindspore.ops.eye": 2}
# MindSpore's functions with a `dtype` keyword that refuse NumPy's (measured: ops.arange, ones_like, randn...)
_MINDSPORE_DTYPE_FUNCTIONS = frozenset({"cast", "ones", "zeros", "full", "eye", "ones_like", "zeros_like",
                                        "full_like", "arange", "randn", "rand", "randint", "randn_like", "rand_like",
                                        "randint_like", "empty", "empty_like", "linspace"})
_NUMPY_DTYPE_FUNCTIONS = frozenset(_NUMPY_POSITION) | {"arange", "linspace", "eye", "fromfile", "fromiter",
                                                      "logspace", "geomspace", "astype"}
_PRIMITIVE_CASTS = frozenset({"mindspore.ops.Cast", "mindspore.ops.operations.Cast", "mindspore.ops.P.Cast"})


class DtypeOfOtherLibrary(Rule):
    """
    ## What it does
    Finds a dtype of one library handed to the other: a MindSpore dtype given to NumPy (`np.zeros(shape,
    dtype=ms.float32)`, `np.ones(n, mstype.int32)`, `x.asnumpy().astype(ms.float32)`), and a NumPy dtype given to
    MindSpore's `Tensor`, `tensor`, the `mindspore.ops`/`mindspore.mint` functions that take a dtype (`cast`,
    `ones`, `zeros`, `full`, `eye`, the `*_like` ones, `arange`, `rand*`, `linspace`) or a `Cast` primitive the
    Cell keeps (`self.cast = ops.Cast()`): `Tensor(data, np.float32)`, `ops.cast(x, np.float16)`,
    `ops.zeros(shape, dtype=np.float32)`, `self.cast(x, np.float16)`. PyTorch code
    writes `torch.zeros(shape, dtype=torch.float32)` and `torch.tensor(data, dtype=...)` with one library's
    dtypes everywhere; a port that splits the work between NumPy and MindSpore mixes them.

    ## Why it matters in graph mode
    Measured on MindSpore 2.10 (with NumPy 1.26): NumPy cannot read MindSpore's dtypes (`TypeError: Cannot
    interpret 'mindspore.float32' as a data type`, for `np.zeros`, `ones`, `empty`, `full`, `array`, `asarray`,
    `arange`, `linspace`, `eye`, `frombuffer`, the `*_like` functions and `ndarray.astype`), and MindSpore's
    constructors and ops refuse NumPy's (`TypeError: For 'Tensor', the 'dtype' should be one of
    [mindspore.int8, ...]`; `For 'Cast', the input 'dtype' should be mindspore dtype, but got <class
    'numpy.float16'>` from `ops.cast`, `ops.ones_like`, `ops.arange`; `ops.zeros`, `ops.eye`, `ops.full` and
    `mint.zeros` alike). The call fails in every mode, in `__init__` as in `construct`. Not reported:
    `Tensor.astype(np.float16)` (MindSpore's `astype` converts NumPy dtypes, measured), `mindspore.numpy`
    functions (they take MindSpore's dtypes, and NumPy's), `np.float32(x)` (a NumPy scalar, not a dtype
    argument), a dtype held in a variable.

    ## Example
    ```python
    import mindspore as ms
    import numpy as np

    mask = np.zeros((4, 4), dtype=ms.float32)
    ```

    ## Use instead
    ```python
    import mindspore as ms
    import numpy as np

    mask = np.zeros((4, 4), dtype=np.float32)
    ```

    ## Fix
    Safe: the dtype is spelled on the library that receives it (`ms.float32` -> `np.float32` in a NumPy call,
    `np.float16` -> `ms.float16` in a MindSpore one, with an import added where the module binds no name for the
    package); the call raised before. No fix for MindSpore's `bfloat16` (NumPy has none) or NumPy's aliases
    (`np.float_`, `np.double`).
    """

    code = "MSL079"
    name = "dtype-of-other-library"
    severity = "error"
    scope = "module"
    message = ("`{call}` passes {other}'s dtype `{dtype}` to {library}, which cannot read it (TypeError{where}); "
               "use {use}")
    fix_applicability = "safe"
    needles = ("float", "int", "bool_", "complex")
    call_names = _NUMPY_DTYPE_FUNCTIONS | _MINDSPORE_DTYPE_FUNCTIONS | {"Tensor", "tensor"}

    def visit_call(self, node: ast.Call, ctx):
        if not any(isinstance(a, ast.Attribute) and a.attr in _DTYPE_NAMES
                   for a in (*node.args, *(k.value for k in node.keywords))):
            return  # (most calls: no argument spells a dtype)
        callee = ctx.names.qualname(node.func) or ""
        package, _, function = callee.partition(".")
        if package == "numpy" and function in _NUMPY_DTYPE_FUNCTIONS:
            dtype = _dtype_argument(node, _NUMPY_POSITION.get(function))
            receiver_library = "NumPy"
        elif _ndarray_astype(ctx, node):
            dtype = node.args[0] if node.args else _keyword(node, "dtype")
            receiver_library = "NumPy"
        elif callee in _MINDSPORE_POSITION or callee.startswith(("mindspore.ops.", "mindspore.mint.")) \
                and callee.rpartition(".")[2] in _MINDSPORE_DTYPE_FUNCTIONS:
            dtype = _dtype_argument(node, _MINDSPORE_POSITION.get(callee))
            receiver_library = "MindSpore"
        elif _primitive_cast(ctx, node.func):
            dtype = _dtype_argument(node, 1)  # `self.cast(x, np.float32)` with `self.cast = ops.Cast()`
            receiver_library = "MindSpore"
        else:
            return
        if dtype is None:
            return
        found = _foreign_dtype(ctx, dtype, receiver_library)
        if found is None:
            return
        other, name = found
        target = f"{'numpy' if receiver_library == 'NumPy' else 'mindspore'}.{name}"
        fix = None
        if name in SHARED_DTYPES:
            spelling, imports = edits.reference(ctx.graph, target)
            fix = Fix("safe", f"Use `{spelling}`", (ctx.replace(dtype, spelling),), imports)
            use = f"`{spelling}`"
        else:
            use = "a dtype of " + receiver_library
        where = ", at compile time in graph mode" if ctx.graph.is_compiled(node) else ""
        yield self.report(ctx, node, call=ctx.excerpt(node), library=receiver_library, other=other,
                          dtype=ctx.text(dtype), where=where, use=use, fix=fix)


def _keyword(node: ast.Call, name: str) -> Optional[ast.expr]:
    return next((k.value for k in node.keywords if k.arg == name), None)


def _dtype_argument(node: ast.Call, position: Optional[int]) -> Optional[ast.expr]:
    given = _keyword(node, "dtype")
    if given is None and position is not None and len(node.args) > position \
            and not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
        given = node.args[position]
    return given


def _primitive_cast(ctx, func: ast.expr) -> bool:
    """Is `func` a `self.<name>` every assignment of which builds MindSpore's `Cast` primitive?"""
    if not (isinstance(func, ast.Attribute) and func.attr == "cast" and isinstance(func.value, ast.Name)):
        return False
    cell = ctx.graph.cell_of(func)
    calls = attribute_calls(ctx, cell.node if cell is not None else None, func.attr)
    return bool(calls) and all(ctx.names.qualname(call.func) in _PRIMITIVE_CASTS for call in calls)


def _ndarray_astype(ctx, node: ast.Call) -> bool:
    """`<NumPy array>.astype(...)` where the receiver is one for certain: `x.asnumpy()` or a NumPy call."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "astype" and isinstance(func.value, ast.Call)):
        return False
    inner = func.value.func
    if isinstance(inner, ast.Attribute) and inner.attr == "asnumpy":
        return True
    return (ctx.names.qualname(inner) or "").startswith("numpy.")


def _foreign_dtype(ctx, dtype: ast.expr, receiver_library: str) -> Optional[Tuple[str, str]]:
    """(the other library's name, the dtype's name) when `dtype` spells one of the other library's dtypes."""
    if not isinstance(dtype, ast.Attribute):
        return None
    qualname = ctx.names.qualname(dtype) or ""
    module, _, name = qualname.rpartition(".")
    if receiver_library == "NumPy" and module in _MINDSPORE_DTYPE_MODULES and (name in SHARED_DTYPES
                                                                                or name == "bfloat16"):
        return "MindSpore", name
    if receiver_library == "MindSpore" and module == "numpy" and (name in SHARED_DTYPES or name in _NUMPY_ONLY):
        return "NumPy", name
    return None
