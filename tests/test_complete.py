"""Completion of launch options and values (servelint/complete.py) and its LSP form
(servelint/lsp/completion.py)."""

import glob
import os

import pytest
from lsprotocol import types as lsp

from servelint.catalog import Catalog, load_catalog
from servelint.complete import Candidate, complete
from servelint.engine import lint
from servelint.lsp.completion import completion_for, to_completion_list
from servelint.model import LineIndex, Span

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCH = "python -m sglang.launch_server"
CATALOG = load_catalog()


def at_end(text, path="run.sh", **kw):
    return complete(text, len(text), path, **kw)


def at_mark(text, path="run.sh", **kw):
    """Complete at the `|` in `text` (which is removed)."""
    offset = text.index("|")
    text = text[:offset] + text[offset + 1:]
    return text, offset, complete(text, offset, path, **kw)


def labels(cands):
    return [c.label for c in cands]


def by_label(cands):
    return {c.label: c for c in cands}


def replaced(text, c: Candidate):
    return text[c.replace.start:c.replace.end]


def apply(text, c: Candidate):
    return text[:c.replace.start] + c.insert_text + text[c.replace.end:]


# --- option names --------------------------------------------------------------------------


def test_options_right_after_the_entrypoint():
    text = LAUNCH + " "
    cands = at_end(text)
    names = by_label(cands)
    assert {"--model-path", "--tp-size", "--attention-backend", "--trust-remote-code"} <= set(names)
    assert all(c.kind == "option" and c.replace == Span(len(text), len(text)) for c in cands)
    tp = names["--tp-size"]
    assert tp.insert_text == "--tp-size"
    assert tp.detail == "INT"
    assert "The tensor parallelism size." in tp.documentation and "Default: `1`" in tp.documentation
    assert "`--tensor-parallel-size`" in tp.documentation
    ab = names["--attention-backend"]
    assert ab.detail.startswith("{triton,torch_native,")
    assert "Choices: `triton`, `torch_native`" in ab.documentation
    assert names["--trust-remote-code"].detail == "switch"
    # Hidden options are not offered; every other option is, once (aliases are not).
    assert "--forward-pass-metrics-worker-id" not in names
    assert "--tensor-parallel-size" not in names and "--model" not in names
    offered = sum(2 if o.kind == "bool_optional" else 1
                  for o in CATALOG.options if not o.hidden and not o.removed)
    assert len(cands) == len(names) == offered


def test_nothing_on_the_entrypoint_itself_or_before_it():
    text = LAUNCH + " --model-path m"
    for offset in (0, 3, len("python -m sglang"), len(LAUNCH)):
        assert complete(text, offset, "run.sh") is None


def test_partial_option_is_replaced_whole():
    text = LAUNCH + " --model-path m --tp"
    cands = at_end(text)
    tp = by_label(cands)["--tp-size"]
    assert replaced(text, tp) == "--tp"
    assert tp.replace == Span(len(text) - 4, len(text))
    assert apply(text, tp) == LAUNCH + " --model-path m --tp-size"


def test_cursor_inside_a_word_replaces_the_whole_word_and_keeps_its_value():
    text, offset, cands = at_mark(LAUNCH + " --model-path m --at|tention-backend=fa3 --port 1")
    c = by_label(cands)["--attention-backend"]
    assert replaced(text, c) == "--attention-backend"
    assert apply(text, c) == text


def test_alias_being_spelled_is_offered_too():
    text = LAUNCH + " --tensor-par"
    c = by_label(at_end(text))["--tensor-parallel-size"]
    assert c.detail.startswith("alias of --tp-size")
    assert replaced(text, c) == "--tensor-par"
    # Its documented name stays first in the list's order.
    assert c.sort_key > by_label(at_end(text))["--tp-size"].sort_key


def test_bare_dashes_and_single_dash():
    for tail in ("-", "--"):
        text = LAUNCH + " --model-path m " + tail
        cands = at_end(text)
        assert "--tp-size" in labels(cands)
        assert all(replaced(text, c) == tail for c in cands)


def test_options_already_written_are_left_out():
    text = LAUNCH + " --model m --tensor-parallel-size 2 --enable-tf32-matmul --lora-target-modules q_proj --"
    names = set(labels(at_end(text)))
    # Every spelling of a written option goes: aliases, the --no- form, list options
    # (written again, a list option replaces its earlier value).
    for gone in ("--model-path", "--tp-size", "--enable-tf32-matmul", "--no-enable-tf32-matmul",
                 "--lora-target-modules"):
        assert gone not in names, gone
    assert {"--port", "--dtype", "--dp-size"} <= names
    # The negative spelling written excludes the positive one as well.
    names = set(labels(at_end(LAUNCH + " --no-enable-tf32-matmul --")))
    assert "--enable-tf32-matmul" not in names and "--no-enable-tf32-matmul" not in names


def test_the_word_being_typed_does_not_count_as_written():
    text = LAUNCH + " --model-path m --tp-size"
    assert "--tp-size" in labels(at_end(text))


def _catalog_with_append_option() -> Catalog:
    from servelint.catalog import catalog_data
    data = catalog_data("0.5.23")
    data["options"].append({
        "names": ["--extra-header"], "dest": "extra_header", "kind": "value", "nargs": None,
        "action": "append", "type": "str", "choices": None, "default": None,
        "help": "An HTTP header to add; repeat for more.", "hidden": False, "metavar": "HEADER",
        "required": False, "deprecated": False, "removed": False, "message": None,
        "replacement": None})
    return Catalog(data)


def test_repeatable_options_stay_offered():
    catalog = _catalog_with_append_option()
    assert catalog.lookup("--extra-header").repeatable
    assert not CATALOG.lookup("--lora-paths").repeatable  # its action replaces the list
    text = LAUNCH + " --model-path m --extra-header a:1 --"
    names = by_label(at_end(text, catalog=catalog))
    assert "--extra-header" in names and names["--extra-header"].detail == "HEADER"
    assert "--model-path" not in names


def test_deprecated_options_are_marked_and_sorted_last():
    cands = sorted(at_end(LAUNCH + " "), key=lambda c: c.sort_key)
    flags = [c.deprecated for c in cands]
    first_deprecated = flags.index(True)
    assert not any(flags[:first_deprecated]) and all(flags[first_deprecated:])
    dp = by_label(cands)["--enable-dp-attention"]
    assert dp.deprecated
    assert dp.detail.startswith("deprecated, use --attn-dp-size <dp-size>")
    assert dp.documentation.startswith("**Deprecated**: use `--attn-dp-size <dp-size>`")
    assert not by_label(cands)["--tp-size"].deprecated


# --- values --------------------------------------------------------------------------------


def test_choices_after_a_space():
    text = LAUNCH + " --model-path m --attention-backend "
    cands = at_end(text)
    assert labels(sorted(cands, key=lambda c: c.sort_key)) == list(CATALOG.lookup("--attention-backend").choices)
    assert all(c.kind == "value" and c.replace == Span(len(text), len(text)) for c in cands)
    # A required value: no option names are offered with it.
    assert not any(c.label.startswith("-") for c in cands)


def test_choices_after_equals_and_a_partial_value():
    text = LAUNCH + " --model-path m --attention-backend="
    cands = at_end(text)
    assert "flashinfer" in labels(cands) and all(c.replace == Span(len(text), len(text)) for c in cands)
    text += "fl"
    fi = by_label(at_end(text))["flashinfer"]
    assert replaced(text, fi) == "fl"
    assert apply(text, fi).endswith("--attention-backend=flashinfer")
    text = LAUNCH + " --attention-backend fl"
    fi = by_label(at_end(text))["flashinfer"]
    assert replaced(text, fi) == "fl"


def test_choices_of_an_abbreviated_option_and_inside_quotes():
    text = LAUNCH + ' --attention-back="fl'
    fi = by_label(at_end(text))["flashinfer"]
    assert replaced(text, fi) == "fl"


def test_default_choice_comes_first_and_is_marked():
    cands = sorted(at_end(LAUNCH + " --dtype "), key=lambda c: c.sort_key)
    assert cands[0].label == "auto" and cands[0].detail == "--dtype (default)"
    assert all("(default)" not in c.detail for c in cands[1:])


def test_no_value_completion_without_choices():
    assert at_end(LAUNCH + " --tp-size ") is None
    assert at_end(LAUNCH + " --tp-size=") is None
    assert at_end(LAUNCH + " --model-path m --tp-size 2") is None  # a value being typed
    assert at_end(LAUNCH + " --trust-remote-code=") is None  # a switch takes no value


def test_list_option_choices_continue_then_options():
    cands = at_end(LAUNCH + " --model-path m --lora-target-modules q_proj ")
    names = labels(cands)
    assert "k_proj" in names and "q_proj" not in names  # each choice once
    assert "--port" in names  # nargs '*': another option may come instead


def test_options_after_a_complete_option_value():
    cands = at_end(LAUNCH + " --model-path m --attention-backend fa3 ")
    names = labels(cands)
    assert "--port" in names and "fa3" not in names and "--attention-backend" not in names


# --- entrypoints and layouts ---------------------------------------------------------------


def test_sglang_serve():
    names = labels(at_end("sglang serve "))
    assert "--model-path" in names and "--tp-size" in names
    # The first plain word of `sglang serve` is the model path.
    names = labels(at_end("sglang serve org/model --"))
    assert "--model-path" not in names and "--tp-size" in names


def test_continued_lines():
    head = LAUNCH + " --model-path m \\\n  --tp-size 2 \\\n"
    cands = at_end(head + "  ")
    assert "--port" in labels(cands) and "--tp-size" not in labels(cands)
    text = head + "  --po"
    port = by_label(at_end(text))["--port"]
    assert apply(text, port) == head + "  --port"
    # The user typing after the last word, on the same logical line.
    assert "--port" in labels(at_end(LAUNCH + " --model-path m \\\n    \\\n  "))
    # A blank line ends the command; a trailing backslash before the cursor is no place.
    assert at_end(head + "\n") is None
    assert at_end(head + "\n  ") is None
    assert at_end(LAUNCH + " --model-path m \\") is None


def test_cursor_outside_any_launch():
    text = "#!/bin/bash\necho hello\n" + LAUNCH + " --model-path m\n\necho done --\n"
    for needle in ("echo hello", "\n\necho", "done --"):
        offset = text.index(needle) + len(needle) - 1
        assert complete(text, offset, "run.sh") is None, needle
    assert complete(text, len(text), "run.sh") is None
    assert at_end(LAUNCH + " --model-path m # a comment ") is None
    assert at_end(LAUNCH + " --model-path m && echo ") is None
    assert at_end("echo --") is None
    assert complete("", 0, "run.sh") is None
    assert complete("no launch", 3, "notes.txt") is None


def test_between_options_in_the_middle_of_a_launch():
    text, offset, cands = at_mark(LAUNCH + " --model-path m | --port 1")
    names = labels(cands)
    assert "--tp-size" in names and "--port" not in names
    assert cands[0].replace == Span(offset, offset)
    # Right before the next word: the insertion keeps the words apart.
    text, offset, cands = at_mark(LAUNCH + " --model-path m |--port 1")
    assert apply(text, by_label(cands)["--tp-size"]) == LAUNCH + " --model-path m --tp-size --port 1"


def test_yaml_command_string():
    text = "services:\n  sglang:\n    image: lmsysorg/sglang\n    command: " + LAUNCH + " --model-path m --tp\n"
    offset = text.index("--tp\n") + 4
    tp = by_label(complete(text, offset, "docker-compose.yaml"))["--tp-size"]
    assert replaced(text, tp) == "--tp"
    text = "services:\n  sglang:\n    command: " + LAUNCH + " --model-path m --attention-backend \n"
    offset = text.index("backend \n") + len("backend ")
    assert "fa3" in labels(complete(text, offset, "docker-compose.yaml"))


K8S = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n"
       "    command: [python3, -m, sglang.launch_server]\n")


def test_yaml_list_items():
    text, offset, cands = at_mark(K8S + '    args: ["--model-path", "m", "--t|"]\n', "pod.yaml")
    tp = by_label(cands)["--tp-size"]
    assert replaced(text, tp) == "--t"
    assert "--model-path" not in labels(cands)
    text, offset, cands = at_mark(K8S + '    args: ["--model-path", "m", "|"]\n', "pod.yaml")
    assert "--tp-size" in labels(cands) and cands[0].replace == Span(offset, offset)
    text, offset, cands = at_mark(K8S + '    args: ["--attention-backend", "|"]\n', "pod.yaml")
    assert "fa3" in labels(cands)
    text, offset, cands = at_mark(K8S + "    args:\n    - --model-path\n    - m\n    - --|\n", "pod.yaml")
    assert "--tp-size" in labels(cands) and replaced(text, cands[0]) == "--"
    # Between list items (outside a string) nothing is completed.
    text, offset, cands = at_mark(K8S + '    args: ["--model-path", "m", |]\n', "pod.yaml")
    assert cands is None


def test_launch_json_and_python_and_dockerfile_and_markdown():
    text, _, cands = at_mark('{"configurations": [{"type": "debugpy", "module": "sglang.launch_server",'
                             ' "args": ["--model-path", "m", "--tp|"]}]}', ".vscode/launch.json")
    assert replaced(text, by_label(cands)["--tp-size"]) == "--tp"
    text, _, cands = at_mark('import subprocess\nsubprocess.Popen(["python", "-m", "sglang.launch_server",'
                             ' "--model-path", "m", "--tp|"])\n', "serve.py")
    assert replaced(text, by_label(cands)["--tp-size"]) == "--tp"
    # Engine keyword arguments are no command line.
    _, _, cands = at_mark('import sglang as sgl\nsgl.Engine(model_path="m", tp|)\n', "serve.py")
    assert cands is None
    text, _, cands = at_mark("FROM lmsysorg/sglang\nCMD " + LAUNCH + " --model-path m --tp|\n", "Dockerfile")
    assert replaced(text, by_label(cands)["--tp-size"]) == "--tp"
    text, _, cands = at_mark("# Serve\n\n```bash\n" + LAUNCH + " --model-path m --attention-backend |\n```\n",
                             "README.md")
    assert "fa3" in labels(cands)
    _, _, cands = at_mark("# Serve\n\nRun |it.\n\n```bash\n" + LAUNCH + " --model-path m\n```\n", "README.md")
    assert cands is None


def test_bash_c_string():
    text, _, cands = at_mark("bash -c \"" + LAUNCH + " --model-path m --tp|\"\n")
    assert replaced(text, by_label(cands)["--tp-size"]) == "--tp"


# --- SGLang config files -------------------------------------------------------------------


CONFIG = "model-path: org/model\ntp-size: 2\n"


def test_config_keys_at_the_start_of_a_top_level_line():
    text = CONFIG + "attention-b"
    cands = complete(text, len(text), "server.yaml")
    ab = by_label(cands)["attention-backend"]
    assert ab.insert_text == "attention-backend: "
    assert replaced(text, ab) == "attention-b"
    assert apply(text, ab) == CONFIG + "attention-backend: "
    names = set(labels(cands))
    assert "tp-size" not in names and "model-path" not in names  # already set
    assert not any(n.startswith("-") for n in names)
    # BooleanOptionalAction and custom list actions are refused in config files.
    assert "enable-tf32-matmul" not in names and "lora-paths" not in names
    assert "trust-remote-code" in names and by_label(cands)["trust-remote-code"].detail == "true | false"
    # An existing key being renamed keeps its colon.
    text = CONFIG + "port: 30000\n"
    offset = text.index("port") + 2
    port = by_label(complete(text, offset, "server.yaml"))["port"]
    assert port.insert_text == "port" and replaced(text, port) == "port"


def test_config_true_false_for_switches():
    text = CONFIG + "trust-remote-code: "
    cands = sorted(complete(text, len(text), "server.yaml"), key=lambda c: c.sort_key)
    assert labels(cands) == ["false", "true"]
    assert cands[0].detail.endswith("(default)")
    assert all(c.kind == "value" and c.replace == Span(len(text), len(text)) for c in cands)
    text = CONFIG + "trust-remote-code: tr"
    t = by_label(complete(text, len(text), "server.yaml"))["true"]
    assert replaced(text, t) == "tr"


def test_config_choices_quoted_for_yaml():
    text = CONFIG + "disaggregation-mode: "
    cands = by_label(complete(text, len(text), "server.yaml"))
    assert cands["null"].insert_text == '"null"'  # plain null would be YAML's null
    assert cands["prefill"].insert_text == "prefill"
    text = CONFIG + "attention-backend: fa"
    assert "fa3" in labels(complete(text, len(text), "server.yaml"))
    assert complete(CONFIG + "port: ", len(CONFIG) + 6, "server.yaml") is None


def test_config_nothing_in_indented_or_odd_places():
    text = CONFIG + "json-model-override-args:\n  rope: "
    assert complete(text, len(text), "server.yaml") is None
    text = CONFIG + "  "
    assert complete(text, len(text), "server.yaml") is None
    text = CONFIG + "# tp"
    assert complete(text, len(text), "server.yaml") is None


# --- robustness ----------------------------------------------------------------------------


GOLDEN_SHELL = sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "shell", "*.sh")))


def _check(cands, text, offset):
    if cands is None:
        return
    assert cands, "an empty list is said with None"
    for c in cands:
        assert 0 <= c.replace.start <= offset <= c.replace.end <= len(text)
        assert c.label and c.insert_text and c.kind in ("option", "value")


@pytest.mark.parametrize("path", GOLDEN_SHELL, ids=os.path.basename)
def test_every_offset_and_every_prefix_of_golden_scripts(path):
    text = open(path, encoding="utf-8").read()
    result = lint(text, path)
    found = 0
    for offset in range(len(text) + 1):
        cands = complete(text, offset, path, result=result)
        _check(cands, text, offset)
        found += cands is not None
        prefix = text[:offset]
        _check(complete(prefix, offset, path), prefix, offset)
    assert found > 0


def test_half_typed_commands_never_raise():
    for text in (LAUNCH + " --", LAUNCH + " --tp", LAUNCH + " --attention-backend=",
                 LAUNCH + " --attention-backend ", LAUNCH + " \\", LAUNCH + " \\\n", LAUNCH + " '--tp",
                 LAUNCH + ' "--attention-backend=', LAUNCH + " --tp=$TP --", LAUNCH + " $ARGS --",
                 LAUNCH + " --model-path m -- --", "sglang serve", "sglang serve --config ",
                 LAUNCH + " --config cfg.yaml --", LAUNCH + " -", LAUNCH + " --=", LAUNCH + " --x=y=z"):
        for offset in range(len(text) + 1):
            _check(complete(text, offset, "run.sh"), text, offset)


def test_a_stale_result_is_not_trusted():
    old = LAUNCH + " --model-path m\n"
    result = lint(old, "run.sh")
    new = LAUNCH + " --model-path m --tp\n"
    tp = by_label(complete(new, len(new) - 1, "run.sh", result=result))["--tp-size"]
    assert replaced(new, tp) == "--tp"


# --- LSP items -----------------------------------------------------------------------------


def test_lsp_items_use_utf16_positions_after_non_ascii_text():
    line = 'echo "héllo 𝄞" && ' + LAUNCH + " --model-path m --tp"
    text = "#!/bin/bash\n" + line + "\n"
    index = LineIndex(text)
    utf16_end = len(line.encode("utf-16-le")) // 2
    assert utf16_end == len(line) + 1  # the clef is two UTF-16 code units
    answer = completion_for(text, lsp.Position(1, utf16_end), "run.sh", None, None)
    item = next(i for i in answer.items if i.label == "--tp-size")
    assert item.text_edit.range == lsp.Range(lsp.Position(1, utf16_end - 4), lsp.Position(1, utf16_end))
    assert item.text_edit.new_text == "--tp-size" and item.insert_text is None  # the label is what goes in
    assert item.kind == lsp.CompletionItemKind.Property
    assert item.documentation.kind == lsp.MarkupKind.Markdown
    assert "tensor parallelism" in item.documentation.value
    assert item.detail == "INT" and item.tags is None
    assert index.offset(1, utf16_end - 4) == text.index("--tp\n")


def test_lsp_deprecated_tag_sort_text_and_values():
    text = LAUNCH + " "
    answer = completion_for(text, lsp.Position(0, len(text)), "run.sh", None, None)
    items = {i.label: i for i in answer.items}
    assert items["--enable-dp-attention"].tags == [lsp.CompletionItemTag.Deprecated]
    assert max(i.sort_text for i in answer.items if not i.tags) < min(
        i.sort_text for i in answer.items if i.tags)
    text = LAUNCH + " --dtype="
    answer = completion_for(text, lsp.Position(0, len(text)), "run.sh", None, None)
    auto = next(i for i in answer.items if i.label == "auto")
    assert auto.kind == lsp.CompletionItemKind.EnumMember and (auto.insert_text or auto.label) == "auto"
    assert auto.text_edit.range.start.character == len(text)
    assert completion_for(LAUNCH, lsp.Position(0, 3), "run.sh", None, None) is None


def test_lsp_list_wide_edit_range_when_the_client_supports_it():
    caps = lsp.ClientCapabilities(text_document=lsp.TextDocumentClientCapabilities(
        completion=lsp.CompletionClientCapabilities(
            completion_list=lsp.CompletionListCapabilities(item_defaults=["editRange", "data"]))))
    text = CONFIG + "attention-b"
    answer = completion_for(text, lsp.Position(2, 11), "server.yaml", None, None, capabilities=caps)
    assert answer.item_defaults.edit_range == lsp.Range(lsp.Position(2, 0), lsp.Position(2, 11))
    item = next(i for i in answer.items if i.label == "attention-backend")
    assert item.text_edit is None and item.text_edit_text == "attention-backend: "
    # Items are built once and reused for the next request.
    again = completion_for(text, lsp.Position(2, 11), "server.yaml", None, None, capabilities=caps)
    assert next(i for i in again.items if i.label == "attention-backend") is item
    # Without the capability each item carries its edit.
    plain = completion_for(text, lsp.Position(2, 11), "server.yaml", None, None)
    assert plain.item_defaults is None
    item = next(i for i in plain.items if i.label == "attention-backend")
    assert item.text_edit.new_text == "attention-backend: "


def test_lsp_empty_answer_is_none():
    assert to_completion_list([], LineIndex("")) is None
    assert to_completion_list(None, LineIndex("")) is None
