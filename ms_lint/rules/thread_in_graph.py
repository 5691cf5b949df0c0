from __future__ import annotations

import ast
from typing import Optional, Set

from ms_lint.analysis.walk import enclosing_function, self_parameter
from ms_lint.rule import Rule

THREAD_MODULES = ("threading.", "_thread.", "multiprocessing.", "concurrent.futures.")


class ThreadInGraph(Rule):
    """
    ## What it does
    Finds `threading`, `multiprocessing` and `concurrent.futures` in graph-compiled code: threads, pools,
    executors and locks created there, and locks, pools or threads kept on `self` (or in a module global) and
    used there (`with self.lock:`, `self.lock.acquire()`, `self.pool.map(...)`). An attribute on `self` is
    followed into the methods of the class and its bases, in other project modules too (a base class's methods
    build thread objects only if its module's text names a thread module, as any import of one does).

    ## Why it matters in graph mode
    Graph code is compiled once and then runs as a graph; Python concurrency objects cannot live in it. Measured
    on MindSpore 2.10, LAX and STRICT alike: `threading.Thread(target=f).start()` in `construct` compiles and
    **runs once, at compile time** (after two calls the thread's side effect happened once; PyNative: twice), and
    a `ThreadPool(2).map(...)` runs at compile time with its result frozen into the graph. Using a lock (on
    `self` or a module global), a pool or an executor as a context manager fails to compile:
    `TypeError: Only support jit_class instance, but got PythonObject(type: <class '_thread.lock'>, ...)` (the
    same for `multiprocessing.pool.Pool` and `ThreadPoolExecutor`). PyNative runs all of them.

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lock = threading.Lock()

        def construct(self, x):
            with self.lock:
                return self.dense(x)
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return self.dense(x)

    with lock:  # synchronise around the call, in host code
        y = net(x)
    ```

    ## Fix
    None: the synchronisation or parallelism has to move out of the graph into the host code that calls it.
    """

    code = "MSL005"
    name = "thread-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "{what} in graph code reached from `{entry}`: {consequence}"
    needles = ("threading", "_thread", "multiprocessing", "concurrent")

    def visit_call(self, node: ast.Call, ctx):
        qualname = ctx.names.qualname(node.func) or ""
        if qualname.startswith(THREAD_MODULES):
            yield self.report(ctx, node, what=f"`{ctx.text(node.func)}(...)`",
                              consequence="runs once at compile time, or fails to compile")
            return
        func = node.func
        if isinstance(func, ast.Attribute) and self._holds_thread_object(ctx, func.value):
            yield self.report(ctx, node, what=f"`{ctx.text(func)}(...)` on a thread, lock or pool",
                              consequence="runs once at compile time, not at every call")

    def visit_with(self, node: ast.With, ctx):
        for item in node.items:
            if self._holds_thread_object(ctx, item.context_expr):
                yield self.report(ctx, item.context_expr, what=f"`with {ctx.text(item.context_expr)}:`",
                                  consequence="fails to compile (`Only support jit_class instance`)")

    @staticmethod
    def _holds_thread_object(ctx, expr: ast.AST) -> bool:
        """`self.<attr>` or a module global that is assigned a threading/multiprocessing object somewhere."""
        if isinstance(expr, ast.Name):
            function = enclosing_function(expr)
            if function is not None and ctx.names.is_local(function, expr.id):
                return False  # a local: its creation is reported where it happens
            return expr.id in _thread_globals(ctx)
        if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)):
            return False
        tensors = ctx.tensors(expr)
        if not tensors.is_self(expr.value):
            return False
        owner = ctx.graph.owner_class(tensors.method())
        return owner is not None and any(expr.attr in _thread_attributes(ctx, summary)
                                         for summary in ctx.graph.mro(owner))


def _is_thread_call(ctx, value: Optional[ast.AST]) -> bool:
    return isinstance(value, ast.Call) and (ctx.names.qualname(value.func) or "").startswith(THREAD_MODULES)


def _thread_globals(ctx) -> Set[str]:
    names: Set[str] = set()
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.Assign) and _is_thread_call(ctx, stmt.value):
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return names


def _thread_attributes(ctx, summary) -> Set[str]:
    """Attributes the class's methods assign a threading/multiprocessing object to (`self.lock = Lock()`); found
    once per class and module (asked for every method call on `self` in graph code)."""
    found = ctx.memo(_thread_attributes, dict)
    if summary.qualname not in found:
        found[summary.qualname] = _assigned_thread_objects(ctx, summary)
    return found[summary.qualname]


def _assigned_thread_objects(ctx, summary) -> Set[str]:
    names: Set[str] = set()
    if not _spells_thread_modules(ctx, summary) or summary.node is None:
        return names
    for method in summary.node.body:
        receiver = self_parameter(method) if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if receiver is None:
            continue
        for node in ast.walk(method):
            if isinstance(node, ast.Assign) and _is_thread_call(ctx, node.value):
                names.update(t.attr for t in node.targets if isinstance(t, ast.Attribute)
                             and isinstance(t.value, ast.Name) and t.value.id == receiver)
    return names


def _spells_thread_modules(ctx, summary) -> bool:
    """Does the text of the class's module name one of the thread modules (as any import of them does)? Else its
    methods build no thread object, and its tree, in another module, is not parsed again to look."""
    module = summary.qualname.rpartition(".")[0]
    if module == ctx.source.module_name:
        return True  # this module: the rule runs only where the text spells them (`needles`)
    return ctx.graph.index.spells(module, ThreadInGraph.needles)
