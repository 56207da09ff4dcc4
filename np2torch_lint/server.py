"""``np2torch-lint server``: the linter as a language server (LSP over standard input and output, on pygls).

Diagnostics on open, on save and, debounced, on change; quick fixes ("Fix NPT001: ...", unsafe ones labelled),
"Disable NPT001 for this line", a "fix all safe" source action and the ``np2torch-lint.fixAll`` command. Each
document is linted with the settings of the nearest ``pyproject.toml`` holding ``[tool.np2torch-lint]``, through
the engine's and the fixer's public functions, off the message loop: each document on a thread of its own, so a
big file holds up neither a small one nor ``shutdown``. One lint of a document runs at a time; versions that came
meanwhile are dropped but the newest, which runs next, and a result for a version that is no longer current is
never published. Each running lint has a project context (its modules' summaries) of its own, from a pool, since
a project is not shared between threads. Positions come from one line index per linted text. A document that
does not parse loses its diagnostics and gets one line in the client's log. The JSON-RPC side (framing, errors
for every request) is ``server_transport``. Needs the ``[lsp]`` extra (pygls).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterator

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
    # lints may still run on their threads (``shutdown`` does not wait for them): end without tearing the
    # interpreter down under them
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # ``exit`` closed standard output
            pass
    os._exit(server.exit_code)


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
    settings: object = None  # config.Settings: where the document's project context comes from
    path: str | None = None  # the file's path; None for an unsaved document, linted on its own
    #: the text's lines, split once: every position of the document is converted with them
    lines: list[str] = field(default_factory=list)


def build_server():  # -> pygls LanguageServer; pygls is imported here, never on the plain linter's path
    from lsprotocol import types
    from pygls.uris import to_fs_path
    from urllib.parse import unquote

    from .config import ConfigError, Settings, find_pyproject, load_settings
    from .diagnostics import Applicability
    from .editor_edits import LineEdit, fix_all_edits, fix_one_edits, noqa_edit
    from .engine import lint_text
    from .jobs import Linter, incoming_diagnostics
    from .files import SourceError, matches_any, relative_to
    from .noqa import filter_suppressed
    from .notebooks.magics import split_lines
    from .server_transport import Server

    server = Server(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
    pending: dict[str, asyncio.TimerHandle] = {}
    latest: dict[str, Linted] = {}
    logged: dict[str, str] = {}
    linting: dict[str, asyncio.Event] = {}  # documents being linted now: set when the lint is over
    stopping = threading.Event()

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

    @contextmanager
    def project_context(settings: Settings, path: str | None) -> Iterator[object]:
        """A linter of the workspace file's project (with the CLI's cache when it exists), made for this lint: a
        project is read once per run, and the files beside the document change between lints (an importer added,
        a module edited); one per lint is also one per thread. None for unsaved documents."""
        if path is None:
            yield None
            return
        cache_folder = settings.root / settings.cache_dir
        yield Linter.for_settings(settings, None, use_cache=cache_folder.is_dir())

    def lint_snapshot(uri: str, version: int | None, text: str) -> Linted:
        path = to_fs_path(uri)
        name = path or uri
        settings, config_problem = settings_for(path)
        relative = relative_to(path, settings.root) if path else None
        codes = settings.enabled_codes(relative)
        if relative is not None and settings.exclude and matches_any(relative, settings.exclude):
            codes = frozenset()
        snapshot = Linted(version, text, name, codes, settings.fix_style, [], config_problem, settings, path,
                          split_lines(text))
        try:
            with project_context(settings, path) as linter:
                found = lint_text(text, name, codes, settings.fix_style, linter.context if linter else None)
                if linter is not None:  # what importers' calls find here, as np2torch-lint and flake8 report it
                    found = [*found, *incoming_diagnostics(linter, path, text, found, codes)]
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

    def in_thread(function, *args) -> asyncio.Future:
        """``function(*args)`` on a thread of its own, off the message loop (a daemon: exiting never waits for it)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def settle(ok: bool, value: object) -> None:
            if not future.done():
                (future.set_result if ok else future.set_exception)(value)

        def run() -> None:
            try:
                outcome = (True, function(*args))
            except BaseException as error:  # noqa: BLE001 - handed to the loop
                outcome = (False, error)
            if not loop.is_closed():
                loop.call_soon_threadsafe(settle, *outcome)

        threading.Thread(target=run, name="np2torch-lint", daemon=True).start()
        return future

    def to_lsp(codec, linted: Linted, diagnostic) -> types.Diagnostic:
        codec_range = code_points_range(diagnostic.line, diagnostic.column, diagnostic.end_line,
                                        diagnostic.end_column)
        page = rule_page_uri(diagnostic.code)
        return types.Diagnostic(
            range=codec.range_to_client_units(linted.lines, codec_range),
            message=diagnostic.message,
            severity=types.DiagnosticSeverity.Warning,
            code=diagnostic.code,
            code_description=types.CodeDescription(href=page) if page else None,
            source=SOURCE,
            data={"fix": None if diagnostic.fix is None else diagnostic.fix.applicability.value},
        )

    def linted_for_publishing(uri: str, version: int | None, text: str, codec) -> tuple[Linted, list]:
        linted = lint_snapshot(uri, version, text)
        return linted, [to_lsp(codec, linted, d) for d in linted.diagnostics]

    async def lint_and_publish(uri: str) -> None:
        pending.pop(uri, None)
        running = linting.get(uri)
        if running is not None:  # one lint of a document at a time: the newest version runs when it is over
            await running.wait()
            if linting.get(uri) is not None:
                return  # another waiter for this document went first and lints its newest version
        document = open_document(uri)
        if document is None or not is_python(document) or stopping.is_set():
            return
        done = linting[uri] = asyncio.Event()
        try:
            while True:
                already = latest.get(uri)
                if already is not None and already.version == document.version and already.text == document.source:
                    return  # linted and published already
                linted, diagnostics = await in_thread(linted_for_publishing, uri, document.version,
                                                      document.source, document.position_codec)
                current = open_document(uri)
                if stopping.is_set() or current is None:
                    return
                if current.version == linted.version and current.source == linted.text:
                    break
                document = current  # changed while linting: that result is stale, the newest text is linted
        finally:
            del linting[uri]
            done.set()
        latest[uri] = linted
        log_once(uri, linted.problem)
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
        lines = split_lines(document.text)  # once per edit, not per line edited
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
        return await in_thread(actions_for, snapshot(document), params)

    def actions_for(document: Snapshot, params: types.CodeActionParams) -> list[types.CodeAction]:
        linted = current_lint(document)
        with project_context(linted.settings, linted.path) as linter:  # type: ignore[arg-type]
            return actions_of(document, linted, params, linter.context if linter else None)

    def actions_of(document: Snapshot, linted: Linted, params: types.CodeActionParams,
                   context: object) -> list[types.CodeAction]:
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        asked = document.codec.range_from_client_units(linted.lines, params.range)
        asked_lines = range(asked.start.line + 1, asked.end.line + 2)
        if wanted is None or any(kind.startswith(types.CodeActionKind.QuickFix) for kind in wanted):
            for diagnostic in linted.diagnostics:
                if not any(line in asked_lines for line in range(diagnostic.line, diagnostic.end_line + 1)):
                    continue
                lsp_diagnostic = to_lsp(document.codec, linted, diagnostic)
                if diagnostic.fix is not None:
                    edits = fix_one_edits(linted.text, linted.name, diagnostic, linted.style, context)
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
                edits = fix_all_edits(linted.text, linted.name, linted.codes, linted.style, context=context)
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
            with project_context(linted.settings, linted.path) as linter:  # type: ignore[arg-type]
                return fix_all_edits(linted.text, linted.name, linted.codes, linted.style,
                                     context=linter.context if linter else None)

        edits = await in_thread(safe_fixes)
        if not edits:
            return False
        result = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
            edit=workspace_edit(snap, edits), label="np2torch-lint: fix all safe"))
        return result.applied

    @server.feature(types.SHUTDOWN)
    def shutdown(_: None) -> None:
        """Answered at once: lints still running are left to end on their threads, and publish nothing."""
        stopping.set()
        for handle in pending.values():
            handle.cancel()

    return server


def rule_page_uri(code: str) -> str | None:
    """The rule page's public address, where ``[project.urls]`` gives one (``rule_pages.page_url``); a ``file:``
    path would not open on another machine, nor in a remote editor."""
    from .rule_pages import page_url

    return page_url(code)
