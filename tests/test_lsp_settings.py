"""Settings and project configuration through the real server over stdio (pytest-lsp):
initializationOptions, workspace/configuration, didChangeConfiguration without restart,
.servelint.toml with per-file ignores, limited mode, invalid files, lintWorkspace."""

import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_support import diagnostics_until, open_doc, start_session

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp_size 2 --attention-backend flash_infer\n"
BOTH = ["SL002", "SL007"]
LINT_WORKSPACE = "servelint.server.lintWorkspace"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "servelint", "lsp"]))
async def client(lsp_client: LanguageClient):
    yield  # each test initializes with its own workspace and settings
    await lsp_client.shutdown_session()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


async def open_file(client, path: Path, text: str = LAUNCH):
    return await open_doc(client, path.as_uri(), "shellscript", text)


def codes(diags):
    return sorted(d.code for d in diags)


async def test_settings_in_each_initialization_options_shape(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path, options={"settings": {"ignore": ["SL002"]}})
    assert codes(await open_file(client, tmp_path / "a.sh")) == ["SL007"]


async def test_flat_initialization_options(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path, options={"ignore": ["SL007"], "severity": {"SL0": "hint"}})
    diags = await open_file(client, tmp_path / "a.sh")
    assert [(d.code, d.severity) for d in diags] == [("SL002", types.DiagnosticSeverity.Hint)]


async def test_workspace_configuration_pull_and_change_without_restart(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path, pull=True, settings={"ignore": ["SL007"]})
    uri = (tmp_path / "a.sh").as_uri()
    await open_file(client, tmp_path / "a.sh")
    await diagnostics_until(client, uri, lambda c: c == ["SL002"])
    client.set_configuration({"ignore": ["SL002"]}, section="servelint")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await diagnostics_until(client, uri, lambda c: c == ["SL007"])


async def test_pushed_configuration_relints_every_open_document(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path)
    assert codes(await open_file(client, tmp_path / "a.sh")) == BOTH
    assert codes(await open_file(client, tmp_path / "b.sh")) == BOTH
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"servelint": {"ignore": ["SL002"]}}))
    for name in ("a.sh", "b.sh"):
        await diagnostics_until(client, (tmp_path / name).as_uri(), lambda c: c == ["SL007"])
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"servelint": {"enable": False}}))
    for name in ("a.sh", "b.sh"):
        await diagnostics_until(client, (tmp_path / name).as_uri(), lambda c: c == [])


async def test_invalid_setting_warns_naming_the_key(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path, options={"servelint": {"ignore": "SL002", "gpu": "h100"}})
    assert codes(await open_file(client, tmp_path / "a.sh")) == BOTH  # defaults for those keys
    warned = [m for m in client.messages if m.message.startswith("servelint settings:")]
    assert len(warned) == 1 and warned[0].type == types.MessageType.Warning
    assert "servelint.ignore" in warned[0].message and "servelint.gpu" in warned[0].message


def project(root: Path) -> Path:
    write(root / ".servelint.toml",
          'ignore = ["SL007"]\n[per-file-ignores]\n"legacy/*.sh" = ["SL002"]\n')
    write(root / ".servelint" / "rules" / "team.yaml",
          "- id: tp\n  code: TEAM-1\n  errorMessage: TP is set\n  condition: {present: --attention-backend}\n")
    return root


async def test_project_file_and_per_file_ignores(client: LanguageClient, tmp_path):
    root = project(tmp_path)
    await start_session(client, root=root, options={"servelint": {"severity": {"SL002": "warning"}}})
    diags = await open_file(client, root / "run.sh")
    assert [(d.code, d.severity) for d in diags] == [("SL002", types.DiagnosticSeverity.Warning),
                                                     ("TEAM-1", types.DiagnosticSeverity.Error)]
    assert codes(await open_file(client, root / "legacy" / "old.sh")) == ["TEAM-1"]


async def test_editor_setting_beats_the_project_file(client: LanguageClient, tmp_path):
    root = project(tmp_path)
    await start_session(client, root=root, options={"servelint": {"ignore": ["TEAM"]}})
    assert codes(await open_file(client, root / "run.sh")) == BOTH


async def test_untrusted_workspace_reads_no_project_files(client: LanguageClient, tmp_path):
    root = project(tmp_path)
    pack = write(tmp_path.parent / f"{tmp_path.name}-pack.yaml",
                 "- id: lora\n  code: TEAM-2\n  errorMessage: x\n  condition: {present: --model-path}\n")
    await start_session(client, root=root, options={
        "workspaceTrusted": False, "servelint": {"rulePacks": [str(pack)]}})
    assert codes(await open_file(client, root / "legacy" / "old.sh")) == BOTH


async def test_invalid_project_file_shows_one_message_and_uses_defaults(client: LanguageClient, tmp_path):
    bad = write(tmp_path / ".servelint.toml", 'ignore = ["SL002"]\nselcet = ["SL0"]\n')
    await start_session(client, root=tmp_path)
    assert codes(await open_file(client, tmp_path / "a.sh")) == BOTH
    assert codes(await open_file(client, tmp_path / "sub" / "b.sh")) == BOTH
    shown = [m for m in client.messages if "invalid servelint configuration" in m.message]
    assert len(shown) == 1 and shown[0].type == types.MessageType.Warning
    assert str(bad) in shown[0].message and "`selcet`" in shown[0].message
    assert any("invalid servelint configuration" in m.message for m in client.log_messages)
    # Fixed, and reported as changed: every open document takes it up.
    bad.write_text('ignore = ["SL002"]\nselect = ["SL0"]\n')
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=bad.as_uri(), type=types.FileChangeType.Changed)]))
    for name in ("a.sh", "sub/b.sh"):
        await diagnostics_until(client, (tmp_path / name).as_uri(), lambda c: c == ["SL007"])


async def test_new_project_file_seen_after_watched_files_notification(client: LanguageClient, tmp_path):
    await start_session(client, root=tmp_path)
    assert codes(await open_file(client, tmp_path / "a.sh")) == BOTH
    cfg = write(tmp_path / "pyproject.toml", '[tool.servelint]\nignore = ["SL002"]\n')
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=cfg.as_uri(), type=types.FileChangeType.Created)]))
    await diagnostics_until(client, (tmp_path / "a.sh").as_uri(), lambda c: c == ["SL007"])


async def test_lint_workspace(client: LanguageClient, tmp_path):
    write(tmp_path / "a.sh", LAUNCH)
    write(tmp_path / "deploy" / "b.sh", LAUNCH.replace("flash_infer", "flashinfer"))
    write(tmp_path / "deploy" / "notes.txt", LAUNCH)  # not a format servelint reads
    write(tmp_path / "node_modules" / "x.sh", LAUNCH)
    write(tmp_path / ".cache" / "x.sh", LAUNCH)
    write(tmp_path / ".venv-tools" / "x.sh", LAUNCH)
    write(tmp_path / "big.sh", LAUNCH + "#" * 5000 + "\n")
    (tmp_path / "blob.sh").write_bytes(LAUNCH.encode() + b"\0\1\2")
    result = await start_session(client, root=tmp_path, options={"maxFileBytes": 4000})
    assert LINT_WORKSPACE in result.capabilities.execute_command_provider.commands
    a_uri = (tmp_path / "a.sh").as_uri()
    # a.sh is open with its problems already fixed in the editor: its live diagnostics stay.
    assert list(await open_file(client, tmp_path / "a.sh", LAUNCH.replace("--tp_size", "--tp-size")
                                .replace("flash_infer", "flashinfer"))) == []
    summary = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=LINT_WORKSPACE, arguments=[]))
    assert (summary["files"], summary["findings"]) == (2, 1)
    assert "2 file(s)" in summary["message"] and "1 file(s) larger than maxFileBytes" in summary["message"]
    assert codes(client.diagnostics[(tmp_path / "deploy" / "b.sh").as_uri()]) == ["SL002"]
    assert list(client.diagnostics[a_uri]) == []
    published = set(client.diagnostics)
    for skipped in ("node_modules/x.sh", ".cache/x.sh", ".venv-tools/x.sh", "big.sh", "blob.sh",
                    "deploy/notes.txt"):
        assert (tmp_path / skipped).as_uri() not in published, skipped
    # Fixed on disk and linted again: its diagnostics are cleared.
    write(tmp_path / "deploy" / "b.sh", LAUNCH.replace("flash_infer", "flashinfer").replace("--tp_size", "--tp-size"))
    summary = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=LINT_WORKSPACE, arguments=[]))
    assert (summary["files"], summary["findings"]) == (2, 0)
    assert list(client.diagnostics[(tmp_path / "deploy" / "b.sh").as_uri()]) == []
