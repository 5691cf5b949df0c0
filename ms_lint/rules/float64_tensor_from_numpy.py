from __future__ import annotations

import ast
from typing import Any, Iterator, List, Optional, Set

from ms_lint.analysis import framework
from ms_lint.analysis.bindings import assignments_of, binders
from ms_lint.analysis.walk import enclosing_function, parameter_names, self_parameter
from ms_lint.fixing.edits import append_argument, reference
from ms_lint.rule import Fix, Rule

# NumPy functions whose result is float64 when no dtype is given (`np.random.randint` is an int draw, not here).
_DRAWS = frozenset({"rand", "randn", "random", "random_sample", "ranf", "sample", "standard_normal", "normal",
                    "uniform", "laplace", "exponential", "gamma", "beta", "logistic", "lognormal", "rayleigh"})
# name -> how many positional arguments leave the dtype out (`np.zeros(shape, dtype)`)
_FILLED = {"zeros": 1, "ones": 1, "empty": 1, "identity": 1, "eye": 3, "linspace": 5}
# NumPy functions whose result is float64 when one of their array arguments is
_KEEPING = frozenset({"tile", "expand_dims", "reshape", "transpose", "repeat", "outer", "kron", "dot", "matmul",
                      "stack", "concatenate", "vstack", "hstack", "exp", "log", "sqrt", "sin", "cos", "abs",
                      "squeeze", "flip", "roll", "triu", "tril", "cumsum", "cumprod", "pad", "meshgrid"})
# array methods and attributes that keep a float64 array float64
_ARRAY_METHODS = frozenset({"reshape", "transpose", "copy", "repeat", "squeeze", "flatten", "ravel", "swapaxes",
                            "cumsum", "clip", "T"})
# Tensor methods and attributes that keep the data (and so the float64 dtype)
_TENSOR_METHODS = frozenset({"reshape", "view", "repeat", "tile", "expand", "expand_as", "broadcast_to",
                             "transpose", "permute", "swapaxes", "squeeze", "unsqueeze", "expand_dims", "flatten",
                             "copy", "clone", "contiguous", "T", "mT"})
_STORES = frozenset({"register_buffer", "insert_param_to_cell"})
# calls that read only an argument's shape, or use it on the host
_NOT_DATA = frozenset({"expand_as", "view_as", "reshape_as", "zeros_like", "ones_like", "full_like", "empty_like",
                       "shape", "size", "rank", "len", "print", "isinstance", "type", "id", "asnumpy", "tolist"})
_MAX_DEPTH = 6  # how far a value is followed back to NumPy calls
_MAX_STEPS = 16  # how far a tensor is followed forward to where it lands


class Float64TensorFromNumpy(Rule):
    """
    ## What it does
    Finds `mindspore.Tensor(array)` without a dtype where the NumPy array is float64 for certain (`np.ones(...)`,
    `np.random.randn(...)`, `np.array([1., 2., 1.])`, arithmetic and reshaping of those, names every assignment
    of which is such an array) and the tensor becomes part of a network: stored on a Cell (`self.w = ...`,
    `Parameter(...)`, `register_buffer`), also through the return of a helper of the module that a Cell calls,
    or used as an operand in graph code.

    ## Why it matters in graph mode
    NumPy's default dtype is float64 and `Tensor` keeps it, where PyTorch's `torch.Tensor(array)` makes float32:
    the same line ported from PyTorch changes the dtype. Measured on MindSpore 2.10 in both modes: mixing the
    float64 tensor with float32 data makes the result float64, and the next Conv2D, MatMul or Dense raises
    `TypeError: For primitive[Conv2D], the input type must be same` (or `For 'MatMul', the type of 'x2' should
    be same as 'x1'`); where no such layer follows, the network's output silently turns float64. Loading a
    float32 checkpoint into a float64 `Parameter` keeps it float64. Found in a community port (a blur filter
    built by a helper from `np.array([1., 2., 1.])`, registered as a buffer and used as a Conv2D weight) and in
    MindFormers' MoE router noise. A warning: whether a layer with float32 weights follows is not always in the
    source. Tensors cast before use (`.astype(...)`, `ops.cast`, also right after arithmetic on them:
    `(Tensor(a) / n).astype(x.dtype)`, or a name assigned its cast before it is stored: `points =
    ops.cast(points, ms.float32)`, through `ops.stop_gradient`; a Cell attribute every read of which is cast, or
    comes after its method cast it in place: `self.cache_k = self.cache_k.astype(x.dtype)`), read on the host
    (`.asnumpy()`, `.tolist()`) or used only for their shape, and tensors of host code are not reported.

    ## Example
    ```python
    import mindspore as ms
    import numpy as np
    from mindspore import nn, ops


    class Blur(nn.Cell):
        def __init__(self, channels):
            super().__init__()
            a = np.array([1., 2., 1.])
            self.filt = ms.Tensor(np.tile(a[:, None] * a[None, :], (channels, 1, 1, 1)))
            self.conv = ops.Conv2D(channels, 3, group=channels, pad_mode="same")

        def construct(self, x):
            return self.conv(x, self.filt)
    ```

    ## Use instead
    ```python
    import mindspore as ms
    import numpy as np
    from mindspore import nn, ops


    class Blur(nn.Cell):
        def __init__(self, channels):
            super().__init__()
            a = np.array([1., 2., 1.])
            self.filt = ms.Tensor(np.tile(a[:, None] * a[None, :], (channels, 1, 1, 1)), dtype=ms.float32)
            self.conv = ops.Conv2D(channels, 3, group=channels, pad_mode="same")

        def construct(self, x):
            return self.conv(x, self.filt)
    ```

    ## Fix
    Unsafe: adds `dtype=mindspore.float32` (spelled with the module's own alias) to the `Tensor` call. The values
    are rounded to float32, and a network that relied on float64 arithmetic computes in float32 instead.
    """

    code = "MSL071"
    name = "float64-tensor-from-numpy"
    severity = "warning"
    scope = "module"
    message = ("`{call}` makes a float64 tensor (NumPy's default dtype, which `Tensor` keeps; `torch.Tensor` "
               "would make float32) that {use}: mixed with float32 data it turns results float64, and the next "
               "Conv2D, MatMul or Dense raises TypeError (the input types must be the same); pass "
               "`dtype={float32}`")
    fix_applicability = "unsafe"
    needles = ("Tensor",)
    call_names = frozenset({"Tensor"})

    def visit_call(self, node: ast.Call, ctx):
        if len(node.args) != 1 or node.keywords:
            return None  # a dtype is given (or the data is a keyword: rare, not judged)
        qualname = ctx.names.qualname(node.func) or ""
        if not (qualname.startswith("mindspore.") and qualname in framework.TENSOR_CLASSES):
            return None
        return self._check(node, ctx)

    def _check(self, node: ast.Call, ctx):
        if not _is_float64(ctx, node.args[0], 0):
            return
        use = next(_network_uses(ctx, node, 0, set()), None)
        if use is None:
            return
        float32, imports = reference(ctx.graph, "mindspore.float32")
        edit = append_argument(ctx, node, f"dtype={float32}")
        fix = Fix(self.fix_applicability, f"Add `dtype={float32}`", (edit,), imports) if edit else None
        yield self.report(ctx, node, call=ctx.excerpt(node), use=use, float32=float32, fix=fix)


def _numpy_name(ctx, func: ast.expr) -> Optional[str]:
    """`zeros` for a call of `numpy.zeros`, `random.randn` for `numpy.random.randn` (through the imports)."""
    qualname = ctx.names.qualname(func) or ""
    return qualname[len("numpy."):] if qualname.startswith("numpy.") else None


def _is_float64(ctx, expr: Any, depth: int) -> bool:
    """Is `expr` a float64 NumPy array for certain? (`expr`: any expression, dispatched on its class)"""
    if depth > _MAX_DEPTH:
        return False
    kind = expr.__class__
    if kind is ast.Call:
        return _call_is_float64(ctx, expr, depth)
    if kind is ast.BinOp:  # a float64 array with numbers or other arrays stays float64
        return not isinstance(expr.op, ast.MatMult) and (_is_float64(ctx, expr.left, depth + 1)
                                                          or _is_float64(ctx, expr.right, depth + 1))
    if kind is ast.UnaryOp:
        return _is_float64(ctx, expr.operand, depth + 1)
    if kind is ast.Subscript:
        return _is_float64(ctx, expr.value, depth + 1)
    if kind is ast.Attribute and expr.attr == "T":
        return _is_float64(ctx, expr.value, depth + 1)
    if kind is ast.Name:
        return _name_is_float64(ctx, expr, depth)
    return False


def _call_is_float64(ctx, call: ast.Call, depth: int) -> bool:
    if any(keyword.arg == "dtype" for keyword in call.keywords):
        return False
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _ARRAY_METHODS and _numpy_name(ctx, func) is None:
        return _is_float64(ctx, func.value, depth + 1)  # `a.reshape(...)` of a float64 array
    name = _numpy_name(ctx, func)
    if name is None:
        return False
    if name.startswith("random."):
        return name[len("random."):] in _DRAWS
    if name in _FILLED:
        return len(call.args) <= _FILLED[name]
    if name == "full":
        return len(call.args) == 2 and _float_literal(call.args[1])
    if name == "arange":
        return any(_float_literal(arg) for arg in call.args)
    if name in ("array", "asarray"):
        return len(call.args) == 1 and _float_list(call.args[0])
    if name in _KEEPING:
        arrays = call.args[0].elts if call.args and isinstance(call.args[0], (ast.List, ast.Tuple)) else call.args
        return any(_is_float64(ctx, array, depth + 1) for array in arrays)
    return False


def _float_literal(expr: ast.expr) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) is float


def _float_list(expr: ast.expr) -> bool:
    """A (nested) list or tuple of number literals with at least one float: NumPy makes it float64."""
    numbers = []
    stack = [expr]
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.List, ast.Tuple)):
            stack.extend(item.elts)
            continue
        value = item.operand if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub) else item
        if not (isinstance(value, ast.Constant) and type(value.value) in (int, float)):
            return False
        numbers.append(value.value)
    return any(type(number) is float for number in numbers)


def _name_is_float64(ctx, name: ast.Name, depth: int) -> bool:
    """Every assignment of the name in its function (or module) is a float64 array."""
    function = enclosing_function(name)
    found = binders(ctx.walk, function, name.id)
    if not found or (function is not None and name.id in parameter_names(function)):
        return False
    values: List[Any] = []
    for binding in found:
        assigned = assignments_of(binding)
        if not assigned or any(not isinstance(target, ast.Name) for target, _, _ in assigned):
            return False
        values.extend(value for _, _, value in assigned)
    return all(isinstance(value, ast.expr) and _is_float64(ctx, value, depth + 1) for value in values)


def _network_uses(ctx, expr: ast.expr, depth: int, seen: Set[int]) -> Iterator[str]:
    """How the float64 tensor `expr` becomes part of a network, followed through what keeps its data: nothing
    for a tensor that is cast, read on the host or used only for its shape."""
    if depth > _MAX_STEPS or id(expr) in seen:
        return
    seen.add(id(expr))
    parent = ctx.parent(expr)
    kind = parent.__class__
    function = enclosing_function(expr)
    compiled = function is not None and ctx.graph.is_compiled(function)
    if kind is ast.BinOp:
        other = parent.right if parent.left is expr else parent.left
        if _is_cast(ctx, parent):
            return  # `(Tensor(np.ones(...)) / n).astype(x.dtype)` (Autoformer): cast before it meets anything
        if compiled and not isinstance(other, ast.Constant):
            yield f"is an operand of `{ctx.excerpt(parent)}` in graph code"
            return
        yield from _network_uses(ctx, parent, depth + 1, seen)
    elif kind is ast.Subscript and parent.value is expr:
        yield from _network_uses(ctx, parent, depth + 1, seen)
    elif kind is ast.Attribute and parent.value is expr:
        grand = ctx.parent(parent)
        if parent.attr in ("T", "mT"):
            yield from _network_uses(ctx, parent, depth + 1, seen)
        elif parent.attr in _TENSOR_METHODS and isinstance(grand, ast.Call) and grand.func is parent:
            yield from _network_uses(ctx, grand, depth + 1, seen)
    elif kind is ast.keyword:
        yield from _argument_uses(ctx, ctx.parent(parent), expr, compiled, depth, seen)
    elif kind is ast.Call and expr is not parent.func:
        yield from _argument_uses(ctx, parent, expr, compiled, depth, seen)
    elif kind is ast.Assign and parent.value is expr and len(parent.targets) == 1:
        yield from _assigned_uses(ctx, parent.targets[0], function, depth, seen)
    elif kind is ast.Return and function is not None and not isinstance(function, ast.Lambda):
        yield from _caller_uses(ctx, function, depth, seen)


def _argument_uses(ctx, call: ast.Call, argument: ast.expr, compiled: bool, depth: int,
                   seen: Set[int]) -> Iterator[str]:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _STORES and isinstance(func.value, ast.Name) \
            and ctx.graph.cell_of(call) is not None:
        yield f"is registered on Cell `{ctx.graph.cell_of(call).node.name}` with `{func.attr}`"
        return
    qualname = ctx.names.qualname(func) or ""
    if qualname.startswith("mindspore.") and qualname in framework.PARAMETER_CLASSES:
        yield from _network_uses(ctx, call, depth + 1, seen)
        return
    spelled = ctx.text(func)
    if spelled.rpartition(".")[2] == "stop_gradient":  # the same data (nnUNet's one-hot target, then cast)
        yield from _network_uses(ctx, call, depth + 1, seen)
        return
    if compiled and "cast" not in spelled.lower() and spelled.rpartition(".")[2] not in _NOT_DATA:
        yield f"is passed to `{ctx.excerpt(func)}(...)` in graph code"


def _assigned_uses(ctx, target: ast.expr, function, depth: int, seen: Set[int]) -> Iterator[str]:
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and function is not None \
            and target.value.id == self_parameter(function):
        cell = ctx.graph.cell_of(function)
        if cell is not None and not _read_cast_only(ctx, cell.node, target.value.id, target.attr):
            yield f"is stored on Cell `{cell.node.name}` as `self.{target.attr}`"
    elif isinstance(target, ast.Name) and function is not None:
        until = _rebound_at(ctx, target)
        for read in ctx.walk.nodes_of(function).loads.get(target.id, ()):
            if (read.lineno > target.lineno or (read.lineno == target.lineno
                                                and read.col_offset > target.col_offset)) and read.lineno <= until:
                yield from _network_uses(ctx, read, depth + 1, seen)


def _rebound_at(ctx, target: ast.Name) -> float:
    """The last line of the first later statement of the same block that assigns the name again (svtr's
    `points = ops.cast(points, mindspore.float32)` before `self.points = points`): later reads see that value."""
    statement = ctx.parent(target)
    block = ctx.parent(statement)
    for field in ("body", "orelse", "finalbody"):
        statements = getattr(block, field, None)
        if isinstance(statements, list) and statement in statements:
            for later in statements[statements.index(statement) + 1:]:
                if isinstance(later, ast.Assign) and any(
                        isinstance(other, ast.Name) and other.id == target.id for other in later.targets):
                    return later.end_lineno or later.lineno
    return float("inf")


def _caller_uses(ctx, function, depth: int, seen: Set[int]) -> Iterator[str]:
    """The tensor is returned: follow the calls of this module's top-level function to where they land."""
    if ctx.graph.top_level_defs().get(function.name) is not function:
        return
    for call in ctx.walk.of_kind(ctx.tree, ast.Call):
        if isinstance(call.func, ast.Name) and call.func.id == function.name \
                and enclosing_function(call) is not function:
            for use in _network_uses(ctx, call, depth + 1, seen):
                yield f"{use} (returned by `{function.name}()`)"
                return


def _read_cast_only(ctx, class_node: ast.ClassDef, self_name: str, attribute: str) -> bool:
    """Is every read of `self.<attribute>` in the class's methods cast (`.astype(...)`, `ops.cast(...)`), or made
    after its method cast it in place (`self.cache_k = self.cache_k.astype(x.dtype)`: llama-mindnlp's caches,
    issue 19's eleventh sample)?"""
    reads = [node for node in ctx.walk.of_kind(class_node, ast.Attribute)
             if node.attr == attribute and isinstance(node.value, ast.Name) and node.value.id == self_name
             and isinstance(node.ctx, ast.Load)]
    # (method, last row) of each in-place cast: what the method reads below it is cast
    recast = [(enclosing_function(read), statement.end_lineno) for read in reads
              if (statement := _recast_statement(ctx, read)) is not None]
    return bool(reads) and all(_is_cast(ctx, read) or any(
        method is enclosing_function(read) and read.lineno > row for method, row in recast) for read in reads)


def _recast_statement(ctx, read: ast.Attribute) -> Optional[ast.Assign]:
    """`self.x = self.x.astype(...)` (or `= ops.cast(self.x, ...)`) whose value casts `read`, else None."""
    if not _is_cast(ctx, read):
        return None
    parent = ctx.parent(read)
    call = ctx.parent(parent) if isinstance(parent, ast.Attribute) else parent
    statement = ctx.parent(call)
    if isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Attribute) and target.attr == read.attr:
            return statement
    return None


def _is_cast(ctx, read: ast.expr) -> bool:
    parent = ctx.parent(read)
    if isinstance(parent, ast.Attribute) and parent.attr in ("astype", "to", "float", "half"):
        return True
    if isinstance(parent, ast.Call) and read in parent.args:
        func = parent.func
        spelled = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return "cast" in spelled.lower() or "cast" in ctx.text(func).lower()
    return False


