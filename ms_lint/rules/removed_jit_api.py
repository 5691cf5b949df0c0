from __future__ import annotations

import ast
from typing import Any, FrozenSet, Optional, Set

from ms_lint.analysis import framework
from ms_lint.analysis.bindings import bound_names
from ms_lint.rule import Edit, Fix, Rule

# Removed names -> their replacements; both live in the `mindspore` namespace.
REMOVED = framework.REMOVED_JIT_API
_MODULES = frozenset({"mindspore", "mindspore.common", "mindspore.common.api"})
JIT = frozenset({"mindspore.jit", "mindspore.common.jit", "mindspore.common.api.jit", "mindspore.graph.jit",
                 "mindspore.graph.api.jit"})
# `jit` keywords MindSpore 2.10 deletes before compiling (graph/api.py `_check_options`, measured: a warning is
# logged and the value has no effect), with what to use instead. `hash_args` is not recognised at all.
DROPPED = {"mode": '`capture_mode="ast"|"bytecode"`', "input_signature": "`dynamic=1` or `Cell.set_inputs`",
           "jit_config": "`jit_level=`, `fullgraph=` or options", "compile_once": None, "hash_args": None}
SET_CONTEXT = frozenset({"mindspore.set_context", "mindspore.context.set_context"})


class RemovedJitApi(Rule):
    """
    ## What it does
    Finds MindSpore JIT APIs that 2.10 removed, ignores or deprecated: `ms_function` (and `ms_class`), reported
    on the import and on each use; the `jit` keywords `mode=`, `input_signature=`, `jit_config=`,
    `compile_once=` and `hash_args=`; and `set_context(jit_syntax_level=...)`.

    ## Why it matters in graph mode
    Measured on MindSpore 2.10: `mindspore.ms_function` does not exist (`hasattr` is False;
    `from mindspore import ms_function` raises `ImportError: cannot import name 'ms_function' from
    'mindspore'`); neither does `ms_class`. The replacements are `mindspore.jit` and `mindspore.jit_class`.
    `jit(function=None, *, capture_mode='ast', jit_level='O0', dynamic=0, fullgraph=False, backend='',
    **options)` deletes `mode`, `input_signature`, `jit_config` and `compile_once` from its options with only a
    log line (`For 'jit', the parameter 'mode' has been deprecated. Please use the parameter 'capture_mode'
    instead.`), so they silently have no effect: `jit(f, jit_config=JitConfig(jit_syntax_level="STRICT"))`
    still compiles `asnumpy()` at LAX, and `input_signature` no longer declares dynamic shapes.
    `set_context(jit_syntax_level=...)` still works in 2.10, without a warning, but is documented as
    deprecated in favour of `@jit(fullgraph=True)` (STRICT) and `JitConfig(jit_syntax_level=...)` per Cell: a
    warning. (ms_lint's own project-context detection still reads it to learn the syntax level.)

    Version fallbacks are not reported: an `ms_function` import inside an `except` handler of a `try` that
    imports `jit` (`try: from mindspore import jit` / `except ImportError: from mindspore import ms_function
    as jit`), the reverse (`try: from mindspore import ms_function` / `except ImportError: from mindspore import
    jit as ms_function`: 2.10 raises the ImportError the handler catches; or binds the name any other way, as
    x2ms's adapter does with a do-nothing decorator), or in the other branch of an `if` that
    imports `jit` under the same name, with the uses of that name; and any of the APIs in a branch of an `if`
    that tests the MindSpore version or a feature (`if hasattr(ms, "ms_function"):`).

    ## Example
    ```python
    from mindspore import ms_function

    @ms_function
    def step(x):
        return x * 2
    ```

    ## Use instead
    ```python
    from mindspore import jit

    @jit
    def step(x):
        return x * 2
    ```

    ## Fix
    Safe: `ms_function` becomes `jit` (`ms_class` `jit_class`) in the import and at every use, including
    `ms.ms_function`. The dropped `jit` keywords have no fix: their replacements change what is compiled
    (`capture_mode="bytecode"`, `dynamic=1`, `fullgraph=True`). `jit_syntax_level=STRICT` maps to
    `@jit(fullgraph=True)` on the compiled functions, which the message notes; it has no automatic fix.
    """

    code = "MSL065"
    name = "removed-jit-api"
    severity = "error"
    scope = "module"
    message = "{what}: {consequence}"
    fix_applicability = "safe"
    needles = ("ms_function", "ms_class", "jit")

    def visit_import_from(self, node: ast.ImportFrom, ctx):
        module = ctx.graph.imports.absolute(node.module, node.level)
        if module not in _MODULES or ctx.graph.version_guarded(node):
            return
        for index, alias in enumerate(node.names):
            if alias.name in REMOVED and (alias.asname or alias.name) not in _guarded(ctx):
                yield self.report(ctx, node, what=f"`{module}.{alias.name}` imported",
                                  consequence=f"removed in MindSpore 2.10 (ImportError); use "
                                              f"`{REMOVED[alias.name]}`",
                                  fix=self._import_fix(ctx, node, index))

    # the name and attribute hooks run on most nodes of the modules that spell a needle: plain returns for them
    def visit_name(self, node: ast.Name, ctx):
        last = ctx.names.last_name(node)
        if last not in REMOVED and not (last is None and node.id in REMOVED):
            return None  # a name bound by a function-level `import ... as` alias is only caught at its import
        if isinstance(node.ctx, ast.Load) and node.id not in _guarded(ctx):
            return self._use(node, ctx)
        return None

    def visit_attribute(self, node: ast.Attribute, ctx):
        if isinstance(node.ctx, ast.Load) and node.attr in REMOVED:
            return self._use(node, ctx)
        return None

    def visit_call(self, node: ast.Call, ctx):
        if not any(k.arg in DROPPED or k.arg == "jit_syntax_level" for k in node.keywords):
            return None  # most calls (a plain return: no generator for them)
        return self._keywords(node, ctx)

    def _keywords(self, node: ast.Call, ctx):
        qualname = ctx.names.qualname(node.func)
        if qualname in JIT:
            dropped = [k.arg for k in node.keywords if k.arg in DROPPED]
            if dropped and not ctx.graph.version_guarded(node):
                instead = "; ".join(f"`{k}=` -> {DROPPED[k]}" for k in dropped if DROPPED[k])
                yield self.report(ctx, node, what=f"`{ctx.text(node.func)}(" + ", ".join(f"{k}=..." for k in dropped)
                                  + ")`", consequence="MindSpore 2.10 drops " + ("these keywords" if len(dropped) > 1
                                                                                 else "this keyword")
                                  + " with only a log line: no effect" + (f" ({instead})" if instead else ""))
        elif qualname in SET_CONTEXT:
            level = next((k.value for k in node.keywords if k.arg == "jit_syntax_level"), None)
            if level is not None:
                text = ctx.text(level)
                value = level.value if isinstance(level, ast.Constant) else None
                if "STRICT" in text or value in (0, "0"):
                    advice = ("for STRICT use `@jit(fullgraph=True)` on the compiled functions or "
                              "`net.set_jit_config(JitConfig(jit_syntax_level=\"STRICT\"))`")
                elif text.endswith("LAX") or value in (2, "2"):
                    advice = "LAX is the default: drop it, or use `JitConfig(jit_syntax_level=...)` per Cell"
                else:
                    advice = "use `@jit(fullgraph=True)` for STRICT, or `JitConfig(jit_syntax_level=...)` per Cell"
                yield self.report(ctx, node, severity="warning",
                                  what=f"`{ctx.text(node.func)}(jit_syntax_level={ctx.text(level)})`",
                                  consequence=f"deprecated in MindSpore 2.10 (still applied); {advice}")

    def _use(self, node: ast.expr, ctx):
        qualname = ctx.names.qualname(node)
        if not qualname:
            return
        module, _, name = qualname.rpartition(".")
        if module not in _MODULES or name not in REMOVED or ctx.graph.version_guarded(node):
            return
        yield self.report(ctx, node, what=f"`{ctx.text(node)}` used",
                          consequence=f"`mindspore.{name}` was removed in MindSpore 2.10; use "
                                      f"`mindspore.{REMOVED[name]}`",
                          fix=self._use_fix(ctx, node, name))

    # ----- fixes ----------------------------------------------------------------------------------------------
    @staticmethod
    def _use_fix(ctx, node: Any, name: str) -> Optional[Fix]:
        replacement = REMOVED[name]
        if isinstance(node, ast.Attribute):
            row, column = ctx.end(node)
            if node.end_lineno != node.value.end_lineno:
                return None
            return Fix("safe", f"Use `{replacement}`", (Edit(replacement, (row, column - len(name)), (row, column)),))
        if node.id != name or not _free_for(ctx, replacement):
            return None  # an alias (`ms_function as jit`): the import's fix renames what it binds
        return Fix("safe", f"Use `{replacement}`", (ctx.replace(node, replacement),))

    @staticmethod
    def _import_fix(ctx, node: ast.ImportFrom, index: int) -> Optional[Fix]:
        alias = node.names[index]
        if not hasattr(alias, "lineno"):
            return None  # Python 3.9: import aliases carry no positions, the fix cannot be placed
        replacement = REMOVED[alias.name]
        bound = alias.asname or alias.name
        already = ctx.graph.imports.names.get(replacement)
        if alias.asname and alias.asname != replacement:
            text = f"{replacement} as {alias.asname}"
        elif alias.asname or (already is None and _free_for(ctx, replacement)):
            text = replacement
        elif already is not None and _free_for(ctx, replacement) and len(node.names) > 1:
            # `jit` is imported too: drop the alias
            if index:
                start, end = ctx.end(node.names[index - 1]), ctx.end(alias)
            else:
                start, end = ctx.start(alias), ctx.start(node.names[1])
            return Fix("safe", f"Remove `{bound}` (`{replacement}` is imported)", (Edit("", start, end),))
        else:
            return None
        return Fix("safe", f"Import `{replacement}`", (ctx.replace(alias, text),))


def _free_for(ctx, name: str) -> bool:
    """`name` is unbound in the module, or bound to MindSpore's own object of that name."""
    bound = ctx.graph.imports.names.get(name)
    return bound is None and name not in ctx.graph.summary.functions and name not in ctx.graph.summary.classes \
        or bound in (f"mindspore.{name}", f"mindspore.common.api.{name}", f"mindspore.common.{name}")


def _guarded(ctx) -> FrozenSet[str]:
    """Names bound by a version-fallback import of a removed API (computed once per module)."""
    return ctx.memo(_guarded, lambda: _fallback_names(ctx))


def _fallback_names(ctx) -> FrozenSet[str]:
    names: Set[str] = set()
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Try):
            primary = _imported(ctx, node.body)
            for handler in node.handlers:
                fallback = _imported(ctx, handler.body)
                names.update(name for name, removed in fallback.items()
                             if removed and name in primary and not primary[name])
                if _catches_import_error(handler):  # `try: import ms_function` / `except ImportError: import jit`
                    rebound = _bound_in(handler.body)  # or any other binding: `ms_class = null_decorator`
                    names.update(name for name, removed in primary.items()
                                 if removed and ((name in fallback and not fallback[name])
                                                 or (name not in fallback and name in rebound)))
        elif isinstance(node, ast.If):
            body, orelse = _imported(ctx, node.body), _imported(ctx, node.orelse)
            for branch, other in ((body, orelse), (orelse, body)):
                names.update(name for name, removed in branch.items()
                             if removed and name in other and not other[name])
    return frozenset(names)


def _bound_in(block) -> Set[str]:
    """The names the statements directly in `block` bind to something usable in place of the API (defs,
    classes, imports, assignments of anything but a constant: `ms_function = None` breaks `@ms_function`)."""
    bound: Set[str] = set()
    for stmt in block:
        if isinstance(stmt, ast.Assign) and not isinstance(stmt.value, ast.Constant):
            bound.update(target.id for target in stmt.targets if isinstance(target, ast.Name))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            bound.update(bound_names(stmt))
    return bound


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    """Does the handler catch the ImportError a removed API raises (ImportError, ModuleNotFoundError's base
    Exception, or everything)?"""
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return caught is None or any(getattr(name, "id", getattr(name, "attr", None))
                                 in ("ImportError", "Exception", "BaseException") for name in names)


def _imported(ctx, block) -> dict:
    """{bound name: imports a removed API?} for the `from mindspore... import` statements directly in `block`."""
    found = {}
    for stmt in block:
        if isinstance(stmt, ast.ImportFrom) and ctx.graph.imports.absolute(stmt.module, stmt.level) in _MODULES:
            for alias in stmt.names:
                found[alias.asname or alias.name] = alias.name in REMOVED
    return found
