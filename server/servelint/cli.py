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


def cmd_check(args) -> int:
    from servelint.config import settings_for
    from servelint.engine import fix_all_text, lint

    base = cli_settings(args)
    if args.config is not None and not os.path.isfile(args.config):
        print(f"servelint: error: --config {args.config}: no such file", file=sys.stderr)
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

    def emit(path, d: dict):
        """One diagnostic (servelint/serialize.py's dict, the one the editor gets)."""
        nonlocal failed
        severity = Severity(d["severity"])
        counts[severity] += 1
        if severity <= threshold:
            failed = True
        if args.format == "json":
            print(json.dumps(check_record(path, d), ensure_ascii=False))
        else:
            rng = d["range"]
            print(f"{path}:{rng['start']['line'] + 1}:{rng['start']['character'] + 1}: "
                  f"{severity.label} {d['code']} {d['message']}")

    from servelint.rules import is_pack_path
    from servelint.serialize import check_record, diagnostic, pack_problem_diagnostic, release_of
    for path in iter_files(args.paths, errors):
        settings = settings_of(path)
        if is_pack_path(path, settings.rule_packs):
            # A rule pack is reported once: here, or when a launch first loaded it.
            if os.path.abspath(path) in reported_packs:
                continue
            reported_packs.add(os.path.abspath(path))
        try:
            text = read_text(path, path in explicit, settings.max_file_bytes)
        except TooLarge as exc:
            print(f"{path}: note: not linted: the file has {exc.args[0]:,} bytes, more than the "
                  f"{settings.max_file_bytes:,} servelint reads", file=sys.stderr)
            continue
        except OSError as exc:
            errors.append(str(exc))
            continue
        if text is None:
            continue
        nfiles += 1
        result = lint(text, path=path, settings=settings,
                      fmt=None if path not in explicit else None)
        if path in explicit and result.format is None:
            continue
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
            print(f"{path}: note: {notice}", file=sys.stderr)
        if args.fix and result.findings:
            new, count = fix_all_text(text, path, None, settings)
            if new != text:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(new)
                print(f"{path}: applied {count} fix edit(s)", file=sys.stderr)
                result = lint(new, path=path, settings=settings)
        if result.findings:
            uri = Path(os.path.abspath(path)).as_uri()
            for f in result.findings:
                emit(path, diagnostic(f, result.index, uri, None, result.rules,
                                      release_of(result, f)))
        if result.target is not None and args.format == "text":
            from servelint.upgrade import summary
            for line, said in summary(result, result.upgrades, result.target):
                print(f"{path}:{line}: upgrade: {said}")
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
    c.add_argument("paths", nargs="+", metavar="PATH")
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
    c.add_argument("--fix", action="store_true", help="apply every safe fix in place")
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
