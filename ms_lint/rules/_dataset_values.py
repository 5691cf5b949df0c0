"""What a loop over a MindSpore dataset binds: tensors (issue 19's third sample, wslnet's `image.cuda()` in
`for image, mask, name in loader:`). Iterating a dataset, or its `create_tuple_iterator()`, yields lists of
`Tensor`s; `create_dict_iterator()` yields dicts of them; `output_numpy=True` yields NumPy arrays instead.
"""
from __future__ import annotations

import ast
from typing import Any, Callable, List, Optional

from ms_lint.analysis import bindings
from ms_lint.analysis.walk import enclosing_function

# Dataset methods that give a dataset again
_PIPELINE = frozenset({"batch", "map", "shuffle", "repeat", "project", "rename", "take", "skip", "filter",
                       "padded_batch", "bucket_batch_by_length", "concat", "split"})
_MAX_DEPTH = 6
TUPLES, DICTS = "tuples", "dicts"


def loop_item(ctx, name: ast.Name, bound_values: Callable[[Any, ast.Name], List[Any]],
              is_tensor: Callable[[ast.expr], bool] = lambda value: False) -> Optional[str]:
    """TUPLES when every binding of `name` in its scope is a loop target over a dataset that yields tensors
    (not `enumerate`'s count) or an assignment of a tensor (`is_tensor`), DICTS when every one is the loop
    variable over a dict iterator, else None. `bound_values(ctx, name)`: the values a name is assigned
    (`_mindspore_values`)."""
    function = enclosing_function(name)
    if function is not None and not ctx.names.is_local(function, name.id):
        function = None
    found = set()
    for node in bindings.binders(ctx.walk, function, name.id):
        if _derived_from_itself(node, name.id):
            continue  # `image = image.cuda().float()` in the loop: the loop's value goes on
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and is_tensor(node.value):
            found.add(TUPLES)  # wslnet's other loop: `image = Tensor(data["image"], mstype.float32)`
            continue
        if not isinstance(node, ast.For):
            return None
        target, iterable = node.target, node.iter
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
                and iterable.args and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            if _binds(target.elts[0], name.id):
                return None  # the count
            target, iterable = target.elts[1], iterable.args[0]
        if not _binds(target, name.id):
            return None
        yields = _yields(ctx, iterable, bound_values, 0)
        if yields is None or (yields == DICTS and not isinstance(target, ast.Name)):
            return None
        found.add(yields)
    return found.pop() if len(found) == 1 else None


def _derived_from_itself(node: ast.AST, name: str) -> bool:
    """`x = x.float()`, `x = x.cuda().float()`, `x, y = x.float(), y.float()`: an assignment of the name from a
    method chain on itself."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return False
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        paired = [item for element, item in zip(target.elts, value.elts)
                  if isinstance(element, ast.Name) and element.id == name]
        if len(paired) != 1:
            return False
        target, value = ast.Name(id=name), paired[0]
    if not (isinstance(target, ast.Name) and target.id == name):
        return False
    chained = value
    while isinstance(chained, ast.Call) and isinstance(chained.func, ast.Attribute):
        chained = chained.func.value
    return isinstance(chained, ast.Name) and chained.id == name and chained is not value


def _binds(target: ast.expr, name: str) -> bool:
    return any(node.id == name for node in bindings.target_names(target))


def _yields(ctx, expr: ast.expr, bound_values, depth: int) -> Optional[str]:
    """What iterating `expr` yields, when it is a MindSpore dataset or one of its tensor iterators."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.Name):
        values = bound_values(ctx, expr)
        kinds = {_yields(ctx, value, bound_values, depth + 1) if isinstance(value, ast.expr) else None
                 for value in values}
        if kinds == {TUPLES, DICTS}:  # a dataset's two iterators under one name: the one assigned last before
            earlier = [value for value in values if isinstance(value, ast.expr) and value.lineno < expr.lineno]
            return _yields(ctx, max(earlier, key=lambda value: value.lineno), bound_values, depth + 1) \
                if earlier else None
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        values = _self_values(ctx, expr)  # wslnet's `Test`: `self.loader = GeneratorDataset(...).batch(1)`
        kinds = {_yields(ctx, value, bound_values, depth + 1) for value in values}
        return kinds.pop() if len(kinds) == 1 else None
    if not isinstance(expr, ast.Call):
        return None
    if any(k.arg == "output_numpy" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
           for k in expr.keywords):
        return None  # NumPy arrays (or maybe)
    func = expr.func
    if isinstance(func, ast.Attribute):
        if func.attr == "create_tuple_iterator" or func.attr in _PIPELINE:
            return TUPLES if _yields(ctx, func.value, bound_values, depth + 1) is not None else None
        if func.attr == "create_dict_iterator":
            return DICTS if _yields(ctx, func.value, bound_values, depth + 1) is not None else None
    qualname = ctx.names.qualname(func) or ""
    return TUPLES if qualname.startswith("mindspore.dataset.") and qualname.endswith("Dataset") else None


def _self_values(ctx, attribute: ast.Attribute) -> List[ast.expr]:
    """What the methods of the enclosing class assign to `self.<attr>` (nothing if another form binds it)."""
    node: Optional[ast.AST] = attribute
    while node is not None and not isinstance(node, ast.ClassDef):
        node = ctx.parent(node)
    if node is None:
        return []
    values = []
    assigns = [found for kind in (ast.Assign, ast.AugAssign, ast.AnnAssign) for found in ctx.walk.of_kind(node, kind)]
    for assign in assigns:
        targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
        for target in targets:
            for bound in ast.walk(target):
                if isinstance(bound, ast.Attribute) and bound.attr == attribute.attr \
                        and isinstance(bound.value, ast.Name) and bound.value.id == "self":
                    if target is not bound or not isinstance(assign, ast.Assign):
                        return []  # unpacked, augmented or annotated: not followed
                    values.append(assign.value)
    return values
