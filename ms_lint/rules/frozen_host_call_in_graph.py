from __future__ import annotations

import ast
from typing import List, Optional

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function, parameter_names
from ms_lint.fixing import edits
from ms_lint.rule import Diagnostic, Fix, Rule

# Modules every call of which reads host state (clock, entropy, RNG state).
FROZEN_MODULES = ("random.", "numpy.random.", "time.", "uuid.", "secrets.")
# Single calls that read the environment, the clock or files.
FROZEN_CALLS = frozenset({
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today", "datetime.date.today",
    "os.getenv", "os.getpid", "os.urandom", "os.listdir", "os.scandir", "os.stat", "os.path.exists",
    "os.path.isfile", "os.path.isdir", "os.path.getsize", "os.path.getmtime", "builtins.open", "builtins.input",
    "io.open", "json.load", "pickle.load", "numpy.load", "numpy.loadtxt", "numpy.fromfile", "numpy.genfromtxt",
})
# The host call -> `ops` call that re-samples at every call (measured in graph mode, both syntax levels).
_SIZE_FROM_DIMENSIONS = {"numpy.random.rand": "rand", "numpy.random.randn": "randn"}
_SIZE_FROM_ARGUMENT = {"numpy.random.random": "rand", "numpy.random.random_sample": "rand",
                       "numpy.random.sample": "rand", "random.random": "rand"}


class FrozenHostCallInGraph(Rule):
    """
    ## What it does
    Finds calls that read host state in graph-compiled code: `random.*`, `np.random.*`, `time.*`, `uuid.*`,
    `datetime.now()`, `os.getenv(...)`, `os.environ[...]`, `open(...)` and other file reads.

    ## Why it matters in graph mode
    MindSpore 2.10 evaluates these calls once, on the host, while it compiles the graph, and bakes the result
    into the graph as a constant. Measured at both syntax levels: `random.random()`, `np.random.rand(3)`,
    `time.time()`, `os.getenv(...)`, `os.environ[...]` and `float(open(path).read())` in `construct` compile
    without error or warning and **return the same value at every call**; an environment or file change between
    calls is ignored, while PyNative re-evaluates each call. Dropout masks, noise and augmentations built this
    way are silently identical at every step. (`with open(...) as f:` fails to compile instead:
    `TypeError: issubclass() arg 1 must be a class`.) `ops.rand`, `ops.randn`, `ops.uniform` and
    `ops.standard_normal` are graph operators and re-sample at every call (measured). A draw whose arguments read
    an attribute of an object passed in (`np.random.randint(0, data.num_nodes, (1,))`, `data` a graph object, not
    a tensor) is a warning: 2.10 compiles the graph again for each new non-tensor argument, and draws again
    (measured: four calls with new objects gave four draws, with one object one draw), so the draw is frozen only
    while the same object is passed (CMMS-GCL, issue 19's seventeenth sample). A draw made after
    `np.random.seed(...)` (or `random.seed`) in the same function, or in every caller up to three calls up
    (BigBird's random attention blocks), gives the same values at every call in PyNative too: not reported.

    ## Example
    ```python
    class Noise(nn.Cell):
        def construct(self, x):
            return x + Tensor(np.random.randn(4).astype(np.float32))
    ```

    ## Use instead
    ```python
    class Noise(nn.Cell):
        def construct(self, x):
            return x + ops.randn(4)
    ```

    ## Fix
    Unsafe: `np.random.rand(...)`/`np.random.randn(...)` become `ops.rand(...)`/`ops.randn(...)` (the size as
    one tuple, the form MindSpore keeps after 2.9), `np.random.random(size)` and `random.random()` become
    `ops.rand(size)`/`ops.rand(())`, and a `Tensor(<draw>, dtype)` wrapper becomes `ops.rand(size, dtype=dtype)`
    (STRICT rejects `Tensor(...)` of a graph value, measured). The result is a tensor drawn from MindSpore's
    generator instead of a NumPy array or Python float from NumPy's, so code that relies on the type or on a
    NumPy seed changes behaviour. No fix in a function that computes with NumPy (`_compute_mask_indices` of the
    wav2vec2 family): there the draw feeds NumPy code, which a tensor would break. Environment and file reads have
    no fix: read them in `__init__`.
    """

    code = "MSL004"
    name = "frozen-host-call-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "`{call}` in graph code reached from `{entry}` is evaluated once at compile time: {consequence}"
    fix_applicability = "unsafe"
    needles = ("random", "time", "uuid", "secrets", "datetime", "os.", "environ", "getenv", "open", "load",
               "input", "fromfile")

    # both hooks return a list or None, not a generator: they run on every call and subscript of graph code
    def visit_call(self, node: ast.Call, ctx) -> Optional[List[Diagnostic]]:
        qualname = ctx.names.qualname(node.func)
        if not qualname:
            return None
        if qualname in _SEEDING:
            return None  # sets the generator's state once, at compile time: no draw is frozen
        if qualname.startswith(FROZEN_MODULES) or qualname in FROZEN_CALLS or qualname.startswith("os.environ."):
            if qualname.startswith(("numpy.random.", "random.")) and _seeded_before(ctx, node):
                return None  # re-seeded before every draw: PyNative draws the same values at every call too
            shown = ctx.text(node)
            if len(shown) > 40 or "\n" in shown:
                shown = f"{ctx.text(node.func)}(...)"
            consequence, severity = _consequence(qualname), None
            holder = _object_argument(node) if qualname.startswith(("numpy.random.", "random.")) else None
            if holder is not None:  # the graph is compiled again for each new object: frozen while it is the same
                consequence = (f"the draw is frozen for as long as the same `{holder}` is passed (2.10 compiles "
                               f"again, and draws again, for each new non-tensor argument; use "
                               f"`ops.rand`/`ops.randint`/`ops.uniform`)")
                severity = "warning"
            # (in a `@constexpr` body a MindSpore draw is made while compiling too: no fix)
            return [self.report(ctx, node, call=shown, consequence=consequence, severity=severity,
                                fix=None if ctx.graph.at_compile_time(node) else self._fix(ctx, node, qualname))]
        return None

    def visit_subscript(self, node: ast.Subscript, ctx) -> Optional[List[Diagnostic]]:
        if isinstance(node.ctx, ast.Load) and ctx.names.qualname(node.value) == "os.environ":
            return [self.report(ctx, node, call=ctx.text(node), consequence=_consequence("os.environ"))]
        return None

    @staticmethod
    def _fix(ctx, node: ast.Call, qualname: str) -> Optional[Fix]:
        if node.keywords:
            return None
        arguments = [ctx.text(a.value) if isinstance(a, ast.Starred) else ctx.text(a) for a in node.args]
        if qualname in _SIZE_FROM_DIMENSIONS:
            name = _SIZE_FROM_DIMENSIONS[qualname]
            if len(node.args) == 1:
                size = arguments[0]  # one dimension, or `*shape` whose sequence is the size
            elif any(isinstance(a, ast.Starred) for a in node.args):
                return None
            else:
                size = f"({', '.join(arguments)})"  # `()` for a scalar draw
        elif qualname in _SIZE_FROM_ARGUMENT and len(node.args) <= 1:
            if node.args and isinstance(node.args[0], ast.Starred):
                return None
            name, size = _SIZE_FROM_ARGUMENT[qualname], (arguments[0] if arguments else "()")
        else:
            return None
        target, dtype = node, _tensor_dtype(ctx, node)
        if dtype is None and _numpy_helper(ctx, node):
            return None  # the draw feeds NumPy code on the host (`_compute_mask_indices`): a tensor would break it
        ops, imports = edits.reference(ctx.graph, "mindspore.ops")
        if dtype is not None:  # `Tensor(<draw>, dtype)`: STRICT rejects Tensor() of a graph value, so unwrap it
            target, size = ctx.parent(node), f"{size}, dtype={dtype}" if dtype else size
        return Fix("unsafe", f"Draw in the graph with `{ops}.{name}`",
                   (ctx.replace(target, f"{ops}.{name}({size})"),), imports)


_TENSOR_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "T"})


def _object_argument(node: ast.Call) -> Optional[str]:
    """The parameter of the function around a draw whose attribute the draw's arguments read (`data` in
    `np.random.randint(0, data.num_nodes, ...)`, CMMS-GCL in issue 19's seventeenth sample): an object passed in,
    not a tensor (whose `shape` or `dtype` would be read), not `self`."""
    function = enclosing_function(node)
    if function is None or isinstance(function, ast.Lambda):
        return None
    parameters = parameter_names(function) - {"self", "cls"}
    for argument in (*node.args, *(k.value for k in node.keywords)):
        for sub in ast.walk(argument):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in parameters \
                    and sub.attr not in _TENSOR_ATTRIBUTES:
                return sub.value.id
    return None


def _numpy_helper(ctx, node: ast.Call) -> bool:
    """Does the function around the draw compute with NumPy (a call of `numpy` other than its random draws)?"""
    function = enclosing_function(node)
    if function is None:
        return False
    for sub in ctx.walk.of_kind(function, ast.Call):  # the module's walk indexed them
        if sub is not node:
            qualname = ctx.names.qualname(sub.func) or ""
            if qualname.startswith("numpy.") and not qualname.startswith("numpy.random."):
                return True
    return False


def _tensor_dtype(ctx, node: ast.Call) -> Optional[str]:
    """For `Tensor(node[, dtype])`: the dtype's text ("" when absent); None when `node` is not wrapped so."""
    wrapper = ctx.parent(node)
    if not (isinstance(wrapper, ast.Call) and wrapper.args and wrapper.args[0] is node
            and ctx.names.qualname(wrapper.func) in framework.TENSOR_CLASSES):
        return None
    dtypes = [*wrapper.args[1:], *(k.value for k in wrapper.keywords if k.arg == "dtype")]
    if len(wrapper.args) > 2 or len(dtypes) + 1 != len(wrapper.args) + len(wrapper.keywords):
        return None  # shape=, init= or other arguments: keep the wrapper
    return ctx.text(dtypes[0]) if dtypes else ""


_SEEDING = frozenset({"numpy.random.seed", "random.seed"})


def _seeded_before(ctx, node: ast.expr, depth: int = 0) -> bool:
    """Does the function seed its generator before `node` (`np.random.seed(seed)` then `np.random.permutation(...)`),
    or does every call of it come after such a seed, up the callers three deep (BigBird's block-sparse attention
    seeds, then reaches the draw through two helpers)? The seed must not be tensor data."""
    function = enclosing_function(node)
    if function is None:
        return False
    if _seed_precedes(ctx, function, node):
        return True
    sites = ctx.graph.call_sites.get(function)
    return depth < 3 and bool(sites) and all(_seeded_before(ctx, site, depth + 1) for site in sites)


def _seed_precedes(ctx, function, node: ast.expr) -> bool:
    return any(call.lineno < node.lineno and ctx.names.qualname(call.func) in _SEEDING
               and not any(ctx.tensors(call).derives(argument) for argument in call.args)
               for call in ctx.walk.nodes_of(function).calls)


def _consequence(qualname: str) -> str:
    if qualname.startswith(("random.", "numpy.random.")):
        return "every call returns the same draw (use `ops.rand`/`ops.randn`/`ops.uniform`)"
    if qualname.startswith(("secrets.", "uuid.")):
        return "every call returns the same value"
    if qualname.startswith(("time.", "datetime.")):
        return "every call sees the compile-time clock"
    if qualname.startswith(("os.getenv", "os.environ")):
        return "later changes to the environment are ignored (read it in `__init__`)"
    return "later calls see the compile-time result (read it in `__init__`)"
