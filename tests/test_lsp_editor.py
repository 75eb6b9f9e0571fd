"""What VS Code sends that other clients do not, through the real server over stdio
(pytest-lsp): notebook cells as `vscode-notebook-cell:` documents, workspace folders with
settings of their own, the status command, servelint.showNotifications, and code actions
(the automatic request at each cursor move is answered without linting)."""

import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_support import apply_lsp_edits, diagnostics_until, open_doc, quick_fixes, start_session
from servelint.model import LineIndex

CELL = "import os\n!python -m sglang.launch_server --model-path m --tp_size 2\n"
LAUNCH = "python3 -m sglang.launch_server --model-path m --tp_size 2 --attention-backend flash_infer\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "servelint", "lsp"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def cell_uri(notebook: Path, cell: str) -> str:
    return "vscode-notebook-cell:" + notebook.as_uri()[len("file:"):] + "#" + cell


def at(text: str, needle: str) -> tuple[int, int]:
    return LineIndex(text).position(text.index(needle))


async def test_a_notebook_cell_is_linted_as_a_cell(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path)
    uri = cell_uri(tmp_path / "serve.ipynb", "W0sZmlsZQ%3D%3D")
    diags = await open_doc(client, uri, "python", CELL)
    assert [d.code for d in diags] == ["SL002"]
    assert (diags[0].range.start.line, diags[0].range.start.character) == at(CELL, "--tp_size")
    [fix] = [a for a in await quick_fixes(client, uri, diags[0]) if a.is_preferred]
    assert apply_lsp_edits(CELL, fix.edit.changes[uri]) == CELL.replace("--tp_size", "--tp-size")


async def test_bash_and_markdown_cells(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path)
    nb = tmp_path / "serve.ipynb"
    magic = "%%bash\npython -m sglang.launch_server --model-path m \\\n  --tp_size 2\n"
    diags = await open_doc(client, cell_uri(nb, "c1"), "python", magic)
    assert [(d.code, d.range.start.line) for d in diags] == [("SL002", 2)]
    shell = "python -m sglang.launch_server --model-path m --tp_size 2\n"
    diags = await open_doc(client, cell_uri(nb, "c2"), "shellscript", shell)
    assert [d.code for d in diags] == ["SL002"]
    md = "Serve it:\n\n```bash\npython -m sglang.launch_server --model-path m --tp_size 2\n```\n"
    diags = await open_doc(client, cell_uri(nb, "c3"), "markdown", md)
    assert [(d.code, d.range.start.line) for d in diags] == [("SL002", 3)]


async def test_a_cell_takes_the_notebook_folders_configuration(client: LanguageClient, tmp_path):
    (tmp_path / ".servelint.toml").write_text('ignore = ["SL002"]\n')
    await start_session(client, root=tmp_path)
    text = "!python -m sglang.launch_server --model-path m --tp_size 2 --attention-backend flash_infer\n"
    diags = await open_doc(client, cell_uri(tmp_path / "serve.ipynb", "c1"), "python", text)
    assert [d.code for d in diags] == ["SL007"]


async def test_notebook_fix_all_edits_every_cell(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path)
    nb = tmp_path / "serve.ipynb"
    other = tmp_path / "other.ipynb"
    texts = {cell_uri(nb, "0"): "# Serving\n\nThe notebook's first cell is Markdown.\n",
             cell_uri(nb, "a"): CELL,
             cell_uri(nb, "b"): "%%bash\npython -m sglang.launch_server --model-path m --tp_size 4\n",
             cell_uri(nb, "c"): "print('no launch here')\n",
             cell_uri(other, "a"): CELL}
    for uri, text in texts.items():
        await open_doc(client, uri, "markdown" if uri.endswith("#0") else "python", text)
    first = cell_uri(nb, "0")  # VS Code asks the first cell, most often a Markdown one
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=first),
        range=types.Range(types.Position(0, 0), types.Position(0, 0)),
        context=types.CodeActionContext(diagnostics=[], only=["notebook.source.fixAll"])))
    [action] = actions
    assert action.kind == "notebook.source.fixAll.servelint"
    changes = action.edit.changes
    assert sorted(changes) == sorted([cell_uri(nb, "a"), cell_uri(nb, "b")])  # not other.ipynb's
    for uri, edits in changes.items():
        assert apply_lsp_edits(texts[uri], edits) == texts[uri].replace("--tp_size", "--tp-size")


async def test_each_workspace_folder_has_its_own_settings(client: LanguageClient, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    client.set_configuration({"ignore": ["SL007"]}, section="servelint")
    client.set_configuration({"ignore": ["SL002"]}, section="servelint", scope_uri=two.as_uri())
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
            configuration=True, workspace_folders=True)),
        root_uri=one.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=one.as_uri(), name="one"),
                           types.WorkspaceFolder(uri=two.as_uri(), name="two")]))
    a, b = (one / "a.sh").as_uri(), (two / "b.sh").as_uri()
    await open_doc(client, a, "shellscript", LAUNCH)
    await diagnostics_until(client, a, lambda c: c == ["SL002"])
    await open_doc(client, b, "shellscript", LAUNCH)
    await diagnostics_until(client, b, lambda c: c == ["SL007"])
    # A change to one folder's settings reaches its documents without a restart.
    client.set_configuration({"ignore": []}, section="servelint", scope_uri=two.as_uri())
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await diagnostics_until(client, b, lambda c: c == ["SL002", "SL007"])
    assert sorted(d.code for d in client.diagnostics[a]) == ["SL002"]


async def test_status_command(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path, options={"settings": {"sglangVersion": "0.5.23"}})
    uri = (tmp_path / "a.sh").as_uri()
    await open_doc(client, uri, "shellscript", LAUNCH)
    status = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="servelint.server.status", arguments=[uri]))
    import servelint
    assert status["servelint"] == servelint.__version__
    assert status["sglang"] == "0.5.23"
    assert Path(status["python"]).exists()
    assert status["pythonVersion"].startswith(f"{sys.version_info[0]}.{sys.version_info[1]}.")
    assert Path(status["location"]) == Path(servelint.__file__).parent


async def test_show_notifications_off_keeps_problems_in_the_log(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path, options={"settings": {
        "showNotifications": "off", "gpu": "sm999"}})
    await open_doc(client, (tmp_path / "a.sh").as_uri(), "shellscript", LAUNCH)
    assert not [m for m in client.messages if "servelint.gpu" in m.message]
    assert [m for m in client.log_messages if "servelint.gpu" in m.message]


async def test_show_notifications_on_warning_shows_invalid_settings(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path, options={"settings": {
        "showNotifications": "onWarning", "gpu": "sm999"}})
    await open_doc(client, (tmp_path / "a.sh").as_uri(), "shellscript", LAUNCH)
    assert [m for m in client.messages if "servelint.gpu" in m.message]


async def test_code_actions_at_each_cursor_move_offer_no_fix_all(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path)
    uri = (tmp_path / "a.sh").as_uri()
    diags = await open_doc(client, uri, "shellscript", LAUNCH)

    async def kinds(trigger, only=None):
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=diags[0].range,
            context=types.CodeActionContext(diagnostics=diags, only=only, trigger_kind=trigger)))
        return sorted({a.kind for a in actions or []})

    auto, invoked = types.CodeActionTriggerKind.Automatic, types.CodeActionTriggerKind.Invoked
    assert await kinds(auto) == ["quickfix"]
    assert await kinds(invoked) == ["quickfix", "source.fixAll.servelint"]
    assert await kinds(auto, ["source.fixAll"]) == ["source.fixAll.servelint"]
    assert await kinds(auto, ["source"]) == ["source.fixAll.servelint"]
    assert await kinds(invoked, ["quickfix"]) == ["quickfix"]


async def test_quick_fixes_for_diagnostics_of_the_text_before_an_edit(client: LanguageClient, tmp_path):
    """VS Code can ask for code actions with the diagnostics it had before its own edit
    (the new ones not yet arrived): the fixes come from the current text, never stale
    edits; a finding that moved or went away gets none."""
    await start_session(client, root=tmp_path)
    uri = (tmp_path / "q.sh").as_uri()
    diags = await open_doc(client, uri, "shellscript", LAUNCH)
    stale = [d for d in diags if d.code == "SL007"]
    start = LAUNCH.index("--tp_size")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(0, start), types.Position(0, start + 9)), text="--tp-size")]))
    await diagnostics_until(client, uri, lambda c: c == ["SL007"])
    current = LAUNCH.replace("--tp_size", "--tp-size")
    [fix] = [a for a in await quick_fixes(client, uri, stale[0]) if a.is_preferred]
    assert apply_lsp_edits(current, fix.edit.changes[uri]) == current.replace("flash_infer", "flashinfer")
    # Now an edit that moves the finding: the stale diagnostic's range names nothing.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(0, 0), types.Position(0, 0)), text="  ")]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert await quick_fixes(client, uri, stale[0]) == []


async def test_servelint_s_own_rule_pages_are_not_linted(client: LanguageClient, tmp_path):
    """A diagnostic's link opens the installed rule page; its examples are wrong on
    purpose and must not show up as problems (as the first document and later)."""
    from servelint.docs import page_path
    await start_session(client, root=tmp_path)
    for code in ("SL002", "SL007"):
        page = page_path(code)
        text = page.read_text()
        assert "sglang.launch_server" in text  # the page does hold a launch that would be flagged
        assert list(await open_doc(client, page.as_uri(), "markdown", text)) == []
    other = tmp_path / "SL002.md"  # the same text elsewhere is linted
    assert [d.code for d in await open_doc(client, other.as_uri(), "markdown", page_path("SL002").read_text())]
