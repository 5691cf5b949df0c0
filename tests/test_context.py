"""The project's compile context (syntax level, device target) reaches every module."""
from __future__ import annotations

import ast

from support import CLEAN, run_cli

from ms_lint.analysis import compile_context
from ms_lint.engine import project_compile_context

MODEL = ("from mindspore import nn\n\n\nclass N(nn.Cell):\n    def construct(self, x):\n"
         "        return x.asnumpy()\n")


def project(tmp_path, train):
    (tmp_path / "pyproject.toml").write_text("[tool.ms_lint]\n")
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(train)
    compile_context.forget_projects()
    return tmp_path


def test_strict_level_set_in_the_entry_script_applies_to_the_model(tmp_path):
    project(tmp_path, "import mindspore as ms\nms.set_context(jit_syntax_level=ms.STRICT)\n")
    code, out = run_cli("check", "--no-cache", "--select", "MSL003", str(tmp_path / "model.py"))
    assert code == 1 and "[error]" in out and "STRICT" in out


def test_environment_variable_and_lax_default(tmp_path):
    project(tmp_path, "import os\nos.environ['MS_DEV_JIT_SYNTAX_LEVEL'] = '0'\n")
    assert "[error]" in run_cli("check", "--no-cache", "--select", "MSL003", str(tmp_path / "model.py"))[1]
    project(tmp_path, "print('no context here')\n")
    assert "[warning]" in run_cli("check", "--no-cache", "--select", "MSL003", str(tmp_path / "model.py"))[1]


def test_target_from_set_device_or_set_context(tmp_path):
    for train, target in (("import mindspore as ms\nms.set_device('Ascend')\n", "ascend"),
                          ("import mindspore\nmindspore.set_context(device_target='CPU')\n", "cpu"),
                          ("x = 1\n", None)):
        project(tmp_path, train)
        assert project_compile_context(str(tmp_path)).target == target


SETTINGS = [  # every layout a target or level can be set in (the scan parses a file only if `_MAY_SET` matches)
    "ms.set_context(device_target='GPU')",
    "ms.set_context(mode=0,\n               device_target = (\n    # the device\n    r\"GPU\"))",
    "ms.set_context(device_target=\\\n    'GPU')",
    "ms.set_device ( 'GPU' )",
    "ms.set_device(\n    # where\n    ('GPU'))",
    "ms.set_device \\\n    ('GPU')",
    "ms.set_context(device_target  # where\n               = 'GPU')",
    "ms.set_context(jit_syntax_level=ms.STRICT)",
    "os.environ['MS_DEV_JIT_SYNTAX_LEVEL'] = '0'",
]
LOOK_ALIKES = ["ms.set_context(device_target=args.device_target)", "if args.device_target == 'GPU':\n    pass",
               "ms.set_device(args.device)", "device = config.device_target"]


def test_the_scan_parses_every_file_that_may_set_something_and_skips_look_alikes(tmp_path):
    for text in SETTINGS:
        levels, targets = compile_context.facts_of_module(ast.parse(f"import os\nimport mindspore as ms\n{text}\n"))
        assert levels or targets, text
        assert compile_context._MAY_SET.search(text.encode()), text
        project(tmp_path, f"import os\nimport mindspore as ms\n{text}\n")
        found = project_compile_context(str(tmp_path))
        assert found.target == "gpu" or found.syntax_level == "strict", text
    for text in LOOK_ALIKES:
        assert compile_context.facts_of_module(ast.parse(text)) == ([], []), text
        assert not compile_context._MAY_SET.search(text.encode()), text


def test_tests_and_dropped_jit_config_do_not_set_the_project_level(tmp_path):
    project(tmp_path, "import mindspore as ms\n@ms.jit(jit_config=ms.JitConfig(jit_syntax_level='STRICT'))\n"
                      "def f(x):\n    return x\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_strict.py").write_text(
        "import mindspore as ms\nms.set_context(jit_syntax_level=ms.STRICT)\n")
    assert project_compile_context(str(tmp_path)).syntax_level is None


def test_a_module_setting_wins_over_the_project(tmp_path):
    project(tmp_path, "import mindspore as ms\nms.set_context(jit_syntax_level=ms.LAX)\n")
    (tmp_path / "model.py").write_text("import mindspore as ms\nms.set_context(jit_syntax_level=ms.STRICT)\n" + MODEL)
    assert "[error]" in run_cli("check", "--no-cache", "--select", "MSL003", str(tmp_path / "model.py"))[1]


def test_add_flags_in_another_module_defines_the_attribute(tmp_path):
    decoder = ("from mindspore import nn\n\n\nclass Decoder(nn.Cell):\n    def construct(self, x):\n"
               "        if self.is_first_iteration:\n            return x\n        return x * 2\n")
    project(tmp_path, "def generate(net):\n    net.add_flags_recursive(is_first_iteration=True)\n")
    (tmp_path / "model.py").write_text(decoder)
    assert run_cli("check", "--no-cache", "--select", "MSL032", str(tmp_path / "model.py")) == (0, CLEAN)
    (tmp_path / "train.py").write_text("x = 1\n")
    compile_context.forget_projects()
    assert run_cli("check", "--no-cache", "--select", "MSL032", str(tmp_path / "model.py"))[0] == 1


def test_a_run_with_a_cache_keeps_what_each_scanned_file_sets_by_content(tmp_path, monkeypatch):
    project(tmp_path, "import mindspore as ms\nms.set_context(device_target='GPU')\n")
    store = tmp_path / "store"
    compile_context.keep_facts_in(str(store))
    try:
        assert compile_context.scan([str(tmp_path / "train.py")]).target == "gpu"
        assert len(list(store.iterdir())) == 1

        def no_parse(source):
            raise AssertionError("parsed again")

        monkeypatch.setattr(compile_context, "parse", no_parse)
        assert compile_context.scan([str(tmp_path / "train.py")]).target == "gpu"  # from the store
        (tmp_path / "train.py").write_text("import mindspore as ms\nms.set_context(device_target='CPU')\n")
        monkeypatch.undo()
        assert compile_context.scan([str(tmp_path / "train.py")]).target == "cpu"  # new content: parsed
        assert len(list(store.iterdir())) == 2
    finally:
        compile_context.keep_facts_in(None)


def test_the_cli_keeps_the_scans_facts_only_in_its_cache_directory(tmp_path):
    project(tmp_path, "import mindspore as ms\nms.set_context(jit_syntax_level=ms.STRICT)\n")
    run_cli("check", "--select", "MSL003", "--cache-dir", str(tmp_path / "cache"), str(tmp_path / "model.py"))
    assert len(list((tmp_path / "cache").glob("*/context"))) == 1  # in the directory of the run's option set
    assert compile_context._facts_directory is None  # the CLI resets it when the run ends


def test_every_rule_runs_where_the_module_itself_says_before_the_project():
    """One precedence for the target: the option, the module's own `set_device`, the project's, any. MSL043 read
    only the option and the project, so a CPU script in a project whose other script targets Ascend was warned
    about Ascend's dynamic-shape path."""
    from ms_lint import lint_source
    from ms_lint.settings import Settings

    model = ("import mindspore as ms\nfrom mindspore import nn, ops\n{device}\n\nclass Net(nn.Cell):\n"
             "    def construct(self, x):\n        return ops.nonzero(x)\n")
    every = Settings(select=("MSL043",))
    ascend = lint_source(model.format(device="ms.set_device('Ascend')"), "net.py", every)
    cpu = lint_source(model.format(device="ms.set_device('CPU')"), "net.py", every)
    assert [(d.code, d.severity) for d in ascend] == [("MSL043", "warning")]
    assert "Ascend" in ascend[0].message
    assert [(d.code, d.severity) for d in cpu] == [("MSL043", "info")]
    assert "Ascend" not in cpu[0].message
    option = lint_source(model.format(device="ms.set_device('Ascend')"), "net.py", Settings(select=("MSL043",),
                                                                                            target="cpu"))
    assert [(d.code, d.severity) for d in option] == [("MSL043", "info")]


WINDOWS = '''
import os
import mindspore as ms
from mindspore import nn


class Strict(nn.Cell):
    def __init__(self):
        super().__init__()
        self.count = 0

    def construct(self, x):
        self.count = self.count + 1
        return x


class Lax(nn.Cell):
    def __init__(self):
        super().__init__()
        self.count = 0

    def construct(self, x):
        self.count = self.count + 1
        return x


def test_strict():
    net = Strict()
    os.environ["MS_DEV_JIT_SYNTAX_LEVEL"] = "0"
    out = net(ms.Tensor([1.0]))
    os.environ["MS_DEV_JIT_SYNTAX_LEVEL"] = "2"
    return out


def test_lax():
    ms.set_context(jit_syntax_level=ms.STRICT)
    ms.set_context(jit_syntax_level=ms.LAX)
    return Lax()(ms.Tensor([1.0]))
'''


def test_strict_set_in_a_function_and_restored_holds_for_what_runs_in_between():
    """Issue 14: MindSpore's own tests set STRICT around one call; the other Cells of the file stay LAX."""
    from ms_lint.engine import Linter
    from ms_lint.settings import Settings
    from ms_lint.source import SourceFile

    tree = ast.parse(WINDOWS)
    assert compile_context.facts_of_module(tree)[0] == []  # no level for the module as a whole
    assert [(w.start, w.end) for w in compile_context.level_windows(tree)] == [(29, 31), (36, 37)]
    found = Linter(Settings(select=("MSL035",))).lint_source(
        SourceFile(path="cells.py", text=WINDOWS, module_name="cells")).diagnostics
    assert [(d.row, d.severity) for d in found] == [(13, "error"), (23, "warning")]
    unrestored = WINDOWS.replace('    os.environ["MS_DEV_JIT_SYNTAX_LEVEL"] = "2"\n', "")
    assert compile_context.facts_of_module(ast.parse(unrestored))[0] == [("strict", 29)]  # from there on: all
    found = Linter(Settings(select=("MSL035",))).lint_source(
        SourceFile(path="cells.py", text=unrestored, module_name="cells")).diagnostics
    assert [(d.row, d.severity) for d in found] == [(13, "error"), (23, "error")]
