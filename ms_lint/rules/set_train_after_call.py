from __future__ import annotations

import ast
from typing import Any, Iterator, Optional, Set, Tuple

from ms_lint.analysis.registrations import is_name
from ms_lint.analysis.walk import enclosing_function, parent_of
from ms_lint.rule import Rule

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class SetTrainAfterCall(Rule):
    """
    ## What it does
    Finds host code that creates a network, calls it, and only then switches it to training with
    `net.set_train()` / `net.set_train(True)` (or a non-constant mode), all in the same function or module body,
    with no `set_train` before the first call. The finding is on the `set_train` call.

    Not reported: `set_train(...)` before the first call, `set_train(False)` (a new Cell is already in inference
    mode), a network that is not called itself after `set_train` while a Cell built from it is (`train_net =
    build_train_net(net)`, then `train_net(x)`: the wrapper compiles its own graph in training mode), networks
    that come from elsewhere (function parameters: their first call may have happened after a `set_train`), and
    modules that never select `GRAPH_MODE` (with `set_context(mode=...)`, or a mode read from
    elsewhere): PyNative, MindSpore 2.10's default mode, switches correctly.

    ## Why it matters in graph mode
    Measured on MindSpore 2.10 (CPU, GRAPH_MODE, LAX and STRICT alike): a new Cell has `training=False` but its
    compile phase is already `'train'`, so its first call compiles and caches the inference graph under the
    `'train'` key. A later `set_train(True)` keeps the phase and hits that cache: the net **silently keeps
    running the inference graph** (BatchNorm uses and never updates its moving statistics, Dropout is off). With
    a `BatchNorm1d`, call → `set_train(True)` → call returned the inference output and `moving_mean` stayed
    `[0, 0]`; PyNative returned the batch-normalised output and updated it to `[0.15, 0.4]`. A `set_train(False)`
    in between does not help (call → `set_train(False)` → call → `set_train(True)` → call is stale too); calling
    `set_train(True)` before the first call, and switching back and forth after it, works.

    ## Example
    ```python
    ms.set_context(mode=ms.GRAPH_MODE)
    net = ResNet()
    summary = net(sample)      # a first call, e.g. to print shapes
    net.set_train(True)
    for x, y in loader:
        train_step(x, y)
    ```

    ## Use instead
    ```python
    ms.set_context(mode=ms.GRAPH_MODE)
    net = ResNet()
    net.set_train(True)
    summary = net(sample)
    for x, y in loader:
        train_step(x, y)
    ```

    ## Fix
    None: moving `set_train` before the first call changes what that first call computes.
    """

    code = "MSL036"
    name = "set-train-after-call"
    severity = "warning"
    scope = "module"
    message = ("`{net}.set_train({mode})` after `{net}` was first called on line {line}: in GRAPH_MODE that call "
               "compiled the inference graph (training=False) and it is silently reused; call "
               "`{net}.set_train()` before the first call")
    needles = ("set_train",)
    call_names = frozenset({"set_train"})

    def visit_call(self, node: ast.Call, ctx):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "set_train" and isinstance(func.value, ast.Name)):
            return
        if _turns_training_off(node) or not ctx.memo(_may_select_graph_mode, lambda: _may_select_graph_mode(ctx)):
            return
        scope = enclosing_function(node) or ctx.tree
        if isinstance(scope, ast.Lambda):
            return
        first_call = _first_call_before(scope, func.value.id, node)
        if first_call is not None and not _only_wrappers_called_after(ctx, scope, func.value.id, node):
            mode = ", ".join(ctx.text(a) for a in (*node.args, *node.keywords))
            yield self.report(ctx, node, net=func.value.id, mode=mode, line=first_call.lineno)


def _first_call_before(scope, name: str, set_train: ast.Call) -> Optional[ast.Call]:
    """The first call of a network created in `scope` when it precedes `set_train` with no `set_train` before it,
    and `set_train` is the first switch to training after it."""
    fresh, switched = False, False
    first_call: Optional[ast.Call] = None
    node: Any
    for _, kind, node in sorted(_events(scope, name), key=lambda event: event[0]):
        if node is set_train:
            return first_call if fresh and not switched else None
        if kind == "created":
            fresh, first_call, switched = True, None, False
        elif kind == "bound":
            fresh, first_call = False, None
        elif kind == "set_train":
            if first_call is None:
                fresh = False  # switched before the first call: fine from here on
            elif not _turns_training_off(node):
                switched = True  # an earlier switch after the call is the one reported
        elif kind == "call" and first_call is None:
            first_call = node
    return None


def _only_wrappers_called_after(ctx, scope, name: str, set_train: ast.Call) -> bool:
    """After `set_train`, is the network never called itself, but a Cell built from it is (`train_net =
    build_train_net(net)`, then `train_net(x)`)? The wrapper compiles its own graph, in training mode (measured)."""
    after = (set_train.lineno, set_train.col_offset)
    wrappers = {target.id for node in ctx.walk.of_kind(scope, ast.Assign) if _in_scope(node, scope)
                and isinstance(node.value, ast.Call)
                and any(is_name(a, name) for a in ast.walk(node.value) if a is not node.value.func)
                for target in node.targets if isinstance(target, ast.Name) and target.id != name}
    called = {node.func.id for node in ctx.walk.of_kind(scope, ast.Call) if isinstance(node.func, ast.Name)
              and (node.lineno, node.col_offset) > after and _in_scope(node, scope)}
    return name not in called and bool(called & wrappers)


def _in_scope(node: ast.AST, scope: ast.AST) -> bool:
    """Is `node` in `scope` itself, not in a def, lambda or class nested in it?"""
    parent = parent_of(node)
    while parent is not None and parent is not scope:
        if isinstance(parent, _NESTED_SCOPES):
            return False
        parent = parent_of(parent)
    return True


def _events(scope, name: str) -> Iterator[Tuple[Tuple[Any, Any], str, ast.AST]]:
    """Bindings of `name`, calls `name(...)` and `name.set_train(...)` in `scope`, not in nested definitions
    (positions: the ends the parser sets on every statement and expression)."""
    stack = list(ast.iter_child_nodes(scope))
    assigned: Set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, _NESTED_SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            assigned.update(id(n) for t in node.targets for n in ast.walk(t))
            kind = _binding_kind(node.value, name)
            if kind:  # the name is bound once the value is evaluated
                yield (node.end_lineno, node.end_col_offset), kind, node
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store) \
                and id(node) not in assigned:
            yield (node.lineno, node.col_offset), "bound", node  # for/with targets, tuple unpacking...
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == name:
                yield (node.lineno, node.col_offset), "call", node
            elif isinstance(func, ast.Attribute) and func.attr == "set_train" and isinstance(func.value, ast.Name) \
                    and func.value.id == name:
                yield (node.lineno, node.col_offset), "set_train", node


def _binding_kind(value: ast.expr, name: str) -> Optional[str]:
    """"created" for a new network (`Net(...)`, `create_model(...)`), None for the same one (`net.to_float(...)`
    returns `net`), "bound" for anything unknown, such as a network switched while it is built
    (`Net().set_train()`)."""
    if any(isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "set_train" for n in ast.walk(value)):
        return "bound"
    if isinstance(value, ast.Call):
        receiver = value.func
        while isinstance(receiver, (ast.Attribute, ast.Call)):
            receiver = receiver.value if isinstance(receiver, ast.Attribute) else receiver.func
        return None if isinstance(value.func, ast.Attribute) and getattr(receiver, "id", None) == name else "created"
    return "bound"


def _turns_training_off(call: ast.Call) -> bool:
    values = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "mode")]
    return bool(values) and isinstance(values[0], ast.Constant) and values[0].value in (False, 0)


def _may_select_graph_mode(ctx) -> bool:
    """Does the module select a mode other than PYNATIVE_MODE (`set_context(mode=GRAPH_MODE)`, or a mode it reads
    from somewhere)? Without a `set_context(mode=...)` the network runs in PyNative, 2.10's default (measured:
    `get_context("mode")` is 1), where `set_train` switches correctly."""
    modes = set()
    for node in ctx.walk.of_kind(ctx.tree, ast.Call):  # the calls the module's walk indexed: no walk of its own
        if getattr(node.func, "attr", getattr(node.func, "id", "")) == "set_context":
            for keyword in node.keywords:
                if keyword.arg == "mode":
                    value = keyword.value
                    text = value.attr if isinstance(value, ast.Attribute) else getattr(
                        value, "id", getattr(value, "value", None))
                    modes.add("pynative" if text in ("PYNATIVE_MODE", 1) else "other")
    return "other" in modes
