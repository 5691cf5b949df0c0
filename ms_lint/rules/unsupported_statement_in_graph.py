from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis.walk import enclosing_function, self_parameter
from ms_lint.rule import Rule

# The exception classes `raise` may name in graph code (2.10's message lists them; subclasses are refused too).
_RAISABLE = frozenset({
    "AssertionError", "AttributeError", "BaseException", "EnvironmentError", "Exception", "IOError",
    "IndentationError", "IndexError", "KeyError", "KeyboardInterrupt", "MemoryError", "NameError",
    "NotImplementedError", "OSError", "OverflowError", "RuntimeError", "RuntimeWarning", "StopIteration",
    "TypeError", "UnboundLocalError", "ValueError", "ZeroDivisionError"})

# The context managers MindSpore 2.10's parser accepts besides jit_class objects (graph/_parse/parser.py).
_STREAM_CONTEXTS = (".StreamCtx", ".StreamLimitCtx")

# ast node class -> (how it is shown, the name MindSpore 2.10's parser gives it in its error)
_STATEMENTS = {
    ast.Try: ("try", "statement 'Try'"), ast.Delete: ("del", "statement 'Delete'"),
    ast.Yield: ("yield", "expression 'Yield'"), ast.YieldFrom: ("yield from", "expression 'YieldFrom'"),
    ast.Import: ("import", "statement 'Import'"), ast.ImportFrom: ("from ... import", "statement 'ImportFrom'"),
    ast.Nonlocal: ("nonlocal", "statement 'Nonlocal'"),
    ast.AsyncFunctionDef: ("async def", "statement 'AsyncFunctionDef'"),
}
# Newer syntax, when the running Python has it (`match` 3.10, `except*` 3.11).
_NEWER = {"Match": ("match", "statement 'Match'"), "TryStar": ("try/except*", "statement 'TryStar'")}
_STATEMENTS.update({getattr(ast, name): shown for name, shown in _NEWER.items() if hasattr(ast, name)})


class UnsupportedStatementInGraph(Rule):
    """
    ## What it does
    Finds Python statements the MindSpore graph compiler cannot parse inside graph-compiled code: `try`, `yield`
    and `yield from`, `del`, `async def` (with its `await`, `async for`, `async with`), `match`, `import`,
    `nonlocal`, `for ... else` and `while ... else`, comprehensions with two or more `for` clauses, `raise` of
    an exception class 2.10 does not support, `construct` returning a method, and `with` on an object that is
    not a `@jit_class` instance. Dead branches are reported too.

    ## Why it matters in graph mode MindSpore 2.10 rejects these when it parses the function, at both syntax levels
    (measured on CPU): `RuntimeError: Unsupported statement 'Try'.` (likewise `'Delete'`, `'Import'`, `'ImportFrom'`,
    `'Match'`, `'Nonlocal'`, `'AsyncFunctionDef'`) and `RuntimeError: Unsupported expression 'Yield'.` (`'YieldFrom'`).
    `raise` of an exception class outside the standard ones 2.10 lists (a project's `MyError`, even a subclass of
    `ValueError`; `FileNotFoundError`): `RuntimeError: Unsupported exception type: MyError. Raise only support some
    Python standard exception types: AssertionError, ..., ValueError, ZeroDivisionError.` `construct` returning a method
    (`return self.helper`, `return x, self.helper`): `RuntimeError: Function in output is not supported.` `for`/`while`
    with an `else` clause: `RuntimeError: The 'for...else...' statement is not supported now.` (`'while...else...'`). A
    list, generator or dict comprehension with two `for` clauses: `TypeError: The 'generators' supports 1
    'comprehension' in ListComp/GeneratorExp, but got 2 comprehensions.` (one `for` with an `if` is supported). `with`
    accepts only `@jit_class` objects (and MindSpore's stream contexts): `with self.scope:` on a plain object fails with
    `TypeError: Only support jit_class instance, but got PythonObject(type: ...)`, and `with open(path):` or a
    `@contextmanager` function with `TypeError: issubclass() arg 1 must be a class`.

    Dead code is no excuse: a `try` under `if False:` or under an always-false closure constant still fails,
    because the parser reads the whole function. One exception was measured: a branch whose condition is a
    constant Cell attribute (`if self.mode == "try":` with `self.mode = None`) is pruned before parsing, with
    the helpers only it calls. Such code breaks as soon as an instance takes the branch, so it is reported too.

    `raise` of the standard exceptions, `assert`, `lambda`, nested `def`, comprehensions with one `for`, `while`
    on tensors and `isinstance` are supported in 2.10 (measured: same results as PyNative) and never reported.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            try:
                y = self.head(x)
            except ValueError:
                y = x
            return y
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return self.head(x)  # validate inputs on the host, before calling the network
    ```

    ## Fix
    None: each statement needs its own rewrite (imports to module level, `del` to rebinding, `match` to
    `if`/`elif`, a generator to a list), and the right one depends on the intent.
    """

    code = "MSL020"
    name = "unsupported-statement-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "`{statement}` in graph code reached from `{entry}`: {consequence}"

    def _unsupported(self, node, ctx):
        shown, parser_name = _STATEMENTS[type(node)]
        yield self.report(ctx, node, statement=shown, consequence=f"the parser rejects the whole function "
                          f"(`RuntimeError: Unsupported {parser_name}`), even if this line is never reached")

    visit_try = visit_delete = visit_yield = visit_yield_from = visit_import = visit_import_from = \
        visit_nonlocal = visit_async_function_def = _unsupported
    if hasattr(ast, "Match"):
        visit_match = _unsupported
    if hasattr(ast, "TryStar"):
        visit_try_star = _unsupported

    def visit_for(self, node: ast.For, ctx):
        if node.orelse:
            yield self.report(ctx, node, statement="for ... else", consequence=(
                "the parser rejects the whole function (`RuntimeError: The 'for...else...' statement is not "
                "supported now.`), even if this line is never reached"))

    def visit_while(self, node: ast.While, ctx):
        if node.orelse:
            yield self.report(ctx, node, statement="while ... else", consequence=(
                "the parser rejects the whole function (`RuntimeError: The 'while...else...' statement is not "
                "supported now.`), even if this line is never reached"))

    def _comprehension(self, node, ctx):
        if len(node.generators) > 1:
            kind = "DictComp" if isinstance(node, ast.DictComp) else "ListComp"
            yield self.report(ctx, node, statement=f"a comprehension with {len(node.generators)} `for` clauses",
                              consequence=f"fails to compile (`TypeError: The 'generators' supports 1 "
                                          f"'comprehension' in {kind}/GeneratorExp, but got "
                                          f"{len(node.generators)} comprehensions.`): nest two comprehensions "
                                          f"or loops")

    visit_list_comp = visit_generator_exp = visit_dict_comp = _comprehension

    def visit_raise(self, node: ast.Raise, ctx):
        raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if raised is None or not isinstance(raised, (ast.Name, ast.Attribute)):
            return  # a bare re-raise
        qualname = ctx.names.qualname(raised)
        if qualname is None:
            return
        if qualname.startswith("builtins."):
            name = qualname[len("builtins."):]
            if name in _RAISABLE or not name.endswith(("Error", "Exception", "Warning", "Exit")):
                return  # supported, or not an exception class at all
        elif ctx.graph.index.lookup_class(qualname) is None:
            return  # not a class known to be one (a variable holding an exception instance, say)
        yield self.report(ctx, node, statement=f"raise {ctx.text(raised)}", consequence=(
            f"the parser rejects the whole function (`RuntimeError: Unsupported exception type: "
            f"{qualname.rpartition('.')[2]}. Raise only support some Python standard exception types`), even if "
            f"this line is never reached; raise one of them (`ValueError`, `RuntimeError`, ...)"))

    def visit_return(self, node: ast.Return, ctx):
        value = node.value
        function = enclosing_function(node) if value is not None else None
        if value is None or function is None or getattr(function, "name", "") != "construct":
            return None  # most returns (a plain return: no generator for them)
        return self._construct_return(node, ctx, value, function)

    def _construct_return(self, node: ast.Return, ctx, value: ast.expr, function):
        self_name = self_parameter(function)
        outputs = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]  # `return (self.f,)` too
        methods = [output for output in outputs if isinstance(output, ast.Attribute)
                   and isinstance(output.value, ast.Name) and output.value.id == self_name]
        owner = ctx.graph.owner_class(function) if methods else None
        if owner is None:
            return
        mro = list(ctx.graph.mro(owner))
        returned = next((m for m in methods if any(m.attr in summary.methods for summary in mro)), None)
        if returned is not None:
            yield self.report(ctx, node, statement=f"return {ctx.text(value)}", consequence=(
                f"fails to compile: a method (`{ctx.text(returned)}`) is no network output (`RuntimeError: "
                "Function in output is not supported.`); return what calling it gives"))

    def visit_with(self, node: ast.With, ctx):
        for item in node.items:
            failure = _with_failure(ctx, item.context_expr)
            if failure is not None:
                yield self.report(ctx, node, statement=f"with {ctx.text(item.context_expr)}", consequence=failure)
                return


def _with_failure(ctx, expr: ast.expr, depth: int = 0) -> Optional[str]:
    """Why `with <expr>:` fails to compile when `expr` is known not to be a `@jit_class` instance, else None."""
    if depth > 4:
        return None
    if isinstance(expr, ast.Call):
        qualname = ctx.names.qualname(expr.func)
        if qualname is None or qualname.endswith(_STREAM_CONTEXTS):
            return None  # an unknown callee; MindSpore's stream contexts are supported
        summary = ctx.graph.index.lookup_class(qualname)
        if summary is not None:
            return None if _is_jit_class(ctx, summary) else _not_jit_class(summary.name)
        module = qualname.rpartition(".")[0]
        project = module == ctx.graph.imports.module or ctx.graph.index.module(module.partition(".")[0])
        if isinstance(expr.func, ast.Name) and (project or module == "builtins"):
            # a function called by name: the parser's issubclass check of the called global fails
            return ("fails to compile: `with` on a function call "
                    "(`TypeError: issubclass() arg 1 must be a class`)")
        # a project function called through a module may return a jit_class; no library class is one
        return None if project else _not_jit_class(qualname)
    if isinstance(expr, ast.Name):
        value = ctx.tensors(expr).definition(expr)
        return _with_failure(ctx, value, depth + 1) if isinstance(value, ast.expr) else None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        tensors = ctx.tensors(expr)
        owner = ctx.graph.owner_class(tensors.method()) if tensors.is_self(expr.value) else None
        if owner is None:
            return None
        values = [v for summary in ctx.graph.mro(owner) if summary.node is not None
                  for v in _assigned_values(summary.node, expr.attr)]
        failures = [_with_failure(ctx, v, depth + 1) for v in values]
        return failures[0] if failures and all(failures) else None  # every assignment known, none a jit_class
    return None


def _not_jit_class(name: str) -> str:
    return f"fails to compile: `{name}` is not a `@jit_class` (`TypeError: Only support jit_class instance`)"


def _is_jit_class(ctx, summary) -> bool:
    decorators = [d.func if isinstance(d, ast.Call) else d for s in ctx.graph.mro(summary) if s.node is not None
                  for d in s.node.decorator_list]
    return any(getattr(d, "attr", getattr(d, "id", "")) == "jit_class" for d in decorators)


def _assigned_values(class_node: ast.ClassDef, attribute: str):
    """The values assigned to `self.<attribute>` in the methods of a class."""
    for method in class_node.body:
        if isinstance(method, ast.FunctionDef) and self_parameter(method):
            self_name = self_parameter(method)
            for node in ast.walk(method):
                if isinstance(node, ast.Assign) and any(
                        isinstance(t, ast.Attribute) and t.attr == attribute and isinstance(t.value, ast.Name)
                        and t.value.id == self_name for t in node.targets):
                    yield node.value
