"""`textDocument/completion`: servelint's completion candidates as LSP items.

The server wires it as

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, COMPLETION_OPTIONS)
    def completion(ls, params):
        uri = params.text_document.uri
        doc = ls.workspace.get_text_document(uri)
        state = ls.docs.get(uri)
        return completion_for(doc.source, params.position, uri_to_path(uri), doc.language_id,
                              ls.settings, state.result if state else None,
                              capabilities=ls.client_capabilities)

Every item replaces the word being typed. A client that supports the completion list's
`itemDefaults.editRange` (LSP 3.17: VS Code, Neovim) gets the range once, on the list,
and items built once per catalog and reused (each with `textEditText` where the
inserted text is not the label); any other client gets a `textEdit` on every item.
`completion_for` never raises: a failure is logged and answers no items.

A client that can resolve an item's documentation lazily (`resolveSupport` naming
`documentation`, as VS Code and Neovim declare) gets items without it, and
`completionItem/resolve` fills it in: the list of every option shrinks from about
320 KB to a tenth of that, which is what a keystroke costs to serialize and send.
"""

from __future__ import annotations

import logging

from lsprotocol import types as lsp

from servelint.complete import OPTION, Candidate, complete
from servelint.model import LineIndex

log = logging.getLogger(__name__)

TRIGGER_CHARACTERS = ["-", " ", "="]
COMPLETION_OPTIONS = lsp.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS,
                                           resolve_provider=True)

_CACHE_LIMIT = 8192
_DOCS: dict[str, lsp.MarkupContent] = {}  # one MarkupContent per distinct text, shared
_ITEMS: dict[tuple, lsp.CompletionItem] = {}  # list-range items, reused across requests


def _markup(text: str) -> lsp.MarkupContent | None:
    if not text:
        return None
    doc = _DOCS.get(text)
    if doc is None:
        if len(_DOCS) > _CACHE_LIMIT:
            _DOCS.clear()
        doc = _DOCS[text] = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text)
    return doc


def _kind(c: Candidate) -> lsp.CompletionItemKind:
    return lsp.CompletionItemKind.Property if c.kind == OPTION else lsp.CompletionItemKind.EnumMember


_LAZY_DOCS: list[str] = []  # resolve id -> documentation
_LAZY_IDS: dict[str, int] = {}


def _lazy_key(c: Candidate) -> int | None:
    if not c.documentation:
        return None
    key = _LAZY_IDS.get(c.documentation)
    if key is None:
        if len(_LAZY_DOCS) > _CACHE_LIMIT:  # old ids stay valid until the next clear
            _LAZY_DOCS.clear()
            _LAZY_IDS.clear()
            _ITEMS.clear()
        key = _LAZY_IDS[c.documentation] = len(_LAZY_DOCS)
        _LAZY_DOCS.append(c.documentation)
    return key


def to_item(c: Candidate, rng: lsp.Range | None, lazy: bool = False) -> lsp.CompletionItem:
    """One item. With `rng` it carries its own textEdit; without, it relies on the
    list's default edit range (and says what to insert in `textEditText`). `lazy`
    leaves the documentation to completionItem/resolve."""
    key = _lazy_key(c) if lazy else None
    return lsp.CompletionItem(
        label=c.label,
        kind=_kind(c),
        detail=c.detail or None,
        documentation=None if key is not None else _markup(c.documentation),
        data={"doc": key} if key is not None else None,
        sort_text=c.sort_key or None,
        insert_text=c.insert_text if c.insert_text != c.label else None,
        text_edit=lsp.TextEdit(range=rng, new_text=c.insert_text) if rng is not None else None,
        text_edit_text=c.insert_text if rng is None and c.insert_text != c.label else None,
        tags=[lsp.CompletionItemTag.Deprecated] if c.deprecated else None,
    )


def _shared_item(c: Candidate, lazy: bool = False) -> lsp.CompletionItem:
    key = (c.label, c.insert_text, c.kind, c.detail, c.documentation, c.deprecated, c.sort_key,
           lazy)
    item = _ITEMS.get(key)
    if item is None:
        if len(_ITEMS) > _CACHE_LIMIT:
            _ITEMS.clear()
        item = _ITEMS[key] = to_item(c, None, lazy)
    return item


def _completion_capabilities(
        capabilities: lsp.ClientCapabilities | None) -> lsp.CompletionClientCapabilities | None:
    text_document = capabilities.text_document if capabilities is not None else None
    return text_document.completion if text_document is not None else None


def supports_lazy_documentation(capabilities: lsp.ClientCapabilities | None) -> bool:
    completion = _completion_capabilities(capabilities)
    item = completion.completion_item if completion is not None else None
    resolve_support = item.resolve_support if item is not None else None
    props = resolve_support.properties if resolve_support is not None else None
    return props is not None and "documentation" in props


def resolve(item: lsp.CompletionItem) -> lsp.CompletionItem:
    """completionItem/resolve: the item with its documentation filled in."""
    data = item.data if isinstance(item.data, dict) else {}
    key = data.get("doc")
    text = (_LAZY_DOCS[key] if isinstance(key, int) and not isinstance(key, bool)
            and 0 <= key < len(_LAZY_DOCS) else None)
    if text and item.documentation is None:
        item.documentation = _markup(text)
    return item


def to_range(index: LineIndex, start: int, end: int) -> lsp.Range:
    sl, sc = index.position(start)
    el, ec = index.position(end)
    return lsp.Range(lsp.Position(sl, sc), lsp.Position(el, ec))


def supports_edit_range_default(capabilities: lsp.ClientCapabilities | None) -> bool:
    completion = _completion_capabilities(capabilities)
    completion_list = completion.completion_list if completion is not None else None
    defaults = completion_list.item_defaults if completion_list is not None else None
    return defaults is not None and "editRange" in defaults


def to_completion_list(candidates: list[Candidate] | None, index: LineIndex,
                       edit_range_default: bool = False,
                       lazy: bool = False) -> lsp.CompletionList | None:
    """LSP items for the candidates, ranges in UTF-16 positions."""
    if not candidates:
        return None
    first = candidates[0].replace
    if edit_range_default and all(c.replace == first for c in candidates):
        return lsp.CompletionList(
            is_incomplete=False,
            item_defaults=lsp.CompletionItemDefaults(edit_range=to_range(index, first.start, first.end)),
            items=[_shared_item(c, lazy) for c in candidates])
    ranges: dict[tuple[int, int], lsp.Range] = {}
    items = []
    for c in candidates:
        key = (c.replace.start, c.replace.end)
        rng = ranges.get(key)
        if rng is None:
            rng = ranges[key] = to_range(index, c.replace.start, c.replace.end)
        items.append(to_item(c, rng, lazy))
    return lsp.CompletionList(is_incomplete=False, items=items)


def completion_for(text: str, position: lsp.Position, path: str | None, language_id: str | None,
                   settings, result=None, *,
                   capabilities: lsp.ClientCapabilities | None = None) -> lsp.CompletionList | None:
    """The completion answer at an LSP position of `text`. `result` is the document's
    latest LintResult (used when it is of this very text); `capabilities` are the
    client's, to choose the list-wide edit range when the client supports it."""
    try:
        index = result.index if result is not None and result.text == text else LineIndex(text)
        offset = index.offset(position.line, position.character)
        candidates = complete(text, offset, path, language_id, settings, result)
        return to_completion_list(candidates, index, supports_edit_range_default(capabilities),
                                  supports_lazy_documentation(capabilities))
    except Exception:  # completion must never take the server down
        log.exception("completion failed at %s:%s", path or "<text>", position)
        return None
