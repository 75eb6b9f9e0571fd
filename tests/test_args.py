"""The argument reader against argparse's rules (Python 3.11, as SGLang 0.5.23 runs)."""

from servelint.args import Reader
from servelint.catalog import Catalog, load_catalog
from servelint.engine import lint
from servelint.extract.shell import extract_shell
from servelint.model import LineIndex


def read(args: str, entry: str = "python3 -m sglang.launch_server", catalog=None):
    text = f"{entry} {args}\n"
    (launch,) = extract_shell(text, LineIndex(text)).launches
    return Reader(catalog or load_catalog()).read(launch)


def kinds(parsed):
    return [p.kind for p in parsed.problems]


def test_exact_alias_and_equals():
    p = read("--model m --tensor-parallel-size 2 --port=30000")
    assert [(u.option.dest, [v.text for v in u.values]) for u in p.uses] == [
        ("model_path", ["m"]), ("tp_size", ["2"]), ("port", ["30000"])]
    assert not p.problems
    assert p.uses[2].explicit


def test_unique_prefix_is_an_abbreviation():
    p = read("--model-path m --tp 2 --speculative-algo=EAGLE")
    assert [u.matched for u in p.uses] == ["--model-path", "--tp-size", "--speculative-algorithm"]
    assert [u.abbreviated for u in p.uses] == [False, True, True]
    assert not p.problems


def test_ambiguous_prefix_lists_candidates():
    p = read("--model-path m --cuda-graph-max-bs 8")
    (prob,) = p.problems
    assert prob.kind == "ambiguous"
    assert prob.candidates == ["--cuda-graph-max-bs-decode", "--cuda-graph-max-bs-prefill"]


def test_ambiguous_with_equals_keeps_the_prefix():
    p = read("--model-path m --cuda-graph-max-bs=8")
    (prob,) = p.problems
    assert prob.kind == "ambiguous" and prob.written == "--cuda-graph-max-bs"


def test_unknown_takes_its_words_with_it():
    p = read("--model-path m --model-mode flashinfer --port 1")
    (prob,) = p.problems
    assert (prob.kind, prob.written, prob.index, prob.last_index) == ("unknown", "--model-mode", 2, 3)
    assert [u.option.dest for u in p.uses] == ["model_path", "port"]


def test_negative_numbers_and_words_with_spaces_are_values():
    p = read("--model-path m --random-seed -1 --chat-template '-x y'")
    assert not p.problems
    assert [v.text for v in p.uses[1].values] == ["-1"]
    assert [v.text for v in p.uses[2].values] == ["-x y"]


def test_option_where_a_value_belongs():
    p = read("--model-path --tp-size 2")
    assert kinds(p) == ["missing_value"]


def test_nargs_lists_take_every_following_value():
    p = read("--model-path m --cuda-graph-bs-decode 1 2 4 8 --port 1")
    assert [v.text for v in p.uses[1].values] == ["1", "2", "4", "8"]
    p = read("--model-path m --lora-target-modules --port 1")  # nargs='*': zero is fine
    assert not p.problems
    p = read("--model-path m --cuda-graph-bs-decode --port 1")  # nargs='+': needs one
    assert kinds(p) == ["missing_value"]


def test_optional_value():
    p = read("--model-path m --model-checksum --port 1")
    assert not p.problems and p.uses[1].values == []
    p = read("--model-path m --model-checksum sums.json")
    assert [v.text for v in p.uses[1].values] == ["sums.json"]


def test_switches():
    p = read("--model-path m --trust-remote-code --no-enable-tf32-matmul")
    assert not p.problems
    p = read("--model-path m --trust-remote-code=1")
    assert kinds(p) == ["explicit_on_flag"]
    p = read("--model-path m --trust-remote-code yes")
    assert kinds(p) == ["stray"]


def test_unknown_values_stay_silent():
    p = read('--model-path "$M" --tp-size $TP --port=${PORT} --attention-backend "$BACKEND"')
    assert not p.problems and not p.uncertain
    assert [v.text for u in p.uses for v in u.values] == [None, None, None, None]


def test_splat_makes_absence_unknown():
    p = read('"$@"')
    assert p.uncertain and not p.problems
    result = lint('python3 -m sglang.launch_server "${ARGS[@]}"\n', path="x.sh")
    assert result.findings == []
    result = lint("python3 -m sglang.launch_server $EXTRA_ARGS --tp-size 2\n", path="x.sh")
    assert result.findings == []


def test_word_after_an_unknown_option_name_is_not_stray():
    p = read("--model-path m --$KIND-backend flashinfer")
    assert not p.problems and p.uncertain


def test_double_dash_ends_options():
    p = read("--model-path m -- --tp-size 2")
    assert kinds(p) == ["stray", "stray"]


def test_help_silences_required_options():
    result = lint("python3 -m sglang.launch_server --help\n", path="x.sh")
    assert result.findings == []


def test_serve_positional_model_and_model_type():
    p = read("Qwen/Qwen2.5-7B --model-type auto --tp-size 2", entry="sglang serve")
    assert [u.option.dest for u in p.uses] == ["model_path", "tp_size"]
    assert not p.problems


def test_removed_option_from_a_catalog_that_has_one():
    cat = load_catalog()
    data = {"version": "test", "options": [
        {"names": ["--model-path", "--model"], "dest": "model_path", "kind": "value", "nargs": None,
         "action": "store", "type": "str", "choices": None, "default": None, "required": True},
        {"names": ["--old-flag"], "dest": "old_flag", "kind": "flag", "nargs": 0,
         "action": "DeprecatedAction", "type": None, "choices": None, "default": None,
         "deprecated": True, "removed": True, "message": "--old-flag was removed; use --new-flag"},
    ]}
    p = read("--model-path m --old-flag", catalog=Catalog(data))
    assert [u.option.removed for u in p.uses] == [False, True]
    assert cat.lookup("--old-flag") is None


def test_single_dash_words_that_are_not_options():
    p = read("--model-path m -x")
    assert kinds(p) == ["unknown"]
