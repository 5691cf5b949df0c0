"""`ms-lint server` driven over stdio by a real LSP client (pytest-lsp): diagnostics, code actions, configuration.

No test sleeps: every publishDiagnostics notification is received through the client's wait API
(`wait_for_notification`, re-armed from its own callback so none is missed) and queued; a test awaits the one it
expects, with a timeout that only guards against a hung server.
"""
from __future__ import annotations

import asyncio
import re
import sys

import pytest

if sys.version_info < (3, 10):  # pragma: no cover - pytest-lsp needs Python 3.10+ (see the `test` extra)
    pytest.skip("pytest-lsp needs Python 3.10 or newer", allow_module_level=True)

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from ms_lint.engine import Linter
from ms_lint.fixing.passes import fix_source
from ms_lint.source import SourceFile

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")
# One server per client fixture for the whole module (starting one costs seconds): every test opens its own
# documents under its own tmp_path, whose pyproject.toml applies to them alone.
server_test = pytest.mark.asyncio(loop_scope="module")

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "ms_lint.cli", "server"])
TIMEOUT = 60  # seconds; a guard against a hung server, never waited out by a passing test
URL = "https://github.com/ms-lint/ms-lint/blob/main/docs/rules/{}.md"

MODEL = """\
import numpy as np
from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return np.exp(x)
"""
LAYERS = "        self.layers = [nn.Dense(2, 2), nn.Dense(2, 2)]"
CELL_LIST = "        self.layers = nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])"


def capabilities(encoding: str, document_changes: bool) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=[encoding]),
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=document_changes)),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                version_support=True, code_description_support=True, data_support=True),
            code_action=types.CodeActionClientCapabilities(
                is_preferred_support=True, data_support=True,
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=["", "quickfix", "source", "source.fixAll"])))))


class Published:
    """Every publishDiagnostics notification, in order: the wait API re-armed from its own callback."""

    def __init__(self, client: LanguageClient):
        self.client = client
        self.queue: asyncio.Queue = asyncio.Queue()
        self._arm()

    def _arm(self):
        future = self.client.protocol.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        future.add_done_callback(self._received)  # runs as the notification is handled: the next one is caught

    def _received(self, future):
        if future.cancelled() or future.exception() is not None:
            return  # the server exited (end of the test)
        self._arm()
        self.queue.put_nowait(future.result())

    async def next(self, uri: str, version=None) -> types.PublishDiagnosticsParams:
        """The next diagnostics published for `uri` (for its `version` when given)."""
        while True:
            params = await asyncio.wait_for(self.queue.get(), TIMEOUT)
            if params.uri == uri and (version is None or params.version == version):
                return params


async def _session(client: LanguageClient, workspace, encoding: str, document_changes: bool = True):
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities(encoding, document_changes), root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="workspace")]))
    client.published = Published(client)


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory):
    await _session(lsp_client, tmp_path_factory.mktemp("workspace"), types.PositionEncodingKind.Utf16)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER, scope="module")
async def utf8_client(lsp_client: LanguageClient, tmp_path_factory):
    """A client that prefers UTF-8 positions and takes plain `changes` edits (no versioned documentChanges)."""
    await _session(lsp_client, tmp_path_factory.mktemp("workspace"), types.PositionEncodingKind.Utf8,
                   document_changes=False)
    yield
    await lsp_client.shutdown_session()


# ----- helpers ----------------------------------------------------------------------------------------------------
def _uri(client: LanguageClient, tmp_path, name="model.py", text=MODEL):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    # the script that compiles the model: alone, a model runs in PyNative and its graph-only findings are lowered
    if not (tmp_path / "train.py").exists():
        (tmp_path / "train.py").write_text("import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n")
    return path.as_uri()


async def _open(client: LanguageClient, uri: str, text: str = MODEL, version: int = 1):
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return await client.published.next(uri, version)


async def _change(client: LanguageClient, uri: str, text: str, version: int):
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def _actions(client: LanguageClient, uri: str, diagnostics, only=None, range_=None):
    range_ = range_ or (diagnostics[0].range if diagnostics else types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)))
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=range_,
        context=types.CodeActionContext(diagnostics=list(diagnostics), only=only))) or []


def _by_code(params: types.PublishDiagnosticsParams, code: str) -> types.Diagnostic:
    return next(d for d in params.diagnostics if d.code == code)


def _edits(action: types.CodeAction, uri: str, version: int):
    (change,) = action.edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == version
    return change.edits


def _offset(text: str, position: types.Position, encoding: str = "utf-16-le") -> int:
    line_start = sum(len(line) for line in text.splitlines(keepends=True)[:position.line])
    line = text[line_start:].split("\n", 1)[0]
    width = 2 if encoding == "utf-16-le" else 1
    prefix = line.encode(encoding)[:position.character * width].decode(encoding)
    return line_start + len(prefix)


def _apply(text: str, edits) -> str:
    """Apply LSP TextEdits (UTF-16 positions, all on the original text) as a client does."""
    spans = [(_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits]
    for start, end, new_text in sorted(spans, reverse=True):
        text = text[:start] + new_text + text[end:]
    return text


# ----- diagnostics ------------------------------------------------------------------------------------------------
@server_test
async def test_diagnostics_on_open(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path)
    published = await _open(client, uri)
    assert published.version == 1
    assert [d.code for d in published.diagnostics] == ["MSL030", "MSL001"]
    cells, numpy = published.diagnostics
    assert cells.severity == types.DiagnosticSeverity.Error
    assert numpy.severity == types.DiagnosticSeverity.Warning
    for diagnostic in published.diagnostics:
        assert diagnostic.source == "ms-lint"
        assert diagnostic.code_description.href == URL.format(diagnostic.code)
    assert cells.range == types.Range(start=types.Position(line=7, character=8),
                                      end=types.Position(line=7, character=len(LAYERS)))
    assert numpy.range == types.Range(start=types.Position(line=12, character=15),
                                      end=types.Position(line=12, character=24))
    assert numpy.message.startswith("NumPy call `np.exp` on tensor data in graph code reached from `Net.construct`")
    assert cells.data["fix"]["applicability"] == "unsafe" and numpy.data["fix"]["applicability"] == "unsafe"


@server_test
async def test_unsaved_buffer_is_linted_not_the_file(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path, "my model.py", text="x = 1\n")  # on disk: nothing to report
    assert "my%20model.py" in uri  # a percent-encoded URI
    published = await _open(client, uri, MODEL)
    assert {d.code for d in published.diagnostics} == {"MSL030", "MSL001"}
    await _change(client, uri, MODEL.replace("np.exp(x)", "x"), 2)
    published = await client.published.next(uri, 2)
    assert [d.code for d in published.diagnostics] == ["MSL030"]
    assert len(await _actions(client, uri, published.diagnostics)) == 2  # the fix and the noqa


@server_test
async def test_project_index_resolves_other_files_as_they_are_on_disk(client: LanguageClient, tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "blocks.py").write_text("from mindspore import nn\n\n\nclass Block(nn.Cell):\n    pass\n",
                                       encoding="utf-8")
    head = ("from mindspore import nn\n\nfrom .blocks import Block\n\n\nclass Head(Block):\n"
            "    def __init__(self):\n        super().__init__()\n" + LAYERS + "\n")
    uri = _uri(client, package, "head.py", head)
    assert [d.code for d in (await _open(client, uri, head)).diagnostics] == ["MSL030"]  # Block is a Cell
    (package / "blocks.py").write_text("class Block:\n    pass\n", encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert list((await client.published.next(uri)).diagnostics) == []  # no stale summary of blocks.py


@server_test
async def test_change_is_debounced_and_updates_diagnostics(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path)
    await _open(client, uri)
    fixed_numpy = MODEL.replace("np.exp(x)", "x")
    await _change(client, uri, fixed_numpy, 2)
    published = await client.published.next(uri)
    assert published.version == 2
    assert [d.code for d in published.diagnostics] == ["MSL030"]

    # typing: three changes in a row; the diagnostics that end up published are those of the last text
    await _change(client, uri, MODEL, 3)
    await _change(client, uri, MODEL.replace(LAYERS, CELL_LIST), 4)
    await _change(client, uri, MODEL.replace(LAYERS, CELL_LIST).replace("np.exp(x)", "x"), 5)
    published = await client.published.next(uri, version=5)
    assert list(published.diagnostics) == []


@server_test
async def test_save_lints_and_close_clears(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path)
    await _open(client, uri, "x = 1\n")
    await _change(client, uri, MODEL, 2)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    published = await client.published.next(uri, version=2)
    assert {d.code for d in published.diagnostics} == {"MSL030", "MSL001"}
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    published = await client.published.next(uri)
    assert list(published.diagnostics) == []


@server_test
async def test_syntax_error_is_a_diagnostic(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path)
    published = await _open(client, uri, "def broken(:\n    pass\n")
    (diagnostic,) = published.diagnostics
    assert diagnostic.code == "MSL099" and diagnostic.range.start.line == 0
    assert await _actions(client, uri, published.diagnostics) == []  # no fix, and no noqa in unparsable code


@server_test
async def test_non_bmp_characters_count_as_two_utf16_units(client: LanguageClient, tmp_path):
    line = '        return ("\U0001F600", np.exp(x))[1]'
    text = MODEL.replace("        return np.exp(x)", line)
    uri = _uri(client, tmp_path, text=text)
    numpy = _by_code(await _open(client, uri, text), "MSL001")
    start = line.index("np.exp")
    assert numpy.range.start == types.Position(line=12, character=start + 1)  # the emoji is 2 UTF-16 units
    assert numpy.range.end == types.Position(line=12, character=start + 1 + len("np.exp(x)"))
    (fix,) = [a for a in await _actions(client, uri, [numpy]) if a.title.startswith("MSL001:")]
    assert _apply(text, _edits(fix, uri, 1)).splitlines()[12] == line.replace("np.exp", "ops.exp")


@server_test
async def test_utf8_position_encoding(utf8_client: LanguageClient, tmp_path):
    line = '        return ("\U0001F600", np.exp(x))[1]'
    text = MODEL.replace("        return np.exp(x)", line)
    uri = _uri(utf8_client, tmp_path, text=text)
    numpy = _by_code(await _open(utf8_client, uri, text), "MSL001")
    assert numpy.range.start == types.Position(line=12, character=len(line[:line.index("np.exp")].encode()))
    (noqa,) = [a for a in await _actions(utf8_client, uri, [numpy]) if a.title.startswith("Suppress")]
    assert noqa.edit.document_changes is None
    (edit,) = noqa.edit.changes[uri]
    assert edit.range.start == types.Position(line=12, character=len(line.encode()))
    assert edit.new_text == "  # noqa: MSL001"


@server_test
async def test_bom_in_the_buffer(client: LanguageClient, tmp_path):
    text = "\ufeff" + MODEL
    uri = _uri(client, tmp_path, text=text)
    published = await _open(client, uri, text)
    assert [d.code for d in published.diagnostics] == ["MSL030", "MSL001"]
    (fix,) = [a for a in await _actions(client, uri, [_by_code(published, "MSL001")]) if "(unsafe)" in a.title]
    assert _apply(text, _edits(fix, uri, 1)).startswith("\ufeffimport numpy as np\nfrom mindspore import nn, ops\n")


# ----- configuration ----------------------------------------------------------------------------------------------
@server_test
async def test_workspace_pyproject_is_honoured(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint]\nignore = ["MSL030"]\n', encoding="utf-8")
    uri = _uri(client, tmp_path)
    published = await _open(client, uri)
    assert [d.code for d in published.diagnostics] == ["MSL001"]
    # per-file-ignores resolve against the document's path
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint.per-file-ignores]\n"model.py" = ["MSL001"]\n',
                                             encoding="utf-8")
    await _change(client, uri, MODEL + "\n", 2)
    assert [d.code for d in (await client.published.next(uri, 2)).diagnostics] == ["MSL030"]


@server_test
async def test_configuration_error_is_shown_not_fatal(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint]\nignore = ["MSL9999"]\n', encoding="utf-8")
    uri = _uri(client, tmp_path)
    published = await _open(client, uri)
    assert {d.code for d in published.diagnostics} == {"MSL030", "MSL001"}  # the defaults
    config = str(tmp_path / "pyproject.toml")
    (message,) = [m for m in client.messages if config in m.message]
    assert message.type == types.MessageType.Error
    assert "unknown rule code or prefix 'MSL9999'" in message.message
    assert any(config in m.message and "MSL9999" in m.message for m in client.log_messages)
    await _change(client, uri, MODEL + "\n", 2)  # the same error is not shown again on every change
    await client.published.next(uri, 2)
    assert len([m for m in client.messages if config in m.message]) == 1


# ----- code actions -----------------------------------------------------------------------------------------------
@server_test
async def test_quick_fix_from_diagnostic_data(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path)
    cells = _by_code(await _open(client, uri), "MSL030")
    actions = await _actions(client, uri, [cells])
    assert [a.title for a in actions] == ["MSL030: Wrap in `nn.CellList` (unsafe)", "Suppress MSL030 with # noqa"]
    fix = actions[0]
    assert fix.kind == types.CodeActionKind.QuickFix and not fix.is_preferred and list(fix.diagnostics) == [cells]
    (edit,) = _edits(fix, uri, 1)
    assert edit.new_text == CELL_LIST + "\n"
    assert edit.range == types.Range(start=types.Position(line=7, character=0),
                                     end=types.Position(line=8, character=0))


@server_test
async def test_unsafe_quick_fix_adds_its_import(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path)
    numpy = _by_code(await _open(client, uri), "MSL001")
    actions = await _actions(client, uri, [numpy])
    fix = actions[0]
    assert fix.title == "MSL001: Replace with `ops.exp` (unsafe)" and not fix.is_preferred
    edits = _edits(fix, uri, 1)
    assert [e.new_text for e in edits] == ["from mindspore import nn, ops\n", "        return ops.exp(x)\n"]
    assert _apply(MODEL, edits) == MODEL.replace("import nn\n", "import nn, ops\n").replace("np.exp", "ops.exp")


@server_test
async def test_noqa_action_appends_then_extends(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path)
    cells = _by_code(await _open(client, uri), "MSL030")
    (noqa,) = [a for a in await _actions(client, uri, [cells]) if a.title == "Suppress MSL030 with # noqa"]
    assert noqa.kind == types.CodeActionKind.QuickFix and not noqa.is_preferred
    suppressed = _apply(MODEL, _edits(noqa, uri, 1))
    assert suppressed.splitlines()[7] == LAYERS + "  # noqa: MSL030"
    await _change(client, uri, suppressed, 2)
    assert [d.code for d in (await client.published.next(uri, 2)).diagnostics] == ["MSL001"]

    commented = MODEL.replace(LAYERS, LAYERS + "  # noqa: MSL001")
    await _change(client, uri, commented, 3)
    cells = _by_code(await client.published.next(uri, 3), "MSL030")
    (noqa,) = [a for a in await _actions(client, uri, [cells]) if a.title.startswith("Suppress")]
    assert _apply(commented, _edits(noqa, uri, 3)).splitlines()[7] == LAYERS + "  # noqa: MSL001, MSL030"


@server_test
async def test_no_noqa_where_a_comment_would_change_the_code(client: LanguageClient, tmp_path):
    text = MODEL.replace(LAYERS, "        self.layers = [nn.Dense(2, 2), \\\n                       nn.Dense(2, 2)]")
    uri = _uri(client, tmp_path, text=text)
    cells = _by_code(await _open(client, uri, text), "MSL030")
    titles = [a.title for a in await _actions(client, uri, [cells])]
    assert titles == ["MSL030: Wrap in `nn.CellList` (unsafe)"]


@server_test
async def test_stale_diagnostics_get_no_edits(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path)
    published = await _open(client, uri)
    await _change(client, uri, "\n\n" + MODEL, 2)
    assert await _actions(client, uri, published.diagnostics) == []
    await client.published.next(uri, 2)


@server_test
async def test_fix_all_applies_safe_fixes_only(client: LanguageClient, tmp_path):
    dropout = "        self.drop = nn.Dropout(keep_prob=0.9)"  # MSL062: a safe fix
    text = MODEL.replace(LAYERS, LAYERS + "\n" + dropout)
    uri = _uri(client, tmp_path, text=text)
    published = await _open(client, uri, text)
    for only in (["source.fixAll"], ["source.fixAll.ms-lint"], ["source"]):
        (action,) = await _actions(client, uri, [], only=only)
        assert action.kind == "source.fixAll.ms-lint"
        fixed = _apply(text, _edits(action, uri, 1))
        # the unsafe fixes (CellList, np.exp) are left alone
        assert fixed == text.replace("keep_prob=0.9", "p=0.1")
    expected = fix_source(Linter(), SourceFile(str(tmp_path / "model.py"), text), ("safe",)).text
    assert fixed == expected
    quick = await _actions(client, uri, published.diagnostics, only=["quickfix"],
                           range_=types.Range(start=types.Position(line=0, character=0),
                                              end=types.Position(line=14, character=0)))
    assert all(a.kind == types.CodeActionKind.QuickFix for a in quick) and len(quick) == 6
    assert not [a for a in await _actions(client, uri, published.diagnostics) if a.kind == "source.fixAll.ms-lint"]


@server_test
async def test_fix_all_with_nothing_to_fix(client: LanguageClient, tmp_path):
    uri = _uri(client, tmp_path)
    await _open(client, uri, "x = 1\n")
    assert await _actions(client, uri, [], only=["source.fixAll"]) == []


# ----- the CLI without pygls --------------------------------------------------------------------------------------
def test_server_without_pygls_says_what_to_install(monkeypatch, capsys):
    from ms_lint.cli import main

    monkeypatch.setitem(sys.modules, "pygls", None)  # `import pygls` now fails as if it were not installed
    for name in [name for name in sys.modules if name.startswith("pygls.")]:  # loaded submodules would still import
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delitem(sys.modules, "ms_lint.lsp", raising=False)
    monkeypatch.delattr("ms_lint.lsp", raising=False)  # else `from ms_lint import lsp` finds the loaded module
    assert main(["server"]) == 2
    assert re.search(r"install ms-lint\[lsp\]", capsys.readouterr().err)


@server_test
async def test_the_server_judges_project_rules_on_the_open_file_alone(client: LanguageClient, tmp_path):
    """Issue 15: like flake8, the server sees the open file: a rank passed into a seed helper of another file is
    not reported, the same two in one file are (at the call and at the helper's `set_seed`)."""
    (tmp_path / "seeding.py").write_text(
        "import mindspore as ms\n\n\ndef seed_all(seed, rank=0):\n    ms.set_seed(seed + rank)\n", encoding="utf-8")
    train = ("from mindspore.communication import get_rank, init\n\nfrom seeding import seed_all\n\n"
             "init()\nseed_all(42, get_rank())\n")
    uri = _uri(client, tmp_path, "train.py", train)
    assert [d.code for d in (await _open(client, uri, train)).diagnostics if d.code == "MSL054"] == []
    alone = ("import mindspore as ms\nfrom mindspore.communication import get_rank, init\n\n\n"
             "def seed_all(seed, rank=0):\n    ms.set_seed(seed + rank)\n\n\ninit()\nseed_all(42, get_rank())\n")
    uri = _uri(client, tmp_path, "alone.py", alone)
    found = [d for d in (await _open(client, uri, alone)).diagnostics if d.code == "MSL054"]
    assert sorted(d.range.start.line for d in found) == [5, 9]


@server_test
async def test_names_reexported_by_a_package_are_mindspore_in_the_server(client: LanguageClient, tmp_path):
    """`from zoo import *` where zoo re-exports MindSpore's `nn`: the open file's `nn.Conv2d(..., bias=False)` is
    MindSpore's class (issue 15), read through the package on disk."""
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    (zoo / "__init__.py").write_text("from .common import *\n", encoding="utf-8")
    (zoo / "common.py").write_text("from mindspore import nn\n\n__all__ = [\"nn\"]\n", encoding="utf-8")
    model = "from zoo import *\n\nconv = nn.Conv2d(3, 8, 3, bias=False)\n"
    uri = _uri(client, tmp_path, "reexport_model.py", model)
    assert [d.code for d in (await _open(client, uri, model)).diagnostics] == ["MSL067"]
