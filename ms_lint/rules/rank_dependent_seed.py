from __future__ import annotations

import ast
import re
from typing import Iterator, List, Optional

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function, spelled_name
from ms_lint.rule import Rule

GLOBAL_SEEDS = frozenset({"mindspore.set_seed", "mindspore.common.set_seed", "mindspore.common.seed.set_seed"})
RANK_CALLS = frozenset({"get_rank", "get_local_rank", "get_group_rank_from_world_rank"})
RANK_VARIABLES = frozenset({"RANK_ID", "RANK", "LOCAL_RANK", "DEVICE_ID", "OMPI_COMM_WORLD_RANK",
                            "OMPI_COMM_WORLD_LOCAL_RANK", "MS_NODE_ID"})
RANK_NAMES = re.compile(r"^(local_|global_|node_)?rank(_?id|_index)?$|^device_id$", re.I)
RANDOM_PREFIXES = ("random.", "numpy.random.", "secrets.", "uuid.")
RANDOM_CALLS = frozenset({"time.time", "time.time_ns", "time.perf_counter", "time.monotonic", "os.getpid",
                          "os.urandom", "datetime.datetime.now"})
# text that marks a module as part of a distributed job
DISTRIBUTED_MARKERS = ("mindspore.communication", "set_auto_parallel_context", "get_rank", "RANK_ID", "init(")
_DEPTH = 4


class RankDependentSeed(Rule):
    """
    ## What it does
    Finds `mindspore.set_seed(...)` whose argument depends on the process's rank (`get_rank()`,
    `get_local_rank()`, a `rank`/`rank_id`/`local_rank`/`device_id` variable, parameter or attribute, the
    `RANK_ID`/`RANK`/`LOCAL_RANK`/`DEVICE_ID` environment variables), directly or through local variables or
    module globals (`_seed = np.random.randint(1000)` at module level is drawn in every rank's process), or on
    a random draw (`random.*`, `np.random.*`, `time.time()`, `os.getpid()`) in a module of a distributed job.

    Not reported: seeds of the data pipeline or of NumPy offset by rank (`ds.config.set_seed(seed + rank)`,
    `np.random.seed(seed + rank)`), constant seeds, random draws in modules that show no sign of distribution,
    and a helper's rank parameter that every call of the helper in its module gives a literal
    (`def seed_all(seed, rank_id=0)` called as `seed_all(args.seed)`: every rank gets the same seed).

    ## Why it matters in graph mode
    The global seed decides the initial weights, so ranks seeded differently start from different models while
    data parallelism averages their gradients as if they were one: training silently degrades. Measured on
    MindSpore 2.10 (CPU): `set_seed(7)` and `set_seed(7 + 1)` give different `nn.Dense(4, 3)` weights,
    `set_seed(7)` twice the same ones; `ms.set_seed(1)` also seeds numpy and `random` (same draws as
    `np.random.seed(1)`/`random.seed(1)`). Beware too that `ds.config.set_seed` reseeds numpy and `random` (its
    docstring says so) and the initializers draw from numpy: measured, `ms.set_seed(1)` followed by
    `ds.config.set_seed(1 + rank)` gives different weights per rank, so set rank-dependent data seeds after the
    network is built (or shard the dataset with `num_shards`/`shard_id` instead).

    ## Example
    ```python
    rank_id = get_rank()
    ms.set_seed(args.seed + rank_id)
    net = Net()
    ```

    ## Use instead
    ```python
    ms.set_seed(args.seed)
    net = Net()
    dataset = ds.ImageFolderDataset(path, num_shards=get_group_size(), shard_id=get_rank())
    ```

    ## Fix
    None: whether the rank offset was meant for something else (augmentation diversity) is the author's call.
    """

    code = "MSL054"
    name = "rank-dependent-seed"
    severity = "error"
    scope = "module"
    message = ("`{call}` depends on {what}: every rank seeds differently and initialises different weights; "
               "use the same seed on every rank")
    needles = ("set_seed",)
    call_names = framework.last_names(GLOBAL_SEEDS)

    def visit_call(self, node: ast.Call, ctx):
        if ctx.names.qualname(node.func) not in GLOBAL_SEEDS:
            return
        seed = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "seed"), None)
        if seed is None:
            return
        scope = enclosing_function(node) or ctx.tree
        what = _dependence(ctx, seed, scope, _DEPTH)
        if what is None:
            return
        if what.startswith("a random") and not any(m in ctx.source.text for m in DISTRIBUTED_MARKERS):
            return
        call = " ".join(ctx.text(node).split())
        yield self.report(ctx, node, call=call if len(call) <= 60 else f"{ctx.text(node.func)}(...)", what=what)


def _dependence(ctx, expr: ast.AST, scope, depth: int) -> Optional[str]:
    """What rank-dependent or random value `expr` is built from, or None."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call):
            qualname = ctx.names.qualname(node.func) or ""
            last = qualname.rpartition(".")[2] or spelled_name(node.func) or ""
            if last in RANK_CALLS:
                return f"the rank (`{ctx.text(node)}`)"
            if qualname in ("os.getenv", "os.environ.get") and node.args and _rank_variable(node.args[0]):
                return f"the rank (`{ctx.text(node)}`)"
            if qualname.startswith(RANDOM_PREFIXES) or qualname in RANDOM_CALLS:
                return f"a random draw (`{ctx.text(node)}`)"
        elif isinstance(node, ast.Subscript) and ctx.names.qualname(node.value) == "os.environ" and \
                _rank_variable(node.slice):
            return f"the rank (`{ctx.text(node)}`)"
        elif isinstance(node, ast.Attribute) and RANK_NAMES.match(node.attr):
            return f"the rank (`{ctx.text(node)}`)"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if RANK_NAMES.match(node.id) and not _constant_from_every_caller(ctx, scope, node.id):
                return f"the rank (`{node.id}`)"
            if depth > 0:
                local = list(_assigned(scope, node.id))
                for value in local:
                    found = _dependence(ctx, value, scope, depth - 1)
                    if found is not None:
                        return found
                if not local and scope is not ctx.tree and not _parameter(scope, node.id):
                    # a module global (`_seed = np.random.randint(1000)` at module level): drawn in each process
                    for value in _assigned(ctx.tree, node.id):
                        found = _dependence(ctx, value, ctx.tree, depth - 1)
                        if found is not None:
                            return found
    return None


def _parameter(function, name: str) -> bool:
    arguments = getattr(function, "args", None)
    return arguments is not None and name in {a.arg for a in (
        *arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
        *filter(None, (arguments.vararg, arguments.kwarg)))}


def _constant_from_every_caller(ctx, function, name: str) -> bool:
    """Is `name` a parameter of a module-level function that every call of it in this module gives a literal (or
    leaves to a literal default)? A helper whose callers all pass `rank_id=0` seeds every rank alike (issue 19).
    No call in the module: its callers are elsewhere, and the rank may come from any of them."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function not in ctx.tree.body:
        return False
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    defaults = dict(zip(positional[len(positional) - len(function.args.defaults):], function.args.defaults))
    defaults.update({a.arg: d for a, d in zip(function.args.kwonlyargs, function.args.kw_defaults) if d is not None})
    if name not in positional and name not in defaults:
        return False  # not a parameter: a local or a global
    calls = [node for node in ctx.walk.of_kind(ctx.tree, ast.Call)
             if isinstance(node.func, ast.Name) and node.func.id == function.name]
    if not calls:
        return False
    for call in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return False
        given = next((k.value for k in call.keywords if k.arg == name), None)
        if given is None and name in positional and positional.index(name) < len(call.args):
            given = call.args[positional.index(name)]
        if not isinstance(given if given is not None else defaults.get(name), ast.Constant):
            return False
    return True


def _assigned(scope, name: str) -> Iterator[ast.expr]:
    """Values assigned to `name` in the function (or module) body, not in nested definitions."""
    body: List[ast.AST] = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    stack = body
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            yield node.value
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) and \
                node.target.id == name and node.value is not None:
            yield node.value
        stack.extend(ast.iter_child_nodes(node))


def _rank_variable(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value in RANK_VARIABLES
