"""Jupyter notebooks: code cells linted as one module, findings located by cell, fixes written into the JSON."""
from __future__ import annotations

import io
import json
import sys

from support import CLEAN, run_cli

CELLS = [
    ("markdown", "# A ported model\n"),
    ("code", "%matplotlib inline\n!pip install mindspore\nimport numpy as np\nfrom mindspore import nn\n"),
    ("code", "class Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
             "        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]\n\n"
             "    def construct(self, x):\n        return np.exp(x)\n"),
    ("code", "%%time\nnet = Net()\nfiles = !ls\n"),
    ("code", "files = !ls\nnet?\nif True:\n    %time net\nprint(files)"),
]


def notebook(tmp_path, cells=CELLS, name="model.ipynb", indent=1):
    document = {"cells": [{"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True),
                           **({"execution_count": None, "outputs": []} if kind == "code" else {})}
                          for kind, text in cells],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def test_findings_are_located_by_cell(tmp_path):
    path = notebook(tmp_path)
    code, out = run_cli("check", "--no-cache", "--output-format", "json", str(path))
    found = [(item["code"], item["cell"], item["location"]["row"], item["location"]["column"])
             for item in json.loads(out)]
    assert code == 1 and found == [("MSL030", 3, 4, 9), ("MSL001", 3, 7, 16)]  # magics and shell lines: silent
    text = run_cli("check", "--no-cache", str(path))[1]
    assert f"{path}:cell 3:7:16: MSL001" in text
    assert "\n7 |         return np.exp(x)\n  |                ^^^^^^^^^\n" in text  # the cell's own lines


def test_fixes_change_only_the_cells_source_and_keep_magics(tmp_path):
    path = notebook(tmp_path)
    before = json.loads(path.read_text(encoding="utf-8"))
    assert run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", str(path))[0] == 0
    after = json.loads(path.read_text(encoding="utf-8"))
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [1, 2]  # the import cell (ops) and the model cell
    assert after["cells"][1]["source"][:2] == ["%matplotlib inline\n", "!pip install mindspore\n"]
    assert "".join(after["cells"][2]["source"]).endswith("return ops.exp(x)\n")
    assert "nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])" in "".join(after["cells"][2]["source"])
    assert after["cells"][3:] == before["cells"][3:] and after["metadata"] == before["metadata"]
    fixed = path.read_text(encoding="utf-8")
    assert run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", str(path)) == (0, CLEAN)
    assert path.read_text(encoding="utf-8") == fixed  # a second run changes nothing


def test_the_files_formatting_is_kept(tmp_path):
    path = notebook(tmp_path, indent=2)
    run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", str(path))
    text = path.read_text(encoding="utf-8")
    assert "nn.CellList(" in text
    assert text.startswith('{\n  "cells": [\n    {') and text.endswith("}\n")


def test_a_notebook_whose_json_cannot_be_reproduced_is_not_written(tmp_path, capsys):
    path = notebook(tmp_path)
    odd = path.read_text(encoding="utf-8").replace('"cells": [', '"cells":  [')
    path.write_text(odd, encoding="utf-8")
    assert run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", str(path))[0] == 2
    assert path.read_text(encoding="utf-8") == odd
    assert "formatting cannot be reproduced" in capsys.readouterr().err


def test_add_noqa_and_diff_work_on_notebooks(tmp_path):
    path = notebook(tmp_path)
    code, diff = run_cli("check", "--no-cache", "--diff", "--unsafe-fixes", str(path))
    assert code == 1 and "+        self.layers = nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])" in diff
    assert run_cli("check", "--no-cache", "--add-noqa", str(path))[0] == 0
    cell = json.loads(path.read_text(encoding="utf-8"))["cells"][2]["source"]
    assert "        return np.exp(x)  # noqa: MSL001\n" in cell
    assert run_cli("check", "--no-cache", str(path)) == (0, CLEAN)


def test_notebooks_are_found_and_checkpoints_skipped(tmp_path):
    notebook(tmp_path)
    (tmp_path / ".ipynb_checkpoints").mkdir()
    notebook(tmp_path / ".ipynb_checkpoints", name="model-checkpoint.ipynb")
    (tmp_path / "pyproject.toml").write_text("[tool.ms_lint]\n")
    assert run_cli("check", "--show-files", str(tmp_path))[1].splitlines() == [str(tmp_path / "model.ipynb")]
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint]\nextend-exclude = ["*.ipynb"]\n')
    assert run_cli("check", "--show-files", str(tmp_path))[1] == ""


def test_a_broken_notebook_is_a_finding_and_junit_reports_notebook_findings(tmp_path):
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    code, out = run_cli("check", "--no-cache", "--output-format", "json", str(tmp_path / "broken.ipynb"))
    (item,) = json.loads(out)
    assert code == 1 and item["code"] == "MSL099" and "not a notebook" in item["message"]
    path = notebook(tmp_path)
    junit = run_cli("check", "--no-cache", "--output-format", "junit", str(path))[1]
    assert 'failures="2"' in junit and "model.ipynb:cell 3:7:16" in junit


def test_without_nbformat_a_notebook_is_read_as_json(tmp_path, monkeypatch):
    """ms_lint run from a checkout without its dependencies (issue 19's seventeenth sample: two MSL099 errors on
    valid notebooks, "No module named 'nbformat'"): the notebook's JSON is read without validation, and a file
    that is no JSON is still MSL099."""
    monkeypatch.setitem(sys.modules, "nbformat", None)  # `import nbformat` raises ImportError
    path = notebook(tmp_path)
    found = [(item["code"], item["cell"]) for item in json.loads(
        run_cli("check", "--no-cache", "--output-format", "json", str(path))[1])]
    assert found == [("MSL030", 3), ("MSL001", 3)]
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    (item,) = json.loads(run_cli("check", "--no-cache", "--output-format", "json", str(tmp_path / "broken.ipynb"))[1])
    assert item["code"] == "MSL099" and "not a notebook a JSON reader can read" in item["message"]


def test_standard_input_notebook_fix_prints_the_notebook(tmp_path, monkeypatch):
    path = notebook(tmp_path)
    data = path.read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out = run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", "--stdin-filename", str(path), "-")
    fixed = json.loads(out)
    assert "nn.CellList(" in "".join(fixed["cells"][2]["source"]) and path.read_bytes() == data


def test_a_shell_command_continued_with_a_backslash_is_masked_whole(tmp_path):
    """A fine-tuning notebook (issue 19's third sample): `!wget url \\` then `-P ./model` was a syntax error."""
    cells = [("code", "!wget https://example.com/llama3-8B.ckpt \\\n  -P ./model \\\n  -q\nimport numpy as np\n"
                      "x = np.ones(3) \\\n    * 2\n"),
             ("code", "if True:\n    files = !ls \\\n        -l\nprint(files)\n")]
    path = notebook(tmp_path, cells)
    assert run_cli("check", "--no-cache", str(path)) == (0, CLEAN)
    before = path.read_text(encoding="utf-8")
    assert run_cli("check", "--no-cache", "--fix", str(path)) == (0, CLEAN)
    assert path.read_text(encoding="utf-8") == before


def test_a_time_cell_is_python_and_a_bash_cell_is_not(tmp_path):
    """DCGAN (issue 19's ninth sample): `import mindspore` sits under `%%time`, in the cell that trains."""
    cells = [("code", "from mindspore import nn, ops\n\n\nclass Step(nn.Cell):\n    def construct(self, x):\n"
                      "        return ops.ones((x.shape[0], 1), mindspore.float32)\n"),
             ("code", "%%time\nimport mindspore\nprint(Step()(ops.ones((2, 2))))\n"),
             ("code", "%%bash\nimport mindspore\n")]
    path = notebook(tmp_path, cells=cells)
    assert run_cli("check", "--no-cache", "--select", "MSL027", str(path)) == (0, CLEAN)
    cells[1] = ("code", "%%bash\nimport mindspore\n")
    path = notebook(tmp_path, cells=cells)
    code, out = run_cli("check", "--no-cache", "--select", "MSL027", "--output-format", "json", str(path))
    assert code == 1 and [item["cell"] for item in json.loads(out)] == [1]


def test_a_capture_cell_whose_body_only_ipython_reads_stays_masked(tmp_path):
    """step_into_llm's ChatGLM notebook: `%%capture out` over `pip install ...`, an automagic."""
    cells = [("code", "%%capture captured_output\npip install mindspore==2.4.10 -i https://pypi.example/simple\n"
                      "!pip install mindnlp\n"),
             ("code", "import numpy as np\n")]
    assert run_cli("check", "--no-cache", str(notebook(tmp_path, cells=cells))) == (0, CLEAN)
