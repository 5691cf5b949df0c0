from __future__ import annotations

import ast
import bisect
import re
from typing import List, Optional, Set

from ms_lint.analysis import framework
from ms_lint.analysis.compile_context import flag_names
from ms_lint.analysis.folding import guarding_flag
from ms_lint.analysis.subclasses import defined_by_subclasses
from ms_lint.analysis.walk import rows_spelling, self_parameter
from ms_lint.rule import Fix, Rule

# External bases whose every attribute ms_lint knows: nn.Cell itself (framework.CELL_MEMBERS) and bases that add
# no instance attributes. Any other external base (nn.Dense, a package not in the project) may define anything.
_KNOWN_BASES = framework.CELL_BASES | {"builtins.object", "abc.ABC"}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ABSTRACT_MARKERS = ("NotImplementedError", "abstractmethod")
_OWNER_BEFORE = re.compile(r"\s*\.\s*(\w+)")  # `<owner>.` read backwards from the attribute name after it
# Builtins that only look at the object they are given.
_LOOKING_BUILTINS = frozenset({"super", "isinstance", "issubclass", "type", "id", "hasattr", "getattr", "setattr",
                               "print", "len", "str", "repr", "format", "hash", "callable", "vars"})


class UndefinedAttributeInGraph(Rule):
    """
    ## What it does
    Finds `self.<name>` read in graph-compiled code of an `nn.Cell` subclass when `nn.Cell`, the class, its
    bases and its subclasses in the module never assign `<name>` (in a method, in the class body, through
    `setattr(self, "<name>", ...)` or `insert_child_to_cell("<name>", ...)`): typically a typo
    (`self.poss_net` for `self.pose_net`) or code ported without the attribute it needs. The same for a read in
    the class's own `__init__` outside any `if`, `try`, `with` or loop (the first read of each name): building
    the Cell fails there, in every mode (mindone's `GPTJFlashAttention2` reads `self.attn_pdrop` and
    `self.num_heads`, which its base `GPTJAttention` names `attn_dropout` and `num_attention_heads`; a
    hp-vae-gan port reads `self.opt`, issue 19's fourth sample).

    Silent when the attributes cannot all be known: a base that cannot be resolved or is a MindSpore layer
    other than `nn.Cell`; `setattr` with a variable name, `__getattr__`, `self.__dict__`, `self` handed to a
    function; a name the module spells as a string (`hasattr(self, "extra")`) or assigns on another object
    (`net.extra = ...`); bases meant for subclassing (named `Base*`/`Abstract*`/`*Base`/`*Mixin`, with an
    `abstractmethod` or `raise NotImplementedError`, or inheriting from a base of the module a method that only
    raises `NotImplementedError` without defining it); MindTorch modules.

    ## Why it matters in graph mode
    Measured on MindSpore 2.10 (CPU): compiling the read fails at both syntax levels with
    `AttributeError: ClassMember: 'Namespace:module..<Typo::...>' object has no attribute 'poss_net'`
    (PyNative fails at the call: `The 'Typo' object has no attribute 'poss_net'.`), possibly after a long
    model build. A read in a branch folded at compile time (`if self.enabled:` with `enabled=False`, a
    `hasattr` guard) is not compiled and runs, until the flag changes: then the same error. Such reads are
    reported as warnings: the attribute may be set from outside whenever the flag is (Hugging Face ports read
    `self._gradient_checkpointing_func` under `if self.gradient_checkpointing and self.training:`, and the
    library's `gradient_checkpointing_enable()` sets both), and otherwise the code behind the flag cannot work.
    Names another file of the run sets by name (`setattr(m, "x", v)`, `exec("m.{}.{} = 1".format(n, "x"))`, as
    a meta-learning training loop does) are warnings too: that may be this Cell.

    ## Example
    ```python
    class Pose(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pose_net = nn.Dense(2, 2)

        def construct(self, x):
            return self.poss_net(x)
    ```

    ## Use instead
    ```python
    class Pose(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pose_net = nn.Dense(2, 2)

        def construct(self, x):
            return self.pose_net(x)
    ```

    ## Fix
    Unsafe: the name is replaced by the closest attribute the class defines when it is unique and within
    edit distance 1–2 (1 for names of three letters or fewer). The closest name is a guess: review it.
    """

    code = "MSL032"
    name = "undefined-attribute-in-graph"
    severity = "error"
    scope = "cell"
    message = ("`self.{attribute}` read {where} is never assigned in `{cls}` or its bases: {when} "
               "`AttributeError: ... has no attribute '{attribute}'`{hint}")
    fix_applicability = "unsafe"

    def visit_class_def(self, node: ast.ClassDef, ctx):
        cell = ctx.graph.cells.get(node)
        if cell is None or cell.kind != "cell" or any(k.arg == "metaclass" for k in node.keywords) \
                or _looks_abstract(node, ctx):
            return
        # most classes read only names they or every Cell define: then what their bases hold does not matter
        always, own = _always_defined(ctx), cell.summary
        reads = [read for read in [*_graph_self_reads(ctx, node), *_init_self_reads(ctx, cell, node)] if not (
            read.attr in always or read.attr in own.attributes or read.attr in own.methods
            or read.attr in own.properties or (read.attr.startswith("__") and read.attr.endswith("__")))]
        if not reads:
            return
        defined = self._defined_names(ctx, cell)
        if defined is None:
            return
        if _calls_hook_left_to_subclasses(ctx, node, defined):
            # a template: what its subclasses in the run's files define counts; with none, the hook it calls is
            # undefined (ROMP's `self._set_attr_for_tensor(...)`, which 2.10's Cell lacks), as is what it reads
            by_subclasses = defined_by_subclasses(ctx.graph.index, cell.summary.qualname)
            defined = defined | (by_subclasses or frozenset())
        for read in reads:
            name = read.attr
            if name in defined or _named_elsewhere(ctx, name, getattr(read.value, "id", "")):  # `self.<name>`
                continue
            best = _closest(name, defined - framework.CELL_MEMBERS)  # not Cell's own `to`, `phase`: never meant
            flag = guarding_flag(read, getattr(read.value, "id", ""), node, ignore=read.attr)
            when = "compiling this line fails with"
            entry = ctx.graph.entry_of(read)
            where = f"in graph code reached from `{entry.name}`" if entry is not None else f"in `{node.name}.__init__`"
            if entry is None:
                when = "building the Cell fails with"  # (hp-vae-gan's `self.opt.num_layer`, issue 19)
            elif flag is not None:
                when = (f"the branch on `self.{flag}` is folded at compile time, so this compiles while the flag "
                        "keeps it out, and fails with")
            elif name in ctx.graph.index.names_set_outside():
                when = (f"another file sets `{name}` by name (`setattr`/`exec`): unless that is on this Cell "
                        "before it is called, compiling this line fails with")
            yield self.report(ctx, read, attribute=name, cls=node.name, when=when, where=where,
                              severity=None if not when.startswith("the branch") and not when.startswith(
                                  "another") else "warning",
                              hint=f" (did you mean `{best}`?)" if best else "",
                              fix=self._fix(ctx, read, best) if best else None)

    @staticmethod
    def _defined_names(ctx, cell) -> Optional[Set[str]]:
        """Every name `self` can have in this class's methods, or None when that cannot be known."""
        qualname = cell.summary.qualname
        # `self` is an instance of this class or of one of its subclasses in the module
        selves = ctx.graph.cells_deriving_from(qualname)
        defined = set(_always_defined(ctx))
        for other in selves:
            if other.assumed or other.kind != "cell":
                return None
            if not ctx.graph.external_bases(other.summary) <= _KNOWN_BASES:
                return None
            mro = list(ctx.graph.mro(other.summary))
            names = {summary.name for summary in mro}
            for summary in mro:
                if summary.dynamic or _self_escapes(summary, names):
                    return None
                defined |= summary.methods | summary.properties | summary.attributes
        return defined

    @staticmethod
    def _fix(ctx, read: ast.Attribute, best: str) -> Fix:
        return Fix("unsafe", f"Rename to `self.{best}`",
                   (ctx.replace(read, f"{ctx.text(read.value)}.{best}"),))


def _graph_self_reads(ctx, node: ast.ClassDef) -> List[ast.Attribute]:
    """`self.x` reads in the graph-compiled methods of a class, method by method."""
    return [read for method in node.body
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and self_parameter(method)
            and ctx.graph.is_compiled(method) and not _decorated_with(method, ("staticmethod", "classmethod"))
            for read in _self_reads(ctx.graph, method, self_parameter(method) or "")]


def _init_self_reads(ctx, cell, node: ast.ClassDef) -> List[ast.Attribute]:
    """`self.x` reads in the class's own `__init__` (host code: the Cell is being built), outside any `if` or
    `try` (a guarded read may be meant for a subclass or a later version). Only for a class whose project bases
    are all in its module: a base imported from elsewhere may be another project's class of the same name in a
    monorepo (a MindFormers copy's `from ..base_model import BaseModel`)."""
    module = cell.summary.qualname.rpartition(".")[0]
    if any(summary.qualname.rpartition(".")[0] != module for summary in ctx.graph.mro(cell.summary)):
        return []
    init = next((method for method in node.body if isinstance(method, ast.FunctionDef) and method.name == "__init__"
                 and not ctx.graph.is_compiled(method)), None)
    self_name = self_parameter(init) if init is not None else None
    if init is None or self_name is None:
        return []
    # the rows of the compound statements (and nested defs), whose reads may not run
    guarded = [(statement.lineno, statement.end_lineno or statement.lineno) for statement in init.body
               if isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While, *_DEFS, ast.ClassDef))]
    first: dict = {}  # attribute -> its first read: building stops there
    for read in ctx.graph.walk.nodes_of(init).attribute_loads:
        if read.value.__class__ is ast.Name and read.value.id == self_name and read.attr not in first \
                and not any(start <= read.lineno <= end for start, end in guarded):
            first[read.attr] = read
    return list(first.values())


def _self_reads(graph, function, self_name: str) -> List[ast.Attribute]:
    """`self.x` loads in a method and its nested functions (not where `self` is rebound, not in nested classes),
    in preorder: taken from the method's attribute loads, which the graph gathers for every compiled function."""
    nodes = graph.walk.nodes_of(function)
    reads = [node for node in nodes.attribute_loads
             if node.value.__class__ is ast.Name and node.value.id == self_name]
    hidden = [node for node in nodes.bindings if isinstance(node, ast.ClassDef)]
    hidden += [node for node in nodes.nested if self_name in _parameter_names(node)]
    if reads and hidden:
        inside = {id(node) for scope in hidden for node in graph.walk.subtree(scope)}
        reads = [read for read in reads if id(read) not in inside]
    return reads


def _parameter_names(function) -> Set[str]:
    arguments = function.args
    return {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}


def _self_escapes(summary, class_names: Set[str]) -> bool:
    """`self` handed to other code (`build(self)`, `cfg.create_weights(self, ...)`), which may set attributes on
    it; base-class calls (`Base.__init__(self)`) and builtins that only look at it are fine."""
    for callee in summary.self_passing:
        if callee.name in _LOOKING_BUILTINS:
            continue
        if callee.attribute is not None and (callee.attribute == "__init__" or callee.receiver
                                             in class_names | {"Cell", "nn", "object"}):
            continue
        return True
    return False


def _looks_abstract(node: ast.ClassDef, ctx) -> bool:
    """A base meant for subclasses (in other modules) that define what it reads."""
    name = node.name
    if name.startswith(("Base", "Abstract", "_Base")) or name.endswith(("Base", "Mixin")):
        return True
    # what the scan looks for is spelled on the class's lines: most classes need no scan
    rows = _abstract_marker_rows(ctx)
    if not rows:
        return False
    last = node.end_lineno or node.lineno
    if bisect.bisect_left(rows, node.lineno) == bisect.bisect_right(rows, last):
        return _inherits_unimplemented(node, ctx, set())
    return any((isinstance(sub, ast.Raise) and "NotImplementedError" in ast.dump(sub))
               or (isinstance(sub, ast.FunctionDef) and _decorated_with(sub, ("abstractmethod",)))
               for sub in ctx.walk.subtree(node))


def _inherits_unimplemented(node: ast.ClassDef, ctx, overridden: set, depth: int = 0) -> bool:
    """Does the class inherit, from a base of its module, a method that only raises `NotImplementedError` and that
    it does not define? Still abstract: cambrian's `ConvProjector(Projector)` leaves `build_net`, which the base's
    `__init__` calls, to a subclass that sets `self.net`."""
    overridden = overridden | {stmt.name for stmt in node.body if isinstance(stmt, _DEFS)}
    for base in node.bases:
        summary = ctx.graph.summary.classes.get(base.id) if isinstance(base, ast.Name) and depth < 3 else None
        base_node = summary.node if summary is not None else None
        if base_node is None or base_node is node:
            continue
        for stmt in base_node.body:
            if isinstance(stmt, _DEFS) and stmt.name not in overridden and _only_raises_unimplemented(stmt):
                return True
        if _inherits_unimplemented(base_node, ctx, overridden, depth + 1):
            return True
    return False


def _calls_hook_left_to_subclasses(ctx, node: ast.ClassDef, defined: Set[str]) -> bool:
    """Does a host method of the class call a method of `self` that no class of its MRO defines? A template for
    subclasses in other modules, which define the hook and the attributes it sets: SMPD's `_fasterRCNN` calls
    `self._init_modules()` from `create_architecture`, and `vgg16(_fasterRCNN)` defines it (building
    `RCNN_base_t`...) and sets `dout_base_model` before `_fasterRCNN.__init__(self, ...)`; what no subclass of
    the run defines is still reported (with no subclass, the hook itself is). Graph code is not looked at: an
    undefined method called there is this rule's finding."""
    for method in node.body:
        self_name = self_parameter(method) if isinstance(method, _DEFS) else None
        if self_name is None or ctx.graph.is_compiled(method):
            continue
        for call in ctx.graph.walk.nodes_of(method).calls:
            func = call.func
            if func.__class__ is ast.Attribute and func.value.__class__ is ast.Name and func.value.id == self_name \
                    and func.attr not in defined and func.attr not in framework.TORCH_MODULE_METHODS:
                return True  # (`self.parameters()` is a PyTorch leftover, MSL064's: no hook)
    return False


def _only_raises_unimplemented(function) -> bool:
    body = [stmt for stmt in function.body
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))]  # a docstring
    return len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.dump(body[0])


def _abstract_marker_rows(ctx) -> List[int]:
    """The rows mentioning `NotImplementedError` or `abstractmethod` (found once per module)."""
    text = ctx.source.text
    return ctx.memo(_abstract_marker_rows, lambda: sorted(
        {row for marker in _ABSTRACT_MARKERS for row in rows_spelling(text, marker)}))


def _decorated_with(function, names) -> bool:
    return any(getattr(d, "id", getattr(d, "attr", None)) in names for d in function.decorator_list)


def _named_elsewhere(ctx, name: str, self_name: str) -> bool:
    """The module spells the name as a string (`hasattr(self, "x")`, `getattr(self, "x", None)`) or assigns it
    on another object (`net.x = ...`, `Net.x = ...`, `module.head.x = ...`), which may be this Cell."""
    text = ctx.source.text
    if f'"{name}"' in text or f"'{name}'" in text:
        return True
    # `(\w+)\s*\.\s*<name> =` would scan slowly (a match may start at any word character): find `<name> =`, which
    # starts with the name, then read `<owner>.` backwards from there
    backwards = None
    for match in re.finditer(rf"{re.escape(name)}\s*(?:=(?!=)|[-+*/|&]=)", text):
        backwards = backwards or text[::-1]
        owner = _OWNER_BEFORE.match(backwards, len(text) - match.start())
        if owner is not None and owner.group(1)[::-1] != self_name:
            return True
    return False


def _closest(name: str, defined: Set[str]) -> Optional[str]:
    """The defined name to suggest for `name`, if one is closest (a private one only for a private name)."""
    limit = 1 if len(name) <= 3 else 2
    private = name.startswith("_")
    letters = set(name)
    # an edit changes the length by at most one, and the set of letters by at most two (one out, one in): the
    # others are farther than `limit`, which would not be suggested
    scored = sorted((_distance(name, c, limit), c) for c in defined if abs(len(c) - len(name)) <= limit
                    and (private or not c.startswith("_")) and len(letters.symmetric_difference(c)) <= 2 * limit)
    if not scored or scored[0][0] > limit or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


def _distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (insertions, deletions, substitutions and adjacent transpositions) when
    it is at most `limit`, else `limit + 1`. Only the cells within `limit` of the diagonal can be that close, and
    once two rows in a row are all farther, so are the rows after them: both bounds cut the work."""
    far = limit + 1
    previous2, previous = None, [min(j, far) for j in range(len(b) + 1)]
    for i, ca in enumerate(a, 1):
        current = [far] * (len(b) + 1)
        current[0] = min(i, far)
        for j in range(max(1, i - limit), min(len(b), i + limit) + 1):
            cb = b[j - 1]
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if previous2 is not None and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                value = min(value, previous2[j - 2] + 1)
            current[j] = min(value, far)
        if min(current) == far and min(previous) == far:
            return far
        previous2, previous = previous, current
    return previous[-1]


def _always_defined(ctx) -> Set[str]:
    """The names every Cell of the module has: `nn.Cell`'s members and the flags `add_flags` sets (once per
    module)."""
    # add_flags(name=...) sets attributes on Cells, often from another module (a text generator)
    return ctx.memo(_always_defined, lambda: set(framework.CELL_MEMBERS) | ctx.compile_context.flags
                    | flag_names(ctx.source.text))
