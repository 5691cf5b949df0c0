"""Reading Python source the way the interpreter does, and parsing it without ever raising."""
from __future__ import annotations

import ast
import codecs
import contextlib
import io
import os
import re
import tokenize
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

# Python's tokenizer ends lines only at \n, \r\n and \r (str.splitlines also splits at \f, \x1c, \u2028...).
_LINE_END = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> List[str]:
    """`text` split where Python ends lines (see `_LINE_END`), without the line endings."""
    return text.split("\n") if "\r" not in text else _LINE_END.split(text)


def lines_holding(data: bytes, needles: Tuple[bytes, ...]) -> Iterator[bytes]:
    """The lines of `data` (as `bytes.splitlines` cuts them) that hold one of the `needles`, each at most once per
    needle: found from the needles' occurrences, not by splitting every line of the file."""
    for needle in needles:
        position = data.find(needle)
        while position != -1:
            start = max(data.rfind(b"\n", 0, position), data.rfind(b"\r", 0, position)) + 1
            ends = [end for end in (data.find(b"\n", position), data.find(b"\r", position)) if end != -1]
            end = min(ends) if ends else len(data)
            yield data[start:end]
            position = data.find(needle, end)


class SourceError(Exception):
    """The file cannot be read, decoded or parsed; `row`/`column` locate the problem when known."""

    def __init__(self, message: str, row: int = 1, column: int = 0):
        super().__init__(message)
        self.row = row
        self.column = column


@dataclass
class SourceFile:
    path: str
    text: str
    encoding: str = "utf-8"
    bom: bool = False
    module_name: str = ""
    _lines: Optional[List[str]] = field(default=None, repr=False)
    notebook: Optional[Any] = field(default=None, repr=False)  # a `notebook.Notebook` whose code cells `text` joins

    @property
    def lines(self) -> List[str]:
        """Physical lines without their line endings; `lines[row - 1]`."""
        if self._lines is None:
            text = self.text
            # without a CR, the line ends are the LFs: str.split is several times faster than the regex
            self._lines = split_lines(text)
        return self._lines

    def forget_lines(self) -> None:
        """Drop the split lines (split again if asked for): a run keeps every file's source for its report, and
        the lines of all of them were a quarter of the peak memory of a cold run on mindone (333 -> 256 MB)."""
        self._lines = None

    def line(self, row: int) -> str:
        lines = self.lines
        return lines[row - 1] if 0 < row <= len(lines) else ""

    def char_column(self, row: int, byte_column: int) -> int:
        return char_column(self.line(row), byte_column)

    def byte_column(self, row: int, char_column: int) -> int:
        line = self.line(row)
        if line.isascii():
            return char_column
        return len(line[:char_column].encode("utf-8"))


def char_column(line: str, byte_column: int) -> int:
    """`ast` columns count UTF-8 bytes; users and editors count characters."""
    if byte_column <= 0 or line.isascii():
        return max(byte_column, 0)
    return len(line.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))


def decode(data: bytes, path: str) -> SourceFile:
    """Decode bytes as the interpreter would (BOM, PEP 263 coding cookie, UTF-8 default); a notebook's code cells
    as one module (`ms_lint.notebook`)."""
    if path.endswith(".ipynb"):
        return _notebook(data, path)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(f"cannot determine the encoding: {exc.msg if hasattr(exc, 'msg') else exc}") from None
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8):]
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        row = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
        raise SourceError(
            f"cannot decode the file as {encoding}: byte 0x{data[exc.start]:02x} at offset {exc.start} is invalid",
            row,
            column,
        ) from None
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r} declared in the coding cookie") from None
    return SourceFile(path=path, text=text, encoding=encoding, bom=bom, module_name=module_name(path))


def _notebook(data: bytes, path: str) -> SourceFile:
    from ms_lint.notebook import Notebook, NotebookError

    try:
        notebook = Notebook.read(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SourceError(f"cannot decode the notebook as UTF-8: byte 0x{data[exc.start]:02x} at offset "
                          f"{exc.start} is invalid") from None
    except NotebookError as exc:
        raise SourceError(str(exc)) from None
    return SourceFile(path=path, text=notebook.text, module_name=module_name(path), notebook=notebook)


def read_bytes(path: str) -> bytes:
    """The file's bytes; none when it cannot be read (a scan of the project's text for a needle)."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def read(path: str) -> SourceFile:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise SourceError(f"cannot read the file: {exc.strerror or exc}") from None
    return decode(data, path)


def parse(source: SourceFile) -> ast.Module:
    """`ast.parse`, turning every failure mode (syntax, null bytes, nesting too deep) into SourceError."""
    try:
        return ast.parse(source.text, filename=source.path, type_comments=False)
    except SyntaxError as exc:
        row = exc.lineno or 1
        column = source.char_column(row, (exc.offset or 1) - 1) if exc.offset else 0
        raise SourceError(f"syntax error: {exc.msg}", row, column) from None
    except ValueError as exc:  # "source code string cannot contain null bytes" (Python < 3.12)
        row, column = _null_byte_position(source.text)
        raise SourceError(f"cannot parse the file: {exc}", row, column) from None
    except (RecursionError, MemoryError):
        raise SourceError("cannot parse the file: expressions are nested too deeply for the Python parser") from None


def _null_byte_position(text: str) -> Tuple[int, int]:
    offset = text.find("\0")
    if offset < 0:
        return 1, 0
    row = text.count("\n", 0, offset) + 1
    return row, offset - (text.rfind("\n", 0, offset) + 1)


# directory -> does it hold an `__init__.py`: remembered while a batch run lints (`remembered_packages`), where every
# file of a directory asks the same; asked anew otherwise (an editor session: packages change between requests)
_packages: Optional[Dict[str, bool]] = None


def remember_packages() -> None:
    """Remember from now on (a worker process of a batch run)."""
    global _packages
    if _packages is None:
        _packages = {}


@contextlib.contextmanager
def remembered_packages() -> Iterator[None]:
    global _packages
    previous = _packages
    remember_packages()
    try:
        yield
    finally:
        _packages = previous


def is_package(directory: str) -> bool:
    known = _packages
    if known is None:
        return os.path.isfile(os.path.join(directory, "__init__.py"))
    found = known.get(directory)
    if found is None:
        found = known[directory] = os.path.isfile(os.path.join(directory, "__init__.py"))
    return found


def module_name(path: str) -> str:
    """The dotted module name of a file, from the package directories (`__init__.py`) that contain it."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    parts = [] if stem == "__init__" else [stem]
    while is_package(directory):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
        if not package:
            break
    return ".".join(parts)


def package_root(path: str) -> str:
    """The directory from which `module_name(path)` is importable."""
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    while is_package(directory):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


# Fields that never hold a node to walk: the shared singletons `Load()`/`Store()`/`Add()`... (no rule looks at
# them) and names, numbers and strings.
_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "name", "arg", "module", "level", "is_async",
                             "conversion", "kind", "type_comment", "rest", "kwd_attrs", "asname", "tag", "simple"})
_SKIPPED_BY_TYPE = {ast.Constant: {"value"}, ast.Global: {"names"}, ast.Nonlocal: {"names"}}
if hasattr(ast, "MatchSingleton"):  # Python >= 3.10
    _SKIPPED_BY_TYPE[ast.MatchSingleton] = {"value"}
LISTS_WITH_NONE = {ast.Dict: "keys", ast.arguments: "kw_defaults"}  # `{**d}`, keyword-only without default
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}  # filled by child_fields


def child_fields(kind: type) -> Tuple[str, ...]:
    """The fields of a node class that can hold nodes to walk (see `child_nodes`)."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        skipped = _SKIPPED_FIELDS | _SKIPPED_BY_TYPE.get(kind, set())
        node_fields: Tuple[str, ...] = getattr(kind, "_fields", ())
        fields = _CHILD_FIELDS[kind] = tuple(f for f in node_fields if f not in skipped)
    return fields


def child_nodes(node: ast.AST) -> List[ast.AST]:
    """`list(ast.iter_child_nodes(node))` without the expression-context and operator singletons, a few times
    faster (the walks of the analysis layer go through it)."""
    kind = node.__class__
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = child_fields(kind)
    children: List[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if value is None:
            continue
        if value.__class__ is list:
            if name == LISTS_WITH_NONE.get(kind):
                children += [item for item in value if item is not None]
            else:
                children += value
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk` (same breadth-first order), without the expression-context and operator singletons."""
    todo = deque((node,))
    while todo:
        node = todo.popleft()
        todo.extend(child_nodes(node))
        yield node
