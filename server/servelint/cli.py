"""The command line: `servelint check`, `servelint rule`, `servelint lsp`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from servelint import __version__
from servelint.files import TooLarge, iter_files, read_text
from servelint.model import Severity


def flag_value(attr: str, comma_list: bool = False):
    """An argparse `type` that checks a flag's value with its settings field (schema.py),
    so the command line words a bad value as the editor and the project file do."""
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


def cmd_check(args) -> int:
    from servelint.config import settings_for
    from servelint.engine import fix_all_text, lint

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
    config_problems: dict[str, str] = {}

    def settings_of(path: str):
        settings, problems = settings_for(path, base, "editorFirst", config_path=args.config,
                                          isolated=args.isolated)
        for cfg in problems:
            if cfg.path not in config_problems:
                config_problems[cfg.path] = cfg.message()
                print(f"servelint: error: {cfg.message()}", file=sys.stderr)
        return settings

    threshold = Severity.parse(args.fail_on)
    errors: list[str] = []
    failed = False
    counts = {s: 0 for s in Severity}
    explicit = set(args.paths)
    nfiles = 0
    reported_packs: set[str] = set()
    # With `--fix -` the fixed text goes to stdout; what is left to report goes to stderr.
    report = sys.stderr if stdin and args.fix else sys.stdout

    def emit(path, d: dict):
        """One diagnostic (servelint/serialize.py's dict, the one the editor gets)."""
        nonlocal failed
        severity = Severity(d["severity"])
        counts[severity] += 1
        if severity <= threshold:
            failed = True
        if args.format == "json":
            print(json.dumps(check_record(path, d), ensure_ascii=False), file=report)
        else:
            rng = d["range"]
            print(f"{path}:{rng['start']['line'] + 1}:{rng['start']['character'] + 1}: "
                  f"{severity.label} {d['code']} {d['message']}", file=report)

    from servelint.rules import is_pack_path
    from servelint.serialize import check_record, diagnostic, pack_problem_diagnostic, release_of

    def check_text(shown: str, path: str | None, text: str, settings,
                   fix: bool) -> tuple[str, bool]:
        """Lint one text (a file's, or standard input's: `path` is then the
        --stdin-filename or None) and report it as `shown`. Returns the text after --fix
        and whether servelint read its format."""
        nonlocal nfiles
        result = lint(text, path=path, settings=settings)
        if result.format is None:
            return text, False
        nfiles += 1
        if result.rules is not None:
            for prob in result.rules.problems:
                key = os.path.abspath(prob.path)
                if key in reported_packs:
                    continue
                reported_packs.add(key)
                for p2 in result.rules.problems:
                    if os.path.abspath(p2.path) == key:
                        emit(p2.path, pack_problem_diagnostic(p2))
        for notice in result.notices:
            if result.rules is not None and any(notice == str(p) for p in result.rules.problems):
                continue
            print(f"{shown}: note: {notice}", file=sys.stderr)
        if fix and result.findings:
            new, count = fix_all_text(text, path, None, settings)
            if new != text:
                if path is not None and not stdin:
                    write_atomically(path, new)
                print(f"{shown}: applied {count} fix edit(s)", file=sys.stderr)
                text = new
                result = lint(new, path=path, settings=settings)
        if result.findings:
            uri = Path(os.path.abspath(path or STDIN)).as_uri()
            for f in result.findings:
                emit(shown, diagnostic(f, result.index, uri, None, result.rules,
                                       release_of(result, f)))
        if result.target is not None and args.format == "text":
            from servelint.upgrade import summary
            for line, said in summary(result, result.upgrades, result.target):
                print(f"{shown}:{line}: upgrade: {said}", file=report)
        return text, True

    def unknown(shown: str, why: str) -> None:
        errors.append(f"{shown}: not linted: {why}")

    if stdin:
        name = args.stdin_filename
        shown = name if name else STDIN
        settings = settings_of(name or STDIN)
        if name is not None and is_pack_path(name, settings.rule_packs):
            reported_packs.add(os.path.abspath(name))
        data, whole = read_stdin(settings.max_file_bytes)
        out: bytes = data
        if not whole:
            print(f"{shown}: note: not linted: standard input has more than the "
                  f"{settings.max_file_bytes:,} bytes servelint reads", file=sys.stderr)
        elif b"\0" in data:
            unknown(shown, "standard input is binary (it holds NUL bytes), not a text "
                           "servelint reads")
        else:
            try:
                text, valid = data.decode("utf-8"), True
            except UnicodeDecodeError:
                text, valid = data.decode("utf-8", errors="replace"), False
            if not valid and args.fix:
                errors.append(f"{shown}: not fixed: standard input is not valid UTF-8, so it is "
                              "written back unchanged")
            fixed, known = check_text(shown, name, text, settings, fix=valid and args.fix)
            if not known and not text.strip():
                nfiles += 1  # nothing to read is nothing to report, whatever its format
            elif not known:
                unknown(shown, "servelint does not recognise the format of standard input (by "
                               "the --stdin-filename's name or by its content): name it, e.g. "
                               "--stdin-filename run.sh")
            elif valid:
                out = fixed.encode("utf-8")
        if args.fix:
            sys.stdout.flush()
            sys.stdout.buffer.write(out)
            if not whole:
                copy_rest(sys.stdin.buffer, sys.stdout.buffer)
            sys.stdout.buffer.flush()
    for path in iter_files([] if stdin else args.paths, errors):
        settings = settings_of(path)
        if is_pack_path(path, settings.rule_packs):
            # A rule pack is reported once: here, or when a launch first loaded it.
            if os.path.abspath(path) in reported_packs:
                continue
            reported_packs.add(os.path.abspath(path))
        named = path in explicit
        try:
            content = read_text(path, named, settings.max_file_bytes)
        except TooLarge as exc:
            print(f"{path}: note: not linted: the file has {exc.args[0]:,} bytes, more than the "
                  f"{settings.max_file_bytes:,} servelint reads", file=sys.stderr)
            continue
        except OSError as exc:
            errors.append(str(exc))
            continue
        if content is None:
            if named:
                unknown(path, "the file is binary (it holds NUL bytes)")
            continue
        _, known = check_text(path, path, content, settings, args.fix)
        if named and not known:
            # Named on the command line: say so (a folder's other files are skipped quietly).
            unknown(path, "servelint does not recognise this file's format (by its name or its "
                          "content); formats: docs/formats/README.md")
    for e in errors:
        print(f"servelint: error: {e}", file=sys.stderr)
    sys.stdout.flush()
    if args.format == "text" and not args.quiet:
        total = sum(counts.values())
        parts = ", ".join(f"{n} {s.label}" for s, n in counts.items() if n)
        print(f"{total} finding(s) in {nfiles} file(s){': ' + parts if parts else ''}",
              file=sys.stderr)
    if errors or config_problems:
        return 2
    return 1 if failed else 0


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
    import logging
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.no_fast_start:
        from servelint.lsp.server import run_stdio
        run_stdio()
    else:
        from servelint.lsp.bootstrap import run
        run()
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="servelint", description="Lint SGLang launch commands.")
    p.add_argument("--version", action="version", version=f"servelint {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="lint files and folders")
    c.add_argument("paths", nargs="+", metavar="PATH",
                   help="files and folders; `-` reads standard input")
    c.add_argument("--stdin-filename", metavar="NAME",
                   help="the name of the text on standard input: chooses its format as a file's "
                        "name does, is the path shown in the output, and its folder is where the "
                        "project configuration is looked for")
    c.add_argument("--format", choices=["text", "json"], default="text")
    c.add_argument("--fail-on", choices=["error", "warning", "information", "hint"],
                   default="error", help="lowest severity that makes the exit code 1")
    c.add_argument("--select", type=flag_value("select", comma_list=True),
                   help="only these codes or prefixes (comma separated)")
    c.add_argument("--ignore", type=flag_value("ignore", comma_list=True),
                   help="skip these codes or prefixes (comma separated)")
    c.add_argument("--sglang-version", type=flag_value("sglang_version"), default=None)
    c.add_argument("--target-version", type=flag_value("target_version"), default=None,
                   metavar="RELEASE",
                   help="also report what breaks when each launch moves from the SGLang release "
                        "it runs on to RELEASE (with --fix: apply the safe fixes)")
    c.add_argument("--gpu", type=flag_value("gpu"), default=None, metavar="GPU",
                   help="the GPU generation the launches run on (rules that depend on it stay "
                        "silent without it)")
    c.add_argument("--fix", action="store_true",
                   help="apply every safe fix in place (with `-`: print the fixed text to stdout "
                        "and what is left to stderr)")
    c.add_argument("--rules", action="append", metavar="PACK",
                   help="an extra rule pack file or folder (repeatable)")
    c.add_argument("--no-project-rules", action="store_true",
                   help="do not read .servelint/rules/ packs above the linted files")
    c.add_argument("--no-suppressions", action="store_true",
                   help="report findings even where a `# servelint: disable=CODE` comment "
                        "silences them")
    cfg = c.add_mutually_exclusive_group()
    cfg.add_argument("--config", metavar="PATH",
                     help="use this configuration file (.servelint.toml, or a pyproject.toml's "
                          "[tool.servelint]) for every file instead of discovering one")
    cfg.add_argument("--isolated", action="store_true",
                     help="ignore every project configuration file")
    c.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    c.set_defaults(func=cmd_check)
    r = sub.add_parser("rule", help="print the documentation of a rule")
    r.add_argument("code")
    r.add_argument("--sglang-version", default="latest")
    r.set_defaults(func=cmd_rule)
    rs = sub.add_parser("rules", help="list every rule")
    rs.add_argument("--sglang-version", default="latest")
    rs.set_defaults(func=cmd_rules)
    l = sub.add_parser("lsp", help="run the language server on stdio")
    l.add_argument("--no-fast-start", action="store_true",
                   help="start the pygls server directly (no early first diagnostics)")
    # What language clients add to the command line (vscode-languageclient appends
    # --stdio for TransportKind.stdio; others pass --clientProcessId=N). stdio is the only
    # transport; the client's process id is accepted and not used.
    l.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    l.add_argument("--clientProcessId", "--client-process-id", dest="client_process_id",
                   type=int, metavar="PID", help=argparse.SUPPRESS)
    l.add_argument("--log-level", choices=["error", "warning", "info", "debug"], default="warning",
                   help="what the server writes to stderr (the editor's output panel)")
    l.set_defaults(func=cmd_lsp)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
