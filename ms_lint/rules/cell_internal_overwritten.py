from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis import framework
from ms_lint.analysis.walk import enclosing_function, self_parameter
from ms_lint.rule import Rule

# `self.construct = self.forward` (or `construct = forward`) is how a Cell picks its graph: measured to work.
_SHADOWABLE = (framework.CELL_METHODS - {"construct"}) | framework.CELL_READONLY_PROPERTIES
# Methods the GRAPH_MODE call path or training calls on the Cell itself (a bool in their place, measured on 2.10).
_BREAKS_GRAPH_CALL = frozenset({
    "cells_and_names", "check_names", "check_names_and_refresh_name", "compile", "compile_and_run", "extend_repr",
    "generate_scope", "get_flags", "get_parameters", "get_scope", "init_parameters_data", "name_cells",
    "parameters_and_names", "parameters_dict"})
_BREAKS_TRAINING = frozenset({"trainable_params"})


class CellInternalOverwritten(Rule):
    """
    ## What it does
    Finds assignments, in an `nn.Cell` subclass, to a name that `nn.Cell` 2.10 uses for one of its public methods
    (`compile`, `parameters_dict`, `cells`, `to`, `trainable_params`, `recompute`, `shard`... 66 of them) or
    read-only properties (`param_prefix`, `cls_name`, `compiled`...): `self.compile = True` in a method,
    `compile = True` in the class body, `setattr(self, "to", ...)`. Also finds a method named `bprop` whose
    parameters are not `construct`'s inputs plus `out` and `dout`.

    A warning, not an error, for `self.trainable_params = network.trainable_params()` in a training wrapper (a
    TrainOneStep-style Cell keeping its network's parameters, as MindSpore's own wide_and_deep does): measured on
    2.10, `Model(wrapper).train(...)` works, only a later `wrapper.trainable_params()` call fails.

    Not reported: `construct` (assigning it is how a Cell picks its graph), settable properties and data
    attributes such as `phase`, `training`, `requires_grad`, and names `nn.Cell` does not have (`cast`).

    ## Why it matters in graph mode
    Measured on MindSpore 2.10 (CPU), with `self.<name> = True` in `__init__`:
    * read-only properties raise at construction:
      `AttributeError: property 'param_prefix' of 'Net' object has no setter`;
    * 14 methods are called on the Cell by every GRAPH_MODE call (`compile`, `compile_and_run`,
      `parameters_dict`, `parameters_and_names`, `cells_and_names`, `get_parameters`, `name_cells`, ...): the call
      fails with `TypeError: 'bool' object is not callable`, while PyNative runs (for most of them), so the
      bug shows only when switching to graph mode; `trainable_params` breaks every optimizer;
    * the other methods are silently replaced: every caller (`net.to_float(...)`, `cells()` in
      `amp.build_train_network`, your own code) breaks later, and assigning a Cell to one of them raises
      `KeyError: ... the to child cell already exists`.
    A method named `bprop` is taken as the Cell's custom backward: with the wrong number of parameters every
    gradient through the Cell fails (`RuntimeError: The function 'bprop' of Primitive or Cell requires at least
    2 params 'out' and 'dout'`, or `TypeError: The params of function 'bprop' of Primitive or Cell requires the
    forward inputs as well as the 'out' and 'dout'`); with the right number it silently replaces the gradient.

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self, compile=True):
            super().__init__()
            self.compile = compile
            self.cells = [nn.Dense(4, 4)]
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def __init__(self, compile=True):
            super().__init__()
            self.use_compile = compile
            self.blocks = nn.CellList([nn.Dense(4, 4)])
    ```

    ## Fix
    None: the new name must be chosen, and every use of the attribute renamed with it.
    """

    code = "MSL034"
    name = "cell-internal-overwritten"
    severity = "error"
    scope = "cell"
    message = "{what} in `{cls}`: {consequence}"
    call_names = frozenset({"setattr"})

    def visit_assign(self, node: ast.Assign, ctx):
        if not any(_may_shadow(target) for target in node.targets):
            return None  # most assignments (a plain return: no generator for them)
        return (found for target in node.targets for found in self._check_target(ctx, node, target))

    def visit_ann_assign(self, node: ast.AnnAssign, ctx):
        if node.value is not None:  # a bare annotation assigns nothing
            yield from self._check_target(ctx, node, node.target)

    def visit_aug_assign(self, node: ast.AugAssign, ctx):
        yield from self._check_target(ctx, node, node.target)

    def visit_call(self, node: ast.Call, ctx):
        if isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) >= 2 \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            cls = self._owner_cell(ctx, node, node.args[0])
            if cls is not None and node.args[1].value in _SHADOWABLE:
                yield self._shadowing(ctx, node, node.args[1].value, cls, "`setattr`")

    def visit_function_def(self, node: ast.FunctionDef, ctx):
        if node.name != "bprop":
            return None  # most defs (a plain return: no generator for them)
        return self._bprop(node, ctx)

    def _bprop(self, node: ast.FunctionDef, ctx):
        parent = ctx.parent(node)
        cell = ctx.graph.cells.get(parent) if isinstance(parent, ast.ClassDef) else None
        if cell is None or cell.assumed or node.args.vararg:
            return
        construct = next((s for summary in ctx.graph.mro(cell.summary) if summary.node is not None
                          for s in summary.node.body if isinstance(s, ast.FunctionDef) and s.name == "construct"),
                         None)
        if construct is None or construct.args.vararg or construct.args.kwarg:
            return
        inputs = len(construct.args.posonlyargs + construct.args.args) - _bound(construct)
        low, given = inputs - len(construct.args.defaults), len(node.args.posonlyargs + node.args.args) - _bound(node)
        if not low + 2 <= given <= inputs + 2:
            yield self.report(
                ctx, node, what=f"method `bprop` with {given} input{'s' * (given != 1)}", cls=parent.name,
                consequence=f"MindSpore calls a Cell's `bprop` as its custom backward with the {inputs} input"
                            f"{'s' * (inputs != 1)} of `construct` plus `out` and `dout`: every gradient through "
                            f"`{parent.name}` fails (RuntimeError/TypeError). Rename it if it is not a backward")

    def _check_target(self, ctx, statement, target):
        parent = ctx.parent(statement)
        if isinstance(target, ast.Name) and isinstance(parent, ast.ClassDef):
            cell = ctx.graph.cells.get(parent)
            if cell is not None and not cell.assumed and target.id in _SHADOWABLE:
                yield self._shadowing(ctx, statement, target.id, parent.name, "class attribute")
        elif isinstance(target, ast.Attribute) and target.attr in _SHADOWABLE:
            cls = self._owner_cell(ctx, statement, target.value)
            if cls is not None:
                yield self._shadowing(ctx, statement, target.attr, cls, f"`{ctx.text(target)} = ...`")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                yield from self._check_target(ctx, statement, element)

    def _shadowing(self, ctx, node, name: str, cls: str, how: str):
        value = getattr(node, "value", None)
        if name in framework.CELL_READONLY_PROPERTIES:
            what, consequence = "read-only property", (
                f"the assignment raises `AttributeError: property '{name}' of '{cls}' object has no setter`")
        else:
            what = "method"
            if isinstance(value, ast.Call) and ctx.graph.is_cell_class(ctx.names.qualname(value.func)):
                consequence = f"the assignment raises `KeyError: ... the {name} child cell already exists`"
            elif name in _BREAKS_GRAPH_CALL:
                consequence = ("every GRAPH_MODE call of the Cell calls it and fails "
                               "(`TypeError: ... object is not callable`)")
            elif name in _BREAKS_TRAINING and _wrapped_parameters(value):
                # a TrainOneStep-style wrapper keeping its network's parameters (MindSpore's own wide_and_deep)
                return self.report(
                    ctx, node, severity="warning", what=f"{how} overwrites `{name}`, a method of nn.Cell", cls=cls,
                    consequence="training through `Model` works (measured), but any later "
                                f"`{cls}(...).{name}()` call (an optimizer or a wrapper built on it) fails")
            elif name in _BREAKS_TRAINING:
                consequence = "optimizers and training wrappers call it and fail"
            else:
                consequence = f"every caller of `{name}()`, MindSpore's included, breaks"
        return self.report(ctx, node, what=f"{how} overwrites `{name}`, a {what} of nn.Cell", cls=cls,
                           consequence=consequence)

    @staticmethod
    def _owner_cell(ctx, node, receiver) -> Optional[str]:
        """The Cell class name when `receiver` is the `self` of a method of that Cell."""
        function = enclosing_function(node)
        while function is not None and ctx.graph.owner_class(function) is None:
            function = enclosing_function(function)
        if function is None or isinstance(function, ast.Lambda) or not function.args.args:
            return None
        owner = ctx.graph.owner_class(function)
        cell = ctx.graph.cells.get(owner.node) if owner.node is not None else None
        if cell is None or cell.assumed or any(getattr(d, "id", None) == "staticmethod"
                                               for d in function.decorator_list):
            return None
        return owner.name if isinstance(receiver, ast.Name) and receiver.id == self_parameter(function) else None


def _bound(method: ast.FunctionDef) -> int:
    """1 for the `self` of a method, 0 for a staticmethod (its first parameter is an input)."""
    return 0 if any(getattr(d, "id", None) == "staticmethod" for d in method.decorator_list) else 1


def _wrapped_parameters(value: Optional[ast.expr]) -> bool:
    """`network.trainable_params()`: the list of another Cell's parameters."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
        value.func.attr == "trainable_params" and not (isinstance(value.func.value, ast.Name)
                                                       and value.func.value.id == "self")


def _may_shadow(target: ast.expr) -> bool:
    """Can `_check_target` report this target: a name or attribute named like a Cell internal, or a tuple or list
    holding one?"""
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_may_shadow(element) for element in target.elts)
    name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
    return name in _SHADOWABLE
