"""Project rules (MSL050, MSL052, MSL053) across modules, and MSL051's project target, in every front end.

The CLI and pylint (`-j 1`: judged in close(); `-j 2`: facts sent from the workers through get_map_data and judged
in reduce_map_data) see the whole project. flake8 hands over one file at a time: a project rule then judges that
file's facts alone (see docs/project-rules.md).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest
from support import FIXTURES, run_cli

from ms_lint.analysis import compile_context, run_mode
from ms_lint.catalog import all_rules, pylint_message
from ms_lint.engine import Linter
from ms_lint.settings import Settings

SYMBOLS = {pylint_message(rule, severity)[1]: rule.code for rule in all_rules()
           for severity in ("error", "warning", "info")}  # each rule's symbol at each severity

MODEL = """
import mindspore as ms
from mindspore import nn


class Head(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 2)
        self.dense.to_float(ms.float32)

    def construct(self, x):
        return self.dense(x)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.head = Head()

    def construct(self, x):
        return self.head(x)


class Plain(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 2)

    def construct(self, x):
        return self.dense(x)


class Video(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(1, 4, 3, pad_mode="valid")

    def construct(self, x):
        return self.conv(x)
"""

AMP_PROJECT = {
    "model.py": MODEL,
    "setup_net.py": """
        import mindspore as ms
        from model import Plain


        def keep_fp32(network):
            for _, cell in network.cells_and_names():
                cell.to_float(ms.float32)


        def build():
            net = Plain()
            net.dense.to_float(ms.float32)
            return net
        """,
    # implements AMP itself (dispatches on the level): its casts are its own policy
    "amp_utils.py": """
        import mindspore as ms


        def apply_amp(network, amp_level="O0"):
            if amp_level == "O2":
                network.to_float(ms.float16)
                for _, cell in network.cells_and_names():
                    cell.to_float(ms.float32)
            return network
        """,
    "train.py": """
        import mindspore as ms
        from mindspore import nn
        from mindspore.train import Model
        from amp_utils import apply_amp
        from model import Net, Plain, Video
        from setup_net import build, keep_fp32

        ms.set_device("Ascend")
        loss_fn = nn.MSELoss()
        opt = nn.Momentum(Plain().trainable_params(), 0.1, 0.9)

        in_init = Model(Net(), loss_fn, opt, amp_level="O2")
        from_factory = Model(build(), loss_fn, opt, amp_level="O3")
        helped = Plain()
        keep_fp32(helped)
        through_helper = Model(helped, loss_fn, opt, amp_level="O2")
        own_amp = apply_amp(Plain(), "O2")
        not_reported = Model(own_amp, loss_fn, opt, amp_level="O2")
        clean = Model(Plain(), loss_fn, opt, amp_level="O2")
        video = Model(Video(), loss_fn, opt)
        """,
}
# (file, row, code) each front end reports; flake8 sees no cast and no Conv3d in train.py alone
AMP_WHOLE_PROJECT = {("train.py", 12, "MSL050"), ("train.py", 13, "MSL050"), ("train.py", 16, "MSL050"),
                     ("train.py", 20, "MSL052")}

SEED_PROJECT = {
    "model.py": MODEL,
    "setup_env.py": """
        import mindspore as ms


        def set_env(seed):
            ms.set_seed(seed)
        """,
    # seeds through another module; its own text never mentions a seed
    "env.py": """
        from configure import configure


        def init_env():
            configure()
        """,
    "configure.py": """
        import mindspore as ms


        def configure():
            ms.set_seed(0)
        """,
    "seeded_at_import.py": """
        import mindspore as ms

        ms.set_seed(3)
        """,
    "lib/__init__.py": "",
    "lib/dist.py": """
        from mindspore.communication import get_rank, init


        def rank():
            init()
            return get_rank()
        """,
    "lib/trainer.py": """
        from mindspore import nn
        from mindspore.communication import init


        def fit(net):
            init()
            return nn.Momentum(net.trainable_params(), 0.1, 0.9)
        """,
    "train_unseeded.py": """
        from mindspore import nn
        from mindspore.communication import init
        from mindspore.train import Model
        from model import Plain

        init()
        net = Plain()
        model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9))
        """,
    "train_setup.py": """
        from mindspore import nn
        from mindspore.communication import init
        from mindspore.train import Model
        from model import Plain
        from setup_env import set_env

        set_env(1)
        init()
        net = Plain()
        model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9))
        """,
    "train_transitive.py": """
        from mindspore import nn
        from mindspore.communication import init
        from model import Plain
        from env import init_env


        def main():
            init_env()
            init()
            net = Plain()
            return nn.Momentum(net.trainable_params(), 0.1, 0.9)


        if __name__ == "__main__":
            main()
        """,
    "train_import.py": """
        import seeded_at_import
        from mindspore import nn
        from mindspore.communication import init
        from model import Plain

        init()
        optimizer = nn.Adam(Plain().trainable_params())
        """,
    "train_late.py": """
        import mindspore as ms
        from mindspore import nn
        from mindspore.communication import init
        from model import Plain


        def main():
            init()
            net = Plain()
            ms.set_seed(1)
            return nn.Momentum(net.trainable_params(), 0.1, 0.9)
        """,
    "train_broadcast.py": """
        import mindspore as ms
        from mindspore import nn
        from mindspore.communication import init
        from model import Plain

        init()
        ms.set_auto_parallel_context(parallel_mode="data_parallel", parameter_broadcast=True)
        optimizer = nn.SGD(Plain().trainable_params())
        """,
    "eval.py": """
        from mindspore import nn
        from mindspore.communication import init
        from mindspore.train import Model
        from model import Plain

        if __name__ == "__main__":
            init()
            model = Model(Plain(), nn.MSELoss(), metrics={"loss"})
            print(model.eval(None))
        """,
    "run_parallel.py": """
        import mindspore as ms
        from mindspore import nn
        from model import Plain

        if __name__ == "__main__":
            ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL)
            optimizer = nn.Momentum(Plain().trainable_params(), 0.1, 0.9)
        """,
    # fine-tuning (GPT2's and cambrian's scripts, issue 19's third sample): a warning, since a checkpoint of every
    # weight makes the ranks start alike
    "train_finetune.py": """
        import mindspore as ms
        from mindspore import nn
        from mindspore.communication import init
        from model import Plain


        def main(checkpoint):
            init()
            net = Plain()
            ms.load_param_into_net(net, ms.load_checkpoint(checkpoint))
            return nn.Momentum(net.trainable_params(), 0.1, 0.9)
        """,
    # a zoo's export of what it trained (arcface's modelarts/start.py): the load is not where training starts
    "train_then_export.py": """
        import mindspore as ms
        from mindspore import nn
        from mindspore.communication import init
        from model import Plain


        def main(checkpoint):
            init()
            net = Plain()
            optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
            ms.load_param_into_net(net, ms.load_checkpoint(checkpoint))
            return optimizer
        """,
    # a model zoo's optional resume: most runs start from each rank's own draw
    "train_resume.py": """
        import mindspore as ms
        from mindspore import nn
        from mindspore.communication import init
        from model import Plain


        def main(checkpoint=None):
            init()
            net = Plain()
            if checkpoint:
                ms.load_param_into_net(net, ms.load_checkpoint(checkpoint))
            return nn.Momentum(net.trainable_params(), 0.1, 0.9)
        """,
}
SEED_WHOLE_PROJECT = {("train_unseeded.py", 6, "MSL053"), ("train_late.py", 8, "MSL053"),
                      ("run_parallel.py", 6, "MSL053"), ("train_finetune.py", 8, "MSL053"),
                      ("train_resume.py", 8, "MSL053"), ("train_then_export.py", 8, "MSL053")}

CPU_PROJECT = {
    "model.py": MODEL,
    "trainer.py": """
        from mindspore import nn
        from mindspore.train import Model


        def create(net):
            return Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9), amp_level="O2")
        """,
    "train.py": """
        import mindspore as ms
        from model import Plain
        from trainer import create

        ms.set_device("CPU")
        model = create(Plain())
        """,
}


# A repository of independent projects (a model zoo): the same module names in every project, none a package of
# the repository. Project a's network casts a layer and its helper does not seed; project b's does neither.
_TRAIN = """
    from mindspore import nn
    from mindspore.communication import init
    from mindspore.train import Model
    from src.model import Net
    from src.utils import prepare

    prepare()
    init()
    net = Net()
    model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9), amp_level="O2")
    """
ZOO = {
    "zoo/a/train.py": _TRAIN,
    "zoo/a/src/__init__.py": "",
    "zoo/a/src/model.py": MODEL,
    "zoo/a/src/utils.py": """
        def prepare():
            return None
        """,
    "zoo/b/train.py": _TRAIN,
    "zoo/b/src/__init__.py": "",
    "zoo/b/src/model.py": MODEL.replace("self.dense.to_float(ms.float32)", "pass"),
    "zoo/b/src/utils.py": """
        import mindspore as ms


        def prepare():
            ms.set_seed(1)
        """,
}
ZOO_FINDINGS = {("zoo/a/train.py", 8, "MSL053"), ("zoo/a/train.py", 10, "MSL050")}


def write(tmp_path, files):
    (tmp_path / "pyproject.toml").write_text("[tool.ms_lint]\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    compile_context.forget_projects()  # the CLI runs in this process: scan the new files
    run_mode.forget_projects()
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.py"))


def cli(tmp_path, *extra):
    code, out = run_cli("check", "--no-cache", "--output-format", "json", *extra, ".", cwd=tmp_path)
    assert code in (0, 1), out
    return {(_relative(item["filename"]), item["location"]["row"], item["code"]) for item in json.loads(out)}


def pylint(tmp_path, files, jobs, codes):
    run = subprocess.run(
        [sys.executable, "-m", "pylint", "--load-plugins", "ms_lint", "--disable", "all",
         "--enable", ",".join(s for s, c in SYMBOLS.items() if c in codes), "--output-format", "json", "-j",
         str(jobs), *files],
        cwd=tmp_path, capture_output=True, text=True)
    assert run.stdout.strip().startswith("["), run.stderr
    return {(_relative(item["path"]), item["line"], SYMBOLS[item["symbol"]]) for item in json.loads(run.stdout)}


def flake8(tmp_path, codes):
    run = subprocess.run([sys.executable, "-m", "flake8", "--select", ",".join(codes),
                          "--format", "%(path)s|%(row)d|%(code)s", "."], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode in (0, 1), run.stderr
    found = set()
    for line in run.stdout.splitlines():
        path, row, code = line.split("|")
        found.add((_relative(path), int(row), code))
    return found


def _relative(path: str) -> str:
    return path[2:] if path.startswith("./") else path


@pytest.mark.parametrize("jobs", [1, 2])
def test_amp_rules_follow_the_network_across_modules(tmp_path, jobs):
    files = write(tmp_path, AMP_PROJECT)
    codes = ("MSL050", "MSL052")
    assert cli(tmp_path, "--select", ",".join(codes)) == AMP_WHOLE_PROJECT
    assert pylint(tmp_path, files, jobs, codes) == AMP_WHOLE_PROJECT


def test_flake8_judges_the_amp_rules_one_file_at_a_time(tmp_path):
    write(tmp_path, AMP_PROJECT)
    assert flake8(tmp_path, ("MSL050", "MSL052")) == set()
    # the same network, cast, trained and fitted with O2 in one file: flake8 reports it
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import mindspore as ms
        from mindspore import nn
        from mindspore.train import Model
        from model import Plain

        net = Plain()
        net.dense.to_float(ms.float32)
        model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9), amp_level="O2")
        """).lstrip("\n"))
    assert flake8(tmp_path, ("MSL050",)) == {("train.py", 8, "MSL050")}


def test_messages_name_the_cast_in_the_other_module(tmp_path):
    write(tmp_path, AMP_PROJECT)
    code, out = run_cli("check", "--no-cache", "--select", "MSL050,MSL052", ".", cwd=tmp_path)
    assert code == 1
    assert "`self.dense.to_float(ms.float32)` (in `Head.__init__`, model.py:9)" in out
    assert "`net.dense.to_float(ms.float32)` (setup_net.py:12)" in out
    assert "`cell.to_float(ms.float32)` (setup_net.py:7)" in out
    assert "`nn.Conv3d` (model.py:36)" in out


def test_unsafe_fix_removes_the_level_with_the_project_in_view(tmp_path):
    write(tmp_path, AMP_PROJECT)
    code, _ = run_cli("check", "--no-cache", "--select", "MSL050", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert code == 0
    text = (tmp_path / "train.py").read_text()
    assert 'in_init = Model(Net(), loss_fn, opt)\n' in text
    assert 'from_factory = Model(build(), loss_fn, opt)\n' in text
    assert 'clean = Model(Plain(), loss_fn, opt, amp_level="O2")\n' in text


@pytest.mark.parametrize("jobs", [1, 2])
def test_seeds_are_followed_into_setup_modules(tmp_path, jobs):
    files = write(tmp_path, SEED_PROJECT)
    assert cli(tmp_path, "--select", "MSL053") == SEED_WHOLE_PROJECT
    assert pylint(tmp_path, files, jobs, ("MSL053",)) == SEED_WHOLE_PROJECT


def test_a_script_that_loads_a_checkpoint_gets_a_warning(tmp_path):
    write(tmp_path, SEED_PROJECT)
    code, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL053", ".", cwd=tmp_path)
    found = {item["filename"].removeprefix("./"): (item["severity"], item["message"]) for item in json.loads(out)}
    assert found["train_finetune.py"] == ("warning", (
        "`init()` starts distributed training in an entry script that never calls `set_seed`: every rank initialises "
        "different weights, unless `load_param_into_net` (line 10) loads every weight from a checkpoint; call "
        "`set_seed(...)` before building the network"))
    assert found["train_unseeded.py"][0] == found["train_resume.py"][0] == "error"
    assert found["train_then_export.py"][0] == "error"


def test_flake8_counts_calls_into_other_modules_as_possible_seeds(tmp_path):
    write(tmp_path, SEED_PROJECT)
    # set_env, init_env (through configure) and seeded_at_import may seed: flake8 cannot see, and stays silent
    assert flake8(tmp_path, ("MSL053",)) == SEED_WHOLE_PROJECT


def test_late_seed_and_missing_seed_messages(tmp_path):
    write(tmp_path, SEED_PROJECT)
    _, out = run_cli("check", "--no-cache", "--select", "MSL053", ".", cwd=tmp_path)
    assert "train_late.py:8:5: MSL053 [error] `init()` starts distributed training in an entry script that seeds " \
           "only after building the network" in out
    assert "train_unseeded.py:6:1: MSL053 [error] `init()` starts distributed training in an entry script that " \
           "never calls `set_seed`" in out


def test_seed_fix_uses_the_module_alias_or_imports_set_seed(tmp_path):
    write(tmp_path, SEED_PROJECT)
    code, _ = run_cli("check", "--no-cache", "--select", "MSL053", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert code == 0  # every script is seeded before init() now
    unseeded = (tmp_path / "train_unseeded.py").read_text()
    assert "from mindspore import nn, set_seed\n" in unseeded and "\nset_seed(1)\ninit()\n" in unseeded
    late = (tmp_path / "train_late.py").read_text()
    assert "    ms.set_seed(1)\n    init()\n" in late
    assert "    ms.set_seed(1)\n    ms.set_auto_parallel_context(" in (tmp_path / "run_parallel.py").read_text()
    assert cli(tmp_path, "--select", "MSL053") == set()


def test_cpu_target_set_by_the_entry_script_reaches_the_trainer_module(tmp_path):
    files = write(tmp_path, CPU_PROJECT)
    expected = {("trainer.py", 6, "MSL051")}
    assert cli(tmp_path, "--select", "MSL051") == expected
    assert pylint(tmp_path, files, 2, ("MSL051",)) == expected
    assert flake8(tmp_path, ("MSL051",)) == expected  # the target is a project setting: every front end has it
    assert cli(tmp_path, "--select", "MSL051", "--target", "ascend") == set()


def test_a_network_stored_by_a_trainer_object_is_followed(tmp_path):
    write(tmp_path, {
        "trainer.py": """
            from mindspore import nn
            from mindspore.train import Model


            class Trainer:
                def __init__(self, network, loss_fn):
                    self.network = network
                    self.loss_fn = loss_fn

                def build(self):
                    optimizer = nn.Momentum(self.network.trainable_params(), 0.1, 0.9)
                    return Model(self.network, self.loss_fn, optimizer, amp_level="O2")
            """,
        "train.py": """
            import mindspore as ms
            from mindspore import nn
            from model import Plain
            from trainer import Trainer

            net = Plain()
            net.dense.to_float(ms.float32)
            model = Trainer(net, nn.MSELoss()).build()
            """,
        "model.py": MODEL,
    })
    assert cli(tmp_path, "--select", "MSL050") == {("trainer.py", 12, "MSL050")}


def test_whether_an_unlinted_module_may_seed_does_not_depend_on_what_was_asked_before(tmp_path):
    # a -> b -> c -> d -> s, and s seeds: b reaches it through three imports, a through four (one too many)
    for name, imported in (("a", "b"), ("b", "c"), ("c", "d"), ("d", "s")):
        (tmp_path / f"{name}.py").write_text(f"import {imported}\n")
    (tmp_path / "s.py").write_text("import mindspore\nmindspore.set_seed(1)\n")
    script = "from mindspore.communication import init\nimport {}\n\ninit()\n"
    (tmp_path / "only_a.py").write_text(script.format("a"))
    (tmp_path / "both.py").write_text(script.format("a, b"))
    for asked_before in ([], ["only_a.py"]):  # a first: the search from a passes b at a depth b's own search has not
        linter = Linter(Settings(select=("MSL053",)))
        for name in asked_before:
            assert linter.lint_path(str(tmp_path / name)).facts["MSL053"]["seed_mentions"] == []
        # modules are named by their files (`ms_lint.analysis.locations`)
        assert linter.lint_path(str(tmp_path / "both.py")).facts["MSL053"]["seed_mentions"] == [str(tmp_path / "b")]


def test_a_name_holding_seed_is_no_seeding_call(tmp_path):
    (tmp_path / "config.py").write_text("class Config:\n    def __init__(self):\n        self.c_seed = 3\n")
    (tmp_path / "helper.py").write_text("import numpy as np\n\ndef prepare():\n    np.random.seed(3)\n")
    (tmp_path / "train.py").write_text(
        "from mindspore.communication import init\nimport config\nimport helper\n\ninit()\n")
    linter = Linter(Settings(select=("MSL053",)))
    assert linter.lint_path(str(tmp_path / "train.py")).facts["MSL053"]["seed_mentions"] == [str(tmp_path / "helper")]


@pytest.mark.parametrize("jobs", [1, 2])
def test_projects_of_one_repository_are_judged_apart(tmp_path, jobs):
    files = write(tmp_path, ZOO)
    codes = ("MSL050", "MSL053")
    assert cli(tmp_path, "--select", ",".join(codes)) == ZOO_FINDINGS
    assert pylint(tmp_path, files, jobs, codes) == ZOO_FINDINGS


SIBLING_SCRIPTS_FINDINGS = {("a/start.py", 9, "MSL050"), ("a/train.py", 9, "MSL052")}


def write_sibling_scripts(tmp_path):
    """fixtures/projects/sibling_scripts: `a/` and `b/` each with a `start.py` and a `train.py`, one group."""
    shutil.copytree(FIXTURES / "projects" / "sibling_scripts", tmp_path, dirs_exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[tool.ms_lint]\n")
    compile_context.forget_projects()
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.py"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_same_named_scripts_of_sibling_projects_keep_their_networks_apart(tmp_path, jobs):
    """Issue 19: `b/start.py`'s `net` is not `a/start.py`'s (it had the key `global:start.net`), and a finding
    cites only its own project's cast, by its own line."""
    files = write_sibling_scripts(tmp_path)
    codes = ("MSL050", "MSL052")
    code, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", ",".join(codes), ".",
                        cwd=tmp_path)
    assert code == 1, out
    found = json.loads(out)
    assert {(_relative(i["filename"]), i["location"]["row"], i["code"]) for i in found} == SIBLING_SCRIPTS_FINDINGS
    assert all("(line 7)" in item["message"] for item in found)
    assert pylint(tmp_path, files, jobs, codes) == SIBLING_SCRIPTS_FINDINGS
    assert flake8(tmp_path, codes) == SIBLING_SCRIPTS_FINDINGS  # each cast is in the training call's file


def test_a_script_above_its_project_imports_the_project_s_own_src(tmp_path):
    """Issue 19: a model zoo's `modelarts/start.py` runs from its project's directory and imports that project's
    `src`; a `src` only unrelated projects hold is none of its modules (it was the first root's)."""
    files = {"zoo/a/src/__init__.py": "", "zoo/a/src/loss.py": "", "zoo/a/modelarts/start.py": "",
             "zoo/b/src/__init__.py": "", "zoo/b/src/loss.py": "", "zoo/c/modelarts/start.py": ""}
    write(tmp_path, files)
    linter = Linter(Settings())
    for name in files:
        linter.index.add_file(str(tmp_path / name))
    with linter.index.importing(str(tmp_path / "zoo/a/modelarts/start.py")):
        assert linter.index.find("src.loss") == str(tmp_path / "zoo/a/src/loss.py")
    with linter.index.importing(str(tmp_path / "zoo/c/modelarts/start.py")):
        assert linter.index.find("src.loss") is None
    with linter.index.importing(str(tmp_path / "zoo/b/src/loss.py")):
        assert linter.index.find("src.loss") == str(tmp_path / "zoo/b/src/loss.py")


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names")
def test_a_standard_library_name_is_another_project_s_module_only_from_above(tmp_path):
    """`import io` in `zoo/a` is the standard library's, not `zoo/b/tools/io.py` (it joined unrelated projects
    into one group, judged with the first one's device target)."""
    files = {"zoo/a/train.py": "import io\n", "zoo/b/tools/io.py": "", "zoo/b/tools/read.py": "import io\n"}
    write(tmp_path, files)
    linter = Linter(Settings())
    for name in files:
        linter.index.add_file(str(tmp_path / name))
    with linter.index.importing(str(tmp_path / "zoo/a/train.py")):
        assert linter.index.find("io") is None
    with linter.index.importing(str(tmp_path / "zoo/b/tools/read.py")):
        assert linter.index.find("io") == str(tmp_path / "zoo/b/tools/io.py")


def test_whether_an_unlinted_module_may_seed_is_asked_of_the_importer_s_own_module(tmp_path):
    """`src.utils` of `zoo/a` seeds, `zoo/b`'s does not: the answer for `a/train.py` is not `b/train.py`'s."""
    script = "from mindspore.communication import init\nimport src.utils\n\n\nif __name__ == '__main__':\n    init()\n"
    write(tmp_path, {"zoo/a/train.py": script, "zoo/a/src/utils.py": "import mindspore\nmindspore.set_seed(1)\n",
                     "zoo/b/train.py": script, "zoo/b/src/utils.py": "import os\n"})
    code, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL053", "zoo/a/train.py",
                        "zoo/b/train.py", cwd=tmp_path)
    assert {(item["filename"], item["location"]["row"]) for item in json.loads(out)} == {("zoo/b/train.py", 6)}


def test_a_seed_helper_re_exported_by_a_star_import_counts(tmp_path):
    """Issue 19 (mindcv vendored in a community port): `from mindcv.utils import set_seed` where the package
    re-exports it with `from .random import *`; and an eval script's `get_optim_policies()` trains nothing."""
    files = {
        "mindcv/__init__.py": "",
        "mindcv/utils/__init__.py": "from .random import *\n",
        "mindcv/utils/random.py": "import mindspore as ms\n\n\ndef set_seed(seed=42):\n    ms.set_seed(seed)\n",
        "train.py": """
            from mindspore import nn
            from mindspore.communication import init
            from mindcv.utils import set_seed

            init()
            set_seed(1)
            net = nn.Dense(2, 2)
            opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
            """,
        "eval.py": """
            from mindspore import nn
            from mindspore.communication import init

            if __name__ == "__main__":
                init()
                net = nn.Dense(2, 2)
                policies = net.get_optim_policies()
            """,
        "train_unseeded.py": """
            from mindspore import nn
            from mindspore.communication import init

            init()
            net = nn.Dense(2, 2)
            opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
            """,
    }
    write(tmp_path, files)
    assert cli(tmp_path, "--select", "MSL053") == {("train_unseeded.py", 4, "MSL053")}


def test_an_attribute_another_module_sets_through_exec_or_setattr_is_a_warning(tmp_path):
    """Issue 19 (a community meta-learning port): `self.w_step_size` is read in construct and set from the
    training loop with `exec('self.model.{}.{} = {}'.format(name, 'w_step_size', lr))`."""
    files = {
        "ops.py": """
            from mindspore import nn

            class MetaGate(nn.Cell):
                def construct(self, x):
                    return x * self.w_step_size + self.undefined_one
            """,
        "train_loop.py": """
            def update(model, name, lr):
                exec('model.{}.{} = {}'.format(name, 'w_step_size', lr))
            """,
    }
    write(tmp_path, files)
    found = json.loads(run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL032", ".",
                               cwd=tmp_path)[1])
    assert [(item["message"].split("`")[1], item["severity"]) for item in found] == [
        ("self.w_step_size", "warning"), ("self.undefined_one", "error")]


GRAPH_MODE_PROJECT = {
    "train.py": '''
        import mindspore as ms
        from models import Attention

        ms.set_context(mode=ms.GRAPH_MODE)
        net = Attention()
    ''',
    "models.py": '''
        from mindspore import nn


        class Attention(nn.Cell):
            def construct(self, q, k):
                return q @ k.transpose(1, 2)
    ''',
    "eager_models.py": '''
        from mindspore import nn


        class Eager(nn.Cell):
            def construct(self, q, k):
                return q @ k.transpose(1, 2)
    ''',
    "demo.py": '''
        import mindspore as ms
        from eager_models import Eager

        # ms.set_context(mode=ms.GRAPH_MODE)  not supported yet
        ms.set_context(mode=ms.PYNATIVE_MODE)
    ''',
}


@pytest.mark.parametrize("jobs", [1, 2])
def test_pytorch_axis_methods_are_errors_only_where_graph_mode_is_selected(tmp_path, jobs):
    """MSL068: the script that selects GRAPH_MODE makes what it imports graph code; a PyNative project (and a
    commented-out selection) leaves PyTorch's forms alone, since PyNative runs them."""
    files = write(tmp_path, GRAPH_MODE_PROJECT)
    assert cli(tmp_path, "--select", "MSL068") == {("models.py", 6, "MSL068")}
    assert pylint(tmp_path, files, jobs, ("MSL068",)) == {("models.py", 6, "MSL068")}
    assert flake8(tmp_path, ("MSL068",)) == set()  # one file at a time: models.py does not select it


SEED_HELPER_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/utils/__init__.py": '''
        from .random import *
    ''',
    "pkg/utils/random.py": '''
        import mindspore as ms

        __all__ = ["set_seed", "seed_alike"]


        def set_seed(seed, rank=0):
            ms.set_seed(seed + rank)


        def seed_alike(seed):
            ms.set_seed(seed)
    ''',
    "train.py": '''
        from mindspore.communication import get_rank, init

        from pkg.utils import seed_alike, set_seed

        init()
        set_seed(42, get_rank())
        seed_alike(42)
    ''',
    "eval.py": '''
        from pkg.utils import set_seed

        set_seed(42, 0)
    ''',
}
SEED_HELPER_FINDINGS = {("train.py", 6, "MSL054"), ("pkg/utils/random.py", 7, "MSL054")}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_rank_passed_into_a_seed_helper_is_reported_at_the_call_and_the_helper(tmp_path, jobs):
    """Issue 15: the helper is reached through a star re-export; it is reported only because a caller passes the
    rank (eval.py passes 0, and seed_alike never sees a rank)."""
    files = write(tmp_path, SEED_HELPER_PROJECT)
    assert cli(tmp_path, "--select", "MSL054") == SEED_HELPER_FINDINGS
    assert pylint(tmp_path, files, jobs, ("MSL054",)) == SEED_HELPER_FINDINGS


def test_flake8_sees_no_caller_of_a_seed_helper_in_another_file(tmp_path):
    write(tmp_path, SEED_HELPER_PROJECT)
    assert flake8(tmp_path, ("MSL054",)) == set()  # one file at a time: neither half alone is a finding


def test_msl033_is_silent_on_an_abstract_base_whose_subclass_in_another_module_defines_construct(tmp_path):
    """minddet's `BaseDetector` and `SingleStageDetector` (issue 19's fourteenth sample) define `forward` only; the
    detector deriving from them, two levels down in another module, defines `construct`. A base no subclass
    completes is still reported."""
    write(tmp_path, {
        "det/__init__.py": "",
        "det/base.py": """
            from mindspore import nn


            class BaseDetector(nn.Cell):
                def forward(self, x):
                    return self.construct(x)


            class Unfinished(nn.Cell):
                def forward(self, x):
                    return x
            """,
        "det/single_stage.py": """
            from .base import BaseDetector


            class SingleStageDetector(BaseDetector):
                def forward(self, x):
                    return self.construct(x) + 1
            """,
        "det/pillars.py": """
            from .single_stage import SingleStageDetector


            class PointPillars(SingleStageDetector):
                def construct(self, x):
                    return x * 2
            """,
    })
    _, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL033", ".", cwd=tmp_path)
    assert {(item["filename"].removeprefix("./"), item["location"]["row"]) for item in json.loads(out)} == {
        ("det/base.py", 9)}, out


def test_mindspores_own_sources_are_not_checked_against_the_installed_version(tmp_path):
    """A repository that vendors MindSpore's (older) sources resolves `nn`, `ops` and `ops.operations` to its own
    tree: MSL065, MSL067 and MSL078 leave its names alone (issue 19's community comparison: an old MindSpore tree's
    `P.IsSubClass`, `nn.TensorArray`)."""
    code = ("from mindspore import nn, ms_function\nfrom mindspore.ops import operations as P\n"
            "from mindspore.nn import TensorArray\n\ncheck = P.IsSubClass()\narray = nn.TensorArray()\n")
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "probe.py").write_text(code)
    found = {(item["location"]["row"], item["code"]) for item in json.loads(run_cli(
        "check", "--no-cache", "--output-format", "json", "--select", "MSL065,MSL067,MSL078", ".", cwd=tmp_path)[1])}
    assert found == {(1, "MSL065"), (3, "MSL078"), (5, "MSL067"), (6, "MSL067")}
    # a directory of repositories: one vendors MindSpore's sources (`mindspore/python/mindspore`, as MindSpore's
    # repository lays them out), the other is a port whose findings stay
    vendored = tmp_path / "vendored"
    (vendored / "mindspore" / "python" / "mindspore").mkdir(parents=True)
    (vendored / "mindspore" / "python" / "mindspore" / "__init__.py").write_text("")
    (tmp_path / "tests").rename(vendored / "tests")
    (tmp_path / "port").mkdir()
    (tmp_path / "port" / "probe.py").write_text(code)
    run_mode.forget_projects()
    found = {(item["filename"].removeprefix("./"), item["location"]["row"], item["code"]) for item in json.loads(
        run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL065,MSL067,MSL078", ".",
                cwd=tmp_path)[1])}
    assert found == {("port/probe.py", 1, "MSL065"), ("port/probe.py", 3, "MSL078"), ("port/probe.py", 5, "MSL067"),
                     ("port/probe.py", 6, "MSL067")}


def test_a_class_defined_after_an_import_of_its_name_rebinds_it(tmp_path):
    """dsic-mindspore (issue 19's sixteenth sample) imports `CompressionModel` from a project module, then defines
    its own `CompressionModel` that sets `entropy_bottleneck1`: the subclass's base is the local one."""
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "models.py").write_text(
        "import mindspore.nn as nn\n\n\nclass CompressionModel(nn.Cell):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.entropy_bottleneck = nn.Dense(n, n)\n")
    local = ("\n\nclass CompressionModel(nn.Cell):\n    def __init__(self, n):\n        super().__init__()\n"
             "        self.entropy_bottleneck1 = nn.Dense(n, n)\n")
    subclass = ("\n\nclass DSIC(CompressionModel):\n    def __init__(self, n=4):\n        super().__init__(n)\n\n"
                "    def construct(self, x):\n        return self.entropy_bottleneck1(x)\n")
    head = "import mindspore.nn as nn\nfrom lib.models import CompressionModel\n"

    def found(text):
        (tmp_path / "net.py").write_text(text)
        return [item["location"]["row"] for item in json.loads(run_cli(
            "check", "--no-cache", "--output-format", "json", "--select", "MSL032", ".", cwd=tmp_path)[1])]

    assert found(head + local + subclass) == []
    assert found(head + subclass) == [10]  # the imported base does not set it
