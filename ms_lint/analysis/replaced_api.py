"""The MindSpore names a project replaces with its own when a module of it is imported.

MindNLP 0.3's `injection.py` runs `ops.zeros = _zeros`, `nn.LayerNorm = LayerNorm`, `nn.Dropout = CustomDropout`
when the package is imported (issue 19's thirteenth sample): everywhere in the project those names are MindNLP's,
with other signatures (`ops.zeros(1, 1, d)`, `nn.LayerNorm(..., elementwise_affine=...)`). Checks of a call against
MindSpore 2.10's own signature or semantics do not apply to them. Read from a module's top level: an assignment
to an attribute of a MindSpore module or class (`<alias>.<name> = ...`, in `if`/`try` blocks too) and
`setattr(<alias>, "<name>", ...)`; not a wrapper given the original (`ops.cat = bool_patch_decorator(ops.cat)`:
the arguments go on to MindSpore's `ops.cat`).
"""
from __future__ import annotations

import ast
import re
from typing import Dict, FrozenSet, Optional, Set

from ms_lint.analysis.imports import ImportMap, statements
from ms_lint.analysis.per_project import Keep
from ms_lint.source import SourceError, decode, parse

# a line that starts a module-level `a.b = ...` or `setattr(`: only files that have one are parsed (led by the
# newline, not `^` and MULTILINE, so that the search skips from line to line: 9x faster on mindone)
_MAY_REBIND = re.compile(rb"\n[A-Za-z_][\w.]*\.[A-Za-z_]\w*[ \t]*=(?!=)|\nsetattr[ \t]*\(")


def names_replaced(path: str, data: bytes, keep: Optional[Keep] = None) -> FrozenSet[str]:
    """The qualified names (`mindspore.ops.zeros`) the module at `path` rebinds at its top level."""
    if b"mindspore" not in data or not _MAY_REBIND.search(data):
        return frozenset()
    try:
        source = decode(data, path)
        tree = parse(source)
    except (SourceError, RecursionError):
        return frozenset()
    if keep is not None:
        keep(path, source, tree)
    imports = ImportMap.of_block(tree.body, "", False)
    replaced: Set[str] = set()
    aliases: Dict[str, str] = {}  # `origin_matmul = ops.matmul`: name -> what it holds, as source
    for stmt in statements(tree.body):
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                aliases[stmt.targets[0].id] = ast.unparse(stmt.value)
            pairs = [(target.value, target.attr) for target in stmt.targets if isinstance(target, ast.Attribute)
                     and not _wraps(stmt.value, ast.unparse(target), aliases)]
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "setattr" \
                and len(stmt.value.args) == 3 and isinstance(stmt.value.args[1], ast.Constant) \
                and isinstance(stmt.value.args[1].value, str):
            pairs = [(stmt.value.args[0], stmt.value.args[1].value)]
        else:
            continue
        for receiver, name in pairs:
            owner = imports.qualname(receiver)
            if owner is not None and (owner == "mindspore" or owner.startswith("mindspore.")):
                replaced.add(f"{owner}.{name}")
    return frozenset(replaced)


def _wraps(value: ast.expr, original: str, aliases: Dict[str, str]) -> bool:
    """Is the new value a call given the original (`ops.cat = bool_patch_decorator(ops.cat)`, or through a name
    bound to it): a wrapper that passes its arguments on keeps the original's signature."""
    return isinstance(value, ast.Call) and any(
        ast.unparse(argument) == original or isinstance(argument, ast.Name) and aliases.get(argument.id) == original
        for argument in value.args)
