"""Completion end to end through the real server over stdio (pytest-lsp drives it)."""

import json
import sys

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_support import apply_lsp_edits, open_doc

LAUNCH = "python3 -m sglang.launch_server"
SCRIPT = (
    "#!/bin/bash\n"
    "echo \"démarrage 🚀\" && " + LAUNCH + " --model-path m \\\n"
    "  --tp-size 2 \\\n"
    "  --attention-backend \\\n"
    "  --tp\n"
)
URI = "file:///tmp/servelint-e2e/complete.sh"
CONFIG = "model-path: org/model\ntp-size: 2\ntrust-remote-code: \n"
CONFIG_URI = "file:///tmp/servelint-e2e/server-config.yaml"


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "servelint", "lsp"])


def capabilities(item_defaults=None) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(configuration=False),
        text_document=types.TextDocumentClientCapabilities(completion=types.CompletionClientCapabilities(
            completion_item=types.ClientCompletionItemOptions(
                documentation_format=[types.MarkupKind.Markdown],
                tag_support=types.CompletionItemTagOptions(value_set=[types.CompletionItemTag.Deprecated])),
            completion_list=types.CompletionListCapabilities(item_defaults=item_defaults),
        )))


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    """A client that wants a text edit on every item."""
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities()))
    lsp_client.server_capabilities = result.capabilities
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def list_range_client(lsp_client: LanguageClient):
    """A client that takes the edit range once, on the list (LSP 3.17 itemDefaults)."""
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities(item_defaults=["editRange"])))
    yield
    await lsp_client.shutdown_session()


async def complete_at(client: LanguageClient, uri: str, line: int, character: int, trigger: str | None = None):
    context = (types.CompletionContext(trigger_kind=types.CompletionTriggerKind.TriggerCharacter,
                                       trigger_character=trigger)
               if trigger else types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked))
    return await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character), context=context))


async def test_completion_is_declared_with_its_trigger_characters(client: LanguageClient):
    provider = client.server_capabilities.completion_provider
    assert provider is not None
    assert list(provider.trigger_characters) == ["-", " ", "="]


async def test_option_names_replace_the_partial_word(client: LanguageClient):
    await open_doc(client, URI, "shellscript", SCRIPT)
    answer = await complete_at(client, URI, 4, 6, trigger="-")
    items = {i.label: i for i in answer.items}
    assert "--tp-size" not in items  # already written
    assert "--model-path" not in items and "--port" in items
    port = items["--port"]
    assert port.kind == types.CompletionItemKind.Property
    assert port.documentation.kind == types.MarkupKind.Markdown and "port" in port.documentation.value
    assert port.text_edit.range == types.Range(types.Position(4, 2), types.Position(4, 6))
    assert apply_lsp_edits(SCRIPT, [port.text_edit]).endswith("  --port\n")
    dp = items["--enable-dp-attention"]
    assert list(dp.tags) == [types.CompletionItemTag.Deprecated]
    assert dp.sort_text > port.sort_text


async def test_values_after_an_option_with_utf16_positions(client: LanguageClient):
    await open_doc(client, URI, "shellscript", SCRIPT)
    line = SCRIPT.splitlines()[1]
    end = len(line.encode("utf-16-le")) // 2  # the rocket counts twice
    answer = await complete_at(client, URI, 1, end - 1, trigger=" ")  # before the backslash
    assert "--port" in [i.label for i in answer.items]
    assert all(i.text_edit.range == types.Range(types.Position(1, end - 1), types.Position(1, end - 1))
               for i in answer.items)
    answer = await complete_at(client, URI, 3, len("  --attention-backend "), trigger=" ")
    labels = [i.label for i in answer.items]
    assert "fa3" in labels and "flashinfer" in labels
    assert not any(label.startswith("-") for label in labels)


async def test_nothing_outside_a_launch(client: LanguageClient):
    await open_doc(client, URI, "shellscript", SCRIPT)
    assert await complete_at(client, URI, 0, 5) is None  # the shebang line
    assert await complete_at(client, URI, 1, 3) is None  # on `echo`


async def test_config_file_keys_and_switch_values(client: LanguageClient):
    await open_doc(client, CONFIG_URI, "yaml", CONFIG)
    answer = await complete_at(client, CONFIG_URI, 2, len("trust-remote-code: "), trigger=" ")
    assert sorted(i.label for i in answer.items) == ["false", "true"]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=CONFIG_URI, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=CONFIG + "attention-b")]))
    answer = await complete_at(client, CONFIG_URI, 3, len("attention-b"))
    item = next(i for i in answer.items if i.label == "attention-backend")
    assert item.text_edit.new_text == "attention-backend: "
    assert item.text_edit.range == types.Range(types.Position(3, 0), types.Position(3, 11))
    assert "tp-size" not in [i.label for i in answer.items]


async def test_list_wide_edit_range_for_clients_that_support_it(list_range_client: LanguageClient):
    await open_doc(list_range_client, URI, "shellscript", SCRIPT)
    answer = await complete_at(list_range_client, URI, 4, 6, trigger="-")
    assert answer.item_defaults.edit_range == types.Range(types.Position(4, 2), types.Position(4, 6))
    port = next(i for i in answer.items if i.label == "--port")
    assert port.text_edit is None
    await open_doc(list_range_client, CONFIG_URI, "yaml", CONFIG + "attention-b")
    answer = await complete_at(list_range_client, CONFIG_URI, 3, len("attention-b"))
    item = next(i for i in answer.items if i.label == "attention-backend")
    assert item.text_edit_text == "attention-backend: "


@pytest_lsp.fixture(config=SERVER)
async def lazy_client(lsp_client: LanguageClient):
    """A client that resolves documentation lazily (as VS Code and Neovim declare)."""
    caps = capabilities(item_defaults=["editRange"])
    caps.text_document.completion.completion_item.resolve_support = \
        types.ClientCompletionItemResolveOptions(properties=["documentation", "detail"])
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=caps))
    lsp_client.server_capabilities = result.capabilities
    yield
    await lsp_client.shutdown_session()


async def test_documentation_is_resolved_on_demand(lazy_client: LanguageClient):
    assert lazy_client.server_capabilities.completion_provider.resolve_provider is True
    await open_doc(lazy_client, URI, "shellscript", SCRIPT)
    answer = await complete_at(lazy_client, URI, 4, 6, trigger="-")
    port = next(i for i in answer.items if i.label == "--port")
    assert port.documentation is None and port.data
    size = len(json.dumps([lazy_client.protocol._converter.unstructure(i) for i in answer.items]))
    assert size < 100_000, size  # without documentation the whole list is a third as big
    resolved = await lazy_client.completion_item_resolve_async(port)
    assert resolved.documentation.kind == types.MarkupKind.Markdown
    assert "port" in resolved.documentation.value
    assert resolved.label == "--port" and resolved.detail == port.detail
