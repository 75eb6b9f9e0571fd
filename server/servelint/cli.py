"""The command line: `servelint check`, `servelint rule`, `servelint lsp`."""

from __future__ import annotations

import gc
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

# Imported where they are used, not here: `main` pauses the cycle collector before the
# modules a check needs are imported (see `main`), and `--version` or a usage error needs
# none of them.


def flag_value(attr: str, comma_list: bool = False):
    """An argparse `type` that checks a flag's value with its settings field (schema.py),
    so the command line words a bad value as the editor and the project file do."""
    import argparse

    from servelint.schema import BY_ATTR, Invalid
    field = BY_ATTR[attr]

    def parse(text: str):
        try:
            return field.parse(text.split(",") if comma_list else text)
        except Invalid as exc:
            said = str(exc)
            raise argparse.ArgumentTypeError(said if repr(text) in said else f"{text!r} {said}") from None
    parse.__name__ = field.cli or attr  # argparse names the type in its messages
    return parse


def positive_int(text: str) -> int:
    """An argparse `type`: a whole number of at least 1 (--jobs)."""
    import argparse
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def cli_settings(args):
    """The settings the command-line flags give; each flag given counts as explicit, so it
    beats the project configuration file (rule packs add to the project's, they do not
    replace them)."""
    from servelint.schema import FIELDS
    from servelint.settings import Settings

    settings = Settings()
    explicit = set()
    for field in FIELDS:
        if field.cli is None:
            continue
        attr = field.attr
        value = getattr(args, field.cli.lstrip("-").replace("-", "_"), None)
        if value is None or value is False:
            continue
        if value is True:  # a switch (--no-suppressions): its field says what it means
            value = field.parse(True)
        setattr(settings, attr, value)
        if attr != "rule_packs":
            explicit.add(attr)
    if "sglang_version" in explicit and settings.sglang_version != "auto":
        settings.sglang_version_from = "--sglang-version"
    settings.project_rules = not args.no_project_rules
    settings.explicit = frozenset(explicit)
    return settings


STDIN = "-"


class Usage(Exception):
    """A command-line mistake the parser cannot see (exit code 2)."""


def check_modes(args) -> None:
    """The flags that do not go together, said as what to do instead."""
    if args.format is None:
        args.format = "text"
    modes = [flag for flag, on in (("--fix", args.fix), ("--diff", args.diff),
                                   ("--add-noqa", args.add_noqa is not None)) if on]
    if len(modes) > 1:
        raise Usage(f"{' and '.join(modes)} cannot be used together: run them one after the other")
    if args.diff and args.format != "text":
        raise Usage(f"--diff prints a unified diff, not findings: drop --format {args.format}")
    if args.diff and args.statistics:
        raise Usage("--diff prints a unified diff, not findings: drop --statistics")
    if args.statistics and args.format not in ("text", "json", "json-lines"):
        raise Usage(f"--statistics prints a table (--format text) or JSON (--format json); "
                    f"it has no --format {args.format}")
    if args.add_noqa is not None:
        if STDIN in args.paths:
            raise Usage("--add-noqa writes the comments into files: name the files, not `-`")
        if any(c in args.add_noqa for c in "\r\n") or "-->" in args.add_noqa:
            raise Usage("--add-noqa=REASON: the reason is written into a one-line comment, so it "
                        "cannot hold a line break or `-->`")


def use_color(choice: str, stream) -> bool:
    """--color: always, never, or auto (a terminal, and NO_COLOR unset or empty)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def applied_fixes(before, after) -> list:
    """The findings of `before` (a LintResult) with a safe fix that are gone from `after`
    (the same text after --fix), with the fix --fix picks for each (its preferred safe fix)."""
    from collections import Counter
    left = Counter((f.code, f.message) for f in after.findings)
    out = []
    for f in before.findings:
        safe = [x for x in f.fixes if x.safe]
        if not safe:
            continue
        key = (f.code, f.message)
        if left[key]:
            left[key] -= 1
            continue
        out.append((f, next((x for x in safe if x.preferred), safe[0])))
    return out


def add_suppressions(text: str, path: str | None, settings, reason: str,
                     passes: int = 16) -> tuple[str, int]:
    """--add-noqa: silence every finding with a suppression comment, using the code actions
    suppress.py offers the editor ("Disable CODE for this launch", else "... for this file"),
    with `reason` after `--`. One comment per place per pass, then lint again, so a second
    code on the same launch is added to the comment the first pass wrote. Returns the text
    and how many comments were written or extended. A finding no comment can silence (a
    notebook's: its comments live inside JSON strings) is left as it is."""
    from servelint.edits import apply_edits
    from servelint.engine import lint
    from servelint.model import Edit
    from servelint.suppress import REASON
    added = 0
    for _ in range(passes):
        result = lint(text, path=path, settings=settings, suppression_actions=True)
        edits = []
        taken: set[int] = set()
        for f in result.findings:
            actions = [x for x in f.fixes if x.title.startswith(f"Disable {f.code} for this ")
                       and len(x.edits) == 1]
            launch = [x for x in actions if x.title.endswith(" launch")]
            if not actions:
                continue
            edit = (launch or actions)[0].edits[0]
            if edit.span.start in taken:
                continue  # another comment goes there: this one waits for the next pass
            taken.add(edit.span.start)
            edits.append(Edit(edit.span, edit.new_text.replace(f"-- {REASON}", f"-- {reason}")))
        if not edits:
            break
        text = apply_edits(text, edits)
        added += len(edits)
    return text, added


class Output:
    """Where a check's output goes, in the parent process: the findings to the reporter,
    notes to stderr, and the counts, errors and "reported once" sets the summary and the
    exit code come from. `check_path` and `check_text` say everything through one of
    these (or through a worker's `Recorder`, whose calls are replayed here in file order,
    so that a parallel run prints the bytes a single process prints)."""

    def __init__(self, args, reporter, out, threshold) -> None:
        self.args = args
        self.reporter = reporter
        self.out = out
        self.threshold = threshold
        self.infos: dict = {}
        from servelint.model import Severity
        self.counts = {s: 0 for s in Severity}  # in severity order, for the summary
        self.failed = False
        self.errors: list[str] = []
        self.config_problems: dict[str, str] = {}
        self.reported_packs: set[str] = set()
        self.nfiles = 0
        self.changed_files = 0  # --diff: files --fix would change; --add-noqa: files given comments
        self.changed_edits = 0

    def config_problem(self, path: str, message: str) -> None:
        if path not in self.config_problems:
            self.config_problems[path] = message
            print(f"servelint: error: {message}", file=sys.stderr)

    def pack_file(self, key: str) -> bool:
        """A rule pack is reported once: False when it already was (the file is skipped)."""
        if key in self.reported_packs:
            return False
        self.reported_packs.add(key)
        return True

    def packs(self, key: str, diagnostics: list) -> None:
        """A rule pack's problems, the first time a launch loaded it."""
        if self.pack_file(key):
            for path, d in diagnostics:
                self.finding(path, d, None)

    def file(self, shown: str) -> None:
        self.nfiles += 1
        self.reporter.file(shown)

    def finding(self, path: str, d: dict, rules) -> None:
        """One diagnostic (servelint/serialize.py's dict, the one the editor gets)."""
        self.found(path, d, None, rules)

    def found(self, path: str, d: dict, info, rules=None) -> None:
        from servelint.model import Severity
        from servelint.report import record, rule_info
        severity = Severity(d["severity"])
        self.counts[severity] += 1
        if severity <= self.threshold:
            self.failed = True
        if not self.args.diff:
            code = d["code"]
            if code not in self.infos:
                self.infos[code] = info if info is not None else rule_info(code, rules)
            self.reporter.add(record(path, d), self.infos[code])

    def stderr(self, line: str) -> None:
        print(line, file=sys.stderr)

    def text(self, line: str) -> None:
        self.reporter.text(line)

    def write(self, text: str) -> None:
        self.out.write(text)

    def error(self, message: str) -> None:
        self.errors.append(message)

    def changed(self, edits: int) -> None:
        self.changed_files += 1
        self.changed_edits += edits


class Recorder:
    """A worker process's stand-in for `Output` while it checks one file: it keeps the
    calls, which the parent replays on its `Output` in file order. A finding carries its
    rule's info (worked out here, from the file's own rule set); a rule pack file is
    checked as if it had not been reported yet: the parent skips the rest of the file's
    calls when it had."""

    def __init__(self, diff: bool, infos: dict) -> None:
        self.calls: list[tuple] = []
        self._diff = diff
        self._infos = infos  # (code, id(rules)) -> (rules, info), kept by the worker

    def finding(self, path: str, d: dict, rules) -> None:
        info = None
        if not self._diff:
            from servelint.report import rule_info
            key = (d["code"], id(rules))
            known = self._infos.get(key)
            if known is None or known[0] is not rules:
                known = self._infos[key] = (rules, rule_info(d["code"], rules))
            info = known[1]
        self.calls.append(("found", (path, d, info)))

    def pack_file(self, key: str) -> bool:
        self.calls.append(("pack_file", (key,)))
        return True

    def _keep(name: str):  # type: ignore[misc]
        def call(self, *args) -> None:
            self.calls.append((name, args))
        call.__name__ = name
        return call

    config_problem = _keep("config_problem")
    packs = _keep("packs")
    file = _keep("file")
    stderr = _keep("stderr")
    text = _keep("text")
    write = _keep("write")
    error = _keep("error")
    changed = _keep("changed")
    del _keep


def replay(calls: list[tuple], output: Output) -> None:
    """A worker's calls for one file, made on the parent's `output`; a rule pack file
    already reported stops there, as a single process would have skipped it."""
    for name, args in calls:
        if getattr(output, name)(*args) is False:
            return


def cmd_check(args) -> int:
    try:
        check_modes(args)
    except Usage as exc:
        print(f"servelint: error: {exc}", file=sys.stderr)
        return 2
    from servelint.config import settings_for
    from servelint.engine import fix_all_text, lint
    from servelint.files import NotRegular, TooLarge, iter_files, read_text
    from servelint.model import Severity
    from servelint.report import Reporter, unified_diff

    base = cli_settings(args)
    if args.config is not None and not os.path.isfile(args.config):
        print(f"servelint: error: --config {args.config}: no such file", file=sys.stderr)
        return 2
    stdin = STDIN in args.paths
    if stdin and len(args.paths) > 1:
        print("servelint: error: `-` (standard input) cannot be checked together with files",
              file=sys.stderr)
        return 2
    if args.stdin_filename is not None and not stdin:
        print("servelint: error: --stdin-filename names standard input: give `-` as the path",
              file=sys.stderr)
        return 2

    def settings_of(path: str, sink):
        settings, problems = settings_for(path, base, "editorFirst", config_path=args.config,
                                          isolated=args.isolated)
        for cfg in problems:
            sink.config_problem(cfg.path, cfg.message())
        return settings

    explicit = set(args.paths)
    # With `--fix -` the fixed text goes to stdout; what is left to report goes to stderr.
    out = sys.stderr if stdin and args.fix else sys.stdout
    if args.output_file is not None:
        try:
            parent = os.path.dirname(args.output_file)
            if parent:
                os.makedirs(parent, exist_ok=True)  # as Ruff does: `-o reports/x.sarif`
            out = open(args.output_file, "w", encoding="utf-8", newline="\n")
        except OSError as exc:
            print(f"servelint: error: --output-file {args.output_file}: "
                  f"{exc.strerror or exc}", file=sys.stderr)
            return 2
    reporter = Reporter(args.format, out, color=use_color(args.color, out),
                        show_fixes=args.show_fixes, stats=args.statistics)
    output = Output(args, reporter, out, Severity.parse(args.fail_on))
    reason = None
    if args.add_noqa is not None:
        from servelint.suppress import REASON
        reason = args.add_noqa.strip() or REASON

    from servelint.rules import is_pack_path
    from servelint.serialize import diagnostic, pack_problem_diagnostic, release_of

    def show_applied(shown: str, before, after, sink) -> None:
        """--show-fixes: on stderr, each finding --fix (or --diff) removes, and its fix."""
        if not args.show_fixes:
            return
        index = before.index
        for f, fx in applied_fixes(before, after):
            line, col = index.position(f.span.start)
            sink.stderr(f"  {shown}:{line + 1}:{col + 1}: {f.code} {fx.title}")

    def check_text(shown: str, path: str | None, text: str, settings,
                   fix: bool, sink) -> tuple[str, bool]:
        """Lint one text (a file's, or standard input's: `path` is then the
        --stdin-filename or None) and report it as `shown` to `sink` (an Output or a
        worker's Recorder). Returns the text after --fix or --add-noqa and whether
        servelint read its format."""
        result = lint(text, path=path, settings=settings)
        if result.format is None:
            return text, False
        sink.file(shown)
        if result.rules is not None:
            problems: dict[str, list] = {}
            for prob in result.rules.problems:
                problems.setdefault(os.path.abspath(prob.path), []).append(
                    (prob.path, pack_problem_diagnostic(prob)))
            for key, diagnostics in problems.items():
                sink.packs(key, diagnostics)
        for notice in result.notices:
            if result.rules is not None and any(notice == str(p) for p in result.rules.problems):
                continue
            sink.stderr(f"{shown}: note: {notice}")
        if (fix or args.diff) and result.findings:
            new, count = fix_all_text(text, path, None, settings)
            if new != text:
                if args.diff:
                    sink.write(unified_diff(text, new, shown))
                    sink.changed(count)
                    sink.stderr(f"{shown}: --fix would apply {count} fix edit(s)")
                    if args.show_fixes:
                        show_applied(shown, result, lint(new, path=path, settings=settings), sink)
                    return text, True
                if path is not None and not stdin:
                    why = write_back(path, text, new, args.paths)
                    if why is not None:
                        sink.error(f"{shown}: not fixed: {why}")
                        return text, True
                sink.stderr(f"{shown}: applied {count} fix edit(s)")
                after = lint(new, path=path, settings=settings)
                show_applied(shown, result, after, sink)
                text, result = new, after
        if args.diff:
            return text, True
        if reason is not None and result.findings and path is not None:
            new, added = add_suppressions(text, path, settings, reason)
            why = write_back(path, text, new, args.paths) if new != text else None
            if why is not None:
                sink.error(f"{shown}: no suppressions added: {why}")
            elif new != text:
                sink.changed(added)
                sink.stderr(f"{shown}: added {added} suppression(s)")
                text = new
                result = lint(new, path=path, settings=settings)
        if result.findings:
            from servelint.lazy import file_uri
            uri = file_uri(os.path.abspath(path or STDIN))
            from servelint.fixcheck import offered_dicts
            for f in result.findings:
                d = diagnostic(f, result.index, uri, None, result.rules, release_of(result, f))
                if d["data"]["fixes"]:
                    # Only the fixes whose result still parses in the file's own syntax are
                    # listed (every output format, as the editor offers them).
                    d["data"]["fixes"] = offered_dicts(result.format, text, result.index,
                                                       d["data"]["fixes"])
                sink.finding(shown, d, result.rules)
        if result.target is not None:
            from servelint.upgrade import summary
            for line, said in summary(result, result.upgrades, result.target):
                sink.text(f"{shown}:{line}: upgrade: {said}")
        return text, True

    def check_path(path: str, sink) -> None:
        """Check one file the walk found, saying everything to `sink`."""
        settings = settings_of(path, sink)
        if is_pack_path(path, settings.rule_packs):
            # A rule pack is reported once: here, or when a launch first loaded it.
            if not sink.pack_file(os.path.abspath(path)):
                return
        named = path in explicit
        try:
            content = read_text(path, named, settings.max_file_bytes)
        except TooLarge as exc:
            sink.stderr(f"{path}: note: not linted: the file has {exc.args[0]:,} bytes, more "
                        f"than the {settings.max_file_bytes:,} servelint reads")
            return
        except NotRegular as exc:
            if named:
                sink.error(str(exc))  # a folder's FIFOs and sockets are skipped quietly
            return
        except OSError as exc:
            sink.error(str(exc))
            return
        if content is None:
            if named:
                sink.error(f"{path}: not linted: the file is binary (it holds NUL bytes)")
            return
        _, known = check_text(path, path, content, settings, args.fix, sink)
        if named and not known:
            # Named on the command line: say so (a folder's other files are skipped quietly).
            sink.error(f"{path}: not linted: servelint does not recognise this file's format "
                       "(by its name or its content); formats: docs/formats/README.md")

    if stdin:
        name = args.stdin_filename
        shown = name if name else STDIN
        settings = settings_of(name or STDIN, output)
        if name is not None and is_pack_path(name, settings.rule_packs):
            output.reported_packs.add(os.path.abspath(name))
        data, whole = read_stdin(settings.max_file_bytes)
        stdout_bytes: bytes = data
        if not whole:
            print(f"{shown}: note: not linted: standard input has more than the "
                  f"{settings.max_file_bytes:,} bytes servelint reads", file=sys.stderr)
        elif b"\0" in data:
            output.error(f"{shown}: not linted: standard input is binary (it holds NUL bytes), "
                         "not a text servelint reads")
        else:
            try:
                text, valid = data.decode("utf-8"), True
            except UnicodeDecodeError:
                text, valid = data.decode("utf-8", errors="replace"), False
            if not valid and args.fix:
                output.error(f"{shown}: not fixed: standard input is not valid UTF-8, so it is "
                             "written back unchanged")
            if not valid and args.diff:
                output.error(f"{shown}: no diff: standard input is not valid UTF-8, and --fix "
                             "does not fix what it cannot write back as it was")
                fixed, known = text, True
            else:
                fixed, known = check_text(shown, name, text, settings, valid and args.fix,
                                          output)
            if not known and not text.strip():
                output.nfiles += 1  # nothing to read is nothing to report, whatever its format
            elif not known:
                output.error(f"{shown}: not linted: servelint does not recognise the format of "
                             "standard input (by the --stdin-filename's name or by its content): "
                             "name it, e.g. --stdin-filename run.sh")
            elif valid:
                stdout_bytes = fixed.encode("utf-8")
        if args.fix:
            sys.stdout.flush()
            sys.stdout.buffer.write(stdout_bytes)
            if not whole:
                copy_rest(sys.stdin.buffer, sys.stdout.buffer)
            sys.stdout.buffer.flush()
    else:
        # The walk's own errors (a path that does not exist) take their place among the
        # files' errors: `walked[i]` is the number of them before the i-th file.
        walk_errors: list[str] = []
        paths: list[str] = []
        walked: list[int] = []
        for path in iter_files(args.paths, walk_errors,
                               respect_gitignore=not args.no_respect_gitignore,
                               config_path=args.config, isolated=args.isolated):
            paths.append(path)
            walked.append(len(walk_errors))
        seen_errors = 0

        def before(i: int) -> None:
            nonlocal seen_errors
            upto = walked[i] if i < len(walked) else len(walk_errors)
            output.errors.extend(walk_errors[seen_errors:upto])
            seen_errors = upto

        first = 0
        for i, path in enumerate(paths):
            before(i)
            check_path(path, output)
            first = i + 1
            if output.nfiles:
                resume_collector(args)  # start-up is over: the first file is linted
                break
        workers = parallel_workers(args.jobs, len(paths) - first)
        if workers > 1:
            def work(i: int, infos: dict) -> list:
                rec = Recorder(args.diff, infos)
                check_path(paths[i], rec)
                return rec.calls

            results = run_parallel(range(first, len(paths)), workers, work,
                                   flush=(sys.stdout, sys.stderr, out))
            try:
                for i, calls in results:
                    before(i)
                    replay(calls, output)
            finally:
                results.close()  # ends and reaps the workers at once, whatever happened
        else:
            for i in range(first, len(paths)):
                before(i)
                check_path(paths[i], output)
        before(len(paths))
    reporter.close()
    if out is not sys.stdout and out is not sys.stderr:
        out.close()
    errors, counts, nfiles = output.errors, output.counts, output.nfiles
    changed_files, changed_edits, failed = output.changed_files, output.changed_edits, output.failed
    for e in errors:
        print(f"servelint: error: {e}", file=sys.stderr)
    sys.stdout.flush()
    if args.diff:
        if not args.quiet:
            print(f"--fix would change {changed_files} file(s) ({changed_edits} fix edit(s)) "
                  f"of {nfiles} checked" if changed_files else
                  f"--fix would change nothing in {nfiles} file(s)", file=sys.stderr)
        failed = changed_files > 0
    elif args.format == "text" and not args.quiet:
        if reason is not None:
            print(f"added {changed_edits} suppression(s) to {changed_files} file(s)",
                  file=sys.stderr)
        total = sum(counts.values())
        parts = ", ".join(f"{n} {s.label}" for s, n in counts.items() if n)
        print(f"{total} finding(s) in {nfiles} file(s){': ' + parts if parts else ''}",
              file=sys.stderr)
    if errors or output.config_problems:
        return 2
    return 1 if failed and not args.exit_zero else 0


# --- many files on several cores -------------------------------------------------------------

# With the default --jobs, a run goes parallel only when each worker gets at least this
# many files (after the first, which the parent checks itself to warm the catalog and the
# rules every worker then inherits). Measured on 2 cores with 40-line scripts: below
# about 16 files a second process does not pay for its fork and the replay.
PARALLEL_MIN_FILES = 16


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def parallel_workers(jobs: int | None, remaining: int) -> int:
    """How many worker processes check the `remaining` files: 1 (this process alone)
    without os.fork (Windows), with --jobs 1, or when there are too few files; --jobs N
    asks for N (at most one per file); the default is one per CPU, each with at least
    PARALLEL_MIN_FILES files."""
    if not hasattr(os, "fork") or remaining < 2:
        return 1
    if jobs is not None:
        return max(1, min(jobs, remaining))
    return max(1, min(available_cpus(), remaining // PARALLEL_MIN_FILES))


class WorkerFailed(RuntimeError):
    """A worker process raised (its traceback is the message) or died while checking a file."""


def run_parallel(indices, workers: int, work, flush=()):
    """Call `work(i, memo)` for every i of `indices` in `workers` forked processes and
    yield (i, what it returned) in the order of `indices`, as soon as each is next.

    The work is handed out as it goes: the indices, cut into at most MAX_TASKS runs, wait
    in a pipe every worker reads its next run from, so a worker that the machine's other
    programs slow down takes fewer files instead of holding the others up. Each result is
    pickled through the worker's own pipe; the parent keeps the ones that come early
    until their turn. `memo` is a dict a worker keeps across its calls. The streams in
    `flush` are flushed before forking (a worker never writes to them, and never flushes
    what the parent had buffered). Closing the generator early kills the workers; a
    worker's exception (in its turn) or death raises WorkerFailed. Every worker is reaped
    before this ends."""
    import pickle
    import selectors
    import signal
    import struct

    indices = list(indices)
    size = max(1, -(-len(indices) // MAX_TASKS))  # a run of this many indices per task
    runs = [indices[k:k + size] for k in range(0, len(indices), size)]
    for stream in flush:
        stream.flush()
    task_r, task_w = os.pipe()
    # Every task is written before a worker exists (at most MAX_TASKS * 4 bytes, within
    # any pipe's buffer), so a worker's 4-byte read always gets one whole task number.
    os.write(task_w, b"".join(struct.pack("<I", k) for k in range(len(runs))))
    children: dict[int, tuple[int, object]] = {}  # result fd -> (pid, reader)
    finished = False
    try:
        for _ in range(workers):
            r, wfd = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                os.close(task_w)
                for _, reader in children.values():
                    reader.close()  # type: ignore[attr-defined]
                _worker(runs, task_r, work, wfd)  # never returns
            os.close(wfd)
            children[r] = (pid, os.fdopen(r, "rb"))
        os.close(task_w)
        task_w = -1
        os.close(task_r)
        task_r = -1
        waiting: dict[int, tuple] = {}  # index -> (result, failure), arrived before its turn
        open_fds = set(children)
        sel = selectors.DefaultSelector()
        for fd in children:
            sel.register(fd, selectors.EVENT_READ)
        for i in indices:
            while i not in waiting:
                if not open_fds:
                    raise WorkerFailed(f"the worker processes ended before the result for "
                                       f"file number {i}")
                for key, _ in sel.select():
                    pid, reader = children[key.fd]
                    head = reader.read(8)  # type: ignore[attr-defined]
                    if len(head) < 8:  # this worker is done (or died)
                        sel.unregister(key.fd)
                        open_fds.discard(key.fd)
                        continue
                    (n,) = struct.unpack("<Q", head)
                    j, result, failure = pickle.loads(reader.read(n))  # type: ignore[attr-defined]
                    waiting[j] = (result, failure if failure is None else
                                  f"worker process {pid}, file number {j}:\n{failure}")
            result, failure = waiting.pop(i)
            if failure is not None:
                raise WorkerFailed(failure)
            yield i, result
        finished = True
    finally:
        for fd in (task_r, task_w):
            if fd >= 0:
                os.close(fd)
        for pid, reader in children.values():
            reader.close()  # type: ignore[attr-defined]
            if not finished:
                try:
                    os.kill(pid, signal.SIGKILL)  # our own child, not yet reaped
                except OSError:
                    pass
            while True:
                try:
                    os.waitpid(pid, 0)
                    break
                except InterruptedError:
                    continue
                except ChildProcessError:
                    break


# The most tasks run_parallel cuts the work into (4 bytes each in the task pipe: 8 KiB, less
# than the smallest pipe buffer, 16 KiB on macOS).
MAX_TASKS = 2048


def _worker(runs: list[list[int]], tasks: int, work, fd: int) -> None:
    """A forked worker: takes the next run of indices from the `tasks` pipe until it is
    empty, calls `work` for each index and writes each result, pickled behind its length,
    to the pipe `fd`; then exits without running the parent's clean-up (os._exit)."""
    import pickle  # all three imported by the parent already (traceback is not: only
    import signal  # a failure needs it, and its import was a tenth of a worker's start)
    import struct

    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent tells it
        memo: dict = {}
        with os.fdopen(fd, "wb") as pipe:
            while code == 0:
                task = os.read(tasks, 4)
                if len(task) < 4:
                    break  # no task left (the parent wrote them all, then closed its end)
                for i in runs[struct.unpack("<I", task)[0]]:
                    failure = None
                    try:
                        result = work(i, memo)
                    except BaseException:
                        import traceback
                        result, failure = None, traceback.format_exc()
                    try:
                        data = pickle.dumps((i, result, failure), pickle.HIGHEST_PROTOCOL)
                    except Exception:
                        import traceback
                        failure = traceback.format_exc()
                        data = pickle.dumps((i, None, failure), pickle.HIGHEST_PROTOCOL)
                    pipe.write(struct.pack("<Q", len(data)))
                    pipe.write(data)
                    pipe.flush()
                    if failure is not None:
                        code = 1
                        break
    except BaseException:  # the parent went away (a broken pipe), or was interrupted
        code = 1
    finally:
        os._exit(code)


def read_stdin(limit: int) -> tuple[bytes, bool]:
    """Standard input up to `limit` bytes, and whether that was all of it."""
    buf = sys.stdin.buffer
    data = buf.read(limit + 1)
    if len(data) <= limit:
        return data, True
    return data, False


def copy_rest(src, dst) -> None:
    while True:
        chunk = src.read(1 << 16)
        if not chunk:
            return
        dst.write(chunk)


def write_back(path: str, read: str, new: str, given: list[str]) -> str | None:
    """Replace the file's text `read` (what was linted) with `new`, atomically; None when
    written, else why not, and the file is left as it is: its bytes are not UTF-8 (a fix
    would replace them), it changed since it was read (another program's edit would be
    lost), it is reached through a symbolic link that leads out of the folders named on the
    command line (a file named itself may be a link), or it cannot be written."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        return f"cannot read it again before writing: {exc.strerror or exc}"
    try:
        now = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "the file is not valid UTF-8, and writing the fix would replace those bytes"
    if now != read:
        return "the file changed since servelint read it; run servelint again"
    real = os.path.realpath(path)
    if real != os.path.abspath(path) and not _inside_given(real, given):
        return (f"it is a symbolic link to {real}, outside the paths given on the command line; "
                "name the file itself to fix it")
    try:
        write_atomically(path, new)
    except OSError as exc:
        return f"cannot write it: {exc.strerror or exc}"
    return None


def _inside_given(real: str, given: list[str]) -> bool:
    """Whether `real` is a path named on the command line, or inside a folder named there."""
    for g in given:
        root = os.path.realpath(g)
        if real == root or (os.path.isdir(root) and real.startswith(root.rstrip(os.sep) + os.sep)):
            return True
    return False


def write_atomically(path: str, text: str) -> None:
    """Write `text` to `path` in full or not at all: a temporary file in the same folder,
    then renamed over it (keeping the file's permission bits)."""
    import tempfile
    path = os.path.realpath(path)  # through a symbolic link, as writing to it would
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".servelint-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def cmd_rule(args) -> int:
    from servelint.docs import rule_doc, all_codes
    doc = rule_doc(args.code.upper(), args.sglang_version)
    if doc is None:
        from servelint.suggest import close_matches
        close = close_matches(args.code.upper(), all_codes(args.sglang_version), cutoff=0.6)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        print(f"servelint: error: no rule {args.code}{hint}; `servelint rules` lists them",
              file=sys.stderr)
        return 2
    print(doc)
    return 0


def cmd_rules(args) -> int:
    from servelint.docs import rule_index
    for code, name, title in rule_index(args.sglang_version):
        print(f"{code:8} {name:40} {title}")
    return 0


def cmd_lsp(args) -> int:
    resume_collector(args)  # a long-lived server: lsp/server.py tunes the collector itself
    import logging
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.no_fast_start:
        from servelint.lsp.server import run_stdio
        return run_stdio()
    from servelint.lsp.bootstrap import run
    return run()  # 1 when the client sent exit without shutdown (the specification's code)


def version_action() -> type[argparse.Action]:
    """--version: servelint's version and the SGLang releases its catalog knows, worked out
    only when asked for (a class made here: argparse is imported with the parser)."""
    import argparse

    class VersionAction(argparse.Action):
        def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                     help=None):
            super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

        def __call__(self, parser, namespace, values, option_string=None):
            from servelint.release import version_text
            print(version_text())
            parser.exit()
    return VersionAction


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser. With `command` (the subcommand the arguments name),
    only that subcommand's options are added: the others are listed (so help and
    usage read the same) but not built, a part of every cold start saved."""
    import argparse

    from servelint.report import FORMATS
    p = argparse.ArgumentParser(prog="servelint", description="Lint SGLang launch commands.")
    p.add_argument("--version", action=version_action(),
                   help="print servelint's version and the SGLang releases it knows, and exit")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="lint files and folders")
    if command in (None, "check"):
        c.add_argument("paths", nargs="+", metavar="PATH",
                       help="files and folders; `-` reads standard input")
        c.add_argument("--stdin-filename", metavar="NAME",
                       help="the name of the text on standard input: chooses its format as a "
                            "file's name does, is the path shown in the output, and its folder "
                            "is where the project configuration is looked for")
        c.add_argument("--format", choices=FORMATS, default=None,
                       help="text (default): `path:line:col: severity CODE message`; json: one "
                            "array of records; json-lines: one record per line; sarif: SARIF "
                            "2.1.0; github: GitHub Actions annotations; gitlab: a GitLab Code "
                            "Quality report; junit: JUnit XML (docs/cli.md)")
        c.add_argument("-o", "--output-file", metavar="PATH",
                       help="write the findings (or --diff, --statistics) to PATH instead of "
                            "stdout")
        c.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                       help="colour the text format: auto (default) on a terminal unless NO_COLOR "
                            "is set")
        c.add_argument("--fail-on", choices=["error", "warning", "information", "hint"],
                       default="error", help="lowest severity that makes the exit code 1")
        c.add_argument("--select", type=flag_value("select", comma_list=True),
                       help="only these codes or prefixes (comma separated)")
        c.add_argument("--ignore", type=flag_value("ignore", comma_list=True),
                       help="skip these codes or prefixes (comma separated)")
        c.add_argument("--sglang-version", type=flag_value("sglang_version"), default=None,
                       metavar="RELEASE",
                       help="judge every launch as this SGLang release (default auto: each "
                            "launch's own, read from its image, pins and project)")
        c.add_argument("--target-version", type=flag_value("target_version"), default=None,
                       metavar="RELEASE",
                       help="also report what breaks when each launch moves from the SGLang "
                            "release it runs on to RELEASE (with --fix: apply the safe fixes)")
        c.add_argument("--gpu", type=flag_value("gpu"), default=None, metavar="GPU",
                       help="the GPU generation the launches run on (rules that depend on it stay "
                            "silent without it)")
        c.add_argument("--fix", action="store_true",
                       help="apply every safe fix in place (with `-`: print the fixed text to "
                            "stdout and what is left to stderr)")
        c.add_argument("--diff", action="store_true",
                       help="print what --fix would change as a unified diff per file, write "
                            "nothing; exit 1 when there is a change")
        c.add_argument("--show-fixes", action="store_true",
                       help="list each finding's fixes under it (text format), and on stderr the "
                            "findings --fix or --diff fixes")
        c.add_argument("--statistics", action="store_true",
                       help="print a count per code, with its name, instead of the findings")
        c.add_argument("--add-noqa", metavar="REASON", nargs="?", const="", default=None,
                       help="write a `servelint: disable=CODE -- REASON` comment for every "
                            "finding (reason placeholder: 'TODO: reason'; give one as "
                            "--add-noqa=REASON)")
        c.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even when findings (or --diff changes) would make it 1; usage "
                            "and configuration errors still exit 2")
        c.add_argument("--rules", action="append", metavar="PACK",
                       help="an extra rule pack file or folder (repeatable)")
        c.add_argument("--no-project-rules", action="store_true",
                       help="do not read .servelint/rules/ packs above the linted files")
        c.add_argument("--no-suppressions", action="store_true",
                       help="report findings even where a `# servelint: disable=CODE` comment "
                            "silences them")
        cfg = c.add_mutually_exclusive_group()
        cfg.add_argument("--config", metavar="PATH",
                         help="use this configuration file (.servelint.toml, or a "
                              "pyproject.toml's [tool.servelint]) for every file instead of "
                              "discovering one")
        cfg.add_argument("--isolated", action="store_true",
                         help="ignore every project configuration file")
        c.add_argument("--no-respect-gitignore", action="store_true",
                       help="lint files in folders even when .gitignore ignores them "
                            "(.servelintignore and the exclude setting still apply)")
        c.add_argument("-q", "--quiet", action="store_true", help="no summary line")
        c.add_argument("-j", "--jobs", type=positive_int, default=None, metavar="N",
                       help="check the files in N processes (default: one per CPU when there "
                            "are enough files; 1: this process alone); the output is the same")
        c.set_defaults(func=cmd_check)
    r = sub.add_parser("rule", help="print the documentation of a rule")
    if command in (None, "rule"):
        r.add_argument("code")
        r.add_argument("--sglang-version", default="latest")
        r.set_defaults(func=cmd_rule)
    rs = sub.add_parser("rules", help="list every rule")
    if command in (None, "rules"):
        rs.add_argument("--sglang-version", default="latest")
        rs.set_defaults(func=cmd_rules)
    l = sub.add_parser("lsp", help="run the language server on stdio")
    if command in (None, "lsp"):
        l.add_argument("--no-fast-start", action="store_true",
                       help="start the pygls server directly (no early first diagnostics)")
        # What language clients add to the command line (vscode-languageclient appends
        # --stdio for TransportKind.stdio; others pass --clientProcessId=N). stdio is the only
        # transport; the client's process id is accepted and not used.
        l.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
        l.add_argument("--clientProcessId", "--client-process-id", dest="client_process_id",
                       type=int, metavar="PID", help=argparse.SUPPRESS)
        l.add_argument("--log-level", choices=["error", "warning", "info", "debug"],
                       default="warning",
                       help="what the server writes to stderr (the editor's output panel)")
        l.set_defaults(func=cmd_lsp)
    return p


# What argparse makes of `check PATH...` with no option: every `check` option's default.
# tests/test_cold_start.py holds it to the parser.
CHECK_DEFAULTS = {
    "command": "check", "stdin_filename": None, "format": None, "output_file": None,
    "color": "auto", "fail_on": "error", "select": None, "ignore": None, "sglang_version": None,
    "target_version": None, "gpu": None, "fix": False, "diff": False, "show_fixes": False,
    "statistics": False, "add_noqa": None, "exit_zero": False, "rules": None,
    "no_project_rules": False, "no_suppressions": False, "config": None, "isolated": False,
    "no_respect_gitignore": False, "quiet": False, "jobs": None,
}


def plain_check(argv: list[str]):
    """The arguments of `servelint check PATH...` without any option (no word starting
    with `-`), as the parser reads them, without importing argparse and building the
    parser (a tenth of a cold check of one file); None for any other command line."""
    if len(argv) < 2 or argv[0] != "check" or any(a.startswith("-") for a in argv[1:]):
        return None
    from types import SimpleNamespace
    return SimpleNamespace(**CHECK_DEFAULTS, paths=argv[1:], func=cmd_check)


def resume_collector(args) -> None:
    """Start-up is over: what it made is set aside for the cycle collector (`gc.freeze`),
    which is then turned back on (see `main`)."""
    if getattr(args, "paused_collector", False):
        args.paused_collector = False
        gc.freeze()
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    # Start-up (importing the modules, reading the catalog and the rules, the first lint)
    # makes tens of thousands of objects that live until the end and hold few cycles; the
    # cycle collector walked them again and again, 4% of the instructions of a cold
    # `servelint check` of one file (issue 16). It is paused until the first file is
    # linted; then those objects are frozen (collections no longer walk them) and it runs
    # as usual for the files after it. When `main` returns it is on again if it was, and,
    # for a caller in the same process (argv given), the frozen objects are unfrozen; the
    # command line itself (argv None) ends here, and leaves them frozen so that the
    # interpreter's collection at exit does not walk them either.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _main(argv, paused)
    finally:
        if argv is None:
            gc.freeze()
        else:
            gc.unfreeze()
        if paused:
            gc.enable()


def _main(argv: list[str] | None, paused: bool) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # A bare --add-noqa takes no value (the placeholder reason): without this, argparse would
    # take the path after it as the reason.
    cut = argv.index("--") if "--" in argv else len(argv)
    argv = [("--add-noqa=" if a == "--add-noqa" and i < cut else a) for i, a in enumerate(argv)]
    command = argv[0] if argv and argv[0] in ("check", "rule", "rules", "lsp") else None
    args = plain_check(argv)
    if args is None:
        args = build_parser(command).parse_args(argv)
    args.paused_collector = paused
    try:
        return args.func(args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
