"""End to end through the real server over stdio (pytest-lsp drives it)."""

import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_support import apply_lsp_edits, open_doc

SCRIPT = (
    "#!/bin/bash\n"
    "python3 -m sglang.launch_server --model-path m \\\n"
    "  --tp_size 2 \\\n"
    "  --attention-backend flash_infer \\\n"
    "  --port 30000\n"
)
URI = "file:///tmp/servelint-e2e/launch.sh"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "servelint", "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(configuration=False)),
        initialization_options={"servelint": {"severity": {"SL004": "information"}}},
    ))
    yield
    await lsp_client.shutdown_session()


async def open_and_wait(client: LanguageClient, text: str, uri: str = URI, version: int = 1):
    return await open_doc(client, uri, "shellscript", text, version)


async def test_diagnostics_on_exact_tokens(client: LanguageClient):
    diags = await open_and_wait(client, SCRIPT)
    by_code = {d.code: d for d in diags}
    assert set(by_code) == {"SL002", "SL007"}
    d = by_code["SL002"]
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (2, 2, 11)
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.code_description.href.endswith("SL002.md")
    c = by_code["SL007"]
    assert (c.range.start.line, c.range.start.character, c.range.end.character) == (3, 22, 33)
    assert "invalid choice: 'flash_infer'" in c.message
    assert c.related_information and c.related_information[0].location.range.start.line == 3


async def test_quick_fix_and_fix_all(client: LanguageClient):
    diags = await open_and_wait(client, SCRIPT)
    d = next(d for d in diags if d.code == "SL002")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=d.range,
        context=types.CodeActionContext(diagnostics=[d])))
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert quick and quick[0].is_preferred
    (edit,) = quick[0].edit.changes[URI]
    assert edit.new_text == "--tp-size"
    assert edit.range == d.range
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=d.range,
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.servelint"])))
    assert [a.kind for a in actions] == ["source.fixAll.servelint"]
    assert apply_lsp_edits(SCRIPT, actions[0].edit.changes[URI]) == SCRIPT.replace("--tp_size", "--tp-size")


async def test_hover_on_option_and_on_finding(client: LanguageClient):
    await open_and_wait(client, SCRIPT)
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(4, 5)))
    assert "--port" in h.contents.value and "Default" in h.contents.value
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(2, 5)))
    assert "SL002" in h.contents.value and "underscore" in h.contents.value.lower()


async def test_change_relints_and_close_clears(client: LanguageClient):
    await open_and_wait(client, SCRIPT)
    fixed = SCRIPT.replace("--tp_size", "--tp-size").replace("flash_infer", "flashinfer")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[URI]) == []
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=URI)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[URI]) == []


SEED_SCRIPT = (
    "#!/bin/bash\n"
    "python3 -m sglang.launch_server --model-path m --is-embedding \\\n"
    "  --chunked-prefill-size=-1 --disable-radix-cache \\\n"
    "  --prefill-only-disable-kv-cache \\\n"
    "  --enable-hisparse\n"
    "echo started\n"
)
SEED_URI = "file:///tmp/servelint-e2e/embed.sh"


async def test_rule_conflict_on_both_flags_with_hover_and_fix(client: LanguageClient):
    diags = await open_and_wait(client, SEED_SCRIPT, uri=SEED_URI)
    assert [(d.code, d.severity, d.range.start.line, d.range.start.character, d.range.end.character)
            for d in diags] == [
        ("SL101", types.DiagnosticSeverity.Error, 4, 2, 19),
        ("SL101", types.DiagnosticSeverity.Hint, 3, 2, 33),
    ]
    err = diags[0]
    assert err.message.startswith("--prefill-only-disable-kv-cache replaces the KV cache with a pool that stores nothing, while --enable-hisparse needs a KV pool of its own")
    assert err.data["sglangMessage"].startswith(
        "--prefill-only-disable-kv-cache is incompatible with --enable-hisparse")
    assert err.related_information[0].location.range.start.line == 3
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=SEED_URI), position=types.Position(4, 6)))
    for part in ("SL101", "**SGLang's message:** `--prefill-only-disable-kv-cache is incompatible with "
                 "--enable-hisparse", "HiSparse attention selects its own KV pool family", "**Solutions**",
                 "**Prevention**", "# before", "github.com/sgl-project/sglang"):
        assert part in h.contents.value, part
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=SEED_URI), position=types.Position(3, 10)))
    assert "Rules about this option" in h.contents.value and "SL101" in h.contents.value
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=SEED_URI), range=err.range,
        context=types.CodeActionContext(diagnostics=[err])))
    titles = [(a.title, bool(a.is_preferred)) for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert titles == [("Remove --enable-hisparse (SL101)", True),
                      ("Remove --prefill-only-disable-kv-cache (SL101)", False),
                      ("Disable SL101 for this launch", False),
                      ("Disable SL101 for this file", False)]
    fixed = apply_lsp_edits(SEED_SCRIPT, actions[0].edit.changes[SEED_URI])
    assert fixed == SEED_SCRIPT.replace(" \\\n  --enable-hisparse\n", "\n")


async def test_broken_rule_pack_is_reported_and_valid_rules_still_apply(client: LanguageClient, tmp_path):
    rules = tmp_path / ".servelint" / "rules"
    rules.mkdir(parents=True)
    (rules / "team.yaml").write_text(
        "- id: ok\n  code: TEAM-1\n  errorMessage: no LoRA with HiSparse here\n"
        "  condition: {all: [{present: --enable-lora}, {present: --enable-hisparse}]}\n"
        "- id: broken\n  errorMessage: x\n  condition: {present: --does-not-exist}\n")
    uri = (tmp_path / "run.sh").as_uri()
    diags = await open_and_wait(client, "python3 -m sglang.launch_server --model-path m --enable-lora --enable-hisparse\n", uri=uri)
    assert "TEAM-1" in [d.code for d in diags]
    shown = [m.message for m in client.messages if "broken rule" in m.message]
    assert shown and "--does-not-exist" in shown[0] and "team.yaml:5:3" in shown[0]
    pack_uri = (rules / "team.yaml").as_uri()
    pack_diags = await open_and_wait(client, (rules / "team.yaml").read_text(), uri=pack_uri)
    assert [(d.code, d.range.start.line) for d in pack_diags] == [("SL090", 4)]
