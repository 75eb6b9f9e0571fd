"""The one settings table (servelint/schema.py) against everything that describes the
settings elsewhere: the editor's package.json contribution, docs/configuration.md, and
the three readers (editor JSON, TOML file, command line) that must word a bad value alike."""

import json
import re
from pathlib import Path

import pytest

from servelint.cli import build_parser, cli_settings
from servelint.config import parse_table
from servelint.schema import FIELDS, GPUS, Invalid
from servelint.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = json.loads((ROOT / "package.json").read_text())["contributes"]["configuration"]["properties"]
# Settings only the VS Code client reads (how to start the server), never sent to it.
CLIENT_ONLY = {"interpreter", "importStrategy", "path", "logLevel", "trace.server"}


def editor_default(field):
    """The default as the editor writes it: "" for an unknown GPU or no upgrade target, and
    a negated switch (ignoreSuppressions for respect_suppressions) the other way round."""
    from servelint.schema import negated
    if field.parse is negated:
        return not field.default
    unset = field.attr in ("gpu", "target_version") and field.default is None
    return "" if unset else field.default


@pytest.mark.parametrize("field", [f for f in FIELDS if f.editor], ids=lambda f: f.editor)
def test_package_json_declares_each_editor_setting_with_the_same_default(field):
    prop = MANIFEST.get(f"servelint.{field.editor}")
    assert prop is not None, f"package.json has no servelint.{field.editor}"
    assert prop["default"] == editor_default(field)
    if "enum" in prop:  # every choice the editor offers is one the server accepts
        for choice in prop["enum"]:
            field.parse(choice)


def test_package_json_has_no_server_setting_the_table_lacks():
    editor_keys = {f.editor for f in FIELDS if f.editor}
    declared = {k.removeprefix("servelint.") for k in MANIFEST}
    assert declared - editor_keys - CLIENT_ONLY == set()


def test_the_gpu_choices_are_the_table_s():
    assert [g for g in MANIFEST["servelint.gpu"]["enum"] if g] == list(GPUS)


def doc_rows():
    text = (ROOT / "docs" / "configuration.md").read_text()
    table = text.split("## Every setting", 1)[1].split("\n\n", 2)[1]
    rows = []
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append(cells)
    return rows


@pytest.mark.parametrize("field", [f for f in FIELDS if f.editor or f.toml], ids=lambda f: f.attr)
def test_docs_configuration_table_has_each_field(field):
    def cell(name):
        return f"`{name}`" if name else "—"
    hits = [r for r in doc_rows()
            if r[0] == cell(field.editor) and r[1].split(" (")[0] == cell(field.toml)]
    assert hits, f"docs/configuration.md has no row `{field.editor}` | `{field.toml}`"
    if field.cli:
        assert field.cli in hits[0][2], hits[0]


@pytest.mark.parametrize("value, key", [("sm999", "gpu"), ("0", "max-file-bytes"), ("x", "select")])
def test_the_three_readers_word_a_bad_value_alike(value, key):
    field = next(f for f in FIELDS if f.toml == key)
    raw = {"max-file-bytes": 0, "select": "SL0"}.get(key, value)
    with pytest.raises(Invalid) as exc:
        field.parse(raw)
    problem = str(exc.value)
    errors: list[str] = []
    Settings.from_dict({field.editor: raw}, errors)
    assert errors == [f"servelint.{field.editor} {problem}"]
    cfg = parse_table({key: raw}, "/p/.servelint.toml")
    assert cfg.problems == [f"`{key}` {problem}"]


def test_the_command_line_checks_with_the_table(capsys):
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["check", "--gpu", "h100", "x.sh"])
    assert "is 'h100', not one of sm80" in capsys.readouterr().err
    args = parser.parse_args(["check", "--select", "sl0, SL101", "--gpu", "sm90",
                              "--no-suppressions", "x.sh"])
    s = cli_settings(args)
    assert (s.select, s.gpu, s.respect_suppressions) == (["SL0", "SL101"], "sm90", False)
    assert s.explicit == {"select", "gpu", "respect_suppressions"}


def test_defaults_are_the_settings_defaults():
    plain = Settings()
    for f in FIELDS:
        if hasattr(plain, f.attr):
            assert getattr(plain, f.attr) == f.default, f.attr
