"""The rule contract: what a rule declares and what it returns.

Positions are 1-based rows and 0-based character columns everywhere inside ms_lint; front ends convert once.
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    ClassVar,
    Dict,
    FrozenSet,
    Hashable,
    Iterator,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
)

from ms_lint.analysis.compile_context import CompileContext, facts_of_module, module_target, target_of
from ms_lint.analysis.tensors import Tensors
from ms_lint.analysis.walk import parent_of
from ms_lint.source import SourceFile

if TYPE_CHECKING:
    from ms_lint.analysis.graph import GraphScope
    from ms_lint.settings import Settings

SEVERITIES = ("error", "warning", "info")
# "level": warning under LAX, error under STRICT (see docs/RULES.md, "Syntax level").
DECLARED_SEVERITIES = SEVERITIES + ("level",)
APPLICABILITIES = ("safe", "unsafe", "display-only")
# Where a rule's visit hooks run: inside graph-compiled functions, anywhere inside nn.Cell class bodies, or the
# whole module. The engine walks only what the selected rules need.
SCOPES = ("graph", "cell", "module")
DOCS_URL = "https://github.com/ms-lint/ms-lint/blob/main/docs/rules/{code}.md"

Position = Tuple[int, int]
T = TypeVar("T")


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions of the original source with `content`."""

    content: str
    location: Position
    end_location: Position

    @classmethod
    def insert(cls, position: Position, content: str) -> "Edit":
        return cls(content, position, position)


@dataclass(frozen=True)
class Import:
    """An import a fix needs: `from module import name`, or `import module` when name is None."""

    module: str
    name: Optional[str] = None


@dataclass(frozen=True)
class Fix:
    applicability: str
    message: str
    edits: Tuple[Edit, ...]
    imports: Tuple[Import, ...] = ()

    def __post_init__(self):
        if self.applicability not in APPLICABILITIES:
            raise ValueError(f"unknown fix applicability {self.applicability!r}")


@dataclass(frozen=True)
class Diagnostic:
    code: str
    symbol: str
    message: str
    severity: str
    path: str
    row: int
    column: int
    end_row: int
    end_column: int
    fix: Optional[Fix] = None
    # a notebook's finding as reported: the 1-based cell, rows counted in the cell (`notebook.located`); inside
    # ms_lint, rows count in the module the code cells make, and `cell` is None
    cell: Optional[int] = None

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    def sort_key(self):
        return (self.path, self.row, self.column, self.code)


class Context:
    """What a rule sees of the module being linted: its source and tree, the analyses, the settings.

    The analyses, each built once per module: `graph` knows the Cells and the compiled functions and why
    (`ms_lint.analysis.graph`); `walk` is the module's one preorder walk (parents, spans, nodes by class, the
    nodes of a function); `names` resolves names through the imports and locals in scope; `tensors(node)` tells
    which expressions of the function around `node` hold tensor data; `memo(key, compute)` keeps what a rule
    computes once per module.
    """

    def __init__(self, source: SourceFile, tree: ast.Module, graph: "GraphScope", settings: "Settings",
                 compile_context: CompileContext = CompileContext()):
        self.source = source
        self.tree = tree
        self.graph = graph
        self.walk = graph.walk
        self.names = graph.names
        self.tensors = Tensors(graph)
        self.settings = settings
        self.compile_context = compile_context
        # (row, code) of the line suppressions the module's findings used: set by the engine once the hooks ran,
        # for the project rules' `collect` (MSL098 reports the unused ones)
        self.suppressions_used: set[tuple[int, str]] = set()

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()`, once per module under `key` (the asking function, or a constant of its module)."""
        return self.walk.memo(key, compute)

    def release(self) -> None:
        """Drop the analyses once the module is linted, so its tree is freed at once (`ModuleWalk.release`)."""
        self.tensors.release()
        self.graph.release()

    @property
    def target(self) -> str:
        """"ascend" | "gpu" | "cpu" | "any": the option, else what this module sets itself, else what the project
        sets, else any (`compile_context.target_of`: the one precedence every rule follows)."""
        return target_of(self.settings, self.module_target, self.compile_context)

    @property
    def module_target(self) -> Optional[str]:
        """The device target this module sets itself with a constant, if any."""
        text = self.source.text
        if "device_target" not in text and "set_device" not in text:
            return None
        return module_target(self.memo(facts_of_module, lambda: facts_of_module(self.tree)))

    @property
    def path(self) -> str:
        return self.source.path

    @staticmethod
    def parent(node: ast.AST) -> Optional[ast.AST]:
        return parent_of(node)

    def position(self, row: int, byte_column: int) -> Position:
        return row, self.source.char_column(row, byte_column)

    # `node`: any node with a position (expressions, statements, arguments, keywords...)
    def start(self, node: Any) -> Position:
        return self.position(node.lineno, node.col_offset)

    def end(self, node: Any) -> Position:
        return self.position(node.end_lineno, node.end_col_offset)

    def text(self, node: ast.AST) -> str:
        """The source text of a node, exactly as written."""
        (row, column), (end_row, end_column) = self.start(node), self.end(node)
        lines = self.source.lines
        if row == end_row:
            return lines[row - 1][column:end_column]
        return "\n".join([lines[row - 1][column:], *lines[row:end_row - 1], lines[end_row - 1][:end_column]])

    def excerpt(self, node: ast.AST, limit: int = 60) -> str:
        """The node's text on one line (runs of whitespace joined), cut to `limit` characters for a message."""
        text = " ".join(self.text(node).split())
        return text if len(text) <= limit else text[:limit - 3] + "..."

    def replace(self, node: ast.AST, content: str) -> Edit:
        return Edit(content, self.start(node), self.end(node))

    def insert(self, row: int, column: int, content: str) -> Edit:
        return Edit(content, (row, column), (row, column))

    def indentation(self, node: Any) -> str:
        line = self.source.line(node.lineno)
        return line[: len(line) - len(line.lstrip())]

    def diagnostic(self, rule: "Rule", node: ast.AST, message: str, severity: str, fix: Optional[Fix]) -> Diagnostic:
        (row, column), (end_row, end_column) = self.start(node), self.end(node)
        return Diagnostic(
            code=rule.code,
            symbol=rule.name,
            message=message,
            severity=self.settings.severity_of(rule.code, severity),
            path=self.source.path,
            row=row,
            column=column,
            end_row=end_row,
            end_column=end_column,
            fix=fix,
        )


def _imported_closure(path: str, imports: Mapping[str, Sequence[str]]) -> Set[str]:
    """Every file `path` imports, directly or through the files whose imports are known."""
    seen: Set[str] = set()
    stack = list(imports.get(path, ()))
    while stack:
        target = stack.pop()
        if target not in seen:
            seen.add(target)
            stack.extend(imports.get(target, ()))
    return seen


class ProjectFacts:
    """What a project rule's `judge` sees: its facts per module path, the settings and the compile context. The
    context is a CompileContext, or a function giving it: then the project is scanned only if a judge asks (a run
    from the cache lints nothing, so nothing has scanned it yet)."""

    def __init__(self, modules: dict, settings: "Settings", compile_context: object,
                 imports: Optional[Mapping[str, Sequence[str]]] = None):
        self.modules = modules
        self.settings = settings
        self._compile_context = compile_context
        # linted path -> the absolute paths of the project files it imports (`projects.imported_files`)
        self._imports = {os.path.abspath(path): targets for path, targets in (imports or {}).items()}
        self._importable: Dict[str, Set[str]] = {}

    def can_cite(self, path: str, cited: str) -> bool:
        """May a finding in `path` name code in `cited`: do they run in one program, that is, is it the same file,
        or does one import the other, directly or through other linted files (`trainer.py`'s `Model(...)` trains
        the network the `train.py` importing it cast)? A group of files connected by imports can hold two
        scripts that only share a library (`a/train.py` and `b/train.py` importing one `src`): neither runs the
        other's code."""
        source, target = os.path.abspath(path), os.path.abspath(cited)
        return source == target or target in self._imported(source) or source in self._imported(target)

    def _imported(self, path: str) -> Set[str]:
        if path not in self._importable:
            self._importable[path] = _imported_closure(path, self._imports)
        return self._importable[path]

    @property
    def compile_context(self):
        if callable(self._compile_context):
            self._compile_context = self._compile_context()
        return self._compile_context


class Rule:
    """Base class of every rule. Subclasses live one per module in `ms_lint.rules` and are found there.

    A subclass declares `code`, `name`, `severity`, `scope`, `message` (a `str.format` template) and, when it has
    one, `fix_applicability`; its docstring is its documentation. It defines `visit_<node>` hooks named after
    `ast` node classes in snake case (`visit_call`, `visit_aug_assign`) that yield diagnostics from `self.report`
    (a hook on a common node may instead return None at once for the nodes it rules out, and a generator of
    diagnostics for the others: a plain return costs less than a generator that finds nothing).
    """

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]
    scope: ClassVar[str] = "graph"
    message: ClassVar[str]
    fix_applicability: ClassVar[Optional[str]] = None
    # True when the fixes of the rule's findings in one module may apply in the same pass although they insert
    # text at the same point (each hoist appends to `__init__`): the rule keeps what they create apart (unique
    # names across the module's findings). Otherwise such fixes overlap and wait for the next pass.
    insertions_compose: ClassVar[bool] = False
    # Substrings of which at least one must occur in a file's text for the rule to possibly fire there: a cheap
    # pre-filter that lets the engine skip walks. Empty means "always applicable".
    needles: ClassVar[Tuple[str, ...]] = ()
    # The names a call's function must end in for `visit_call` to do anything with the call: the attribute of
    # `a.b.f(...)`, or for `f(...)` the name itself or the last component of what it names (`GraphScope.qualname`:
    # `from m import g as f` ends in `g`). The engine calls `visit_call` only for such calls (each call of a
    # module reaches dozens of rules). None means every call. It must be an exact necessary condition.
    call_names: ClassVar[Optional[FrozenSet[str]]] = None
    # True when the pitfall exists only where the code is compiled (GRAPH_MODE, or a `jit` function) and PyNative
    # runs it as Python would: in a project that runs its Cells in PyNative (`analysis/run_mode.py`) the findings
    # outside `jit` functions are lowered a step and say why. `report(compiled_only=...)` decides per finding.
    compiled_only: ClassVar[bool] = False

    def report(
        self,
        ctx: "Context",
        node: ast.AST,
        *,
        fix: Optional[Fix] = None,
        severity: Optional[str] = None,
        compiled_only: Optional[bool] = None,
        pynative_only: bool = False,
        **fields,
    ) -> Diagnostic:
        """A diagnostic for `node`. `{entry}` and `{level_note}` in the message are filled from the context;
        a "level" severity becomes warning under LAX and error under STRICT; a finding of a pitfall of compiled
        code (`compiled_only`, the rule's by default) in a project that runs in PyNative is lowered a step, and
        one of a failure of PyNative alone (`pynative_only`) in a project that selects only GRAPH_MODE."""
        entry = ctx.graph.entry_of(node)
        if entry is not None:
            fields.setdefault("entry", entry.name)
        fields.setdefault("level_note", self.level_note(ctx, node))
        severity = severity or self.severity
        if severity == "level":
            severity = "error" if ctx.graph.level_of(node) == "strict" else "warning"
        message = self.message.format(**fields)
        pynative = ctx.compile_context.pynative_source
        if pynative is not None and (self.compiled_only if compiled_only is None else compiled_only) \
                and (entry is None or entry.kind != "jit"):
            severity = LOWERED[severity]
            message += f"; only once compiled: this project runs its Cells in PyNative ({pynative.describe()})"
        graph_only = ctx.compile_context.graph_only_source
        if pynative_only and graph_only is not None:
            severity = LOWERED[severity]
            message += f"; only in PyNative: this project compiles its Cells ({graph_only.describe()})"
        return ctx.diagnostic(self, node, message, severity, fix)

    @staticmethod
    def level_note(ctx: "Context", node: ast.AST) -> str:
        """What the code does at the syntax level it compiles at, for the messages of "level" rules."""
        return LEVEL_NOTES[ctx.graph.level_of(node)]

    # Project rules (facts spanning modules) define both:
    #   collect(self, ctx) -> JSON-able facts of one module, or None;
    #   judge(self, project: ProjectFacts) -> diagnostics, once for the whole project.
    # The CLI and pylint judge the facts of every linted module together; flake8 judges one file at a time.

    def report_at(self, project: "ProjectFacts", path: str, span, *, fix: Optional[Fix] = None,
                  severity: Optional[str] = None, **fields) -> Diagnostic:
        """A project-level diagnostic at `span` ((row, column), (end_row, end_column)) of `path`."""
        (row, column), (end_row, end_column) = span
        severity = project.settings.severity_of(self.code, severity or self.severity)
        return Diagnostic(self.code, self.name, self.message.format(**fields), severity, path, row, column,
                          end_row, end_column, fix)

    @classmethod
    def docs(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """The first sentence under "What it does"."""
        match = re.search(r"## What it does\s+(.+?)(?:\n\n|\n##|$)", cls.docs(), re.S)
        text = match.group(1) if match else cls.docs().split("\n\n")[0]
        return " ".join(text.split())

    @classmethod
    def hooks(cls) -> Iterator[Tuple[type, str]]:
        """(ast node class, method name) for every visit hook the rule defines."""
        for attr in dir(cls):
            if attr.startswith("visit_"):
                node_class = _NODE_CLASSES.get(attr[len("visit_"):])
                if node_class is None:
                    raise TypeError(f"{cls.__name__}.{attr} does not name an ast node class")
                if issubclass(node_class, _UNWALKED):
                    raise TypeError(f"{cls.__name__}.{attr}: the engine does not walk {node_class.__name__} "
                                    "nodes (shared singletons); hook their parent node instead")
                yield node_class, attr


# A finding of compiled code's pitfall in a project that runs in PyNative (`Rule.report`)
LOWERED = {"error": "warning", "warning": "info", "info": "info"}

LEVEL_NOTES = {
    "lax": "runs on the host through JIT Fallback at the default LAX syntax level, fails to compile under STRICT",
    "strict": "fails to compile at the STRICT syntax level",
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# Operator and expression-context singletons are not walked (ms_lint.source.child_nodes skips them).
_UNWALKED = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)

_NODE_CLASSES = {
    _snake(name): obj
    for name, obj in vars(ast).items()
    if isinstance(obj, type) and issubclass(obj, ast.AST) and obj is not ast.AST
}
