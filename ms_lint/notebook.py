"""Jupyter notebooks: their code cells as one Python module, locations back in cells, fixes back into the JSON.

The code cells are joined in order, each after a marker line (`# %% ms-lint cell N`, N the 1-based position of
the cell among all cells, as editors number them), so rules see one module (a Cell defined in cell 2 and built
in cell 5 is understood) and fixes can add lines anywhere: the fixed text is split at the markers again. IPython
syntax that is not Python is masked line by line, keeping rows and columns of everything else: magics and shell
commands (`%time`, `!pip install`, `x = !ls`), help (`obj?`), and whole cells under a cell magic (`%%bash`; only
the first line of `%%time` and `%%capture`, whose body is Python). Each masked line carries its number and gets
its original text back when the notebook is written.

Reading uses nbformat to validate (any notebook version it reads; without nbformat installed, the JSON is read as
it is); writing changes only the `source` of the code cells whose
text changed, in the JSON as it was read, dumped the way the file was (indentation, non-ASCII characters, final
newline). A notebook that this would not reproduce byte for byte when nothing changed is never written.
"""
from __future__ import annotations

import ast
import bisect
import json
import re
import warnings
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Dict, List, Optional, Tuple

SUFFIX = ".ipynb"
_MARKER = "# %% ms-lint cell {}"
# cell magics whose body is Python run in the notebook's namespace (`%%timeit` runs it in one of its own)
_PYTHON_CELL_MAGICS = frozenset({"time", "capture"})
_MARKER_LINE = re.compile(r"^# %% ms-lint cell (\d+)$")
_MASK_TAG = re.compile(r"  # ms-lint: masked (\d+)$")
_ASSIGNED_MAGIC = re.compile(r"^(\s*)([\w.,\s\[\]()]+?=\s*)[!%]")
_HELP = re.compile(r"^\s*[\w.]+\?{1,2}\s*$")


class NotebookError(Exception):
    """Not a notebook ms_lint can read (invalid JSON, not nbformat)."""


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


@dataclass
class Notebook:
    raw: str  # the file's text as read
    document: dict  # its JSON, as read (key order kept)
    code_cells: List[int]  # positions (0-based) of the code cells in document["cells"]
    text: str = ""  # the code cells as one module
    masked: Dict[int, str] = field(default_factory=dict)  # mask number -> the original line

    # ----- reading ----------------------------------------------------------------------------------------------
    @classmethod
    def read(cls, raw: str) -> "Notebook":
        nbformat = _nbformat()
        try:
            if nbformat is not None:
                with warnings.catch_warnings():  # its advice (cells without ids...) is not for ms_lint's users
                    warnings.simplefilter("ignore")
                    nbformat.reads(raw, as_version=nbformat.NO_CONVERT)  # validates the structure of any version
            document = json.loads(raw)
        except Exception as error:  # noqa: BLE001 - nbformat raises many types for a broken file
            reader = "nbformat" if nbformat is not None else "a JSON reader"
            raise NotebookError(f"not a notebook {reader} can read: {_first_line(error)}") from None
        cells = document.get("cells") if isinstance(document, dict) else None
        if not isinstance(cells, list):  # nbformat 3 keeps cells in worksheets: read as version 4 would be
            raise NotebookError("not a notebook ms_lint can read (no top-level `cells`: nbformat 3?)")
        code_cells = [i for i, cell in enumerate(cells) if isinstance(cell, dict) and cell.get("cell_type") == "code"]
        notebook = cls(raw, document, code_cells)
        notebook.text = notebook._joined()
        return notebook

    def _joined(self) -> str:
        parts = []
        for index in self.code_cells:
            parts.append(_MARKER.format(index + 1) + "\n")
            source = _cell_source(self.document["cells"][index])
            lines = source.split("\n")
            magic = lines[0].lstrip() if lines else ""
            body = self._masked_lines(lines[1:]) if magic.startswith("%%") \
                and magic[2:].split(" ", 1)[0].strip() in _PYTHON_CELL_MAGICS else None
            if body is not None and _parses(body):
                # `%%time` runs the rest of the cell as Python in the notebook's namespace (DCGAN's `import
                # mindspore` under `%%time`: issue 19's ninth sample)
                lines = [self._mask(lines[0], "# "), *body]
            elif magic.startswith("%%"):
                # another cell magic (`%%bash`, `%%writefile`), or a body IPython alone reads (`pip install x`,
                # an automagic, under `%%capture`): the cell is not Python
                lines = [self._mask(line, "# ") for line in lines]
            else:
                lines = self._masked_lines(lines)
            text = "\n".join(lines)
            parts.append(text if text.endswith("\n") else text + "\n")
        return "".join(parts)

    def _masked_lines(self, lines: List[str]) -> List[str]:
        """Each line masked as `_masked_line` does; a magic or shell command ending in a backslash goes on in the
        next line (`!wget url \\` then `-P ./model`), masked with it."""
        masked: List[str] = []
        continued: Optional[str] = None  # the indentation of a masked command that goes on
        for line in lines:
            if continued is not None:
                masked.append(self._mask(line, continued + "pass"))
            else:
                masked.append(self._masked_line(line))
                if masked[-1] == line:
                    continue
                continued = line[: len(line) - len(line.lstrip())]
            if not line.rstrip().endswith("\\"):
                continued = None
        return masked

    def _masked_line(self, line: str) -> str:
        stripped = line.lstrip()
        indentation = line[: len(line) - len(stripped)]
        if stripped.startswith(("%", "!")) or _HELP.match(line):
            return self._mask(line, indentation + "pass")
        assigned = _ASSIGNED_MAGIC.match(line)
        if assigned:
            return self._mask(line, assigned.group(1) + assigned.group(2) + "None")
        return line

    def _mask(self, line: str, replacement: str) -> str:
        number = len(self.masked) + 1
        self.masked[number] = line
        return f"{replacement}  # ms-lint: masked {number}"

    # ----- locations --------------------------------------------------------------------------------------------
    @staticmethod
    def cell_lines(text: str) -> Dict[int, List[str]]:
        """cell number -> its lines (as linted) in the joined `text`."""
        return {number: source.split("\n") for number, source in _split(text).items()}

    # ----- writing ----------------------------------------------------------------------------------------------
    def updated(self, text: str) -> str:
        """The notebook's JSON text with the code cells of the fixed joined `text`; NotebookError when the cells
        cannot be told apart any more or the file's formatting cannot be kept."""
        sources = _split(text)
        if sorted(sources) != sorted(index + 1 for index in self.code_cells):
            raise NotebookError("the fixed code no longer has one marker line per code cell; not written")
        style = self._style()
        document = json.loads(self.raw)
        for index in self.code_cells:
            cell = document["cells"][index]
            new = self._unmasked(sources[index + 1])
            old = _cell_source(cell)
            if new.rstrip("\n") == old.rstrip("\n"):
                continue
            new = new.rstrip("\n") + ("\n" if old.endswith("\n") else "")
            cell["source"] = new.splitlines(keepends=True) if isinstance(cell.get("source"), list) else new
        return self._dumped(document, *style)

    def _style(self) -> Tuple[Optional[int], bool]:
        """(indent, ensure_ascii) that dump the notebook as read back to its exact text."""
        indent = _indentation(self.raw)
        for ascii_only in (False, True):
            if self._dumped(self.document, indent, ascii_only) == self.raw:
                return indent, ascii_only
        raise NotebookError("its JSON formatting cannot be reproduced; not written")

    def _unmasked(self, source: str) -> str:
        lines = []
        for line in source.split("\n"):
            match = _MASK_TAG.search(line)
            lines.append(self.masked.get(int(match.group(1)), line) if match else line)
        return "\n".join(lines)

    def _dumped(self, document: dict, indent: Optional[int], ascii_only: bool) -> str:
        text = json.dumps(document, indent=indent, ensure_ascii=ascii_only)
        return text + "\n" if self.raw.endswith("\n") else text


class _Cells:
    """Where the cells of a joined text start: (cell number, row in the cell) of its rows, by bisection (the
    markers are found once per text, not once per finding)."""

    def __init__(self, text: str):
        self.starts: List[int] = []  # the marker rows
        self.numbers: List[int] = []
        for row, line in enumerate(text.split("\n"), 1):
            match = _MARKER_LINE.match(line)
            if match:
                self.starts.append(row)
                self.numbers.append(int(match.group(1)))

    def locate(self, row: int) -> Tuple[Optional[int], int]:
        """(cell number, row in the cell); (None, row) before any cell."""
        index = bisect.bisect_right(self.starts, row) - 1
        return (None, row) if index < 0 else (self.numbers[index], row - self.starts[index])


def located(diagnostics, texts: Dict[str, str]):
    """`diagnostics` as reported: those in a notebook (`texts`: its path -> the joined text they were found in)
    with their cell and rows in the cell; the others unchanged."""
    cells: Dict[str, _Cells] = {}
    found = []
    for d in diagnostics:
        text = texts.get(d.path)
        if text is None:
            found.append(d)
            continue
        index = cells.get(d.path) or cells.setdefault(d.path, _Cells(text))
        cell, row = index.locate(d.row)
        end_cell, end_row = index.locate(d.end_row)
        found.append(replace(d, cell=cell, row=row, end_row=end_row if end_cell == cell else row,
                             fix=_fix_in_cell(d.fix, index, cell)))
    return found


def _fix_in_cell(fix, cells: _Cells, cell: Optional[int]):
    """The fix with its edits' rows counted in `cell`; None (shown without a fix; `--fix` still applies it) when
    an edit lies in another cell."""
    if fix is None:
        return None
    edits = []
    for edit in fix.edits:
        (start_cell, start), (end_cell, end) = cells.locate(edit.location[0]), cells.locate(edit.end_location[0])
        if start_cell != cell or end_cell != cell:
            return None
        edits.append(replace(edit, location=(start, edit.location[1]), end_location=(end, edit.end_location[1])))
    return replace(fix, edits=tuple(edits))


def _split(text: str) -> Dict[int, str]:
    """cell number -> its source in the joined `text` (without its marker line); lines before the first marker
    (an import a fix added at the top) belong to the first cell."""
    sources: Dict[int, List[str]] = {}
    before: List[str] = []
    current = before
    for line in text.split("\n"):
        match = _MARKER_LINE.match(line)
        if match:
            current = sources.setdefault(int(match.group(1)), before if not sources else [])
        else:
            current.append(line)
    return {number: "\n".join(lines) for number, lines in sources.items()}


def _parses(lines: List[str]) -> bool:
    try:
        ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        return False
    return True


def _nbformat() -> Optional[ModuleType]:
    """nbformat, or None where ms_lint runs from a checkout without its dependencies (the JSON alone is read)."""
    try:
        import nbformat
    except ImportError:
        return None
    return nbformat


def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(map(str, source)) if isinstance(source, list) else str(source)


def _indentation(raw: str) -> Optional[int]:
    match = re.search(r"\n( +)\"", raw)
    return len(match.group(1)) if match else None


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
