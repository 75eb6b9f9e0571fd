"""Generate servelint's flag catalog from SGLang's own launch parser.

Run with the Python of the dedicated SGLang venv (see tools/make-sglang-env.sh):

    .venv-sglang/bin/python tools/gen_catalog.py --out build/catalogs/sglang-0.5.23.json
    .venv-sglang/bin/python tools/pack_catalogs.py --unpack /tmp/packed
    .venv-sglang/bin/python tools/gen_catalog.py --check /tmp/packed/sglang-0.5.23.json

(servelint ships every release packed in one file: tools/pack_catalogs.py, docs/catalog.md.)

The parser is built exactly as ``sglang.srt.server_args.prepare_server_args``
builds it::

    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)

and every action in ``parser._actions`` except the help action becomes one
option object, in registration order.  Nothing is edited by hand: every field
is read off the argparse action (or, for the ``deprecated``/``replacement``
fields of options that SGLang retires only in their help text, off that text).

Some choices depend on the environment (``SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE``
adds a ``token_oracle`` sampling backend), so every ``SGLANG_*``/``SGL_*``
variable is removed from the environment before SGLang is imported: the
catalog describes a default environment.

The output is deterministic: options in registration order, a fixed key
order inside each option, choices that argparse holds as a set are sorted,
``indent=1``, UTF-8, trailing newline.  The format is described by
schemas/catalog.schema.json and docs/catalog.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from typing import Any

ENGINE = "sglang"
ATTRIBUTION = (
    "Option names, defaults, choices and help texts are taken from SGLang "
    "(https://github.com/sgl-project/sglang), Copyright SGLang Team, licensed "
    "under the Apache License 2.0."
)

# Help texts that retire a flag without a Deprecated* action, e.g.
# "(Deprecated: use --flashinfer-allreduce-fusion-backend=auto) Enable ...",
# "Deprecated. Use --image-processor-backend=pil instead."
HELP_DEPRECATED = re.compile(r"^\(?\s*Deprecated\b")
HELP_REPLACEMENT = re.compile(r"\b[Uu]se\s+(--[A-Za-z0-9][^\s),;]*)")


def _clean_environment() -> None:
    """Drop SGLang's environment switches so dynamic choices take defaults."""
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "SGL_")):
            del os.environ[name]


def build_parser() -> argparse.ArgumentParser:
    """Build the launch parser the way prepare_server_args does."""
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return parser


def _to_json(value: Any) -> tuple[Any, bool]:
    """Return (value as plain JSON, True), or (None, False) if not representable."""
    if value is None or isinstance(value, (bool, str)):
        return value, True
    if isinstance(value, int):
        return int(value), True
    if isinstance(value, float):
        return (value, True) if math.isfinite(value) else (None, False)
    if isinstance(value, (list, tuple)):
        items = [_to_json(v) for v in value]
        if all(ok for _, ok in items):
            return [v for v, _ in items], True
        return None, False
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        items = {k: _to_json(v) for k, v in value.items()}
        if all(ok for _, ok in items.values()):
            return {k: v for k, (v, _) in items.items()}, True
    return None, False


def _json_or_str(value: Any) -> Any:
    converted, ok = _to_json(value)
    return converted if ok else str(value)


def _action_name(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    """The name argparse registers the action class under, else its class name."""
    cls = type(action)
    for name, registered in parser._registries["action"].items():
        if isinstance(name, str) and registered is cls:
            return name
    return cls.__name__


def _type_name(type_func: Any) -> str | None:
    if type_func is None:
        return None
    if type_func is json.loads:
        return "json"
    if type_func in (int, float, str):
        return type_func.__name__
    return getattr(type_func, "__qualname__", None) or type(type_func).__qualname__


def _kind(action: argparse.Action) -> str:
    nargs = action.nargs
    if isinstance(action, argparse.BooleanOptionalAction):
        return "bool_optional"
    if nargs == 0:
        return "flag"
    if nargs is None or nargs == 1:
        return "value"
    if nargs == argparse.OPTIONAL:
        return "optional"
    if nargs in (argparse.ZERO_OR_MORE, argparse.ONE_OR_MORE) or (
        isinstance(nargs, int) and nargs > 1
    ):
        return "list"
    raise SystemExit(f"unsupported nargs {nargs!r} on {action.option_strings}")


def _choices(action: argparse.Action) -> list | None:
    choices = action.choices
    if choices is None:
        return None
    values = [_json_or_str(c) for c in choices]
    if isinstance(choices, (set, frozenset)):
        values.sort(key=lambda v: (str(type(v)), str(v)))
    return values


def _groups(parser: argparse.ArgumentParser) -> dict[int, str]:
    """Map id(action) -> title of a user-defined argument group."""
    builtin = {id(parser._positionals), id(parser._optionals)}
    out: dict[int, str] = {}
    for group in parser._action_groups:
        if id(group) in builtin:
            continue
        for action in group._group_actions:
            out[id(action)] = group.title
    return out


# SGLang's retiring action classes, matched by name: they live in
# sglang/srt/arg_groups/argparse_actions.py from 0.5.14 and in
# sglang/srt/server_args.py (DeprecatedAction only) before.
DEPRECATION_SHAPES = (
    "DeprecatedAction",
    "DeprecatedStoreTrueAction",
    "DeprecatedStoreConstAction",
    "DeprecatedAliasStoreAction",
)


def _deprecation_shape(action: argparse.Action) -> str | None:
    """The name of the SGLang Deprecated* class the action is an instance of."""
    for cls in type(action).__mro__:
        if cls.__name__ in DEPRECATION_SHAPES and cls.__module__.startswith("sglang."):
            return cls.__name__
    return None


def describe(action: argparse.Action, parser: argparse.ArgumentParser,
             groups: dict[int, str]) -> dict[str, Any]:
    hidden = action.help == argparse.SUPPRESS
    help_text = None
    if action.help is not None and not hidden:
        help_text = parser._get_formatter()._expand_help(action)

    default, default_ok = _to_json(action.default)
    if not default_ok:
        default = repr(action.default)

    deprecated = removed = False
    message = replacement = const_value = None
    shape = _deprecation_shape(action)
    if shape == "DeprecatedAction":
        deprecated = True
        if hasattr(action, "error_message"):
            message = action.error_message
        else:
            # Before 0.5.14 (sglang/srt/server_args.py) DeprecatedAction had no
            # error_message: using the flag raised ValueError(help).
            message = help_text
        removed = message is not None
    elif shape is not None:
        deprecated = True
        replacement = action.new_flag
        if shape == "DeprecatedStoreConstAction":
            const_value = _json_or_str(action.const_value)
    elif help_text is not None and HELP_DEPRECATED.match(help_text):
        deprecated = True
        match = HELP_REPLACEMENT.search(help_text)
        if match:
            replacement = match.group(1).rstrip(".")

    metavar = action.metavar
    if isinstance(metavar, tuple):
        metavar = list(metavar)

    return {
        "names": list(action.option_strings),
        "dest": action.dest,
        "kind": _kind(action),
        "nargs": action.nargs,
        "action": _action_name(action, parser),
        "type": _type_name(action.type),
        "choices": _choices(action),
        "default": default,
        "defaultRepr": not default_ok,
        "const": _json_or_str(action.const),
        "help": help_text,
        "hidden": hidden,
        "metavar": metavar,
        "required": bool(action.required),
        "deprecated": deprecated,
        "removed": removed,
        "message": message,
        "replacement": replacement,
        "constValue": const_value,
        "group": groups.get(id(action)),
    }


def build_catalog() -> dict[str, Any]:
    _clean_environment()
    import sglang

    version = sglang.__version__
    parser = build_parser()
    groups = _groups(parser)
    options = [
        describe(action, parser, groups)
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
    ]
    return {
        "generated": (
            f"GENERATED by tools/gen_catalog.py from SGLang {version} "
            "(sglang.srt.server_args.ServerArgs.add_cli_args). Do not edit by hand."
        ),
        "attribution": ATTRIBUTION,
        "engine": ENGINE,
        "version": version,
        "python": "%d.%d" % sys.version_info[:2],
        "options": options,
    }


def render(catalog: dict[str, Any]) -> str:
    return json.dumps(catalog, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help="write the catalog here ('-' for stdout)")
    where.add_argument("--check", metavar="FILE",
                       help="exit 1 if FILE differs from a fresh generation")
    args = ap.parse_args(argv)

    text = render(build_catalog())
    if args.check:
        with open(args.check, encoding="utf-8") as fh:
            current = fh.read()
        if current != text:
            print(f"{args.check} is stale; regenerate with --out", file=sys.stderr)
            return 1
        print(f"{args.check} is up to date")
        return 0
    if args.out == "-":
        sys.stdout.write(text)
    else:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        count = len(json.loads(text)["options"])
        print(f"wrote {args.out}: {count} options", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
