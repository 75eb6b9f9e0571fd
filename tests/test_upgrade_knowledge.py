"""Upgrade knowledge: successors of removed option strings and choice values, the messages
and fixes that use them, did-you-mean filters, and option history on hover.

tests/data/upgrade/verdicts.jsonl holds SGLang 0.5.23's own verdicts (tools/upgrade_oracle.py,
full stage) on each launch before and after servelint's fix; here servelint lints each
"before" launch again, applies the same fix and must reach the recorded "after" argv, which
SGLang accepted, from one it rejected."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from servelint.catalog import catalog_data, load_catalog
from servelint.checks.unknown_option import suggestions
from servelint.edits import apply_edits
from servelint.engine import fix_all_text, lint
from servelint.lsp.hover import option_markdown
from servelint.settings import Settings
from servelint.successors import retired, retired_value, table
from servelint.suggest import close_options, edit_distance, same_feature

ROOT = Path(__file__).resolve().parents[1]
VERDICTS = [json.loads(line) for line in
            (ROOT / "tests" / "data" / "upgrade" / "verdicts.jsonl").read_text().splitlines()
            if line.strip()]
ENTRY = "python3 -m sglang.launch_server"


def run(args: str, version: str = "0.5.23"):
    script = f"{ENTRY} --model-path m {args}\n"
    return script, lint(script, path="up.sh", settings=Settings(sglang_version=version)).findings


def by_code(findings, code):
    return [f for f in findings if f.code == code]


# --- SGLang's verdicts --------------------------------------------------------------------

def test_the_verdicts_cover_the_cases_of_the_issue():
    befores = {shlex.join(r["argv_before"]) for r in VERDICTS}
    for case in ("--enable-deepep-moe", "--tp-size 2 --enable-ep-moe", "--cuda-graph-max-bs 8",
                 "--disable-flashinfer", "--tool-call-parser qwen3", "--impl transformers",
                 "--max-micro-batch-size 4", "--file-storage-pth /tmp/servelint-upgrade"):
        assert case in befores
    assert len(VERDICTS) >= 80


@pytest.mark.parametrize("row", VERDICTS, ids=[shlex.join(r["argv_before"]) for r in VERDICTS])
def test_the_fix_reaches_what_sglang_accepted(row):
    assert row["sglang"] == "0.5.23" and row["stage"] == "full"
    assert row["verdict_before"] == "rejected", row["error_before"]
    assert row["verdict_after"] == "accepted", row["error_after"]
    script = f"{ENTRY} {shlex.join(row['argv_before'])}\n"
    findings = lint(script, path="up.sh", settings=Settings(sglang_version="0.5.23")).findings
    mine = [f for f in findings if f.code == row["code"] and any(x.preferred for x in f.fixes)]
    assert mine, [f.message for f in findings]
    fix = next(x for x in mine[0].fixes if x.preferred)
    assert (fix.title, fix.safe) == (row["fix"], row["safe"])
    after = shlex.split(apply_edits(script, fix.edits))[3:]
    assert after == row["argv_after"]


# --- the table and its evidence ------------------------------------------------------------

def test_successors_json_is_what_the_generator_makes():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_successors.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _texts(version: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for o in catalog_data(version)["options"]:
        for n in o["names"]:
            out.setdefault(n, []).extend(t for t in (o["help"], o["message"]) if t)
    return out


def test_every_quoted_text_is_sglangs_in_that_release():
    checked = 0
    for name, e in table()["options"].items():
        ev = e["evidence"]
        if not ev:
            continue
        data = catalog_data(ev["release"])
        if ev["kind"] in ("message", "input"):
            assert ev["text"] in _texts(ev["release"]).get(name, []), name
        elif ev["kind"] == "help":
            new = e["successor"]["rename"]
            assert ev["text"] in _texts(ev["release"])[new], name
            old = ev.get("before_text", ev["text"])
            assert old in _texts(ev["before"])[name], name
        elif ev["kind"] == "dest":
            new = e["successor"]["rename"]
            dest = {n: o["dest"] for o in data["options"] for n in o["names"]}
            before = {n: o["dest"] for o in catalog_data(ev["before"])["options"] for n in o["names"]}
            assert dest[new] == before[name] == ev["dest"] and name not in dest
        checked += 1
    assert checked >= 50


def test_successors_of_the_issue():
    opts = table()["options"]
    assert opts["--enable-deepep-moe"]["successor"] == {"replace": ["--moe-a2a-backend", "deepep"]}
    assert opts["--enable-ep-moe"]["successor"] == {"replace": ["--ep-size", {"valueOf": "--tp-size"}]}
    assert opts["--cuda-graph-max-bs"]["successor"] == {"rename": "--cuda-graph-max-bs-decode"}
    assert opts["--cuda-graph-max-bs"]["accepted"][-1][1] == "0.5.19"
    assert opts["--file-storage-pth"]["successor"] == {"rename": "--file-storage-path"}
    assert opts["--impl"]["successor"] == {"rename": "--model-impl"}
    assert opts["--max-micro-batch-size"]["successor"] == {"rename": "--pp-max-micro-batch-size"}
    assert opts["--prefill-cp-mode"]["successor"] == {"rename": "--cp-strategy",
                                                     "values": {"in-seq-split": "zigzag"}}
    # SGLang's own typo ('pytroch') is read as the one choice a transposition away.
    assert opts["--disable-flashinfer-sampling"]["successor"] == {
        "replace": ["--sampling-backend", "pytorch"]}
    assert opts["--disable-flashinfer-sampling"]["evidence"]["corrected"] == {
        "written": "pytroch", "choice": "pytorch"}
    assert table()["choices"]["--tool-call-parser"]["qwen3"]["replacement"] == "qwen3_coder"
    assert table()["choices"]["--attention-backend"]["cutlass_mla"]["replacement"] is None


# --- messages and fixes ----------------------------------------------------------------------

def test_a_removed_switch_gets_its_successor_not_a_value_option():
    script, findings = run("--enable-deepep-moe --trust-remote-code")
    assert not by_code(findings, "SL001")
    (f,) = by_code(findings, "SL009")
    assert f.message.startswith("unrecognized arguments: --enable-deepep-moe (SGLang 0.5.23 ")
    assert "was last accepted by SGLang 0.5.3rc0 (of the final releases, 0.5.2)" in f.message
    assert "use --moe-a2a-backend deepep" in f.message
    assert "--deepep-mode" not in f.message
    pref = next(x for x in f.fixes if x.preferred)
    assert not pref.safe
    assert apply_edits(script, pref.edits).endswith(
        "--moe-a2a-backend deepep --trust-remote-code\n")
    assert fix_all_text(script, "up.sh", settings=Settings(sglang_version="0.5.23"))[0] == script


def test_ep_moe_takes_the_literal_tp_size_or_explains():
    script, findings = run("--tp 4 --enable-ep-moe")
    (f,) = by_code(findings, "SL009")
    assert "--enable-eplb" not in f.message and "use --ep-size 4 (the value of --tp-size)" in f.message
    assert apply_edits(script, next(x for x in f.fixes if x.preferred).edits).endswith(
        "--tp 4 --ep-size 4\n")
    script, findings = run('--tp-size "$TP" --enable-ep-moe')
    (f,) = by_code(findings, "SL009")
    assert "no automatic fix: the --tp-size value is not written literally" in f.message
    assert [x.title for x in f.fixes] == ["Remove --enable-ep-moe"]
    assert not any(x.safe for x in f.fixes)


def test_a_former_option_now_only_a_prefix_is_the_removed_option():
    script, findings = run("--cuda-graph-max-bs 8 --disable-flashinfer")
    assert not by_code(findings, "SL003")
    cg, fi = by_code(findings, "SL009")
    assert cg.message.startswith("ambiguous option: --cuda-graph-max-bs could match "
                                 "--cuda-graph-max-bs-decode and --cuda-graph-max-bs-prefill")
    assert "was last accepted by SGLang 0.5.19:" in cg.message
    assert "use --cuda-graph-max-bs-decode" in cg.message
    assert next(x for x in cg.fixes if x.preferred).safe
    assert "use --attention-backend triton" in fi.message
    assert "--disable-flashinfer-autotune" not in next(x for x in fi.fixes if x.preferred).title
    fixed, _ = fix_all_text(script, "up.sh", settings=Settings(sglang_version="0.5.23"))
    assert "--cuda-graph-max-bs-decode 8 --disable-flashinfer" in fixed  # only the safe one


def test_a_former_option_read_as_another_by_abbreviation():
    _, findings = run("--return-hidden-states --trust-remote-code")
    assert not by_code(findings, "SL004")
    (f,) = by_code(findings, "SL009")
    assert f.severity.label == "warning"
    assert "is read as --return-hidden-states-mode, a different option" in f.message


def test_renames_keep_the_value_and_are_safe():
    script = (f"{ENTRY} --model-path m --file-storage-pth /data --impl=transformers "
              "--max-micro-batch-size 4 --cuda-graph-max-bs 16\n")
    fixed, _ = fix_all_text(script, "up.sh", settings=Settings(sglang_version="0.5.23"))
    assert fixed == (f"{ENTRY} --model-path m --file-storage-path /data --model-impl=transformers "
                     "--pp-max-micro-batch-size 4 --cuda-graph-max-bs-decode 16\n")


def test_a_successor_that_left_too_is_followed_or_explained():
    _, findings = run("--enable-flashinfer-moe")
    (f,) = by_code(findings, "SL009")
    assert "its successor --enable-flashinfer-cutlass-moe was removed too" in f.message
    assert "use --moe-runner-backend flashinfer_cutlass" in f.message
    _, findings = run("--enforce-piecewise-cuda-graph")
    (f,) = by_code(findings, "SL009")
    assert "no longer accepts 'tc_piecewise'" in f.message
    assert [x.title for x in f.fixes] == ["Remove --enforce-piecewise-cuda-graph"]


def test_judged_by_an_older_release():
    _, findings = run("--enable-ep-moe --cuda-graph-max-bs-decode 8", version="0.5.8")
    (f,) = by_code(findings, "SL009")
    assert "SGLang 0.5.8 has no such option" in f.message
    (g,) = by_code(findings, "SL001")
    assert "SGLang 0.5.14 added it" in g.message and not g.fixes[:-1]
    info = retired("--hybrid-kvcache-ratio", load_catalog("0.5.8"))
    assert info is not None and info.last == "0.5.7"
    assert retired("--hybrid-kvcache-ratio", load_catalog("0.5.7")) is None


def test_deprecated_says_since_when_and_an_alias_keeps_its_value():
    script, findings = run("--cuda-graph-max-bs 8 --stream-output", version="0.5.14")
    msgs = [f.message for f in by_code(findings, "SL008")]
    assert any("'--cuda-graph-max-bs' is deprecated since SGLang 0.5.14" in m for m in msgs)
    fixed, _ = fix_all_text(script, "up.sh", settings=Settings(sglang_version="0.5.14"))
    assert "--cuda-graph-max-bs-decode 8 --incremental-streaming-output" in fixed


def test_a_value_that_left_the_choices():
    script, findings = run("--tool-call-parser qwen3 --attention-backend cutlass_mla")
    tc, ab = by_code(findings, "SL007")
    assert ("'qwen3' was accepted by --tool-call-parser until SGLang 0.4.9.post3; "
            "SGLang 0.4.9.post4 renamed it 'qwen3_coder'") in tc.message
    assert [x.title for x in tc.fixes] == ["Use 'qwen3_coder'"]
    assert "until SGLang 0.5.19, and no value replaced it" in ab.message
    assert retired_value(("--tool-call-parser",), "qwen3", load_catalog("0.4.9.post3")) is None


# --- did you mean ----------------------------------------------------------------------------

def test_same_feature():
    assert same_feature("--tensor-paralel-size", "--tensor-parallel-size")
    assert same_feature("--mem-frac-static", "--mem-fraction-static")
    assert same_feature("--enable-torchcompile", "--enable-torch-compile")
    assert not same_feature("--tensor-paralel-size", "--expert-parallel-size")
    assert not same_feature("--enable-ep-moe", "--enable-eplb")
    assert not same_feature("--cuda-graph-bs", "--cuda-graph-max-bs")
    assert not same_feature("--model-mode", "--model-impl")
    assert edit_distance("pytroch", "pytorch") == 1
    assert close_options("--enable-ep-moe", load_catalog().long_names()) == []


def test_did_you_mean_keeps_the_written_kind():
    cat = load_catalog("0.5.23")
    assert suggestions(cat, "--trust-remote-cod", kind="switch") == ["--trust-remote-code"]
    assert suggestions(cat, "--trust-remote-cod", kind="value") == []
    assert suggestions(cat, "--mem-fraction-statc", kind="switch") == []
    assert suggestions(cat, "--mem-fraction-statc", kind="value") == ["--mem-fraction-static"]
    _, findings = run("--trust-remot-code=1 --mem-fraction-statc 0.8 --enable-metricz")
    msgs = [f.message for f in by_code(findings, "SL001")]
    assert msgs == [
        "unrecognized arguments: --trust-remot-code (SGLang 0.5.23 has no such option)",
        "unrecognized arguments: --mem-fraction-statc (SGLang 0.5.23 has no such option; "
        "did you mean --mem-fraction-static?)",
        "unrecognized arguments: --enable-metricz (SGLang 0.5.23 has no such option; "
        "did you mean --enable-metrics?)"]


# --- hover -------------------------------------------------------------------------------------

def _history(name, version):
    return [line.strip() for line in option_markdown(load_catalog(version).lookup(name),
                                                     version).split("\n")
            if line.startswith(("History:", "After "))]


def test_hover_shows_the_history():
    assert _history("--cuda-graph-max-bs", "0.5.14") == [
        "History: present since 0.4.0, the oldest release servelint knows; deprecated in 0.5.14 "
        "(use --cuda-graph-max-bs-decode)",
        "After 0.5.14: removed in 0.5.20"]
    (tc,) = _history("--tool-call-parser", "0.5.23")
    assert tc.startswith("History: added in 0.4.2; choices changed in ")
    assert tc.endswith("values dropped: qwen3 (0.4.9.post4)")
    assert _history("--cuda-graph-max-bs-decode", "0.5.23") == ["History: added in 0.5.14"]
    ep = _history("--enable-ep-moe", "0.4.9")
    assert ep[1] == "After 0.4.9: deprecated in 0.4.10.post2; retired in 0.5.3rc2; removed in 0.5.4.post1"


def test_hover_shows_default_changes():
    from servelint.catalog import history
    h = history()
    name = next(n for n in h.names() if n.startswith("--") and any(
        e.kind == "default" for e in h.events(n)) and h.last_seen(n) == "0.5.23")
    event = next(e for e in h.events(name) if e.kind == "default")
    lines = _history(name, "0.5.23")
    assert f"default changed in {event.version} ({event.detail.removeprefix('default ')})" in lines[0]


def test_a_removed_option_the_history_does_not_know_keeps_sglangs_message():
    from servelint.args import Reader
    from servelint.catalog import Catalog
    from servelint.checks.removed_option import run as removed
    from servelint.extract.shell import extract_shell
    from servelint.model import LineIndex
    data = {"version": "test", "options": [
        {"names": ["--model-path"], "dest": "model_path", "kind": "value", "nargs": None,
         "action": "store", "type": "str", "choices": None, "default": None},
        {"names": ["--old-flag"], "dest": "old_flag", "kind": "flag", "nargs": 0,
         "action": "DeprecatedAction", "type": None, "choices": None, "default": None,
         "deprecated": True, "removed": True, "message": "--old-flag was removed; use --new-flag"},
    ]}
    text = f"{ENTRY} --model-path m --old-flag\n"
    launch = extract_shell(text, LineIndex(text)).launches[0]
    (f,) = removed(Reader(Catalog(data)).read(launch), None)
    assert f.message == "--old-flag was removed; use --new-flag"
    assert [x.title for x in f.fixes] == ["Remove --old-flag"]
