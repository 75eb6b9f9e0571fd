"""The editor side of releases: the status command names the release each launch of the
document is judged by and why, and the code action "Check upgrade to SGLang X" on an
image tag shows what the upgrade breaks as diagnostics until it is stopped."""

import sys
from typing import Union

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_support import diagnostics_until, open_doc, start_session
from servelint.catalog import newest_version
from servelint.model import LineIndex

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "servelint", "lsp"])
OLD = ("docker run --gpus all lmsysorg/sglang:v0.4.6.post1-cu124 \\\n"
       "  python3 -m sglang.launch_server --model-path /models/m --enable-ep-moe --tp-size 8\n")


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    # lsprotocol 2025.0.0 reads every code action that has a `command` as a bare Command
    # (its union hook only looks for the key), so a CodeAction that runs a command would
    # reach this test as a Command with the command object turned into a string. Read a
    # nested command object as what it is: a CodeAction (VS Code and Neovim do).
    conv = lsp_client.protocol._converter

    def code_action_or_command(obj, _):
        nested = isinstance(obj.get("command"), dict)
        return conv.structure(obj, types.CodeAction if nested or "command" not in obj
                              else types.Command)
    conv.register_structure_hook(Union[types.Command, types.CodeAction], code_action_or_command)
    yield
    await lsp_client.shutdown_session()


async def status_of(client, uri):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="servelint.server.status", arguments=[uri]))


def position(text, needle, delta=0):
    return types.Position(*LineIndex(text).position(text.index(needle) + delta))


async def actions_at(client, uri, text, needle):
    pos = position(text, needle, 3)
    found = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(pos, pos),
        context=types.CodeActionContext(diagnostics=[],
                                        trigger_kind=types.CodeActionTriggerKind.Invoked)))
    return found or []


async def test_status_names_the_release_read_from_the_image(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path)
    uri = (tmp_path / "old.sh").as_uri()
    assert not await open_doc(client, uri, "shellscript", OLD)
    status = await status_of(client, uri)
    assert status["sglang"] == "0.4.6.post1"
    assert status["sglangFrom"].startswith("0.4.6.post1: image lmsysorg/sglang:v0.4.6.post1-cu124")
    assert status["sglangRequested"] == "auto"


async def test_check_upgrade_on_the_image_tag_reports_what_breaks_until_stopped(
        client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path)
    uri = (tmp_path / "old.sh").as_uri()
    assert not await open_doc(client, uri, "shellscript", OLD)
    newest = newest_version()
    # Nothing is offered away from the tag.
    assert not [a for a in await actions_at(client, uri, OLD, "--model-path")
                if a.title.startswith("Check upgrade")]
    [check] = [a for a in await actions_at(client, uri, OLD, "lmsysorg")
               if a.title.startswith("Check upgrade")]
    assert check.title == f"Check upgrade to SGLang {newest} (this launch runs 0.4.6.post1)"
    assert check.kind == types.CodeActionKind.Refactor
    reply = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=check.command.command, arguments=check.command.arguments))
    assert reply["target"] == newest and reply["problems"] >= 1
    diags = await diagnostics_until(client, uri, lambda codes: len(codes) >= 1)
    ep = position(OLD, "--enable-ep-moe")
    assert all(d.range.start == ep for d in diags)
    assert all(d.message.startswith(f"upgrading this launch from SGLang 0.4.6.post1 to {newest}: ")
               for d in diags)
    assert [m for m in client.messages if m.message.startswith("Upgrading from SGLang 0.4.6.post1")]
    # Stop: offered anywhere in the document, and the findings go away.
    [stop] = [a for a in await actions_at(client, uri, OLD, "--model-path")
              if a.title.startswith("Stop checking")]
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=stop.command.command, arguments=stop.command.arguments))
    await diagnostics_until(client, uri, lambda codes: codes == [])


async def test_the_project_search_stops_at_the_workspace_folder(client: LanguageClient, tmp_path):
    # A pin above the workspace folder belongs to someone else's project.
    (tmp_path / "requirements.txt").write_text("sglang==0.4.6\n")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    await start_session(client, root=ws)
    launch = "python3 -m sglang.launch_server --model-path m\n"
    uri = (ws / "sub" / "run.sh").as_uri()
    await open_doc(client, uri, "shellscript", launch)
    assert (await status_of(client, uri))["sglang"] == newest_version()
    # The same pin inside the workspace folder counts.
    (ws / "requirements.txt").write_text("sglang==0.4.6\n")
    other = (ws / "sub" / "other.sh").as_uri()
    await open_doc(client, other, "shellscript", launch)
    status = await status_of(client, other)
    assert status["sglang"] == "0.4.6"
    assert "requirements.txt" in status["sglangFrom"]
