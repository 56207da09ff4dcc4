"""The language server's side of JSON-RPC over standard input and output: framing that recovers, and an answer
for every request, as the JSON-RPC 2.0 specification says.

pygls reads the messages and structures them into lsprotocol's types; what it does not do is done here:

- A body that is not JSON gets a ``-32700`` (parse error) response; a message that is not a JSON-RPC object gets
  ``-32600`` (invalid request), both with ``id: null``; a request whose params do not fit the method's type gets
  ``-32602`` (invalid params) with its id. A notification never gets a response: one that does not fit is logged.
- A ``Content-Length`` that is wrong (too short or too long) costs that message only: the bytes read as its body
  are read again as headers, so the next ``Content-Length`` header found (even at the end of a line of leftover
  body) starts the next message. pygls' own loop matches headers only at the start of a line and loses every
  message after such a one.
- Changes to a document that is not open are ignored with a log line (pygls raised ``KeyError``), and pygls' own
  error reports go to the client's log instead of pop-ups.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from typing import Any, Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
#: deeper JSON is refused before it is parsed: the parser recurses, and another thread may have raised the
#: recursion limit for deep code (``parsing.run_with_deep_stack``) past what this thread's stack holds
MAX_NESTING = 100
_CONTENT_LENGTH = re.compile(rb"content-length:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[][{}]")


class _Stream:
    """Standard input as lines and exact reads, with bytes handed back (``unread``) to be read again."""

    def __init__(self, reader: StdinAsyncReader) -> None:
        self._reader = reader
        self._held = b""

    async def readline(self) -> bytes:
        if not self._held:
            return await self._reader.readline()
        end = self._held.find(b"\n") + 1
        if end:
            line, self._held = self._held[:end], self._held[end:]
            return line
        line, self._held = self._held, b""
        return line + await self._reader.readline()

    async def read(self, size: int) -> bytes:
        data, self._held = self._held[:size], self._held[size:]
        while len(data) < size:
            more = await self._reader.readexactly(size - len(data))
            if not more:
                break  # the end of the input
            data += more
        return data

    def unread(self, data: bytes) -> None:
        self._held = data + self._held


def _nesting(body: bytes) -> int:
    depth = deepest = 0
    for bracket in _BRACKET.finditer(_STRING.sub(b"", body)):
        depth += 1 if bracket.group() in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


class Protocol(LanguageServerProtocol):
    """pygls' protocol, given whole message bodies (``handle_body``) and answering every request."""

    def handle_body(self, body: bytes) -> bool:
        """Handle one message's body; False when it is not JSON (its length may have been wrong)."""
        try:
            if _nesting(body) > MAX_NESTING:
                raise ValueError(f"nested more than {MAX_NESTING} deep")
            data = json.loads(body)
        except (ValueError, RecursionError) as error:  # ValueError: not UTF-8, or not JSON
            self.send_error(None, PARSE_ERROR, f"Parse error: {error}")
            return False
        self.handle_data(data)
        return True

    def handle_data(self, data: object) -> None:
        if not isinstance(data, dict):
            self.send_error(None, INVALID_REQUEST, "Invalid Request: a message is a JSON object")
            return
        msg_id = data.get("id")
        id_fits = msg_id is None or (isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool))
        is_call = isinstance(data.get("method"), str)
        is_response = "id" in data and ("result" in data or "error" in data) and "method" not in data
        if data.get("jsonrpc") != "2.0" or not id_fits or not (is_call or is_response):
            self.send_error(msg_id if id_fits else None, INVALID_REQUEST,
                            'Invalid Request: expected "jsonrpc": "2.0", a "method" (a string), and an "id" that '
                            "is a number, a string or null, if any")
            return
        try:
            message = self.structure_message(data)
        except JsonRpcException as error:
            cause = error.__cause__ or error
            if is_call and "id" in data:
                self.send_error(msg_id, INVALID_PARAMS, f"Invalid params for {data['method']}: {_first_line(cause)}")
            else:
                self.log(f"np2torch-lint: ignored {data.get('method', 'a response')}: its params do not fit: "
                         f"{_first_line(cause)}")
            return
        self.handle_message(message)

    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        # pygls' ResponseErrorMessage takes no null id, which a parse error needs: the response as plain data
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def log(self, message: str) -> None:
        self.notify(types.WINDOW_LOG_MESSAGE, types.LogMessageParams(type=types.MessageType.Warning,
                                                                     message=message))

    def _is_open(self, uri: str, method: str) -> bool:
        if self._workspace is not None and self.workspace.text_documents.get(_unquoted(uri)) is not None:
            return True
        self.log(f"np2torch-lint: ignored {method} of {uri}: the document is not open")
        return False

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if self._is_open(params.text_document.uri, types.TEXT_DOCUMENT_DID_CHANGE):
            yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_SAVE)
    def lsp_text_document__did_save(self, params: types.DidSaveTextDocumentParams):
        if self._is_open(params.text_document.uri, types.TEXT_DOCUMENT_DID_SAVE) and (
                user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_SAVE)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if self._is_open(params.text_document.uri, types.TEXT_DOCUMENT_DID_CLOSE):
            yield from super().lsp_text_document__did_close(params)


def _unquoted(uri: str) -> str:
    from urllib.parse import unquote

    return unquote(uri)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


class Server(LanguageServer):
    """pygls' server, reading standard input with the framing above."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, protocol_cls=Protocol, **kwargs)
        self.exit_code = 0  # what ``exit`` says: 0 after ``shutdown``, else 1
        logging.getLogger("pygls").addHandler(logging.NullHandler())  # its tracebacks are not for the editor
        logging.getLogger("pygls").propagate = False

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A line in the client's log (pygls pops up a message for each)."""
        if not isinstance(error, JsonRpcInvalidParams):
            self.protocol.log(f"np2torch-lint: {type(error).__name__}: {_first_line(error)}")

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        self._stop_event = threading.Event()
        stream = _Stream(StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool))
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self._serve(stream))
        except BrokenPipeError:
            pass  # the client went away
        except SystemExit as exit:  # ``exit``
            self.exit_code = exit.code if isinstance(exit.code, int) else 1
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()

    async def _serve(self, stream: _Stream) -> None:
        length: int | None = None
        assert self._stop_event is not None
        handle: Callable[[bytes], bool] = self.protocol.handle_body  # type: ignore[attr-defined]
        while not self._stop_event.is_set():
            line = await stream.readline()
            if not line:
                return
            header = _CONTENT_LENGTH.search(line)
            if header is not None:
                length = int(header.group(1))
            elif not line.strip() and length is not None:  # the end of the headers
                body = await stream.read(length)
                if len(body) < length:
                    return
                length = None
                if not handle(body):
                    stream.unread(body)  # read again as headers: the next message may start inside it
