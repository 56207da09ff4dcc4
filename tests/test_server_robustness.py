"""The language server under bad input and load, over stdio with pytest-lsp's client: every request answered as
JSON-RPC says (-32700, -32600, -32602), a framing error costs one message, unknown documents are a log line, and
a big document holds up neither a small one nor ``shutdown``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from test_server import SERVER, RecordingClient, make_client, open_document, published

pytestmark = pytest.mark.asyncio(loop_scope="module")

BAD = "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.numpy())\n"
#: a document with this many findings takes the server a few seconds (the benchmark uses 25,000)
MANY = 3000


class Responses:
    """Every response the client got, by id (``None`` for those to a message whose id could not be read)."""

    def __init__(self, client: RecordingClient) -> None:
        self.seen: list[tuple[object, object]] = []
        handle = client.protocol._handle_response  # the client drops responses to ids it did not send

        def recording(msg_id, result=None, error=None):
            self.seen.append((msg_id, error))
            return handle(msg_id, result, error)

        client.protocol._handle_response = recording

    async def to(self, msg_id: object) -> object:
        for _ in range(400):
            for seen_id, error in self.seen:
                if seen_id == msg_id:
                    self.seen.remove((seen_id, error))
                    return error
            await asyncio.sleep(0.05)
        raise AssertionError(f"no response to {msg_id!r}")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("robust")
    (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n")
    return root


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER, client_factory=make_client))
async def client(lsp_client: RecordingClient, project: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=project.as_uri()))
    lsp_client.responses = Responses(lsp_client)
    yield
    await lsp_client.shutdown_session()


def send_raw(client: RecordingClient, body: bytes, length: int | None = None) -> None:
    """A message as bytes, with the Content-Length given (or the right one)."""
    client.protocol.writer.write(f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode()
                                 + body)


def request(msg_id: int, method: str, params: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


async def still_answers(client: RecordingClient, project: Path, name: str) -> None:
    uri = open_document(client, project, name, BAD)
    assert [d.code for d in (await published(client, uri, 1)).diagnostics] == ["NPT001"]


@pytest.mark.parametrize(("body", "code"), [
    (b"{not json", -32700),
    (b"\xff\xfe", -32700),
    (b"[" * 100_000, -32700),
    (b"[1, 2]", -32600),
    (b'{"jsonrpc": "2.0", "id": null}', -32600),
    (b'{"jsonrpc": "1.0", "id": null, "method": "shutdown"}', -32600),
])
async def test_a_message_that_is_not_json_rpc_gets_an_error_with_a_null_id(client: RecordingClient, project: Path,
                                                                           body: bytes, code: int):
    send_raw(client, body)
    error = await client.responses.to(None)
    assert error is not None and error.code == code
    await still_answers(client, project, f"after_{abs(code)}_{len(body)}.py")


async def test_a_request_with_params_that_do_not_fit_gets_invalid_params_with_its_id(client: RecordingClient):
    send_raw(client, request(9001, "textDocument/codeAction", {"textDocument": 5}))
    error = await client.responses.to(9001)
    assert error is not None and error.code == -32602 and "textDocument/codeAction" in error.message
    start = {"line": 0, "character": 0}
    send_raw(client, request(9002, "textDocument/codeAction", {
        "textDocument": {"uri": "file:///nowhere.py"}, "range": {"start": start, "end": start},
        "context": {"diagnostics": []}}))
    assert await client.responses.to(9002) is None  # a well-formed request is answered (with no actions)


@pytest.mark.parametrize("length", [-7, +9])  # too short, too long
async def test_a_wrong_content_length_costs_that_message_only(client: RecordingClient, project: Path, length: int):
    body = request(9100 + length, "shutdown-not-really", None)
    send_raw(client, body, len(body) + length)
    if length > 0:  # the server waits for the bytes the header promised: the next message gives them
        send_raw(client, request(9200, "textDocument/codeAction", {"textDocument": 5}))
    error = await client.responses.to(None)
    assert error is not None and error.code == -32700
    await still_answers(client, project, f"after_length{length}.py")


async def test_changes_to_a_document_that_is_not_open_are_a_log_line(client: RecordingClient, project: Path):
    uri = (project / "never_opened.py").as_uri()
    logged = len(client.log_messages)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=BAD)]))
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    await still_answers(client, project, "after_unknown.py")
    lines = [m.message for m in client.log_messages[logged:]]
    assert lines == [f"np2torch-lint: ignored textDocument/didChange of {uri}: the document is not open",
                     f"np2torch-lint: ignored textDocument/didSave of {uri}: the document is not open"]
    assert not client.messages  # no pop-ups


async def test_a_big_document_publishes_every_finding_after_a_small_one_opened_later(client: RecordingClient,
                                                                                     project: Path):
    big_text = "import torch\nw = torch.ones(2, requires_grad=True)\n" + "w.numpy()\n" * MANY
    big = open_document(client, project, "big.py", big_text)
    small = open_document(client, project, "small.py", BAD)
    small_published = await published(client, small, 1)
    assert [d.code for d in small_published.diagnostics] == ["NPT001"]
    big_published = await published(client, big, 1)
    assert client.published.index(small_published) < client.published.index(big_published)
    assert [(d.range.start.line, d.range.end.character) for d in big_published.diagnostics] == [
        (line, 9) for line in range(2, MANY + 2)]


async def test_shutdown_is_answered_while_a_big_document_is_being_linted():
    config = ClientServerConfig(server_command=SERVER, client_factory=make_client)
    own = await config.start()
    await own.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    # big enough to be still linting at shutdown however soon the server started (it imports little up front)
    text = "import torch\nw = torch.ones(2, requires_grad=True)\n" + "w.numpy()\n" * (MANY * 4)
    own.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri="untitled:big", language_id="python", version=1, text=text)))
    await asyncio.sleep(0.5)  # linting by now
    await own.shutdown_session()
    assert own._server is not None and own._server.returncode == 0
    assert own.published == []  # the lint still running when shutdown came publishes nothing
    await own.stop()
