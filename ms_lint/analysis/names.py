"""Names: what a name or attribute chain refers to through the imports in scope, and which names a def binds.

`import mindspore.numpy as np` makes `np.sum` `mindspore.numpy.sum`, never NumPy; a def's own imports and locals
shadow the module's. Answers are memoised per node and per def: most rules ask about every call of a module.
"""
from __future__ import annotations

import ast
import bisect
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

from ms_lint.analysis.imports import ImportMap
from ms_lint.analysis.walk import FunctionNode, ModuleWalk, enclosing_function, rows_spelling

_UNKNOWN = object()


class Names:
    """Name resolution in one module: `imports` are the module's own (`ImportMap`), `walk` its one walk."""

    def __init__(self, walk: ModuleWalk, imports: ImportMap, source_text: str = ""):
        self.walk = walk
        self.imports = imports
        self._text = source_text
        self._import_rows: Optional[List[int]] = None
        self._qualnames: Dict[ast.AST, Optional[str]] = {}
        self._local_names: Dict[FunctionNode, FrozenSet[str]] = {}
        self._function_imports: Dict[FunctionNode, ImportMap] = {}
        self._def_imports: Optional[FrozenSet[str]] = None

    def release(self) -> None:
        for cache in (self._qualnames, self._local_names, self._function_imports):
            cache.clear()

    def qualname(self, expr: ast.AST) -> Optional[str]:
        """What `expr` names through the imports in scope (memoised: most rules ask about every call)."""
        found: Any = self._qualnames.get(expr, _UNKNOWN)
        if found is _UNKNOWN:
            root = expr
            while root.__class__ is ast.Attribute:
                root = root.value
            # a name no import binds names nothing, local or not (`self.f()`, `x.view()` are most calls): neither
            # the function around it (a climb up the tree) nor whether it is a local is needed; a def's imports
            # bind it nowhere when no def imports that name (or `*`)
            in_defs = self._names_imported_in_defs()
            if root.__class__ is not ast.Name or (root.id not in in_defs and "*" not in in_defs
                                                  and self.imports.resolve(root.id) is None):
                found = None
            else:
                function = enclosing_function(expr)
                if function is None:
                    found = self.imports.qualname(expr)
                else:
                    imports = self.imports_of(function)
                    if imports.resolve(root.id) is None or self.is_local(function, root.id):
                        found = None
                    else:
                        found = imports.qualname(expr)
            self._qualnames[expr] = found
        return found

    def local_names(self, function: FunctionNode) -> FrozenSet[str]:
        """Names bound inside a function (parameters, assignments, loop targets), which shadow module names."""
        names = self._local_names.get(function)
        if names is None:
            arguments = function.args
            bound = {arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                         arguments.vararg, arguments.kwarg) if arg is not None}
            bound |= self.walk.nodes_of(function).stores
            # the names the function's own imports bind taken out in C (a generator over every local was 0.5 %
            # of a run); a module import the function assigns is local (`reshape = P.Reshape()` in Swin, beside
            # the module's `from numpy... import reshape`)
            imports = self.imports_of(function)
            names = self._local_names[function] = frozenset(
                bound.difference(imports.names) if imports is not self.imports else bound)
        return names

    def is_local(self, function: FunctionNode, name: str) -> bool:
        """Is `name` one of `local_names(function)`?"""
        return name in self.local_names(function)

    def names_called(self, func: Any) -> Tuple[str, ...]:
        """The names a call of `func` can be asked about by its last name (`Rule.call_names`): the attribute of
        `a.b.f`; for `f`, the name and, when an import binds it to another one, the last component of what it
        binds (`qualname(f)` where a def's own import may bind it, else the module's imports: a superset of what
        `qualname` gives, without finding the def around every call); none for anything else (`f()()`)."""
        kind = func.__class__
        if kind is ast.Attribute:
            return (func.attr,)
        if kind is not ast.Name:
            return ()
        name = func.id
        if name in self._names_imported_in_defs():
            qualname = self.qualname(func)
            last = qualname.rpartition(".")[2] if qualname else name
        else:
            last = self.last_name(func) or name
        return (name,) if last == name else (name, last)

    def _names_imported_in_defs(self) -> FrozenSet[str]:
        """The names an import in the body of some def of the module binds, and `*` if one is a star import (a
        SyntaxError to compile, yet parsed: it may bind any name)."""
        if self._def_imports is None:
            names: Set[str] = set()
            for scope in self.walk.scopes():
                if scope.__class__ in (ast.FunctionDef, ast.AsyncFunctionDef) and self.spells_import(scope) \
                        and (imports := self.imports_of(scope)) is not self.imports:
                    names.update(imports.names)
                    if imports.stars:
                        names.add("*")
            self._def_imports = frozenset(names)
        return self._def_imports

    def last_name(self, expr: ast.AST) -> Optional[str]:
        """The last component `qualname(expr)` can have, found without resolving scopes: the attribute of
        `a.b.c`, the target's last component for a name a module-level import or definition binds; None when only
        `qualname` can tell (a name bound by a function-level import, a local, a builtin). A cheap pre-filter for
        rules that look for a few names among every call of a module."""
        if isinstance(expr, ast.Attribute):
            return expr.attr
        if isinstance(expr, ast.Name):
            target = self.imports.names.get(expr.id)
            return target.rpartition(".")[2] if target else None
        return None

    def imports_of(self, function: FunctionNode) -> ImportMap:
        imports = self._function_imports.get(function)
        if imports is None:
            body = function.body if isinstance(function.body, list) else []
            # the bindings of the cached walk hold every import of the body, nested functions' included
            if body and self.spells_import(function) and any(
                    isinstance(s, (ast.Import, ast.ImportFrom)) for s in self.walk.nodes_of(function).bindings):
                imports = ImportMap.of_block(body, self.imports.module, self.imports.is_package, self.imports,
                                             define_locals=False)
            else:
                imports = self.imports
            self._function_imports[function] = imports
        return imports

    def spells_import(self, node: Any) -> bool:
        """Does one of the lines of `node` spell `import` (else it holds no import statement)? Known without
        walking it. Without the module's text (an analysis built from a tree alone): True."""
        if not self._text:
            return True
        if self._import_rows is None:
            self._import_rows = rows_spelling(self._text, "import")
        rows = self._import_rows
        index = bisect.bisect_left(rows, node.lineno)
        return index < len(rows) and rows[index] <= node.end_lineno
