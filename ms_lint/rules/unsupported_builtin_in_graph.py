from __future__ import annotations

import ast
from typing import Any

from ms_lint.analysis.walk import enclosing_function, self_parameter
from ms_lint.rule import Rule

# Builtins the graph compiler runs only through JIT Fallback: on tensor data they need LAX.
FALLBACK_BUILTINS = frozenset({"sorted", "set", "frozenset", "id", "hash"})
# ...of which these also reject, under STRICT, an expression that merely names a tensor (`sorted(x.shape)`).
NAMES_TENSOR_UNDER_STRICT = frozenset({"sorted", "set", "id", "hash"})
_DICT_VIEWS = frozenset({"keys", "values", "items"})


class UnsupportedBuiltinInGraph(Rule):
    """
    ## What it does
    Finds `sorted`, `set`, `frozenset`, `id`, `hash` and `iter` applied to tensor data in graph-compiled code,
    `eval`/`exec` anywhere in graph code, `map` over a closure of the function's locals, and `max`/`min` or
    ordering comparisons (`<`, `>=`...) of lists and tuples that hold tensors.

    ## Why it matters in graph mode
    Measured on MindSpore 2.10 (CPU):
    * `sorted(x)`, `set((x,))`, `frozenset((x,))`, `id(x)`, `hash(x)` run on the host through JIT Fallback at
      the default LAX syntax level (`id`/`hash` then return host object ids, not anything about the data) and fail
      to compile under STRICT: `ValueError: When handling script 'sorted(x) in graph mode', the inputs should be
      constant, but found variable 'x' to be nonconstant. Try to set jit_syntax_level to LAX.`
    * Under STRICT the same error is raised when the argument only *names* a tensor: `sorted(x.shape)`,
      `set(x.shape)`, `hash(x.shape)`, `sorted(ops.shape(x))`, `sorted(range(x.ndim))` fail to compile, while
      `s = x.shape; sorted(s)` compiles. These are reported only when the code compiles at STRICT; at LAX they
      are folded at compile time and fine.
    * `iter(x)` compiles at both levels, but `next()` on the iterator returns an `(item, rest)` tuple and does
      not advance, where PyNative returns the item: a silent divergence, reported as an error at any level.
    * `eval("x * 2")` raises `NameError: name 'x' is not defined` at both levels (the evaluated code cannot see
      the graph's locals) and `exec(...)` fails under STRICT (`RuntimeError: The third argument should be a
      dictionary`): always an error.

    * `map(f, ...)` whose function is a lambda or a nested def reading a local of the enclosing function
      (`sum(map(lambda attn: attn(x), self.attentions))`) fails at both levels: `RuntimeError: The Map operator
      don't support Closure with free variable yet.`; a lambda without free variables, one reading only `self`,
      a named function, and the comprehension `[attn(x) for attn in self.attentions]` compile.

    * `max((x, y), (y, x))` fails with `ValueError: The truth value of an array with more than one element is
      ambiguous.`, `min([[x], [y]])` with `TypeError: min() cannot support tensor in list or tuple nested now.`,
      and `[x] < [y]` or `(x, y) >= (y, x)` with `TypeError: For primitive 'list_lt', the input element must be
      scalar, but got AbstractTensor` (both levels); `max(x, y)` and `min([x, y])` on the tensors themselves
      compile.

    The same builtins on constants and literals (`sorted([3, 1, 2])`, `set([1, 2])`, `hash(3)`) compile at
    both levels, as do `len`, `range`, `isinstance`, `zip`, `enumerate`, `min`/`max`, `int`/`float`, `.item()`;
    none of these is reported.

    ## Example
    ```python
    class TopScores(nn.Cell):
        def construct(self, scores):
            return sorted(scores, reverse=True)[:5]
    ```

    ## Use instead
    ```python
    class TopScores(nn.Cell):
        def construct(self, scores):
            return ops.sort(scores, descending=True)[0][:5]
    ```

    ## Fix
    None: the graph replacement (`ops.sort`, `ops.unique`, a loop over the tensor) depends on what the Python
    value was used for.
    """

    code = "MSL009"
    name = "unsupported-builtin-in-graph"
    severity = "level"
    compiled_only = True
    scope = "graph"
    message = "`{call}` in graph code reached from `{entry}`: {consequence}"
    call_names = frozenset({"eval", "exec", "iter", "map", "max", "min"}) | FALLBACK_BUILTINS

    def visit_call(self, node: ast.Call, ctx):
        qualname = ctx.names.qualname(node.func) or ""
        if not qualname.startswith("builtins."):
            return
        builtin = qualname[len("builtins."):]
        call = f"{builtin}(...)"
        if builtin in ("eval", "exec"):
            yield self.report(ctx, node, severity="error", call=call,
                              consequence="the evaluated code cannot see the graph's local variables")
            return
        if builtin == "map":
            free = _free_local(ctx, node)
            if free is not None:
                yield self.report(ctx, node, severity="error", call=call,
                                  consequence=f"its function reads `{free}`, a local of the enclosing function: "
                                              "MindSpore rejects it (`RuntimeError: The Map operator don't support "
                                              "Closure with free variable yet.`); use a comprehension")
            return
        if builtin in ("max", "min"):
            tensors = ctx.tensors(node)
            nested = len(node.args) > 1 and all(_sequence_of_tensors(ctx, tensors, a) for a in node.args) or (
                len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple))
                and any(_sequence_of_tensors(ctx, tensors, e) for e in node.args[0].elts))
            if nested:
                yield self.report(ctx, node, severity="error", call=call, consequence=(
                    f"2.10 cannot compare sequences that hold tensors (`TypeError: {builtin}() cannot support "
                    f"tensor in list or tuple nested now.`, or `ValueError: The truth value of an array with more "
                    f"than one element is ambiguous.`, both levels); compare the tensors themselves"))
            return
        if builtin != "iter" and builtin not in FALLBACK_BUILTINS:
            return
        tensors = ctx.tensors(node)
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if any(_holds_tensor_data(ctx, tensors, a) for a in arguments):
            if builtin == "iter":
                yield self.report(ctx, node, severity="error", call=call,
                                  consequence="`next()` on it returns an `(item, rest)` tuple in graph mode")
            else:
                yield self.report(ctx, node, call=call, consequence=f"on tensor data it {self.level_note(ctx, node)}")
        elif builtin in NAMES_TENSOR_UNDER_STRICT and ctx.graph.level_of(node) == "strict":
            named = next((sub for a in arguments for sub in ast.walk(a)
                          if isinstance(sub, ast.Name) and _holds_tensor_data(ctx, tensors, sub)), None)
            if named is not None:
                yield self.report(ctx, node, severity="error", call=call,
                                  consequence=f"fails to compile at the STRICT syntax level because it names the "
                                              f"tensor `{named.id}` (compute `{ctx.text(arguments[0])}` into a "
                                              f"local first)")


    def visit_compare(self, node: ast.Compare, ctx):
        """`[x] < [y]`, `(a, b) >= (c, d)` with tensors inside: ordering sequences compares their elements as
        scalars."""
        if not any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
            return None
        if not isinstance(node.left, (ast.List, ast.Tuple)):
            return None
        tensors = ctx.tensors(node)
        if not all(_sequence_of_tensors(ctx, tensors, side) for side in (node.left, *node.comparators)):
            return None
        return iter((self.report(ctx, node, severity="error", call=ctx.text(node), consequence=(
            "2.10 orders sequences element by element as scalars and fails on tensors (`TypeError: For primitive "
            "'list_lt', the input element must be scalar, but got AbstractTensor`, both levels)")),))


def _sequence_of_tensors(ctx, tensors, expr: ast.AST) -> bool:
    """A list or tuple display with an element that holds tensor data."""
    return isinstance(expr, (ast.List, ast.Tuple)) and any(_holds_tensor_data(ctx, tensors, e) for e in expr.elts)


def _free_local(ctx, call: ast.Call):
    """The first local of the function around `call` that the function given to `map` reads (a lambda, or a def
    nested in that function), or None. `self` is no free variable to the compiler (measured: `map(lambda t: t *
    self.scale, ...)` compiles)."""
    if not call.args:
        return None
    mapped: Any = call.args[0]
    outer = enclosing_function(call)
    if outer is None or isinstance(outer, ast.Lambda):
        return None
    if isinstance(mapped, ast.Name):
        mapped = next((s for s in ast.walk(outer) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and s.name == mapped.id and s is not outer), None)
    if not isinstance(mapped, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    arguments = mapped.args
    own = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg,
                           arguments.kwarg) if a is not None}
    body = [mapped.body] if isinstance(mapped, ast.Lambda) else mapped.body
    own |= {n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    outer_locals = ctx.names.local_names(outer) - {self_parameter(outer)}
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in own \
                    and node.id in outer_locals:
                return node.id
    return None


def _holds_tensor_data(ctx, tensors, expr: ast.AST, depth: int = 0) -> bool:
    """`tensors.derives`, minus two common non-tensor cases: dict views (`sorted(d.keys())`, `d.items()`), and
    values reached from a bare parameter of a helper function or an optional (`=None`) one through names,
    attributes and items (`set(adapter_names)`, `set(config.attn_layers)`), which in practice hold names, lists
    or configs: only the inputs of an entry point are taken for tensors without further evidence."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _DICT_VIEWS:
        return False
    root = expr
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if isinstance(root, ast.Name) and depth < 8:
        definition = tensors.definition(root)
        if definition is None and root.id in tensors.parameters:
            function = tensors.function
            entry = ctx.graph.entry_of(function)
            if entry is None or entry.name.rpartition(".")[2] != getattr(function, "name", None) \
                    or _defaults_to_none(function, root.id):
                return False
        elif _plumbing(ctx, definition) is not None \
                and not _holds_tensor_data(ctx, tensors, _plumbing(ctx, definition), depth + 1):
            return False
    return tensors.derives(expr)


def _plumbing(ctx, definition):
    """What a name's value was taken from without computing on it: an access path, a loop's iterable, the
    argument of `sorted`/`list`/`tuple`/`reversed`; None for anything else."""
    if isinstance(definition, (ast.Name, ast.Attribute, ast.Subscript)):
        return definition
    if isinstance(definition, (ast.For, ast.comprehension)):
        return definition.iter
    if isinstance(definition, ast.Call) and definition.args and ctx.names.qualname(definition.func) in (
            "builtins.sorted", "builtins.list", "builtins.tuple", "builtins.reversed"):
        return definition.args[0]
    return None


def _defaults_to_none(function, name: str) -> bool:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
             *zip(arguments.kwonlyargs, arguments.kw_defaults)]
    return any(arg.arg == name and isinstance(default, ast.Constant) and default.value is None
               for arg, default in pairs)
