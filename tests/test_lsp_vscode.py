"""editors/vscode, the VS Code extension that starts `ms-lint server`: its manifest, and its code run by Node with
`vscode` and `vscode-languageclient/node` replaced by recording fakes (tests/vscode/load_extension.js), since the
real `vscode` module exists only inside VS Code. The Node checks skip without `node`, except under CI."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "editors" / "vscode"
LOADER = Path(__file__).resolve().parent / "vscode" / "load_extension.js"
DOCS = ROOT / "docs" / "editors.md"


def manifest() -> dict:
    return json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))


def node() -> str:
    found = shutil.which("node")
    if found is None:
        if os.environ.get("CI"):  # .ci/run installs it: a CI run never passes these silently
            raise RuntimeError("node must be installed for the VS Code extension tests in CI")
        pytest.skip("node is not installed (CI installs it)")
    return found


def test_manifest():
    package = manifest()
    assert package["main"] == "./extension.js"
    assert (EXTENSION / "extension.js").is_file()
    assert package["activationEvents"] == ["onLanguage:python"]
    assert package["engines"]["vscode"].startswith("^1.")
    assert package["dependencies"]["vscode-languageclient"].startswith("^9.")
    setting = package["contributes"]["configuration"]["properties"]["ms-lint.command"]
    assert setting["type"] == "array" and setting["default"] == ["ms-lint", "server"]
    assert [c["command"] for c in package["contributes"]["commands"]] == ["ms-lint.restart"]


def test_lock_file_matches_manifest():
    lock = json.loads((EXTENSION / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["name"] == manifest()["name"]
    assert lock["packages"][""]["dependencies"] == manifest()["dependencies"]
    assert lock["packages"]["node_modules/vscode-languageclient"]["version"].startswith("9.")


def test_no_build_output_committed():
    ignored = (EXTENSION / ".gitignore").read_text(encoding="utf-8").split()
    assert "node_modules/" in ignored and "*.vsix" in ignored


def test_docs_describe_the_build():
    docs = DOCS.read_text(encoding="utf-8")
    for step in ("editors/vscode", "npm install", "npx @vscode/vsce package", "code --install-extension",
                 f"{manifest()['name']}-{manifest()['version']}.vsix", '"ms-lint.command"'):
        assert step in docs, step


def test_extension_parses():
    subprocess.run([node(), "--check", str(EXTENSION / "extension.js")], check=True, timeout=60)


def load(setting=None) -> list:
    command = [node(), str(LOADER), str(EXTENSION / "extension.js")]
    if setting is not None:
        command.append(json.dumps(setting))
    process = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout)


def clients(events) -> list:
    return [event[1:] for event in events if event[0] == "new LanguageClient"]


def test_activation_starts_the_server_for_python_files():
    events = load()
    assert events[:3] == [
        ["getConfiguration", "ms-lint"],
        ["new LanguageClient", "ms-lint", "ms-lint", {"command": "ms-lint", "args": ["server"]},
         {"documentSelector": [{"scheme": "file", "language": "python"}], "outputChannelName": "ms-lint"}],
        ["start"]]
    assert ["subscriptions", 2, ["ms-lint.restart"]] in events
    # the restart command and a change of ms-lint.command restart it; another setting's change does not
    assert [e[0] for e in events[3:]] == ["subscriptions", "stop", "getConfiguration", "new LanguageClient", "start",
                                          "stop", "getConfiguration", "new LanguageClient", "start", "stop"]


def test_command_setting():
    events = load(["/project/.venv/bin/ms-lint", "server"])
    assert {json.dumps(c[2]) for c in clients(events)} == {
        json.dumps({"command": "/project/.venv/bin/ms-lint", "args": ["server"]})}
    for bad in ([], [1, 2], "ms-lint server"):  # not a list of strings: the default
        assert clients(load(bad))[0][2] == {"command": "ms-lint", "args": ["server"]}
