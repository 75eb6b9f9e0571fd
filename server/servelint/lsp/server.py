"""The servelint language server (pygls 2).

Linting runs on a worker thread, never on the event loop. Each open document has at
most one lint running and remembers whether it changed since that lint started: when
the lint ends, a document that changed meanwhile is linted again at once with its
newest text and the stale result is dropped, never published. There is no debounce:
a keystroke is linted as soon as the worker is free, a burst of keystrokes collapses
into one lint of the newest text, and a result is published only for the version
that was linted.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from servelint import __version__
from servelint.engine import LintResult, fix_all_text, lint, minimal_edit
from servelint.lsp.bootstrap import pack_problem_messages
from servelint.lsp.convert import text_edit, to_diagnostics, to_range
from servelint.lsp.hover import hover_at
from servelint.rules import is_pack_path
from servelint.settings import Settings

log = logging.getLogger(__name__)

FIX_ALL_KIND = "source.fixAll.servelint"


@dataclass
class DocState:
    version: int | None = None
    result: LintResult | None = None
    task: asyncio.Task | None = None
    dirty: bool = False
    cost: float = 0.0


class ServelintServer(LanguageServer):
    def __init__(self):
        super().__init__("servelint", __version__)
        self.settings = Settings()
        self.docs: dict[str, DocState] = {}
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="servelint-lint")
        self.background: set[asyncio.Task] = set()
        self.config_errors: list[str] = []
        self.pack_problems_shown: set[str] = set()

    # --- settings ---------------------------------------------------------------

    def apply_settings(self, raw) -> None:
        errors: list[str] = []
        self.settings = Settings.from_dict(raw, errors)
        if errors and errors != self.config_errors:
            self.window_show_message(lsp.ShowMessageParams(
                type=lsp.MessageType.Warning,
                message="servelint settings: " + "; ".join(errors) + " (using defaults for those)"))
        self.config_errors = errors

    async def pull_settings(self) -> None:
        caps = self.client_capabilities
        if not (caps.workspace and caps.workspace.configuration):
            return
        try:
            items = await self.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="servelint")]))
        except Exception as exc:  # a client that fails the request keeps the defaults
            log.warning("workspace/configuration failed: %s", exc)
            return
        if items and isinstance(items[0], dict):
            self.apply_settings(items[0])

    # --- linting ----------------------------------------------------------------

    def schedule(self, uri: str, immediate: bool = False) -> None:
        state = self.docs.setdefault(uri, DocState())
        state.dirty = True
        if state.task is not None and not state.task.done():
            return  # the running worker picks the newest text up when it finishes
        task = asyncio.ensure_future(self._worker(uri, state))
        state.task = task
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def _worker(self, uri: str, state: DocState) -> None:
        loop = asyncio.get_running_loop()
        while state.dirty and self.docs.get(uri) is state:
            state.dirty = False
            # Let notifications that are already queued land first, so a burst of
            # changes is linted once, at its newest version.
            await asyncio.sleep(0)
            try:
                doc = self.workspace.get_text_document(uri)
                version, text, language = doc.version, doc.source, doc.language_id
            except Exception:
                return
            try:
                result, cost = await loop.run_in_executor(
                    self.executor, timed_lint, text, uri_to_path(uri), language, self.settings)
            except Exception:
                log.exception("lint failed for %s", uri)
                return
            if self.docs.get(uri) is not state:
                return  # closed meanwhile
            state.cost = cost
            if state.dirty:
                continue  # changed while linting: this result is stale
            current = self.workspace.get_text_document(uri)
            if current.version != version or current.source != text:
                state.dirty = True
                continue
            self.publish(uri, version, result, state)

    def publish(self, uri: str, version, result: LintResult, state: DocState) -> None:
        state.version = version
        state.result = result
        self.report_pack_problems(result)
        for notice in result.notices:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Info, f"{uri}: {notice}"))
        diagnostics = []
        if result.findings:
            index = result.index
            diagnostics = [d for f in result.findings for d in to_diagnostics(f, index, uri, version)]
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def report_pack_problems(self, result: LintResult) -> None:
        """Tell the user once about each broken record of a rule pack; the server goes on
        with every valid rule."""
        if result.rules is None:
            return
        new = [p for p in result.rules.problems if str(p) not in self.pack_problems_shown]
        if not new:
            return
        self.pack_problems_shown.update(str(p) for p in new)
        logs, shown = pack_problem_messages(new)
        for line in logs:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, line))
        self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=shown))

    def relint_all(self) -> None:
        for uri in list(self.docs):
            self.schedule(uri, immediate=True)

    def current_result(self, uri: str) -> LintResult | None:
        """The lint of the document's current text, computing it if the last is stale."""
        doc = self.workspace.get_text_document(uri)
        state = self.docs.get(uri)
        if state and state.result is not None and state.result.text == doc.source:
            return state.result
        return lint(doc.source, uri_to_path(uri), doc.language_id, self.settings)


def timed_lint(text, path, language_id, settings):
    start = time.perf_counter()
    result = lint(text, path, language_id, settings)
    return result, time.perf_counter() - start


def warm_up() -> None:
    """Load the catalog and checks and build the parser before the first document."""
    from servelint.catalog import load_catalog
    from servelint.checks import load_checks
    load_catalog()
    load_checks()
    lint("python3 -m sglang.launch_server --model-path m\n", "warm-up.sh")


def uri_to_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme in ("file", ""):
        return unquote(parsed.path)
    return parsed.path or None


server = ServelintServer()


@server.feature(lsp.INITIALIZE)
def on_initialize(ls: ServelintServer, params: lsp.InitializeParams):
    ls.executor.submit(warm_up)
    if params.initialization_options:
        ls.apply_settings(params.initialization_options)


@server.feature(lsp.INITIALIZED)
async def on_initialized(ls: ServelintServer, params: lsp.InitializedParams):
    await ls.pull_settings()
    for uri in list(ls.docs):
        ls.schedule(uri, immediate=True)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_config(ls: ServelintServer, params: lsp.DidChangeConfigurationParams):
    settings = params.settings
    if isinstance(settings, dict) and settings.get("servelint") is not None:
        ls.apply_settings(settings)
    else:
        await ls.pull_settings()
    for uri in list(ls.docs):
        ls.schedule(uri, immediate=True)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ServelintServer, params: lsp.DidOpenTextDocumentParams):
    ls.docs.setdefault(params.text_document.uri, DocState())
    ls.schedule(params.text_document.uri, immediate=True)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ServelintServer, params: lsp.DidChangeTextDocumentParams):
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: ServelintServer, params: lsp.DidSaveTextDocumentParams):
    uri = params.text_document.uri
    if is_pack_path(uri_to_path(uri), ls.settings.rule_packs):
        ls.relint_all()  # the rules changed for every open document
        return
    state = ls.docs.get(uri)
    if state is None or state.result is None:
        ls.schedule(uri, immediate=True)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ServelintServer, params: lsp.DidCloseTextDocumentParams):
    uri = params.text_document.uri
    ls.docs.pop(uri, None)  # a running worker sees this and stops
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: ServelintServer, params: lsp.HoverParams):
    uri = params.text_document.uri
    result = ls.current_result(uri)
    if result is None or not result.launches:
        return None
    index = result.index
    offset = index.offset(params.position.line, params.position.character)
    text = hover_at(result, offset)
    if text is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))


@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND],
                          resolve_provider=False),
)
def code_action(ls: ServelintServer, params: lsp.CodeActionParams):
    uri = params.text_document.uri
    only = params.context.only
    actions: list[lsp.CodeAction] = []
    doc = ls.workspace.get_text_document(uri)
    want_quickfix = not only or any(k.startswith("quickfix") for k in only)
    want_fix_all = not only or any(FIX_ALL_KIND.startswith(k) or k.startswith(FIX_ALL_KIND)
                                   for k in only)
    if want_quickfix:
        for diag in params.context.diagnostics:
            if diag.source != "servelint" or not isinstance(diag.data, dict):
                continue
            if diag.data.get("version") not in (None, doc.version):
                continue  # edits computed for another text would corrupt this one
            for fx in diag.data.get("fixes", []):
                actions.append(lsp.CodeAction(
                    title=f"{fx['title']} ({diag.code})",
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=bool(fx.get("preferred")),
                    edit=lsp.WorkspaceEdit(changes={uri: [text_edit(e) for e in fx["edits"]]}),
                ))
    if want_fix_all:
        result = ls.current_result(uri)
        if result is not None and any(x.safe for f in result.findings for x in f.fixes):
            fixed, _ = fix_all_text(doc.source, uri_to_path(uri), doc.language_id, ls.settings)
            edit = minimal_edit(doc.source, fixed)
            if edit is not None:
                index = result.index
                actions.append(lsp.CodeAction(
                    title="servelint: fix all safe problems",
                    kind=FIX_ALL_KIND,
                    edit=lsp.WorkspaceEdit(changes={uri: [
                        lsp.TextEdit(range=to_range(index, edit.span), new_text=edit.new_text)]}),
                ))
    return actions or None


def run_stdio(stdin=None, stdout=None) -> None:
    logging.basicConfig(level=logging.WARNING)
    # The lint thread holds the GIL while it works; a short switch interval lets the
    # thread reading stdin and the event loop see new changes while a long lint runs.
    sys.setswitchinterval(0.001)
    server.start_io(stdin, stdout)


__all__ = ["server", "run_stdio"]
