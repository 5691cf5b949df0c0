"""Resolving names to qualified names through a module's imports (`np.sum` -> `numpy.sum`)."""
from __future__ import annotations

import ast
import builtins
from typing import Callable, Dict, Iterable, Iterator, List, Optional

_BUILTINS = frozenset(dir(builtins))
# `from mindtorch.tools import mstorch_enable` turns later `import torch` statements into MindTorch.
_MSTORCH_REDIRECTS = {"torch": "mindtorch.torch", "torchvision": "mindtorch.torchvision"}


def _exports(stmts: List[ast.stmt]) -> Optional[List[str]]:
    """A module's `__all__` when every statement that builds it is a literal list or tuple of strings
    (`__all__ = [...]`, `__all__ += [...]`, `__all__.extend([...])`); None without one, or when one is not."""
    found: Optional[List[str]] = None
    for stmt in stmts:
        value, extend = None, False
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            value = stmt.value
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__":
            value, extend = stmt.value, True
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(
                stmt.value.func, ast.Attribute) and stmt.value.func.attr == "extend" and isinstance(
                stmt.value.func.value, ast.Name) and stmt.value.func.value.id == "__all__" and stmt.value.args:
            value, extend = stmt.value.args[0], True
        else:
            continue
        if not isinstance(value, (ast.List, ast.Tuple)) or not all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
            return None  # built some other way: not known
        names = [e.value for e in value.elts]  # type: ignore[attr-defined]
        found = (found or []) + names if extend else names
    return found


def statements(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a block and of its nested if/try/with/for/while blocks, not entering defs or classes."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(stmt, name, None)
            if block:
                stack.extend(reversed(block))


class ImportMap:
    """Local name -> qualified name, for the names a module (or function) binds by import or definition."""

    def __init__(self, module: str, is_package: bool = False, parent: Optional["ImportMap"] = None):
        self.module = module
        self.is_package = is_package
        self.parent = parent
        self.names: Dict[str, str] = {}
        self.mstorch: bool = parent.mstorch if parent else False
        # `from <module> import *`, in order (a later one shadows an earlier one), and who can say what those
        # modules export: (module, name) -> bool, the project index's `star_exports`
        self.stars: List[str] = []
        self.star_source: Optional[Callable[[str, str], bool]] = None
        # what a project module's name really is (`pkg.nn` -> `mindspore.nn` when `pkg` re-exports it): the
        # project index's `canonical`, applied to what imports and star imports bind
        self.canonical: Optional[Callable[..., str]] = parent.canonical if parent else None
        # `__all__` as a literal list of strings (with `+=`/`.extend` of literals), else None
        self.exports: Optional[List[str]] = None

    @classmethod
    def of_block(cls, body: List[ast.stmt], module: str, is_package: bool = False,
                 parent: Optional["ImportMap"] = None, define_locals: bool = True,
                 star_source: Optional[Callable[[str, str], bool]] = None,
                 canonical: Optional[Callable[..., str]] = None) -> "ImportMap":
        imports = cls(module, is_package, parent)
        imports.star_source = star_source
        if canonical is not None:
            imports.canonical = canonical
        stmts = list(statements(body))
        imports.mstorch = imports.mstorch or any(
            isinstance(s, ast.ImportFrom) and s.module and s.module.startswith("mindtorch.tools")
            and any(a.name == "mstorch_enable" for a in s.names)
            for s in stmts
        )
        top_level = {id(stmt) for stmt in body}
        for stmt in stmts:
            if isinstance(stmt, ast.Import):
                imports._add_import(stmt)
            elif isinstance(stmt, ast.ImportFrom):
                imports._add_import_from(stmt)
            elif define_locals and isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                local = f"{module}.{stmt.name}" if module else stmt.name
                if id(stmt) in top_level:  # a top-level definition rebinds an import before it
                    imports.names[stmt.name] = local  # (dsic's `CompressionModel`: issue 19's sixteenth sample)
                else:  # a fallback in `try`/`if` (`except ImportError: def jit(f): ...`): the import says more
                    imports.names.setdefault(stmt.name, local)
        if parent is None:
            imports.exports = _exports(stmts)
        return imports

    def _redirect(self, dotted: str) -> str:
        if self.mstorch:
            head, dot, rest = dotted.partition(".")
            if head in _MSTORCH_REDIRECTS:
                return _MSTORCH_REDIRECTS[head] + dot + rest
        return dotted

    def _add_import(self, stmt: ast.Import) -> None:
        for alias in stmt.names:
            target = self._redirect(alias.name)
            if alias.asname:
                self.names[alias.asname] = target
            else:  # `import a.b.c` binds `a`
                head = alias.name.partition(".")[0]
                self.names[head] = self._redirect(head)

    def _add_import_from(self, stmt: ast.ImportFrom) -> None:
        base = self.absolute(stmt.module, stmt.level)
        if base is None:
            return
        base = self._redirect(base)
        for alias in stmt.names:
            if alias.name == "*":
                if base:
                    self.stars.append(base)
                continue
            self.names[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name

    def absolute(self, module: Optional[str], level: int) -> Optional[str]:
        """The absolute module a (possibly relative) `from` import names; None when it escapes the package."""
        if not level:
            return module
        parts = self.module.split(".") if self.module else []
        drop = level - 1 if self.is_package else level
        if drop > len(parts):
            return None
        parts = parts[: len(parts) - drop]
        if module:
            parts.append(module)
        return ".".join(parts)

    def resolve(self, name: str) -> Optional[str]:
        imports: Optional[ImportMap] = self
        while imports is not None:
            found = imports.names.get(name)
            if found is not None:
                return self.canonical(found) if self.canonical is not None else found
            found = imports.from_stars(name)
            if found is not None:
                return self.canonical(found, True) if self.canonical is not None else found
            imports = imports.parent
        return f"builtins.{name}" if name in _BUILTINS else None

    def from_stars(self, name: str) -> Optional[str]:
        """`base.name` for the last `from base import *` whose module exports `name` (as the index says)."""
        if not self.stars or self.star_source is None:
            return None
        for base in reversed(self.stars):
            if self.star_source(base, name):
                return f"{base}.{name}"
        return None

    def qualname(self, expr: ast.AST, local_names: Iterable[str] = ()) -> Optional[str]:
        """`np.linalg.norm` -> `numpy.linalg.norm`; None for anything not rooted in a resolvable name."""
        attrs = []
        while isinstance(expr, ast.Attribute):
            attrs.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name) or expr.id in local_names:
            return None
        root = self.resolve(expr.id)
        if root is None:
            return None
        return ".".join([root, *reversed(attrs)])
