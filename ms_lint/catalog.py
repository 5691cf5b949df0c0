"""The rule catalog: every rule of `ms_lint.rules`, found by discovery (no registry to keep), and lookups by code.

The settings ask it whether a selector names a rule; the engine, the front ends and the docs ask it for the rules.
"""
from __future__ import annotations

import difflib
import functools
import importlib
import pkgutil
from typing import Optional, Tuple, Type

from ms_lint import rules as rule_modules
from ms_lint.rule import Rule


@functools.lru_cache(maxsize=None)
def all_rules() -> Tuple[Type[Rule], ...]:
    """Every Rule subclass defined in a module of `ms_lint.rules`, by code."""
    found = []
    for info in pkgutil.iter_modules(rule_modules.__path__):
        module = importlib.import_module(f"{rule_modules.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value.__module__ == module.__name__ \
                    and getattr(value, "code", None):
                found.append(value)
    codes = [rule.code for rule in found]
    duplicates = {code for code in codes if codes.count(code) > 1}
    if duplicates:
        raise RuntimeError(f"rule codes defined twice: {sorted(duplicates)}")
    return tuple(sorted(found, key=lambda rule: rule.code))


def rule_by_code(code: str) -> Optional[Type[Rule]]:
    """The rule with this code or symbol."""
    for rule in all_rules():
        if rule.code == code or rule.name == code:
            return rule
    return None


def pylint_id(rule: Type[Rule]) -> str:
    """`E8701` for MSL001 (error), `W8740` for MSL040 (warning)... `C` for info rules. Level rules are `W`."""
    letter = {"error": "E", "warning": "W", "info": "C", "level": "W"}[rule.severity]
    return f"{letter}87{rule.code[-2:]}"


_LETTERS = {"error": "E", "warning": "W", "info": "C"}


def pylint_message(rule: Type[Rule], severity: str) -> Tuple[str, str]:
    """The pylint (message id, symbol) of a finding of `rule` reported at `severity`: the rule's own id and symbol
    at its declared severity, else the same number under the severity's letter and the symbol with the severity
    appended (`W8706` `cell-created-in-graph-warning` for MSL006's warnings), so pylint's categories and scores
    follow what the CLI reports."""
    declared = "warning" if rule.severity == "level" else rule.severity
    if severity == declared:
        return pylint_id(rule), rule.name
    return f"{_LETTERS[severity]}87{rule.code[-2:]}", f"{rule.name}-{severity}"


def selector_problem(selector: str) -> Optional[str]:
    """Why `selector` (a code, a code prefix or ALL, as in `select = [...]`) selects no rule; None if it does."""
    if selector == "ALL":
        return None
    known = [rule.code for rule in all_rules()]
    if selector.startswith("MSL") and any(code.startswith(selector) for code in known):
        return None
    hint = difflib.get_close_matches(selector, known, n=1)
    return f"unknown rule code or prefix {selector!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")


def code_problem(code: str) -> Optional[str]:
    """Why `code` (as in `[tool.ms_lint.severity]`) names no rule; None if it does."""
    return None if rule_by_code(code) is not None else f"unknown rule code {code!r}"
