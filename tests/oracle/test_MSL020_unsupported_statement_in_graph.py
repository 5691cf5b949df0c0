"""MSL020: what MindSpore 2.10 does with `try`, `del`, `import`, `with`... in graph code (claims in its docs)."""
from __future__ import annotations

import pytest

CELLS = """
import contextlib
import math
from mindspore import Tensor, jit_class, nn

@jit_class
class Scope:
    def __enter__(self):
        return self
    def __exit__(self, *args):
        return False

class Plain:
    def __enter__(self):
        return self
    def __exit__(self, *args):
        return False

@contextlib.contextmanager
def scope():
    yield

class Try(nn.Cell):
    def construct(self, x):
        try:
            x = x + 1
        except ValueError:
            pass
        return x

class Delete(nn.Cell):
    def construct(self, x):
        y = x + 1
        del y
        return x

class Import(nn.Cell):
    def construct(self, x):
        import math
        return x * math.pi

class ImportFrom(nn.Cell):
    def construct(self, x):
        from math import pi
        return x * pi

class Match(nn.Cell):
    def construct(self, x):
        match 1:
            case 1:
                return x
        return x * 2

class Nonlocal(nn.Cell):
    def construct(self, x):
        n = 1
        def inner():
            nonlocal n
            n = 2
            return n
        return x * inner()

class AsyncFunctionDef(nn.Cell):
    def construct(self, x):
        async def inner():
            return 1
        return x

class Yield(nn.Cell):
    def construct(self, x):
        yield x

class YieldFrom(nn.Cell):
    def construct(self, x):
        yield from (x, x)

class DeadIfFalse(nn.Cell):
    def construct(self, x):
        if False:
            try:
                x = x + 1
            except ValueError:
                pass
        return x

def make(bad=None):
    class DeadClosure(nn.Cell):
        def construct(self, x):
            if bad == "try":
                try:
                    x = x + 1
                except ValueError:
                    pass
            return x
    return DeadClosure

DeadClosure = make()

class DeadSelfAttribute(nn.Cell):
    def __init__(self, mode=None):
        super().__init__()
        self.mode = mode
    def construct(self, x):
        if self.mode == "try":
            try:
                x = x + 1
            except ValueError:
                pass
        return x

class WithPlain(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scope = Plain()
    def construct(self, x):
        with self.scope:
            x = x * 2
        return x

class WithFunction(nn.Cell):
    def construct(self, x):
        with scope():
            x = x * 2
        return x

class WithJitClass(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scope = Scope()
    def construct(self, x):
        with self.scope:
            x = x * 2
        with Scope():
            x = x + 1
        return x

class ForElse(nn.Cell):
    def construct(self, x):
        for i in range(3):
            x = x + 1
        else:
            x = x * 2
        return x

class WhileElse(nn.Cell):
    def construct(self, x):
        i = 0
        while i < 3:
            i += 1
        else:
            x = x * 2
        return x

class TwoForList(nn.Cell):
    def construct(self, x):
        y = [a * b for a in range(2) for b in range(3)]
        return x + y[1]

class TwoForGenerator(nn.Cell):
    def construct(self, x):
        y = tuple(a * b for a in range(2) for b in range(3))
        return x + y[1]

class TwoForDict(nn.Cell):
    def construct(self, x):
        y = {a * 3 + b: b for a in range(2) for b in range(3)}
        return x + y[1]

class ProjectError(ValueError):
    pass

class RaiseProjectError(nn.Cell):
    def construct(self, x):
        if x.shape[0] > 5:
            raise ProjectError("too big")
        return x

class RaiseFileNotFound(nn.Cell):
    def construct(self, x):
        if x.shape[0] > 5:
            raise FileNotFoundError("no file")
        return x

class RaiseKeyError(nn.Cell):
    def construct(self, x):
        if x.shape[0] > 5:
            raise KeyError("fine")
        return x

class ReturnsMethod(nn.Cell):
    def helper(self, t):
        return t * 2
    def construct(self, x):
        return self.helper

class ReturnsMethodInATuple(nn.Cell):
    def helper(self, t):
        return t * 2
    def construct(self, x):
        return x, self.helper

class Supported(nn.Cell):
    def construct(self, x):
        if x.sum() > 100:
            raise ValueError("too large")
        assert x.shape[0] == 3
        double = lambda t: t * 2
        def inc(t):
            return t + 1
        ys = [x * i for i in range(2) if i >= 0]
        while x.sum() < 10:
            x = x + 1
        y = inc(double(x)) + ys[1]
        if isinstance(x, Tensor):
            y = y + 1
        return y
"""

UNSUPPORTED = [("Try", "statement 'Try'"), ("Delete", "statement 'Delete'"), ("Import", "statement 'Import'"),
               ("ImportFrom", "statement 'ImportFrom'"), ("Match", "statement 'Match'"),
               ("Nonlocal", "statement 'Nonlocal'"), ("AsyncFunctionDef", "statement 'AsyncFunctionDef'"),
               ("Yield", "expression 'Yield'"), ("YieldFrom", "expression 'YieldFrom'")]


@pytest.mark.parametrize("mode", ["lax", "strict"])
@pytest.mark.parametrize("cell, parser_name", UNSUPPORTED, ids=[c for c, _ in UNSUPPORTED])
def test_msl020_statement_is_rejected_by_the_parser(oracle, mode, cell, parser_name):
    cells = oracle.load(CELLS)
    outcome = oracle.compile(mode, getattr(cells, cell)(), oracle.tensor([1.0, 2.0, 3.0]))
    assert not outcome.ok, f"{cell} compiled under {mode}"
    assert outcome.error_type == "RuntimeError" and f"Unsupported {parser_name}" in outcome.message


def test_msl020_dead_branches_still_fail_except_constant_cell_attributes(oracle):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0, 3.0])
    for cell in (cells.DeadIfFalse(), cells.DeadClosure()):
        outcome = oracle.compile("lax", cell, x)
        assert not outcome.ok and "Unsupported statement 'Try'" in outcome.message
    # measured 2.10 exception: a branch on a constant Cell attribute is pruned before parsing...
    assert oracle.call("lax", cells.DeadSelfAttribute(), x).ok
    # ...and breaks as soon as an instance takes it
    taken = oracle.compile("lax", cells.DeadSelfAttribute("try"), x)
    assert not taken.ok and "Unsupported statement 'Try'" in taken.message


LOOP_ELSE_AND_COMPREHENSIONS = [
    ("ForElse", "RuntimeError", "The 'for...else...' statement is not supported now."),
    ("WhileElse", "RuntimeError", "The 'while...else...' statement is not supported now."),
    ("TwoForList", "TypeError", "supports 1 'comprehension' in ListComp/GeneratorExp, but got 2 comprehensions"),
    ("TwoForGenerator", "TypeError", "supports 1 'comprehension' in ListComp/GeneratorExp, but got 2"),
    ("TwoForDict", "TypeError", "supports 1 'comprehension' in DictComp/GeneratorExp, but got 2 comprehensions"),
]


@pytest.mark.parametrize("mode", ["lax", "strict"])
@pytest.mark.parametrize("cell, error_type, head", LOOP_ELSE_AND_COMPREHENSIONS,
                         ids=[c for c, _, _ in LOOP_ELSE_AND_COMPREHENSIONS])
def test_msl020_loop_else_and_two_for_comprehensions_fail(oracle, mode, cell, error_type, head):
    cells = oracle.load(CELLS)
    outcome = oracle.compile(mode, getattr(cells, cell)(), oracle.tensor([1.0, 2.0, 3.0]))
    assert not outcome.ok and outcome.error_type == error_type and head in outcome.message


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl020_raise_takes_the_standard_exception_types_only(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0, 3.0])
    for cell, name in ((cells.RaiseProjectError(), "ProjectError"), (cells.RaiseFileNotFound(), "FileNotFoundError")):
        outcome = oracle.compile(mode, cell, x)  # the branch is never taken: the parser refuses the raise itself
        assert not outcome.ok and outcome.error_type == "RuntimeError"
        assert f"Unsupported exception type: {name}. Raise only support some Python standard exception types" \
            in outcome.message
    assert oracle.call(mode, cells.RaiseKeyError(), x).ok


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl020_a_method_is_no_network_output(oracle, mode):
    cells = oracle.load(CELLS)
    for cell in (cells.ReturnsMethod(), cells.ReturnsMethodInATuple()):
        outcome = oracle.compile(mode, cell, oracle.tensor([1.0, 2.0, 3.0]))
        assert not outcome.ok and outcome.error_type == "RuntimeError"
        assert "Function in output is not supported" in outcome.message


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl020_with_needs_a_jit_class_object(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0, 3.0])
    plain = oracle.call(mode, cells.WithPlain(), x)
    assert not plain.ok and plain.error_type == "TypeError" and "Only support jit_class instance" in plain.message
    function = oracle.call(mode, cells.WithFunction(), x)
    assert not function.ok and function.error_type == "TypeError" and "issubclass()" in function.message
    jit_class = oracle.call(mode, cells.WithJitClass(), x)
    assert jit_class.ok and jit_class.value.asnumpy().tolist() == [3.0, 5.0, 7.0]


def test_msl020_supported_syntax_compiles_and_matches_pynative(oracle):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0, 3.0])
    results = {mode: oracle.call(mode, cells.Supported(), x) for mode in ("lax", "strict", "pynative")}
    for mode, outcome in results.items():
        assert outcome.ok, f"{mode}: {outcome.message}"
        assert outcome.value.asnumpy().tolist() == [9.0, 12.0, 15.0], mode
