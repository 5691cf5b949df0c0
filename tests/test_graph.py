"""GraphScope: which classes are Cells, which functions are graph code and from which entry point."""
from __future__ import annotations

import ast
import glob
import textwrap

from ms_lint.analysis.graph import GraphScope
from ms_lint.analysis.project import ProjectIndex
from ms_lint.analysis.walk import parent_of


def scope(source, module="pkg.model", path="pkg/model.py", index=None, level=None):
    source = textwrap.dedent(source)
    return GraphScope(ast.parse(source), module, path, index or ProjectIndex(), level, source)


def compiled(graph):
    return {getattr(f, "name", "<lambda>"): [e.name for e in entries] for f, entries in graph.compiled.items()}


def test_cells_through_aliases_local_bases_and_mindtorch():
    graph = scope("""
        import mindspore as ms
        import mindspore.nn as mnn
        from mindspore.nn import Cell
        from mindtorch.torch.nn import Module
        import torch
        class A(ms.nn.Cell): pass
        class B(mnn.Dense): pass
        class C(Cell): pass
        class D(C): pass
        class E(Module): pass
        class F(torch.nn.Module): pass
        class G: pass
    """)
    kinds = {cell.node.name: cell.kind for cell in graph.cells.values()}
    assert kinds == {"A": "cell", "B": "cell", "C": "cell", "D": "cell", "E": "module"}


def test_mstorch_enable_turns_torch_into_mindtorch():
    graph = scope("""
        from mindtorch.tools import mstorch_enable
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                return x
    """)
    assert compiled(graph) == {"forward": ["M.forward"]}


def test_base_class_from_another_module_of_the_project(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "blocks.py").write_text("from mindspore import nn\nclass Block(nn.Cell):\n    pass\n")
    (package / "reexport.py").write_text("from .blocks import Block as Base\n")
    index = ProjectIndex()
    index.add_file(str(package / "model.py"))
    graph = scope("""
        from .blocks import Block
        from pkg.reexport import Base
        class Head(Block):
            def construct(self, x):
                return x
        class Tail(Base):
            def construct(self, x):
                return x
    """, path=str(package / "model.py"), index=index)
    assert sorted(compiled(graph)) == ["construct"] and len(graph.compiled) == 2
    assert all(not cell.assumed for cell in graph.cells.values())


def test_unresolvable_base_with_construct_is_assumed_to_be_a_cell():
    graph = scope("""
        from thirdparty import Base
        class Net(Base):
            def construct(self, x):
                return x
        class Plain(Base):
            def run(self):
                pass
    """)
    assert [(c.node.name, c.assumed) for c in graph.cells.values()] == [("Net", True)]


def test_reachability_from_construct():
    graph = scope("""
        from mindspore import nn
        def helper(x):
            return x
        def unused(x):
            return x
        class Base(nn.Cell):
            def shared(self, x):
                return x
            def overridden(self, x):
                return x
            def construct(self, x):
                return self.overridden(x)
        class Net(Base):
            def __init__(self):
                super().__init__()
            @property
            def scale(self):
                return 2
            def overridden(self, x):
                return super().overridden(self.shared(x)) * self.scale
            def host_only(self):
                return 1
            def construct(self, x):
                f = lambda y: helper(y)
                return Base.construct(self, f(x))
    """)
    reached = compiled(graph)
    assert reached["helper"] == ["Net.construct"]
    assert "unused" not in reached and "host_only" not in reached and "__init__" not in reached
    assert reached["overridden"] in (["Base.construct"], ["Net.construct"], ["Base.construct", "Net.construct"])
    assert {"shared", "scale", "<lambda>"} <= set(reached)


def test_jit_entries_and_their_syntax_levels():
    graph = scope("""
        import mindspore as ms
        from mindspore import jit
        @jit
        def plain(x):
            return x
        @ms.jit(fullgraph=True)
        def strict(x):
            return x
        def wrapped(x):
            return x
        step = ms.jit(wrapped, fullgraph=True)
        ms.set_context(jit_syntax_level=ms.STRICT)
    """)
    levels = {f.name: graph.level_of(f) for f in graph.compiled}
    assert levels == {"plain": "lax", "strict": "strict", "wrapped": "strict"}
    assert graph.level == "strict"


def test_bprop_is_graph_code():
    graph = scope("""
        from mindspore import nn
        class Custom(nn.Cell):
            def construct(self, x):
                return x
            def bprop(self, x, out, dout):
                return (dout,)
    """)
    assert compiled(graph) == {"construct": ["Custom.construct"], "bprop": ["Custom.bprop"]}


def test_mindspore_numpy_alias_is_not_numpy():
    graph = scope("import mindspore.numpy as np\nimport numpy\nx = np.sum\ny = numpy.sum\n")
    values = [stmt.value for stmt in graph.tree.body[2:]]
    assert [graph.names.qualname(v) for v in values] == ["mindspore.numpy.sum", "numpy.sum"]


def _def_by_climbing(graph, node):
    """The innermost def around `node` the slow way: a call in a def's decorators or defaults is the def's."""
    node = parent_of(node)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        node = parent_of(node)
    return node


def test_enclosing_defs_found_by_sweeping_are_the_climbed_ones():
    sources = [textwrap.dedent("""
        f(1)
        @dec(g())
        def outer(a=h(), *, b=lambda: i()):
            j()
            class Inner:
                k()
                def method(self, c=l()) -> m():
                    async def inner():
                        await n()
                    return (lambda: o())()
            p()
        q()
        """)]
    sources += [open(path, encoding="utf-8").read() for path in sorted(glob.glob("fixtures/*.py"))]
    compared = 0
    for source in sources:
        if "MSL099" in source:
            continue  # the fixture of unparsable files
        graph = GraphScope(ast.parse(source), "m", "m.py", ProjectIndex(), None, source)
        found = list(graph.walk.with_enclosing_def(ast.Call))
        assert [call for call, _ in found] == [n for n in graph.walk.order if isinstance(n, ast.Call)]
        for call, function in found:
            assert function is _def_by_climbing(graph, call), ast.unparse(call)
            compared += 1
    assert compared > 1000


def test_a_def_spells_import_on_the_rows_the_parser_counts():
    for newline in ("\n", "\r\n", "\r"):
        source = newline.join(["import os", "", "def f():", "    x = 1", "    import json", "    return x",
                               "def g():", "    return 2", ""])
        graph = GraphScope(ast.parse(source), "m", "m.py", ProjectIndex(), None, source)
        f, g = (node for node in graph.tree.body if isinstance(node, ast.FunctionDef))
        assert graph.names.spells_import(f) and not graph.names.spells_import(g), repr(newline)


def test_a_script_that_selects_pynative_only_runs_its_cells_eagerly():
    """A module putting the process in PyNative at import (a course script, issue 19) compiles only its `@jit`
    functions; selecting GRAPH_MODE anywhere in it, or PyNative only under a condition, keeps construct."""
    body = """
        import mindspore as ms
        from mindspore import context, nn
        {setting}

        class Net(nn.Cell):
            def construct(self, x):
                return x

        @ms.jit
        def step(x):
            return x
        """
    eager = scope(body.format(setting="context.set_context(mode=context.PYNATIVE_MODE, device_target='GPU')"))
    assert compiled(eager) == {"step": ["step"]}
    for setting in ("context.set_context(mode=context.PYNATIVE_MODE)\nms.set_context(mode=ms.GRAPH_MODE)",
                    "if True:\n    ms.set_context(mode=ms.PYNATIVE_MODE)", ""):
        graph = scope(body.format(setting=setting.replace("\n", "\n        ")))
        assert compiled(graph) == {"construct": ["Net.construct"], "step": ["step"]}, setting
