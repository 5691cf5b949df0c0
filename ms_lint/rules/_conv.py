"""What the two convolution rules (MSL060, MSL061) share: which calls build one of MindSpore's conv (or pooling)
layers.

A module of `ms_lint.rules` that defines no rule (discovery only takes `Rule` subclasses), so that neither rule
imports the other.
"""
from __future__ import annotations

import ast
from typing import Optional

from ms_lint.analysis import framework
from ms_lint.analysis.framework import CONV_LAYERS, PADDED_LAYERS
from ms_lint.analysis.walk import enclosing_function

_CANDIDATES = frozenset(PADDED_LAYERS) | {None}


def mindspore_conv(ctx, call: ast.Call) -> Optional[str]:
    """The layer name when `call` builds one of MindSpore's conv layers with arguments that can be read
    (no `*args`/`**kwargs`); None otherwise. Shared with MSL061."""
    layer = mindspore_padded_layer(ctx, call)
    return layer if layer in CONV_LAYERS else None


def mindspore_padded_layer(ctx, call: ast.Call) -> Optional[str]:
    """The layer name when `call` builds one of MindSpore's conv or pooling layers (`framework.PADDED_LAYERS`) with
    arguments that can be read (no `*args`/`**kwargs`); None otherwise."""
    last_name = ctx.names.last_name(call.func)
    if last_name not in _CANDIDATES:
        return None
    # no last name: a name that no module import binds is `builtins.<name>` or nothing unless an import in its
    # function binds it, and anything but a name or an attribute has no qualname
    if last_name is None and not (isinstance(call.func, ast.Name) and _may_import(ctx, call)):
        return None
    layer = framework.mindspore_layer(ctx.names.qualname(call.func))
    if layer not in PADDED_LAYERS or any(k.arg is None for k in call.keywords) or any(
            isinstance(a, ast.Starred) for a in call.args):
        return None
    return layer


def _may_import(ctx, node: ast.AST) -> bool:
    """Can an import in the def around `node` bind a name? Not when none of its lines spells `import`."""
    function = enclosing_function(node)
    return function is not None and ctx.names.spells_import(function)
