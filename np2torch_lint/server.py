"""``np2torch-lint server``: the linter as a language server (LSP over standard input and output, on pygls).

Diagnostics on open, on save and, debounced, on change; quick fixes ("Fix NPT001: ...", unsafe ones labelled),
"Disable NPT001 for this line", a "fix all safe" source action and the ``np2torch-lint.fixAll`` command. Each
document is linted with the settings of the nearest ``pyproject.toml`` holding ``[tool.np2torch-lint]``, through
the engine's and the fixer's public functions, one document at a time on a worker thread so the server keeps
answering. A document that does not parse loses its diagnostics and gets one line in the client's log.
Needs the ``[lsp]`` extra (pygls).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from . import __version__

DEBOUNCE_SECONDS = 0.3
FIX_ALL_COMMAND = "np2torch-lint.fixAll"
FIX_ALL_KIND = "source.fixAll.np2torch-lint"
SOURCE = "np2torch-lint"
PYTHON_SUFFIXES = (".py", ".pyi")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="np2torch-lint server",
        description="Run np2torch-lint as a language server, speaking LSP on standard input and output. "
                    "(To lint a folder named 'server', run: np2torch-lint ./server)")
    parser.add_argument("--stdio", action="store_true", help="accepted for editors that pass it (stdio is the default)")
    parser.parse_args(argv)
    try:
        server = build_server()
    except ImportError as error:
        print(f"np2torch-lint server: needs pygls ({error.name} is not installed): "
              "pip install 'np2torch-lint[lsp]'", file=sys.stderr)
        return 2
    if sys.stdin.isatty():
        print("np2torch-lint server: speaking LSP on standard input and output (an editor starts this)",
              file=sys.stderr)
    server.start_io()
    return 0


@dataclass(frozen=True)
class Snapshot:
    """A document as it was when work on it started: edits go back with its version, so a client drops stale ones."""

    uri: str
    version: int | None
    text: str
    codec: object  # pygls' PositionCodec: code points <-> the client's position units


@dataclass(frozen=True)
class Linted:
    """One snapshot of a document with what the linter said about it."""

    version: int | None
    text: str
    name: str  # the path, or the URI of a document that has none
    codes: frozenset[str]  # the rules enabled for it by the settings
    style: object  # fixes.FixStyle
    diagnostics: list  # list[diagnostics.Diagnostic]
    problem: str | None  # why it could not be linted, or a settings problem, for the log
    context: object = None  # engine.LintContext: the document's project (its other modules, project facts)


def build_server():  # -> pygls LanguageServer; pygls is imported here, never on the plain linter's path
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path
    from urllib.parse import unquote

    from .config import ConfigError, Settings, find_pyproject, load_settings
    from .diagnostics import Applicability
    from .editor_edits import LineEdit, fix_all_edits, fix_one_edits, noqa_edit
    from .engine import lint_text
    from .jobs import Linter
    from .files import SourceError, matches_any, relative_to
    from .noqa import filter_suppressed
    from .notebooks.magics import split_lines

    server = LanguageServer(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="np2torch-lint")
    pending: dict[str, asyncio.TimerHandle] = {}
    latest: dict[str, Linted] = {}
    logged: dict[str, str] = {}

    def log_once(uri: str, message: str | None) -> None:
        """One line in the client's log when a document's problem changes, not one per keystroke."""
        if message is None:
            logged.pop(uri, None)
        elif logged.get(uri) != message:
            logged[uri] = message
            server.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=message))

    def settings_for(path: str | None) -> tuple[Settings, str | None]:
        start = Path(path).parent if path else Path(server.workspace.root_path or ".")
        try:
            return load_settings(find_pyproject(start)), None
        except ConfigError as error:
            return Settings(), f"np2torch-lint: {error}; using the default settings"

    linters: dict = {}

    def context_for(settings: Settings, path: str | None):
        """The project of the workspace file (with the CLI's cache when it exists); None for unsaved documents."""
        if path is None:
            return None
        if settings.source not in linters:
            cache_folder = settings.root / settings.cache_dir
            linters[settings.source] = Linter.for_settings(settings, None, use_cache=cache_folder.is_dir())
        return linters[settings.source].context

    def lint_snapshot(uri: str, version: int | None, text: str) -> Linted:
        path = to_fs_path(uri)
        name = path or uri
        settings, config_problem = settings_for(path)
        context = context_for(settings, path)
        relative = relative_to(path, settings.root) if path else None
        codes = settings.enabled_codes(relative)
        if relative is not None and settings.exclude and matches_any(relative, settings.exclude):
            codes = frozenset()
        snapshot = Linted(version, text, name, codes, settings.fix_style, [], config_problem, context)
        try:
            found = lint_text(text, name, codes, settings.fix_style, context)
        except SourceError as error:
            return replace(snapshot, problem=f"{name}: could not parse: {error}")
        except Exception as error:  # noqa: BLE001 - a bug of ours must not take the editor's server down
            return replace(snapshot, problem=f"{name}: internal error, no diagnostics: {error!r}")
        return replace(snapshot, diagnostics=filter_suppressed(found, text))

    def open_document(uri: str):
        return server.workspace.text_documents.get(unquote(uri))

    def is_python(document) -> bool:
        return document.language_id == "python" or document.uri.endswith(PYTHON_SUFFIXES)

    def code_points_range(line: int, column: int, end_line: int, end_column: int) -> types.Range:
        return types.Range(types.Position(line - 1, column - 1), types.Position(end_line - 1, end_column - 1))

    def snapshot(document) -> Snapshot:
        return Snapshot(document.uri, document.version, document.source, document.position_codec)

    def in_worker(function, *args):
        """Analysis runs on the one worker thread: never two at once (the parser's deep-stack settings are global)."""
        return asyncio.get_running_loop().run_in_executor(worker, function, *args)

    def to_lsp(codec, linted: Linted, diagnostic) -> types.Diagnostic:
        codec_range = code_points_range(diagnostic.line, diagnostic.column, diagnostic.end_line,
                                        diagnostic.end_column)
        page = rule_page_uri(diagnostic.code)
        return types.Diagnostic(
            range=codec.range_to_client_units(split_lines(linted.text), codec_range),
            message=diagnostic.message,
            severity=types.DiagnosticSeverity.Warning,
            code=diagnostic.code,
            code_description=types.CodeDescription(href=page) if page else None,
            source=SOURCE,
            data={"fix": None if diagnostic.fix is None else diagnostic.fix.applicability.value},
        )

    async def lint_and_publish(uri: str) -> None:
        pending.pop(uri, None)
        document = open_document(uri)
        if document is None or not is_python(document):
            return
        linted = await in_worker(lint_snapshot, uri, document.version, document.source)
        current = open_document(uri)
        if current is None or current.version != linted.version:
            return  # closed, or changed while linting: the newer text has its own run coming
        latest[uri] = linted
        log_once(uri, linted.problem)
        diagnostics = [to_lsp(current.position_codec, linted, d) for d in linted.diagnostics]
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=linted.version, diagnostics=diagnostics))

    def schedule(uri: str, delay: float) -> None:
        handle = pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        pending[uri] = loop.call_later(delay, lambda: asyncio.ensure_future(lint_and_publish(uri)))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(params: types.DidOpenTextDocumentParams) -> None:
        await lint_and_publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(params: types.DidChangeTextDocumentParams) -> None:
        schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(params: types.DidSaveTextDocumentParams) -> None:
        await lint_and_publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        handle = pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        latest.pop(uri, None)
        logged.pop(uri, None)
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def workspace_edit(document: Snapshot, edits: list[LineEdit]) -> types.WorkspaceEdit:
        lines = split_lines(document.text)
        text_edits = []
        for first, last, replacement in edits:
            # whole lines: from the start of ``first`` to the start of ``last`` (or the end of the text)
            end = (types.Position(last, 0) if last < len(lines) or not lines or lines[-1].endswith(("\n", "\r"))
                   else types.Position(last - 1, len(lines[-1])))
            text_range = document.codec.range_to_client_units(
                lines, types.Range(types.Position(first, 0), end))
            text_edits.append(types.TextEdit(range=text_range, new_text="".join(replacement)))
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version),
            edits=text_edits)])

    def current_lint(document: Snapshot) -> Linted:
        linted = latest.get(document.uri)
        if linted is None or linted.version != document.version or linted.text != document.text:
            linted = lint_snapshot(document.uri, document.version, document.text)
        return linted

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]))
    async def code_actions(params: types.CodeActionParams) -> list[types.CodeAction]:
        document = open_document(params.text_document.uri)
        if document is None or not is_python(document):
            return []
        return await in_worker(actions_for, snapshot(document), params)

    def actions_for(document: Snapshot, params: types.CodeActionParams) -> list[types.CodeAction]:
        linted = current_lint(document)
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        lines = split_lines(linted.text)
        asked = document.codec.range_from_client_units(lines, params.range)
        asked_lines = range(asked.start.line + 1, asked.end.line + 2)
        if wanted is None or any(kind.startswith(types.CodeActionKind.QuickFix) for kind in wanted):
            for diagnostic in linted.diagnostics:
                if not any(line in asked_lines for line in range(diagnostic.line, diagnostic.end_line + 1)):
                    continue
                lsp_diagnostic = to_lsp(document.codec, linted, diagnostic)
                if diagnostic.fix is not None:
                    edits = fix_one_edits(linted.text, linted.name, diagnostic, linted.style, linted.context)
                    if edits:
                        unsafe = diagnostic.fix.applicability is Applicability.UNSAFE
                        actions.append(types.CodeAction(
                            title=f"Fix {diagnostic.code}: {diagnostic.fix.title}" + (" (unsafe)" if unsafe else ""),
                            kind=types.CodeActionKind.QuickFix, diagnostics=[lsp_diagnostic], is_preferred=not unsafe,
                            edit=workspace_edit(document, edits)))
                actions.append(types.CodeAction(
                    title=f"Disable {diagnostic.code} for this line", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diagnostic],
                    edit=workspace_edit(document, [noqa_edit(linted.text, diagnostic)])))
        if wanted is None or any(FIX_ALL_KIND.startswith(kind) for kind in wanted):
            if any(d.fix is not None and d.fix.applicability is Applicability.SAFE for d in linted.diagnostics):
                edits = fix_all_edits(linted.text, linted.name, linted.codes, linted.style, context=linted.context)
                if edits:
                    actions.append(types.CodeAction(
                        title="Fix all safe np2torch-lint findings", kind=FIX_ALL_KIND,
                        edit=workspace_edit(document, edits)))
        return actions

    @server.command(FIX_ALL_COMMAND)
    async def fix_all(uri: str) -> bool:
        """Apply every safe fix of the document through ``workspace/applyEdit``; true when the client applied it."""
        document = open_document(uri)
        if document is None:
            return False
        snap = snapshot(document)

        def safe_fixes() -> list[LineEdit]:
            linted = current_lint(snap)
            return fix_all_edits(linted.text, linted.name, linted.codes, linted.style, context=linted.context)

        edits = await in_worker(safe_fixes)
        if not edits:
            return False
        result = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
            edit=workspace_edit(snap, edits), label="np2torch-lint: fix all safe"))
        return result.applied

    @server.feature(types.SHUTDOWN)
    def shutdown(_: None) -> None:
        for handle in pending.values():
            handle.cancel()
        worker.shutdown(wait=True, cancel_futures=True)

    return server


def rule_page_uri(code: str) -> str | None:
    """The rule page's public address, where ``[project.urls]`` gives one (``rule_pages.page_url``); a ``file:``
    path would not open on another machine, nor in a remote editor."""
    from .rule_pages import page_url

    return page_url(code)
