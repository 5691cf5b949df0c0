"""Helpers rules use to build fixes in the file's own style."""
from __future__ import annotations

from typing import Tuple

from ms_lint.graph import GraphScope
from ms_lint.rule import Import


def reference(graph: GraphScope, qualname: str) -> Tuple[str, Tuple[Import, ...]]:
    """How to spell `qualname` (e.g. "mindspore.ops") in this module, and the import needed if it is not bound.

    Reuses an existing alias (`ops`, `P`...), or an imported parent (`ms.ops`); else asks for
    `from mindspore import ops`.
    """
    names = graph.imports.names
    for alias, target in names.items():
        if target == qualname:
            return alias, ()
    parent, _, last = qualname.rpartition(".")
    while parent:
        for alias, target in names.items():
            if target == parent:
                return f"{alias}.{qualname[len(parent) + 1:]}", ()
        parent = parent.rpartition(".")[0]
    if last in names or last in graph.summary.functions or last in graph.summary.classes:
        return qualname, (Import(qualname.partition(".")[0]),)
    module = qualname.rpartition(".")[0]
    return last, (Import(module, last),)
