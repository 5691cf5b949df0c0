from __future__ import annotations

import ast

from ms_lint.analysis import framework
from ms_lint.analysis.bindings import flatten_targets
from ms_lint.analysis.walk import spelled_name
from ms_lint.rule import Rule

# Framework bases that hold no Parameter of their own.
_PLAIN_BASES = framework.CELL_BASES | {"mindtorch.torch.nn.Module"}
_ITEM_NOTES = {
    "lax": "at the default LAX syntax level the item is written back through JIT Fallback; fails to compile under "
           "STRICT",
    "strict": "fails to compile at the STRICT syntax level (`TypeError: When JIT_SYNTAX_LEVEL is not set to LAX "
              "self.{attribute} should be initialized as a 'Parameter' in the '__init__' function to perform "
              "assign subscript`)",
}
_CONTAINERS = (ast.Dict, ast.List, ast.DictComp, ast.ListComp)
_LEVEL_NOTES = {
    "lax": "at the default LAX syntax level this runs through JIT Fallback: a Python number is written back, but a "
           "tensor stored this way keeps its first-call value in every later call; fails to compile under STRICT",
    "strict": "fails to compile at the STRICT syntax level (`TypeError: In JIT strict mode, if need to modify a "
              "member attribute of a class with self.{attribute}, the member attribute must be of the Parameter "
              "type`)",
}
# `self.x = assign(self.x, v)`: the op writes `v` into `self.x` in place (its input must be a Parameter) and returns it
_IN_PLACE_UPDATES = frozenset({"assign", "assign_add", "assign_sub", "assignadd", "assignsub"})


class AttributeAssignedInGraph(Rule):
    """
    ## What it does
    Finds `self.<name> = ...` (and `self.<name> += ...`, tuple targets) in graph-compiled code when `<name>` is
    not a `Parameter` of the Cell: caches, counters and flags kept on the Cell between calls, as is common in
    code ported from PyTorch.

    The rule stays silent when `<name>` is a `Parameter` (assigning one in graph code updates it, measured), when
    the value is an `Assign` op's update of the attribute itself (`self.x = self.assign(self.x, v)`: its input is
    a Parameter, updated in place; mindarmour's DP training step, whose bound its caller passes in), and
    when a base class cannot be resolved or is a MindSpore layer such as `nn.Dense` (it may hold `<name>` as a
    Parameter).

    ## Why it matters in graph mode
    Measured on MindSpore 2.10 (CPU). Under STRICT (`jit_syntax_level=STRICT`, `@jit(fullgraph=True)`) the
    compile fails: `TypeError: In JIT strict mode, if need to modify a member attribute of a class with
    self.count, the member attribute must be of the Parameter type. But got '0' with type 'int'.`
    At the default LAX level the assignment runs through JIT Fallback and **diverges silently**: a tensor
    stored on `self` keeps the value of the first call in every later call (`self.cache = x` called with 1,
    10, 100, 1000 returned 1, 11, 101, 1001 where PyNative returns 1, 11, 110, 1100, and `cache` stayed at the
    first input). A Python number (`self.count += 1`) is written back correctly, even under a tensor
    condition, but each call costs the fallback (4–12 ms instead of 0.2 ms for the same Cell without it).
    Assigning a `Parameter` attribute (`self.p = v`) updates it at both levels.

    An item store on a dict or list the Cell holds (`self.cache["k"] = v`, the attribute assigned a dict or
    list literal) is reported the same way: at LAX the item is written back (measured), under STRICT it fails
    with `TypeError: When JIT_SYNTAX_LEVEL is not set to LAX self.cache should be initialized as a 'Parameter'
    in the '__init__' function to perform assign subscript`.

    ## Example
    ```python
    class Memory(nn.Cell):
        def __init__(self):
            super().__init__()
            self.cache = Tensor(np.zeros(4, np.float32))

        def construct(self, x):
            out = x + self.cache
            self.cache = x
            return out
    ```

    ## Use instead
    ```python
    class Memory(nn.Cell):
        def __init__(self):
            super().__init__()
            self.cache = Parameter(Tensor(np.zeros(4, np.float32)), name="cache", requires_grad=False)

        def construct(self, x):
            out = x + self.cache
            ops.assign(self.cache, x)
            return out
    ```

    ## Fix
    None: turning the attribute into a `Parameter` changes the Cell's checkpoint and `parameters_dict()`, and a
    Python counter should usually move to the host loop; that is a design decision.
    """

    code = "MSL035"
    name = "attribute-assigned-in-graph"
    severity = "level"
    compiled_only = True
    scope = "graph"
    message = "`self.{attribute}` assigned in graph code reached from `{entry}`: {level_note}"

    def visit_assign(self, node: ast.Assign, ctx):
        if all(target.__class__ is ast.Name for target in node.targets):
            return None  # `x = ...`: most assignments in graph code (a plain return: no generator for them)
        return self._check(ctx, node, node.targets)

    def visit_aug_assign(self, node: ast.AugAssign, ctx):
        yield from self._check(ctx, node, [node.target])

    def visit_ann_assign(self, node: ast.AnnAssign, ctx):
        if node.value is not None:
            yield from self._check(ctx, node, [node.target])

    def _check(self, ctx, statement, targets):
        flat = list(flatten_targets(targets))
        attributes = [a.attr for a in flat if self._is_plain_attribute(ctx, a)
                      and not _updated_in_place(getattr(statement, "value", None), a.attr)]
        if attributes:  # one finding per statement, naming every attribute it assigns
            yield self.report(ctx, statement, attribute="`, `self.".join(attributes),
                              level_note=_LEVEL_NOTES[ctx.graph.level_of(statement)].format(attribute=attributes[0]))
            return
        items = [t.value for t in flat if isinstance(t, ast.Subscript) and self._is_plain_attribute(ctx, t.value)
                 and self._holds_container(ctx, t.value)]
        if items:
            yield self.report(ctx, statement, attribute=f"{items[0].attr}[...]",
                              level_note=_ITEM_NOTES[ctx.graph.level_of(statement)].format(attribute=items[0].attr))

    @staticmethod
    def _holds_container(ctx, attribute: ast.Attribute) -> bool:
        """Does the class assign `self.<name>` a dict or list literal (and nothing else)?"""
        owner = ctx.graph.owner_class(ctx.tensors(attribute).method())
        node = owner.node if owner is not None else None
        if node is None:
            return False
        values = [n.value for n in ast.walk(node) if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Attribute) and t.attr == attribute.attr and isinstance(t.value, ast.Name)
            and t.value.id == "self" for t in n.targets)]
        return bool(values) and all(isinstance(v, _CONTAINERS) or (isinstance(v, ast.Call) and getattr(
            v.func, "id", None) in ("dict", "list")) for v in values)

    @staticmethod
    def _is_plain_attribute(ctx, target: ast.expr) -> bool:
        """`self.<name>` where <name> is not (and cannot be) a Parameter of the class."""
        if not isinstance(target, ast.Attribute):
            return False
        tensors = ctx.tensors(target)
        if not tensors.is_self(target.value):
            return False
        owner = ctx.graph.owner_class(tensors.method())
        if owner is None or any(target.attr in summary.parameters for summary in ctx.graph.mro(owner)):
            return False
        # an unresolvable base or a MindSpore layer (nn.Dense...) may hold it as a Parameter
        return all(base in _PLAIN_BASES or ctx.graph.index.class_kind(base) is None
                   for base in ctx.graph.external_bases(owner))


def _updated_in_place(value, attribute: str) -> bool:
    """Is the value an in-place update of `self.<attribute>` by an Assign op (mindarmour's
    `self._norm_bound = self._assign(self._norm_bound, next_norm_bound)`, issue 19's thirteenth sample)?"""
    if not isinstance(value, ast.Call) or not value.args:
        return False
    first = value.args[0]
    return isinstance(first, ast.Attribute) and first.attr == attribute and isinstance(first.value, ast.Name) \
        and (spelled_name(value.func) or "").lower().lstrip("_") in _IN_PLACE_UPDATES
