from __future__ import annotations

from typing import Dict, Optional, Set

from ms_lint.analysis.seeds import ScriptSeeds
from ms_lint.fixing import edits
from ms_lint.rule import Edit, Fix, Import, Rule


class DistributedWithoutSeed(Rule):
    """
    ## What it does
    Finds an entry script that starts distributed training (`mindspore.communication.init()`, or
    `set_auto_parallel_context(parallel_mode=DATA_PARALLEL/SEMI_AUTO_PARALLEL/AUTO_PARALLEL/HYBRID_PARALLEL)`)
    without seeding the weight initialisation before the network is built. The finding is on the `init()` call
    (else on `set_auto_parallel_context`).

    An *entry script* has `if __name__ == "__main__":` or is a `train*.py` that is not part of a package (a
    library's `trainer.py` is not). It must also train: an optimizer (a MindSpore optimizer class, a call whose
    name mentions `optim`), `TrainOneStep*`, `value_and_grad`/`GradOperation`, a `.train(...)` call, or a name
    starting with `train`; eval/export scripts stay silent. A seed counts when it is set anywhere in the script
    (module level, the `__main__` block, any function) or by a project function the script calls (directly or
    through other project functions, in any module) or at import time of a project module it imports, except
    when, in the function that calls `init()`, every seed comes after the network is built (a Cell created, or
    `create_model()`-like call): then it is too late and reported. Seeds: `set_seed` (`mindspore`,
    `mindspore.dataset.config`), `np.random.seed`, and functions of other libraries named like `*seed*`. A call
    into a project module that was not linted counts as a possible seed when that module (or a project module it
    imports) mentions `seed`. How scripts are read: `ms_lint/analysis/seeds.py`. Also silent:
    `parameter_broadcast=True` (rank 0's weights are broadcast), library helpers that call `init()` (not entry
    scripts). A script that loads a checkpoint into a network whenever its function runs (not under an `if` or
    in a loop), before training in that function (`load_checkpoint`, `load_param_into_net`, `load_state_dict`
    followed by an optimizer or `.train(...)`; `from_pretrained` anywhere) gets a warning instead of the error: a
    checkpoint of every weight makes the ranks start alike, one of a pretrained backbone leaves the new head to
    each rank's draw, and which it is the source does not show.

    ## Why it matters in graph mode
    Without a seed every process draws its own initial weights, so the ranks of a data-parallel job start from
    different models and average gradients of different models: training silently degrades. Measured on
    MindSpore 2.10 (CPU): two fresh processes building `nn.Dense(4, 3)` get different weights; after
    `ms.set_seed(1)` they are identical. `ms.set_seed(1)` also seeds numpy and `random` (draws equal
    `np.random.seed(1)`), and the initializers draw from numpy's generator (`np.random.seed(3)` alone makes the
    weights reproducible; `random.seed(3)` alone does not). **Not run**: `communication.init()` itself cannot run
    on this one-CPU machine (2.10 raises `RuntimeError: Maybe you are trying to call
    'mindspore.communication.init()' without using 'mpirun'…`), so the multi-rank effect is inferred from the
    per-process one, not observed.

    ## Example
    ```python
    from mindspore.communication import init

    def main():
        init()
        net = Net()
        model = Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9))

    if __name__ == "__main__":
        main()
    ```

    ## Use instead
    ```python
    def main():
        ms.set_seed(1)
        init()
        net = Net()
    ```

    ## Fix
    Unsafe: inserts `ms.set_seed(1)` (with the module's MindSpore alias, importing `set_seed` if MindSpore is not
    imported) on its own line before the `init()` statement, when that statement starts its line. The value is
    arbitrary, and seeding also fixes the data order and augmentations numpy draws: runs become reproducible.

    ## Front ends
    A project rule: the CLI and pylint (in `close()`, and under `-j` through map/reduce) see every linted module
    and follow seeds into setup modules. flake8 lints one file at a time: a call into another project module
    that mentions `seed` (itself or through its project imports) then counts as a possible seed, so flake8
    reports a subset of what the CLI reports.
    """

    code = "MSL053"
    name = "distributed-without-seed"
    severity = "error"
    scope = "module"
    message = ("`{call}` starts distributed training in an entry script that {problem}: every rank initialises "
               "different weights{unless}; call `set_seed(...)` before building the network")
    fix_applicability = "unsafe"

    def collect(self, ctx):
        facts = ScriptSeeds.of(ctx).facts()  # the module's memo: shared, left as it is
        events = [{**event, "fix": _seed_before(ctx, *event["statement"])} for event in facts.get("distributed", ())]
        return {**facts, "distributed": events}

    def judge(self, project):
        modules = {facts["module"]: facts for facts in project.modules.values()}
        seeders = _seeding_functions(modules.values())
        defined = {q for facts in modules.values() for q in facts.get("functions", {})}
        for path, facts in project.modules.items():
            events = facts.get("distributed")
            if not (events and facts["entry"] and facts["training"]) or facts["broadcast"]:
                continue
            problem = _problem(facts, modules, seeders, defined)
            if problem is None:
                continue
            event = next((e for e in events if e["kind"] == "init"), events[0])
            fix = None
            if event["fix"]:
                row, column, content, imports = event["fix"]
                fix = Fix("unsafe", "Insert a `set_seed` call before it",
                          (Edit.insert((row, column), content),), tuple(Import(*i) for i in imports))
            span = event["span"]
            loads = facts.get("loads")
            unless = f", unless `{loads[0][1]}` (line {loads[0][0]}) loads every weight from a checkpoint" \
                if loads else ""
            yield self.report_at(project, path, ((span[0], span[1]), (span[2], span[3])), fix=fix,
                                 call=event["text"], problem=problem, unless=unless,
                                 severity="warning" if loads else None)


def _seed_before(ctx, row: int, column: int) -> Optional[list]:
    """The fix's insertion, as JSON-able facts: a `set_seed(1)` line before the statement at (row, column), or None
    when the statement does not start its line (`if distributed: init()`: no place for a statement before it)."""
    line = ctx.source.line(row)
    indentation = line[: len(line) - len(line.lstrip())]
    if column != len(indentation):
        return None
    spelling, imports = edits.reference(ctx.graph, "mindspore.set_seed")
    return [row, column, f"{spelling}(1)\n{indentation}", [[i.module, i.name] for i in imports]]


def _problem(facts, modules, seeders, defined) -> Optional[str]:
    """Why the script's weights are not seeded, or None when they are (or may be)."""
    def unknown(module: str) -> bool:  # not linted, and its text mentions seeds: it may seed
        return module not in modules and module in facts["seed_mentions"]

    def seeds(qualname: str) -> bool:
        if qualname in seeders:
            return True
        # not defined where it is imported from: re-exported (`from .random import *` in a package __init__)
        # or in a module not linted; a seeding helper by its name counts
        return qualname not in defined and ("seed" in qualname.rpartition(".")[2].lower()
                                            or unknown(facts["call_modules"].get(qualname, "")))

    if any(modules.get(m, {}).get("module_seed") or unknown(m) for m in facts["imports"]):
        return None  # seeded when the script imports it
    late = False
    for scope, events in facts["scopes"].items():
        seeding = [row for row, kind, target in events if kind == "seed" or (kind == "call" and seeds(target))]
        if not seeding:
            continue
        if scope != facts["init_scope"]:
            return None
        builds = [row for row, kind, _ in events if kind == "build"]
        if not builds or min(seeding) < min(builds):
            return None
        late = True
    return "seeds only after building the network" if late else "never calls `set_seed`"


def _seeding_functions(modules) -> Set[str]:
    """Project functions that seed, directly or through the project functions they call (any module)."""
    functions: Dict[str, dict] = {}
    for facts in modules:
        functions.update(facts.get("functions", {}))
    seeding = {q for q, f in functions.items() if f["seeds"]}
    changed = True
    while changed:
        changed = False
        for qualname, function in functions.items():
            if qualname not in seeding and any(c in seeding for c in function["calls"]):
                seeding.add(qualname)
                changed = True
    return seeding
