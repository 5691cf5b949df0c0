from __future__ import annotations

import ast
import bisect
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

from ms_lint.analysis.walk import all_statements, parameter_names, parent_of
from ms_lint.rule import Rule

_TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_BRANCHING = (ast.If, ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOP_MESSAGE = ("The local variable '{name}' defined in the '{loop}' loop body cannot be used outside of the loop "
                 "body")
# statements with no statements inside: what `_Flow.statement` does last, for the others
_SIMPLE = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return, ast.Raise, ast.Continue,
                     ast.Break, ast.Pass, ast.Delete, ast.Assert, ast.Import, ast.ImportFrom, ast.Global,
                     ast.Nonlocal})
# the simple statements `_assigned_by` finds a binding in without `:=`
_MAY_BIND = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom, ast.Global,
                       ast.Nonlocal})
_BRANCH_MESSAGE = "The local variable '{name}' is not defined in false branch, but defined in true branch"


class PossiblyUnboundInGraph(Rule):
    """
    ## What it does
    Finds a local variable of a graph-compiled function that is read after an `if` statement which assigns it in
    some branches only, or after a `for`/`while` loop which assigns it only in its body, when nothing assigns it
    before. Branches that end in `return`, `raise`, `break` or `continue` do not fall through, so they need not
    assign it. And a local read before anything can have assigned it: in a statement of the function's body
    before the first one that assigns it, or on the right of that assignment (`boxes, t = self.select(boxes,
    t)`; `target.shape` where the parameter is spelt `targe`). That read fails in every mode (measured:
    `UnboundLocalError: cannot access local variable` in PyNative, `NameError` when compiled), so it is an error
    in a project that runs in PyNative too (DiVE and DAPS, issue 19's seventeenth sample).

    Not reported: an `if` whose test is made of the Cell's attributes, compared with literals or not (`if
    self.use_bias:`, `if not self.training:`, `if self.grid_size > 1:`): MindSpore folds it before it joins the
    branches (measured; an attribute of another object, `if self.config.use_cache:`, is not folded and fails,
    and neither is a literal: `if True:`, `if 1 > 0:`), and variables read only inside the branch or loop that
    assigns them.

    ## Why it matters in graph mode
    The graph compiler joins both branches of an `if` (the one not taken too) and the paths around a loop, and
    needs every variable read after the join to exist on each path. Measured on MindSpore 2.10 (CPU, LAX and STRICT
    alike), while PyNative runs the same code: `if x.sum() > 0: y = x * 2` then `return y` fails with
    `UnboundLocalError: The local variable 'y' is not defined in false branch, but defined in true branch.`, so do
    an `if`/`elif` chain without `else` (CBAM's pooling types, even over a constant list of strings) and `if m is
    not None:`; `for i in range(3): y = x * i` then `return y` (any loop: over a range, a `CellList`, a `while`)
    fails with `UnboundLocalError: The local variable 'y' defined in the 'for' loop body cannot be used outside of
    the loop body.`

    ## Example
    ```python
    class Gate(nn.Cell):
        def construct(self, x):
            for kind in self.pool_types:
                if kind == "avg":
                    pooled = self.avg(x)
                elif kind == "max":
                    pooled = self.max(x)
                x = x + pooled
            return x
    ```

    ## Use instead
    ```python
    class Gate(nn.Cell):
        def construct(self, x):
            for kind in self.pool_types:
                pooled = x
                if kind == "avg":
                    pooled = self.avg(x)
                elif kind == "max":
                    pooled = self.max(x)
                x = x + pooled
            return x
    ```

    ## Fix
    None: the value the variable should have on the other path is the author's choice.
    """

    code = "MSL025"
    name = "possibly-unbound-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = ("`{variable}` is read here but assigned only {where} (line {line}) in graph code reached from "
               "`{entry}`: {consequence}")

    def visit_function_def(self, node: ast.FunctionDef, ctx):
        if not ctx.graph.is_compiled(node) or ctx.graph.at_compile_time(node):
            return  # a `@constexpr` function is Python run while compiling
        unbound = _read_before_assigned(node, ctx.walk.nodes_of(node))
        for read, line in unbound:
            yield self.report(ctx, read, variable=read.id, where="after this read", line=line, compiled_only=False,
                              consequence=f"the read fails in every mode (PyNative: `UnboundLocalError: cannot "
                                          f"access local variable '{read.id}'`; graph mode: `NameError` at "
                                          f"compile){_misspelt(node, read.id)}")
        if not any(isinstance(s, _BRANCHING) for s in all_statements(node.body)):
            return  # nothing assigns on some paths only
        # the reads by name are indexed only once a name is assigned on some paths (40 % of the functions never
        # have one); whether the module spells `:=` is searched once per module, not per function
        walrus = ctx.memo((_Flow, ":="), lambda: ":=" in ctx.source.text)
        flow = _Flow(node, lambda: ctx.walk.nodes_of(node).loads, walrus)
        flow.block(node.body, set(flow.parameters))
        reported = {read.id for read, _ in unbound}
        for read, (variable, where, line, compiler) in flow.reports.items():
            if variable not in reported:
                yield self.report(ctx, read, variable=variable, where=where, line=line,
                                  consequence=f"MindSpore rejects the function (`UnboundLocalError: {compiler}.`)")


def _misspelt(function: ast.FunctionDef, name: str) -> str:
    """A hint where a parameter is `name` with one letter more or less at its end (`targe` for `target`)."""
    near = next((a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)
                 if abs(len(a.arg) - len(name)) == 1 and (a.arg.startswith(name) or name.startswith(a.arg))), None)
    return f"; a parameter is spelt `{near}`" if near else ""


def _read_before_assigned(function: ast.FunctionDef, nodes) -> List[Tuple[ast.Name, int]]:
    """(read, line of the first assignment) for each local read where no assignment can have run: in a statement
    of the function's body before the first one that binds the name (or in the part of that statement that runs
    first: the right of an assignment, the test of an `if`), with no `return`/`raise` before it. DAPS's `boxes,
    ... = self.select(boxes, ...)` and DiVE's `target.shape` where the parameter is spelt `targe` (issue 19's
    seventeenth sample): UnboundLocalError in PyNative, NameError when compiled (measured). `nodes`: the walk's
    `FunctionNodes` (a binding in a nested scope counts as one: a closure or a comprehension is left alone)."""
    body = function.body
    parameters = parameter_names(function)
    starts = [stmt.lineno for stmt in body]
    ends = next((i for i, stmt in enumerate(body) if isinstance(stmt, (ast.Return, ast.Raise))), len(body))
    first_bound = nodes.first_bound
    found: List[Tuple[ast.Name, int]] = []
    for name, reads in nodes.loads.items():
        bound = first_bound.get(name)
        if bound is None or name in parameters or min(read.lineno for read in reads) > bound:
            continue  # (most names: read after their first binding)
        index = bisect.bisect_right(starts, bound) - 1
        for read in sorted(reads, key=lambda r: (r.lineno, r.col_offset)):
            position = bisect.bisect_right(starts, read.lineno) - 1
            if position > index or position > ends:
                break
            if position < 0 or _in_nested_scope(read, function):
                continue
            if position < index or any(_inside(read, part) for part in _runs_first(body[index])):
                found.append((read, _first_store(body[index], name)))
                break  # one finding per variable: the first read
    return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))


def _runs_first(stmt: ast.stmt) -> List[ast.AST]:
    """The parts of a statement that run before it binds anything: an assignment's value (all of `x += 1`), an
    `if`'s or `while`'s test, a loop's iterable, the context managers of a `with`."""
    if isinstance(stmt, ast.Assign):
        return [stmt.value]
    if isinstance(stmt, ast.AugAssign):
        return [stmt]
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in stmt.items[:1]]
    return []


def _first_store(stmt: ast.stmt, name: str) -> int:
    """The line where `stmt` first assigns `name` (the statement's own line for a def, class or import)."""
    return min((n.lineno for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name
                and not isinstance(n.ctx, ast.Load)), default=stmt.lineno)


def _inside(node: Any, outer: Any) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) \
        and (node.end_lineno or 0, node.end_col_offset or 0) <= (outer.end_lineno or 0, outer.end_col_offset or 0)


def _in_nested_scope(node: ast.Name, function: ast.AST) -> bool:
    """Is `node` inside a def, lambda or class nested in `function` (run later, or with scopes of its own), or
    a comprehension that binds its name (`[h * w for h, w in shapes]`)?"""
    around = parent_of(node)
    while around is not None and around is not function:
        if isinstance(around, _SCOPES):
            return True
        if isinstance(around, _COMPREHENSIONS) and any(node.id in _target_names(generator.target)
                                                       for generator in around.generators):
            return True
        around = parent_of(around)
    return False


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _Flow:
    """Definite assignment over one function body, statement by statement: which locals every path that reaches a
    statement has assigned (`defined`), and which an `if` or a loop assigned on some paths only (`partial`)."""

    def __init__(self, function: ast.FunctionDef, loads: Callable[[], Dict[str, List[ast.Name]]], walrus: bool):
        self.parameters = parameter_names(function)
        self.loads = loads  # the function's reads, by name (the walk's index, asked for when first needed)
        self.walrus = walrus  # does the module use `:=` at all
        self.partial: Dict[str, Tuple[str, int, str]] = {}  # name -> (where, line, the compiler's words)
        self.watched: List[int] = []  # sorted rows reading a name in `partial`: only they are walked (`reads`)
        self.reports: Dict[ast.Name, Tuple[str, str, int, str]] = {}
        self.reported: Set[str] = set()

    def assigned_in_part(self, name: str, where: str, line: int, compiler: str) -> None:
        if name in self.partial:
            return
        self.partial[name] = (where, line, compiler)
        for read in self.loads().get(name, ()):
            bisect.insort(self.watched, read.lineno)

    def block(self, statements: List[ast.stmt], defined: Set[str]) -> Tuple[Set[str], bool]:
        """The names defined after the block, and whether it always ends in return/raise/break/continue.
        `defined` is the block's own: simple statements add to it in place (copying it at each statement made
        the walk quadratic in a long body)."""
        for stmt in statements:
            if stmt.__class__ in _SIMPLE:  # (most statements)
                if self.watched:
                    self.reads(stmt, defined)
                if stmt.__class__ in _TERMINATORS:
                    return defined, True
                if stmt.__class__ in _MAY_BIND or self.walrus:
                    defined |= _assigned_by(stmt, self.walrus)
                continue
            defined, ends = self.statement(stmt, defined)
            if ends:
                return defined, True
        return defined, False

    def statement(self, stmt: ast.stmt, defined: Set[str]) -> Tuple[Set[str], bool]:
        if isinstance(stmt, ast.If):
            self.reads(stmt.test, defined)
            body, body_ends = self.block(stmt.body, set(defined))
            orelse, orelse_ends = self.block(stmt.orelse, set(defined))
            if _folded(stmt.test):
                return defined | body | orelse, body_ends and orelse_ends
            paths = [names for names, ends in ((body, body_ends), (orelse, orelse_ends)) if not ends]
            joined = set.intersection(*paths) if paths else defined | body | orelse
            for name in (body | orelse) - joined - defined:
                self.assigned_in_part(name, "in some branches of the `if`", stmt.lineno,
                                      _BRANCH_MESSAGE.format(name=name))
            return joined, not paths
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            loop = "while" if isinstance(stmt, ast.While) else "for"
            self.reads(stmt.test if isinstance(stmt, ast.While) else stmt.iter, defined)
            inside = set(defined)
            if not isinstance(stmt, ast.While):
                inside |= _target_names(stmt.target)
            body, _ = self.block(stmt.body, inside)
            for name in body - defined:
                self.assigned_in_part(name, f"in the body of the `{loop}` loop", stmt.lineno,
                                      _LOOP_MESSAGE.format(name=name, loop=loop))
            after, _ = self.block(stmt.orelse, set(defined))
            return after, False
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.reads(item.context_expr, defined)
                if item.optional_vars is not None:
                    defined = defined | _target_names(item.optional_vars)
            return self.block(stmt.body, defined)
        if isinstance(stmt, (ast.Try, *_TRY_STAR)):
            return defined | _assigned_names([stmt]), False  # MSL020's: the parser rejects `try` anyway
        if isinstance(stmt, _SCOPES):
            for decorator in getattr(stmt, "decorator_list", ()):
                self.reads(decorator, defined)
            return defined | {stmt.name}, False
        self.reads(stmt, defined)
        if isinstance(stmt, _TERMINATORS):
            return defined, True
        return defined | _assigned_by(stmt, self.walrus), False

    def reads(self, node: ast.AST, defined: Set[str]) -> None:
        first = bisect.bisect_left(self.watched, node.lineno)  # type: ignore[attr-defined]
        if first == len(self.watched) or self.watched[first] > (node.end_lineno or node.lineno):  # type: ignore
            return  # no read of a name assigned on some paths only: nothing to walk
        for name in _loads(node):
            if name.id in defined or name.id in self.reported or name.id not in self.partial:
                continue
            where, line, compiler = self.partial[name.id]
            self.reports[name] = (name.id, where, line, compiler)
            self.reported.add(name.id)  # one finding per variable: the first read


def _folded(test: ast.expr) -> bool:
    """A test made of the Cell's attributes (`if self.use_bias:`, `if self.grid_size > 1:`, `if self.mix_token and
    self.training:`): MindSpore folds the `if` before joining its branches (measured; a loop variable over a
    constant list is not folded). A literal is not: `if True:`, `if 1 > 0:` and `if self.flag and True:` fail
    like a test on tensor data (measured), though a literal compared with an attribute folds."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _folded(test.operand)
    if isinstance(test, ast.BoolOp):
        return all(_folded(value) for value in test.values)
    if isinstance(test, ast.Compare):
        parts = (test.left, *test.comparators)
        return all(_self_attribute(part) or isinstance(part, ast.Constant) for part in parts) \
            and any(_self_attribute(part) for part in parts)
    return _self_attribute(test)


def _self_attribute(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self"


def _loads(node: ast.AST) -> Iterator[ast.Name]:
    """The names a statement or expression reads when it runs (not inside nested defs, lambdas or classes, and
    not a comprehension's own variables)."""
    stack: List[ast.AST] = [node]
    own: Set[str] = set()
    while stack:
        current = stack.pop()
        if isinstance(current, _SCOPES) and current is not node:
            continue
        if isinstance(current, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for generator in current.generators:  # before the element, which comes first in the walk
                own |= _target_names(generator.target)
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load) and current.id not in own:
            yield current
        if isinstance(current, ast.AugAssign) and isinstance(current.target, ast.Name):
            yield current.target  # `y += 1` reads `y` first
        stack.extend(reversed(list(ast.iter_child_nodes(current))))


def _assigned_by(stmt: ast.stmt, walrus: bool = True) -> Set[str]:
    """The names one simple statement binds (`:=` looked for only when the module has one)."""
    names: Set[str] = set()
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            names |= _target_names(target)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and (stmt.value is not None
                                                               or isinstance(stmt, ast.AugAssign)):
        names |= _target_names(stmt.target)
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        names |= {(a.asname or a.name).partition(".")[0] for a in stmt.names}
    elif isinstance(stmt, (ast.Global, ast.Nonlocal)):
        names |= set(stmt.names)
    for node in ast.walk(stmt) if walrus else ():
        if isinstance(node, ast.NamedExpr):
            names |= _target_names(node.target)
    return names


def _assigned_names(statements: List[ast.stmt]) -> Set[str]:
    """Every name the statements bind anywhere (not in nested scopes): the function's locals."""
    names: Set[str] = set()
    stack: List[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            names.add(getattr(node, "name", ""))
            continue
        if isinstance(node, ast.stmt):
            names |= _assigned_by(node)
        if isinstance(node, (ast.For, ast.AsyncFor)):
            names |= _target_names(node.target)
        if isinstance(node, ast.withitem) and node.optional_vars is not None:
            names |= _target_names(node.optional_vars)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _target_names(target: Optional[ast.AST]) -> Set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(e) for e in target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


_TRY_STAR = tuple(getattr(ast, name) for name in ("TryStar",) if hasattr(ast, name))
