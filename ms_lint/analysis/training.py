"""Networks in training scripts, across the modules of a project: what each network is built from, which
`to_float` precision exceptions it gets, and what trains it. Shared by the project rules MSL050 and MSL052.

The keys that name networks across modules are `ms_lint.analysis.network_keys`'s; the APIs that train and cast,
`ms_lint.analysis.training_api`'s.
"""
from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import Dict, Iterable, List, Optional, Set, cast

from ms_lint.analysis import framework
from ms_lint.analysis.network_keys import NetworkKeys, Scope
from ms_lint.analysis.training_api import (
    AMP_O2_FP32_CLASSES,
    FLOAT_TYPES,
    FP16_OPS,
    LOSS_SCALE_NAMES,
    api_of,
    argument,
    constant_string,
    has_optimizer,
    level_argument,
    loss_scale_kind,
)

_FP16_NEEDLES = ("onv3", "sort(", "Sort(", "topk(", "TopK(", "daptive_max_pool1d", "daptiveMaxPool1d")
# modules that may cast or train (the others only contribute what their Cells and factories contain)
_FULL = re.compile(r"to_float\(|amp_level|build_train_network|auto_mixed_precision|TrainOneStep|\bModel\(")
_FULL_NEEDLES = ("to_float(", "amp_level", "build_train_network", "auto_mixed_precision", "TrainOneStep")
_FP16_OP_NAMES = frozenset(qualname.rpartition(".")[2] for qualname in FP16_OPS)  # the last names they are called by


def analysis(ctx) -> Optional["TrainingFacts"]:
    """The module's training facts, computed once per module whichever rule asks first (None: nothing there)."""
    return ctx.memo(analysis, lambda: _facts_of(ctx))


def _facts_of(ctx) -> Optional["TrainingFacts"]:
    full = _casts_or_trains(ctx.source.text)
    return TrainingFacts(ctx, full) if ctx.graph.cells or full else None


def _casts_or_trains(text: str) -> bool:
    """`_FULL.search(text)`, by plain substring searches (a regex alternation scans slowly): one of the needles,
    or `Model(` after a non-word character (`\\b`: not after a letter, digit or underscore, as in `BaseModel(`)."""
    if any(needle in text for needle in _FULL_NEEDLES):
        return True
    position = text.find("Model(")
    while position >= 0:
        if position == 0 or not (text[position - 1].isalnum() or text[position - 1] == "_"):
            return True
        position = text.find("Model(", position + 1)
    return False


class TrainingFacts:
    """What one module contributes: casts, AMP and training calls, and the links between network keys."""

    def __init__(self, ctx, full: bool):
        self.ctx = ctx
        self.graph = ctx.graph
        self.network = NetworkKeys(ctx, full)
        self.module = self.network.module  # located, as the keys name it
        self.links: Dict[str, Set[str]] = {}  # what a key contains: returns, bases, Cells built in __init__
        self.passes: Dict[str, Set[str]] = {}  # an object passed as an argument -> the parameter that receives it
        self.skips: Dict[str, List[list]] = {}  # AMP call id -> the passings made after it, on its network
        self._amp_calls: Dict[str, List[tuple]] = {}  # scope name -> (position, call id, network identity keys)
        self.casts: List[dict] = []
        self.calls: List[dict] = []  # Model / build_train_network / auto_mixed_precision / TrainOneStepCell
        self.fp16_ops: Dict[str, List[list]] = {}  # class qualname -> [[op, row]]
        self.target = ctx.module_target
        # modules without casts or training calls only contribute what their Cells and functions contain
        self.full = full
        self.active = [scope for scope in self.network.scopes.values() if self._is_active(scope)]
        for scope in self.active:
            for node in scope.parts.bindings:
                self.network.bind(scope, node)
        self.implements_amp = any(_implements_amp(scope) for scope in self.network.scopes.values())
        for scope in self.active:
            self._walk(scope)

    # the module's text is searched only when its answer is needed
    # the module's text is searched only when its answer is needed
    @cached_property
    def _loss_scale_text(self) -> bool:
        return any(name in self.ctx.source.text for name in LOSS_SCALE_NAMES)

    @cached_property
    def _fp16_text(self) -> bool:
        return any(needle in self.ctx.source.text for needle in _FP16_NEEDLES)

    def _is_active(self, scope: Scope) -> bool:
        """Modules without casts or training calls only contribute what their factories return, the Cells their
        Cells build, and (when the text mentions one) the float16 operators their Cells use."""
        return self.full or scope.node is self.ctx.tree or scope.top_level or scope.in_init or (
            self._fp16_text and scope.owner is not None)

    # ----- facts ---------------------------------------------------------------------------------------------
    def _link(self, source: str, targets: Iterable[str], kind: str = "links") -> None:
        targets = [t for t in targets if t != source]
        if targets:
            getattr(self, kind).setdefault(source, set()).update(targets)

    def _walk(self, scope: Scope) -> None:
        node = scope.node
        function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        call_key = f"call:{scope.name.rpartition('#')[0]}"
        compiled = scope.owner is not None and node in self.graph.compiled
        # elsewhere than in methods, a call matters only in modules that cast or train
        calls_matter = self.full or scope.owner is not None
        for sub in scope.parts.steps if function or calls_matter else ():
            if sub.__class__ is ast.Return:
                if function and sub.value is not None:
                    identity, classes, _ = self.network.keys(sub.value, scope)
                    self._link(call_key, identity | classes)
                continue
            if not calls_matter:
                continue
            qualname = self.network.qualname(sub.func, scope) if self._may_matter(sub.func, scope) else None
            if scope.in_init and scope.owner and qualname and qualname.rpartition(".")[2][:1].isupper():
                self._link(f"class:{scope.owner}", [f"class:{self.network.canonical(qualname)}"])
            if scope.owner:
                op = FP16_OPS.get(qualname or "")
                if op:
                    self.fp16_ops.setdefault(scope.owner, []).append([op, sub.lineno])
                elif compiled:
                    self._fp16_method(sub, scope)
            if not self.full:
                continue
            if isinstance(sub.func, ast.Attribute) and sub.func.attr == "to_float" and sub.args:
                self._cast(sub, scope)
                continue
            api = api_of(qualname)
            if api is not None:
                self._training_call(sub, scope, api)
            elif qualname is not None:
                self._passes(sub, scope, qualname)
        if isinstance(node, ast.Module):
            for cell in self.graph.cells.values():
                qualname = self.network.canonical(cell.summary.qualname)
                self._link(f"class:{qualname}", [f"class:{self.network.canonical(b)}" for b in cell.summary.bases if b])

    def _may_matter(self, func: ast.expr, scope: Scope) -> bool:
        """Can what `func` names matter to `_walk`? In modules that neither cast nor train only the Cells an
        `__init__` builds (capitalised names) and the float16 operators do: an attribute call named otherwise
        (`ops.matmul`, `x.view`) is not resolved (what it names ends in the same name)."""
        if self.full or func.__class__ is not ast.Attribute:
            return True
        name = cast(ast.Attribute, func).attr
        return scope.in_init and name[:1].isupper() or name in _FP16_OP_NAMES

    def _passes(self, call: ast.Call, scope: Scope, qualname: str) -> None:
        """`keep_fp32(net)`: the object `net` names reaches the parameter of the called project function."""
        if framework.is_framework(qualname) or not any(isinstance(a, (ast.Name, ast.Attribute)) for a in
                                                       (*call.args, *(k.value for k in call.keywords))):
            return
        qualname = self.network.canonical(qualname)
        if qualname.rpartition(".")[2][:1].isupper():
            qualname += ".__init__"  # a class: its __init__ receives the arguments
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            if not isinstance(arg, (ast.Name, ast.Attribute)):
                continue
            self._pass(call, scope, self.network.keys(arg, scope)[0], f"param:{qualname}:{index}")
        for keyword in call.keywords:
            if keyword.arg and isinstance(keyword.value, (ast.Name, ast.Attribute)):
                self._pass(call, scope, self.network.keys(keyword.value, scope)[0], f"param:{qualname}:{keyword.arg}")

    def _pass(self, call: ast.Call, scope: Scope, keys, parameter: str) -> None:
        for key in keys:
            self._link(key, [parameter], "passes")
        for call_id in self._after(call, scope, keys):
            self.skips.setdefault(call_id, []).extend([key, parameter] for key in keys)

    def _after(self, node: ast.Call, scope: Scope, identity) -> List[str]:
        """The AMP calls of the same function, on the same variable, that come before `node`: a cast made (or a
        casting helper called) after `Model(net, amp_level="O2")` is applied after the re-cast and survives
        (`build_train_network(network, level="O2")` then `keep_loss_fp32(network)`, model zoo YOLO scripts)."""
        local = {k for k in identity if k.startswith(("local:", f"global:{self.module}."))}  # this scope's names
        return [call_id for position, call_id, keys in self._amp_calls.get(scope.name, ())
                if position < (node.lineno, node.col_offset) and local & keys]

    def _cast(self, call: ast.Call, scope: Scope) -> None:
        dtype = self._dtype(call.args[0], scope)
        if dtype is None:
            return
        receiver = cast(ast.Attribute, call.func).value  # `<receiver>.to_float(...)`
        identity, classes, _ = self.network.keys(receiver, scope)
        keys = set(identity)
        if scope.in_init and scope.owner:
            keys.add(f"class:{scope.owner}")  # run for every instance of the class
        if not keys:
            return
        self.casts.append({
            "dtype": dtype, "keys": sorted(keys), "row": call.lineno, "text": _short(self.ctx.text(call)),
            "after": self._after(call, scope, identity),
            "o2_keeps": self._o2_keeps(call, receiver, scope, classes),
            "owner": scope.owner.rpartition(".")[2] if scope.in_init and scope.owner else "",
            "whole": isinstance(receiver, ast.Name) and (receiver.id == scope.self_name or all(
                kind == "value" for kind, _ in scope.bindings.get(receiver.id, ()))),
        })

    def _dtype(self, expr: ast.expr, scope: Scope) -> Optional[str]:
        if isinstance(expr, ast.Name):
            values = [v for kind, v in scope.bindings.get(expr.id, ()) if kind == "value"]
            if len(values) == 1 and len(scope.bindings.get(expr.id, ())) == 1:
                expr = values[0]
        qualname = self.network.qualname(expr, scope)
        if qualname and framework.is_framework(qualname) and qualname.rpartition(".")[2] in FLOAT_TYPES:
            return qualname.rpartition(".")[2]
        return None

    def _o2_keeps(self, call: ast.Call, receiver: ast.expr, scope: Scope, classes) -> bool:
        """True when every Cell the exception applies to is one AMP O2 keeps in float32 by itself: built as one
        (`nn.BatchNorm2d(...).to_float(...)`), an attribute only ever assigned one (`net.bn`), or a loop variable
        under `if isinstance(cell, (nn.BatchNorm2d, nn.LayerNorm)):`."""
        if isinstance(receiver, ast.Call):
            return bool(classes) and all(c[len("class:"):] in AMP_O2_FP32_CLASSES for c in classes)
        if isinstance(receiver, ast.Attribute):
            owners = self.network.keys(receiver.value, scope)[1]
            attributes = self.network.attributes
            values = [v for owner in owners for v in attributes.get((owner[len("class:"):], receiver.attr), ())]
            kinds = {c for value_scope, value in values for c in self.network.keys(value, value_scope)[1]}
            return bool(kinds) and all(c[len("class:"):] in AMP_O2_FP32_CLASSES for c in kinds)
        if isinstance(receiver, ast.Name):
            for node in scope.nodes:
                if isinstance(node, ast.If) and any(call is sub for stmt in node.body for sub in ast.walk(stmt)):
                    checked = _isinstance_classes(node.test, receiver.id)
                    if checked:
                        return all(self.network.qualname(c, scope) in AMP_O2_FP32_CLASSES for c in checked)
        return False

    def _training_call(self, call: ast.Call, scope: Scope, api: str) -> None:
        network = argument(call, "network", 0)
        if network is None:
            return
        identity, classes, _ = self.network.keys(network, scope)
        keys = identity | classes
        if not keys:
            return
        level_arg = level_argument(call, api)
        level = constant_string(level_arg, self._values(level_arg, scope)) if level_arg is not None else None
        call_id = f"{self.module}:{call.lineno}:{call.col_offset}"
        self._amp_calls.setdefault(scope.name, []).append(((call.lineno, call.col_offset), call_id, identity))
        self.calls.append({
            "id": call_id, "api": api, "keys": sorted(keys), "row": call.lineno,
            "span": [*self.ctx.start(call), *self.ctx.end(call)],
            "network": _short(self.ctx.text(network)),
            "level": level, "level_given": level_arg is not None,
            "level_text": _short(self.ctx.text(level_arg)) if level_arg is not None else "",
            "loss_scale": loss_scale_kind(call, api, lambda e: self.network.qualname(e, scope)),
            "optimizer": has_optimizer(call, api),
            "remove_level": self._level_removal(call, level_arg),
            "loss_scale_nearby": self._loss_scale_nearby(scope),
        })
        if api == "auto_mixed_precision" and level in ("O2", "O3"):
            # the network comes back cast to float16, as after `to_float(float16)`
            self.casts.append({"dtype": "float16", "keys": sorted(identity | {self.network.amp_key(call)}),
                               "row": call.lineno,
                               "text": _short(self.ctx.text(call)), "o2_keeps": False, "owner": "",
                               "whole": True})

    def _values(self, expr: ast.expr, scope: Scope) -> List[ast.expr]:
        if not isinstance(expr, ast.Name):
            return []
        bindings = scope.bindings.get(expr.id) or self.network.module_scope.bindings.get(expr.id, [])
        return [value for kind, value in bindings if kind == "value"] if all(
            kind == "value" for kind, _ in bindings) else [expr, expr]

    def _loss_scale_nearby(self, scope: Scope) -> bool:
        """Does the function making the training call (or the module body) use a loss scale anywhere, e.g. in
        the other branch of `if args.loss_scale > 1: TrainOneStepWithLossScaleCell(...) else: TrainOneStepCell(...)`?"""
        if not self._loss_scale_text:
            return False
        for node in scope.nodes:
            name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
            if isinstance(node, ast.keyword):
                name = node.arg
            if name and any(marker in name for marker in LOSS_SCALE_NAMES):
                return True
        return False

    def _level_removal(self, call: ast.Call, level_arg: Optional[ast.expr]) -> Optional[list]:
        """The span to delete to drop the level argument, with the comma before it; None when it is not safe."""
        if level_arg is None:
            return None
        items = [*call.args, *call.keywords]
        keyword = next((k for k in call.keywords if k.value is level_arg), None)
        node = keyword if keyword is not None else level_arg
        if keyword is None and level_arg is not call.args[-1]:
            return None  # later positional arguments would shift
        index = next(i for i, item in enumerate(items) if item is node)
        if index == 0:
            return None
        previous = items[index - 1]
        return [*self.ctx.end(previous), *self.ctx.end(node)]

    def _fp16_method(self, call: ast.Call, scope: Scope) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("sort", "topk") and \
                self.ctx.tensors.derives(func.value):
            self.fp16_ops.setdefault(scope.owner or "", []).append([f"Tensor.{func.attr}", call.lineno])

    def facts(self) -> dict:
        return {
            "module": self.module,
            "links": {k: sorted(v) for k, v in self.links.items()},
            "passes": {k: sorted(v) for k, v in self.passes.items()},
            "skips": self.skips,
            "target": self.target,
        }


def _implements_amp(scope: Scope) -> bool:
    """`if amp_level == "O2": ...` in a function taking `amp_level` or `level`: the module implements AMP itself."""
    node = scope.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    args = node.args.posonlyargs + node.args.args
    levels = {a.arg for a in (*args, *node.args.kwonlyargs) if a.arg in ("amp_level", "level")}
    return bool(levels) and any(isinstance(sub, ast.Compare) and _compares_level(sub, levels) for sub in scope.nodes)


def _isinstance_classes(test: ast.expr, name: str) -> List[ast.expr]:
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" and \
            len(test.args) == 2 and isinstance(test.args[0], ast.Name) and test.args[0].id == name:
        classes = test.args[1]
        return list(classes.elts) if isinstance(classes, ast.Tuple) else [classes]
    return []


def _compares_level(compare: ast.Compare, names: Set[str]) -> bool:
    operands = [compare.left, *compare.comparators]
    return any(isinstance(o, ast.Name) and o.id in names for o in operands) and any(
        isinstance(o, ast.Constant) and o.value in ("O0", "O1", "O2", "O3") for o in operands)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
