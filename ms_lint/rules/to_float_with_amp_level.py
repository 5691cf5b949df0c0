from __future__ import annotations

import os

from ms_lint.analysis import network_keys, training
from ms_lint.rule import Edit, Fix, Rule

_LEVEL_NAMES = {"Model": "amp_level", "build_train_network": "level", "auto_mixed_precision": "amp_level"}


class ToFloatWithAmpLevel(Rule):
    """
    ## What it does
    Finds a network that gets a `to_float(float32)` (or `bfloat16`) precision exception and is then handed to
    `Model(..., amp_level="O2"/"O3")`, `build_train_network(..., level="O2"/"O3")` or
    `auto_mixed_precision(net, "O2"/"O3")`. The finding is on the call that sets the level and names the cast.

    The cast and the AMP call may sit in different modules: the exception can be made in the network's own
    `__init__` (`self.head.to_float(ms.float32)`, in every instance of the class and of the classes that build
    it), on a variable (`net.fc.to_float(...)`, a `for _, cell in net.cells_and_names()` loop), in a project
    function that returns the network or receives it as an argument. See `ms_lint/analysis/training.py` for how networks
    are followed, and its limits (containers, registries, networks stored on non-Cell objects are not followed).

    Not reported: either half alone; an exception made after the AMP call in the same function (applied after
    the re-cast, it survives: measured); `O0`/`O1` (they keep the exception: measured); `to_float(float16)` with
    O2/O3 (redundant, harmless); O2 with exceptions only on BatchNorm1d/2d/3d or LayerNorm cells (O2 keeps those
    in float32 itself: measured); levels that are not constants; modules that implement AMP themselves (a
    function taking `amp_level`/`level` that compares it with `"O0"`...`"O3"`).

    ## Why it matters in graph mode
    O2 and O3 call `to_float(float16)` on the whole network, which sets the float16 flag on every sub-cell and
    clears the float32 one (`Cell.to_float` is recursive; "multiple calls will overwrite previous settings"). A
    custom exception made before is **silently lost**: no error, no warning. Measured on MindSpore 2.10 (CPU,
    GRAPH_MODE): a sub-cell adding `1e-4` to `1.0` after `to_float(ms.float32)` returns `1.0001`; after
    `auto_mixed_precision(net, "O2")` (or `"O3"`, or `build_train_network(..., level="O2"/"O3")`) its flags read
    `fp16=True, fp32=False` and it returns `1.0` exactly. With `"O1"` the flags and the result are unchanged.
    O2 re-casts BatchNorm and LayerNorm back to float32 by itself (its black list), O3 does not.

    ## Example
    ```python
    net = Net()
    for _, cell in net.cells_and_names():
        if isinstance(cell, nn.Softmax):
            cell.to_float(ms.float32)
    model = Model(net, loss_fn, opt, amp_level="O2")
    ```

    ## Use instead
    ```python
    net = Net()
    net.to_float(ms.float16)
    for _, cell in net.cells_and_names():
        if isinstance(cell, nn.Softmax):
            cell.to_float(ms.float32)
    model = Model(net, loss_fn, opt, loss_scale_manager=ms.DynamicLossScaleManager())
    ```
    or keep the level and make the exceptions after the AMP call, on the network it returns or wraps (measured:
    they survive, as in the model zoo's `build_train_network(..., level="O2")` followed by `keep_loss_fp32`).

    ## Fix
    Unsafe: removes the `amp_level=`/`level=` argument, keeping the custom policy. Removing it also removes what
    the level brought: the float16 cast of the rest of the network (add `net.to_float(ms.float16)` first if that
    was intended) and, for O2, the default `DynamicLossScaleManager` (pass a `loss_scale_manager`).

    ## Front ends
    A project rule: the CLI and pylint (in `close()`, and under `-j` through map/reduce) see every linted module
    and report a cast in `model.py` against the `Model(...)` in `train.py`. flake8 lints one file at a time and
    reports only when the cast and the AMP call are in the same file.
    """

    code = "MSL050"
    name = "to-float-with-amp-level"
    severity = "warning"
    scope = "module"
    message = ("`{api}(..., {level_text})` re-casts `{network}` to float16 and silently resets the exception "
               "`{cast}` ({where}): O2/O3 call `to_float(float16)` on the whole network; keep one policy")
    fix_applicability = "unsafe"

    def collect(self, ctx):
        facts = training.analysis(ctx)
        if facts is None or facts.implements_amp:
            return None
        casts = [c for c in facts.casts if c["dtype"] != "float16"]
        calls = [c for c in facts.calls if c["api"] in _LEVEL_NAMES and c["level"] in ("O2", "O3")]
        result = facts.facts()
        if not (casts or calls or result["links"] or result["passes"]):
            return None
        result.update(casts=casts, calls=calls)
        return result

    def judge(self, project):
        modules = project.modules
        forward = network_keys.merge_links(modules.values())
        passes = network_keys.merge_links(modules.values(), ("passes",))
        casts = [(path, cast) for path, facts in modules.items() for cast in facts.get("casts", ())]
        for path, facts in modules.items():
            for call in facts.get("calls", ()):
                skip = {tuple(pair) for pair in facts.get("skips", {}).get(call["id"], ())}
                for cast_path, cast in casts:
                    if (cast["o2_keeps"] and call["level"] == "O2") or call["id"] in cast["after"] or \
                            not project.can_cite(path, cast_path):
                        continue
                    if network_keys.reaches(call["keys"], cast["keys"], forward, passes, skip):
                        yield self._report(project, path, call, cast_path, cast)
                        break

    def _report(self, project, path, call, cast_path, cast):
        row, column, end_row, end_column = call["span"]
        where = f"line {cast['row']}" if cast_path == path else f"{os.path.basename(cast_path)}:{cast['row']}"
        if cast["owner"]:
            where = f"in `{cast['owner']}.__init__`, {where}"
        fix = None
        if call["remove_level"]:
            start_row, start_column, stop_row, stop_column = call["remove_level"]
            fix = Fix("unsafe", f"Remove `{_LEVEL_NAMES[call['api']]}` and keep the custom `to_float` policy",
                      (Edit("", (start_row, start_column), (stop_row, stop_column)),))
        level_text = f"{_LEVEL_NAMES[call['api']]}={call['level_text']}"
        return self.report_at(project, path, ((row, column), (end_row, end_column)), fix=fix, api=call["api"],
                              level_text=level_text, network=call["network"], cast=cast["text"], where=where)
