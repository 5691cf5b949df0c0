"""What the eleventh round's shortcuts rely on (docs/performance.md): each gives what the form it replaces gave
(discovery and the project scans, trees the scans parsed, the walk's calls, name resolution, needle searches)."""
from __future__ import annotations

import ast
import os
import textwrap
from dataclasses import replace

from ms_lint import engine, files
from ms_lint.analysis import compile_context, module_reach, per_project, run_mode
from ms_lint.settings import Settings


def _tree(tmp_path):
    """Files, a linked file, a linked directory and a file reached twice: what real paths deduplicate."""
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for name in ("pkg/a.py", "pkg/sub/b.py", "pkg/sub/c.pyi", "pkg/notes.txt"):
        (tmp_path / name).write_text("x = 1\n")
    os.symlink(tmp_path / "pkg" / "a.py", tmp_path / "pkg" / "link.py")
    os.symlink(tmp_path / "pkg" / "sub", tmp_path / "pkg" / "linked_sub")
    (tmp_path / "other").mkdir()
    os.symlink(tmp_path / "pkg" / "sub" / "b.py", tmp_path / "other" / "b_again.py")
    return tmp_path


def test_discovery_keys_are_the_real_paths(tmp_path):
    root = _tree(tmp_path)
    settings = Settings(config_path=str(root / "pyproject.toml"))
    for paths in ([str(root)], [str(root / "pkg"), str(root / "other")], [str(root / "other"), str(root / "pkg")],
                  [str(root / "pkg" / "linked_sub"), str(root / "pkg" / "sub" / "b.py")], ["missing.py"]):
        walked = [pair for path in paths for pair in files._walk(path, files.Filters(settings))]
        assert [key for _, key in walked] == [os.path.realpath(file) for file, _ in walked]
        # what `discover` gave when it resolved each file on its own
        seen, expected = set(), []
        for file, _ in walked:
            if os.path.realpath(file) not in seen:
                seen.add(os.path.realpath(file))
                expected.append(file)
        assert files.discover(paths, settings) == expected


def test_the_project_scans_share_one_discovery_per_root(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    compile_context.forget_projects()
    run_mode.forget_projects()
    asked, discovered = [], engine.project_files

    def counted(top):
        asked.append(top)
        return discovered(top)

    monkeypatch.setattr(engine, "project_files", counted)
    linter = engine.Linter(Settings(config_path=str(root / "pyproject.toml")))
    context = linter.compile_context(str(root / "pkg" / "a.py"))
    assert asked == [str(root)]
    # the same files as each scan discovering them itself
    expected = files.discover([str(root)], Settings(config_path=str(root / "pyproject.toml")))
    compile_context.forget_projects()
    run_mode.forget_projects()
    assert per_project._files == {}
    mode = run_mode.scan(expected)
    assert context == replace(compile_context.scan(expected), pynative_source=mode.pynative,
                              graph_only_source=mode.graph_only)


TRAIN = '''\
import mindspore as ms
import numpy as np
from mindspore import nn


class Net(nn.Cell):
    def construct(self, x):
        return np.exp(x)


net = Net()
ms.set_context(device_target="CPU")


@ms.jit
def step(x):
    return net(x)
'''


def _lint(root, keep_scanned_trees: bool, monkeypatch):
    """The findings on the project under `root`, as the CLI lints it, and the files the linter parsed itself."""
    compile_context.forget_projects()
    run_mode.forget_projects()
    linter = engine.Linter(Settings(select=("ALL",)))
    if not keep_scanned_trees:
        monkeypatch.setattr(linter.index.kept, "keep", lambda path, source, tree: None)
    paths = files.discover([str(root)], Settings())
    for path in paths:
        linter.index.add_file(path)
    parsed = []
    real_parse = engine.parse
    monkeypatch.setattr(engine, "parse", lambda source: parsed.append(source.path) or real_parse(source))
    results = [linter.lint_path(path) for path in paths]
    monkeypatch.setattr(engine, "parse", real_parse)
    return [d for result in results for d in result.diagnostics], parsed


def test_a_tree_the_project_scans_parsed_is_linted_as_if_parsed_again(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("import numpy as np\n")  # linted first: the scans run then
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)  # both scans parse it
    kept, parsed_with = _lint(tmp_path / "pkg", True, monkeypatch)
    again, parsed_without = _lint(tmp_path / "pkg", False, monkeypatch)
    assert kept == again and kept
    assert str(tmp_path / "pkg" / "train.py") in parsed_without
    assert str(tmp_path / "pkg" / "train.py") not in parsed_with


def test_the_walks_calls_are_every_call_of_the_module():
    """MSL036 reads `set_context` calls from the calls the module's walk indexed, instead of an `ast.walk`: the same
    calls (decorators, defaults, lambdas, comprehensions, f-strings, nested classes included)."""
    from tests.test_performance_invariants import _contexts

    source = textwrap.dedent('''
        import mindspore as ms
        @ms.jit(capture_mode=f"{ms.set_context(mode=0)}")
        def f(x=ms.set_context(mode=ms.PYNATIVE_MODE), *, y=lambda: [ms.set_context(mode=mode) for _ in "a"]):
            class C:
                z = {k: ms.set_context(mode=k) for k in (1,)}
            return f"{ms.set_context(**x)!r}"
    ''')
    checked = 0
    for graph, ctx in _contexts(source):
        assert graph.walk.of_kind(ctx.tree, ast.Call) == sorted(
            (node for node in ast.walk(ctx.tree) if isinstance(node, ast.Call)),
            key=graph.walk.order.index)
        checked += 1
    assert checked > 50


QUALNAME_SOURCE = textwrap.dedent('''
    import mindspore as ms
    from mindspore import nn, ops
    from .layers import *

    def f(x, np=None):
        import numpy as np2
        y = np2.exp(x) + ops.add(x, x) + len(x) + self.g(x) + np.sum(x) + Dense(2, 2)
        def inner(z):
            from mindspore import numpy as mnp
            return mnp.ones(z) + np2.zeros(z) + ops.mul(z, z)
        return inner(y).asnumpy()

    def g(x):
        from torch import *
        return tensor(x) + nn.ReLU()(x)

    class Net(nn.Cell):
        def construct(self, x, ops=None):
            return ops.add(x, x) + ms.ops.sub(x, x) + (lambda v: v.sum() + print(v))(x)
''')


def test_qualname_skips_only_names_no_import_binds():
    """`Names.qualname` answers None at once for a name no import of the module or of any def binds, without
    finding the def around it: what resolving it in its scope, with the def's locals, gives, for every name and
    attribute of the fixtures."""
    from ms_lint.analysis.walk import enclosing_function
    from tests.test_performance_invariants import _contexts

    checked = 0
    for (graph, _), (exact, _) in zip(_contexts(QUALNAME_SOURCE), _contexts(QUALNAME_SOURCE)):
        for node, twin in zip(graph.walk.order, exact.walk.order):
            if isinstance(node, (ast.Name, ast.Attribute)):
                around = enclosing_function(twin)
                expected = exact.imports.qualname(twin) if around is None else \
                    exact.names.imports_of(around).qualname(twin, exact.names.local_names(around))
                assert graph.names.qualname(node) == expected, ast.unparse(node)
                checked += 1
    assert checked > 10_000


def test_the_sweep_finds_the_def_or_lambda_around_each_call():
    """MSL054 takes each call's def or lambda from one sweep of the walk (`with_enclosing_def(..., lambdas=True)`):
    `enclosing_function` of every call of the fixtures (decorators, defaults, lambdas, nested defs)."""
    from ms_lint.analysis.walk import enclosing_function
    from tests.test_performance_invariants import _contexts

    checked = 0
    for graph, _ in _contexts(QUALNAME_SOURCE):
        swept = list(graph.walk.with_enclosing_def(ast.Call, lambdas=True))
        assert [call for call, _ in swept] == graph.walk.of_kind(graph.tree, ast.Call)
        for call, function in swept:
            assert function is enclosing_function(call), ast.unparse(call)
            checked += 1
    assert checked > 1_000


def test_a_path_under_the_root_is_cut_as_relpath_cuts_it(tmp_path, monkeypatch):
    """`Filters._relative` cuts a path under the project root without `os.path.relpath`: the same answer for paths
    inside, outside, at the root, with `..`, `.` and doubled separators, relative and absolute, and a root of `/`."""
    monkeypatch.chdir(tmp_path)

    def by_relpath(root, path):
        relative = os.path.relpath(os.path.abspath(path), root)
        return None if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative

    for root in (str(tmp_path / "proj"), str(tmp_path / "proj") + "/", "/", str(tmp_path)):
        filters = files.Filters(Settings(config_path=os.path.join(root, "pyproject.toml")))
        for path in ("proj/a.py", "proj", "proj/", "proj/sub/../b.py", "proj/./c.py", "proj//d/e.py", "projx/a.py",
                     "other/a.py", "..", str(tmp_path / "proj" / "f.py"), str(tmp_path), "/", "/etc/passwd"):
            assert filters._relative(path) == by_relpath(filters.root, path), (root, path)


def test_needles_searched_lowered_first_are_found_as_before():
    """`NeedleSearch` searches needles that differ only in case (MSL098's `noqa`) once in the lowered text first:
    for every rule, the answer of searching the text alone, on the fixtures and texts spelling them in any case."""
    import pathlib

    from ms_lint.catalog import all_rules
    from ms_lint.dispatch import NeedleSearch
    from ms_lint.suppression import lowered_text

    rules = [rule() for rule in all_rules()]
    texts = [p.read_text(encoding="utf-8") for p in sorted((pathlib.Path(__file__).parent.parent / "fixtures")
                                                           .glob("*.py"))]
    texts += ["x = 1  # noqa", "x = 1  # NOQA: MSL001", "# Noqa", "# nOqA", "# no qa", "", "İ NOQA", "K noqa"]
    for text in texts:
        for rule in rules:
            assert NeedleSearch(text, lowered_text(text))(rule) == NeedleSearch(text)(rule), (rule.code, text[:40])


def test_rows_spelling_a_word_are_kept_for_the_last_text():
    from ms_lint.analysis import walk

    texts = ["import a\nx = 1\nimport b\n", "y = 2\r\nimport c\r\n", "z = 3\rimport d\n", "no imports here"]
    for text in texts + texts[::-1] + [texts[0] + ""]:
        for word in ("import", "x", "import"):
            assert walk.rows_spelling(text, word) == walk._rows_spelling(text, word)


class _EveryLevelFinder(module_reach._Finder):
    """`module_reach._Finder` as it searched an absolute import before it skipped the directories without the
    import's first name: every level up from the importer's directory."""

    def _search(self, module, directory):
        parts = module.split(".")
        if parts[0] not in self._first_names:
            return frozenset()
        base = directory
        for _ in range(module_reach._LEVELS_UP + 1):
            found = self._files(base, parts)
            if found:
                return found
            parent = os.path.dirname(base)
            if parent == base:
                break
            base = parent
        return frozenset()


IMPORTS = '''\
import pkg, pkg.sub.mod as m, top
import pkg.missing, os.path, .bad, a/b
from pkg import sub, plain, *
from pkg.sub import (mod,
    other as o)
from . import sibling, /etc
from .. import top, pkg
from ...deep import x
from .sub.mod import f
from pkg..sub import mod
from mindspore import nn, ops
from tools.helper import run
from train import Trainer
def f():
    from pkg.sub.mod import g
'''


def test_a_search_that_skips_levels_without_the_first_name_finds_what_every_level_finds(tmp_path):
    for path in ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/mod.py", "pkg/sub/sibling.py", "pkg/plain.py",
                 "pkg/pkg.py", "top.py", "tools/helper.py", "tools/train.py", "tools/scripts/run.py",
                 "train/__init__.py", "train.py", "a/b/c/d/e/deep.py", "a/b/c/d/e/f/g.py", "namespace/inner/script.py",
                 "sub/mod.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(IMPORTS)
    known = frozenset(str(path) for path in tmp_path.rglob("*.py"))
    fast, exact = module_reach._Finder(known), _EveryLevelFinder(known)
    found = 0
    for path in sorted(known):
        imported = fast.imported_files(path, IMPORTS.encode())
        assert imported == exact.imported_files(path, IMPORTS.encode()), path
        found += len(imported)
    assert found > 30
    # who imports a file, from the index of every file's imports: what searching each file for its name found
    project = module_reach._project_of(sorted(known))
    answers = set()
    for path in sorted(known):
        stem = os.path.basename(path)[:-3].encode()
        answers.add(project.imported_elsewhere(path))
        assert project.imported_elsewhere(path) == any(
            other != path and stem in project.text(other) and path in project.imports(other) for other in known)
    assert answers == {True, False}


NESTED = {
    "train.py": "import argparse\nimport mindspore as ms\nparser = argparse.ArgumentParser()\n"
                "parser.add_argument('--mode', default='PYNATIVE')\nargs = parser.parse_args()\n"
                "ms.set_context(device_target='GPU',\n"
                "               mode=ms.GRAPH_MODE if args.mode == 'GRAPH' else ms.PYNATIVE_MODE)\n",
    "model.py": "from mindspore import nn, ops\nops.zeros = lambda *shape: shape\n\n\nclass Net(nn.Cell):\n"
                "    def __init__(self):\n        super().__init__()\n        self.add_flags(is_first=True)\n",
    "scripts/run.py": "import mindspore as ms\nms.set_context(mode=ms.PYNATIVE_MODE, jit_syntax_level=ms.STRICT)\n"
                      "if __name__ == '__main__':\n    main()\n",
    "tools/step.py": "import mindspore as ms\n\n\n@ms.jit\ndef step(net, x):\n    return net(x)\n",
}


def test_nested_projects_read_each_file_once_and_say_what_each_scan_alone_says(tmp_path, monkeypatch):
    """The scans of nested projects (`PerProject.of`) keep the content of each file they read and what each file
    says (`PerFile`): what the scans reading the files themselves give, every file read once; a scan called on
    its own reads the files as they are."""
    for name, text in NESTED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    roots = [str(tmp_path / "tools"), str(tmp_path / "scripts"), str(tmp_path)]
    compile_context.forget_projects()
    run_mode.forget_projects()
    opened = []
    monkeypatch.setattr(per_project, "open", lambda path, mode: opened.append(path) or open(path, mode),
                        raising=False)
    shared = [(compile_context.of_project(root, engine.project_files), run_mode.of_project(root, engine.project_files))
              for root in roots]
    assert sorted(opened) == sorted(engine.project_files(str(tmp_path)))
    alone = [(compile_context.scan(engine.project_files(root)), run_mode.scan(engine.project_files(root)))
             for root in roots]
    assert shared == alone and len(opened) > 4  # (read again by the scans on their own)
    assert shared[2][0].target == "gpu" and shared[2][0].syntax_level == "strict" and shared[2][0].flags
    assert shared[2][0].replaced_api and shared[0][1].compiles and shared[1][1].pynative
    (tmp_path / "scripts" / "run.py").write_text("import mindspore as ms\nms.set_context(device_target='CPU')\n")
    assert compile_context.scan(engine.project_files(roots[1])).target == "cpu"
    assert compile_context.of_project(roots[1], engine.project_files).target is None  # (until forgotten)
    compile_context.forget_projects()
    assert compile_context.of_project(roots[1], engine.project_files).target == "cpu"
    compile_context.forget_projects()
    run_mode.forget_projects()
