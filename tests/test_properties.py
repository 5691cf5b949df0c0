"""Property-based reliability: the engine never crashes, and fixes keep code parseable and are idempotent.

Generated Python (hypothesmith) exercises the parser-facing side of every rule; it rarely looks like MindSpore code,
so the same programs are also linted as the body of a Cell's `construct` and of a `@jit` function, and fixes are
tested on the rule fixtures (code that fires), with top-level statements and class/function bodies dropped,
duplicated and reordered. Examples are derandomized (the same on every run) and bounded to keep the file fast.
"""
from __future__ import annotations

import ast
import contextlib
import io
import os
import tempfile
import textwrap
from collections import Counter

import hypothesmith
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pyflakes import checker, messages
from support import fixture_files, run_cli

from ms_lint.engine import Linter
from ms_lint.fixing.passes import fix_source
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

ALL = Settings(select=("ALL",))
BOTH = ("safe", "unsafe")
# A path that does not exist: no project around the code (no pyproject, no package to scan for set_context).
PATH = os.path.join(os.sep, "nonexistent-ms-lint-properties", "generated.py")
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code like `"a"()`
SLOW = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


def bounded(examples: int):
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=SLOW)


def source(text: str) -> SourceFile:
    return SourceFile(path=PATH, text=text, module_name="generated")


def parses(text: str) -> bool:
    try:
        ast.parse(text)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def lint(text: str):
    result = Linter(ALL).lint_source(source(text))
    assert result.internal_errors == [], "\n".join(result.internal_errors)
    return result.diagnostics


# ----- the engine never raises on valid Python ---------------------------------------------------------------------
CELL = ("import numpy as np\nimport mindspore as ms\nfrom mindspore import nn, ops, Tensor, Parameter\n\n\n"
        "class Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n\n"
        "    def construct(self, x, y=None):\n{body}\n        return x\n")
JIT = ("import numpy as np\nimport mindspore as ms\nfrom mindspore import jit, ops\n\n\n@jit\n"
       "def step(x, y=None):\n{body}\n    return x\n")


def as_graph_code(program: str, template: str, indent: str) -> str:
    return template.format(body=textwrap.indent(program, indent, lambda line: True) if program.strip() else
                           indent + "pass")


@bounded(100)
@given(hypothesmith.from_grammar())
def test_engine_never_raises_on_generated_modules(program):
    lint(program)


@bounded(60)
@given(hypothesmith.from_grammar())
def test_engine_never_raises_on_generated_graph_code(program):
    """The same programs as a Cell's construct and as a @jit function, where graph-mode rules look."""
    for template, indent in ((CELL, " " * 8), (JIT, " " * 4)):
        text = as_graph_code(program, template, indent)
        if parses(text):  # `from __future__`, `nonlocal`, ... are not valid inside a function
            lint(text)


@bounded(10)
@given(hypothesmith.from_node())
def test_engine_never_raises_on_generated_syntax_trees(program):
    """from_node covers statement kinds from_grammar rarely produces (it is slow: few examples)."""
    lint(program)


@bounded(8)
@given(st.lists(hypothesmith.from_grammar(), min_size=1, max_size=3))
def test_cli_never_raises_on_generated_modules(programs):
    """The CLI path: discovery, the runner, project rules, output; exit 0/1 and no internal error on stderr."""
    with tempfile.TemporaryDirectory() as directory:
        for index, program in enumerate(programs):
            with open(os.path.join(directory, f"m{index}.py"), "w", encoding="utf-8", newline="") as handle:
                handle.write(program)
            with open(os.path.join(directory, f"cell{index}.py"), "w", encoding="utf-8", newline="") as handle:
                handle.write(as_graph_code(program, CELL, " " * 8))
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            code, _ = run_cli("check", "--no-cache", "--select", "ALL", "--output-format", "json", directory)
    assert code in (0, 1) and "internal error" not in errors.getvalue() and "Traceback" not in errors.getvalue(), \
        errors.getvalue()


# ----- fixes on the rule fixtures (code that fires) ----------------------------------------------------------------
FIXTURES = {path.name: path.read_text(encoding="utf-8") for path in fixture_files()}
FIXTURES = {name: text for name, text in FIXTURES.items() if parses(text)}  # MSL099.py is a syntax error on purpose
FIXABLE = sorted(name for name, text in FIXTURES.items()
                 if any(d.fix is not None for d in Linter(ALL).lint_source(source(text)).diagnostics))
COMPOUND = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _indentation(lines, node) -> str:
    return lines[node.lineno - 1][:node.col_offset]


def _body_starts_on_its_own_line(lines, node) -> bool:
    first = node.body[0]
    return first.lineno > node.lineno and _indentation(lines, first).strip() == ""


@st.composite
def _block(draw, lines, body, start, depth):
    """The text of the statements `body` (a block starting at 0-based line `start`), each statement with the
    comment and blank lines above it; some dropped, duplicated or reordered, and compound statements' bodies
    mutated the same way. Shrinks to the original text."""
    segments = []
    for node in body:
        segments.append((node, start, node.end_lineno))
        start = max(start, node.end_lineno)
    copies = [draw(st.sampled_from([1, 1, 1, 0, 2])) for _ in segments]
    order = list(range(len(segments)))
    if len(order) > 1 and draw(st.booleans()):
        order = draw(st.permutations(order))
    pieces = []
    for index in order:
        node, first, last = segments[index]
        text = "".join(lines[first:last])
        if depth < 2 and isinstance(node, COMPOUND) and _body_starts_on_its_own_line(lines, node) and \
                copies[index] and draw(st.booleans()):
            header_end = node.body[0].lineno - 1
            inner = draw(_block(lines, node.body, header_end, depth + 1))
            text = "".join(lines[first:header_end]) + (inner or _indentation(lines, node.body[0]) + "pass\n")
        pieces.append(text * copies[index])
    return "".join(pieces)


@st.composite
def _mutated(draw, names):
    text = FIXTURES[draw(st.sampled_from(names))]
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    last = tree.body[-1].end_lineno if tree.body else 0
    return draw(_block(lines, tree.body, 0, 0)) + "".join(lines[last:])


@st.composite
def mutated_fixtures(draw):
    """A fixable fixture, mutated, sometimes followed by another fixture (rules and fixes meet in one module)."""
    mutated = draw(_mutated(FIXABLE))
    if draw(st.booleans()):
        mutated += "\n\n" + draw(_mutated(sorted(FIXTURES)))
    assume(parses(mutated))  # e.g. a `from __future__` import moved down
    return mutated


def fixed(text: str):
    return fix_source(Linter(ALL), source(text), BOTH)


def undefined_names(text: str) -> Counter:
    """Names pyflakes finds used but never defined (a fix that renames an import but not its uses makes one)."""
    found = checker.Checker(ast.parse(text), filename="m.py").messages
    return Counter(m.message_args[0] for m in found if isinstance(m, messages.UndefinedName))


@bounded(100)
@given(mutated_fixtures())
def test_fixes_keep_code_parseable_and_are_idempotent(text):
    lint(text)
    first = fixed(text)
    assert [(d.code, d.row, reason) for d, reason in first.rejected if "does not parse" in reason] == []
    assert parses(first.text)
    lint(first.text)
    assert first.converged
    second = fixed(first.text)
    assert second.text == first.text and second.applied == []
    # no new undefined name (a renamed import whose uses stay); mutation may leave names used above their import
    assert sum(undefined_names(first.text).values()) <= sum(undefined_names(text).values()), first.text


@pytest.mark.parametrize("name", FIXABLE)
def test_each_fixable_fixture_fixes_to_a_fixed_point(name):
    """Every fixture, unmutated (the property test above draws from them, but may not draw each one)."""
    first = fixed(FIXTURES[name])
    assert first.converged and parses(first.text)
    assert [(d.code, d.row, reason) for d, reason in first.rejected if "does not parse" in reason] == []
    assert fixed(first.text).text == first.text


# ----- bugs the property test above found (minimal reproducers, fixed in passes._verified_pass) ------------------
MANY_FIXES_AND_A_REJECTED_ONE = (
    "from mindspore import nn\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n"
    "        super().__init__()\n" + "".join(f"        self.a{i} = [nn.Dense(2, 2)]\n" for i in range(12))
    + "\n    def construct(self, x):\n        return x\n")


def test_a_rejected_fix_does_not_cost_one_pass_per_other_fix(monkeypatch):
    """Once, the retry after a failed pass applied one good fix per pass: 11 exhausted MAX_PASSES (10). The check
    is made to refuse the fix of `self.a11` (whatever a real rejection's cause, the retry is the same)."""
    from ms_lint.fixing import passes

    real_check = passes._check

    def refusing_a11(lint, linter, source, before_text, before, after_text, applied):
        if "self.a11 = nn.CellList(" in after_text:
            return "refused for the test", []
        return real_check(lint, linter, source, before_text, before, after_text, applied)

    monkeypatch.setattr(passes, "_check", refusing_a11)
    first = fixed(MANY_FIXES_AND_A_REJECTED_ONE)
    assert [(d.code, reason) for d, reason in first.rejected] == [("MSL030", "refused for the test")]
    assert first.converged and len(first.applied) == 11
    assert fixed(first.text).text == first.text


IMPORT_AND_USE = ("import mindspore as ms\nfrom mindspore import Tensor, ms_function\n\n\n@ms_function\n"
                  "def double(x):\n    return x * 2\n\n\n"
                  "@ms.ms_function(input_signature=(Tensor(shape=[None], dtype=ms.float32),))\n"
                  "def triple(x):\n    return x * 3\n")


def test_an_import_fix_is_not_applied_without_the_fixes_of_its_uses():
    """Once, a rejected fix made the retry apply MSL065's import fix (`ms_function` -> `jit`) alone: `@ms_function`
    then no longer fired and stayed, an undefined name."""
    result = fixed(IMPORT_AND_USE)
    assert undefined_names(result.text) == Counter(), result.text
    assert "@jit\n" in result.text and "@ms.jit(input_signature=" in result.text and result.rejected == []
