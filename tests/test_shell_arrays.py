"""Bash arrays: `ARGS=( ... )` then `python3 -m sglang.launch_server "${ARGS[@]}"`.

The array's words become the launch's words, each with its span at the array, where the
script fixes them; where it does not (a reassignment under `if`, a function's caller, a
loop that changes it), the words are unknown, never guessed."""

from servelint.edits import apply_edits, fix_all_edits
from servelint.engine import lint
from servelint.extract.shell import WINDOW_THRESHOLD, _extract_windows, extract_shell
from servelint.model import LineIndex


def launches(text):
    return extract_shell(text, LineIndex(text)).launches


def words(text, launch):
    """What each word's span covers in the document."""
    return [text[t.span.start:t.span.end] for t in launch.tokens]


def values(launch):
    return [t.text for t in launch.tokens]


def findings(text, name="run.sh"):
    return lint(text, path=f"/tmp/servelint-test/{name}").findings


def codes(text):
    return [f.code for f in findings(text)]


SERVER = """\
#!/bin/bash
MODEL=Qwen/Qwen3-8B
SERVER_ARGS=(
  --model-path "$MODEL"
  --tp-size 2
  --tool-call-parser qwen25x   # a typo
)
SERVER_ARGS+=( --port 30000 )
python3 -m sglang.launch_server "${SERVER_ARGS[@]}" --host 0.0.0.0
"""


def test_the_array_words_are_the_launch_words_with_spans_at_the_array():
    (l,) = launches(SERVER)
    assert values(l) == ["--model-path", None, "--tp-size", "2", "--tool-call-parser", "qwen25x",
                         "--port", "30000", "--host", "0.0.0.0"]
    assert words(SERVER, l)[:6] == ["--model-path", '"$MODEL"', "--tp-size", "2",
                                    "--tool-call-parser", "qwen25x"]
    # each word sits where it is written: the elements in the array, the rest on the command
    assert SERVER.index("qwen25x") == l.tokens[5].span.start
    assert SERVER.index("--port 30000") == l.tokens[6].span.start
    assert SERVER.index("--host") == l.tokens[8].span.start


def test_a_finding_sits_on_the_element_and_its_fix_edits_the_array():
    (f,) = [f for f in findings(SERVER) if f.code == "SL007"]
    assert SERVER[f.span.start:f.span.end] == "qwen25x"
    fix = next(x for x in f.fixes if x.preferred)
    fixed = apply_edits(SERVER, fix.edits)
    assert "  --tool-call-parser qwen25   # a typo\n" in fixed
    assert fixed.count("qwen25") == 1
    assert codes(fixed) == []


def test_before_arrays_were_read_the_flags_went_unchecked_now_a_missing_model_is_found():
    text = "ARGS=(--tp-size 2 --port 30000)\npython3 -m sglang.launch_server \"${ARGS[@]}\"\n"
    assert codes(text) == ["SL011"]


def test_an_append_under_a_condition_adds_unknown_words_and_keeps_the_rest():
    text = """\
ARGS=(--model-path m --tp-size 2)
if [ -n "$METRICS" ]; then
  ARGS+=(--enable-metrics)
fi
[ -n "$KEY" ] && ARGS+=(--api-key "$KEY")
ARGS+=(--attention-backend flash_infer)
python3 -m sglang.launch_server "${ARGS[@]}"
"""
    (l,) = launches(text)
    assert values(l) == ["--model-path", "m", "--tp-size", "2", None, "--attention-backend",
                         "flash_infer"]
    unknown = l.tokens[4]
    assert unknown.splat and words(text, l)[4] == '"${ARGS[@]}"'
    # the words the script fixes are checked; the unknown ones make nothing "missing"
    assert codes(text) == ["SL007"]


def test_a_reassignment_that_may_or_may_not_run_leaves_the_array_unknown():
    text = """\
ARGS=(--model-path m --tp-size two)
if [ "$BIG" = 1 ]; then
  ARGS=(--model-path big --tp-size 8)
fi
python3 -m sglang.launch_server "${ARGS[@]}"
"""
    (l,) = launches(text)
    assert values(l) == [None] and l.tokens[0].splat
    assert codes(text) == []


def test_straight_line_reassignment_replaces_the_value():
    text = ("ARGS=(--model-path a --tp-size two)\nARGS=(--model-path b --tp-size 2)\n"
            "python3 -m sglang.launch_server \"${ARGS[@]}\"\n")
    (l,) = launches(text)
    assert values(l) == ["--model-path", "b", "--tp-size", "2"]


def test_an_array_assigned_in_a_function_is_unknown_at_a_launch_outside_it():
    text = """\
setup() {
  ARGS=(--model-path m --tp-size two)
}
setup
python3 -m sglang.launch_server "${ARGS[@]}"
"""
    (l,) = launches(text)
    assert values(l) == [None]
    assert codes(text) == []


def test_a_launch_inside_a_function_reads_the_function_s_own_arrays_but_not_its_caller_s():
    text = """\
GLOBAL=(--model-path m)
serve() {
  local -a args=(--model-path "$1" --tp-size two)
  python3 -m sglang.launch_server "${args[@]}" "$@"
}
serve2() {
  python3 -m sglang.launch_server "${GLOBAL[@]}" --tp-size 2
}
"""
    l1, l2 = launches(text)
    assert values(l1) == ["--model-path", None, "--tp-size", "two", None]
    assert l1.tokens[-1].splat  # the function's parameters stay unknown
    # the caller's value of GLOBAL is not known at the start of serve2
    assert values(l2) == [None, "--tp-size", "2"]
    assert codes(text) == ["SL006"]


def test_function_parameters_and_unknown_variables_stay_unknown():
    text = ('python3 -m sglang.launch_server "${EXTRA[@]}" "$@" ${OPTS[*]}\n')
    (l,) = launches(text)
    assert values(l) == [None, None, None]
    assert all(t.splat for t in l.tokens)
    assert codes(text) == []


def test_a_function_that_changes_the_array_makes_it_unknown_after_it_is_called():
    text = """\
add_metrics() { ARGS+=(--enable-metrics); }
ARGS=(--model-path m --tp-size 2)
add_metrics
python3 -m sglang.launch_server "${ARGS[@]}" --port 1
"""
    (l,) = launches(text)
    assert values(l) == [None, "--port", "1"]


def test_commands_that_assign_arrays_make_them_unknown():
    for change in ['read -r -a ARGS <<< "$LINE"', "mapfile -t ARGS < args.txt",
                   'eval "ARGS=($EXTRA)"', "ARGS[1]=other", "declare -A ARGS=([a]=b)"]:
        text = f"ARGS=(--model-path m)\n{change}\npython3 -m sglang.launch_server \"${{ARGS[@]}}\"\n"
        (l,) = launches(text)
        assert values(l) == [None], change


def test_a_loop_that_appends_keeps_what_was_there_before():
    text = """\
ARGS=(--model-path m)
for extra in "$@"; do
  ARGS+=("$extra")
done
python3 -m sglang.launch_server "${ARGS[@]}"
"""
    (l,) = launches(text)
    assert values(l) == ["--model-path", "m", None]


def test_a_launch_inside_a_loop_that_changes_the_array_does_not_know_the_array():
    text = """\
ARGS=(--model-path m)
for i in 1 2; do
  python3 -m sglang.launch_server "${ARGS[@]}" --port 1
  ARGS=(--model-path other)
done
for i in 1 2; do
  L=(--model-path m)
  python3 -m sglang.launch_server "${L[@]}" --port 2
  L+=(--enable-metrics)
done
"""
    l1, l2 = launches(text)
    assert values(l1) == [None, "--port", "1"]
    assert values(l2) == ["--model-path", "m", "--port", "2"]  # reassigned in the same round


def test_arrays_inside_arrays_and_self_append():
    text = """\
BASE=(--model-path m)
ARGS=("${BASE[@]}" --tp-size 2)
ARGS=("${ARGS[@]}" --port 30000)
python3 -m sglang.launch_server "${ARGS[@]}"
"""
    (l,) = launches(text)
    assert values(l) == ["--model-path", "m", "--tp-size", "2", "--port", "30000"]
    assert text.index("--model-path") == l.tokens[0].span.start  # in BASE, where it is written


def test_a_new_local_is_empty_and_a_global_declaration_is_not_known():
    text = """\
f() {
  declare -g A
  python3 -m sglang.launch_server "${A[@]}" --a
  local B
  python3 -m sglang.launch_server "${B[@]}" --b
}
"""
    la, lb = launches(text)
    assert values(la) == [None, "--a"]
    assert values(lb) == ["--b"]


def test_unset_empties_the_array():
    text = "A=(--model-path m)\nunset A\npython3 -m sglang.launch_server \"${A[@]}\"\n"
    (l,) = launches(text)
    assert values(l) == []
    assert codes(text) == ["SL011"]


def test_quoted_star_is_one_word():
    text = "A=(--model-path m --tp-size 2)\npython3 -m sglang.launch_server \"${A[*]}\"\n"
    (l,) = launches(text)
    assert values(l) == ["--model-path m --tp-size 2"]
    (f,) = [f for f in findings(text) if f.code == "SL013"]
    assert '"${A[@]}" passes each as its own word' in f.message
    fixed = apply_edits(text, f.fixes[0].edits)
    assert '"${A[@]}"' in fixed and codes(fixed) == []


def test_unquoted_expansion_splits_elements_and_an_element_with_a_blank_is_unknown():
    text = ("A=(--model-path m --served-model-name \"my model\" --port '')\n"
            "python3 -m sglang.launch_server ${A[@]}\n")
    (l,) = launches(text)
    # the empty element disappears, the one with a blank may be several words
    assert values(l) == ["--model-path", "m", "--served-model-name", None, "--port"]
    assert l.tokens[3].splat


def test_a_changed_ifs_leaves_unquoted_expansions_unknown():
    text = "IFS=,\nA=(--model-path m)\npython3 -m sglang.launch_server ${A[@]}\n"
    (l,) = launches(text)
    assert values(l) == [None]


def test_an_array_that_holds_the_whole_command():
    text = """\
start() {
  local -a kv
  if [[ "$1" == fp8 ]]; then kv=(--kv-cache-dtype fp8_e4m3); else kv=(--kv-cache-dtype fp4_e2m1); fi
  local -a command=(
    python3 -m sglang.launch_server
    --model-path "$MODEL"
    --tp-size 8
    --tool-call-parser glm47x
    "${kv[@]}"
  )
  printf '%q ' "${command[@]}" > command.txt
  setsid "${command[@]}" > server.log 2>&1 &
}
"""
    (l,) = launches(text)
    assert l.kind == "launch_server"
    assert text[l.entry.span.start:l.entry.span.end] == "sglang.launch_server"
    assert values(l) == ["--model-path", None, "--tp-size", "8", "--tool-call-parser", "glm47x", None]
    assert codes(text) == ["SL007"]


def test_removing_words_never_joins_the_array_and_the_command():
    # --enable-metrix is unknown, and argparse leaves the word after it with it: the value
    # sits on the command line, the option in the array. No edit spans the two.
    text = "A=(--model-path m --enable-metrix)\npython3 -m sglang.launch_server \"${A[@]}\" yes\n"
    (f,) = [f for f in findings(text) if f.code == "SL001"]
    assert text[f.span.start:f.span.end] == "--enable-metrix"
    for fix in f.fixes:
        for e in fix.edits:
            assert e.span.end <= text.index(")") or e.span.start >= text.index("python3")
    assert not [x for x in f.fixes if x.title.startswith("Remove")]
    # with nothing after it on the command line, the option alone is removed from the array
    alone = "A=(--model-path m --enable-metrix)\npython3 -m sglang.launch_server \"${A[@]}\"\n"
    (g,) = [f for f in findings(alone) if f.code == "SL001"]
    (remove,) = [x for x in g.fixes if x.title.startswith("Remove")]
    assert apply_edits(alone, remove.edits) == (
        "A=(--model-path m)\npython3 -m sglang.launch_server \"${A[@]}\"\n")


def test_removing_a_whole_element_line_keeps_the_array():
    text = """\
ARGS=(
  --model-path m
  --tp-size 2
  --tp-size 4
)
python3 -m sglang.launch_server "${ARGS[@]}"
"""
    result = lint(text, path="/tmp/servelint-test/run.sh")
    assert [f.code for f in result.findings] == ["SL010"]
    fixed = apply_edits(text, fix_all_edits(result.findings))
    assert fixed.count("--tp-size") == 1 and fixed.endswith(")\npython3 -m sglang.launch_server \"${ARGS[@]}\"\n")
    assert codes(fixed) == []


def test_large_scripts_with_arrays_are_read_whole():
    body = SERVER + "".join(f"echo line {i}\n" for i in range(WINDOW_THRESHOLD // 10))
    assert len(body) > WINDOW_THRESHOLD
    assert _extract_windows(body, LineIndex(body)) is None  # no windows: the array is elsewhere
    (l,) = launches(body)
    assert values(l)[:2] == ["--model-path", None]
