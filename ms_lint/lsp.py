"""`ms-lint server`: the language server (pygls, stdio). A thin adapter: it translates, the engine decides.

Diagnostics are published on open and save, and on change after a short debounce; they lint the editor's text
(unsaved buffers included) under the document's path, so `[tool.ms_lint]` and the project index resolve as they do
for `ms-lint check`. Each diagnostic carries its fix (and the document version it was computed on) in `data`; code
actions turn it back into edits with `fixer.apply_fixes`, offer `# noqa: MSLxxx`, and `source.fixAll.ms-lint`
applies the safe fixes through the verified passes of `autofix.fix_source`.

Latency (benchmarks/lsp_latency.py, docs/editors.md): the garbage collector is paused while a file is linted (a
large file's AST and facts would otherwise be traversed by several collections as they grow), and the objects
alive at start-up (pygls, lsprotocol, the rules) are frozen out of its collections.

Positions: ms_lint's are 1-based rows and 0-based character columns; LSP's are 0-based lines and columns in the
negotiated encoding (UTF-16 code units by default), converted here once.
"""
from __future__ import annotations

import ast
import asyncio
import contextlib
import difflib
import gc
import logging
import re
from dataclasses import asdict
from typing import Any, Dict, List, Optional
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from ms_lint import __version__, config
from ms_lint.analysis import compile_context, run_mode
from ms_lint.engine import Linter
from ms_lint.fixing.apply import apply_fixes
from ms_lint.fixing.passes import fix_source
from ms_lint.noqa import noqa_edits
from ms_lint.rule import Diagnostic, Edit, Fix, Import
from ms_lint.settings import Settings
from ms_lint.source import SourceFile, module_name, split_lines

SOURCE = "ms-lint"
FIX_ALL = "source.fixAll.ms-lint"
DEBOUNCE_SECONDS = 0.1  # after the last change, before linting: typing does not lint at every keystroke
SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
              "info": types.DiagnosticSeverity.Information}
_CHUNK = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # lines with their endings
logger = logging.getLogger(__name__)


class _Text:
    """A document's text as ms_lint sees it (a leading BOM removed) and its positions in LSP units."""

    def __init__(self, document: TextDocument):
        buffer = document.source
        self.shift = 1 if buffer.startswith("\ufeff") else 0
        self.text = buffer[self.shift:]
        self.lines = split_lines(buffer)  # LSP and Python end lines alike
        self.units = document.position_codec.client_num_units

    def position(self, row: int, column: int) -> types.Position:
        line = min(max(row - 1, 0), len(self.lines) - 1)
        if row - 1 >= len(self.lines):
            column = len(self.lines[line])  # past the end: the end of the document
        elif line == 0:
            column += self.shift
        return types.Position(line=line, character=self.units(self.lines[line][:column]))

    def edits(self, new_text: str) -> List[types.TextEdit]:
        """Minimal line-level edits turning the text into `new_text` (a fix and the imports it added)."""
        old, new = _CHUNK.findall(self.text), _CHUNK.findall(new_text)

        def start(index: int) -> types.Position:
            if index < len(old) or not old or old[-1][-1] in "\r\n":
                return self.position(index + 1, 0)
            return self.position(len(old), len(old[-1]))

        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        return [types.TextEdit(range=types.Range(start=start(i1), end=start(i2)), new_text="".join(new[j1:j2]))
                for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


class MsLintServer(LanguageServer):
    def __init__(self):
        super().__init__("ms-lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.debounce = DEBOUNCE_SECONDS
        self._timers: Dict[str, asyncio.TimerHandle] = {}
        self._config_errors: Dict[str, str] = {}  # document path -> the configuration error last shown for it

    # ----- diagnostics ----------------------------------------------------------------------------------------
    def lint_later(self, uri: str) -> None:
        self.cancel(uri)
        self._timers[uri] = asyncio.get_running_loop().call_later(self.debounce, self.publish, uri)

    def document(self, uri: str) -> Optional[TextDocument]:
        """The open document (pygls keys them by unquoted URI), None once closed."""
        return self.workspace.text_documents.get(unquote(uri))

    def cancel(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def publish(self, uri: str) -> None:
        self.cancel(uri)
        document = self.document(uri)
        if document is None:
            return  # closed meanwhile
        try:
            text, linter, source = self._prepare(document)
            with _collector_paused():
                result = linter.lint_source(source)
                # project rules see this file alone here, as in flake8 (docs/project-rules.md)
                found = sorted(result.diagnostics + linter.judge([result]), key=lambda d: d.sort_key())
        except Exception:  # noqa: BLE001 - the server must survive an engine bug; the client is told
            logger.exception("linting %s failed", uri)
            self._log(types.MessageType.Error, f"ms-lint: linting {document.path} failed (see the server log)")
            return
        for message in result.internal_errors:
            self._log(types.MessageType.Error, f"ms-lint: {message}")
        diagnostics = [self._diagnostic(d, text, document.version) for d in found]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=document.version))

    def clear(self, uri: str) -> None:
        self.cancel(uri)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def settings(self, path: str) -> Settings:
        try:
            settings = config.load(path)
        except config.ConfigError as error:
            message = f"ms-lint: {error}; linting with the default settings"
            if self._config_errors.get(path) != message:
                self._config_errors[path] = message
                logger.error("%s", message)
                self._log(types.MessageType.Error, message)
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
            return Settings()
        self._config_errors.pop(path, None)
        return settings

    def _prepare(self, document: TextDocument):
        path = document.path
        text = _Text(document)
        source = SourceFile(path=path, text=text.text, bom=bool(text.shift), module_name=module_name(path))
        return text, Linter(self.settings(path)), source  # a fresh project index: other files as on disk now

    @staticmethod
    def _diagnostic(d: Diagnostic, text: _Text, version: Optional[int]) -> types.Diagnostic:
        return types.Diagnostic(
            range=types.Range(start=text.position(d.row, d.column), end=text.position(d.end_row, d.end_column)),
            message=d.message, severity=SEVERITIES[d.severity], code=d.code, source=SOURCE,
            code_description=types.CodeDescription(href=d.url),
            data={"version": version, "row": d.row, "column": d.column, "fix": asdict(d.fix) if d.fix else None})

    def _log(self, kind: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    # ----- code actions ---------------------------------------------------------------------------------------
    def code_actions(self, params: types.CodeActionParams) -> List[types.CodeAction]:
        document = self.document(params.text_document.uri)
        if document is None:
            return []
        only = [getattr(kind, "value", kind) for kind in params.context.only or ()]

        def wanted(kind: str) -> bool:
            return not only or any(kind == k or kind.startswith(k + ".") for k in only)

        text = _Text(document)
        actions: List[types.CodeAction] = []
        if wanted(types.CodeActionKind.QuickFix.value):
            # diagnostics computed on an older text get nothing: fresh ones are on their way
            ours = [d for d in params.context.diagnostics if d.source == SOURCE and isinstance(d.data, dict)
                    and d.data.get("version") == document.version and _overlap(d.range, params.range)]
            parses = bool(ours) and _parses(text.text)
            for diagnostic in ours:
                actions.extend(self._quick_fixes(document, text, diagnostic, diagnostic.data, parses))
        if only and wanted(FIX_ALL):  # asked for explicitly (on save, source actions): it lints several times
            _, linter, source = self._prepare(document)
            with _collector_paused():
                fixed = fix_source(linter, source, ("safe",))
            if fixed.changed:
                actions.append(types.CodeAction(title="ms-lint: fix all safe fixes", kind=FIX_ALL,
                                                edit=self._workspace_edit(document, text.edits(fixed.text))))
        return actions

    def _quick_fixes(self, document, text: _Text, diagnostic: types.Diagnostic, data: Any, parses: bool):
        code = str(diagnostic.code)
        fix = _fix(data.get("fix"))
        if fix is not None and fix.applicability in ("safe", "unsafe"):
            finding = Diagnostic(code=code, symbol="", message="", severity="", path=document.path, row=data["row"],
                                 column=data["column"], end_row=data["row"], end_column=data["column"], fix=fix)
            new_text = apply_fixes(text.text, [finding], (fix.applicability,)).text
            if new_text != text.text:
                unsafe = fix.applicability == "unsafe"
                yield types.CodeAction(
                    title=f"{code}: {fix.message}" + (" (unsafe)" if unsafe else ""),
                    kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=not unsafe,
                    edit=self._workspace_edit(document, text.edits(new_text)))
        edit = _noqa_edit(text, data["row"], code) if parses else None
        if edit is not None:
            yield types.CodeAction(title=f"Suppress {code} with # noqa", kind=types.CodeActionKind.QuickFix,
                                   diagnostics=[diagnostic], edit=self._workspace_edit(document, [edit]))

    def _workspace_edit(self, document: TextDocument, edits: List[types.TextEdit]) -> types.WorkspaceEdit:
        if get_capability(self.client_capabilities, "workspace.workspace_edit.document_changes", False):
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier,
                                                                                edits=edits)])
        return types.WorkspaceEdit(changes={document.uri: edits})


@contextlib.contextmanager
def _collector_paused():
    """No garbage collection while linting: with it (and `gc.freeze` at start-up) a 5,000-line file's update went
    from 120-153 to 103-118 ms (medians, docs/editors.md). Cyclic garbage is collected after, at the first
    collection the allocations trigger."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _fix(item: Optional[dict]) -> Optional[Fix]:
    if not isinstance(item, dict):
        return None
    return Fix(item["applicability"], item["message"],
               tuple(Edit(e["content"], tuple(e["location"]), tuple(e["end_location"])) for e in item["edits"]),
               tuple(Import(**i) for i in item.get("imports", ())))


def _overlap(a: types.Range, b: types.Range) -> bool:
    def key(position: types.Position):
        return position.line, position.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _parses(text: str) -> bool:
    """Suppression comments only count in a file that parses."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _noqa_edit(text: _Text, row: int, code: str) -> Optional[types.TextEdit]:
    """`  # noqa: CODE` at the end of `row`, or `, CODE` added to its `# noqa: ...` (`ms_lint.noqa`); None where a
    comment cannot go (the line ends inside a string or is continued with a backslash) or already suppresses it."""
    edits = noqa_edits(text.text, {row: [code]})
    if not edits:
        return None
    (edit,) = edits
    return types.TextEdit(range=types.Range(start=text.position(row, edit.start), end=text.position(row, edit.end)),
                          new_text=edit.text)


def create_server() -> MsLintServer:
    server = MsLintServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MsLintServer, params: types.DidOpenTextDocumentParams):
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MsLintServer, params: types.DidChangeTextDocumentParams):
        ls.lint_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MsLintServer, params: types.DidSaveTextDocumentParams):
        # a saved script may have changed what the project sets (mode, syntax level, target): scan it again
        compile_context.forget_projects()
        run_mode.forget_projects()
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MsLintServer, params: types.DidCloseTextDocumentParams):
        ls.clear(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
    def code_action(ls: MsLintServer, params: types.CodeActionParams):
        return ls.code_actions(params)

    return server


def main() -> int:
    """Serve over stdin/stdout until the client says `exit`."""
    server = create_server()
    gc.freeze()  # what is alive now lives as long as the server: later collections need not traverse it
    server.start_io()
    return 0
