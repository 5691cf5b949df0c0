"""Run mode (issue 19): pitfalls of compiled code are a step lower in a project that runs its Cells in PyNative.

What each file says of the mode (`run_mode.evidence`), the project the scan covers, and the same project through
the CLI, pylint `-j 1`/`-j 2`, flake8, the cache and the `mode` option (docs/project-rules.md, "Run mode").
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from support import run_cli
from test_project_rules import SYMBOLS, write

from ms_lint.analysis import run_mode
from ms_lint.analysis.run_mode import COMPILES, PYNATIVE, RUNS


def said(text: str):
    found = run_mode.evidence(textwrap.dedent(text).encode(), "script.py")
    return found and found[0]


@pytest.mark.parametrize("text, expected", [
    ("ms.set_context(mode=ms.GRAPH_MODE)\n", COMPILES),
    ("context.set_context(device_target='CPU', mode=0)\n", COMPILES),
    ("ms.set_context(mode=args.mode)\n", COMPILES),  # a mode from a variable may be GRAPH_MODE
    ("ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)\n", COMPILES),
    ("ms.set_context(**config.context)\n", COMPILES),
    ("ms.set_context(mode=get_mode(args), device_id=0)\n", COMPILES),
    ("ms.set_context(mode=ms.PYNATIVE_MODE)\n", PYNATIVE),
    ("context.set_context(mode=1, device_target='GPU')\n", PYNATIVE),
    # a self-test that selects GRAPH_MODE after its only forward call, as its last statement (mRASP2, issue 19's
    # eighth sample), compiles nothing; anything run after the selection, or an importer, is compiled
    ("if __name__ == '__main__':\n    net(x)\n    ms.set_context(mode=ms.GRAPH_MODE,\n"
     "                   device_target='GPU')\n    # model = Model(net)\n", RUNS),
    ("if __name__ == '__main__':\n    ms.set_context(mode=ms.GRAPH_MODE)\n    main()\n", COMPILES),
    ("def setup():\n    ms.set_context(mode=ms.GRAPH_MODE)\n", COMPILES),
    ("ms.set_context(device_target='CPU')\n", None),
    ("# ms.set_context(mode=ms.GRAPH_MODE)\n", None),  # commented out
    ("def print_args(config, mode=0):\n    pass\n", None),  # not a set_context argument
    ("if __name__ == '__main__':\n    main()\n", RUNS),
    ("import argparse\nparser = argparse.ArgumentParser()\nargs = parser.parse_args()\n", RUNS),
    ("def main():\n    args = parser.parse_args()\n", None),  # a function: who calls it is not known
    # a scratch script: training started at module level (a face anti-spoofing port, issue 19's first sample)
    ("network = build_network(cfg)\ntrainer = Trainer(network)\ntrainer.train()\n", RUNS),
    ("model.fit(data, epochs=3)\n", RUNS),
    ("main()\n", RUNS),
    ("def main():\n    trainer.train()\n", None),
    ("ms.set_context(mode=ms.GRAPH_MODE)\nif __name__ == '__main__':\n    main()\n", COMPILES),
    ("ms.set_context(mode=ms.PYNATIVE_MODE)\nif __name__ == '__main__':\n    main()\n", PYNATIVE),
    # MindSpore's scientific-computing template: the command-line option decides (`scan` reads its choices)
    ("ms.set_context(mode=ms.GRAPH_MODE if args.mode.upper().startswith('GRAPH') else ms.PYNATIVE_MODE)\n",
     run_mode.BY_OPTION + "mode"),
])
def test_what_a_file_says_of_the_mode(text, expected):
    assert said(text) == expected


@pytest.mark.parametrize("text, expected", [
    # a training step compiled with jit runs the network compiled
    ("""
     import mindspore as ms

     @ms.jit
     def train_step(data, label):
         loss, grads = grad_fn(data, label)
         return loss
     """, COMPILES),
    ("""
     from mindspore import jit

     class Net(nn.Cell):
         @jit
         def construct(self, x):
             return self.body(x)
     """, COMPILES),
    ("""
     import mindspore as ms

     for cell in net.cells():
         cell.construct = ms.jit(cell.construct)
     """, COMPILES),
    # MindNLP's `@jit` helpers over tensors compile no Cell
    ("""
     import mindspore
     from mindspore import ops

     @mindspore.jit
     def c2p_dynamic_expand(c2p_pos, query_layer, relative_pos):
         return c2p_pos.broadcast_to(ops.shape(query_layer)[:2] + (relative_pos.shape[-1],))
     """, None),
    # PyTorch's jit is not MindSpore's
    ("""
     import torch

     class Block:
         @torch.jit.ignore
         def no_weight_decay(self):
             return {"pos_embed"}
     """, None),
])
def test_jit_around_a_cell_compiles(text, expected):
    assert said(text) == expected


@pytest.mark.parametrize("choices, pynative", [('["PYNATIVE"]', True), ('["GRAPH", "PYNATIVE"]', False),
                                               ("MODES", False)])
def test_a_mode_taken_from_an_option_follows_the_options_choices(tmp_path, choices, pynative):
    """PDE-Net (issue 19): `--mode` allows PYNATIVE only, so the conditional in `init_env` never selects GRAPH_MODE."""
    (tmp_path / "utils.py").write_text(
        "import mindspore as ms\n\n\ndef init_env(args):\n"
        "    ms.set_context(mode=ms.GRAPH_MODE if args.mode.upper().startswith('GRAPH') else ms.PYNATIVE_MODE)\n")
    (tmp_path / "train.py").write_text(
        "import argparse\nfrom utils import init_env\n\nif __name__ == '__main__':\n"
        "    parser = argparse.ArgumentParser()\n"
        f"    parser.add_argument('--mode', type=str, default='PYNATIVE', choices={choices})\n"
        "    init_env(parser.parse_args())\n")
    found = run_mode.scan(sorted(str(path) for path in tmp_path.glob("*.py"))).pynative
    assert (found is not None and found.kind == run_mode.PYNATIVE_CHOICES) is pynative
    if pynative:
        assert found.describe() == ("`utils.py` line 5 takes the mode from a command-line option whose choices are "
                                    "PyNative only")


@pytest.mark.parametrize("default, launch, pynative", [
    ("'PYNATIVE'", None, True),
    ("'PYNATIVE'", "python train.py --mode GRAPH --device_id 0\n", False),  # a launch script selects GRAPH
    ("'PYNATIVE'", "python train.py --mode PYNATIVE\n", True),
    ("'GRAPH'", None, False),
    (None, None, False),  # no default: None, which `.upper()` rejects; not judged
])
def test_a_mode_option_that_defaults_to_pynative_runs_in_pynative(tmp_path, default, launch, pynative):
    """MindMoMaOrb and NowCastNet (issue 19's third sample): `--mode` offers GRAPH and PYNATIVE, defaults to
    PYNATIVE, and `run.sh` passes PYNATIVE."""
    keyword = f", default={default}" if default else ""
    (tmp_path / "train.py").write_text(
        "import argparse\nimport mindspore as ms\n\nif __name__ == '__main__':\n"
        "    parser = argparse.ArgumentParser()\n"
        f"    parser.add_argument('--mode', type=str{keyword}, choices=['GRAPH', 'PYNATIVE'])\n"
        "    args = parser.parse_args()\n"
        "    ms.set_context(mode=ms.GRAPH_MODE if args.mode.upper().startswith('GRAPH') else ms.PYNATIVE_MODE)\n")
    if launch:
        (tmp_path / "scripts").mkdir()
        (tmp_path / "scripts" / "run.sh").write_text(launch)
    found = run_mode.scan([str(tmp_path / "train.py")]).pynative
    assert (found is not None and found.kind == run_mode.PYNATIVE_DEFAULT) is pynative
    if pynative:
        assert found.describe() == ("`train.py` line 8 takes the mode from a command-line option that is PyNative "
                                    "unless GRAPH is passed, and no launch script of the project passes it")


def test_the_scan_covers_the_project_around_a_package_without_init(tmp_path):
    """A zoo's `src/` has no `__init__.py`; its train.py, a level up, selects the mode."""
    (tmp_path / "src" / "models").mkdir(parents=True)
    (tmp_path / "src" / "models" / "__init__.py").write_text("")
    (tmp_path / "src" / "models" / "net.py").write_text("")
    (tmp_path / "train.py").write_text("")
    assert run_mode.project_root(str(tmp_path / "src" / "models" / "net.py")) == str(tmp_path)
    (tmp_path / "train.py").unlink()
    run_mode.forget_projects()
    assert run_mode.project_root(str(tmp_path / "src" / "models" / "net.py")) == str(tmp_path / "src")


def test_the_scan_climbs_from_a_directory_without_init_inside_a_package(tmp_path):
    """ACTOR (issue 19's eighth sample): `architectures/tools/` has no `__init__.py`, `architectures/` has; the
    README and the scripts sit four levels up."""
    tools = tmp_path / "src" / "models" / "architectures" / "tools"
    tools.mkdir(parents=True)
    for package in (tmp_path / "src", tmp_path / "src" / "models", tools.parent):
        (package / "__init__.py").write_text("")
    (tools / "embeddings.py").write_text("")
    (tmp_path / "README.md").write_text("")
    assert run_mode.project_root(str(tools / "embeddings.py")) == str(tmp_path)


MODEL = '''
    import random

    import mindspore as ms
    from mindspore import nn


    class Net(nn.Cell):
        def construct(self, x, flag):
            if flag:
                y = x
            return y * random.random() + undefined_scale


    @ms.jit
    def noisy(x):
        return x * random.random()
'''


def project(script: str):
    return {"src/net.py": MODEL, "train.py": script}


RUNS_IN_PYNATIVE = '''
    from src.net import Net

    if __name__ == "__main__":
        print(Net()(1, True))
'''
SELECTS_GRAPH_MODE = '''
    import mindspore as ms

    from src.net import Net

    ms.set_context(mode=ms.GRAPH_MODE)
    print(Net()(1, True))
'''
# MSL025 and MSL004 in construct are lowered; MSL004 in the `@jit` function and MSL027 (a NameError in every
# mode) are not
LOWERED = {("src/net.py", 11, "MSL025", "warning"), ("src/net.py", 11, "MSL004", "warning"),
           ("src/net.py", 11, "MSL027", "error"), ("src/net.py", 16, "MSL004", "error")}
COMPILED = {(path, row, code, "error") for path, row, code, _ in LOWERED}
CODES = ("MSL004", "MSL025", "MSL027")


def cli(tmp_path, *extra):
    code, out = run_cli("check", "--output-format", "json", "--select", ",".join(CODES), *extra, ".",
                        cwd=tmp_path)
    assert code in (0, 1), out
    return {(item["filename"].removeprefix("./"), item["location"]["row"], item["code"], item["severity"])
            for item in json.loads(out)}


def messages(tmp_path):
    code, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL025", ".", cwd=tmp_path)
    return [item["message"] for item in json.loads(out)]


def test_cli_lowers_pitfalls_of_compiled_code_in_a_project_that_runs_in_pynative(tmp_path):
    write(tmp_path, project(RUNS_IN_PYNATIVE))
    assert cli(tmp_path, "--no-cache") == LOWERED
    [message] = messages(tmp_path)
    assert message.endswith("; only once compiled: this project runs its Cells in PyNative (`train.py` line 3 runs "
                            "without selecting a mode, and 2.10 starts in PyNative)")
    write(tmp_path, project(SELECTS_GRAPH_MODE))
    assert cli(tmp_path, "--no-cache") == COMPILED
    assert "PyNative" not in messages(tmp_path)[0]


def test_a_library_alone_runs_in_pynative_unless_it_shows_it_compiles(tmp_path):
    """vector-quantize's port (issue 19's ninth sample): no file selects a mode, applies `jit` to a function that
    may call a Cell, or sets a syntax level, so nothing leaves 2.10's PyNative. A syntax level set anywhere keeps
    the errors (and the `mode` option, below)."""
    write(tmp_path, {"src/net.py": MODEL})
    assert cli(tmp_path, "--no-cache") == LOWERED
    [message] = messages(tmp_path)
    assert message.endswith("; only once compiled: this project runs its Cells in PyNative (no file of the project "
                            "selects a mode or applies `jit`, and 2.10 starts in PyNative)")
    (tmp_path / "src" / "level.py").write_text("import mindspore as ms\nms.set_context(jit_syntax_level=ms.LAX)\n")
    run_mode.forget_projects()
    assert cli(tmp_path, "--no-cache") == COMPILED


def test_the_mode_option_overrides_the_detection(tmp_path):
    write(tmp_path, project(RUNS_IN_PYNATIVE))
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint]\nmode = "graph"\n')
    assert cli(tmp_path, "--no-cache") == COMPILED
    assert cli(tmp_path, "--no-cache", "--mode", "pynative") == LOWERED


def test_the_cache_lints_a_file_again_when_another_file_changes_the_mode(tmp_path):
    write(tmp_path, project(RUNS_IN_PYNATIVE))
    assert cli(tmp_path) == LOWERED
    (tmp_path / "train.py").write_text(textwrap.dedent(SELECTS_GRAPH_MODE))  # src/net.py itself is unchanged
    run_mode.forget_projects()  # a new run (the CLI runs in this process)
    assert cli(tmp_path) == COMPILED


@pytest.mark.parametrize("jobs", [1, 2])
def test_pylint_reports_the_lowered_severity(tmp_path, jobs):
    files = write(tmp_path, project(RUNS_IN_PYNATIVE))
    run = subprocess.run(
        [sys.executable, "-m", "pylint", "--load-plugins", "ms_lint", "--disable", "all",
         "--enable", ",".join(s for s, c in SYMBOLS.items() if c in CODES), "--output-format", "json", "-j",
         str(jobs), *files], cwd=tmp_path, capture_output=True, text=True)
    found = {(item["path"], item["line"], SYMBOLS[item["symbol"]], item["type"]) for item in json.loads(run.stdout)}
    assert found == {(path, row, code, severity) for path, row, code, severity in LOWERED}


def test_flake8_sees_the_mode_of_the_project_around_its_file(tmp_path):
    """flake8 lints one file, but the project's mode is read from disk: the same severities as the CLI."""
    write(tmp_path, project(RUNS_IN_PYNATIVE))
    run = subprocess.run([sys.executable, "-m", "flake8", "--select", "MSL", "--format",
                          "%(path)s|%(row)d|%(code)s|%(text)s", "src/net.py"], cwd=tmp_path, capture_output=True,
                         text=True)
    found = {tuple(line.split("|", 3)) for line in run.stdout.splitlines()}
    lowered = {("src/net.py", str(row), code) for _, row, code, severity in LOWERED if severity == "warning"}
    assert {found_row[:3] for found_row in found if "only once compiled" in found_row[3]} == lowered


@pytest.mark.parametrize("other, graph_only", [
    ("if __name__ == '__main__':\n    build_vocabulary()\n", True),  # a script without a mode: no Cells built
    ("ms.set_context(mode=ms.GRAPH_MODE, device_target='CPU')\n", True),
    ("ms.set_context(mode=ms.PYNATIVE_MODE)\n", False),
    ("ms.set_context(mode=args.mode)\n", False),  # may be PyNative
    ("ms.set_context(mode=ms.GRAPH_MODE if args.graph else ms.PYNATIVE_MODE)\n", False),
    ("ms.set_context(**config)\n", False),
])
def test_a_project_compiles_only_when_every_mode_it_selects_is_graph_mode(tmp_path, other, graph_only):
    (tmp_path / "main.py").write_text("import mindspore as ms\n\nms.set_context(mode=ms.GRAPH_MODE)\n")
    (tmp_path / "other.py").write_text("import mindspore as ms\n" + other)
    found = run_mode.scan(sorted(str(path) for path in tmp_path.glob("*.py")))
    assert found.pynative is None
    assert (found.graph_only == run_mode.Evidence(str(tmp_path / "main.py"), 3, run_mode.GRAPH)) is graph_only


LAZY_TENSOR = '''
    from mindspore import nn
    from mindspore.common.initializer import Normal, initializer


    class Encoder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.h0 = initializer(Normal(), (1, 4))

        def construct(self, x):
            return x + self.h0
'''
TRAIN_IN_GRAPH_MODE = '''
    import mindspore as ms

    from src.encoder import Encoder

    ms.set_context(mode=ms.GRAPH_MODE)
    print(Encoder()(ms.Tensor(1.0)))
'''
VOCABULARY = '''
    if __name__ == "__main__":
        print(sorted(set(open("corpus.txt").read().split())))
'''


def lazy_tensor_findings(tmp_path):
    code, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL073", ".", cwd=tmp_path)
    assert code in (0, 1), out
    return [(item["severity"], item["message"]) for item in json.loads(out)]


def test_a_failure_of_pynative_alone_is_lowered_where_the_project_selects_only_graph_mode(tmp_path):
    """The NER port and DIEN (issue 19's judged sample): their scripts select GRAPH_MODE, where graph mode fills
    the lazy tensor when the Cell compiles; a vocabulary script that runs without a mode builds no Cell."""
    write(tmp_path, {"src/encoder.py": LAZY_TENSOR, "vocab.py": VOCABULARY})
    [(severity, message)] = lazy_tensor_findings(tmp_path)
    assert severity == "warning" and "only in PyNative" not in message  # a library alone: how it runs is not known
    write(tmp_path, {"train.py": TRAIN_IN_GRAPH_MODE})
    run_mode.forget_projects()
    [(severity, message)] = lazy_tensor_findings(tmp_path)
    assert severity == "info"
    assert message.endswith("; only in PyNative: this project compiles its Cells (`train.py` line 5 selects "
                            "GRAPH_MODE, and no file selects another mode)")
    write(tmp_path, {"eval.py": "import mindspore as ms\n\nms.set_context(mode=ms.PYNATIVE_MODE)\n"})
    run_mode.forget_projects()
    assert [severity for severity, _ in lazy_tensor_findings(tmp_path)] == ["warning"]


EXAMPLE_MODEL = '''
    from mindspore import nn


    class Block(nn.Cell):
        def construct(self, x):
            for _ in range(2):
                out = x * 2
            return out
'''
RUNS_EXAMPLE = '''
    from models import Block

    if __name__ == "__main__":
        print(Block()(1))
'''
COMPILES_EXAMPLE = '''
    import mindspore

    from models import Block

    mindspore.set_context(mode=0)
    print(Block()(1))
'''


def test_a_directory_of_scripts_runs_as_its_own_scripts_do(tmp_path):
    """MindSpore-GAN (issue 19's third sample): one example selects GRAPH_MODE, the others run in PyNative."""
    write(tmp_path, {"README.md": "examples\n", "examples/esrgan/models.py": EXAMPLE_MODEL,
                     "examples/esrgan/esrgan.py": RUNS_EXAMPLE, "examples/stargan/models.py": EXAMPLE_MODEL,
                     "examples/stargan/stargan.py": COMPILES_EXAMPLE})
    (tmp_path / "pyproject.toml").unlink()  # the project is the repository: its README marks it
    found = {(item["filename"].removeprefix("./"), item["severity"])
             for item in json.loads(run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL025",
                                            ".", cwd=tmp_path)[1])}
    assert found == {("examples/esrgan/models.py", "warning"), ("examples/stargan/models.py", "error")}
    # a file elsewhere that imports a module only esrgan's directory defines may be on the way from a compiling
    # script: here a helper of a compiling script
    write(tmp_path, {"examples/esrgan/blocks.py": EXAMPLE_MODEL, "tools/helpers.py": "import blocks\n",
                     "tools/bench.py": "import mindspore\nimport helpers\nmindspore.set_context(mode=0)\n"})
    (tmp_path / "pyproject.toml").unlink()
    found = {(item["filename"].removeprefix("./"), item["severity"])
             for item in json.loads(run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL025",
                                            ".", cwd=tmp_path)[1])}
    # ...so the directory may compile; esrgan's `models.py`, which only `esrgan.py` imports, still runs in
    # PyNative (`module_reach`)
    assert found == {("examples/esrgan/models.py", "warning"), ("examples/esrgan/blocks.py", "error"),
                     ("examples/stargan/models.py", "error")}


def test_a_directory_imported_by_path_from_a_parent_runs_as_its_importers_do(tmp_path):
    """A zoo's `src/` without `__init__.py`: `train.py` imports `src.models`; a self-test in `src/` runs alone."""
    write(tmp_path, {"README.md": "model\n", "src/models.py": EXAMPLE_MODEL, "src/selftest.py": RUNS_EXAMPLE,
                     "trainer.py": "from src.models import Block\n",
                     "train.py": "import mindspore\nimport trainer\nmindspore.set_context(mode=0)\n"})
    (tmp_path / "pyproject.toml").unlink()
    found = {(item["filename"].removeprefix("./"), item["severity"])
             for item in json.loads(run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL025",
                                            ".", cwd=tmp_path)[1])}
    assert found == {("src/models.py", "error")}


def severities(tmp_path):
    return {(item["filename"].removeprefix("./"), item["severity"])
            for item in json.loads(run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL025",
                                           ".", cwd=tmp_path)[1])}


SELF_TEST = EXAMPLE_MODEL + '''

    if __name__ == "__main__":
        import mindspore
        mindspore.set_context(mode=0)  # the module's own self-test
        print(Block()(1))
'''


def test_a_module_no_compiling_file_imports_runs_as_its_importers_do(tmp_path):
    """hp-vae-gan (issue 19's fourth sample): the 3-D networks run from PyNative scripts only, while an export
    script compiles the 2-D ones and a library module's self-test selects GRAPH_MODE."""
    write(tmp_path, {"README.md": "gan\n", "src/__init__.py": "", "src/modules/__init__.py": "",
                     "src/modules/networks_2d.py": SELF_TEST, "src/modules/networks_3d.py": EXAMPLE_MODEL,
                     "src/modules/losses.py": SELF_TEST.replace("Block", "Loss"),
                     "train_video.py": "import mindspore\nfrom src.modules.networks_3d import Block\n"
                                       "from src.modules import losses\n"
                                       "mindspore.set_context(mode=1)\n",
                     "train_image.py": "import mindspore\nimport src.modules.networks_2d as nets\n"
                                       "mindspore.set_context(mode=mindspore.PYNATIVE_MODE)\n",
                     "export.py": "import mindspore\nfrom src.modules.networks_2d import Block\n"
                                  "mindspore.set_context(mode=mindspore.GRAPH_MODE)\n"})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("src/modules/networks_2d.py", "error"),  # export.py compiles it
                                    ("src/modules/networks_3d.py", "warning"),
                                    ("src/modules/losses.py", "warning")}  # its self-test does not count
    message = next(item["message"] for item in json.loads(run_cli(
        "check", "--no-cache", "--output-format", "json", "--select", "MSL025", "src/modules/networks_3d.py",
        cwd=tmp_path)[1]))
    assert message.endswith("(`train_video.py` line 4 selects PYNATIVE_MODE for a script that imports this module, "
                            "directly or not; nothing that may compile imports it)")


def test_a_jit_compiles_the_modules_its_file_imports(tmp_path):
    """PVQD (issue 19's fourth sample): `@jit` on one model's `construct` compiles what its module imports, not
    every module of the project; a relative import and a package's `__init__.py` are followed."""
    write(tmp_path, {"README.md": "diffusion\n", "models/__init__.py": "from .encoder import Block\n",
                     "models/encoder.py": EXAMPLE_MODEL,
                     "models/structure.py": EXAMPLE_MODEL.replace("Block", "Structure"),
                     "models/diff.py": "from mindspore import jit, nn\nfrom . import encoder\n\n\n"
                                       "class Diff(nn.Cell):\n    @jit\n    def construct(self, x):\n"
                                       "        return self.encoder(x)\n",
                     "infer.py": "from models.structure import Structure\nfrom models.diff import Diff\n\n"
                                 "if __name__ == '__main__':\n    Structure()(Diff()(1))\n"})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models/encoder.py", "error"), ("models/structure.py", "warning")}
    # the package's `__init__.py` imports the encoder: a compiling file that imports the package reaches it
    write(tmp_path, {"tools/export.py": "import mindspore\nimport models\nmindspore.set_context(mode=0)\n"})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models/encoder.py", "error"), ("models/structure.py", "warning")}
    write(tmp_path, {"tools/export.py": "import mindspore\nimport models.structure\nmindspore.set_context(mode=0)\n"})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models/encoder.py", "error"), ("models/structure.py", "error")}


def test_a_mode_selected_by_an_imported_helper_is_the_scripts(tmp_path):
    """SinGAN (a community zoo): `predict.py` imports `utils/args.py`, whose `get_args()` selects GRAPH_MODE: the
    mode is the process's, so the networks `predict.py` imports compile."""
    write(tmp_path, {"README.md": "singan\n", "models/cyclegan.py": EXAMPLE_MODEL,
                     "models/featureview.py": EXAMPLE_MODEL.replace("Block", "View"),
                     "utils/args.py": "import mindspore\n\n\ndef get_args():\n"
                                      "    mindspore.set_context(mode=mindspore.GRAPH_MODE)\n",
                     "predict.py": "from models.cyclegan import Block\nfrom utils.args import get_args\n\n"
                                   "if __name__ == '__main__':\n    get_args()\n    Block()(1)\n",
                     "view.py": "from models.featureview import View\n\n"
                                "if __name__ == '__main__':\n    View()(1)\n"})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models/cyclegan.py", "error"), ("models/featureview.py", "warning")}


def test_a_mode_selected_in_a_helper_the_script_never_calls_is_not_the_scripts(tmp_path):
    """StepVideo (issue 19's eighth sample) vendors mindone, whose `init_train_env(mode=GRAPH_MODE, ...)` selects a
    mode; its PyNative scripts import the package but never call the helper."""
    env = ("import mindspore as ms\n\n\ndef init_train_env(\n    mode: int = ms.GRAPH_MODE,\n    seed: int = 42,\n"
           ") -> int:\n    \"\"\"Set the context.\"\"\"\n    if seed:\n        ms.set_context(mode=mode)\n"
           "    return 0\n")
    script = ("import mindspore\nfrom models.encoder import Block\nfrom vendor.utils import init_train_env\n\n"
              "if __name__ == '__main__':\n    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)\n"
              "    Block()(1)\n")
    write(tmp_path, {"README.md": "video\n", "models/encoder.py": EXAMPLE_MODEL, "vendor/__init__.py": "",
                     "vendor/utils/__init__.py": "from .env import init_train_env\n", "vendor/utils/env.py": env,
                     "run.py": script})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models/encoder.py", "warning")}
    write(tmp_path, {"run.py": script.replace("Block()(1)", "init_train_env()\n    Block()(1)")})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models/encoder.py", "error")}


def test_a_mode_reset_by_a_constructor_after_its_base_runs_last(tmp_path):
    """mindsporeTSF (issue 19's twelfth sample): the script selects GRAPH_MODE, the experiment's base class too,
    and `Exp_Main.__init__` selects PYNATIVE_MODE after `super().__init__(args)`: it trains in PyNative."""
    experiment = ("from mindspore import context\nfrom models import Block\n\n\nclass Exp_Basic:\n"
                  "    def __init__(self, args):\n        self.device = self._acquire_device()\n\n"
                  "    def _acquire_device(self):\n        context.set_context(mode=context.GRAPH_MODE)\n\n\n"
                  "class Exp_Main(Exp_Basic):\n    def __init__(self, args):\n"
                  "        super(Exp_Main, self).__init__(args)\n"
                  "        context.set_context(mode=context.PYNATIVE_MODE)\n        self.model = Block()\n")
    script = ("from mindspore import context\nfrom exp.exp_main import Exp_Main\n\n"
              "context.set_context(mode=context.GRAPH_MODE)\n\nif __name__ == '__main__':\n"
              "    exp = Exp_Main(None)\n")
    write(tmp_path, {"README.md": "tsf\n", "models.py": EXAMPLE_MODEL, "exp/__init__.py": "",
                     "exp/exp_main.py": experiment, "run_longExp.py": script,
                     "layers/revin.py": EXAMPLE_MODEL.replace("Block", "RevIN")})
    (tmp_path / "pyproject.toml").unlink()
    # every script trains in PyNative and nothing applies `jit`: a layer no script imports runs in PyNative too
    assert severities(tmp_path) == {("models.py", "warning"), ("layers/revin.py", "warning")}
    # the reset before the base's selection: GRAPH_MODE runs last
    write(tmp_path, {"exp/exp_main.py": experiment.replace(
        "        super(Exp_Main, self).__init__(args)\n        context.set_context(mode=context.PYNATIVE_MODE)\n",
        "        context.set_context(mode=context.PYNATIVE_MODE)\n        super(Exp_Main, self).__init__(args)\n")})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models.py", "error"), ("layers/revin.py", "error")}
    # the constructor selects PyNative through a method of its own, after its base's GRAPH_MODE (sixteenth sample)
    write(tmp_path, {"exp/exp_main.py": experiment.replace(
        "        context.set_context(mode=context.PYNATIVE_MODE)\n        self.model = Block()\n",
        "        self._init_context()\n        self.model = Block()\n\n    def _init_context(self):\n"
        "        context.set_context(mode=context.PYNATIVE_MODE)\n")})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models.py", "warning"), ("layers/revin.py", "warning")}


def notebook_of(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": textwrap.dedent(cell).lstrip("\n").splitlines(keepends=True)}
                                 for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_notebook_runs_as_a_program_of_its_own(tmp_path):
    """d2l-mindspore (issue 19's tenth sample): the attention notebooks select no mode, while other notebooks of
    the collection select GRAPH_MODE; a notebook compiles its Cells only where it, or what it imports, does."""
    graph = "import mindspore\nmindspore.set_context(mode=mindspore.GRAPH_MODE)\n"
    helper = "import mindspore\n\n\ndef use_graph():\n    mindspore.set_context(mode=0)\n"
    write(tmp_path, {"README.md": "book\n", "book/tools.py": helper,
                     "attention.ipynb": notebook_of(EXAMPLE_MODEL, "print(Block()(1))\n"),
                     "fcn.ipynb": notebook_of(graph, EXAMPLE_MODEL),
                     "style.ipynb": notebook_of("from book.tools import use_graph\n", EXAMPLE_MODEL),
                     "tuned.ipynb": notebook_of("from book.tools import use_graph\nuse_graph()\n", EXAMPLE_MODEL)})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("attention.ipynb", "warning"), ("fcn.ipynb", "error"),
                                    ("style.ipynb", "warning"), ("tuned.ipynb", "error")}
    message = next(item["message"] for item in json.loads(run_cli(
        "check", "--no-cache", "--output-format", "json", "--select", "MSL025", "attention.ipynb", cwd=tmp_path)[1]))
    assert message.endswith("(`attention.ipynb` runs as a program of its own and neither it nor what it imports "
                            "selects a mode or applies `jit`; 2.10 starts in PyNative)")


def test_a_self_test_inside_a_package_is_not_a_script(tmp_path):
    """mindone's `nerfacc/utils/grid_utils.py` runs a self-test: a library's Cells are compiled by scripts the
    linter does not see, so a file inside a package does not make what it imports run in PyNative."""
    write(tmp_path, {"README.md": "lib\n", "lib/__init__.py": "", "lib/nets.py": EXAMPLE_MODEL,
                     "lib/utils/__init__.py": "",
                     "lib/utils/grid.py": "from lib.nets import Block\n\nif __name__ == '__main__':\n"
                                          "    Block()(1)\n",
                     "lib/step.py": "from mindspore import jit\n\n\n@jit\ndef step(net, x):\n    return net(x)\n"})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("lib/nets.py", "error")}


def test_a_package_wins_over_a_module_of_the_same_name(tmp_path):
    """DecoMR (issue 19's fifth sample): `train.py` does `from train import Trainer`, which Python finds in the
    package `train/` beside it; a GRAPH_MODE demo elsewhere imports nothing of the project."""
    write(tmp_path, {"README.md": "decomr\n", "train/__init__.py": "from .cell import Block as Trainer\n",
                     "train/cell.py": EXAMPLE_MODEL,
                     "train.py": "import mindspore\nfrom train import Trainer\n\nif __name__ == '__main__':\n"
                                 "    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)\n    Trainer()(1)\n",
                     "test_demo.py": "import mindspore\nmindspore.set_context(mode=mindspore.GRAPH_MODE)\n"})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("train/cell.py", "warning")}


INLINE_LAYER = '''
    from mindspore import nn


    class Net(nn.Cell):
        def construct(self, x):
            return nn.Dense(3, 3)(x)
'''


def test_msl006_says_what_pynative_does_with_a_layer_built_in_construct(tmp_path):
    """Each call draws new weights in PyNative (measured: tests/oracle, MSL006); nothing is frozen at compile time
    (GPT-SoVITS's `nn.Embedding` in `dequantize`, issue 19's seventh sample)."""
    def message():
        code, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL006", ".",
                            cwd=tmp_path)
        [item] = json.loads(out)
        return item["severity"], item["message"]

    write(tmp_path, {"src/net.py": INLINE_LAYER, "train.py": RUNS_IN_PYNATIVE})
    severity, text = message()
    assert severity == "error" and "drawn afresh at every call" in text and "frozen" not in text
    write(tmp_path, {"src/net.py": INLINE_LAYER, "train.py": SELECTS_GRAPH_MODE})
    severity, text = message()
    assert severity == "error" and "frozen at compile time" in text


def test_a_mode_selected_only_by_an_imported_modules_self_test_is_not_the_scripts(tmp_path):
    """DSAN (issue 19's fourteenth sample): the PyNative `train.py` imports `test` from `eval.py`, whose `run_eval()`
    selects GRAPH_MODE and is called only in `eval.py`'s own `if __name__ == "__main__":` block."""
    evaluate = ("import mindspore\nfrom models import Block\n\n\ndef test(net):\n    return net(1)\n\n\n"
                "def run_eval():\n    mindspore.set_context(mode=mindspore.GRAPH_MODE)\n    test(Block())\n\n\n"
                "if __name__ == '__main__':\n    run_eval()\n")
    write(tmp_path, {"README.md": "dsan\n", "models.py": EXAMPLE_MODEL, "eval.py": evaluate,
                     "train.py": "import mindspore\nfrom models import Block\nfrom eval import test\n\n"
                                 "if __name__ == '__main__':\n"
                                 "    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)\n    test(Block())\n"})
    (tmp_path / "pyproject.toml").unlink()
    # `eval.py`, run as a script, compiles `models.py` too: the module is reached by both
    assert severities(tmp_path) == {("models.py", "error")}
    # ...but a module only `train.py` reaches runs in PyNative, though `train.py` imports `eval.py`
    write(tmp_path, {"loss.py": EXAMPLE_MODEL.replace("Block", "Loss"),
                     "train.py": "import mindspore\nfrom loss import Loss\nfrom eval import test\n\n"
                                 "if __name__ == '__main__':\n"
                                 "    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)\n    test(Loss())\n"})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models.py", "error"), ("loss.py", "warning")}
    # a call of `run_eval()` outside the self-test (at module level of the imported file) selects it on import
    write(tmp_path, {"eval.py": evaluate.replace("if __name__ == '__main__':\n    run_eval()\n", "run_eval()\n")})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("models.py", "error"), ("loss.py", "error")}


def test_mode_selections_are_read_from_code_only(tmp_path):
    """edsr_project (issue 19's fifteenth sample) selects no mode; a docstring copied from MindSpore's BatchNorm
    holds `>>> ms.set_context(mode=ms.GRAPH_MODE)`. TensorLayerX's backends each define a pass-through
    `def set_context(**kwargs): return context.set_context(**kwargs)`, and the package selects PyNative itself."""
    docstring = ('"""A normalization layer.\n\nExamples:\n    >>> import mindspore as ms\n'
                 '    >>> ms.set_context(mode=ms.GRAPH_MODE)\n"""\nfrom mindspore import nn\n\n'
                 'from src.net import Net\n')
    example = ('\n\nclass Norm(nn.Cell):\n    """Use it so:\n\n    ms.set_context(mode=ms.GRAPH_MODE)\n    """\n')
    write(tmp_path, {"src/net.py": MODEL, "src/norm.py": docstring + example, "train.py": RUNS_IN_PYNATIVE})
    assert cli(tmp_path, "--no-cache") == LOWERED
    backend = ("from mindspore import context, nn\n\nfrom src.net import Net\n\n\ndef set_context(**kwargs):\n"
               "    return context.set_context(**kwargs)\n\n\nclass Resize(nn.Cell):\n    pass\n")
    (tmp_path / "src" / "norm.py").unlink()
    write(tmp_path, {"src/net.py": MODEL, "src/backend.py": backend,
                     "src/load_backend.py": "from mindspore import context\n\n"
                                            "context.set_context(mode=context.PYNATIVE_MODE)\n",
                     "train.py": RUNS_IN_PYNATIVE})
    run_mode.forget_projects()
    assert cli(tmp_path, "--no-cache") == LOWERED
    # a caller of the wrapper that selects GRAPH_MODE, or a real selection in code, compiles
    write(tmp_path, {"train.py": "import mindspore as ms\nfrom src.backend import set_context\n"
                                 "from src.net import Net\n\nset_context(mode=ms.GRAPH_MODE)\nprint(Net()(1, True))\n"})
    run_mode.forget_projects()
    assert cli(tmp_path, "--no-cache") == COMPILED
    write(tmp_path, {"src/backend.py": backend,
                     "src/norm.py": "import mindspore as ms\n" + docstring + "ms.set_context(mode=ms.GRAPH_MODE)\n",
                     "train.py": "import src.norm\n" + textwrap.dedent(RUNS_IN_PYNATIVE)})
    run_mode.forget_projects()
    assert cli(tmp_path, "--no-cache") == COMPILED


def test_a_mode_given_through_a_variable_of_the_file(tmp_path):
    """JSG (issue 19's sixteenth sample): `ms_mode = ms.context.PYNATIVE_MODE` then `set_context(mode=ms_mode)`."""
    script = ("import mindspore as ms\nfrom src.net import Net\n\nif __name__ == '__main__':\n"
              "    ms_mode = ms.context.PYNATIVE_MODE\n    ms.set_context(mode=ms_mode, device_target='GPU')\n"
              "    print(Net()(1, True))\n")
    write(tmp_path, {"src/net.py": MODEL, "train.py": script})
    assert cli(tmp_path, "--no-cache") == LOWERED
    # a variable a function receives may hold either mode
    write(tmp_path, {"train.py": script.replace("if __name__ == '__main__':\n    ms_mode = ms.context.PYNATIVE_MODE\n",
                                                "def main(ms_mode):\n")})
    run_mode.forget_projects()
    assert cli(tmp_path, "--no-cache") == COMPILED


def test_an_entry_point_inside_a_package_is_a_script(tmp_path):
    """JSG (issue 19's sixteenth sample) keeps `train.py` inside its package; it selects PyNative in its
    `__main__` block and trains there, while another script of the project compiles: what only the training
    script reaches runs in PyNative. A self-test in a module named otherwise is still no script."""
    pynative_main = ("import mindspore\nfrom jsg.nets import Block\n\nif __name__ == '__main__':\n"
                     "    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)\n    Block()(1)\n")
    write(tmp_path, {"README.md": "jsg\n", "jsg/__init__.py": "", "jsg/nets.py": EXAMPLE_MODEL,
                     "jsg/train.py": pynative_main, "jsg/other.py": EXAMPLE_MODEL,
                     "jsg/selftest.py": pynative_main.replace("jsg.nets", "jsg.other"),
                     "jsg/step.py": "from mindspore import jit\n\n\n@jit\ndef step(net, x):\n    return net(x)\n"})
    (tmp_path / "pyproject.toml").unlink()
    assert severities(tmp_path) == {("jsg/nets.py", "warning"), ("jsg/other.py", "error")}
