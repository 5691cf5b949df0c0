from __future__ import annotations

import os

from ms_lint.analysis import compile_context, network_keys, training, training_api
from ms_lint.rule import Rule

_TRAINING_APIS = ("Model", "build_train_network", "TrainOneStepCell")


class AscendFp16OpWithoutLossScale(Rule):
    """
    ## What it does
    When Ascend is possible (target `ascend`, or `any`: nothing says otherwise), finds a network trained with
    `Model(net, loss_fn, optimizer)`, `build_train_network(...)` or `nn.TrainOneStepCell(...)` without a loss
    scale, whose Cells use an operator that runs in float16 on Ascend (`nn.Conv3d`, `nn.Conv3dTranspose`,
    `ops.Conv3D`, `ops.Sort`/`ops.sort`/`Tensor.sort`, `ops.TopK`/`ops.topk`/`Tensor.topk`,
    `ops.adaptive_max_pool1d`, `nn.AdaptiveMaxPool1d`, their `mint` forms), or that is cast as a whole with
    `net.to_float(float16)` (or `self.to_float(...)` in its `__init__`) / `auto_mixed_precision(net, "O2"/"O3")`.
    The finding is on the training call and names the operator and where it is. A float16 cast of one sub-cell
    (`self.encoder.to_float(ms.float16)`, often deliberate for an Ascend kernel) does not count.

    The network is followed across modules like MSL050 does (`ms_lint/analysis/training.py`): Cells built in `__init__`,
    base classes, project functions returning the network. Not reported: a `loss_scale_manager=` (other than
    `None`), `sens=`, `amp_level="O2"` (it brings a `DynamicLossScaleManager`), a level that is not a constant,
    or any loss scale manager, `DynamicLossScaler`/`StaticLossScaler`, `TrainOneStepWithLossScaleCell` or
    `scale_sense` in the function that trains (the other branch of an `if` often holds the loss-scaled form);
    targets `cpu` and `gpu`.

    ## Why it matters in graph mode
    On Ascend these operators compute in float16 whatever the network's precision: MindSpore 2.10's docstrings
    say Conv3d "only float16 in Ascend" (nn/layer/conv.py:738), Conv3dTranspose "Ascend only supports float16"
    (conv.py:975), adaptive_max_pool1d "Ascend platform only supports float16 type for input"
    (ops/function/nn_func.py:937), Sort "If use float32, it may cause loss of accuracy" (array_func.py:2807); the
    migration guide adds TopK (the 2.10 TopK primitive lists float32 on Ascend: kept here as the catalog says).
    Float16 gradients underflow to zero or overflow to inf without loss scaling, silently. **Not run**: this
    project has no Ascend machine; the facts are the MindSpore sources quoted above (ORACLE.md case 19).

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv3d(1, 4, 3)
    ...
    model = Model(Net(), loss_fn, optimizer)
    ```

    ## Use instead
    ```python
    model = Model(Net(), loss_fn, optimizer, loss_scale_manager=ms.DynamicLossScaleManager())
    ```

    ## Fix
    None: the scale policy (dynamic or fixed, its initial value) is a training decision.

    ## Front ends
    A project rule: the CLI and pylint (in `close()`, and under `-j` through map/reduce) see every linted module,
    so a `Conv3d` in `model.py` is found for the `Model(...)` in `train.py`. flake8 lints one file at a time and
    reports only when the network's Cells and the training call are in the same file.
    """

    code = "MSL052"
    name = "ascend-fp16-op-without-loss-scale"
    severity = "warning"
    scope = "module"
    message = ("`{api}({network}, ...)` trains on Ascend (target {target}) a network using `{op}` ({where}), "
               "which runs in float16 there, without a loss scale: gradients can underflow or overflow silently; "
               "pass `loss_scale_manager=DynamicLossScaleManager()` or use `TrainOneStepWithLossScaleCell`")

    def collect(self, ctx):
        facts = training.analysis(ctx)
        if facts is None:
            return None
        trains = [c for c in facts.calls if c["api"] in _TRAINING_APIS and c["optimizer"]]
        casts = [c for c in facts.casts if c["dtype"] == "float16" and c["whole"]]
        result = facts.facts()
        if not (trains or casts or facts.fp16_ops or result["links"] or result["passes"]):
            return None
        result.update(trains=trains, casts=casts, fp16_ops=facts.fp16_ops)
        return result

    def judge(self, project):
        modules = project.modules
        forward = network_keys.merge_links(modules.values())
        passes = network_keys.merge_links(modules.values(), ("passes",))
        ops = {}
        for path, facts in modules.items():
            for owner, found in facts.get("fp16_ops", {}).items():
                ops.setdefault(f"class:{owner}", []).extend((path, op, row) for op, row in found)
        casts = [(path, cast) for path, facts in modules.items() for cast in facts.get("casts", ())]
        for path, facts in modules.items():
            if not facts.get("trains"):
                continue
            target = compile_context.target_of(project.settings, facts.get("target"), project.compile_context)
            if target not in ("ascend", "any"):
                continue
            for call in facts["trains"]:
                if _has_loss_scale(call):
                    continue
                evidence = self._evidence(project, path, call, network_keys.closure(call["keys"], forward), ops,
                                          casts, forward, passes)
                if evidence is not None:
                    op, where_path, row = evidence
                    where = f"line {row}" if where_path == path else f"{os.path.basename(where_path)}:{row}"
                    yield self.report_at(project, path, ((call["span"][0], call["span"][1]),
                                                         (call["span"][2], call["span"][3])),
                                         api=call["api"], network=call["network"], target=target, op=op,
                                         where=where)

    @staticmethod
    def _evidence(project, path, call, reach, ops, casts, forward, passes):
        """(operator or cast, its path, its row) making the trained network run in float16, if any: only code
        that runs with the training call's file (`ProjectFacts.can_cite`)."""
        for key in sorted(reach):
            for op_path, op, row in ops.get(key, ()):
                if project.can_cite(path, op_path):
                    return op, op_path, row
        for cast_path, cast in casts:
            if project.can_cite(path, cast_path) and network_keys.reaches(call["keys"], cast["keys"], forward,
                                                                          passes):
                return cast["text"], cast_path, cast["row"]
        for key in sorted(reach):
            shown = training_api.FP16_OPS.get(key[len("class:"):]) if key.startswith("class:") else None
            if shown:
                return shown, path, call["span"][0]
        return None


def _has_loss_scale(call) -> bool:
    if call["loss_scale"] in ("static", "updating", "unknown") or call["loss_scale_nearby"]:
        return True
    if call["level_given"] and call["level"] is None:
        return True  # a level computed at run time may be O2
    return call["loss_scale"] == "default" and call["level"] == "O2" and call["api"] != "TrainOneStepCell"
