from __future__ import annotations

import ast
import bisect
import re
from typing import Iterable, List, Optional, Set

from ms_lint import framework
from ms_lint.context import flag_names
from ms_lint.graph import walk
from ms_lint.rule import Fix, Rule

# External bases whose every attribute ms_lint knows: nn.Cell itself (framework.CELL_MEMBERS) and bases that add
# no instance attributes. Any other external base (nn.Dense, a package not in the project) may define anything.
_KNOWN_BASES = frozenset({"mindspore.nn.Cell", "mindspore.nn.cell.Cell", "builtins.object", "abc.ABC"})
_MARKER_ROWS = "_msl_abstract_marker_rows"  # cache on the module's tree: see _abstract_marker_rows
# Builtins that only look at the object they are given.
_LOOKING_BUILTINS = frozenset({"super", "isinstance", "issubclass", "type", "id", "hasattr", "getattr", "setattr",
                               "print", "len", "str", "repr", "format", "hash", "callable", "vars"})


class UndefinedAttributeInGraph(Rule):
    """
    ## What it does
    Finds `self.<name>` read in graph-compiled code of an `nn.Cell` subclass when `nn.Cell`, the class, its
    bases and its subclasses in the module never assign `<name>` (in a method, in the class body, through
    `setattr(self, "<name>", ...)` or `insert_child_to_cell("<name>", ...)`): typically a typo
    (`self.poss_net` for `self.pose_net`) or code ported without the attribute it needs.

    Silent when the attributes cannot all be known: a base that cannot be resolved or is a MindSpore layer
    other than `nn.Cell`; `setattr` with a variable name, `__getattr__`, `self.__dict__`, `self` handed to a
    function; a name the module spells as a string (`hasattr(self, "extra")`) or assigns on another object
    (`net.extra = ...`); bases meant for subclassing (named `Base*`/`Abstract*`/`*Base`/`*Mixin`, with an
    `abstractmethod` or `raise NotImplementedError`); MindTorch modules.

    ## Why it matters in graph mode
    Measured on MindSpore 2.10 (CPU): compiling the read fails at both syntax levels with
    `AttributeError: ClassMember: 'Namespace:module..<Typo::...>' object has no attribute 'poss_net'`
    (PyNative fails at the call: `The 'Typo' object has no attribute 'poss_net'.`), possibly after a long
    model build. A read in a branch folded at compile time (`if self.enabled:` with `enabled=False`, a
    `hasattr` guard) is not compiled and runs, until the flag changes: then the same error. Such reads are
    reported too; the code behind the flag cannot work.

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
    message = ("`self.{attribute}` read in graph code reached from `{entry}` is never assigned in `{cls}` or its "
               "bases: compiling this line fails with `AttributeError: ... has no attribute '{attribute}'`{hint}")
    fix_applicability = "unsafe"

    def visit_class_def(self, node: ast.ClassDef, ctx):
        cell = ctx.graph.cells.get(node)
        if cell is None or cell.kind != "cell" or any(k.arg == "metaclass" for k in node.keywords) \
                or _looks_abstract(node, ctx):
            return
        defined = self._defined_names(ctx, cell)
        if defined is None:
            return
        for method in node.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args \
                    or not ctx.graph.is_compiled(method) or _decorated_with(method, ("staticmethod", "classmethod")):
                continue
            for read in _self_reads(ctx.graph, method, method.args.args[0].arg):
                name = read.attr
                if name in defined or (name.startswith("__") and name.endswith("__")) or _named_elsewhere(
                        ctx, name, read.value.id):
                    continue
                best = _closest(name, {n for n in defined if not n.startswith("_") or name.startswith("_")})
                yield self.report(ctx, read, attribute=name, cls=node.name,
                                  hint=f" (did you mean `{best}`?)" if best else "",
                                  fix=self._fix(ctx, read, best) if best else None)

    @staticmethod
    def _defined_names(ctx, cell) -> Optional[Set[str]]:
        """Every name `self` can have in this class's methods, or None when that cannot be known."""
        qualname = cell.summary.qualname
        # `self` is an instance of this class or of one of its subclasses in the module
        selves = ctx.graph.cells_deriving_from(qualname)
        # add_flags(name=...) sets attributes on Cells, often from another module (a text generator)
        defined = set(framework.CELL_MEMBERS) | ctx.compile_context.flags | flag_names(ctx.source.text)
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


def _self_reads(graph, function, self_name: str) -> Iterable[ast.Attribute]:
    """`self.x` loads in a method and its nested functions (not where `self` is rebound, not in nested classes),
    read off the module's preorder (a nested scope to leave out is skipped as a whole)."""
    order = graph.order
    index, end = graph.span(function)
    index += 1
    while index < end:
        node = order[index]
        if isinstance(node, ast.ClassDef) or (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and self_name in {
                    a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}):
            index = graph.span(node)[1]
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
                and node.value.id == self_name:
            yield node
        index += 1


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
    # what the walk looks for is spelled on the class's lines: most classes need no walk
    rows = _abstract_marker_rows(ctx)
    if not rows or bisect.bisect_left(rows, node.lineno) == bisect.bisect_right(rows, node.end_lineno):
        return False
    return any((isinstance(sub, ast.Raise) and "NotImplementedError" in ast.dump(sub))
               or (isinstance(sub, ast.FunctionDef) and _decorated_with(sub, ("abstractmethod",)))
               for sub in walk(node))


def _abstract_marker_rows(ctx) -> List[int]:
    """The rows mentioning `NotImplementedError` or `abstractmethod` (found once per module)."""
    rows = getattr(ctx.tree, _MARKER_ROWS, None)
    if rows is None:
        text = ctx.source.text
        rows = [] if "NotImplementedError" not in text and "abstractmethod" not in text else [
            row for row, line in enumerate(ctx.source.lines, 1)
            if "NotImplementedError" in line or "abstractmethod" in line]
        setattr(ctx.tree, _MARKER_ROWS, rows)
    return rows


def _decorated_with(function, names) -> bool:
    return any(getattr(d, "id", getattr(d, "attr", None)) in names for d in function.decorator_list)


def _named_elsewhere(ctx, name: str, self_name: str) -> bool:
    """The module spells the name as a string (`hasattr(self, "x")`, `getattr(self, "x", None)`) or assigns it
    on another object (`net.x = ...`, `Net.x = ...`, `module.head.x = ...`), which may be this Cell."""
    text = ctx.source.text
    if f'"{name}"' in text or f"'{name}'" in text:
        return True
    assigned = rf"{re.escape(name)}\s*(?:=(?!=)|[-+*/|&]=)"
    if not re.search(assigned, text):  # a pattern starting with the name scans fast; the full one slowly
        return False
    return any(match.group(1) != self_name for match in re.finditer(rf"(\w+)\s*\.\s*{assigned}", text))


def _closest(name: str, candidates: Set[str]) -> Optional[str]:
    limit = 1 if len(name) <= 3 else 2
    scored = sorted((_distance(name, c), c) for c in candidates if abs(len(c) - len(name)) <= limit)
    if not scored or scored[0][0] > limit or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


def _distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions."""
    previous2, previous = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if previous2 is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]
