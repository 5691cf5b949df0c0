"""Networks in training scripts, across the modules of a project: what each network is built from, which
`to_float` precision exceptions it gets, and what trains it. Shared by the project rules MSL050 and MSL052.

The facts of one module are JSON-able (they are cached and, under `pylint -j`, sent between processes). A network
value is described by *keys*, strings that name the same object in every module that can reach it:

* `class:<qualname>`: an instance of that class (resolved through imports and re-exports);
* `local:<module>:<function>#<line>:<name>`, `global:<module>.<name>`: a variable;
* `param:<function qualname>:<index or name>`: a parameter, so that `keep_fp32(net)` reaches the casts made by
  `def keep_fp32(network)` in another module;
* `call:<function qualname>`: what a project function returns (`net = create_network()`);
* `attr:<class qualname>.<name>`: what a class stores on `self.<name>`.

Edges between keys (`links`) say what a key contains: a class its base classes and the Cells its `__init__`
builds, a function call what the function returns, a variable passed to a function that function's parameter.
A cast reaches a network when one of its keys is reachable from the network's keys (`reaches`). Order matters
in one place: a cast made, or a casting helper called, after an AMP call on the same variable of the same function
is applied after the re-cast and does not count for that call. Heuristic limits: the analysis is otherwise
flow-insensitive within a function (every assignment of a name counts), follows networks through
variables, calls, wrappers (`WithLossCell(net, loss)`), attributes, `cells_and_names()` loops and objects that
store a constructor argument (`Trainer(net)` then `Model(self.network, ...)` in a method), but not through
containers or registries (`create_model("resnet50")` resolves only to what the project function returns).
"""
from __future__ import annotations

import ast
import re
from functools import cached_property
from itertools import islice
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from ms_lint.analysis import framework
from ms_lint.analysis.compile_context import facts_of_module
from ms_lint.analysis.imports import ImportMap

MODEL = frozenset({"mindspore.Model", "mindspore.train.Model", "mindspore.train.model.Model"})
BUILD_TRAIN_NETWORK = frozenset({"mindspore.build_train_network", "mindspore.amp.build_train_network",
                                 "mindspore.train.amp.build_train_network", "mindspore.train.build_train_network"})
AUTO_MIXED_PRECISION = frozenset({"mindspore.amp.auto_mixed_precision", "mindspore.train.amp.auto_mixed_precision",
                                  "mindspore.auto_mixed_precision"})
TRAIN_ONE_STEP = frozenset({"mindspore.nn.TrainOneStepCell", "mindspore.nn.wrap.TrainOneStepCell",
                            "mindspore.nn.wrap.cell_wrapper.TrainOneStepCell"})
LOSS_SCALE_NAMES = ("LossScaleManager", "LossScaler", "TrainOneStepWithLossScaleCell", "scale_sense")
# (network argument, level argument name and position, optimizer position) of each AMP entry point
_SIGNATURES = {
    "Model": ("network", ("amp_level", 6), 2),
    "build_train_network": ("network", ("level", 3), 1),
    "auto_mixed_precision": ("network", ("amp_level", 1), None),
    "TrainOneStepCell": ("network", None, 1),
}
# `to_float` exceptions AMP O2 keeps by itself: `_auto_black_list` / `_do_keep_batchnorm_fp32` cast these
# classes back to float32 (mindspore/train/amp.py AMP_BLACK_LIST, measured for BatchNorm1d).
AMP_O2_FP32_CLASSES = frozenset({"mindspore.nn.BatchNorm1d", "mindspore.nn.BatchNorm2d",
                                 "mindspore.nn.BatchNorm3d", "mindspore.nn.LayerNorm"})
_FLOAT_TYPES = ("float16", "float32", "bfloat16")
# Cell methods that return the Cell itself
_RETURNS_SELF = frozenset({"to_float", "set_train", "set_grad", "add_flags", "add_flags_recursive", "shard",
                           "recompute", "set_boost", "set_jit_config"})
_CELL_ITERATORS = frozenset({"cells_and_names", "cells", "name_cells", "_cells"})
_MAX_DEPTH = 12
_FP16_NEEDLES = ("onv3", "sort(", "Sort(", "topk(", "TopK(", "daptive_max_pool1d", "daptiveMaxPool1d")
# modules that may cast or train (the others only contribute what their Cells and factories contain)
_FULL = re.compile(r"to_float\(|amp_level|build_train_network|auto_mixed_precision|TrainOneStep|\bModel\(")
_FULL_NEEDLES = ("to_float(", "amp_level", "build_train_network", "auto_mixed_precision", "TrainOneStep")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BINDING_NODES = (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension)  # see _bind
# what `_sort_out` does with a node, by its class (node classes are final: one look-up per node)
_STEP, _BINDING, _NESTED, _IMPORT = range(4)
_ROLES = {**{kind: _STEP for kind in (ast.Call, ast.Return)}, **{kind: _BINDING for kind in _BINDING_NODES},
          **{kind: _NESTED for kind in _SCOPES}, ast.Import: _IMPORT, ast.ImportFrom: _IMPORT}


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


def module_target(tree: ast.Module, path: str) -> Optional[str]:
    """The device target a module sets itself with a constant (`set_context(device_target="CPU")`...)."""
    targets = facts_of_module(tree, path)[1]
    return targets[0][0] if targets else None


def target_of(settings, module_target_: Optional[str], compile_context) -> str:
    """The option wins, then what the module sets itself (a script of a project that also has an Ascend script
    runs on what it says), then what the project sets anywhere, else "any"."""
    return settings.target or module_target_ or compile_context.target or "any"


def constant_string(expr: Optional[ast.AST], bindings: Iterable[ast.AST] = ()) -> Optional[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    values = list(bindings)
    if isinstance(expr, ast.Name) and len(values) == 1:
        return constant_string(values[0])
    return None


def argument(call: ast.Call, name: str, position: Optional[int]) -> Optional[ast.expr]:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position is not None and position < len(call.args) and \
            not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        return call.args[position]
    return None


def api_of(qualname: Optional[str]) -> Optional[str]:
    """"Model", "build_train_network", "auto_mixed_precision", "TrainOneStepCell" or None."""
    for api, names in (("Model", MODEL), ("build_train_network", BUILD_TRAIN_NETWORK),
                       ("auto_mixed_precision", AUTO_MIXED_PRECISION), ("TrainOneStepCell", TRAIN_ONE_STEP)):
        if qualname in names:
            return api
    return None


def level_argument(call: ast.Call, api: str) -> Optional[ast.expr]:
    spec = _SIGNATURES[api][1]
    return argument(call, *spec) if spec else None


def has_optimizer(call: ast.Call, api: str) -> bool:
    position = _SIGNATURES[api][2]
    return position is None or _given(argument(call, "optimizer", position))


def loss_scale_kind(call: ast.Call, api: str, qualname: Callable[[ast.expr], Optional[str]]) -> str:
    """"default" (not given), "none" (None), "static" (FixedLossScaleManager(..., drop_overflow_update=False),
    `sens=`), "updating" (DynamicLossScaleManager, FixedLossScaleManager dropping overflows: an update cell, which
    CPU rejects), "unknown" (a variable, **kwargs)."""
    if any(k.arg is None for k in call.keywords):
        return "unknown"
    if api == "TrainOneStepCell":
        return "static" if argument(call, "sens", 2) is not None else "default"
    value = argument(call, "loss_scale_manager", None)
    if value is None:
        return "default"
    if isinstance(value, ast.Constant) and value.value is None:
        return "none"
    if isinstance(value, ast.Call):
        name = (qualname(value.func) or "").rpartition(".")[2]
        if name == "DynamicLossScaleManager":
            return "updating"
        if name == "FixedLossScaleManager":
            drop = argument(value, "drop_overflow_update", 1)
            return "static" if isinstance(drop, ast.Constant) and drop.value is False else "updating"
    return "unknown"


def module_constant(tree: ast.Module, expr: Optional[ast.expr]) -> Optional[str]:
    """A string literal, or a module-level name assigned one string literal once."""
    if isinstance(expr, ast.Name):
        values = [s.value for s in tree.body if isinstance(s, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == expr.id for t in s.targets)]
        return constant_string(expr, values)
    return constant_string(expr)


def closure(keys: Iterable[str], links: Dict[str, Iterable[str]], skip=frozenset()) -> Set[str]:
    """Every key reachable from `keys` through `links`, not using the (source, target) pairs in `skip`."""
    seen = set(keys)
    stack = list(seen)
    while stack:
        source = stack.pop()
        for target in links.get(source, ()):
            if target not in seen and (source, target) not in skip:
                seen.add(target)
                stack.append(target)
    return seen


def merge_links(modules: Iterable[dict], kinds: Tuple[str, ...] = ("links", "passes")) -> Dict[str, List[str]]:
    """The links of every module together (`passes` only, or with what keys contain)."""
    links: Dict[str, List[str]] = {}
    for facts in modules:
        for kind in kinds:
            for source, targets in facts.get(kind, {}).items():
                links.setdefault(source, []).extend(targets)
    return links


def reaches(network_keys: Iterable[str], cast_keys: Iterable[str], forward: Dict[str, List[str]],
            passes: Dict[str, List[str]], skip=frozenset()) -> bool:
    """Does a cast made on `cast_keys` apply to the network named by `network_keys`? Either the network contains
    (or is passed as) what was cast, or the network is a parameter that the cast object was passed to. The two
    directions are never chained: a helper called with many networks must not make them one. `skip`: the
    argument passings that come after the call being judged (a cast made later is not reset by it)."""
    cast_keys = set(cast_keys)
    if cast_keys & closure(network_keys, forward, skip):
        return True
    return bool(set(network_keys) & closure(cast_keys, passes, skip))


class _Scope:
    def __init__(self, graph, node, name: str, owner: Optional[str], self_name: Optional[str], in_init: bool):
        self.graph = graph
        self.node = node
        self.name = name  # "<module>" or the function's qualified name with its line
        self.owner = owner  # the qualname of the class a method belongs to
        self.self_name = self_name
        self.in_init = in_init  # a method of a Cell reachable from its __init__
        self.bindings: Dict[str, List[Tuple[str, object]]] = {}
        self._params: Optional[Dict[str, Optional[int]]] = None
        self._nodes: Optional[List[ast.AST]] = None
        self._parts: Optional[_Parts] = None
        self.top_level = False
        self.imports: Optional[ImportMap] = None

    @property
    def params(self) -> Dict[str, Optional[int]]:
        """Parameter name -> its position (None: keyword-only), without a method's `self`; made on first use."""
        if self._params is None:
            self._params = {} if isinstance(self.node, ast.Module) else \
                _parameters(self.node, self.self_name is not None)
        return self._params

    def param_keys(self, name: str) -> List[str]:
        """The `param:` keys of a parameter: by position and by name."""
        if name not in self.params:
            return []
        qualname = self.name.rpartition("#")[0]
        index = self.params[name]
        return [f"param:{qualname}:{name}"] if index is None else [f"param:{qualname}:{index}",
                                                                   f"param:{qualname}:{name}"]

    @property
    def nodes(self) -> List[ast.AST]:
        if self._nodes is None:
            self._nodes = _scope_nodes(self.graph, self.node)
        return self._nodes

    @property
    def parts(self) -> "_Parts":
        """What the analysis reads of `nodes`, sorted out in one pass (without making that list)."""
        if self._parts is None:
            self._parts = _sort_out(self.graph, _scope_ranges(self.graph, self.node))
        return self._parts


class _Parts:
    """A scope's calls and returns (`steps`) and binding nodes, each in preorder, the definitions directly in it,
    and whether it imports names itself."""

    __slots__ = ("steps", "bindings", "definitions", "imports")

    def __init__(self):
        self.steps: List[ast.AST] = []
        self.bindings: List[ast.AST] = []
        self.definitions: List[ast.AST] = []
        self.imports = False


class TrainingFacts:
    """What one module contributes: casts, AMP and training calls, and the links between network keys."""

    def __init__(self, ctx, full: bool):
        self.ctx = ctx
        self.graph = ctx.graph
        self.module = ctx.source.module_name or "<module>"
        self.links: Dict[str, Set[str]] = {}  # what a key contains: returns, bases, Cells built in __init__
        self.passes: Dict[str, Set[str]] = {}  # an object passed as an argument -> the parameter that receives it
        self.skips: Dict[str, List[list]] = {}  # AMP call id -> the passings made after it, on its network
        self._amp_calls: Dict[str, List[tuple]] = {}  # scope name -> (position, call id, network identity keys)
        self.casts: List[dict] = []
        self.calls: List[dict] = []  # Model / build_train_network / auto_mixed_precision / TrainOneStepCell
        self.fp16_ops: Dict[str, List[list]] = {}  # class qualname -> [[op, row]]
        self.scopes: Dict[ast.AST, _Scope] = {}
        self._memo: Dict[Tuple[int, int], Tuple[frozenset, frozenset, Optional[str]]] = {}
        self._attributes: Dict[Tuple[str, str], List[Tuple[_Scope, ast.expr]]] = {}
        self._canonical_names: Dict[str, str] = {}
        self.implements_amp = False
        self.target = module_target(ctx.tree, ctx.path) if "device_target" in ctx.source.text or \
            "set_device" in ctx.source.text else None
        # modules without casts or training calls only contribute what their Cells and functions contain
        self.full = full
        self._build_scopes()
        for scope in self.active:
            self._walk(scope)

    # the module's text is searched only when its answer is needed
    @cached_property
    def _loss_scale_text(self) -> bool:
        return any(name in self.ctx.source.text for name in LOSS_SCALE_NAMES)

    @cached_property
    def _fp16_text(self) -> bool:
        return any(needle in self.ctx.source.text for needle in _FP16_NEEDLES)

    # ----- scopes and bindings --------------------------------------------------------------------------------
    def _build_scopes(self) -> None:
        tree = self.ctx.tree
        module_scope = self.scopes[tree] = _Scope(self.graph, tree, "<module>", None, None, False)
        pending = [(node, f"{self.module}") for node in module_scope.parts.definitions]
        while pending:  # functions, methods and (in full modules) nested functions
            node, prefix = pending.pop()
            if isinstance(node, ast.ClassDef):
                pending.extend((s, f"{prefix}.{node.name}") for s in node.body if isinstance(s, _DEFINITIONS))
                continue
            scope = self._function_scope(node, prefix)
            scope.top_level = prefix == self.module
            if self.full:
                pending.extend((sub, f"{scope.name.rpartition('#')[0]}.<locals>") for sub in scope.parts.definitions)
        for function in self._init_reachable():
            self.scopes[function].in_init = True
        self.active = [scope for scope in self.scopes.values() if self._is_active(scope)]
        for scope in self.active:
            for node in scope.parts.bindings:
                self._bind(scope, node)

    def _is_active(self, scope: _Scope) -> bool:
        """Modules without casts or training calls only contribute what their factories return, the Cells their
        Cells build, and (when the text mentions one) the float16 operators their Cells use."""
        return self.full or scope.node is self.ctx.tree or scope.top_level or scope.in_init or (
            self._fp16_text and scope.owner is not None)

    def _function_scope(self, node, prefix: str) -> _Scope:
        owner = self.graph.owner_class(node)
        owner_name = self._canonical(owner.qualname) if owner is not None else None
        args = node.args.posonlyargs + node.args.args
        self_name = args[0].arg if owner is not None and args and not _is_static(node) else None
        qualname = f"{owner_name}.{node.name}" if owner_name else f"{prefix}.{node.name}"
        scope = self.scopes[node] = _Scope(self.graph, node, f"{qualname}#{node.lineno}", owner_name, self_name,
                                             False)
        levels = {a.arg for a in (*args, *node.args.kwonlyargs) if a.arg in ("amp_level", "level")}
        if levels and not self.implements_amp:  # `if amp_level == "O2": ...`: the module implements AMP itself
            self.implements_amp = any(isinstance(sub, ast.Compare) and _compares_level(sub, levels)
                                      for sub in scope.nodes)
        return scope

    def _init_reachable(self) -> Set[ast.AST]:
        """Methods of Cell classes that run when an instance is built: `__init__` and what it calls on self."""
        reachable: Set[ast.AST] = set()
        for cell in self.graph.cells.values():
            methods = {s.name: s for s in cell.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
            stack = [methods["__init__"]] if "__init__" in methods else []
            while stack:
                method = stack.pop()
                if method in reachable or method not in self.scopes:
                    continue
                reachable.add(method)
                self_name = self.scopes[method].self_name
                for sub in self.scopes[method].parts.steps:
                    if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                            isinstance(sub.func.value, ast.Name) and sub.func.value.id == self_name and \
                            sub.func.attr in methods:
                        stack.append(methods[sub.func.attr])
        return reachable

    def _bind(self, scope: _Scope, node: ast.AST) -> None:
        kind = node.__class__  # one of `_BINDING_NODES`
        if kind is ast.Assign:
            for target in node.targets:
                self._bind_target(scope, target, node.value)
        elif kind is ast.AnnAssign or kind is ast.NamedExpr:
            if node.value is not None:
                self._bind_target(scope, node.target, node.value)
        else:  # a for loop or a comprehension
            owner = _cell_iteration_owner(node.iter)
            if owner is not None:
                for name in _names(node.target):
                    scope.bindings.setdefault(name, []).append(("cells", owner))

    def _bind_target(self, scope: _Scope, target: ast.expr, value: ast.expr) -> None:
        kind = target.__class__
        if kind is ast.Name:
            scope.bindings.setdefault(target.id, []).append(("value", value))
        elif kind is ast.Attribute:
            if target.value.__class__ is ast.Name and scope.self_name and target.value.id == scope.self_name:
                self._attributes.setdefault((scope.owner, target.attr), []).append((scope, value))
        elif (kind is ast.Tuple or kind is ast.List) and isinstance(value, (ast.Tuple, ast.List)) and \
                len(target.elts) == len(value.elts):
            for sub_target, sub_value in zip(target.elts, value.elts):
                self._bind_target(scope, sub_target, sub_value)

    # ----- keys ----------------------------------------------------------------------------------------------
    def keys(self, expr: ast.AST, scope: _Scope, depth: int = 0) -> Tuple[frozenset, frozenset, Optional[str]]:
        """(identity keys, class keys, the class when `expr` is rooted at `self` in one of its methods)."""
        memo_key = (id(expr), id(scope))
        if memo_key in self._memo:
            return self._memo[memo_key]
        if depth > _MAX_DEPTH:
            return frozenset(), frozenset(), None
        self._memo[memo_key] = (frozenset(), frozenset(), None)  # cycles through bindings end here
        result = self._keys(expr, scope, depth)
        self._memo[memo_key] = result
        return result

    def _keys(self, expr, scope: _Scope, depth: int):
        identity: Set[str] = set()
        classes: Set[str] = set()
        rooted = None
        if isinstance(expr, ast.Name):
            return self._name_keys(expr.id, scope, depth)
        if isinstance(expr, (ast.Attribute, ast.Subscript)):
            base = expr.value
            if isinstance(expr, ast.Attribute) and isinstance(base, ast.Name) and base.id == scope.self_name:
                identity.add(f"attr:{scope.owner}.{expr.attr}")
                for value_scope, value in self._attributes.get((scope.owner, expr.attr), ()):
                    sub_identity, sub_classes, _ = self.keys(value, value_scope, depth + 1)
                    identity |= sub_identity
                    classes |= sub_classes
                return frozenset(identity), frozenset(classes), scope.owner
            if isinstance(expr, ast.Attribute) and self._qualname(expr, scope) is not None:
                return frozenset({f"global:{self._qualname(expr, scope)}"}), frozenset(), None
            return self.keys(base, scope, depth + 1)  # a sub-cell reached through the network
        if isinstance(expr, ast.IfExp):
            for branch in (expr.body, expr.orelse):
                sub = self.keys(branch, scope, depth + 1)
                identity |= sub[0]
                classes |= sub[1]
                rooted = rooted or sub[2]
            return frozenset(identity), frozenset(classes), rooted
        if isinstance(expr, ast.Call):
            return self._call_keys(expr, scope, depth)
        return frozenset(), frozenset(), None

    def _name_keys(self, name: str, scope: _Scope, depth: int):
        if scope.self_name and name == scope.self_name:
            return frozenset(), frozenset({f"class:{scope.owner}"}), scope.owner
        identity: Set[str] = set()
        classes: Set[str] = set()
        rooted = None
        module_scope = self.scopes[self.ctx.tree]
        if name in scope.bindings or name in scope.params:
            if scope is module_scope:
                identity.add(f"global:{self.module}.{name}")
            else:
                identity.add(f"local:{self.module}:{scope.name}:{name}")
            identity.update(scope.param_keys(name))
            for kind, value in scope.bindings.get(name, ()):
                sub = self.keys(value, scope, depth + 1)
                identity |= sub[0]
                classes |= sub[1]
                rooted = rooted or sub[2]
            return frozenset(identity), frozenset(classes), rooted
        if scope is not module_scope and name in module_scope.bindings:
            return self._name_keys(name, module_scope, depth + 1)
        qualname = self.graph.imports.resolve(name)
        if qualname and not qualname.startswith("builtins."):
            identity.add(f"global:{qualname}")
        return frozenset(identity), frozenset(), None

    def _call_keys(self, call: ast.Call, scope: _Scope, depth: int):
        identity: Set[str] = set()
        classes: Set[str] = set()
        rooted = None
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _RETURNS_SELF:
            return self.keys(func.value, scope, depth + 1)
        qualname = self._qualname(func, scope)
        if qualname is None:
            return frozenset(), frozenset(), None
        last = qualname.rpartition(".")[2]
        if last[:1].isupper():
            classes.add(f"class:{self._canonical(qualname)}")
            arguments = [*call.args, *(k.value for k in call.keywords)]  # a wrapper Cell holds what it is given
        else:
            identity.add(f"call:{self._canonical(qualname)}")
            arguments = call.args[:1]  # `net = prepare(net)`: most helpers hand back their first argument
            if qualname in AUTO_MIXED_PRECISION:
                identity.add(self._amp_key(call))  # this call's result, which comes back cast
        for arg in arguments:
            if isinstance(arg, ast.Starred):
                continue
            sub = self.keys(arg, scope, depth + 1)
            identity |= sub[0]
            classes |= sub[1]
            rooted = rooted or sub[2]
        return frozenset(identity), frozenset(classes), rooted

    def _qualname(self, expr: ast.AST, scope: _Scope) -> Optional[str]:
        root = expr
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return None
        if root.id == scope.self_name or root.id in scope.bindings or root.id in scope.params:
            return None
        if scope.node is not self.ctx.tree and root.id in self.scopes[self.ctx.tree].bindings:
            return None
        return self._imports_of(scope).qualname(expr)

    def _imports_of(self, scope: _Scope) -> ImportMap:
        """The module's imports, with the function's own when it imports names itself."""
        if scope.imports is None:
            scope.imports = self.graph.imports
            # the statements of a function's body outside nested scopes, where its own imports are
            if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and scope.parts.imports:
                scope.imports = ImportMap.of_block(scope.node.body, self.graph.imports.module,
                                                   self.graph.imports.is_package, self.graph.imports,
                                                   define_locals=False)
        return scope.imports

    def _canonical(self, qualname: str) -> str:
        """A class or function by the module that defines it, through re-exports (`from .model import Net`)."""
        found = self._canonical_names.get(qualname)
        if found is None:
            found = self._canonical_names[qualname] = self._follow_exports(qualname)
        return found

    def _follow_exports(self, qualname: str) -> str:
        if framework.is_framework(qualname):
            return qualname
        for _ in range(8):
            module_name, _, attr = qualname.rpartition(".")
            path = self.graph.index.find(module_name) if module_name else None
            if path is None or not path.endswith("__init__.py"):
                return qualname  # imported from the module that defines it (or not from the project)
            summary = self.graph.index.module(module_name)
            if summary is None or attr in summary.classes or attr in summary.functions:
                return qualname
            target = summary.imports.names.get(attr)
            if not target or target == qualname:
                return qualname
            qualname = target
        return qualname

    # ----- facts ---------------------------------------------------------------------------------------------
    def _link(self, source: str, targets: Iterable[str], kind: str = "links") -> None:
        targets = [t for t in targets if t != source]
        if targets:
            getattr(self, kind).setdefault(source, set()).update(targets)

    def _walk(self, scope: _Scope) -> None:
        node = scope.node
        function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        call_key = f"call:{scope.name.rpartition('#')[0]}"
        compiled = scope.owner is not None and node in self.graph.compiled
        # elsewhere than in methods, a call matters only in modules that cast or train
        calls_matter = self.full or scope.owner is not None
        for sub in scope.parts.steps if function or calls_matter else ():
            if sub.__class__ is ast.Return:
                if function and sub.value is not None:
                    identity, classes, _ = self.keys(sub.value, scope)
                    self._link(call_key, identity | classes)
                continue
            if not calls_matter:
                continue
            qualname = self._qualname(sub.func, scope)
            if scope.in_init and scope.owner and qualname and qualname.rpartition(".")[2][:1].isupper():
                self._link(f"class:{scope.owner}", [f"class:{self._canonical(qualname)}"])
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
                qualname = self._canonical(cell.summary.qualname)
                self._link(f"class:{qualname}", [f"class:{self._canonical(b)}" for b in cell.summary.bases if b])

    def _passes(self, call: ast.Call, scope: _Scope, qualname: str) -> None:
        """`keep_fp32(net)`: the object `net` names reaches the parameter of the called project function."""
        if framework.is_framework(qualname) or not any(isinstance(a, (ast.Name, ast.Attribute)) for a in
                                                       (*call.args, *(k.value for k in call.keywords))):
            return
        qualname = self._canonical(qualname)
        if qualname.rpartition(".")[2][:1].isupper():
            qualname += ".__init__"  # a class: its __init__ receives the arguments
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            if not isinstance(arg, (ast.Name, ast.Attribute)):
                continue
            self._pass(call, scope, self.keys(arg, scope)[0], f"param:{qualname}:{index}")
        for keyword in call.keywords:
            if keyword.arg and isinstance(keyword.value, (ast.Name, ast.Attribute)):
                self._pass(call, scope, self.keys(keyword.value, scope)[0], f"param:{qualname}:{keyword.arg}")

    def _pass(self, call: ast.Call, scope: _Scope, keys, parameter: str) -> None:
        for key in keys:
            self._link(key, [parameter], "passes")
        for call_id in self._after(call, scope, keys):
            self.skips.setdefault(call_id, []).extend([key, parameter] for key in keys)

    def _after(self, node: ast.AST, scope: _Scope, identity) -> List[str]:
        """The AMP calls of the same function, on the same variable, that come before `node`: a cast made (or a
        casting helper called) after `Model(net, amp_level="O2")` is applied after the re-cast and survives
        (`build_train_network(network, level="O2")` then `keep_loss_fp32(network)`, model zoo YOLO scripts)."""
        local = {k for k in identity if k.startswith(("local:", f"global:{self.module}."))}  # this scope's names
        return [call_id for position, call_id, keys in self._amp_calls.get(scope.name, ())
                if position < (node.lineno, node.col_offset) and local & keys]

    def _cast(self, call: ast.Call, scope: _Scope) -> None:
        dtype = self._dtype(call.args[0], scope)
        if dtype is None:
            return
        receiver = call.func.value
        identity, classes, _ = self.keys(receiver, scope)
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

    def _dtype(self, expr: ast.expr, scope: _Scope) -> Optional[str]:
        if isinstance(expr, ast.Name):
            values = [v for kind, v in scope.bindings.get(expr.id, ()) if kind == "value"]
            if len(values) == 1 and len(scope.bindings.get(expr.id, ())) == 1:
                expr = values[0]
        qualname = self._qualname(expr, scope)
        if qualname and framework.is_framework(qualname) and qualname.rpartition(".")[2] in _FLOAT_TYPES:
            return qualname.rpartition(".")[2]
        return None

    def _o2_keeps(self, call: ast.Call, receiver: ast.expr, scope: _Scope, classes) -> bool:
        """True when every Cell the exception applies to is one AMP O2 keeps in float32 by itself: built as one
        (`nn.BatchNorm2d(...).to_float(...)`), an attribute only ever assigned one (`net.bn`), or a loop variable
        under `if isinstance(cell, (nn.BatchNorm2d, nn.LayerNorm)):`."""
        if isinstance(receiver, ast.Call):
            return bool(classes) and all(c[len("class:"):] in AMP_O2_FP32_CLASSES for c in classes)
        if isinstance(receiver, ast.Attribute):
            owners = self.keys(receiver.value, scope)[1]
            values = [v for owner in owners for v in self._attributes.get((owner[len("class:"):], receiver.attr), ())]
            kinds = {c for value_scope, value in values for c in self.keys(value, value_scope)[1]}
            return bool(kinds) and all(c[len("class:"):] in AMP_O2_FP32_CLASSES for c in kinds)
        if isinstance(receiver, ast.Name):
            for node in scope.nodes:
                if isinstance(node, ast.If) and any(call is sub for stmt in node.body for sub in ast.walk(stmt)):
                    checked = _isinstance_classes(node.test, receiver.id)
                    if checked:
                        return all(self._qualname(c, scope) in AMP_O2_FP32_CLASSES for c in checked)
        return False

    def _training_call(self, call: ast.Call, scope: _Scope, api: str) -> None:
        network = argument(call, "network", 0)
        if network is None:
            return
        identity, classes, _ = self.keys(network, scope)
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
            "loss_scale": loss_scale_kind(call, api, lambda e: self._qualname(e, scope)),
            "optimizer": has_optimizer(call, api),
            "remove_level": self._level_removal(call, level_arg),
            "loss_scale_nearby": self._loss_scale_nearby(scope),
        })
        if api == "auto_mixed_precision" and level in ("O2", "O3"):
            # the network comes back cast to float16, as after `to_float(float16)`
            self.casts.append({"dtype": "float16", "keys": sorted(identity | {self._amp_key(call)}),
                               "row": call.lineno,
                               "text": _short(self.ctx.text(call)), "o2_keeps": False, "owner": "",
                               "whole": True})

    def _values(self, expr: ast.expr, scope: _Scope) -> List[ast.expr]:
        if not isinstance(expr, ast.Name):
            return []
        bindings = scope.bindings.get(expr.id) or self.scopes[self.ctx.tree].bindings.get(expr.id, [])
        return [value for kind, value in bindings if kind == "value"] if all(
            kind == "value" for kind, _ in bindings) else [expr, expr]

    def _amp_key(self, call: ast.Call) -> str:
        return f"amp:{self.module}:{call.lineno}:{call.col_offset}"

    def _loss_scale_nearby(self, scope: _Scope) -> bool:
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

    def _fp16_method(self, call: ast.Call, scope: _Scope) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("sort", "topk") and \
                self.ctx.tensors.derives(func.value):
            self.fp16_ops.setdefault(scope.owner, []).append([f"Tensor.{func.attr}", call.lineno])

    def facts(self) -> dict:
        return {
            "module": self.module,
            "links": {k: sorted(v) for k, v in self.links.items()},
            "passes": {k: sorted(v) for k, v in self.passes.items()},
            "skips": self.skips,
            "target": self.target,
        }


# Operators that are fp16-only or lose accuracy in float32 on Ascend (RULES.md MSL052; ORACLE.md case 19 quotes
# the 2.10 docstrings: Conv3d/Conv3dTranspose "only float16 in Ascend", adaptive_max_pool1d "Ascend platform only
# supports float16", Sort "If use float32, it may cause loss of accuracy"; TopK follows the migration guide).
# Qualified name under `mindspore.` -> the name messages show.
_FP16_OPERATORS = {
    "nn.Conv3d": "nn.Conv3d", "nn.Conv3dTranspose": "nn.Conv3dTranspose", "mint.nn.Conv3d": "mint.nn.Conv3d",
    "ops.Conv3D": "ops.Conv3D", "ops.operations.Conv3D": "ops.Conv3D", "ops.Conv3DTranspose": "ops.Conv3DTranspose",
    "ops.operations.Conv3DTranspose": "ops.Conv3DTranspose", "ops.conv3d": "ops.conv3d",
    "ops.conv3d_transpose": "ops.conv3d_transpose", "ops.Sort": "ops.Sort", "ops.operations.Sort": "ops.Sort",
    "ops.sort": "ops.sort", "ops.function.sort": "ops.sort", "mint.sort": "mint.sort", "ops.TopK": "ops.TopK",
    "ops.operations.TopK": "ops.TopK", "ops.topk": "ops.topk", "ops.function.topk": "ops.topk",
    "mint.topk": "mint.topk", "ops.adaptive_max_pool1d": "ops.adaptive_max_pool1d",
    "nn.AdaptiveMaxPool1d": "nn.AdaptiveMaxPool1d",
}
FP16_OPS = {f"mindspore.{name}": shown for name, shown in _FP16_OPERATORS.items()}


def _scope_nodes(graph, root: ast.AST) -> List[ast.AST]:
    """The nodes of a module body, or of a function's default values then body, in preorder, not entering nested
    functions, lambdas or classes."""
    return [node for start, end in _scope_ranges(graph, root) for node in _outside_nested(graph, start, end)]


def _scope_ranges(graph, root: ast.AST) -> List[Tuple[int, int]]:
    """Where the nodes of a module body, or of a function's default values then body, lie in the module's preorder
    (`GraphScope.order`, nested functions, lambdas and classes included): there a def's default values
    (`kw_defaults` before `defaults`) come before its body, and its decorators and return annotation after."""
    order = graph.walk.order
    start, end = graph.walk.span(root)
    if isinstance(root, ast.Module):
        return [(start + 1, end)]
    arguments = root.args
    body_start, body_end = graph.walk.body_span(root)
    defaults_start = order.index(arguments.defaults[0], start, body_start) if arguments.defaults else body_start
    ranges = [(defaults_start, body_start)]
    keyword_defaults = [d for d in arguments.kw_defaults if d is not None]
    if keyword_defaults:
        keyword_end = order.index(arguments.kwarg, start, body_start) if arguments.kwarg else defaults_start
        ranges.append((order.index(keyword_defaults[0], start, keyword_end), keyword_end))
    ranges.append((body_start, body_end))
    return ranges


def _sort_out(graph, ranges: List[Tuple[int, int]]) -> _Parts:
    """The `_Parts` of the nodes in `ranges` of the module's preorder, a nested scope skipped as a whole."""
    parts = _Parts()
    steps, bindings, definitions = parts.steps, parts.bindings, parts.definitions
    role_of = _ROLES.get
    for start, end in ranges:
        nodes = iter(graph.walk.order[start:end])
        for node in nodes:
            role = role_of(type(node))
            if role is None:
                continue
            if role == _STEP:
                steps.append(node)
            elif role == _BINDING:
                bindings.append(node)
            elif role == _NESTED:
                if not isinstance(node, ast.Lambda):
                    definitions.append(node)
                first, stop = graph.walk.span(node)
                skipped = stop - first - 1  # the nested scope's nodes
                next(islice(nodes, skipped, skipped), None)
            else:
                parts.imports = True
    return parts


def _parameters(function, method: bool) -> Dict[str, Optional[int]]:
    """Parameter name -> its position (None: keyword-only), without a method's first parameter (`self`)."""
    positional = function.args.posonlyargs + function.args.args
    found: Dict[str, Optional[int]] = {arg.arg: index for index, arg in
                                       enumerate(positional[1:] if method else positional)}
    found.update((arg.arg, None) for arg in function.args.kwonlyargs)
    return found


def _outside_nested(graph, start: int, end: int) -> List[ast.AST]:
    """`graph.walk.order[start:end]` without what nested functions, lambdas and classes hold (but with them)."""
    order, found = graph.walk.order, []
    index = start
    while index < end:
        node = order[index]
        found.append(node)
        index = graph.walk.span(node)[1] if isinstance(node, _SCOPES) else index + 1
    return found


def _names(target: ast.expr) -> Iterator[str]:
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            yield node.id


def _cell_iteration_owner(expr: ast.expr) -> Optional[ast.expr]:
    """`net` for `net.cells_and_names()`, `net.cells()`, `net.name_cells().items()`/`.values()`."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if expr.func.attr in ("items", "values") and isinstance(expr.func.value, ast.Call):
            expr = expr.func.value
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _CELL_ITERATORS:
            return expr.func.value
    return None


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


def _attr_name(expr: ast.expr) -> str:
    return expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")


def _is_static(function) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in function.decorator_list)


def _given(expr: Optional[ast.expr]) -> bool:
    return expr is not None and not (isinstance(expr, ast.Constant) and expr.value is None)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
