from __future__ import annotations

import ast

from ms_lint.analysis import framework, training_api
from ms_lint.rule import Rule


class AmpLevelWithoutLossScaleOnCpu(Rule):
    """
    ## What it does
    When the device target is CPU, finds `Model(net, loss_fn, optimizer, amp_level="O2")` and
    `build_train_network(net, optimizer, loss_fn, level="O2")` that keep the default loss scale manager, and those
    given a loss scale manager that updates its scale (`DynamicLossScaleManager()`, `FixedLossScaleManager(...)`
    without `drop_overflow_update=False`), at any level.

    The target is the `target` option, else what the module itself passes to `set_context(device_target=...)` /
    `set_device(...)`, else what the project passes anywhere. Not reported: an explicit
    `loss_scale_manager=None` or `FixedLossScaleManager(..., drop_overflow_update=False)`; a manager held in a
    variable or passed through `**kwargs`; `Model(...)` without an optimizer (no train network is built); levels
    that are not constants; other targets, and `any`.

    ## Why it matters in graph mode
    Level O2 brings a default `DynamicLossScaleManager` (mindspore/train/amp.py `_config_level`), whose update cell
    the CPU backend does not support. Measured on MindSpore 2.10 (CPU): `Model(net, loss, opt, amp_level="O2")`
    and `build_train_network(..., level="O2")` raise, when the train network is built:

        ValueError: Only `loss_scale_manager=None` or
        `loss_scale_manager=FixedLossScaleManager(drop_overflow_update=False)`are supported on device `CPU`.

    The same error comes with `loss_scale_manager=DynamicLossScaleManager()` at `O0`, and with
    `FixedLossScaleManager(1024.)` (it drops overflowing steps by default). `O0`, `O1`, `O3` and `"auto"` have no
    default manager and build fine on CPU (measured; the catalog row also names O3, which does not raise);
    `loss_scale_manager=None` and `FixedLossScaleManager(1024., drop_overflow_update=False)` make O2 build.

    ## Example
    ```python
    ms.set_context(device_target="CPU")
    model = Model(net, loss_fn, optimizer, amp_level="O2")
    ```

    ## Use instead
    ```python
    ms.set_context(device_target="CPU")
    model = Model(net, loss_fn, optimizer, amp_level="O2",
                  loss_scale_manager=ms.FixedLossScaleManager(1024.0, drop_overflow_update=False))
    ```

    ## Fix
    None: which static scale (or none) suits the model is a training decision.

    ## Front ends
    A module rule whose target is a project setting: the CLI, pylint and flake8 all scan the project for
    `set_device`/`set_context(device_target=...)` (see `ms_lint/analysis/compile_context.py`), so a target set in
    `train.py` applies to a `Model(...)` in `trainer.py` in every front end.
    """

    code = "MSL051"
    name = "amp-level-without-loss-scale-on-cpu"
    severity = "warning"
    scope = "module"
    message = ("`{api}(..., {what})` raises on CPU when it builds the train network: {why}; pass "
               "`loss_scale_manager=None` or `FixedLossScaleManager(..., drop_overflow_update=False)`")
    needles = ("amp_level", "loss_scale_manager", "build_train_network")
    call_names = framework.last_names(training_api.MODEL, training_api.BUILD_TRAIN_NETWORK)

    def visit_call(self, node: ast.Call, ctx):
        api = training_api.api_of(ctx.names.qualname(node.func))
        if api not in ("Model", "build_train_network") or not training_api.has_optimizer(node, api):
            return
        loss_scale = training_api.loss_scale_kind(node, api, ctx.names.qualname)
        if loss_scale == "default":
            level_arg = training_api.level_argument(node, api)
            if training_api.module_constant(ctx.tree, level_arg) != "O2":
                return
            what = f"{'amp_level' if api == 'Model' else 'level'}={ctx.text(level_arg)}"
            why = "level O2 adds a `DynamicLossScaleManager`, whose update cell CPU does not support"
        elif loss_scale == "updating":
            manager = training_api.argument(node, "loss_scale_manager", None)
            what = f"loss_scale_manager={_short(ctx.text(manager))}"
            why = "a loss scale manager that updates its scale needs an update cell CPU does not support"
        else:
            return
        if ctx.target != "cpu":
            return
        yield self.report(ctx, node, api=api, what=what, why=why)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 50 else text[:47] + "..."
