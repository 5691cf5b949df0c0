"""What a script seeds and where it starts distributed training: the per-module facts of MSL053.

Gathered by one sweep over the calls of a module (`ScriptSeeds.of(ctx)`) and turned into JSON-able facts by
`facts()`: whether the module is an entry script that trains, its `init()` /
`set_auto_parallel_context(parallel_mode=...)` calls with the fix inserting `set_seed` before them, the seeds,
project calls and network constructions of each function in order, the project functions that seed directly and
the project functions they call, and the project modules it imports (a module may seed at import time).
"""
from __future__ import annotations

import ast
import functools
import os
import re
import weakref
from typing import Dict, List, Optional, Set, Tuple

from ms_lint.analysis import framework
from ms_lint.analysis.imports import ImportMap, statements
from ms_lint.analysis.locations import locate_in
from ms_lint.analysis.walk import DEFS, enclosing_def, parent_of, spelled_name
from ms_lint.source import module_name

INIT = frozenset({"mindspore.communication.init", "mindspore.communication.management.init"})
PARALLEL_MODES = ("data_parallel", "semi_auto_parallel", "auto_parallel", "hybrid_parallel")
# Calls that seed what MindSpore initialises weights from (measured: `mindspore.set_seed` seeds numpy and random,
# initializers draw from numpy's generator, `mindspore.dataset.config.set_seed` reseeds numpy too).
SEEDS = frozenset({"mindspore.set_seed", "mindspore.common.set_seed", "mindspore.common.seed.set_seed",
                   "mindspore.dataset.config.set_seed", "mindspore.dataset.set_seed", "numpy.random.seed"})
NOT_SEEDS = frozenset({"random.seed"})  # measured: Python's generator alone leaves weight init unseeded
# what builds an optimizer or a training step (`create_optimizer`, `optim.Adam`): not `get_optim_policies()`
_TRAINING_CALLS = re.compile(r"^(create_|build_|make_|get_)?optim(izer)?s?$|TrainOneStep|value_and_grad|"
                             r"GradOperation|^grad$")
# calls that load a checkpoint into a network (`ms.load_param_into_net(net, params)`, `Model.from_pretrained(path)`)
_LOADS = frozenset({"load_checkpoint", "load_param_into_net", "from_pretrained", "load_state_dict"})
_NETWORK_BUILDER = re.compile(r"^(create|build|get|make|init)_?(model|network|net|backbone)s?$", re.I)
# how a module that may seed spells the call (`set_seed(`, `np.random.seed(`, `seed_everything(`), not any name
# holding "seed" (`self.c_seed = 3`, `args.seed`)
_SEED_CALLS = ("seed(", "seed (", "seeds(", "seed_everything(", "seed_all(")
_MENTION_DEPTH = 3  # project imports followed from a module that may seed (see `_mentions_seed`)
# per project index (they live as long as its Linter) and import root: module name -> is it a file of the project;
# module name -> may it seed (for modules that were not linted)
_CACHES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class ScriptSeeds:
    @classmethod
    def of(cls, ctx) -> "ScriptSeeds":
        """The facts of the module of `ctx`, from one sweep over its calls (in the module's memo)."""
        return ctx.memo(cls.of, lambda: cls._swept(ctx))

    @classmethod
    def _swept(cls, ctx) -> "ScriptSeeds":
        found = cls(ctx)
        if found.may_be_distributed:
            for call, function in ctx.walk.with_enclosing_def(ast.Call):
                found.call(call, function)
        else:
            found._sweep_seeds_and_project_calls()
        return found

    def _sweep_seeds_and_project_calls(self) -> None:
        """`call` for every call of a module that is not distributed, where only seeds and project calls are facts,
        without finding the def around each call (it ran for every call of a run): the "seed" test only where the
        text spells "seed" (else no last name holds it, but for NFKC folding other letters into an identifier: a
        non-ASCII text), and `_may_name_project` under the module's imports for a first name no def imports."""
        text = self.ctx.source.text
        spells_seed = not text.isascii() or "seed" in text.lower()
        module_imports, named = self.graph.imports, self._named
        imported_in_defs = self._names_imported_in_defs()
        attribute, name = ast.Attribute, ast.Name
        for node in self.ctx.walk.of_kind(self.ctx.tree, ast.Call):
            head = func = node.func
            if spells_seed and "seed" in (spelled_name(func) or "").lower():
                self._record(node)
                continue
            while head.__class__ is attribute:
                head = head.value
            if head.__class__ is not name:
                continue
            if head.id in imported_in_defs:
                function = enclosing_def(node)
                imports = module_imports if function is None else self._function(function)[2]
            else:  # (a def without imports of its own resolves it as the module does)
                imports = module_imports
            found = named.get((imports, head.id))
            if found is None:
                found = named[imports, head.id] = self._names_project(imports, head.id)
            if found:
                self._record(node)

    def _names_imported_in_defs(self) -> Set[str]:
        names: Set[str] = set()
        spells_import = self.graph.names.spells_import
        for scope in self.ctx.walk.scopes():
            if scope.__class__ in DEFS and spells_import(scope):
                imports = self._function(scope)[2]
                if imports is not self.graph.imports:
                    names.update(imports.names)
        return names

    def _record(self, node: ast.Call) -> None:
        function = enclosing_def(node)
        qualname, scope, imports = (None, "<module>", self.graph.imports) if function is None else \
            self._function(function)
        self._call(node, scope, qualname, imports.qualname(node.func))

    def __init__(self, ctx):
        self.ctx = ctx
        self.graph = ctx.graph
        self.module = ctx.source.module_name or "<module>"
        self.functions: Dict[str, dict] = {}
        self.scopes: Dict[str, List[list]] = {}
        self.call_modules: Dict[str, str] = {}
        self.distributed: List[dict] = []
        self.module_seed = False
        self.broadcast = False
        self.loads: List[list] = []  # [row, name, scope] of the calls that load a checkpoint into a network
        self.trains: Dict[str, List[int]] = {}  # scope -> rows of its calls that train (an optimizer built...)
        self.training = os.path.basename(ctx.path).startswith("train")
        self.imports: Set[str] = set()
        # Only an `init()` resolving to mindspore.communication or a `set_auto_parallel_context` call makes a
        # module distributed, and imports resolve within the module, so its text must spell one of them; the
        # facts only such a module reports (training, the order of events, imports) are not gathered otherwise.
        text = ctx.source.text
        self.may_be_distributed = "communication" in text or "set_auto_parallel_context" in text
        # what a module name is depends on where it is imported from (`ProjectIndex.find`): the answers are kept
        # per import root, or a `src.utils` of one project would answer for another's
        caches = _CACHES.setdefault(ctx.graph.index, {})
        self._cache = caches.setdefault(ctx.graph.index.importer_root, {"modules": {}, "mentions": {}})
        self._functions: Dict[ast.AST, Tuple[str, str, ImportMap]] = {}  # function -> (qualname, scope, imports)
        self._projects: Dict[str, Optional[str]] = {}  # qualname -> the project module defining it, or None
        self._heads: Dict[str, bool] = {}  # first name of a qualified name -> may it name a project module
        self._named: Dict[Tuple[ImportMap, str], bool] = {}  # (import map, name) -> `_may_name_project`
        if self.may_be_distributed:
            for stmt in statements(ctx.tree.body):
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    self._note_import(stmt)

    def facts(self) -> dict:
        """The facts, modules and functions named by their files (`locations.locate_in`): two projects'
        `train.py` in one repository are two modules to the judge."""
        facts = self._facts()
        locate = functools.partial(locate_in, self.graph.index, module=self.module, path=self.ctx.path)
        facts["module"] = locate(facts["module"])
        if "functions" in facts:
            facts["functions"] = {locate(name): {**function, "calls": [locate(c) for c in function["calls"]]}
                                  for name, function in facts["functions"].items()}
        if "scopes" in facts:
            facts["scopes"] = {scope: [[row, kind, locate(target) if kind == "call" else target]
                                       for row, kind, target in events] for scope, events in facts["scopes"].items()}
            facts["call_modules"] = {locate(q): locate(m) for q, m in facts["call_modules"].items()}
            facts["imports"] = sorted(map(locate, facts["imports"]))
            facts["seed_mentions"] = sorted(map(locate, facts["seed_mentions"]))
        return facts

    def _facts(self) -> dict:
        if not (self.distributed or self.functions or self.module_seed):
            return {"module": self.module}  # seen: its functions do not seed
        init_scope = self.distributed[0]["scope"] if self.distributed else None
        for event in self.distributed:
            if event["kind"] == "init":
                init_scope = event["scope"]
                break
        if not self.distributed:
            return {"module": self.module, "functions": self.functions, "module_seed": self.module_seed}
        for scope, events in self.scopes.items():
            kept = []  # networks built: only their order in the function that calls init() matters
            for row, kind, target in events:
                if kind != "maybe_build":
                    kept.append([row, kind, target])
                elif scope == init_scope and self._builds_network(target):
                    kept.append([row, "build", None])
            self.scopes[scope] = kept
        return {
            "module": self.module, "entry": self._is_entry(), "training": self.training,
            "broadcast": self.broadcast, "distributed": self.distributed, "module_seed": self.module_seed,
            "loads": [[row, name] for row, name, scope in self.loads if self._before_training(row, name, scope)],
            "functions": self.functions, "scopes": self.scopes, "init_scope": init_scope,
            "imports": sorted(self.imports), "call_modules": self.call_modules,
            "seed_mentions": sorted(m for m in {*self.imports, *self.call_modules.values()} if self._mentions_seed(m)),
        }

    def _mentions_seed(self, module: str) -> bool:
        """Could a project module seed (for modules this run did not lint, like the other files under flake8)?
        Its text, or the text of a project module it imports directly or through at most two more project
        modules, calls something named like a seed (`_SEED_CALLS`). Searched breadth first from each module
        asked about: a result cached for a module met on the way would depend on the order the modules are asked
        about (an import cycle, the depth at which a module is first met)."""
        mentions = self._cache["mentions"]
        if module not in mentions:
            # a module this run lints has facts of its own, and the judge asks only about the others: no search
            # (it parsed whole import chains on mindone)
            path = self.graph.index.find(module)
            # ...under the same name: `src.utils` of a directory without `__init__.py` is linted as `utils`, and
            # the judge, which knows modules by the name they were linted under, asks about `src.utils`
            linted = self.graph.index.is_linted(path) and module_name(path or "") == module
            mentions[module] = not linted and self._seed_within(module, _MENTION_DEPTH)
        return mentions[module]

    def _seed_within(self, module: str, depth: int) -> bool:
        index = self.graph.index
        seen, level = {module}, [module]
        for distance in range(depth + 1):
            following = []
            for name in level:
                if index.find(name) is None:
                    continue
                if index.spells(name, _SEED_CALLS):
                    return True
                summary = index.module(name) if distance < depth else None
                for target in summary.imports.names.values() if summary else ():
                    imported = self._project_module_of(target)
                    if imported and imported not in seen:
                        seen.add(imported)
                        following.append(imported)
            level = following
        return False

    def _project_module_of(self, qualname: str) -> Optional[str]:
        parts = qualname.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            if self._is_project_module(module):
                return module
        return None

    def _is_entry(self) -> bool:
        tree = self.ctx.tree
        if any(isinstance(s, ast.If) and _is_main_guard(s.test) for s in tree.body):
            return True
        path = self.ctx.path
        return os.path.basename(path).startswith("train") and \
            not os.path.exists(os.path.join(os.path.dirname(os.path.abspath(path)), "__init__.py"))

    def call(self, node: ast.Call, function: Optional[ast.AST]) -> None:
        """Record a call of the module; `function` is the innermost def around it (its own def for a call in a
        decorator or a default)."""
        if function is None:
            qualname, scope, imports = None, "<module>", self.graph.imports
        else:
            qualname, scope, imports = self._function(function)
        func = node.func
        if not self.may_be_distributed and "seed" not in (spelled_name(func) or "").lower() \
                and not self._may_name_project(func, imports):
            return  # outside distributed modules only seeds and project calls are facts (`_kind`): neither
        self._call(node, scope, qualname, imports.qualname(func))

    def _may_name_project(self, func: ast.expr, imports: ImportMap) -> bool:
        """Can `imports.qualname(func)` name something in this module or another project module? Its first name
        must then be this module's or name an entry of an import root (`ProjectIndex.find`): `ops.matmul(...)`,
        `np.sum(...)`, `self.f(...)`, `len(...)` cannot."""
        while func.__class__ is ast.Attribute:
            func = func.value
        if func.__class__ is not ast.Name:
            return False
        key = (imports, func.id)  # most calls of a module name the same few (`ops`, `nn`, `np`, `self`...)
        found = self._named.get(key)
        if found is None:
            found = self._named[key] = self._names_project(imports, func.id)
        return found

    def _names_project(self, imports: ImportMap, name: str) -> bool:
        target = imports.resolve(name)
        if target is None:
            return False
        head = target.partition(".")[0]
        found = self._heads.get(head)
        if found is None:
            found = self._heads[head] = head == self.module.partition(".")[0] or self.graph.index.may_hold(head)
        return found

    def _function(self, function) -> Tuple[str, str, ImportMap]:
        """(qualified name, scope name, import map) of a function: `model.Net.build`, `model.main.<locals>.f`."""
        found = self._functions.get(function)
        if found is None:
            names, outer = [function.name], None
            ancestor = parent_of(function)
            while ancestor is not None and not isinstance(ancestor, ast.Module):
                if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    outer = outer or ancestor
                    names.append(f"{ancestor.name}.<locals>")
                elif isinstance(ancestor, ast.ClassDef):
                    names.append(ancestor.name)
                ancestor = parent_of(ancestor)
            qualname = ".".join([self.module, *reversed(names)])
            imports = self._function(outer)[2] if outer is not None else self.graph.imports
            if self.graph.names.spells_import(function) and any(
                    isinstance(s, (ast.Import, ast.ImportFrom)) for s in statements(function.body)):
                imports = ImportMap.of_block(function.body, imports.module, imports.is_package, imports,
                                             define_locals=False)
            found = self._functions[function] = (qualname, f"{qualname}#{function.lineno}", imports)
        return found

    def _note_import(self, stmt) -> None:
        if isinstance(stmt, ast.Import):
            names = [alias.name for alias in stmt.names]
        else:
            base = self.graph.imports.absolute(stmt.module, stmt.level)
            if base is None:
                return
            names = [base] + [f"{base}.{alias.name}" for alias in stmt.names]
        for name in names:
            if self.graph.index.find(name) is not None and name != self.module:
                self.imports.add(name)

    def _call(self, node: ast.Call, scope: str, function: Optional[str], qualname: Optional[str]) -> None:
        last = (qualname or (spelled_name(node.func) or "")).rpartition(".")[2]
        if self.may_be_distributed:
            self._note_distributed_facts(node, scope, qualname, last)
        kind, target = self._kind(node, qualname, last)
        if kind is None:
            return
        if kind == "seed" and scope == "<module>":
            self.module_seed = True
        if self.may_be_distributed:
            self.scopes.setdefault(scope, []).append([node.lineno, kind, target])
        if function is not None and kind in ("seed", "call"):
            entry = self.functions.setdefault(function, {"seeds": False, "calls": []})
            if kind == "seed":
                entry["seeds"] = True
            elif target not in entry["calls"]:
                entry["calls"].append(target)

    def _note_distributed_facts(self, node: ast.Call, scope: str, qualname: Optional[str], last: str) -> None:
        """Distributed training started, parameters broadcast, and whether the module trains."""
        if qualname in INIT:
            self._distributed(node, scope, "init")
        elif last == "set_auto_parallel_context":
            for keyword in node.keywords:
                if keyword.arg == "parameter_broadcast" and isinstance(keyword.value, ast.Constant) \
                        and keyword.value.value is True:
                    self.broadcast = True
                elif keyword.arg == "parallel_mode" and _parallel_mode(keyword.value):
                    self._distributed(node, scope, "parallel")
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "train") or _TRAINING_CALLS.search(last) \
                or last.endswith("Optimizer") or framework.is_optimizer(qualname):
            self.training = True
            self.trains.setdefault(scope, []).append(node.lineno)
        if last in _LOADS and self._unconditional(node):
            self.loads.append([node.lineno, last, scope])

    def _before_training(self, row: int, name: str, scope: str) -> bool:
        """A pretrained model's `from_pretrained`, or a load its function follows with training: not the export of
        what was trained (`load_checkpoint(...)` after `model.train(...)`, or in an export function)."""
        return name == "from_pretrained" or any(later > row for later in self.trains.get(scope, ()))

    def _unconditional(self, node: ast.AST) -> bool:
        """Does the call run whenever its function does (no `if` or loop around it there)? A zoo's
        `if config.pre_trained: load_param_into_net(...)` does not say every run loads a checkpoint."""
        parent = self.ctx.parent(node)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            if isinstance(parent, (ast.If, ast.IfExp, ast.For, ast.While, ast.BoolOp)):
                return False
            parent = self.ctx.parent(parent)
        return True

    def _kind(self, node: ast.Call, qualname: Optional[str], last: str):
        """("seed", None), ("call", project function), ("maybe_build", name) or (None, None)."""
        if qualname in NOT_SEEDS:
            return None, None
        if qualname in SEEDS:
            return "seed", None
        if last[:1].isupper() or _builds_by_name(last):
            return "maybe_build", qualname or last
        project = self._project_function(qualname)
        if project is not None:
            return "call", project
        if "seed" in last.lower() and not (qualname or "").startswith(("mindspore.", "numpy.", "random.")):
            return "seed", None  # another library's seeding helper (mindcv.utils.set_seed, seed_everything)
        return None, None

    def _builds_network(self, name: str) -> bool:
        """A Cell class instantiated, or a `create_model()`-like call."""
        last = name.rpartition(".")[2]
        return _builds_by_name(last) or (last[:1].isupper() and self.graph.is_cell_class(name))

    def _project_function(self, qualname: Optional[str]) -> Optional[str]:
        """The qualified name of a function defined in a module of the linted project, else None."""
        if not qualname or "." not in qualname:
            return None
        if qualname not in self._projects:
            self._projects[qualname] = self._project_module_defining(qualname)
        module = self._projects[qualname]
        if module is None:
            return None
        self.call_modules[qualname] = module
        return qualname

    def _project_module_defining(self, qualname: str) -> Optional[str]:
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module == self.module or self._is_project_module(module):
                return module
        return None

    def _is_project_module(self, module: str) -> bool:
        known = self._cache["modules"]
        if module not in known:
            known[module] = self.graph.index.find(module) is not None
        return known[module]

    def _distributed(self, node: ast.Call, scope: str, kind: str) -> None:
        text = self.ctx.text(node)
        text = " ".join(text.split())
        if len(text) > 50:
            text = f"{self.ctx.text(node.func)}(...)"
        statement = parent_of(node)
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = parent_of(statement)
        self.distributed.append({"kind": kind, "scope": scope, "text": text,
                                 "span": [*self.ctx.start(node), *self.ctx.end(node)],
                                 "statement": list(self.ctx.start(statement or node))})


def _is_main_guard(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__" and \
        len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant) and \
        test.comparators[0].value == "__main__"


def _parallel_mode(value: ast.expr) -> bool:
    text = value.value if isinstance(value, ast.Constant) else getattr(value, "attr", None)
    return isinstance(text, str) and text.lower() in PARALLEL_MODES


@functools.lru_cache(maxsize=4096)
def _builds_by_name(name: str) -> bool:
    """`create_model`, `build_network`... (asked for the last name of every call)."""
    return bool(_NETWORK_BUILDER.match(name))
