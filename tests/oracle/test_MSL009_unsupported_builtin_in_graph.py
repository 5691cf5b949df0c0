"""MSL009: builtins on tensor data need LAX fallback; under STRICT even naming a tensor fails; iter/next diverge;
eval/exec fail."""
from __future__ import annotations

import pytest

CELLS = """
from mindspore import nn

class Sorted(nn.Cell):
    def construct(self, x):
        return sorted(x)

class Set(nn.Cell):
    def construct(self, x):
        return len(set((x,)))

class FrozenSet(nn.Cell):
    def construct(self, x):
        return len(frozenset((x,)))

class Id(nn.Cell):
    def construct(self, x):
        return id(x)

class Hash(nn.Cell):
    def construct(self, x):
        return hash(x)

class SortedShape(nn.Cell):
    def construct(self, x):
        return x * sorted(x.shape)[0]

class SetShape(nn.Cell):
    def construct(self, x):
        return x * len(set(x.shape))

class HashShape(nn.Cell):
    def construct(self, x):
        return x * (hash(x.shape) % 2)

class IdShape(nn.Cell):
    def construct(self, x):
        return x * (id(x.shape) % 2)

class ShapeLocal(nn.Cell):
    def construct(self, x):
        shape = x.shape
        return x * sorted(shape)[0] * len(set(shape))

class Constants(nn.Cell):
    def construct(self, x):
        return x * sorted([3, 1, 2])[0] * len(set([1, 2])) * (hash(3) - 2)

class Allowed(nn.Cell):
    def construct(self, x):
        return x * len(x) + max(x[0], x[1]) + int(x[0]) + float(x.sum()) + x[0].item()

class IterNext(nn.Cell):
    def construct(self, x):
        return next(iter(x))

class Eval(nn.Cell):
    def construct(self, x):
        return eval("x * 2")

class Exec(nn.Cell):
    def construct(self, x):
        exec("y = 1")
        return x
"""

ON_TENSORS = ["Sorted", "Set", "FrozenSet", "Id", "Hash"]
NAMING_A_TENSOR = ["SortedShape", "SetShape", "HashShape", "IdShape"]


@pytest.mark.parametrize("cell_name", ON_TENSORS + NAMING_A_TENSOR)
def test_msl009_builtins_run_through_fallback_under_lax(oracle, cell_name):
    cells = oracle.load(CELLS)
    assert oracle.call("lax", getattr(cells, cell_name)(), oracle.tensor([1.0, 2.0])).ok


@pytest.mark.parametrize("cell_name", ON_TENSORS + NAMING_A_TENSOR)
def test_msl009_builtins_on_or_naming_tensors_fail_under_strict(oracle, cell_name):
    cells = oracle.load(CELLS)
    outcome = oracle.compile("strict", getattr(cells, cell_name)(), oracle.tensor([1.0, 2.0]))
    assert not outcome.ok and outcome.error_type == "ValueError"
    assert "the inputs should be constant" in outcome.message


@pytest.mark.parametrize("mode", ["lax", "strict"])
@pytest.mark.parametrize("cell_name", ["ShapeLocal", "Constants", "Allowed"])
def test_msl009_constants_shape_locals_and_allowed_builtins_compile(oracle, mode, cell_name):
    cells = oracle.load(CELLS)
    assert oracle.call(mode, getattr(cells, cell_name)(), oracle.tensor([1.0, 2.0])).ok


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl009_next_of_iter_returns_a_tuple_in_graph_mode(oracle, mode):
    cells = oracle.load(CELLS)
    x = oracle.tensor([1.0, 2.0, 3.0])
    graph = oracle.call(mode, cells.IterNext(), x)
    eager = oracle.call("pynative", cells.IterNext(), x)
    assert graph.ok and eager.ok
    assert eager.value.asnumpy().tolist() == 1.0
    item, rest = graph.value  # (item, rest of the tensor): not what PyNative returns
    assert item.asnumpy().tolist() == 1.0 and rest.asnumpy().tolist() == [2.0, 3.0]


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl009_eval_cannot_see_graph_locals(oracle, mode):
    cells = oracle.load(CELLS)
    outcome = oracle.call(mode, cells.Eval(), oracle.tensor([1.0, 2.0]))
    assert not outcome.ok and outcome.error_type == "NameError"
    assert oracle.call("pynative", cells.Eval(), oracle.tensor([1.0, 2.0])).ok


def test_msl009_exec_fails_under_strict(oracle):
    cells = oracle.load(CELLS)
    outcome = oracle.compile("strict", cells.Exec(), oracle.tensor([1.0, 2.0]))
    assert not outcome.ok and outcome.error_type == "RuntimeError"
    assert "The third argument should be a dictionary" in outcome.message


MAP_CELLS = """
from mindspore import nn, ops


class Closure(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([nn.ReLU(), nn.ReLU()])

    def construct(self, x):
        return sum(map(lambda layer: layer(x), self.layers))


class NestedDef(nn.Cell):
    def construct(self, x):
        def double(t):
            return t * x
        return sum(map(double, (x, x)))


class ReadsSelf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def construct(self, x):
        return sum(map(lambda t: t * self.scale, (x, x)))


class Named(nn.Cell):
    def construct(self, x):
        return sum(map(ops.relu, (x, x)))


class Comprehension(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([nn.ReLU(), nn.ReLU()])

    def construct(self, x):
        return sum([layer(x) for layer in self.layers])
"""


@pytest.mark.parametrize("mode", ["lax", "strict"])
def test_msl009_map_over_a_closure_of_locals_fails_and_the_rest_compiles(oracle, mode):
    """Axial attention's `sum(map(lambda attn: attn(x), self.axial_attentions))`, found by building community
    Cells (issue 19); the comprehension is the fix the message suggests."""
    cells = oracle.load(MAP_CELLS)
    x = oracle.tensor([1.0, -2.0])
    for cell in (cells.Closure, cells.NestedDef):
        outcome = oracle.call(mode, cell(), x)
        assert not outcome.ok and "The Map operator don't support Closure with free variable yet" in outcome.message
        assert oracle.call("pynative", cell(), x).ok
    for cell in (cells.ReadsSelf, cells.Named, cells.Comprehension):
        assert oracle.call(mode, cell(), x).ok


ORDERING = """
import mindspore as ms


@ms.jit
def f(x, y):
    return {expression}


def run():
    return f(ms.Tensor([1.0]), ms.Tensor([2.0]))
"""


@pytest.mark.parametrize("expression, message", [
    ("max((x, y), (y, x))", "The truth value of an array with more than one element is ambiguous"),
    ("min([[x], [y]])", "min() cannot support tensor in list or tuple nested now"),
    ("[x] < [y]", "For primitive 'list_lt', the input element must be scalar"),
    ("(x, y) >= (y, x)", "the input element must be scalar"),  # ('For primitive tupel_equal', sic)
    ("max(x, y)", None), ("min([x, y])", None), ("(1, 2) < (2, 3)", None)])
def test_msl009_nested_sequences_of_tensors_cannot_be_ordered(oracle, expression, message):
    from ms_lint.engine import Linter
    from ms_lint.settings import Settings
    from ms_lint.source import SourceFile

    source = ORDERING.format(expression=expression)
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, oracle.load(source).run)
        assert (not outcome.ok and message in outcome.message) if message else outcome.ok, (mode, outcome.message)
    found = Linter(Settings(select=("MSL009",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert [d.severity for d in found] == (["error"] if message else []), [d.message for d in found]
