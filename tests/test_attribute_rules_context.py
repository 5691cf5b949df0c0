"""MSL032/MSL033/MSL036 facts a single-file fixture cannot hold: bases in other project modules, the mode a module
selects."""
from __future__ import annotations

import json
import textwrap

from support import run_cli

from ms_lint import lint_paths
from ms_lint.settings import Settings

SETTINGS = Settings(select=("MSL032", "MSL033", "MSL036"))


def findings(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return sorted((result.path.split("/")[-1], d.row, d.code)
                  for result in lint_paths([str(tmp_path)], SETTINGS) for d in result.diagnostics)


def test_attributes_of_a_base_class_in_another_project_module_count(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": """
            from mindspore import nn

            class Block(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Dense(2, 2)

                def construct(self, x):
                    return self.proj(x)
            """,
        "pkg/head.py": """
            from .base import Block

            class Head(Block):
                def construct(self, x):
                    return self.proj(x) + self.porj(x)

            class Forward(Block):
                def forward(self, x):
                    return x
            """,
    }
    # `porj` is undefined; `proj` comes from pkg/base.py; Block defines construct, so Forward is fine
    assert findings(tmp_path, files) == [("head.py", 6, "MSL032")]


def test_a_base_class_outside_the_project_silences_msl032(tmp_path):
    files = {"net.py": """
        from timm_ms.layers import Backbone

        class Net(Backbone):
            def construct(self, x):
                return self.stem(x)
        """}
    assert findings(tmp_path, files) == []


def test_msl036_is_silent_in_modules_that_select_pynative_only(tmp_path):
    script = """
        import mindspore as ms
        from mindspore import nn

        ms.set_context(mode={mode})
        net = nn.BatchNorm1d(2)
        net(x)
        net.set_train()
        """
    pynative = findings(tmp_path / "a", {"train.py": script.format(mode="ms.PYNATIVE_MODE")})
    graph = findings(tmp_path / "b", {"train.py": script.format(mode="ms.GRAPH_MODE")})
    from_arguments = findings(tmp_path / "c", {"train.py": script.format(mode="args.mode")})
    assert pynative == [] and graph == from_arguments == [("train.py", 8, "MSL036")]


def test_msl005_follows_thread_objects_assigned_in_a_base_class_of_another_module(tmp_path):
    base = """
        from mindspore import nn
        {imports}

        class {name}(nn.Cell):
            def __init__(self):
                super().__init__()
                self.lock = Lock()
        """
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": base.format(imports="from threading import Lock", name="Locked"),
        # its Lock is no thread object: its module names no thread module, whatever the subclass's module imports
        "pkg/other.py": base.format(imports="from pkg.locks import Lock", name="Plain"),
        "pkg/model.py": """
            from threading import Lock
            from .base import Locked
            from .other import Plain

            class Net(Locked):
                def construct(self, x):
                    self.lock.acquire()
                    return x

            class Quiet(Plain):
                def construct(self, x):
                    self.lock.acquire()
                    return x
            """,
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    found = sorted((result.path.split("/")[-1], d.row, d.code)
                   for result in lint_paths([str(tmp_path)], Settings(select=("MSL005",))) for d in result.diagnostics)
    assert found == [("model.py", 8, "MSL005")]


def test_a_templates_subclass_in_another_module_defines_what_it_reads(tmp_path):
    """SMPD (issue 19's seventh sample): `_fasterRCNN` leaves `_init_modules` to `vgg16`, in another module, which
    builds `RCNN_base` and defines `sens_branch` as a method; `RCNN_scale`, which nothing defines, is reported.
    The template's module is named from `faster_rcnn/` while the subclass imports it through the namespace
    directory above (`from model.faster_rcnn.faster_rcnn import ...`)."""
    files = {
        "model/faster_rcnn/__init__.py": "",
        "model/faster_rcnn/faster_rcnn.py": """
            from mindspore import nn

            class FasterRCNN(nn.Cell):
                def __init__(self, classes):
                    super().__init__()
                    self.classes = classes

                def create_architecture(self):
                    self._init_modules()

                def construct(self, x):
                    return self.sens_branch(self.RCNN_base(x)) * self.RCNN_scale
            """,
        "model/faster_rcnn/vgg16.py": """
            from mindspore import nn
            from model.faster_rcnn.faster_rcnn import FasterRCNN

            class vgg16(FasterRCNN):
                def _init_modules(self):
                    self.RCNN_base = nn.Dense(4, 4)

                def sens_branch(self, x):
                    return x
            """,
    }
    findings(tmp_path, files)  # (writes them)

    def cli():  # the CLI knows every file of the run before it lints one
        code, out = run_cli("check", "--no-cache", "--output-format", "json", "--select", "MSL032", ".",
                            cwd=tmp_path)
        return [(item["filename"].split("/")[-1], item["location"]["row"]) for item in json.loads(out)]

    assert cli() == [("faster_rcnn.py", 13)]
    (tmp_path / "model/faster_rcnn/vgg16.py").unlink()  # no subclass in the run: everything it reads is undefined
    assert cli() == [("faster_rcnn.py", 13)] * 3
