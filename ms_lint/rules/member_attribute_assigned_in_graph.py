from __future__ import annotations

import ast
from typing import Dict, Optional

from ms_lint.analysis.bindings import flatten_targets
from ms_lint.analysis.walk import parent_of
from ms_lint.rule import Rule

# Measured on 2.10 CPU, LAX and STRICT alike (tests/oracle/test_MSL037_...).
_PARAMETER = ("a Parameter's attributes cannot be set in graph code (2.10: `ValueError: Do not support to set "
              "attribute for a parameter.`)")
_SUBSCRIPT = ("an indexed member's attributes cannot be set in graph code (2.10: `RuntimeError: In graph mode, "
              "only attribute and name of class members can be assigned. But got Subscript.`)")
_SUB_CELL = ("a sub-Cell's attributes cannot be set in graph code (2.10 fails to compile or to run it, e.g. "
             "`RuntimeError: Default/Cast-op0 does not support this kernel data type`)")


class MemberAttributeAssignedInGraph(Rule):
    """
    ## What it does
    Finds assignments in graph-compiled code to an attribute of what the Cell holds rather than of the Cell
    itself: of a `Parameter` (`self.weight.requires_grad = False`, `self.weight.name = ...`), of a sub-Cell
    (`self.encoder.use_cache = True`, also through a loop over an `nn.CellList`), or of an indexed member
    (`self.blocks[0].drop_rate = 0.1`).

    ## Why it matters in graph mode
    PyNative runs all of these. The graph compiler refuses them, measured on 2.10 at LAX and STRICT alike:
    a Parameter's attributes fail with `ValueError: Do not support to set attribute for a parameter.`; an
    indexed target with `RuntimeError: In graph mode, only attribute and name of class members can be assigned.
    But got Subscript.`; a sub-Cell's attribute (`self.sub.flag = True`, or `s.flag = True` for `s` in an
    `nn.CellList`) makes the compiled graph fail when it runs (`RuntimeError: Default/Cast-op0 does not support
    this kernel data type: ...`). An attribute of a plain Python object (`self.cfg.k = 2`) compiles.

    ## Example
    ```python
    class Encoder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.use_cache = False

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()

        def construct(self, x):
            self.encoder.use_cache = True
            return self.encoder(x)
    ```

    ## Use instead
    ```python
    class Encoder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.use_cache = False

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
            self.encoder.use_cache = True  # set once, in host code

        def construct(self, x):
            return self.encoder(x)
    ```

    ## Fix
    None: set such attributes in `__init__` or in host code before the Cell is called (a flag that changes
    per call belongs in an argument of `construct`; `requires_grad` is set on the Parameter before training).
    """

    code = "MSL037"
    name = "member-attribute-assigned-in-graph"
    severity = "error"
    compiled_only = True
    scope = "graph"
    message = "`{target}` assigned in graph code reached from `{entry}`: {why}"

    def visit_assign(self, node: ast.Assign, ctx):
        if all(target.__class__ is ast.Name for target in node.targets):
            return None  # `x = ...`: most assignments in graph code
        return self._check(ctx, node.targets)

    def visit_aug_assign(self, node: ast.AugAssign, ctx):
        return self._check(ctx, [node.target])

    def visit_ann_assign(self, node: ast.AnnAssign, ctx):
        return self._check(ctx, [node.target]) if node.value is not None else None

    def _check(self, ctx, targets):
        for target in flatten_targets(targets):
            if isinstance(target, ast.Attribute):
                why = self._refusal(ctx, target)
                if why is not None:
                    yield self.report(ctx, target, target=ctx.text(target), why=why)

    @staticmethod
    def _refusal(ctx, target: ast.Attribute) -> Optional[str]:
        """Why 2.10 refuses `<owner>.<attr> = v`, or None when it takes it (or cannot be known)."""
        owner = target.value
        if isinstance(owner, ast.Subscript) and _rooted_at_self(ctx, owner):
            return _SUBSCRIPT
        tensors = ctx.tensors(target)
        members = _members(ctx, tensors.method())
        if isinstance(owner, ast.Attribute) and tensors.is_self(owner.value):
            kind = members.get(owner.attr)
            if kind == "parameter":
                return _PARAMETER
            if kind is not None:
                return _SUB_CELL
        if isinstance(owner, ast.Name) and _iterates_cell_container(owner, members, tensors):
            return _SUB_CELL
        return None


def _members(ctx, method) -> Dict[str, str]:
    """What the class of `method` holds by attribute (`GraphScope.member_kinds`)."""
    owner = ctx.graph.owner_class(method) if method is not None else None
    return ctx.graph.member_kinds(owner) if owner is not None else {}


def _rooted_at_self(ctx, expr: ast.expr) -> bool:
    """`self.blocks[0]`, `self.blocks[i][j]`: an indexed member of the Cell."""
    while isinstance(expr, (ast.Subscript, ast.Attribute)):
        expr = expr.value
        if ctx.tensors(expr).is_self(expr):
            return True
    return False


def _iterates_cell_container(name: ast.Name, members: Dict[str, str], tensors) -> bool:
    """`for block in self.blocks: block.<attr> = v` with `self.blocks` an `nn.CellList`."""
    loop = parent_of(name)
    while loop is not None and not isinstance(loop, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.target.id == name.id:
            iterated = loop.iter
            return isinstance(iterated, ast.Attribute) and tensors.is_self(iterated.value) \
                and members.get(iterated.attr) == "container"
        loop = parent_of(loop)
    return False
