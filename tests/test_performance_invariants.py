"""What the speed-ups of issue 7 rely on: one preorder walk per module read in slices, linted trees released
(the project index keeps facts, not trees), and rule shortcuts that give what the slower forms they replace give.
See docs/performance.md."""
from __future__ import annotations

import ast
import bisect
import collections
import gc
import itertools
import pathlib
import re
import textwrap
import weakref
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from ms_lint import engine, runner
from ms_lint.analysis.graph import GraphScope
from ms_lint.analysis.kept_trees import KeptTrees
from ms_lint.analysis.network_keys import _BINDING_NODES, _scope_nodes, _scope_ranges, _sort_out
from ms_lint.analysis.project import ProjectIndex
from ms_lint.analysis.seeds import ScriptSeeds
from ms_lint.analysis.walk import PARENT, enclosing_function, parent_of, spelled_name
from ms_lint.catalog import all_rules
from ms_lint.dispatch import runs_of
from ms_lint.engine import Linter
from ms_lint.rule import Context
from ms_lint.rules import undefined_attribute_in_graph as undefined_attribute
from ms_lint.settings import Settings
from ms_lint.source import SourceFile, child_nodes, module_name, package_root, remembered_packages
from ms_lint.source import parse as source_parse
from ms_lint.source import walk as source_walk

FIXTURES = pathlib.Path(__file__).parent.parent / "fixtures"
SOURCE = textwrap.dedent('''
    import mindspore as ms
    from mindspore import nn

    @ms.jit
    def helper(x, scale=lambda v: v * 2, *, shift=1 + 1, **extra) -> "ms.Tensor":
        class Local:
            pass
        try:
            y = x
        except ValueError as error:
            y = error
        return scale(y) + shift

    class Net(nn.Cell):
        def __init__(self, width: int = 3):
            super().__init__()
            self.width = width

        @property
        def double(self):
            return self.width * 2

        def construct(self, x):
            return helper(x) * self.double
''')


def _recursive_preorder(node):
    yield node
    for child in child_nodes(node):
        yield from _recursive_preorder(child)


def _graph(source=SOURCE):
    return GraphScope(ast.parse(source), "pkg.model", "pkg/model.py", ProjectIndex(), None, source)


def test_the_module_walk_is_a_preorder_with_spans_and_parent_links():
    graph = _graph()
    assert [id(n) for n in graph.walk.order] == [id(n) for n in _recursive_preorder(graph.tree)]
    for node in graph.walk.order[1:]:
        assert node in child_nodes(parent_of(node))
    for node in graph.walk.order:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            assert [id(n) for n in graph.walk.subtree(node)] == [id(n) for n in _recursive_preorder(node)]


ALL_SYNTAX = textwrap.dedent('''
    from a.b import c as d, e
    import f.g as h
    x: int = {**y, 1: 2, 3: {**z}}
    del x[1:2:3], x[::]
    async def g(a, /, b=1, *c, d, e=2, **f) -> None:
        global q
        async with a as (b, c), d:
            async for i in b:
                await c
        return [i async for i in d if i if not i]
    def k(*, a, b=3): yield from (yield a)
    assert a, b
    while not a < b <= c:
        a @= -b ** c if d else e
        break
    else:
        pass
    try:
        raise a from b
    except (A, B) as e:
        continue
    except:
        pass
    else:
        f"{a!r:>{b}} {c=}"
    finally:
        lambda *a, b=1, **c: {d: e for d, e in f}
    def n():
        nonlocal z
    s = {a for a in b}, (a for a in b), [*a, b], a[b, c], a.b.c(d)(*e, **f), (a := b)
    class C(D, metaclass=E):
        @dec(a)
        def m(self): ...
''')


def _slow_preorder(root, indexed):
    """What `walk.preorder` returns, from a recursive walk: order, spans, positions, parent links."""
    order = list(_recursive_preorder(root))
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    spans = {node: (i, i + len(list(_recursive_preorder(node)))) for i, node in enumerate(order)
             if node is root or node.__class__ in scopes}
    positions = {kind: [i for i, node in enumerate(order) if i and node.__class__ is kind]
                 for kind in indexed if kind not in scopes}
    parents = {child: node for node in order for child in child_nodes(node)}
    return order, spans, positions, parents


def _fixture_trees():
    """The trees of every syntax form and of the parsable fixtures."""
    trees = [ast.parse(ALL_SYNTAX), ast.parse(SOURCE)]
    for path in sorted(FIXTURES.glob("*.py")):
        try:
            trees.append(ast.parse(path.read_text(encoding="utf-8")))
        except SyntaxError:
            continue  # the fixture of unparsable files
    return trees


def test_the_specialised_walk_is_the_generic_one_and_its_generated_code_up_to_date():
    """`walk_specialised` walks the commonest classes by code of their own, generated by `walk_codegen`: the
    walk must return what a recursive walk finds (every node class noted, or only the default ones; a def as
    root), and the checked-in code must be what `walk_codegen` writes now."""
    from ms_lint.analysis.walk import INDEXED_KINDS, preorder
    from ms_lint.analysis.walk_codegen import SPECIALISED, TARGET, source

    assert TARGET.read_text(encoding="utf-8") == source(), "run `python -m ms_lint.analysis.walk_codegen`"
    every_class = tuple(kind for kind in vars(ast).values() if isinstance(kind, type) and issubclass(kind, ast.AST))
    seen = set()
    trees = _fixture_trees()
    for tree in trees:
        roots = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)))]
        for root, indexed in itertools.product(roots[:3], (every_class, INDEXED_KINDS)):
            parents = {}
            order, spans, positions = preorder(root, parents, indexed)
            slow_order, slow_spans, slow_positions, slow_parents = _slow_preorder(root, indexed)
            assert [id(n) for n in order] == [id(n) for n in slow_order]
            assert spans == slow_spans and positions == slow_positions
            assert parents.keys() == slow_parents.keys()
            assert all(parents[child] is parent for child, parent in slow_parents.items())
            seen.update(node.__class__.__name__ for node in order)
    assert seen >= set(SPECIALISED)


def test_scope_nodes_put_default_values_first_and_leave_nested_scopes_closed():
    graph = _graph()
    helper = next(n for n in graph.walk.order if isinstance(n, ast.FunctionDef) and n.name == "helper")
    found = _scope_nodes(graph, helper)
    arguments = helper.args
    expected = []
    for item in [*arguments.defaults, *[d for d in arguments.kw_defaults if d is not None], *helper.body]:
        stack = [item]
        while stack:  # preorder, not entering nested defs, lambdas and classes
            node = stack.pop()
            expected.append(node)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.extend(reversed(child_nodes(node)))
    assert [id(n) for n in found] == [id(n) for n in expected]
    assert not any(isinstance(n, ast.Constant) and n.value == "ms.Tensor" for n in found)  # return annotation
    assert any(isinstance(n, ast.Lambda) for n in found) and not any(isinstance(n, ast.BinOp) and
                                                                     isinstance(n.left, ast.Name) and
                                                                     n.left.id == "v" for n in found)


def test_a_linted_tree_is_freed_and_the_index_keeps_no_node(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(SOURCE)
    linter = Linter(Settings(select=("ALL",)))
    linter.index.add_file(str(package / "model.py"))
    from ms_lint.source import parse, read

    source = read(str(package / "model.py"))
    tree = parse(source)
    alive = weakref.ref(tree)
    linter.lint_tree(tree, source)
    assert not any(hasattr(node, PARENT) for node in ast.walk(tree))
    del tree
    gc.disable()  # freed by reference counting alone: no cycle is left
    try:
        assert alive() is None
    finally:
        gc.enable()
    summary = linter.index.module("pkg.model").classes["Net"]
    assert summary._node is None  # the index holds facts...
    assert summary.node is not None and summary.node.name == "Net"  # ...and parses the class again on demand


def test_a_linted_file_keeps_its_text_not_its_split_lines(tmp_path):
    (tmp_path / "model.py").write_text(SOURCE)
    result = Linter(Settings(select=("ALL",))).lint_path(str(tmp_path / "model.py"))
    assert result.diagnostics and result.source is not None
    assert result.source._lines is None  # every result of a run keeps its source for the report: not its lines
    assert result.source.lines == SOURCE.split("\n")  # split again when the report asks


def test_releasing_the_last_walk_alive_drops_every_link_and_an_older_walk_keeps_its_own(monkeypatch):
    """`ModuleWalk.release` empties the parent links at once when its walk is the last alive, else deletes its
    own: a walk made before it and not yet released keeps every link."""
    from ms_lint.analysis import walk

    monkeypatch.setattr(walk, "_PARENTS", {})
    monkeypatch.setattr(walk, "_walks_alive", 0)  # (other tests leave walks unreleased)
    first, second = walk.ModuleWalk(ast.parse(SOURCE)), walk.ModuleWalk(ast.parse(ALL_SYNTAX))
    kept = {node: parent_of(node) for node in second.order[1:]}
    for _ in range(2):  # twice: the second release does nothing
        first.release()
        assert walk._PARENTS == kept and walk._walks_alive == 1
    second.release()
    assert walk._PARENTS == {} and walk._walks_alive == 0


def _scanned_function_nodes(subtree):
    """What `ModuleWalk.nodes_of` answers, scanned from the nodes under a scope by the forms it replaces."""
    from ms_lint.analysis.walk import BINDER_KINDS

    loads, first_bound = {}, {}
    for node in subtree:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.setdefault(node.id, []).append(node)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = [node.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
            names = [node.name] if node.name else []
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [(a.asname or a.name).partition(".")[0] for a in node.names]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = node.names
        else:
            names = []
        for name in names:
            first_bound.setdefault(name, node.lineno)
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return SimpleNamespace(
        calls=[n for n in subtree if isinstance(n, ast.Call)],
        nested=[n for n in subtree if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))],
        attribute_loads=[n for n in subtree if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)],
        stores={n.id for n in subtree if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        | {n.name for n in subtree if isinstance(n, defs)},
        bindings=[n for n in subtree if n.__class__ in BINDER_KINDS], loads=loads, first_bound=first_bound)


def test_the_nodes_of_a_scope_read_in_one_pass_are_those_scans_find():
    """`nodes_of` reads a scope's calls, attribute reads, stores, bindings, nested functions and loads in one
    pass over its stretch of the walk, and `first_bound` from the binding nodes it notes: the same as a scan of
    the subtree for each (module, defs, lambdas and classes of the fixtures; a def of another module's tree)."""
    trees = _fixture_trees()
    foreign = next(n for n in ast.walk(ast.parse(SOURCE)) if isinstance(n, ast.FunctionDef))
    checked = 0
    for tree in trees:
        graph = GraphScope(tree, "pkg.model", "pkg/model.py", ProjectIndex(), None, "")
        try:
            for scope in [*graph.walk.scopes(), foreign]:
                found, expected = graph.walk.nodes_of(scope), _scanned_function_nodes(_subtree(graph, scope)[1:])
                for field in ("calls", "nested", "attribute_loads", "bindings"):
                    assert [id(n) for n in getattr(found, field)] == [id(n) for n in getattr(expected, field)]
                assert found.stores == expected.stores and found.first_bound == expected.first_bound
                assert {name: [id(n) for n in reads] for name, reads in found.loads.items()} == \
                    {name: [id(n) for n in reads] for name, reads in expected.loads.items()}
                checked += 1
        finally:
            graph.release()
    assert checked > 500


def _subtree(graph, scope):
    return graph.walk.subtree(scope) if graph.walk.spans(scope) else list(_recursive_preorder(scope))


def _statements_by_every_block_name(body, rows=None):
    """`all_statements` as it was: every block name tried on every statement."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if rows is not None and not isinstance(stmt, ast.match_case):
            index = bisect.bisect_right(rows, stmt.lineno)
            if index == len(rows) or rows[index] > (stmt.end_lineno or stmt.lineno):
                continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(stmt, name, None)
            if isinstance(block, list):
                stack.extend(reversed(block))


def test_all_statements_reads_only_the_block_fields_of_each_statement_class():
    """`all_statements` looks up once per class which block fields a statement has: the statements it yields,
    with and without rows, are those of trying every block name on every statement."""
    from ms_lint.analysis.walk import all_statements

    sources = [ALL_SYNTAX, SOURCE, *(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py")))]
    if hasattr(ast, "Match"):
        sources.append("match x:\n    case 1:\n        if y:\n            z = 1\n    case _:\n        pass\n")
    for text in sources:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue  # the fixture of unparsable files
        lines = text.count("\n") + 1
        for rows in (None, [], [1], list(range(1, lines + 1, 7)), list(range(1, lines + 1))):
            assert [id(s) for s in all_statements(tree.body, rows)] == \
                [id(s) for s in _statements_by_every_block_name(tree.body, rows)]


def test_the_enclosing_function_is_the_first_def_or_lambda_up_the_parent_links():
    """`enclosing_function` reads the parent links itself (`parent_of` inlined): the same answer as climbing
    with `parent_of`, for every node of the fixtures and of a def of another module's tree (links as attributes)."""
    def climbed(node):
        around = parent_of(node)
        while around is not None and not isinstance(around, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            around = parent_of(around)
        return around

    checked = 0
    foreign = next(n for n in ast.walk(ast.parse(ALL_SYNTAX)) if isinstance(n, ast.AsyncFunctionDef))
    for graph, _ in _contexts(ALL_SYNTAX):
        try:
            for node in [*graph.walk.order, *graph.walk.subtree(foreign)]:
                assert enclosing_function(node) is climbed(node)
                checked += 1
        finally:
            graph.release()
    assert checked > 10_000


BASE = "from mindspore import nn\n\n\nclass Base(nn.Cell):\n    def construct(self, x):\n        return x\n"
USER = ("from pkg.zbase import Base\n\n\nclass Net(Base):\n    def construct(self, x):\n"
        "        return self.missing(x)\n")


def _project(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "net.py").write_text(USER)  # linted first: its base class makes the index read zbase.py
    (package / "zbase.py").write_text(BASE)
    return [str(package / "net.py"), str(package / "zbase.py")]


def test_a_file_a_lookup_parsed_before_its_turn_is_not_parsed_again(tmp_path, monkeypatch):
    files = _project(tmp_path)
    parsed = []
    monkeypatch.setattr(engine, "parse", lambda source: parsed.append(source.path) or source_parse(source))
    results = runner.lint_files(Settings(select=("ALL",)), files)
    assert parsed == [files[0]]  # zbase.py: the tree the index parsed for Net's base
    monkeypatch.setattr(KeptTrees, "BUDGET", 0)  # nothing kept: every file parsed by the engine
    again = runner.lint_files(Settings(select=("ALL",)), files)
    assert parsed == [files[0], *files]
    assert [r.diagnostics for r in results] == [r.diagnostics for r in again]
    assert any(d.code == "MSL032" for d in results[0].diagnostics)


def test_a_file_whose_tree_is_kept_is_linted_next_and_the_results_keep_their_order(tmp_path, monkeypatch):
    files = _project(tmp_path)
    others = []
    for number in range(3):
        (tmp_path / "pkg" / f"m{number}.py").write_text("x = 1\n")
        others.append(str(tmp_path / "pkg" / f"m{number}.py"))
    order = [files[0], *others, files[1]]  # zbase.py last: Net's lookup parses it first
    linted = []
    lint = runner._Worker.lint
    monkeypatch.setattr(runner._Worker, "lint", lambda self, path: linted.append(path) or lint(self, path))
    results = runner.lint_files(Settings(select=("ALL",)), order)
    assert linted == [files[0], files[1], *others]  # before later lookups could push it out of the budget
    assert [result.path for result in results] == order


def test_a_kept_tree_is_not_used_once_its_file_changed(tmp_path):
    files = _project(tmp_path)
    linter = Linter(Settings(select=("MSL030",)))
    for path in files:
        linter.index.add_file(path)
    linter.lint_path(files[0])
    assert linter.index.kept.paths()  # zbase.py, read for Net's base
    pathlib.Path(files[1]).write_text(BASE + "\n\nclass Other(nn.Cell):\n    def __init__(self):\n"
                                             "        self.layers = [nn.Dense(1, 1)]\n")
    assert [d.code for d in linter.lint_path(files[1]).diagnostics] == ["MSL030"]
    assert not linter.index.kept.paths()


def test_finding_a_module_by_the_entries_of_its_root_finds_what_the_file_system_does(tmp_path):
    for path in ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/mod.py", "pkg/plain.py", "top.py",
                 "namespace/inner/script.py", "namespace/inner/__init__.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    index = ProjectIndex()
    index.add_file(str(tmp_path / "top.py"))
    names = ["pkg", "pkg.sub", "pkg.sub.mod", "pkg.plain", "pkg.missing", "top", "top.x", "namespace",
             "namespace.inner", "namespace.inner.script", "mindspore", "mindspore.ops", "pkg.sub.mod.attr"]
    for name in names:
        relative = name.replace(".", "/")
        expected = next((str(tmp_path / c) for c in (f"{relative}.py", f"{relative}/__init__.py")
                         if (tmp_path / c).is_file()), None)
        assert index.find(name) == expected, name


def test_package_directories_are_remembered_only_while_a_batch_run_lints(tmp_path):
    (tmp_path / "pkg").mkdir()
    path = str(tmp_path / "pkg" / "m.py")
    assert module_name(path) == "m"
    with remembered_packages():
        assert module_name(path) == "m"
        (tmp_path / "pkg" / "__init__.py").write_text("")
        assert module_name(path) == "m" and package_root(path) == str(tmp_path / "pkg")  # asked once per run
    assert module_name(path) == "pkg.m" and package_root(path) == str(tmp_path)  # an editor sees the new package


def test_the_training_pre_filter_is_the_regex_it_replaces():
    from ms_lint.analysis.training import _FULL, _casts_or_trains

    for text in ("Model(", "net = Model(net)", "xModel(", "_Model(", "BaseModel( Model(", "éModel(", "1Model(",
                 ".Model(", "to_float(", "amp_level", "TrainOneStepCell", "model(", ""):
        assert _casts_or_trains(text) == (_FULL.search(text) is not None), text


def _flags_node_by_node(graph, root, compiled, in_cell):
    """(in a Cell class, in graph code) of each node under `root`, found by climbing its parents: the innermost
    def or lambda reached through its body decides graph code (a def's arguments, decorators and return annotation
    run where the def statement runs), the innermost class decides Cell; at `root`, the flags given (a root def's
    own arguments and decorators are outside it)."""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    flags = {}
    start, end = graph.walk.span(root)
    for index in range(start, end):
        node = graph.walk.order[index]
        function_flag = class_flag = None
        if isinstance(node, functions):
            function_flag = node in graph.compiled
        elif isinstance(node, ast.ClassDef):
            class_flag = node in graph.cells
        child, parent = node, parent_of(node)
        while (function_flag is None or class_flag is None) and child is not root and parent is not None:
            if isinstance(parent, functions) and function_flag is None and _in_body(parent, child):
                function_flag = parent in graph.compiled
            if isinstance(parent, ast.ClassDef) and class_flag is None:
                class_flag = parent in graph.cells
            child, parent = parent, parent_of(parent)
        root_compiled = compiled if not isinstance(root, functions) else False
        flags[index] = (in_cell if class_flag is None else class_flag,
                        root_compiled if function_flag is None else function_flag)
    return flags


def _in_body(function, child) -> bool:
    body = function.body if isinstance(function.body, list) else [function.body]
    return any(child is statement for statement in body)


def test_the_engine_reads_the_walk_in_stretches_of_equal_flags():
    sources = [SOURCE, *(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py")))]
    compared = 0
    for source in sources:
        try:
            graph = _graph(source)
        except SyntaxError:
            continue  # the fixture of unparsable files
        roots = [(graph.tree, False, False), *((c.node, False, True) for c in graph.cells.values()),
                 *((f, True, graph.cell_of(f) is not None) for f in graph.compiled)]
        for root, compiled, in_cell in roots:
            by_runs = {}
            for start, end, run_in_cell, run_compiled in runs_of(graph, graph.walk, root, compiled, in_cell):
                by_runs.update(dict.fromkeys(range(start, end), (run_in_cell, run_compiled)))
            assert by_runs == _flags_node_by_node(graph, root, compiled, in_cell)
            compared += len(by_runs)
    assert compared > 20_000


def test_nodes_in_walk_order_are_those_of_a_breadth_first_walk():
    kinds = (ast.Call, ast.Assign, ast.AugAssign)
    compared = 0
    for source in [SOURCE, *(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py")))]:
        try:
            graph = _graph(source)
        except SyntaxError:
            continue  # the fixture of unparsable files
        for node in graph.walk.order:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)):
                walked = [n for n in ast.walk(node) if isinstance(n, kinds)]
                assert [id(n) for n in graph.walk.in_walk_order(node, kinds)] == [id(n) for n in walked]
                compared += len(walked)
    assert compared > 5_000


def test_the_light_walk_is_ast_walk_without_the_singletons():
    """`source.walk` (MSL054's `_dependence`, whose first match in walk order names the value): the nodes of
    `ast.walk` in the same order, less the expression-context and operator singletons no rule looks at."""
    singletons = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    compared = 0
    for source in [SOURCE, *(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py")))]:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # the fixture of unparsable files
        for node in ast.walk(tree):
            if isinstance(node, (ast.expr, ast.stmt, ast.Module)):
                expected = [n for n in ast.walk(node) if not isinstance(n, singletons)]
                assert [id(n) for n in source_walk(node)] == [id(n) for n in expected]
                compared += 1
    assert compared > 5_000


def test_scope_parts_are_what_the_scope_nodes_hold():
    source = SOURCE + textwrap.dedent('''
        @decorate(lambda: call_in_decorator())
        def factory(kind, *, depth=lambda: 1, **options) -> build(annotation):
            import json
            for name, cell in net.cells_and_names():
                total = [item for item in name]
            def nested():
                return inner_call()
            if (found := json.loads(kind)):
                return Net()
    ''')
    graph = _graph(source)
    roots = [graph.tree] + [n for n in graph.walk.order if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for root in roots:
        nodes = _scope_nodes(graph, root)
        parts = _sort_out(graph, _scope_ranges(graph, root))
        assert parts.steps == [n for n in nodes if isinstance(n, (ast.Call, ast.Return))]
        assert parts.bindings == [n for n in nodes if isinstance(n, _BINDING_NODES)]
        assert parts.definitions == [n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                        ast.ClassDef))]
        assert parts.imports == any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes)
    factory = roots[-2]
    assert factory.name == "factory" and not any(isinstance(n, ast.Call) and getattr(n.func, "id", "") in (
        "decorate", "build", "call_in_decorator", "inner_call") for n in _scope_nodes(graph, factory))


def _optimal_string_alignment(a, b):
    previous2, previous = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if previous2 is not None and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


_SHORT_NAMES = st.text(alphabet="ab_c", max_size=9)
_BOUNDED = settings(max_examples=400, deadline=None, derandomize=True, database=None)


@_BOUNDED
@given(_SHORT_NAMES, _SHORT_NAMES, st.sampled_from([1, 2]))
def test_the_banded_edit_distance_is_exact_up_to_its_limit(a, b, limit):
    assert undefined_attribute._distance(a, b, limit) == min(_optimal_string_alignment(a, b), limit + 1)


_SNIPPETS = st.lists(st.sampled_from(["x", "xx", "a", "self", ".", " ", "\n", "=", "==", "+=", "_", "é", '"', "'"]),
                     max_size=20).map("".join)


@_BOUNDED
@given(_SNIPPETS, st.sampled_from(["x", "xx", "x_"]), st.sampled_from(["self", "a"]))
def test_an_attribute_named_elsewhere_is_what_the_full_pattern_finds(text, name, self_name):
    assigned = rf"{re.escape(name)}\s*(?:=(?!=)|[-+*/|&]=)"
    expected = f'"{name}"' in text or f"'{name}'" in text or any(
        match.group(1) != self_name for match in re.finditer(rf"(\w+)\s*\.\s*{assigned}", text))
    ctx = SimpleNamespace(source=SimpleNamespace(text=text))
    assert undefined_attribute._named_elsewhere(ctx, name, self_name) == expected


@_BOUNDED
@given(st.lists(st.sampled_from(["x", " ", "\n", "\r\n", "\r", "\x0c", "abstractmethod", "NotImplementedError"]),
                max_size=20).map("".join))
def test_abstract_marker_rows_are_the_rows_of_the_source_lines(text):
    ctx = SimpleNamespace(source=SourceFile(path="model.py", text=text, module_name="model"),
                          memo=lambda key, compute: compute())
    expected = [row for row, line in enumerate(ctx.source.lines, 1)
                if "abstractmethod" in line or "NotImplementedError" in line]
    assert undefined_attribute._abstract_marker_rows(ctx) == expected


def test_positions_of_indexed_scope_and_other_kinds_are_those_of_a_scan():
    kinds = (ast.Call, ast.keyword, ast.FunctionDef, ast.ClassDef, ast.Lambda, ast.Name, ast.Subscript)
    source = SOURCE + "\nf(lambda: g(k=1)[0])\n"
    graph = GraphScope(ast.parse(source), "pkg.model", "pkg/model.py", ProjectIndex(), None, source,
                       indexed=(ast.keyword,))
    for chosen in [kinds[:2], kinds[2:5], kinds[5:], kinds]:
        scanned = [i for i, node in enumerate(graph.walk.order) if isinstance(node, chosen)]
        assert graph.walk.positions_of(chosen) == scanned


CALL_NAME_SOURCE = textwrap.dedent('''
    import mindspore as ms
    from mindspore import nn, ops
    from mindspore import Parameter as P
    from mindspore.nn import Conv2d as C, Dropout as D
    from numpy import zeros as z

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = C(3, 8, 3, 1, 1)
            self.drop = D(0.1)
            self.w = P(ms.Tensor([1.0]))

        def construct(self, x):
            from mindspore.ops import assign as put
            put(self.w[0], x)
            y = z((2, 2))
            keep = x.nonzero()
            f = print
            f(x)
            [ops.relu][0](x)
            (lambda v: v)(x)
            n = len(self.cells ())  # a call MSL010 looks for, in a module without its needle (no space)
            return self.conv(x)[keep] + y
''')


def _contexts(extra_source: str):
    """(graph, rule context) of `extra_source`, SOURCE and every parsable fixture."""
    for source in [extra_source, SOURCE, *(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py")))]:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # the fixture of unparsable files
        graph = GraphScope(tree, "pkg.model", "pkg/model.py", ProjectIndex(), None, source)
        yield graph, Context(SourceFile("pkg/model.py", source, module_name="pkg.model"), tree, graph, Settings())


def test_rules_skip_only_calls_their_call_names_rule_out():
    """`Rule.call_names` must be an exact necessary condition: on every call of the fixtures (in and out of graph
    code, aliased imports, calls of calls), a rule's `visit_call` finds nothing where the engine would skip it."""
    rules = [rule() for rule in all_rules() if rule.call_names is not None and hasattr(rule, "visit_call")]
    assert len(rules) >= 20
    skipped = 0
    for graph, ctx in _contexts(CALL_NAME_SOURCE):
        for call in graph.walk.of_kind(graph.tree, ast.Call):
            names = graph.names.names_called(call.func)
            for rule in rules:
                if rule.call_names.isdisjoint(names):
                    skipped += 1
                    assert not list(rule.visit_call(call, ctx) or ()), (rule.code, ast.unparse(call))
    assert skipped > 10_000


def test_the_engine_finds_with_call_names_what_it_finds_without(monkeypatch):
    sources = [CALL_NAME_SOURCE, *(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py")))]

    def lint_all():
        linter = Linter(Settings(select=("ALL",)))
        return [linter.lint_source(SourceFile(f"pkg/m{i}.py", s, module_name=f"pkg.m{i}")).diagnostics
                for i, s in enumerate(sources)]

    with_names = lint_all()
    for rule in all_rules():
        monkeypatch.setattr(rule, "call_names", None)
    assert lint_all() == with_names
    assert sum(map(len, with_names)) > 300


MASK_SOURCE = textwrap.dedent('''
    import mindspore as ms
    from mindspore import nn, ops

    class Net(nn.Cell):
        def construct(self, x, y, i):
            m = x > 0
            n: ms.Tensor = ~m
            a, b = x > 1, y
            c = ops.logical_and(m, n)
            d = m
            d2 = d
            if (e := x < 2).any():
                pass
            f = x
            f += 1
            for g in [m, n]:
                pass
            h = [v > 0 for v in (x, y)]
            return x[m] + x[n] + x[a] + x[b] + x[c] + x[d2] + x[e] + x[f] + x[g] + x[h] + x[i] + x[y]
''')


def test_a_name_is_a_mask_only_where_a_binding_gives_it_a_mask_form():
    """MSL043 skips the tensor analysis of `x[name]` when no binding of the name has a form `_is_mask` accepts."""
    from ms_lint.rules import dynamic_shape_op

    checked = masks = 0
    for graph, ctx in _contexts(MASK_SOURCE):
        for function in graph.compiled:
            for node in graph.walk.subtree(function):
                if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name):
                    is_mask = dynamic_shape_op._is_mask(ctx.tensors(node), node.slice)
                    masks += is_mask
                    checked += 1
                    assert not is_mask or dynamic_shape_op._may_name_mask(ctx, node, node.slice.id), ast.unparse(node)
    assert checked >= 15 and masks >= 6, (checked, masks)


SEED_SOURCE = textwrap.dedent('''
    import mindspore as ms
    import numpy as np
    import pkg.util as u
    from mindspore import nn, ops
    from pkg import util
    from pkg.util import setup, Builder
    from thirdparty import seed_everything

    def helper():
        return 1

    def main(cells):
        from pkg import util as local_util
        setup()
        util.setup()
        u.setup()
        local_util.setup()
        helper()
        Builder()
        np.random.seed(0)
        ms.set_seed(1)
        seed_everything(2)
        ops.relu(cells)
        len(cells)
        cells.append(nn.Dense(1, 1))
        make()()
        [setup][0]()
''')


def test_a_call_outside_distributed_modules_is_skipped_only_if_it_is_neither_a_seed_nor_a_project_call(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "util.py").write_text("import mindspore as ms\n\n\ndef setup():\n    ms.set_seed(1)\n")
    sources = [SEED_SOURCE, SOURCE, *(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py")))]
    kinds = collections.Counter()
    # a module of the package, and one linted from memory (its directory is no entry of a root)
    modules = [(str(package / "model.py"), "pkg.model"), (str(tmp_path / "memory" / "model.py"), "memory.model")]
    for (path, module), text in itertools.product(modules, sources):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        index = ProjectIndex()
        index.add_file(path)
        graph = GraphScope(tree, module, path, index, None, text)
        seeds = ScriptSeeds(Context(SourceFile(path, text, module_name=module), tree, graph, Settings()))
        for call, function in graph.walk.with_enclosing_def(ast.Call):
            imports = graph.imports if function is None else seeds._function(function)[2]
            qualname = imports.qualname(call.func)
            kind = seeds._kind(call, qualname, (qualname or (spelled_name(call.func) or "")).rpartition(".")[2])[0]
            skipped = "seed" not in (spelled_name(call.func) or "").lower() and not seeds._may_name_project(
                call.func, imports)
            kinds[kind, skipped] += 1
            assert not (skipped and kind in ("seed", "call")), ast.unparse(call)
    assert kinds["call", False] >= 6 and kinds["seed", False] >= 3 and kinds[None, True] > 100


def test_the_sweep_outside_distributed_modules_gathers_what_the_call_by_call_one_does(tmp_path):
    """`_sweep_seeds_and_project_calls` finds the def around a call only for the calls it keeps and resolves a
    first name under the module's imports unless a def imports it: the facts `call` gives for every call."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "util.py").write_text("import mindspore as ms\n\n\ndef setup():\n    ms.set_seed(1)\n")
    local = textwrap.dedent('''
        import numpy as np
        from pkg import util
        def f():
            import numpy as util
            util.setup()
            def g():
                util.setup(); np.random.seed(0)
            return lambda: util.setup()
        @np.vectorize
        def h(x=util.setup):
            from pkg import util as np
            np.setup()
    ''')
    sources = [local, SEED_SOURCE, SOURCE, *(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py")))]
    compared = 0
    for text in sources:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        path, module = str(package / "model.py"), "pkg.model"
        found = []
        for sweep in (True, False):
            index = ProjectIndex()
            index.add_file(path)
            graph = GraphScope(tree, module, path, index, None, text)
            seeds = ScriptSeeds(Context(SourceFile(path, text, module_name=module), tree, graph, Settings()))
            seeds.may_be_distributed = False
            if sweep:
                seeds._sweep_seeds_and_project_calls()
            else:
                for call, function in graph.walk.with_enclosing_def(ast.Call):
                    seeds.call(call, function)
            found.append(seeds._facts())
        assert found[0] == found[1]
        compared += "functions" in found[0]
    assert compared >= 3


def test_a_scope_spells_a_rank_or_random_source_where_its_text_does():
    """MSL054 finds the rows holding a needle once per module (`_needle_rows`) and searches a node's text only
    when a needle sits on its first or last row alone: the same answer as searching every function's text, with
    every needle (`urandom` too)."""
    from ms_lint.rules import rank_dependent_seed as seed

    needles = ("rank", "RANK", "DEVICE_ID", "device_id", "random", "time.", "time(", "perf_counter", "monotonic",
               "getpid", "urandom", "uuid", "secrets", "now(")

    extra = textwrap.dedent('''
        import random
        f = lambda: 1; g = lambda: random.random()
        def h(x):
            return x  # rank
        def k(x): return x
        def rank_of(x, n=random.seed(0)):
            y = lambda: x; t = time.time()
            return y
        SEED = 3
        _drawn = random.randint(0, 9)
        def reads_global():
            return _drawn
        r = random.random(); h = lambda: (
            1)
        g = (lambda: 2
             ); t = time.time()
        def spans(x):
            a = x

            return os.urandom(a)
    ''')

    def searched(ctx, scope) -> bool:  # the form it replaces: every function's text searched
        text = ctx.source.text if scope is ctx.tree else ctx.text(scope)
        if any(needle in text for needle in needles):
            return True
        dependent = frozenset(
            target.id for statement in ctx.tree.body if isinstance(statement, ast.Assign)
            and any(needle in ctx.text(statement.value) for needle in needles)
            for target in statement.targets if isinstance(target, ast.Name))
        return bool(dependent) and any(name in dependent for name in ctx.walk.nodes_of(scope).loads)

    checked = 0
    contexts = itertools.chain(_contexts(extra), _contexts(extra.replace("\n", "\r\n")),
                               _contexts(extra.replace("SEED = 3\n", "SEED = 3\r")),  # CRLF, a lone CR
                               _contexts(extra.rstrip("\n")))  # a needle on a last line without its LF
    for graph, ctx in contexts:
        for scope in [ctx.tree, *graph.walk.scopes()]:
            if scope is not ctx.tree and scope.__class__ not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
                continue
            assert seed._spells_dependence(ctx, scope) == searched(ctx, scope)
            checked += 1
        for node in ctx.walk.order:
            if isinstance(node, (ast.expr, ast.stmt)):
                assert seed._holds_needle(ctx, node) == any(needle in ctx.text(node) for needle in needles)
    assert checked > 100


def test_def_time_calls_are_the_calls_of_the_decorators_defaults_and_annotations():
    """`GraphScope._def_time_calls` reads the calls of a def's span outside its body: the calls a walk of its
    decorators, default values and annotations finds (`_def_time_nodes`); and `_members_of` reads a method's
    assignments in the order of `ast.walk`."""
    from ms_lint.analysis.graph import _def_time_nodes

    extra = textwrap.dedent('''
        @deco(make())
        def f(x: g() = h(), *a: k(), y=lambda z=m(): n(), **kw: p()) -> q():
            @inner(r())
            def nested(v=s()):
                return t()
            return u(lambda w=v(): w())

        class C:
            def __init__(self):
                self.a = A()
                if x:
                    self.a = B()
                    self.b = [C() for _ in range(2)]
    ''')
    checked = 0
    for graph, _ in _contexts(extra):
        for function in graph.walk.scopes():
            if function.__class__ not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
                continue
            calls = {id(call) for call in graph.walk.nodes_of(function).calls}
            expected = {node for node in _def_time_nodes(function)} & calls
            assert graph._def_time_calls(function) & calls == expected
            assert [n for n in ast.walk(function) if isinstance(n, ast.Assign)] == \
                graph.walk.in_walk_order(function, (ast.Assign,))
            checked += bool(expected)
    assert checked > 5


def test_own_loads_skip_nested_scopes_by_their_spans():
    """MSL027 reads a function's own loads from its stretch of the walk, nested scopes skipped by their spans:
    the names the set of nested nodes it replaces lets through, in the same order."""
    from ms_lint.rules import undefined_name_in_graph as undefined

    def by_set(ctx, function):  # the form it replaces
        nested = [node for node in ctx.walk.subtree(function)[1:] if isinstance(node, undefined._SCOPES)]
        inside = {id(sub) for scope in nested for sub in ctx.walk.subtree(scope)} if nested else set()
        found = [node for node in ctx.walk.subtree(function)
                 if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in inside]
        for scope in nested:
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                for default in (*scope.args.defaults, *(d for d in scope.args.kw_defaults if d is not None)):
                    found += [n for n in ast.walk(default) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        return found

    extra = textwrap.dedent('''
        def f(a, b=c):
            x = a
            def g(y=x, *, z=w):
                class K:
                    q = lambda r=s: t
                return y + u
            h = lambda m=n: m + o
            return g(x) + p
    ''')
    for graph, ctx in _contexts(extra):
        for function in graph.walk.scopes():
            if function.__class__ in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
                assert list(undefined._own_loads(ctx, function)) == by_set(ctx, function)


@_BOUNDED
@given(st.lists(st.sampled_from(["x", " ", "\n", "\r\n", "\r", "setattr(", "exec(", "'a'", '"b_1"', "é"]),
                max_size=24).map(lambda parts: "".join(parts).encode("utf-8")))
def test_the_lines_holding_a_needle_are_those_of_splitlines(data):
    """`names_set_outside` reads the lines that call `setattr` or `exec` from the needles' occurrences: the names
    quoted there are those of the lines `bytes.splitlines` gives."""
    from ms_lint.analysis.project import _QUOTED_NAME
    from ms_lint.source import lines_holding

    expected = {name for line in data.splitlines() if b"setattr(" in line or b"exec(" in line
                for name in _QUOTED_NAME.findall(line)}
    assert {name for line in lines_holding(data, (b"setattr(", b"exec(")) for name in _QUOTED_NAME.findall(line)} \
        == expected


@_BOUNDED
@given(st.lists(st.sampled_from(["x = 1", "  # noqa: MSL001", "# NoQA: MSL002, MSL003", "# nOqA", "#noqa:MSL004",
                                 "'# noqa: MSL005'", "\n", "\r\n", " ", "\u212a", "\u0131", "é", "# flake8: noqa"]),
                max_size=12).map("".join))
def test_noqa_comments_are_found_only_where_the_lowered_text_spells_noqa(text):
    """MSL098 asks about every module; `noqa_comments` returns at once when the lowered text (kept from
    `may_skip_file`) does not spell `noqa`: the comments of the full search."""
    from ms_lint import suppression

    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None

    def searched():  # the form it replaces: every line searched
        found = []
        for row, column, comment, _ in suppression._marked_comments(text, tree):
            match = suppression.NOQA.search(comment)
            if match and match.group("codes") and not suppression._FLAKE8_FILE.search(comment):
                codes = [c.upper() for c in re.split(r"[\s,]+", match.group("codes")) if c]
                found.append((row, column + match.start(), column + match.end(), codes))
        return found

    suppression.may_skip_file(text)  # as the engine does first
    assert suppression.noqa_comments(text, tree) == searched()
    assert suppression.noqa_comments(text + "", tree) == searched()


LOCALS_SOURCE = textwrap.dedent('''
    import numpy as np
    from mindspore import nn, ops, Tensor
    import mindspore as ms

    @ms.jit
    def reads(x):
        y = nn.Dense(2, 2)(x) + ops.ones((2,)) + Tensor(1)
        return np.zeros(3), ms.float32, len(y)

    def stores(x, nn=None, *ops, **kw):
        np = x; Tensor: int = 1; ms += 1
        for len in x: pass
        return [abs for abs in x], (range := 2)

    def nested(x):
        def nn(y):
            return ops.add(y, 1)
        class Tensor:
            pass
        ms = lambda ops=1: ops
        return nn, Tensor, ms

    def imported(x):
        import numpy as nn
        from mindspore import ops as Tensor
        ms = nn.add(x)
        return Tensor.add(x), ms.float32, np.sum(x)

    def shadowed(x):
        global np
        np = 1
        with open(x) as ms, open(x) as (ops, Tensor):
            del nn
        return print(x), isinstance(x, int)
''')


def test_a_name_is_local_where_the_function_reads_it_among_its_locals():
    """`Names.is_local` reads a function for its locals only for a name no import in scope binds: the answer of
    `local_names`, for every name of every function of the fixtures; and `qualname` resolves every name and
    attribute as it did with the function's locals."""
    checked = 0
    for source in (LOCALS_SOURCE, SOURCE):
        for (graph, _), (exact, _) in zip(_contexts(source), _contexts(source)):
            names = sorted({n.id for n in graph.walk.order if isinstance(n, ast.Name)} | set(graph.imports.names))
            pairs = [(f, g) for f, g in zip(graph.walk.scopes(), exact.walk.scopes())
                     if f.__class__ in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)]
            for function, same in pairs:
                for name in names:
                    assert graph.names.is_local(function, name) == (name in exact.names.local_names(same))
                    checked += 1
                for node, twin in zip(graph.walk.subtree(function), exact.walk.subtree(same)):
                    if isinstance(node, (ast.Name, ast.Attribute)):
                        around = enclosing_function(twin)
                        expected = exact.names.imports_of(around).qualname(twin, exact.names.local_names(around))
                        assert graph.names.qualname(node) == expected, ast.unparse(node)
    assert checked > 10_000


TRAINING_SOURCE = textwrap.dedent('''
    import mindspore as ms
    from mindspore import nn, ops
    from mindspore.ops import Sort as sorter
    from .blocks import Block

    class Head(nn.Cell):
        def __init__(self, width):
            super().__init__()
            self.conv = nn.Conv3d(1, 2, 3)
            self.block = Block(width)
            self.sort = ops.Sort()
            self.other = sorter()
            self.norm = ms.nn.LayerNorm((width,))
            self.helper = ops.matmul
            self._build()

        def _build(self):
            self.extra = nn.Dense(2, 2)

        @ms.jit
        def construct(self, x):
            y, _ = ops.sort(ops.matmul(x, x))
            return ops.topk(y, 2), x.sort(), self.conv(y).view(-1), ops.TopK()(y, 2)

    def make():
        return Head(3)
''')


def _training_facts(facts) -> dict:
    return {**facts.facts(), "casts": facts.casts, "calls": facts.calls, "fp16_ops": facts.fp16_ops}


def test_training_facts_resolve_only_the_calls_that_can_matter(monkeypatch):
    """In modules that neither cast nor train, the training facts resolve an attribute call only when its name is
    capitalised in a Cell's `__init__` or is a float16 operator's (`_may_matter`): the facts of resolving every
    call, for every module of the fixtures and for a Cell whose `__init__` builds layers and uses float16 ops."""
    from ms_lint.analysis.training import TrainingFacts, _casts_or_trains

    skipped = 0
    original = TrainingFacts._may_matter
    for source in (TRAINING_SOURCE, TRAINING_SOURCE + "\nModel(make())\n"):
        for (_, ctx), (_, same) in zip(_contexts(source), _contexts(source)):
            if not (ctx.graph.cells or _casts_or_trains(ctx.source.text)):
                continue
            full = _casts_or_trains(ctx.source.text)
            with monkeypatch.context() as patched:
                patched.setattr(TrainingFacts, "_may_matter", lambda *_: True)
                expected = _training_facts(TrainingFacts(same, full))
            facts = TrainingFacts(ctx, full)
            assert _training_facts(facts) == expected
            skipped += sum(not original(facts, call.func, scope) for scope in facts.active
                           for call in scope.parts.steps if isinstance(call, ast.Call))
    assert skipped > 20


def test_layer_signatures_ask_about_rebinding_and_inspection_only_for_calls_with_a_finding():
    """MSL067 asks whether a module rebinds a call's name or inspects its callee only of calls with a finding (its
    scan of the module's calls ran for every call of a package): the findings of asking first, on every call of
    the fixtures (MSL067's: `import torch.nn as nn` between MindSpore's, `inspect.signature(ops.split)`)."""
    from ms_lint.rules import layer_signature_mismatch as msl067

    rule = msl067.LayerSignatureMismatch()

    def asked_first(ctx, call):  # the form it replaces
        func = call.func
        last = msl067.spelled_name(func) or ""
        if last not in msl067._SIGNATURE_NAMES and last not in msl067._TORCH_NAMES \
                and not (isinstance(func, ast.Attribute) and (last[:1].isupper() or msl067._on_a_package(ctx, func))) \
                or not msl067._may_be_imported(ctx, func):
            return []
        qualname = ctx.names.qualname(func) or ""
        package, _, name = qualname.rpartition(".")
        if package not in msl067._PACKAGES or msl067._rebound_before(ctx, call) or qualname in msl067._adapted(ctx) \
                or qualname in ctx.compile_context.replaced_api or ctx.graph.version_guarded(call):
            return []
        return list(rule._findings(ctx, call, qualname, package, name))

    found = 0
    for graph, ctx in _contexts(CALL_NAME_SOURCE):
        for call in graph.walk.of_kind(graph.tree, ast.Call):
            expected = [(d.row, d.column, d.message) for d in asked_first(ctx, call)]
            assert [(d.row, d.column, d.message) for d in rule.visit_call(call, ctx) or ()] == expected
            found += len(expected)
    assert found > 20


def test_undefined_names_scan_the_module_only_for_names_not_bound_nearby():
    """MSL027 scans the whole module for its names (`_defined_names`) only when graph code reads a name that neither
    the function nor a module-level import, def or class binds: the findings of scanning first, on every function
    of the fixtures and of modules whose names cannot all be seen (`globals()`, a star import)."""
    from ms_lint.rules import undefined_name_in_graph as undefined

    rule = undefined.UndefinedNameInGraph()
    extra = textwrap.dedent('''
        import mindspore as ms
        from mindspore import nn, ops
        SCALE = 2

        A, (B, *C) = 1, (2, 3)
        for I in range(2):
            D = [E for E in range(I)]

        def helper(v):
            global G
            G = v
            return v

        class K:
            Z = 1

        class Net(nn.Cell):
            def construct(self, x, *rest, key=None):
                y = ops.relu(x) * SCALE + helper(x) + A + B + C + D + E + G + I + Z
                for item in rest:
                    y = y + item + missing_name
                def inner(z=y):
                    return z + typo
                return inner() + ms.Tensor(1) + len(rest)
    ''')

    def scanned_first(ctx, function):  # the form it replaces
        defined = undefined._defined_names(ctx.walk.subtree(ctx.tree))
        if not ctx.graph.is_compiled(function) or defined is None:
            return []
        # in scope: the module's names, those of the defs around, the function's own
        scoped = undefined._scoped_names(ctx, function)
        if scoped is None:
            return [name.id for name in undefined._own_loads(ctx, function)
                    if name.id not in defined and name.id not in undefined._KNOWN
                    and not undefined._in_annotation(name, function)]
        in_scope = undefined._module_names(ctx) | scoped
        return [name.id for name in undefined._own_loads(ctx, function)
                if (name.id not in defined or name.id not in in_scope) and name.id not in undefined._KNOWN
                and not undefined._in_annotation(name, function)]

    found = 0
    for source in (extra, extra + "\nfrom pkg import *\n", extra + "\nglobals()['typo'] = 1\n"):
        for graph, ctx in _contexts(source):
            for function in graph.walk.scopes():
                if function.__class__ in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
                    defined = undefined._defined_names(graph.walk.order)
                    assert defined is None or undefined._module_stores(ctx) <= defined
                    expected = scanned_first(ctx, function)
                    reported = [d.message.split("`")[1] for d in rule._check(function, ctx)
                                if "in the bases of the Cell" not in d.message  # (`_check_bases`)
                                and "the Cell fails when this line runs" not in d.message]  # (`_check_host_methods`)
                    assert reported == expected
                    found += len(expected)
    assert found > 10


def _name_loads(function):
    """A `_Flow`'s `loads`: the function's reads by name."""
    loads = collections.defaultdict(list)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads[node.id].append(node)
    return lambda: loads


def test_the_flow_of_possibly_unbound_takes_simple_statements_as_its_statement_step_does():
    """`_Flow.block` handles simple statements itself, adding their names in place: the definite-assignment walk
    where every statement goes through `_Flow.statement` (the form it replaces) gives the same names, ends and
    reports, with and without `:=` looked for, on every def of the fixtures."""
    from ms_lint.rules import possibly_unbound_in_graph as unbound

    class StatementByStatement(unbound._Flow):
        def block(self, statements, defined):
            for stmt in statements:
                defined, ends = self.statement(stmt, defined)
                if ends:
                    return defined, True
            return defined, False

    compared = 0
    for tree in _fixture_trees():
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            reads = _name_loads(function)
            for walrus in (False, True):
                flows = [kind(function, reads, walrus) for kind in (unbound._Flow, StatementByStatement)]
                fast, slow = (flow.block(function.body, set(flow.parameters)) for flow in flows)
                assert fast == slow and flows[0].reports == flows[1].reports and flows[0].partial == flows[1].partial
                compared += bool(flows[0].reports)
    assert compared > 5


def test_summaries_skip_only_assignments_and_calls_that_bind_or_register_nothing():
    """`summarize_class` passes over an assignment whose lone target cannot bind `self.<attr>`
    (`_may_bind_self_attribute`) and a call whose name is not one of `REGISTRATION_NAMES`: on every def of the
    fixtures, those bind no attribute of the first parameter, unpack nothing, and register nothing. And the
    summaries built from a scope's indexed nodes are those built from a walk of every node."""
    from ms_lint.analysis import project, registrations, tensor_attributes

    skipped = 0
    for tree in _fixture_trees():
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not function.args.args:
                continue
            self_name = function.args.args[0].arg
            for node in ast.walk(function):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if len(targets) == 1 and not project._may_bind_self_attribute(targets[0], self_name):
                        skipped += 1
                        assert tensor_attributes.unpacked_positions(node, self_name) is None
                        assert not any(isinstance(t, ast.Attribute) and registrations.is_name(t.value, self_name)
                                       for t in registrations.assigned_targets(node))
                elif isinstance(node, ast.Call):
                    func = node.func
                    if getattr(func, "id", getattr(func, "attr", None)) not in registrations.REGISTRATION_NAMES:
                        attributes, parameters = set(), set()
                        assert registrations.note_registering_call(node, self_name, attributes, parameters) is False
                        assert not attributes and not parameters
    assert skipped > 50
    for tree in _fixture_trees():
        scope = GraphScope(tree, "m", "m.py", source_text=ast.unparse(tree))
        try:
            walked = project.summarize(tree, "m", "m.py")
            assert scope.summary.classes == walked.classes and scope.summary.functions == walked.functions
        finally:
            scope.release()
