"""How SGLang's argparse `type=` callables judge a value, keyed by the callable's name
as the catalog records it (see docs/catalog.md for each function's rules).

Each checker returns None when SGLang would accept the text, or the message argparse
prints after `argument --x: `. Types not listed here are not checked.
"""

from __future__ import annotations

import json
import re


def _int(text: str) -> str | None:
    try:
        int(text)
    except ValueError:
        return f"invalid int value: {text!r}"
    return None


def _float(text: str) -> str | None:
    try:
        float(text)
    except ValueError:
        return f"invalid float value: {text!r}"
    return None


def _json(text: str) -> str | None:
    try:
        json.loads(text)
    except ValueError:
        return f"invalid loads value: {text!r}"
    return None


def _reject_constant(name: str):
    raise ValueError(name)


def _strict_json(text: str) -> bool:
    """RFC 8259 JSON, as orjson reads it: no NaN/Infinity."""
    try:
        json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return False
    return True


def _json_list(text: str) -> str | None:
    if _strict_json(text):
        return None
    return f"Invalid JSON list: {text}. Please provide a valid JSON list."


_HUMAN = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")


def human_int(text: str) -> int:
    value = text.strip()
    m = _HUMAN.fullmatch(value)
    if m:
        from decimal import Decimal  # here: a cold check seldom meets a size with a suffix
        number, suffix = m.groups()
        if suffix in ("Ki", "Mi", "Gi", "Ti"):
            if "." in number:
                raise ValueError(
                    f"Decimals are not allowed with IEC suffixes like '{suffix}'. "
                    f"Use an integer IEC value such as '{int(Decimal(number))}{suffix}', "
                    f"or an SI value such as '{number}{suffix[0]}'.")
            return int(number) * {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}[suffix]
        return int(Decimal(number) * {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}[suffix])
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            f"Invalid integer value: '{value}'. Use a plain integer, SI suffixes (1k, 1M), or "
            "IEC suffixes (1Ki, 1Mi). Suffixes are case-sensitive.") from None


def _human(text: str) -> str | None:
    try:
        human_int(text)
    except ValueError as exc:
        return str(exc)
    return None


def _cuda_graph_backend(text: str) -> str | None:
    if text == "tc_piecewise":
        return "tc_piecewise was removed; select breakable, full, or disabled"
    return None


_PHASE_KEYS = {
    "decode": ("backend", "max_bs", "bs"),
    "prefill": ("backend", "max_bs", "bs", "max_context_size", "full_prefill_max_req",
                "full_prefill_prefix_chunk_tokens", "max_seq_len"),
}


def _cuda_graph_config(text: str) -> str | None:
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        return f"--cuda-graph-config must be JSON: {exc}"
    if not isinstance(parsed, dict):
        return f"--cuda-graph-config must be a JSON object, got {_pyname(parsed)}"
    for phase, settings in parsed.items():
        if phase not in _PHASE_KEYS:
            return (f"--cuda-graph-config: unknown phase '{phase}', expected one of "
                    f"{tuple(_PHASE_KEYS)}")
        if not isinstance(settings, dict):
            return f"--cuda-graph-config['{phase}'] must be a JSON object, got {_pyname(settings)}"
        if settings.get("backend") == "tc_piecewise":
            return _cuda_graph_backend("tc_piecewise")
        for key in settings:
            if key not in _PHASE_KEYS[phase]:
                return (f"--cuda-graph-config['{phase}']: unknown key '{key}', expected one of "
                        f"{_PHASE_KEYS[phase]}")
    return None


def _pyname(value) -> str:
    return {dict: "dict", list: "list", str: "str", int: "int", float: "float", bool: "bool",
            type(None): "NoneType"}.get(type(value), type(value).__name__)


CHECKS = {
    "int": _int,
    "float": _float,
    "json": _json,
    "json_list_type": _json_list,
    "human_readable_int": _human,
    "parse_cuda_graph_backend_arg": _cuda_graph_backend,
    "parse_cuda_graph_config_arg": _cuda_graph_config,
}


def convert(type_name: str | None, text: str):
    """The value argparse would compare with the choices."""
    if type_name == "int":
        return int(text)
    if type_name == "float":
        return float(text)
    if type_name == "human_readable_int":
        return human_int(text)
    return text


def number(type_name: str | None, text: str):
    """The numeric value of a typed option, or None when it is not a number."""
    try:
        if type_name in ("int", "human_readable_int"):
            return convert(type_name, text)
        if type_name == "float":
            return float(text)
    except ValueError:
        return None
    return None
