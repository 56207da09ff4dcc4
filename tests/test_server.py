"""The language server, started as a subprocess and driven over stdio by pytest-lsp's client (a real LSP client)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from np2torch_lint.engine import lint_text

pytestmark = pytest.mark.asyncio(loop_scope="module")

SERVER = [sys.executable, "-m", "np2torch_lint", "server"]
BAD = "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.numpy())\n"
WAIT_SECONDS = 20


class RecordingClient(LanguageClient):
    """pytest-lsp's client, also keeping every publishDiagnostics (with its version) and applying edits asked for."""

    published: list[types.PublishDiagnosticsParams]
    edits_asked: list[types.ApplyWorkspaceEditParams]


def make_client() -> RecordingClient:
    client = RecordingClient(converter_factory=default_converter)
    client.published, client.edits_asked = [], []

    def publish(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
        client.published.append(params)
        client.diagnostics[params.uri] = params.diagnostics

    def apply_edit(client: RecordingClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        client.edits_asked.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
                                   types.WORKSPACE_APPLY_EDIT: apply_edit})
    return client


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "pyproject.toml").write_text('[tool.np2torch-lint]\nignore = ["NPT004"]\n')
    return root


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER, client_factory=make_client))
async def client(lsp_client: RecordingClient, project: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=project.as_uri()))
    yield
    await lsp_client.shutdown_session()


def open_document(client: RecordingClient, project: Path, name: str, text: str) -> str:
    uri = (project / name).as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


def change_document(client: RecordingClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def published(client: RecordingClient, uri: str, version: int) -> types.PublishDiagnosticsParams:
    """The diagnostics published for ``version`` of the document (waiting for them)."""
    for _ in range(WAIT_SECONDS * 20):
        for params in reversed(client.published):
            if params.uri == uri and params.version == version:
                return params
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics for version {version} of {uri}")


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to a text, as an editor would."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line]
        units, column = 0, 0
        while column < len(line) and units < position.character:
            units += len(line[column].encode("utf-16-le")) // 2
            column += 1
        return sum(map(len, lines[:position.line])) + column

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def edits_for(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    assert edit.document_changes is not None
    return [text_edit for change in edit.document_changes if change.text_document.uri == uri
            for text_edit in change.edits]


async def code_actions(client: RecordingClient, uri: str, line: int) -> list[types.CodeAction]:
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(types.Position(line, 0), types.Position(line, 0)),
        context=types.CodeActionContext(diagnostics=[])))
    return [action for action in actions or [] if isinstance(action, types.CodeAction)]


async def test_open_publishes_diagnostics_with_range_code_severity_and_rule_page(client: RecordingClient,
                                                                                 project: Path):
    uri = open_document(client, project, "open.py", BAD + 'print("é😀", w.numpy())\n')
    diagnostics = (await published(client, uri, 1)).diagnostics
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
            for d in diagnostics] == [("NPT001", 2, 6, 2, 15), ("NPT001", 3, 13, 3, 22)]  # UTF-16: the emoji is 2
    first = diagnostics[0]
    assert first.severity == types.DiagnosticSeverity.Warning and first.source == "np2torch-lint"
    assert first.message.startswith(".numpy() on a tensor that may require grad")
    assert first.code_description is None  # no public address in [project.urls]: no file: link that opens nowhere


async def test_the_workspace_settings_apply(client: RecordingClient, project: Path):
    text = BAD + "import numpy as np\nt = torch.from_numpy(np.random.rand(3))\n"
    assert {d.code for d in lint_text(text, "x.py")} == {"NPT001", "NPT004"}
    uri = open_document(client, project, "settings.py", text)
    assert {d.code for d in (await published(client, uri, 1)).diagnostics} == {"NPT001"}  # ignore = ["NPT004"]


async def test_quick_fix_applies_and_the_change_clears_the_diagnostic(client: RecordingClient, project: Path):
    uri = open_document(client, project, "fix.py", BAD)
    await published(client, uri, 1)
    actions = await code_actions(client, uri, 2)
    assert [action.title for action in actions] == ["Fix NPT001: Convert with to_numpy()",
                                                    "Disable NPT001 for this line",
                                                    "Fix all safe np2torch-lint findings"]
    quick_fix = actions[0]
    assert quick_fix.kind == types.CodeActionKind.QuickFix and quick_fix.is_preferred
    assert quick_fix.diagnostics and quick_fix.diagnostics[0].code == "NPT001"
    fixed = apply_text_edits(BAD, edits_for(quick_fix.edit, uri))
    assert "from np2torch_lint.runtime import to_numpy" in fixed and "print(to_numpy(w))" in fixed
    assert lint_text(fixed, "fix.py") == []
    change_document(client, uri, 2, fixed)
    assert list((await published(client, uri, 2)).diagnostics) == []


async def test_unsafe_fixes_are_labelled_and_not_preferred(client: RecordingClient, project: Path):
    text = "import numpy as np\nimport torch\nt = torch.tensor(np.zeros(3)).float()\n"
    uri = open_document(client, project, "unsafe.py", text)
    assert [d.code for d in (await published(client, uri, 1)).diagnostics] == ["NPT010"]
    fix = (await code_actions(client, uri, 2))[0]
    assert fix.title.startswith("Fix NPT010: ") and fix.title.endswith(" (unsafe)") and not fix.is_preferred


async def test_disable_for_this_line_adds_the_noqa(client: RecordingClient, project: Path):
    text = BAD.replace("print(w.numpy())", "print(w.numpy())  # noqa: NPT002")
    uri = open_document(client, project, "noqa.py", text)
    await published(client, uri, 1)
    disable = next(a for a in await code_actions(client, uri, 2) if a.title.startswith("Disable"))
    silenced = apply_text_edits(text, edits_for(disable.edit, uri))
    assert silenced.splitlines()[2] == "print(w.numpy())  # noqa: NPT002, NPT001"
    change_document(client, uri, 2, silenced)
    assert list((await published(client, uri, 2)).diagnostics) == []


async def test_changes_in_a_burst_are_linted_once_for_the_last_text(client: RecordingClient, project: Path):
    uri = open_document(client, project, "burst.py", "import torch\n")
    await published(client, uri, 1)
    before = len(client.published)
    for version in range(2, 7):
        change_document(client, uri, version, BAD + "\n" * version)
    assert [d.range.start.line for d in (await published(client, uri, 6)).diagnostics] == [2]
    assert len([p for p in client.published[before:] if p.uri == uri]) < 5


async def test_a_syntax_error_clears_the_diagnostics_and_logs_one_line(client: RecordingClient, project: Path):
    uri = open_document(client, project, "broken.py", BAD)
    assert (await published(client, uri, 1)).diagnostics
    logged = len(client.log_messages)
    change_document(client, uri, 2, BAD + "def broken(:\n")
    assert list((await published(client, uri, 2)).diagnostics) == []
    lines = [m.message for m in client.log_messages[logged:]]
    assert len(lines) == 1 and lines[0].endswith("broken.py: could not parse: invalid syntax at 4:12")
    change_document(client, uri, 3, BAD)  # the server is still there and lints the mended text
    assert len((await published(client, uri, 3)).diagnostics) == 1


async def test_execute_command_fix_all_safe_has_the_client_apply_the_edit(client: RecordingClient, project: Path):
    text = BAD + "import numpy as np\nu = torch.tensor(np.zeros(3)).float()\nprint(w.numpy())\n"
    uri = open_document(client, project, "fix_all.py", text)
    await published(client, uri, 1)
    applied = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="np2torch-lint.fixAll", arguments=[uri]))
    assert applied is True
    fixed = apply_text_edits(text, edits_for(client.edits_asked[-1].edit, uri))
    assert fixed.count("to_numpy(w)") == 2
    assert [d.code for d in lint_text(fixed, "fix_all.py")] == ["NPT010"]  # unsafe: left for the user


async def test_without_pygls_the_server_says_which_extra_to_install(monkeypatch, capsys):
    from np2torch_lint import server

    def missing():
        raise ModuleNotFoundError("No module named 'pygls'", name="pygls")

    monkeypatch.setattr(server, "build_server", missing)
    assert server.main([]) == 2
    assert capsys.readouterr().err == ("np2torch-lint server: needs pygls (pygls is not installed): "
                                       "pip install 'np2torch-lint[lsp]'\n")


async def test_the_server_shuts_down_cleanly():
    config = ClientServerConfig(server_command=SERVER)
    own = await config.start()
    await own.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    await own.shutdown_session()
    assert own._server is not None and own._server.returncode == 0
    await own.stop()


async def test_a_saved_module_shows_what_its_importers_calls_find_there(client: RecordingClient, project: Path):
    # evaluation.py alone finds nothing: ``model`` is a parameter; train.py passes a module, whose output needs grad
    callee = "def evaluate(model, x):\n    return model(x).numpy()\n"
    (project / "evaluation.py").write_text(callee)
    (project / "train.py").write_text("import torch\nfrom evaluation import evaluate\n\n"
                                      "evaluate(torch.nn.Linear(2, 2), torch.ones(2))\n")
    assert lint_text(callee, "evaluation.py") == []
    uri = open_document(client, project, "evaluation.py", callee)
    (diagnostic,) = (await published(client, uri, 1)).diagnostics
    assert diagnostic.code == "NPT001" and diagnostic.range.start.line == 1
    assert diagnostic.message.endswith("(through the call of evaluate at train.py:4)")
    change_document(client, uri, 2, callee + "\n")  # not saved: the importers' results were for the file on disk
    assert not (await published(client, uri, 2)).diagnostics
