from __future__ import annotations

import ast
import bisect
import functools
import itertools
import re
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from ms_lint.analysis import bindings, framework
from ms_lint.analysis.locations import locate_in
from ms_lint.analysis.walk import (
    enclosing_function,
    parameter_defaults,
    parameter_names,
    parent_of,
    rows_spelling,
    spelled_name,
)
from ms_lint.rule import Rule
from ms_lint.source import walk

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
# what a module must spell for one of its calls to pass the rank or a random draw (`os.urandom` by "random")
_DEPENDENT_NEEDLES = ("rank", "RANK", "DEVICE_ID", "device_id", "random", "time.", "time(", "perf_counter",
                      "monotonic", "getpid", "uuid", "secrets", "now(")


class RankDependentSeed(Rule):
    """
    ## What it does
    Finds `mindspore.set_seed(...)` whose argument depends on the process's rank (`get_rank()`,
    `get_local_rank()`, a `rank`/`rank_id`/`local_rank`/`device_id` variable or attribute, the
    `RANK_ID`/`RANK`/`LOCAL_RANK`/`DEVICE_ID` environment variables), directly or through local variables,
    module globals (`_seed = np.random.randint(1000)` at module level is drawn in every rank's process) or a
    parameter's default (`def seed_all(seed, rank=get_rank())`), or on a random draw (`random.*`,
    `np.random.*`, `time.time()`, `os.getpid()`) in a module of a distributed job.

    A helper that seeds with its parameters (`def set_seed(seed, rank): ms.set_seed(seed + rank)`) is judged by
    its callers, across modules (through package re-exports too): a call that passes the rank or a random value
    is reported, and so is the helper's `set_seed` line, naming the call. A helper nobody calls with such a value
    (`set_seed(args.seed, 0)`) is not reported. A helper that reads only fields of a parameter (`config["seed"]`,
    `args.seed`) given a dict written out at the call (`{"seed": args.seed, "device_id": args.device_id}`) is
    judged by those entries alone: the rank beside the seed does not reach it.

    Not reported: seeds of the data pipeline or of NumPy offset by rank (`ds.config.set_seed(seed + rank)`,
    `np.random.seed(seed + rank)`), constant seeds, random draws in modules that show no sign of distribution,
    a seed set where the same function (or module) sets `parameter_broadcast=True`: rank 0's weights are
    broadcast to every rank before training, and open_clip's reseed for the data: the function first seeds alike
    on every rank (`random_seed(args.seed, 0)`, the same call or one named for seeding), builds the model (an
    assignment from a call), and only then seeds by rank (`random_seed(args.seed, args.rank)`).

    ## Why it matters in graph mode
    The global seed decides the initial weights, so ranks seeded differently start from different models while
    data parallelism averages their gradients as if they were one: training silently degrades. Measured on
    MindSpore 2.10 (CPU): `set_seed(7)` and `set_seed(7 + 1)` give different `nn.Dense(4, 3)` weights,
    `set_seed(7)` twice the same ones; `ms.set_seed(1)` also seeds numpy and `random` (same draws as
    `np.random.seed(1)`/`random.seed(1)`). Beware too that `ds.config.set_seed` reseeds numpy and `random` (its
    docstring says so) and the initializers draw from numpy: measured, `ms.set_seed(1)` followed by
    `ds.config.set_seed(1 + rank)` gives different weights per rank, so set rank-dependent data seeds after the
    network is built (or shard the dataset with `num_shards`/`shard_id` instead).

    ## Front ends
    The helper's callers are a project fact: the CLI and pylint (`-j N` too) see every module. flake8 and the
    language server see one file: a call and its helper in two files are reported by neither half.

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
        seed = _seed_argument(ctx, node)
        if seed is None:
            return
        scope = enclosing_function(node) or ctx.tree
        what = _dependence(ctx, seed, scope, _DEPTH)
        if what is None:
            return
        if what.startswith("a random") and not any(m in ctx.source.text for m in DISTRIBUTED_MARKERS):
            return
        if _broadcasts_parameters(ctx, scope) or _reseeds_after_building(ctx, node, enclosing_function(node)):
            return
        yield self.report(ctx, node, call=_shown(ctx, node), what=what)

    def collect(self, ctx):
        """Helpers that seed with a parameter, and calls that pass a rank or a random value: which call reaches
        which helper is a fact of the project (`judge`)."""
        text = ctx.source.text
        seeds = "set_seed" in text
        # a call can pass the rank or a random draw only where the module spells one
        passes = _spells_any_needle(ctx)
        if not seeds and not passes:
            return None
        helpers, calls = {}, []
        module = ctx.graph.imports.module
        # helpers and callees by the file that defines them: two projects' `utils.seed_all` are two helpers
        locate = functools.partial(locate_in, ctx.graph.index, module=module, path=ctx.path)
        seed_names = {"set_seed"} | {local for local, qualname in ctx.graph.imports.names.items()
                                     if qualname in GLOBAL_SEEDS}
        depends: dict = {}  # scope -> _may_depend, asked once per scope instead of once per call
        # each call with the def or lambda around it from one sweep of the walk (not a climb per call)
        for node, function in ctx.walk.with_enclosing_def(ast.Call, lambdas=True):
            seed = _seed_argument(ctx, node) if seeds and spelled_name(node.func) in seed_names else None
            if seed is None and (not passes or not node.args and not node.keywords):
                continue
            if seed is None:
                scope = function or ctx.tree
                may = depends.get(scope)
                if may is None:
                    may = depends[scope] = _may_depend(ctx, scope)
                if not may:
                    continue
            if seed is not None and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and function in ctx.tree.body:
                parameters, fields = _parameters_reaching(ctx, seed, function)
                if parameters:
                    (row, column), (end_row, end_column) = ctx.start(node), ctx.end(node)
                    helpers[locate(f"{module}.{function.name}")] = {
                        "parameters": parameters, "fields": fields, "span": [row, column, end_row, end_column],
                        "call": _shown(ctx, node), "module": module}
                continue
            if seed is not None:
                continue
            qualname = ctx.names.qualname(node.func) or ""
            if not qualname or not ctx.graph.index.may_hold(qualname.partition(".")[0]):
                continue  # not a function of the project: no helper of ours
            passed, entries = _dependent_arguments(ctx, node, function or ctx.tree)
            if passed and not _broadcasts_parameters(ctx, function or ctx.tree) \
                    and not _reseeds_after_building(ctx, node, function):
                (row, column), (end_row, end_column) = ctx.start(node), ctx.end(node)
                calls.append({"callee": locate(qualname), "arguments": passed, "entries": entries,
                              "span": [row, column, end_row, end_column], "call": _shown(ctx, node)})
        return {"helpers": helpers, "calls": calls} if helpers or calls else None

    def judge(self, project):
        helpers = {name: (path, helper) for path, facts in project.modules.items() if facts
                   for name, helper in facts["helpers"].items()}
        reported = set()
        for path, facts in project.modules.items():
            for call in facts.get("calls", ()) if facts else ():
                found = _helper_called(helpers, call["callee"])
                if found is None or not project.can_cite(path, found[1][0]):
                    continue
                name, (helper_path, helper) = found
                what = _passed_to_seed(call, helper)
                if what is None:
                    continue
                span = call["span"]
                yield self.report_at(project, path, ((span[0], span[1]), (span[2], span[3])), call=call["call"],
                                     what=f"{what}, which `{name.rpartition('.')[2]}` (in `{helper['module']}`) "
                                          f"passes to `mindspore.set_seed`")
                if name not in reported:
                    reported.add(name)
                    span = helper["span"]
                    yield self.report_at(project, helper_path, ((span[0], span[1]), (span[2], span[3])),
                                         call=helper["call"], what=f"{what} (passed by `{call['call']}`)")


def _reseeds_after_building(ctx, call: ast.Call, function) -> bool:
    """Is `call` open_clip's reseed for the data: the same function first seeds alike on every rank, with the same
    callee or a seeding one (`random_seed(args.seed, 0)`), then builds something (`model, preprocess =
    load(...)`), and only then seeds by rank (`random_seed(args.seed, args.rank)`): the weights are drawn before
    the rank enters (bioclip, issue 19's eleventh sample)."""
    if isinstance(function, ast.Lambda):
        return False
    scope = function or ctx.tree  # (a script's main block: the module)
    calls = ctx.walk.nodes_of(function).calls if function is not None else ctx.walk.of_kind(ctx.tree, ast.Call)
    callee, at = ctx.text(call.func), (call.lineno, call.col_offset)
    earlier = [other for other in calls
               if (other.lineno, other.col_offset) < at
               and (ctx.text(other.func) == callee or "seed" in ctx.text(other.func).lower())
               and enclosing_function(other) is function and not _dependent_arguments(ctx, other, scope)[0]]
    if not earlier:
        return False
    first = (earlier[0].lineno, earlier[0].col_offset)
    return any(isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
               and first < (node.lineno, node.col_offset) < at and enclosing_function(node) is function
               for node in ctx.walk.of_kind(scope, ast.Assign))


def _broadcasts_parameters(ctx, scope) -> bool:
    """Does `scope` (a function, or the module) set `parameter_broadcast=True` (`set_auto_parallel_context`)?
    Then rank 0's weights are sent to every rank before training, whatever each rank's seed drew (vglaw's GPU
    branch: `parameter_broadcast=True` beside `set_seed(args.seed + local_rank)`)."""
    if "parameter_broadcast" not in ctx.source.text:
        return False
    return any(keyword.arg == "parameter_broadcast" and isinstance(keyword.value, ast.Constant)
               and keyword.value.value is True
               for call in ctx.walk.subtree(scope) if isinstance(call, ast.Call) for keyword in call.keywords)


def _may_depend(ctx, scope) -> bool:
    """Can a value in `scope` (a function, or the module) depend on the rank or a random draw: does its text
    spell one, or does it read a module global whose value does (`_seed = np.random.randint(1000)`)?"""
    return ctx.memo((_may_depend, scope), lambda: _spells_dependence(ctx, scope))


def _spells_dependence(ctx, scope) -> bool:
    if scope is ctx.tree:
        spelled = _spells_any_needle(ctx)
    else:
        spelled = _holds_needle(ctx, scope)
    if spelled:
        return True
    dependent = ctx.memo(_spells_dependence, lambda: frozenset(
        target.id for statement in ctx.tree.body if isinstance(statement, ast.Assign)
        and _holds_needle(ctx, statement.value)
        for target in statement.targets if isinstance(target, ast.Name)))
    return bool(dependent) and any(name in dependent for name in ctx.walk.nodes_of(scope).loads)


def _holds_needle(ctx, node: Any) -> bool:  # a def, a lambda or an expression
    """Does the node's text hold a needle? Only if one of its rows does (`_needle_rows`, found once per module:
    searching each function's lines was 1.5 % of a run); a row strictly inside the node is all its own, only a
    needle on its first or last row alone needs its text searched."""
    rows = _needle_rows(ctx)
    first = bisect.bisect_left(rows, node.lineno)
    if first == len(rows) or rows[first] > node.end_lineno:
        return False
    if rows[first] < node.end_lineno and (rows[first] > node.lineno or (
            first + 1 < len(rows) and rows[first + 1] < node.end_lineno)):
        return True
    return any(needle in ctx.text(node) for needle in _DEPENDENT_NEEDLES)


def _needle_rows(ctx) -> List[int]:
    """The rows of the module's lines that hold a needle, ascending (in the module's memo)."""
    text = ctx.source.text
    return ctx.memo(_needle_rows, lambda: sorted(set().union(*(rows_spelling(text, needle)
                                                               for needle in _DEPENDENT_NEEDLES))))


def _spells_any_needle(ctx) -> bool:
    return bool(_needle_rows(ctx))


def _seed_argument(ctx, node: ast.Call) -> Optional[ast.expr]:
    """The seed of a `mindspore.set_seed(...)` call, else None."""
    if not isinstance(node, ast.Call) or ctx.names.qualname(node.func) not in GLOBAL_SEEDS:
        return None
    return node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "seed"), None)


def _shown(ctx, node: ast.Call) -> str:
    call = " ".join(ctx.text(node).split())
    return call if len(call) <= 60 else f"{ctx.text(node.func)}(...)"


def _parameters_reaching(ctx, seed: ast.expr, function) -> Tuple[dict, dict]:
    """{parameter: index} for the parameters of `function` the seed is computed from (through its locals), and
    {parameter: [field, ...]} for those it reads only through fields (`args.seed`, `config["seed"]`)."""
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    names = set(positional) | {a.arg for a in function.args.kwonlyargs}
    found: dict = {}
    fields: dict = {}
    whole: set = set()  # parameters read as a whole somewhere
    seen: set = set()
    stack = [seed]
    while stack:
        expr = stack.pop()
        for node in ast.walk(expr):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
                continue
            if node.id in names and not _assigned(ctx, function, node.id):
                field = _field_read(node)
                if field is None:
                    whole.add(node.id)
                else:
                    fields.setdefault(node.id, []).append(field)
            if node.id not in seen:
                seen.add(node.id)
                assigned = _assigned(ctx, function, node.id)
                if assigned:
                    stack.extend(assigned)
                elif node.id in names:
                    found[node.id] = positional.index(node.id) if node.id in positional else -1
    return found, {name: sorted(set(read)) for name, read in fields.items() if name not in whole}


def _field_read(name: ast.Name) -> Optional[str]:
    """"seed" for `args.seed` or `args["seed"]`, None for any other use of the name."""
    parent: Any = parent_of(name)
    if isinstance(parent, ast.Attribute) and parent.value is name:
        return parent.attr
    if isinstance(parent, ast.Subscript) and parent.value is name and isinstance(parent.slice, ast.Constant) \
            and isinstance(parent.slice.value, str):
        return parent.slice.value
    return None


def _dependent_arguments(ctx, call: ast.Call, scope) -> Tuple[dict, dict]:
    """{index or keyword: what rank-dependent or random value it is} for a call's arguments, and for those that
    are dicts written out (`{"seed": args.seed, "device_id": args.device_id}`, or a name bound only to such):
    {index or keyword: {key: what}} with the keys whose values are."""
    passed: dict = {}
    entries: dict = {}
    given = [(str(index), argument) for index, argument in
             enumerate(itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args))]
    given += [(keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg is not None]
    for key, argument in given:
        what = _dependence(ctx, argument, scope, _DEPTH)
        if what is None:
            continue
        passed[key] = what
        written = _dict_written_out(ctx, argument, scope)
        if written is not None:
            entries[key] = {name: found for name, value in written.items()
                            if (found := _dependence(ctx, value, scope, _DEPTH)) is not None}
    return passed, entries


def _dict_written_out(ctx, expr: ast.expr, scope) -> Optional[dict]:
    """{key: value} of a dict display with string keys, or of the one such display a name is bound to."""
    if isinstance(expr, ast.Name):
        values = _assigned(ctx, scope, expr.id)
        if len(values) != 1:
            return None
        expr = values[0]
    if not isinstance(expr, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                 for k in expr.keys):
        return None
    return {key.value: value for key, value in zip(expr.keys, expr.values) if isinstance(key, ast.Constant)}


def _helper_called(helpers: dict, callee: str):
    """The helper a call names: its qualified name, or the one helper of that name under the same package (a
    package re-exports it: `from mindcv.utils import set_seed` for `mindcv.utils.random.set_seed`)."""
    if callee in helpers:
        return callee, helpers[callee]
    package, _, last = callee.rpartition(".")
    if not package:
        return None
    found = [name for name in helpers if name.endswith(f".{last}") and name.startswith(f"{package}.")]
    return (found[0], helpers[found[0]]) if len(found) == 1 else None


def _passed_to_seed(call: dict, helper: dict) -> Optional[str]:
    """What rank-dependent or random value the call passes to a parameter the helper seeds with; for a parameter
    the helper reads only through fields (`args.seed`) and a dict written out at the call, only those entries
    count (MC-GRA's `{"seed": args.seed, ..., "device_id": args.device_id}`: issue 19's tenth sample)."""
    arguments, entries, fields = call["arguments"], call.get("entries", {}), helper.get("fields", {})
    for parameter, index in helper["parameters"].items():
        key = parameter if parameter in arguments else str(index) if index >= 0 else None
        what = arguments.get(key) if key is not None else None
        if what is not None and parameter in fields and key in entries:
            what = next((entries[key][field] for field in fields[parameter] if field in entries[key]), None)
        if what is not None:
            return what
    return None


def _dependence(ctx, expr: ast.AST, scope, depth: int) -> Optional[str]:
    """What rank-dependent or random value `expr` is built from, or None."""
    parameters = _parameters(ctx, scope)
    for node in walk(expr):  # `ast.walk`'s order without the singletons (`Load()`, `Add()`) none looks at
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
            if node.id in parameters:
                # what a caller passes is judged at the call (`judge`); a default is the function's own value
                default = _defaults(ctx, scope).get(node.id)
                found = _dependence(ctx, default, ctx.tree, depth - 1) if default is not None and depth > 0 else None
                if found is not None:
                    return f"{found}, the default of `{node.id}`"
                continue
            if RANK_NAMES.match(node.id):
                return f"the rank (`{node.id}`)"
            if depth > 0:
                found = ctx.memo((_dependence, scope, node.id), lambda name=node.id: _name_dependence(
                    ctx, name, scope, depth - 1))
                if found is not None:
                    return found
    return None


def _name_dependence(ctx, name: str, scope, depth: int) -> Optional[str]:
    """`_dependence` of what a function's (or the module's) own body assigns to `name`, or of the module global
    (`_seed = np.random.randint(1000)` at module level: drawn in each process); computed once per name
    (`ctx.memo`), which also ends cycles (`x = x + 1`)."""
    local = _assigned(ctx, scope, name)
    for value in local:
        found = _dependence(ctx, value, scope, depth)
        if found is not None:
            return found
    if not local and scope is not ctx.tree and name not in _parameters(ctx, scope):
        for value in _assigned(ctx, ctx.tree, name):
            found = _dependence(ctx, value, ctx.tree, depth)
            if found is not None:
                return found
    return None


def _parameters(ctx, function) -> FrozenSet[str]:
    """The names of the parameters of a def or lambda (none for the module), once per function: asked for every
    name `_dependence` meets."""
    return ctx.memo((_parameters, function), lambda: frozenset(
        parameter_names(function) if getattr(function, "args", None) is not None else ()))


def _defaults(ctx, function) -> Dict[str, ast.expr]:
    """`parameter_defaults` of a def or lambda, once per function."""
    return ctx.memo((_defaults, function), lambda: parameter_defaults(function.args))


def _assigned(ctx, scope, name: str) -> List[ast.expr]:
    """Values assigned to `name` in the function (or module) body, not in nested definitions: read off the
    binding index the module's walk keeps (a walk of each function of its own cost a second on mindone)."""
    function = None if scope is ctx.tree else scope
    values: List[ast.expr] = []
    for node in bindings.binders(ctx.walk, function, name):
        if function is not None and enclosing_function(node) is not function:
            continue  # a nested def's own local
        if isinstance(node, ast.Assign):
            values.extend(node.value for target in node.targets
                          if isinstance(target, ast.Name) and target.id == name)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) \
                and node.target.id == name and node.value is not None:
            values.append(node.value)
    return values


def _rank_variable(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value in RANK_VARIABLES
