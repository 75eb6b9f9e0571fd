"""The attack suite as tests (servelint issue 17, points 1 and 7): a fast, fixed-seed subset
of tools/fuzz.py (the long run is `make fuzz`), one regression test per root cause the
fuzzer found, and the re-parse check every fix goes through before it is offered
(servelint.fixcheck)."""

import importlib.util
import sys
import time
from pathlib import Path

import pytest

from servelint import fixcheck
from servelint.edits import apply_edits, fix_all_edits
from servelint.engine import fix_all_text, lint
from servelint.fixcheck import breaks_syntax
from servelint.model import Edit, Finding, Fix, LineIndex, Severity, Span
from servelint.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("servelint_fuzz", ROOT / "tools" / "fuzz.py")
assert _spec is not None and _spec.loader is not None
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["servelint_fuzz"] = fuzz  # its dataclasses look their module up
_spec.loader.exec_module(fuzz)

SETTINGS = Settings(project_rules=False)


def fixes_of(text: str, path: str) -> list[tuple[str, Fix]]:
    result = lint(text, path, None, SETTINGS, suppression_actions=True)
    return [(f.code, fx) for f in result.findings for fx in f.fixes]


# --- the fast subset of the fuzzer --------------------------------------------------------------


def test_fuzz_fast_subset():
    """250 mutated documents of every format (seed 17): no crash, no internal error, no
    hang, no bad edit, no fix (safe or offered in the editor) and no fix-all that leaves
    the file parsing worse in its own syntax."""
    lines: list[str] = []
    counts, failures = fuzz.run(17, 250, None, limit=20.0, out=lines.append, show=3,
                                reduce=False, relint=False, corpus=False)
    assert counts.documents >= 240 and counts.fixes > 500, lines
    assert len(counts.by_format) >= 8, counts.by_format  # every format was fuzzed
    assert not failures, "\n".join(lines)


def test_fuzz_corpus_as_it_is():
    """Every corpus document unmutated (the files as users write them) takes its fixes."""
    seeds = fuzz.all_seeds()
    assert len(seeds) > 300
    failures = []
    for seed in seeds[::3]:
        failures += fuzz.timed_check(seed.name, seed.text, SETTINGS, 20.0, relint=False)
    assert not failures, [(f.kind, f.name, f.detail, f.fix) for f in failures[:5]]


def test_fuzz_prints_counts_and_exits_1_on_a_failure(monkeypatch, capsys):
    """The long run's report: documents, fixes tried, failures by kind; exit 1 when any."""
    code = fuzz.main(["--seed", "3", "--count", "5", "--mutated-only", "--no-reduce"])
    out = capsys.readouterr().out
    assert "5 documents" in out and "fixes tried" in out and "failures: crash" in out
    assert code == 0, out
    monkeypatch.setattr(fixcheck, "breaks_syntax", lambda fmt, b, a: "always broken")
    code = fuzz.main(["--seed", "3", "--count", "40", "--mutated-only", "--no-reduce",
                      "--show", "1"])
    out = capsys.readouterr().out
    assert code == 1 and "fix-breaks-syntax" in out and "always broken" in out


# --- breaks_syntax catches the known bad fixes ----------------------------------------------------


@pytest.mark.parametrize("fmt,before,after", [
    # issue 17: SL094 deleting a suppression-looking line in a docstring with its closing """
    ("python", 'def f():\n    """Run it.\n    # servelint: disable=SL001 """\n    return 1\n',
     'def f():\n    """Run it.\n    return 1\n'),
    # issue 17: the Markdown text after an HTML-comment suppression, with an opening fence
    ("markdown", "<!-- servelint: disable-file=SL008 -->\n```bash\npython -m sglang.launch_server\n```\n",
     "python -m sglang.launch_server\n```\n"),
    # issue 17: a fix-all over the protocol turned `services:` into `services:-`
    ("yaml", "services:\n  s:\n    command: python -m sglang.launch_server\n",
     "services:-\n  s:\n    command: python -m sglang.launch_server\n"),
    ("shell", "python -m sglang.launch_server --model-path 'm'\necho ok\n",
     "python -m sglang.launch_server --model-path 'm\necho ok\n"),
    ("dockerfile", 'FROM x\nCMD ["python3", "-m", "sglang.launch_server"]\n',
     'FROM x\nCMD ["python3", "-m", "sglang.launch_server",]\n'),
    ("dockerfile", "FROM x\nRUN python3 -m sglang.launch_server \\\n    --tp 2\n",
     "FROM x\nRUN python3 -m sglang.launch_server\n    --tp 2\n"),
    ("launch-json", '{"configurations": [{"args": ["--tp", "2"]}]}',
     '{"configurations": [{"args": ["--tp", "2"]]}'),
    ("notebook", '{"cells": [{"cell_type": "code", "source": ["!python -m x --a \'b\'\\n"]}], '
                 '"metadata": {}, "nbformat": 4}',
     '{"cells": [{"cell_type": "code", "source": ["!python -m x --a \'b\\n"]}], '
     '"metadata": {}, "nbformat": 4}'),
    ("notebook-cell", "import os\n!python -m sglang.launch_server --tp 2\n",
     "import os\n!python -m sglang.launch_server --tp 'x\n"),
    ("sglang-config", "model-path: m\ntp-size: 2\n", "model-path: m\ntp-size: [2\n"),
    ("toml", 'a = 1\n[b]\nc = "x"\n', 'a = 1\n[b]\nc = "x\n'),
])
def test_breaks_syntax_catches_a_bad_fix(fmt, before, after):
    assert breaks_syntax(fmt, before, after) is not None
    assert breaks_syntax(fmt, before, before) is None


@pytest.mark.parametrize("fmt,before,after", [
    ("shell", "python -m sglang.launch_server --tp_size 2\n", "python -m sglang.launch_server --tp-size 2\n"),
    ("yaml", "args: [--tp_size, '2']\n", "args: [--tp-size, '2']\n"),
    ("python", "import subprocess\nsubprocess.run(['--tp_size', '2'])\n",
     "import subprocess\nsubprocess.run(['--tp-size', '2'])\n"),
    ("markdown", "```bash\npython -m sglang.launch_server --tp_size 2\n```\n",
     "```bash\npython -m sglang.launch_server --tp-size 2\n```\n"),
    ("dockerfile", 'FROM x\nCMD ["--tp_size", "2"]\n', 'FROM x\nCMD ["--tp-size", "2"]\n'),
])
def test_breaks_syntax_lets_a_good_fix_through(fmt, before, after):
    assert breaks_syntax(fmt, before, after) is None


def test_a_broken_file_may_be_fixed_but_not_broken_further():
    """A half-typed script keeps its fixes while they add no parse problem."""
    before = "echo 'unfinished\npython -m sglang.launch_server --tp_size 2\n"
    assert breaks_syntax("shell", before, before.replace("--tp_size", "--tp-size")) is None
    broken_py = "import x\nrun(['--tp_size'])\ndef f(:\n    pass\n"
    assert breaks_syntax("python", broken_py, broken_py.replace("--tp_size", "--tp-size")) is None
    # a second problem ahead of the first one
    assert breaks_syntax("python", broken_py, broken_py.replace("import x", "import x y")) is not None
    assert breaks_syntax("python", broken_py, broken_py.replace("run([", "run(")) is not None


@pytest.mark.parametrize("fmt,before,after", [
    # the piece joined to the next statement by the fix: the whole text decides
    ("shell", "python -m sglang.launch_server\n--tp 2\n", "python -m sglang.launch_server \\\n--tp 2\n"),
    ("shell", "cat <<EOF\n--tp 2\nEOF\npython -m sglang.launch_server --tp 2\n",
     "cat <<EOF\n--tp 2\nEOF\npython -m sglang.launch_server --tp 'x\n"),
    ("python", "import x\n\n@dec(\n  1)\ndef f():\n    '''a\n\nb'''\n\nx = 1\n",
     "import x\n\n@dec(\n  1\ndef f():\n    '''a\n\nb'''\n\nx = 1\n"),
    ("python", "a = 1\nb = 2\n", "a = 1\nb = (2\n"),
    ("python", "a = 1\r\nb = [\r\n 2]\r\nc = 3\r\n", "a = 1\r\nb = [\r\n 2\r\nc = 3\r\n"),
])
def test_the_fast_check_agrees_with_the_whole_text(fmt, before, after):
    """The check of the edited statement alone says what the check of the whole says."""
    old = fixcheck.parse_result(fmt, before)
    assert old is not None
    assert (breaks_syntax(fmt, before, after) is None) == \
        (fixcheck.compare(fmt, old, before, after) is None)


def test_fix_all_edits_leaves_out_a_fix_that_breaks_the_syntax():
    """Given the text and its format, fix-all's choice drops the breaking fix and keeps
    the others (the engine passes both: engine.fix_all_text)."""
    text = "python -m sglang.launch_server --tp_size 2 --model-path 'm'\n"
    good = Fix("respell", [Edit(Span(text.index("--tp_size"), text.index("--tp_size") + 9), "--tp-size")])
    q = text.index("'m'")
    bad = Fix("unquote", [Edit(Span(q, q + 1), "")])
    findings = [Finding("SL002", Severity.ERROR, "m", Span(0, 1), fixes=[good]),
                Finding("SL999", Severity.ERROR, "m", Span(q, q + 1), fixes=[bad])]
    assert len(fix_all_edits(findings)) == 2  # without the text: as before
    kept = fix_all_edits(findings, text, "shell")
    assert apply_edits(text, kept) == text.replace("--tp_size", "--tp-size")


def test_offered_dicts_keeps_only_fixes_that_parse():
    text = "python -m sglang.launch_server --model-path 'm'\n"
    index = LineIndex(text)
    q = text.index("'m'")

    def as_dict(start: int, end: int, new: str) -> dict:
        (sl, sc), (el, ec) = index.position(start), index.position(end)
        return {"title": new, "edits": [{"range": {"start": {"line": sl, "character": sc},
                                                   "end": {"line": el, "character": ec}},
                                         "newText": new}]}
    good, bad = as_dict(q, q + 3, "m"), as_dict(q, q + 1, "")
    assert fixcheck.offered_dicts("shell", text, index, [good, bad]) == [good]


def test_checking_a_fix_in_a_long_file_costs_the_piece_it_edits():
    """After the first check of a 20,000-line script (which parses it), a fix is checked by
    re-parsing the command it edits: far cheaper than parsing the file again."""
    line = 'python3 -m sglang.launch_server --model-path "m-{k}" --tp_size 2 &\n'
    before = "#!/bin/bash\n" + "".join(line.format(k=k) for k in range(20_000))
    fixcheck.parse_result("shell", before)
    t0 = time.perf_counter()
    fixcheck.PARSERS["shell"](before)
    whole = time.perf_counter() - t0
    costs = []
    for k in range(5):
        at = before.index("--tp_size", len(before) * (k + 1) // 7)
        after = before[:at] + "--tp-size" + before[at + 9:]
        t0 = time.perf_counter()
        assert breaks_syntax("shell", before, after) is None
        costs.append(time.perf_counter() - t0)
    costs.sort()
    assert costs[2] < whole / 10, (costs, whole)


# --- one regression test per root cause found by the fuzzer ----------------------------------------


YAML_BOM = '\ufeffc:\n  - "python"\n  - "-m"\n  - "sglang.launch_server"\n  - "--tp"\n  - "2"\n'


def test_root_cause_yaml_with_a_byte_order_mark_gets_fixes_in_place():
    """libyaml's marks do not count a byte order mark that starts the text: every fix of
    such a YAML file landed one character early (`- "--tp"` became `---tp-size"`)."""
    fixed, _ = fix_all_text(YAML_BOM, "/nonexistent/pod.yaml", None, SETTINGS)
    assert fixed == YAML_BOM.replace('"--tp"', '"--tp-size"')
    for code, fx in fixes_of(YAML_BOM, "/nonexistent/pod.yaml"):
        assert breaks_syntax("yaml", YAML_BOM, apply_edits(YAML_BOM, fx.edits)) is None, (code, fx)


def test_root_cause_disable_file_comment_goes_after_the_byte_order_mark():
    """"Disable CODE for this file" inserted its comment before the byte order mark: the
    mark then stood inside the text (YAML: 'did not find expected <document start>')."""
    actions = [fx for code, fx in fixes_of(YAML_BOM, "/nonexistent/pod.yaml")
               if fx.title.endswith("for this file")]
    assert actions
    for fx in actions:
        after = apply_edits(YAML_BOM, fx.edits)
        assert after.startswith("\ufeff# servelint: disable-file="), after[:40]
        assert breaks_syntax("yaml", YAML_BOM, after) is None


def test_root_cause_no_line_continuation_for_a_word_on_the_launch_line():
    """SL020 took a word after `|` or `;` on the launch's own line for a line cut from the
    launch, and its fix added ` \\` at the end of the file (bash: unexpected end of file)."""
    for text in ("sh -m sglang.launch_server|-", "python -m sglang.launch_server; --tp 2\n"):
        result = lint(text, "/nonexistent/run.sh", None, SETTINGS)
        assert not [f for f in result.findings if f.code == "SL020"], text
        fixed, _ = fix_all_text(text, "/nonexistent/run.sh", None, SETTINGS)
        assert breaks_syntax("shell", text, fixed) is None


def test_root_cause_lone_surrogate_is_read_not_an_internal_error():
    """A lone surrogate (an editor may send "\\udcff" in JSON) made every extractor fail
    on `text.encode("utf-8")`: the file got "internal error" and no findings."""
    for path, text in (("/nonexistent/run.sh", "python -m sglang.launch_server --tp_size 2 \udcff\n"),
                       ("/nonexistent/pod.yaml", "args: [python, -m, sglang.launch_server, --tp_size, '2'] # \ud83d\n"),
                       ("/nonexistent/Dockerfile", "FROM x\nCMD python3 -m sglang.launch_server --tp_size 2 \udcfc\n")):
        result = lint(text, path, None, SETTINGS)
        assert not [n for n in result.notices if "internal error" in n], (path, result.notices)
        assert "SL002" in [f.code for f in result.findings], path
        fixed, _ = fix_all_text(text, path, None, SETTINGS)
        assert fixed == text.replace("--tp_size", "--tp-size")


def test_fix_all_never_leaves_a_file_that_does_not_parse():
    """Whatever the fixes, fix-all's result parses at least as well as the file did (the
    engine checks the fixes together and leaves out any fix that breaks the syntax)."""
    for text, path, fmt in (("sh -m sglang.launch_server|-", "/nonexistent/run.sh", "shell"),
                            (YAML_BOM, "/nonexistent/pod.yaml", "yaml")):
        fixed, _ = fix_all_text(text, path, None, SETTINGS)
        assert breaks_syntax(fmt, text, fixed) is None


def test_root_cause_a_long_unknown_option_is_not_compared_with_every_option_at_length():
    """The suggestions for an unknown option ran an edit distance against every option
    string of the catalog, whatever their lengths: a 1,600-character option took 13 s (the
    fuzzer's hangs). Options whose length alone rules them out are not compared."""
    from servelint import suggest
    calls = [0]
    real = suggest.edit_distance

    def counted(a: str, b: str) -> int:
        calls[0] += 1
        return real(a, b)
    suggest.edit_distance = counted
    try:
        lint("python -m sglang.launch_server --" + "a" * 2000 + " --tp_size 2\n",
             "/nonexistent/run.sh", None, SETTINGS)
    finally:
        suggest.edit_distance = real
    assert calls[0] < 50, calls[0]


YAML_CR = 'd:\r  - "python"\r  - "-m"\r  - "sglang.launch_server"\r  - "--enable-ep-moe"\r  - "--tp"\r  - "2"\r'


def test_root_cause_yaml_with_lone_cr_line_ends_gets_new_items_on_their_own_lines():
    """A YAML file whose lines end with a lone \\r (YAML reads them as lines; servelint's
    line index does not) got new list items written after "\\n" and indented by the column
    counted from the previous \\n: `- "--ep-size"\\n           - "1"`, no longer YAML."""
    replaced = [fx for code, fx in fixes_of(YAML_CR, "/nonexistent/pod.yaml")
                if fx.title.startswith("Replace --enable-ep-moe with --ep-size")]
    assert replaced
    after = apply_edits(YAML_CR, replaced[0].edits)
    assert '\r  - "--ep-size"\r  - "' in after and "\n" not in after, after
    assert breaks_syntax("yaml", YAML_CR, after) is None


def test_root_cause_removing_a_whole_shell_command_takes_its_terminator():
    """Removing the only words of a command cut from a launch left its `&` (or `;`) alone
    on the line: `&` alone is a bash syntax error."""
    text = "python -m sglang.launch_server\n--bogus-flag &\nwait\n"
    removals = [fx for code, fx in fixes_of(text, "/nonexistent/run.sh")
                if fx.title.startswith("Remove --bogus-flag")]
    assert removals
    for fx in removals:
        assert breaks_syntax("shell", text, apply_edits(text, fx.edits)) is None


def test_root_cause_removal_in_a_yaml_block_keeps_the_indentation_after_a_nel():
    """A block scalar whose lines end in NEL (U+0085: a line break for YAML, none for the
    editor or the shell): removing an option at the start of a line took the blanks
    before it, which are the block's indentation, and the YAML no longer parsed (seed 17
    of the fuzzer on a fresh clone)."""
    text = ("services:\x85  sglang:\x85    image: lmsysorg/sglang:latest\x85"
            "    entrypoint: [\"/bin/bash\", \"-c\"]\x85    command:\x85      - |\x85"
            "        python3 -m sglang.launch_server --model-path m \\\x85"
            "          ---dp-size 2 --port 30000\x85")
    removals = [fx for code, fx in fixes_of(text, "/nonexistent/docker-compose.yml")
                if fx.title.startswith("Remove ---dp-size")]
    assert removals
    for fx in removals:
        after = apply_edits(text, fx.edits)
        assert breaks_syntax("yaml", text, after) is None, repr(after)
        assert "\x85          --port 30000" in after, repr(after)


def test_root_cause_removing_a_continued_line_keeps_the_crlf_whole():
    """Removing the last line of a continued command took the \\r of its \\r\\n and left the
    \\n (the fuzzer's bad-edit: an edit boundary inside a line end)."""
    text = "python -m sglang.launch_server --model-path m \\\r\n  --bogus-flag\r\necho done\r\n"
    removals = [fx for code, fx in fixes_of(text, "/nonexistent/run.sh")
                if fx.title.startswith("Remove --bogus-flag")]
    assert removals
    for fx in removals:
        assert fuzz._edit_problem(text, fx.edits) is None
        after = apply_edits(text, fx.edits)
        assert after.count("\r\n") == after.count("\n"), repr(after)


def test_minimal_edit_is_the_smallest_edit_between_two_texts():
    """edits.minimal_edit (the editor's fix-all edit) compares blocks of text, not
    characters one by one; it gives what the character by character definition gives."""
    import random

    from servelint.edits import minimal_edit

    def by_characters(old: str, new: str):
        start, limit = 0, min(len(old), len(new))
        while start < limit and old[start] == new[start]:
            start += 1
        eo, en = len(old), len(new)
        while eo > start and en > start and old[eo - 1] == new[en - 1]:
            eo, en = eo - 1, en - 1
        return start, eo, new[start:en]

    rng = random.Random(17)
    for _ in range(3000):
        old = "".join(rng.choice("ab\n") for _ in range(rng.randint(0, 400)))
        chars = list(old)
        for _ in range(rng.randint(0, 3)):
            i = rng.randint(0, len(chars))
            chars[i:i + rng.randint(0, 3)] = rng.choice(["", "a", "b", "ab", "\n"])
        new = "".join(chars)
        got = minimal_edit(old, new)
        if old == new:
            assert got is None
            continue
        assert got is not None
        assert (got.span.start, got.span.end, got.new_text) == by_characters(old, new)
        assert apply_edits(old, [got]) == new



def test_root_cause_dockerfile_removal_keeps_the_crlf_whole():
    """The Dockerfile's copy of the continued-line removal took the \\r of a \\r\\n too."""
    text = "FROM x\r\nCMD python -m sglang.launch_server --model-path m \\\r\n  --bogus-flag\r\nEXPOSE 1\r\n"
    removals = [fx for code, fx in fixes_of(text, "/nonexistent/Dockerfile")
                if fx.title.startswith("Remove --bogus-flag")]
    assert removals
    for fx in removals:
        assert fuzz._edit_problem(text, fx.edits) is None
        after = apply_edits(text, fx.edits)
        assert after.count("\r\n") == after.count("\n"), repr(after)


def test_root_cause_config_file_keys_added_with_the_files_line_ends():
    """An SGLang --config file with \\r\\n line ends got a new key inserted between the \\r
    and the \\n of a line end, itself ended by \\n."""
    text = 'speculative-algorithm: "EAGLE"\r\nspeculative-eagle-topk: 4\r\n'
    added = [fx for code, fx in fixes_of(text, "/nonexistent/config.yaml") if fx.title.startswith("Add ")]
    assert added
    for fx in added:
        assert fuzz._edit_problem(text, fx.edits) is None
        after = apply_edits(text, fx.edits)
        assert after.count("\r\n") == after.count("\n"), repr(after)
        assert breaks_syntax("sglang-config", text, after) is None

# --- the editor offers only fixes that parse ------------------------------------------------------

from lsp_support import client, open_doc, quick_fixes, start_session  # noqa: E402,F401

HALF_TYPED = "python -m sglang.launch_server --tp 2\n-`\n"  # a backtick opened, never closed


async def test_editor_quick_fixes_are_those_that_parse(client, tmp_path):
    """In the editor, a quick fix whose result would not parse is not offered (here,
    removing the `-` in front of an unclosed backtick); the others are."""
    await start_session(client, root=tmp_path)
    uri = (tmp_path / "half.sh").as_uri()
    diags = await open_doc(client, uri, "shellscript", HALF_TYPED)
    from lsp_support import apply_lsp_edits
    offered: list[str] = []
    for diag in diags:
        for action in await quick_fixes(client, uri, diag):
            assert action.edit is not None and action.edit.changes is not None
            after = apply_lsp_edits(HALF_TYPED, action.edit.changes[uri])
            assert breaks_syntax("shell", HALF_TYPED, after) is None, action.title
            offered.append(action.title)
    assert any(t.startswith("Expand to --tp-size") for t in offered), offered
    assert not any(t.startswith("Remove '-'") for t in offered), offered
    # the lint itself still finds that fix: the check is what keeps it out
    assert any(fx.title == "Remove '-'" for _, fx in fixes_of(HALF_TYPED, "/nonexistent/half.sh"))


def test_root_cause_line_continuation_goes_before_the_crlf():
    """SL020's " \\\\" went between the \\\\r and the \\\\n of a \\\\r\\\\n line end: bash then
    reads the \\\\r as part of the launch's last word, and the backslash continues nothing
    of it (in a script and in a YAML block scalar alike)."""
    for text, path in (("python -m sglang.launch_server\r\n--tp 2\r\n", "/nonexistent/run.sh"),
                       ("c:\n  command: [bash, -c]\n  args:\n  - |\n    python -m sglang.launch_server\r\n"
                        "    --tp 2\n", "/nonexistent/pod.yaml")):
        added = [fx for code, fx in fixes_of(text, path)
                 if fx.title == "Add the missing line continuation"]
        assert added, path
        for fx in added:
            assert fuzz._edit_problem(text, fx.edits) is None
            assert "launch_server \\\r\n" in apply_edits(text, fx.edits)


def test_the_command_line_lists_only_fixes_that_parse(tmp_path):
    """`servelint check --format json` lists the fixes the editor would offer: the one that
    would leave the half-typed script unparsable is not among them."""
    import json as _json
    import subprocess
    import sys as _sys
    (tmp_path / "half.sh").write_text(HALF_TYPED)
    out = subprocess.run([_sys.executable, "-m", "servelint", "check", "--format", "json",
                          str(tmp_path / "half.sh")], capture_output=True, text=True).stdout
    titles = [fx["title"] for rec in _json.loads(out) for fx in rec["fixes"]]
    assert any(t.startswith("Expand to --tp-size") for t in titles), titles
    assert not any(t.startswith("Remove '-'") for t in titles), titles
