"""What binding a call's arguments to a method needs of its signature, kept apart from the method's tree.

A class summary outlives its module's tree (`ClassSummary.node` parses the module again): a rule that binds calls
of another module's Cell reads this instead, so a large project's big modules are not parsed a second time.
"""
from __future__ import annotations

import ast
from typing import FrozenSet, NamedTuple, Optional, Tuple

from ms_lint.analysis.walk import self_parameter


class Signature(NamedTuple):
    """The parameters a method takes after `self`."""

    positional: Tuple[str, ...]
    defaults: int  # how many of the last positional parameters have a default
    keyword_only: Tuple[str, ...]
    keyword_required: FrozenSet[str]  # the keyword-only ones without a default

    def binding_problem(self, call: ast.Call) -> Optional[str]:
        """What Python's binding of the call's arguments rejects, or None."""
        if len(call.args) > len(self.positional):
            return f"{len(call.args)} positional arguments (it takes {len(self.positional)})"
        unknown = [k.arg for k in call.keywords if k.arg not in self.positional and k.arg not in self.keyword_only]
        if unknown:
            return "the keyword" + "s" * (len(unknown) > 1) + " " + ", ".join(f"`{name}`" for name in unknown)
        given = set(self.positional[:len(call.args)]) | {k.arg for k in call.keywords}
        required = [*self.positional[:len(self.positional) - self.defaults],
                    *(name for name in self.keyword_only if name in self.keyword_required)]
        missing = [name for name in required if name not in given]
        if missing:
            return "no value for " + ", ".join(f"`{name}`" for name in missing)
        return None


def method_signature(class_node: ast.ClassDef, name: str) -> Optional[Signature]:
    """The signature of the class body's first plain `def <name>`, None when there is none or when a decorator,
    `*args`, `**kwargs` or positional-only parameters leave the binding to code a linter does not follow."""
    method = next((stmt for stmt in class_node.body if isinstance(stmt, ast.FunctionDef) and stmt.name == name), None)
    if method is None or method.decorator_list or self_parameter(method) is None:
        return None
    arguments = method.args
    if arguments.vararg or arguments.kwarg or arguments.posonlyargs:
        return None
    return Signature(tuple(arg.arg for arg in arguments.args[1:]), len(arguments.defaults),
                     tuple(arg.arg for arg in arguments.kwonlyargs),
                     frozenset(arg.arg for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
                               if default is None))
