"""The servelint language server (pygls 2).

Linting runs on a worker thread, never on the event loop. Each open document has at
most one lint running and remembers whether it changed since that lint started: when
the lint ends, a document that changed meanwhile is linted again at once with its
newest text and the stale result is dropped, never published. There is no debounce:
a keystroke is linted as soon as the worker is free, a burst of keystrokes collapses
into one lint of the newest text, and a result is published only for the version
that was linted. A change also stops the lint of the older text between two launches
(engine.lint's should_stop), so a typing burst costs at most one lint after its last
keystroke. The first lint waits for the editor's settings, so opening a file lints it
once. docs/architecture.md, "The server under load", says how the server keeps memory
flat (pygls's futures of notifications) and how it runs the garbage collector.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Mapping

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace.text_document import TextDocument

from servelint import __version__
from servelint import config, serialize
from servelint.docs import is_rule_page
from servelint.edits import minimal_edit
from servelint.engine import BUDGET_NOTICE, Cancelled, LintResult, fix_all_text, lint, suppression_fixes
from servelint.fixcheck import offered_dicts
from servelint.lintcache import LintCache
from servelint.model import Finding, LineIndex
from servelint.lsp.bootstrap import (CHECK_UPGRADE, LINT_WORKSPACE, NOTIFY_LEVELS, STATUS,
                                     config_problem_messages, file_path,
                                     is_cell_uri, pack_problem_messages,
                                     settings_problem_message, take_first_lint, uri_to_path)
from servelint.lsp.convert import send_diagnostics, send_diagnostics_json, text_edit, to_range
from servelint.lsp.completion import COMPLETION_OPTIONS, completion_for
from servelint.lsp.completion import resolve as resolve_completion
from servelint.lsp.hover import hover_at
from servelint.rules import is_pack_path
from servelint.settings import Settings, editor_section, workspace_trusted

log = logging.getLogger(__name__)

GC_THRESHOLDS = (10_000, 20, 20)
BIG_LINT = 0.25  # seconds: a lint this long made enough objects to set them aside (gc.freeze)
# How long the first lint waits for the editor's answer to workspace/configuration.
SETTINGS_WAIT = 5.0

FIX_ALL_KIND = "source.fixAll.servelint"
# VS Code asks notebook-wide actions of the first cell ("notebook.codeActionsOnSave");
# the edit covers every open cell of the notebook.
NOTEBOOK_FIX_ALL_KIND = "notebook.source.fixAll.servelint"


@dataclass
class DocState:
    uri: str  # the document's first string of its URI (ServelintServer.schedule)
    version: int | None = None
    result: LintResult | None = None
    task: asyncio.Task | None = None
    dirty: bool = False
    cost: float = 0.0
    fix_all: tuple | None = None  # ((version, text), the fix-all edit or None)
    # Bumped by every change: a lint started at another generation is stale and stops.
    generation: int = 0
    # The settings of the newest lint started (published or still running): new settings
    # equal to these need no lint.
    settings: Settings | None = None
    cache: LintCache | None = None  # the document's engine LintCache
    lints: int = 0  # lints started (the trace numbers them)
    budget_shown: bool = False  # the time-budget notice was shown for this document


_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _lsp_lines(self) -> tuple[str, ...]:
    """A document's lines as the protocol counts them: ended by \n, \r\n or \r only.
    pygls 2.1.1 splits with str.splitlines, which also ends a line at a form feed, NEL,
    U+2028 and others, so an editor's edit below such a character landed on the wrong line
    (fix-all turned `services:` into `services:-`)."""
    return tuple(m.group() for m in _LSP_LINE.finditer(self.source))


TextDocument.lines = property(_lsp_lines)  # type: ignore[method-assign,assignment]

_PYGLS_INCREMENTAL = TextDocument._apply_incremental_change

# Above this many characters a document's new text is built in pieces of this size.
SPLICE_CHUNK = 1 << 18


def splice(text: str, a: int, b: int, insert: str, chunk: int | None = None) -> str:
    """text[:a] + insert + text[b:], for a large text without a second copy of it alive
    at once: `text[:a] + insert + text[b:]` holds both slices and the result (3.7 MB of a
    100,000-line script twice over, +6.8 MiB of the server's peak at every keystroke).
    The new text is grown in place by `+=` from slices of at most `chunk` characters:
    CPython resizes a string that nothing else holds rather than copying it, once the
    interpreter has specialized the loop (warmed up below, at import); elsewhere the
    result is the same, made with more copying."""
    chunk = chunk or SPLICE_CHUNK
    n = len(text)
    if n <= 2 * chunk:
        return text[:a] + insert + text[b:]
    new = ""
    for i in range(0, a, chunk):
        new += text[i:min(a, i + chunk)]
    new += insert
    for i in range(b, n, chunk):
        new += text[i:min(n, i + chunk)]
    return new


for _ in range(100):  # the interpreter specializes splice's `+=` (see its docstring)
    splice("0123456789", 3, 4, "x", 1)


def _apply_incremental_change(self, change) -> None:
    """An editor's edit applied by slicing the text at the two offsets of its range (the
    document's line index is kept and edited along). pygls 2.1.1 split the whole text into
    lines and wrote every line out again: 15 ms per keystroke on a 20,000-line file, on
    the event loop. Positions are UTF-16 columns (the encoding servelint uses), clamped to
    the line's end as the protocol says; any other encoding goes the pygls way."""
    codec = self._position_codec
    if getattr(codec, "encoding", "utf-16") not in ("utf-16", lsp.PositionEncodingKind.Utf16):
        _PYGLS_INCREMENTAL(self, change)
        return
    source = self.source
    index = getattr(self, "_servelint_index", None)
    if index is None or index.text is not source:
        index = LineIndex(source)
    rng = change.range
    a = index.offset(rng.start.line, rng.start.character)
    b = max(a, index.offset(rng.end.line, rng.end.character))
    new = splice(source, a, b, change.text)
    self._source = new
    self._servelint_index = LineIndex.edited(index, new, a, len(source) - b)


TextDocument._apply_incremental_change = _apply_incremental_change  # type: ignore[method-assign]


class ServelintProtocol(LanguageServerProtocol):
    """pygls 2.1 keeps the future of every handler it runs for a notification (and of
    each handler a built-in one yields to) in _request_futures under a fresh uuid, and
    only a request's answer removes it: +2 KB per keystroke for the life of the server.
    A future is removed here once it is done (unless its id was reused meanwhile)."""

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        super()._execute_handler(msg_id, handler, partial(self._forget, msg_id, callback),
                                 args, kwargs)

    def _forget(self, msg_id, callback, future) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]
        callback(future)

    def handle_message(self, message):
        """After `shutdown`, pygls drops every message but `exit` without a word; the
        specification wants a request answered with InvalidRequest, so a client waiting for
        it does not wait forever."""
        method = getattr(message, "method", None)
        if (self._shutdown and method is not None and method != lsp.EXIT
                and getattr(message, "id", None) is not None):
            self._send_response(message.id, error=lsp.ResponseError(
                code=lsp.ErrorCodes.InvalidRequest,
                message=f"the server is shutting down: {method} is not answered; send exit"))
            return None
        return super().handle_message(message)


class ServelintServer(LanguageServer):
    def __init__(self):
        super().__init__("servelint", __version__, protocol_cls=ServelintProtocol)
        self.settings = Settings()  # the editor's settings outside any folder; see settings_for(uri)
        # Workspace folder path -> the editor's settings there (multi-root workspaces:
        # pulled with the folder as scopeUri).
        self.folder_settings: dict[str, Settings] = {}
        self.show_level = NOTIFY_LEVELS[self.settings.show_notifications]
        self.init_settings: dict = {}  # the section initializationOptions gave
        self.trusted = True  # False: limited mode (initializationOptions workspaceTrusted)
        self.docs: dict[str, DocState] = {}
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="servelint-lint")
        self.background: set[asyncio.Task] = set()
        self.config_errors: list[str] = []
        self.pack_problems_shown: set[str] = set()
        self.config_problems_shown: dict[str, str] = {}  # config file -> message shown
        self.workspace_published: set[str] = set()  # unopened files lintWorkspace reported
        # Document -> the release its upgrade is being checked for (the code action
        # "Check upgrade to SGLang X"); the editor's targetVersion covers every document.
        self.upgrade_targets: dict[str, str] = {}
        # Set once the editor's settings are in (or it cannot send them): lints wait.
        self.settings_ready = asyncio.Event()
        self.trace_lints = False  # $/logTrace of each lint (initialize's trace: verbose)

    # --- settings ---------------------------------------------------------------

    def notify(self, kind: lsp.MessageType, message: str) -> None:
        """Tell the user: a notification when servelint.showNotifications lets this kind
        through, else only a line in the log."""
        if kind <= self.show_level:
            self.window_show_message(lsp.ShowMessageParams(type=kind, message=message))
        else:
            self.window_log_message(lsp.LogMessageParams(type=kind, message=message))

    def _settings_of(self, raw, errors: list[str]) -> Settings:
        """Settings from one answer of the editor, on top of initializationOptions."""
        section = dict(self.init_settings)
        section.update(editor_section(raw) or {})
        return Settings.from_dict(section, errors)

    def apply_settings(self, raw: object, folders: Mapping[str, object] | None = None) -> None:
        """Take the editor's settings: initializationOptions first, then whatever the
        client sends or answers later, key by key on top of them. `folders`: each
        workspace folder's own answer (multi-root workspaces)."""
        errors: list[str] = []
        self.settings = self._settings_of(raw, errors)
        self.show_level = NOTIFY_LEVELS[self.settings.show_notifications]  # window-wide
        if folders is not None:
            self.folder_settings = {path: self._settings_of(answer, errors)
                                    for path, answer in folders.items()}
        errors = list(dict.fromkeys(errors))
        if errors and errors != self.config_errors:
            self.notify(lsp.MessageType.Warning, settings_problem_message(errors))
        self.config_errors = errors

    def client_pulls_configuration(self) -> bool:
        caps = self.client_capabilities
        return bool(caps and caps.workspace and caps.workspace.configuration)

    async def pull_settings(self) -> bool:
        """Ask the client for the `servelint` section, once without a scope and once for
        each workspace folder (scopeUri: the folder); False when it cannot answer."""
        if not self.client_pulls_configuration():
            return False
        named = [(f.uri, file_path(f.uri)) for f in self.workspace.folders.values()]
        folders = [(uri, os.path.abspath(path)) for uri, path in named if path]
        items = [lsp.ConfigurationItem(section="servelint")] + [
            lsp.ConfigurationItem(scope_uri=uri, section="servelint") for uri, _ in folders]
        try:
            answers = await self.workspace_configuration_async(lsp.ConfigurationParams(items=items))
        except Exception as exc:  # a client that fails the request keeps what it had
            log.warning("workspace/configuration failed: %s", exc)
            return False
        if not answers:
            return True
        answers = list(answers) + [None] * (len(items) - len(answers))
        scoped = {path: answer for (_, path), answer in zip(folders, answers[1:])
                  if isinstance(answer, dict)}
        self.apply_settings(answers[0] if isinstance(answers[0], dict) else {}, scoped)
        return True

    def settings_for(self, uri: str) -> Settings:
        """The settings for one document: the editor's for the workspace folder that
        holds it, combined with the project configuration file above it
        (docs/configuration.md)."""
        path = file_path(uri)
        settings = self.settings_for_path(path)
        if path:
            # The project search for a release pin stops at the workspace folder.
            holding = [r for r in self.workspace_roots()
                       if os.path.abspath(path).startswith(r.rstrip(os.sep) + os.sep)]
            settings.project_root = max(holding, key=len) if holding else None
        if uri in self.upgrade_targets:
            settings.target_version = self.upgrade_targets[uri]
        return settings

    def editor_settings_for(self, path: str | None) -> Settings:
        """The editor's settings of the innermost workspace folder holding `path`."""
        if path and self.folder_settings:
            path = os.path.abspath(path)
            holding = [folder for folder in self.folder_settings
                       if path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)]
            if holding:
                return self.folder_settings[max(holding, key=len)]
        return self.settings

    def settings_for_path(self, path: str | None) -> Settings:
        settings, problems = config.settings_for(path, self.editor_settings_for(path),
                                                 trusted=self.trusted)
        for cfg in problems:
            self.report_config_problem(cfg)
        if is_rule_page(path):
            settings.enable = False
        return settings

    def report_config_problem(self, cfg: config.ProjectConfig) -> None:
        """Tell the user once about an invalid configuration file (again only when its
        problems change)."""
        logged, shown = config_problem_messages(cfg)
        if self.config_problems_shown.get(cfg.path) == shown:
            return
        self.config_problems_shown[cfg.path] = shown
        self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Warning, logged))
        if lsp.MessageType.Warning <= self.show_level:
            self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=shown))

    def config_files_changed(self, paths: list[str]) -> None:
        for path in paths:
            config.invalidate(path)
            self.config_problems_shown.pop(os.path.abspath(path), None)
        self.relint_all()

    async def register_watchers(self) -> None:
        """Ask the client to report changes of configuration files and project rule packs."""
        caps = self.client_capabilities
        watched = caps and caps.workspace and caps.workspace.did_change_watched_files
        if not (watched and watched.dynamic_registration):
            return
        globs = [f"**/{name}" for name in config.CONFIG_NAMES] + ["**/.servelint/rules/*"]
        try:
            await self.client_register_capability_async(lsp.RegistrationParams(registrations=[
                lsp.Registration(
                    id="servelint-config-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                        watchers=[lsp.FileSystemWatcher(glob_pattern=g) for g in globs]))]))
        except Exception as exc:
            log.warning("could not register file watchers: %s", exc)

    # --- linting ----------------------------------------------------------------

    def schedule(self, uri: str, immediate: bool = False) -> None:
        state = self.docs.get(uri)
        if state is None:
            state = self.docs[uri] = DocState(uri=uri)
        # The document's first string of its URI: each message brings its own copy, and
        # the serializer's memo of a finding (serialize.diagnostics_parts) keeps the one
        # its lint was given (~60 bytes an edit otherwise).
        uri = state.uri
        state.dirty = True
        state.generation += 1  # a lint of the older text stops at its next launch
        if state.task is not None and not state.task.done():
            return  # the running worker picks the newest text up when it finishes
        task = asyncio.ensure_future(self._worker(uri, state))
        state.task = task
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def _worker(self, uri: str, state: DocState) -> None:
        loop = asyncio.get_running_loop()
        while state.dirty and self.docs.get(uri) is state:
            if not self.settings_ready.is_set():
                # The editor's settings are on their way: linting now would lint again
                # when they land (opening a file must lint it once).
                try:
                    await asyncio.wait_for(self.settings_ready.wait(), SETTINGS_WAIT)
                except asyncio.TimeoutError:
                    log.warning("no settings from the editor after %ss; linting with defaults",
                                SETTINGS_WAIT)
                    self.settings_ready.set()
                continue
            state.dirty = False
            # Let notifications that are already queued land first, so a burst of
            # changes is linted once, at its newest version.
            await asyncio.sleep(0)
            try:
                doc = self.workspace.get_text_document(uri)
                version, text, language = doc.version, doc.source, doc.language_id
            except Exception:
                return
            settings = self.settings_for(uri)
            state.settings = settings
            generation = state.generation
            if state.cache is None:
                state.cache = LintCache()

            def stale(state=state, generation=generation) -> bool:  # asked on the lint thread
                return state.generation != generation or self.docs.get(uri) is not state

            first = take_first_lint(uri, version, text, language, settings)
            state.lints += 1
            number = state.lints
            try:
                if first is not None:  # the fast start linted this very text already
                    (result, state.cache), cost = first, 0.0
                    # Its lint holds its own string of the text (equal to this one, read
                    # from the same message by the fast start): the document takes it, so
                    # the text is not kept twice until the first edit (3.7 MB of a
                    # 100,000-line script).
                    if result.text == text and getattr(doc, "_source", None) is text:
                        doc._source = text = result.text
                    self.trace(f"lint {number} reused: {uri} version {version}")
                else:
                    self.trace(f"lint {number} started: {uri} version {version}")
                    result, cost = await loop.run_in_executor(
                        self.executor, timed_lint, text, uri_to_path(uri), language, settings,
                        state.cache, stale)
            except Cancelled:
                self.trace(f"lint {number} stopped: {uri} version {version} (newer text)")
                continue  # a change (dirty again) or a close (the loop ends)
            except Exception:
                log.exception("lint failed for %s", uri)
                return
            if first is None:
                self.trace(f"lint {number} finished: {uri} version {version}"
                           + (" (stale)" if stale() else ""))
            if self.docs.get(uri) is not state:
                return  # closed meanwhile
            state.cost = cost
            if state.dirty:
                continue  # changed while linting: this result is stale
            current = self.workspace.get_text_document(uri)
            if current.version != version or current.source != text:
                state.dirty = True
                continue
            # The fast start published its lint already (the same diagnostics).
            self.publish(uri, version, result, state, sent=first is not None)

    def trace(self, message: str) -> None:
        """A $/logTrace line when the client asked for verbose tracing (the tests count
        lints with it)."""
        if self.trace_lints:
            self.log_trace(lsp.LogTraceParams(message=message))

    def publish(self, uri: str, version, result: LintResult, state: DocState,
                sent: bool = False) -> None:
        state.version = version
        # The previous result (tens of thousands of objects for a large file) is freed
        # on the lint thread, not on the event loop that reads the next keystroke.
        retired = [state.result]
        state.result = result
        self.executor.submit(retire, retired, len(result.text))
        self.report_pack_problems(result)
        for notice in result.notices:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Info, f"{uri}: {notice}"))
            if notice.startswith(BUDGET_NOTICE) and not state.budget_shown:
                state.budget_shown = True  # once per document: it may happen at every edit
                self.window_show_message(lsp.ShowMessageParams(
                    type=lsp.MessageType.Warning, message=f"servelint: {uri_to_path(uri) or uri}: {notice}"))
        if not sent:
            send_diagnostics_json(self, uri, version,
                                  serialize.diagnostics_parts(result, uri, version, editor=True))

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
        if lsp.MessageType.Error <= self.show_level:
            self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=shown))

    def notebook_cells(self, uri: str) -> list[str]:
        """The open cells of the notebook that the cell `uri` belongs to."""
        notebook = uri.split("#", 1)[0]
        return [u for u in self.workspace.text_documents
                if is_cell_uri(u) and u.split("#", 1)[0] == notebook]

    def relint_all(self, settings_changed: bool = False) -> None:
        """Lint every open document again; `settings_changed`: only those whose
        settings differ from the ones their newest lint (published or still running) used,
        and not those whose lint is still to start (it reads the settings when it does):
        the editor often sends the same settings again, and a lint in progress with them
        must not be run twice."""
        for uri, state in list(self.docs.items()):
            if settings_changed and (state.dirty or (
                    state.settings is not None and state.settings == self.settings_for(uri))):
                continue
            self.schedule(uri, immediate=True)

    async def current_result(self, uri: str) -> LintResult | None:
        """The lint of the document's current text: the published one while it is
        current, else a new lint on the lint thread (never on the event loop)."""
        doc = self.workspace.get_text_document(uri)
        state = self.docs.get(uri)
        if state and state.result is not None and state.result.text == doc.source:
            return state.result
        text, language, settings = doc.source, doc.language_id, self.settings_for(uri)
        return await asyncio.get_running_loop().run_in_executor(
            self.executor, lambda: lint(text, uri_to_path(uri), language, settings))

    @staticmethod
    def current_finding(result: LintResult, diag: lsp.Diagnostic) -> Finding | None:
        """The finding that `diag` shows in `result`, the lint of the document's current
        text: one with its code and range (its main token or one of its other flags), the
        one whose message it shows where several have both; None when there is none (the
        finding moved or went away since `diag` was published)."""
        rng = diag.range
        want = (rng.start.line, rng.start.character, rng.end.line, rng.end.character)
        message = diag.message
        index = result.index
        found = None
        for f in result.findings:
            if f.code != diag.code:
                continue
            if index.position(f.span.start) + index.position(f.span.end) == want:
                if message == f.message:
                    return f
                found = found or f
            for r in f.related:
                if r.mark and r.path is None and \
                        index.position(r.span.start) + index.position(r.span.end) == want:
                    if message.endswith(f.message):  # the hint on one of its other flags
                        return f
                    found = found or f
        return found

    @staticmethod
    def finding_fixes(result: LintResult, f: Finding) -> list[dict]:
        """The fixes of `f`, a finding of `result`, as the serializer writes them, then
        "Disable CODE for this launch/file" (engine.suppression_fixes), made when the
        editor asks: a lint does not give them to every finding, so an edit's lint is not
        slowed by them."""
        index = result.index
        return serialize.fix_dicts(f.fixes, index) + serialize.fix_dicts(
            suppression_fixes(result, f), index)

    async def fix_all_edit(self, uri: str) -> lsp.TextEdit | None:
        """The one edit that applies every safe fix to the document, or None. Computed
        on the lint thread and remembered for the document's version (VS Code asks for
        code actions at every cursor move)."""
        doc = self.workspace.get_text_document(uri)
        state = self.docs.get(uri)
        key = (doc.version, doc.source)
        if state is not None and state.fix_all is not None and state.fix_all[0] == key:
            return state.fix_all[1]
        result = await self.current_result(uri)
        edit = None
        if result is not None and any(x.safe for f in result.findings for x in f.fixes):
            text, language, settings = doc.source, doc.language_id, self.settings_for(uri)

            def compute():
                fixed, _ = fix_all_text(text, uri_to_path(uri), language, settings)
                return minimal_edit(text, fixed)

            found = await asyncio.get_running_loop().run_in_executor(self.executor, compute)
            if found is not None:
                edit = lsp.TextEdit(range=to_range(result.index, found.span), new_text=found.new_text)
        if state is not None and self.workspace.get_text_document(uri).source == doc.source:
            state.fix_all = (key, edit)
        return edit

    def status(self, uri: str | None) -> dict:
        """What the editor's status item shows for a document."""
        import servelint
        from servelint.catalog import resolve_version
        settings = self.settings_for(uri) if uri else self.settings
        wanted = settings.sglang_version
        state = self.docs.get(uri) if uri else None
        releases = list(dict.fromkeys(
            (r.version, r.detail) for r in (state.result.releases if state and state.result else [])))
        if releases:
            # The releases the document's launches were judged by (engine.launch_release).
            release = ", ".join(dict.fromkeys(v for v, _ in releases))
            why = "; ".join(f"{v}: {d}" for v, d in releases)
        else:
            release = resolve_version("newest" if wanted == "auto" else wanted).version
            why = ("detected per launch" if wanted == "auto"
                   else f"set by {settings.sglang_version_from or 'sglang-version'}")
        return {
            "servelint": __version__,
            "sglang": release,
            "sglangRequested": wanted,
            "sglangFrom": why,
            "python": sys.executable,
            "pythonVersion": ".".join(str(x) for x in sys.version_info[:3]),
            "location": os.path.dirname(os.path.abspath(servelint.__file__)),
            "trusted": self.trusted,
        }

    # --- the whole workspace ------------------------------------------------------

    def workspace_roots(self) -> list[str]:
        roots = [r for r in (file_path(f.uri) for f in self.workspace.folders.values()) if r]
        if not roots and self.workspace.root_path:
            roots = [self.workspace.root_path]
        return list(dict.fromkeys(os.path.abspath(r) for r in roots))

    async def lint_workspace(self) -> dict:
        """Lint every file of the workspace folders whose format servelint reads; publish
        the findings of files not open in the editor (open ones keep their live
        diagnostics). One file at a time on the lint thread, so an edit waits for at
        most one file. Nothing is executed: files are only read."""
        from servelint.files import iter_workspace_files

        loop = asyncio.get_running_loop()
        roots = self.workspace_roots()
        if not roots:
            return {"files": 0, "findings": 0,
                    "message": "servelint: no workspace folder to lint"}
        files = await loop.run_in_executor(
            self.executor, lambda: [p for r in roots for p in iter_workspace_files(r, trusted=self.trusted)])
        open_docs = {}
        for doc_uri in list(self.docs):
            path = None if is_cell_uri(doc_uri) else file_path(doc_uri)  # a cell is not its notebook
            if path:
                open_docs[os.path.abspath(path)] = doc_uri
        nfiles = nfindings = too_large = 0
        published: set[str] = set()
        for path in files:
            path = os.path.abspath(path)
            settings = self.settings_for_path(path)
            uri = open_docs.get(path)
            text: str | None = None
            language: str | None = None
            if uri is not None and uri in self.docs:
                doc = self.workspace.get_text_document(uri)
                text, language = doc.source, doc.language_id
            try:
                outcome = await loop.run_in_executor(
                    self.executor, lint_file, path, settings, text, language)
            except Exception:
                log.exception("lintWorkspace: linting %s failed", path)
                continue
            if outcome == "too-large":
                too_large += 1
                continue
            if outcome is None:
                continue
            nfiles += 1
            nfindings += len(outcome.findings)
            self.report_pack_problems(outcome)
            if uri is not None:
                continue  # open: its live diagnostics stay
            file_uri = Path(path).as_uri()
            if outcome.findings or file_uri in self.workspace_published:
                send_diagnostics(self, file_uri, None,
                                 serialize.result_diagnostics(outcome, file_uri, None, editor=True))
            if outcome.findings:
                published.add(file_uri)
        for gone in self.workspace_published - published:
            if gone not in self.docs and not os.path.exists(file_path(gone) or ""):
                self.text_document_publish_diagnostics(
                    lsp.PublishDiagnosticsParams(uri=gone, diagnostics=[]))
        self.workspace_published = published
        message = (f"servelint linted {nfiles} file(s) in the workspace: "
                   f"{nfindings} finding(s)")
        if too_large:
            message += f"; {too_large} file(s) larger than maxFileBytes were skipped"
        return {"files": nfiles, "findings": nfindings, "message": message}


def lint_file(path: str, settings: Settings, text: str | None = None,
              language_id: str | None = None):
    """A workspace file's lint: None when servelint does not read it (not a detected
    format, binary, unreadable), "too-large" beyond maxFileBytes. `text` is the editor's
    text of an open file."""
    from servelint.files import TooLarge, read_text

    if text is None:
        try:
            text = read_text(path, False, settings.max_file_bytes, settings.rule_packs)
        except TooLarge:
            return "too-large"
        except OSError:
            return None
        if text is None:
            return None
    result = lint(text, path, language_id, settings)
    return result if result.format is not None else None


def timed_lint(text, path, language_id, settings, cache=None, should_stop=None):
    """The editor's lint of a document, on the lint thread: with the document's cache
    and stopping (engine.Cancelled) when `should_stop` says a newer text came."""
    start = time.perf_counter()
    # No cycle collection while a lint builds its result: what it makes is kept (the
    # result) or freed by reference counting, and a collection in the middle walked all
    # of it again (a 20,000-line file's first lint met five full collections, 0.8 s).
    paused = gc.isenabled()
    gc.disable()
    try:
        result = lint(text, path, language_id, settings, cache=cache, should_stop=should_stop,
                  deadline=time.monotonic() + lint_budget())
    finally:
        settle_after_lint(start, paused)
    return result, time.perf_counter() - start


# A document this long (characters) gives the C heap back after each lint (trim_heap).
TRIM_CHARS = 1_000_000


def retire(retired: list, chars: int) -> None:
    """On the lint thread: free the previous result of a document of `chars` characters,
    then, for a large one, hand the heap's free pages back to the system (trim_heap)."""
    retired.clear()
    if chars >= TRIM_CHARS:
        trim_heap()


def lint_budget() -> float:
    """Seconds one lint of a document may take before the launches left are skipped, with
    a notice (a hostile or huge file never holds the lint thread for long): 10, or
    $SERVELINT_LINT_BUDGET."""
    try:
        return max(0.0, float(os.environ.get("SERVELINT_LINT_BUDGET", "10")))
    except ValueError:
        return 10.0


def settle_after_lint(start: float, paused: bool) -> None:
    """After a lint: a long one (a large document's first) made hundreds of thousands of
    objects that stay while the document is open; they are set aside for the cycle
    collector (gc.freeze), else the next collection walks them all, in front of the next
    edit (464 ms on the first edit of a 20,000-line script). They are still freed by
    reference counting when no longer used."""
    if time.perf_counter() - start > BIG_LINT:
        gc.freeze()
    if paused:
        gc.enable()


def warm_up() -> None:
    """Load the catalog and checks and build the parser before the first document."""
    from servelint.catalog import load_catalog
    from servelint.checks import load_checks
    load_catalog()
    load_checks()
    lint("python3 -m sglang.launch_server --model-path m\n", "warm-up.sh")
    # What start-up built (catalog, rules, pygls, lsprotocol) lives as long as the
    # server: out of the collector's sight, so a collection walks only newer objects.
    # No full collection first: the fast start may have linted a large document already,
    # and walking it took half a second, in front of the first edit's lint (the cycles
    # start-up leaves are a few hundred objects).
    gc.freeze()


server = ServelintServer()


@server.feature(lsp.INITIALIZE)
def on_initialize(ls: ServelintServer, params: lsp.InitializeParams):
    ls.executor.submit(warm_up)
    ls.trace_lints = params.trace == lsp.TraceValue.Verbose
    options = params.initialization_options
    ls.trusted = workspace_trusted(options)
    section = editor_section(options)
    ls.init_settings = {k: v for k, v in (section or {}).items() if k != "workspaceTrusted"}
    if ls.init_settings:
        ls.apply_settings({})


@server.feature(lsp.INITIALIZED)
async def on_initialized(ls: ServelintServer, params: lsp.InitializedParams):
    try:
        await ls.pull_settings()
    finally:
        ls.settings_ready.set()
    ls.relint_all(settings_changed=True)
    task = asyncio.ensure_future(ls.register_watchers())
    ls.background.add(task)
    task.add_done_callback(ls.background.discard)


@server.feature(lsp.SET_TRACE)
def on_set_trace(ls: ServelintServer, params: lsp.SetTraceParams):
    ls.trace_lints = params.value == lsp.TraceValue.Verbose


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def on_config(ls: ServelintServer, params: lsp.DidChangeConfigurationParams):
    """Re-read the settings (pulled when the client answers workspace/configuration,
    else the pushed `settings`) and re-lint every open document."""
    if not await ls.pull_settings():
        pushed = editor_section(params.settings)
        if pushed is not None:
            ls.apply_settings(pushed)
    ls.relint_all(settings_changed=True)


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def on_watched_files(ls: ServelintServer, params: lsp.DidChangeWatchedFilesParams):
    paths = [p for p in (file_path(c.uri) for c in params.changes) if p]
    if any(os.path.basename(p) in config.CONFIG_NAMES for p in paths):
        ls.config_files_changed([p for p in paths if os.path.basename(p) in config.CONFIG_NAMES])
    elif any(is_pack_path(p) for p in paths):
        ls.relint_all()


@server.command(LINT_WORKSPACE)
async def lint_workspace_command(ls: ServelintServer, *args):
    return await ls.lint_workspace()


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ServelintServer, params: lsp.DidOpenTextDocumentParams):
    ls.schedule(params.text_document.uri, immediate=True)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ServelintServer, params: lsp.DidChangeTextDocumentParams):
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: ServelintServer, params: lsp.DidSaveTextDocumentParams):
    uri = params.text_document.uri
    path = file_path(uri)
    if path and os.path.basename(path) in config.CONFIG_NAMES:
        ls.config_files_changed([path])  # the settings may have changed for every document
        return
    if is_pack_path(uri_to_path(uri), ls.settings_for(uri).rule_packs):
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


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, COMPLETION_OPTIONS)
def completion(ls: ServelintServer, params: lsp.CompletionParams):
    uri = params.text_document.uri
    doc = ls.workspace.get_text_document(uri)
    state = ls.docs.get(uri)
    return completion_for(doc.source, params.position, uri_to_path(uri), doc.language_id,
                          ls.settings_for(uri), state.result if state else None,
                          capabilities=ls.client_capabilities)


@server.feature(lsp.COMPLETION_ITEM_RESOLVE)
def completion_resolve(ls: ServelintServer, item: lsp.CompletionItem):
    return resolve_completion(item)


@server.command(CHECK_UPGRADE)
async def check_upgrade_command(ls: ServelintServer, *args):
    """[uri, release]: check the document's launches for an upgrade to `release` (its
    problems become diagnostics with their fixes); [uri, ""] stops."""
    if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], str):
        return {"error": "expected [documentUri, release]"}
    uri, target = args[0], args[1].strip()
    if target:
        ls.upgrade_targets[uri] = target
    else:
        ls.upgrade_targets.pop(uri, None)
    state = ls.docs.get(uri)
    if state is None:
        return {"target": target or None}
    state.result = None  # linted with other settings: no longer current
    ls.schedule(uri, immediate=True)
    if state.task is not None:
        await asyncio.shield(state.task)
    result = state.result
    if not target or result is None:
        return {"target": None}
    ups = result.upgrades
    safe = sum(1 for f in ups if any(x.safe for x in f.fixes))
    moving = sorted({result.releases[f.launch_index].version for f in ups
                     if f.launch_index is not None})
    said = (f"Upgrading from SGLang {', '.join(moving)} to {result.target}: {len(ups)} problem(s) "
            f"in this file, {safe} with a safe fix (Problems panel; fix all applies them)."
            if ups else f"Nothing in this file breaks on SGLang {result.target}.")
    # Asked for by the user: shown whatever servelint.showNotifications says.
    ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=said))
    return {"target": result.target, "problems": len(ups), "safe": safe}


def upgrade_actions(ls: ServelintServer, uri: str, result: LintResult | None,
                    rng: lsp.Range) -> list[lsp.CodeAction]:
    """On the image tag or pin a launch's release was read from: "Check upgrade to
    SGLang <newest>"; while a check runs for the document: "Stop checking …"."""
    from servelint.catalog import newest_version, version_key
    actions = []
    current = ls.upgrade_targets.get(uri)
    if current is not None:
        actions.append(lsp.CodeAction(
            title=f"Stop checking the upgrade to SGLang {current}", kind=lsp.CodeActionKind.Refactor,
            command=lsp.Command(title="Stop", command=CHECK_UPGRADE, arguments=[uri, ""])))
    if result is None or not result.releases:
        return actions
    newest = newest_version()
    index = result.index
    start = index.offset(rng.start.line, rng.start.character)
    end = index.offset(rng.end.line, rng.end.character)
    for release in result.releases:
        span = release.span
        if span is None or release.source not in ("image", "pin") or not (
                span.start <= end and start <= span.end):
            continue
        if version_key(release.version) >= version_key(newest) or current == newest:
            continue
        actions.append(lsp.CodeAction(
            title=f"Check upgrade to SGLang {newest} (this launch runs {release.version})",
            kind=lsp.CodeActionKind.Refactor,
            command=lsp.Command(title="Check upgrade", command=CHECK_UPGRADE,
                                arguments=[uri, newest])))
        break
    return actions


@server.command(STATUS)
async def status_command(ls: ServelintServer, *args):
    uri = args[0] if args and isinstance(args[0], str) else None
    state = ls.docs.get(uri) if uri else None
    if state is not None and state.task is not None and not state.task.done():
        # The document is being linted (just opened or edited): its releases are known
        # when that lint is done.
        try:
            await asyncio.wait_for(asyncio.shield(state.task), timeout=5)
        except Exception:
            pass
    return ls.status(uri)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
async def hover(ls: ServelintServer, params: lsp.HoverParams):
    uri = params.text_document.uri
    result = await ls.current_result(uri)
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
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix,
                                             lsp.CodeActionKind.Refactor, FIX_ALL_KIND,
                                             NOTEBOOK_FIX_ALL_KIND],
                          resolve_provider=False),
)
async def code_action(ls: ServelintServer, params: lsp.CodeActionParams):
    """Quick fixes come from the diagnostics' data (no lint); the fix-all actions are
    computed on the lint thread, and only when asked for: by kind (`source`,
    `source.fixAll`, on save), or with no kind when the user invoked the menu. The
    automatic request at every cursor move gets quick fixes only."""
    uri = params.text_document.uri
    only = params.context.only
    actions: list[lsp.CodeAction] = []
    doc = ls.workspace.get_text_document(uri)
    debug = log.isEnabledFor(logging.DEBUG)
    if debug:
        log.debug("codeAction %s only=%s trigger=%s version=%s diagnostics=%s", uri, only,
                  params.context.trigger_kind, doc.version,
                  [(d.code, d.data.get("version") if isinstance(d.data, dict) else None, d.range)
                   for d in params.context.diagnostics])

    def asked(kind: str) -> bool:
        if not only:
            return params.context.trigger_kind != lsp.CodeActionTriggerKind.Automatic
        return any(kind == k or kind.startswith(k + ".") for k in only)

    want_quickfix = not only or any(k == "quickfix" or k.startswith("quickfix.") for k in only)
    current: LintResult | None = None  # the current text's lint, once, if a diagnostic is stale
    if want_quickfix:
        for diag in params.context.diagnostics:
            if diag.source != "servelint" or not isinstance(diag.data, dict):
                continue
            # The diagnostic does not carry its fixes (serialize.diagnostic's editor
            # form): they are its finding's in the lint of the current text, the
            # published one while it is current. VS Code may also ask with the
            # diagnostics of the text before an edit it just made (the new ones are on
            # their way): the same finding's fixes in the current text, never edits
            # computed for another text.
            current = current or await ls.current_result(uri)
            f = ls.current_finding(current, diag) if current is not None else None
            if current is None or f is None:
                continue
            # Offered only when the fixed text still parses in its own syntax (issue
            # 17): checked here, for the few fixes asked for, not at every lint.
            fixes = offered_dicts(current.format, doc.source, current.index,
                                  ls.finding_fixes(current, f))
            for fx in fixes:
                actions.append(lsp.CodeAction(
                    title=fx["title"] if str(diag.code) in fx["title"] else f"{fx['title']} ({diag.code})",
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=bool(fx.get("preferred")),
                    edit=lsp.WorkspaceEdit(changes={uri: [text_edit(e) for e in fx["edits"]]}),
                ))
    if not only or any(k in ("", "refactor") for k in only):
        # Cheap (the published lint, no new one), so the light bulb may show it too.
        state = ls.docs.get(uri)
        published = state.result if state is not None else None
        if published is not None and published.text == doc.source:
            actions.extend(upgrade_actions(ls, uri, published, params.range))
    if asked(FIX_ALL_KIND):
        edit = await ls.fix_all_edit(uri)
        if edit is not None:
            actions.append(lsp.CodeAction(title="servelint: fix all safe problems",
                                          kind=FIX_ALL_KIND,
                                          edit=lsp.WorkspaceEdit(changes={uri: [edit]})))
    if only and asked(NOTEBOOK_FIX_ALL_KIND) and is_cell_uri(uri):
        changes = {}
        for cell in ls.notebook_cells(uri):
            edit = await ls.fix_all_edit(cell)
            if edit is not None:
                changes[cell] = [edit]
        if changes:
            actions.append(lsp.CodeAction(title="servelint: fix all safe problems in the notebook",
                                          kind=NOTEBOOK_FIX_ALL_KIND,
                                          edit=lsp.WorkspaceEdit(changes=changes)))
    if debug:
        log.debug("codeAction %s -> %s", uri, [a.title for a in actions])
    return actions or None


@cache
def _glibc():
    """The C library when it is glibc on Linux (mallopt, malloc_trim), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        lib = ctypes.CDLL(None)
        lib.mallopt, lib.malloc_trim  # glibc's; musl has neither
    except (OSError, AttributeError):
        return None
    return lib


def tune_malloc() -> None:
    """Large blocks (each version of a large document's text, the JSON of its diagnostics)
    go back to the system when freed. glibc raises its mmap threshold to the size of the
    largest block freed, after which such texts come from the heap and leave holes it
    does not return: a server with a 100,000-line script open grew 43 MB over 20 edits.
    A fixed threshold keeps them mapped apart. And one heap for all threads: the lint
    thread had an arena of its own, whose free pages added ~2 MiB to the server's RSS
    with the 100,000-line script open (bench/memory.py). Only where glibc's mallopt exists."""
    libc = _glibc()
    if libc is None:
        return
    M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8
    libc.mallopt(M_MMAP_THRESHOLD, 256 * 1024)
    libc.mallopt(M_ARENA_MAX, 1)


def trim_heap() -> None:
    """glibc's malloc_trim(0): the pages freed inside the C heap (a large document's
    texts, lists and previous results) go back to the system instead of staying in the
    process's RSS (bench/memory.py, 100,000-line script: 115.6 -> 110.8 MiB after 100
    edits). Well under a millisecond; nothing without glibc."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


def run_stdio(stdin=None, stdout=None) -> int:
    logging.basicConfig(level=logging.WARNING)  # a no-op when `servelint lsp` set the level
    # The lint thread holds the GIL while it works; a short switch interval lets the
    # thread reading stdin and the event loop see new changes while a long lint runs.
    sys.setswitchinterval(0.001)
    # A lint allocates (and keeps) tens of thousands of objects: with the default
    # thresholds (700, 10, 10) the collector ran ~200 times per lint of a 2,222-launch
    # script and took 40% of it. docs/architecture.md, "The server under load".
    gc.set_threshold(*GC_THRESHOLDS)
    tune_malloc()
    server.start_io(stdin, stdout)
    return EXIT_CODE[0]


# The process's exit code, as the specification says: 0 after `shutdown` then `exit`, 1 for an
# `exit` without `shutdown` (pygls works it out, but its sys.exit inside the event loop does not
# reach the process).
EXIT_CODE = [0]


@server.feature(lsp.EXIT)
def on_exit(ls: ServelintServer, *args) -> None:
    EXIT_CODE[0] = 0 if ls.protocol._shutdown else 1


__all__ = ["server", "run_stdio"]
