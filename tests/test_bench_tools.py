"""The benchmark's tools that do not measure: the README table generator, the parsing of
results.json, the peer rows and ratios, the edit site, and the generated inputs. No
timing is asserted here."""

from __future__ import annotations

import ast
import json
import os
import sys

import pytest
import yaml

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)

import gen  # noqa: E402
import peers  # noqa: E402
import readme_table  # noqa: E402
from lspclient import is_publish_for  # noqa: E402


def results(rows=None, meta=None):
    return {"lsp": {"other": 1}, "peers": {
        "meta": meta if meta is not None else {
            "date_utc": "2026-12-01 23:00", "servelint": "HEAD abc1234", "cpus": 2,
            "load_before": [1.5, 1, 1], "load_after": [2.25, 1, 1],
            "versions": {"shellcheck": "0.9.0", "bash-language-server": "5.8.1",
                         "yaml-language-server": "1.25.0", "ruff": "0.17.6"},
            "notes": ["apt-get not available"]},
        "rows": rows if rows is not None else [
            peers.make_row("edit_script_200", "edit → diagnostics, 200-line script",
                           {"median_ms": 4.5}, "bash-language-server 5.8.1 + ShellCheck 0.9.0",
                           {"median_ms": 580.0}, "waits 500 ms (counted)"),
            peers.make_row("edit_yaml_20k", "edit → diagnostics, 20k YAML | k8s",
                           {"median_ms": 1315.0}, "yaml-language-server 1.25.0",
                           {"median_ms": 452.0}),
            peers.make_row("edit_script_20k", "edit → diagnostics, 20k script",
                           {"median_ms": 250.0}, "bash-language-server",
                           {"error": "no diagnostics for the opened file within 30 s",
                            "log": ["ShellCheck: timed out"]}),
        ]}}


# --- rows and ratios ---------------------------------------------------------------------


def test_ratio_is_servelint_over_peer_and_none_when_a_side_is_missing():
    assert peers.ratio(50.0, 200.0) == 0.25
    assert peers.ratio(300.0, 100.0) == 3.0
    assert peers.ratio(None, 100.0) is None
    assert peers.ratio(10.0, None) is None
    assert peers.ratio(10.0, 0.0) is None


def test_make_row_takes_the_medians_and_notes_a_failed_side_with_its_log():
    ok = peers.make_row("k", "m", {"median_ms": 10.0}, "peer 1", {"median_ms": 40.0}, "note")
    assert (ok["servelint_ms"], ok["peer_ms"], ok["ratio"], ok["note"]) == (10.0, 40.0, 0.25, "note")
    bad = peers.make_row("k", "m", {"median_ms": 10.0}, "peer 1",
                         {"error": "LspError: none", "log": ["timed out after 10000ms"]})
    assert bad["peer_ms"] is None and bad["ratio"] is None
    assert "peer: LspError: none" in bad["note"] and "timed out after 10000ms" in bad["note"]


def test_short_error_names_a_timed_out_wait_plainly():
    from lspclient import LspError
    exc = LspError("no publishDiagnostics for file:///x/a.sh version 1 within 30.0 s")
    assert peers.short_error(exc) == "no diagnostics for the opened file within 30 s"
    exc = LspError("no publishDiagnostics for file:///x/a.sh version 4 within 60.0 s")
    assert peers.short_error(exc) == "no diagnostics for version 4 within 60 s"
    assert peers.short_error(ValueError("boom")) == "ValueError: boom"


def test_log_messages_keep_what_went_wrong_else_the_last_line():
    from lspclient import LspClient, Received

    def client_with(*messages):
        c = LspClient(["true"])
        c.notifications = [Received(0.0, {"method": "window/logMessage", "params": {"message": m}})
                           for m in messages]
        return c
    assert peers.log_messages(client_with("deprecated setting", "ShellCheck: timed out after 10000ms",
                                          "ready")) == ["ShellCheck: timed out after 10000ms"]
    assert peers.log_messages(client_with("a", "b")) == ["b"]
    assert peers.log_messages(client_with()) == []


def test_open_result_takes_the_open_time_or_keeps_the_error():
    assert peers.open_result({"open_ms": 12.5, "median_ms": 3.0}) == {"median_ms": 12.5}
    err = peers.open_result({"error": "no diagnostics", "log": ["timed out"]})
    assert err == {"error": "no diagnostics", "log": ["timed out"]}
    assert peers.open_result(None) is None
    row = peers.make_row("open_x", "open", peers.open_result({"open_ms": 10.0}), "p",
                         peers.open_result({"open_ms": 40.0}))
    assert row["ratio"] == 0.25


def test_goal_verdicts_follow_issue_16():
    assert peers.goal_verdict("edit_script_20k", 19.0, None) == "issue 16 goal: ≤ 20 ms (met)"
    assert peers.goal_verdict("edit_python_20k", 51.0, 5.0) == "issue 16 goal: ≤ 50 ms (not met)"
    assert peers.goal_verdict("edit_yaml_20k", 400.0, 500.0) == "issue 16 goal: faster than the peer (met)"
    assert peers.goal_verdict("edit_yaml_20k", 400.0, None) == "issue 16 goal: faster than the peer (unknown)"
    assert peers.goal_verdict("edit_script_200", 4.0, 500.0) == ""
    row = peers.make_row("cli_script_200", "m", {"median_ms": 145.0}, "p", {"median_ms": 36.0}, "start")
    assert row["note"] == "start; issue 16 goal: ≤ 80 ms (not met)"


def test_peer_labels_name_versions_and_shellcheck():
    v = {"bash-language-server": "5.8.1", "shellcheck": "0.9.0", "ruff": "0.17.6"}
    assert peers.peer_label("bash-language-server", v) == "bash-language-server 5.8.1 + ShellCheck 0.9.0"
    assert "no ShellCheck" in peers.peer_label("bash-language-server", {**v, "shellcheck": None})
    assert peers.peer_label("ruff server", v) == "ruff server 0.17.6"


def test_edit_sites_are_flag_value_digits_of_different_launches_past_the_middle():
    text = gen.script(2000, 40, seed=1)
    sites = peers.edit_sites(text, 5)
    assert len(sites) == 5 and len({at for at, _, _ in sites}) == 5
    launch_starts = set()
    for at, old, new in sites:
        assert at > len(text) // 2 and text[at] == old and old.isdigit() and new.isdigit() and old != new
        assert "--tp-size" in text[text.rfind("\n", 0, at):at]
        launch_starts.add(text.rfind("sglang.launch_server", 0, at))
    assert len(launch_starts) == 5  # each edit changes another launch


def test_edit_sites_wrap_around_and_never_repeat_a_launch_text():
    text = gen.script(200, 8, seed=1)
    sites = peers.edit_sites(text, 10)
    flags = text.count("--tp-size")  # one of the 8 launches has --tp_size instead
    assert flags < 10 and len({at for at, _, _ in sites}) == flags  # then it wraps around
    cur = text
    seen_texts = set()
    for at, old, new in sites:
        assert cur[at] == old != new
        cur = cur[:at] + new + cur[at + 1:]
        start = cur.rfind("sglang.launch_server", 0, at)
        launch = cur[start:cur.find("&", at)]
        assert launch not in seen_texts
        seen_texts.add(launch)
    with pytest.raises(ValueError):
        peers.edit_sites("no flags here", 1)


def test_is_publish_for_matches_version_or_no_version():
    def pub(uri, version=None):
        p = {"uri": uri, "diagnostics": []}
        if version is not None:
            p["version"] = version
        return {"method": "textDocument/publishDiagnostics", "params": p}
    assert is_publish_for(pub("u", 3), "u", 3)
    assert not is_publish_for(pub("u", 2), "u", 3)
    assert is_publish_for(pub("u"), "u", 3)
    assert not is_publish_for(pub("v", 3), "u", 3)
    assert not is_publish_for({"method": "window/logMessage", "params": {"uri": "u"}}, "u", 3)


def test_merge_results_keeps_other_keys(tmp_path):
    path = tmp_path / "out" / "results.json"
    peers.merge_results(str(path), "peers", {"rows": []})
    path.write_text(json.dumps({"lsp": {"x": 1}, "peers": {"rows": [1]}}))
    data = peers.merge_results(str(path), "peers", {"rows": [2]})
    assert data == {"lsp": {"x": 1}, "peers": {"rows": [2]}}
    assert json.loads(path.read_text()) == data
    path.write_text("not json")
    assert peers.merge_results(str(path), "peers", {}) == {"peers": {}}


def test_print_table_has_one_line_per_row_and_the_ratio(capsys):
    rows = results()["peers"]["rows"]
    peers.print_table(rows)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 + len(rows)
    assert "servelint" in out[0] and "ratio" in out[0]
    assert "4.5 ms" in out[2] and "580 ms" in out[2] and "129" in out[2]
    assert "none within 30 s" in out[4]


# --- the README table --------------------------------------------------------------------


def test_load_rows_reads_the_peers_key_and_refuses_what_is_not_there():
    meta, rows = readme_table.load_rows(results())
    assert meta["cpus"] == 2 and len(rows) == 3
    with pytest.raises(readme_table.TableError, match="bench-peers"):
        readme_table.load_rows({"lsp": {}})
    with pytest.raises(readme_table.TableError, match="lacks"):
        readme_table.load_rows(results(rows=[{"key": "k", "measure": "m"}]))


def test_render_makes_a_markdown_table_with_the_ratio_and_notes():
    meta, rows = readme_table.load_rows(results())
    md = readme_table.render(meta, rows)
    lines = md.splitlines()
    header = lines.index("| measure | servelint | peer | ratio |")
    table = lines[header:header + 2 + len(rows)]
    assert all(l.startswith("| ") and l.endswith(" |") for l in table)
    assert table[2] == ("| edit → diagnostics, 200-line script | 4.5 ms | "
                        "bash-language-server 5.8.1 + ShellCheck 0.9.0: 580 ms | 0.0078 (129× faster) |")
    # a pipe inside a cell is escaped, so the row keeps four columns
    assert "20k YAML \\| k8s" in table[3] and "2.91 (2.91× slower)" in table[3]
    assert "bash-language-server: none within 30 s" in table[4] and table[4].endswith("| – |")
    assert "HEAD abc1234" in md and "2 CPUs" in md and "1.5 before and 2.25 after" in md
    assert "- edit → diagnostics, 200-line script: waits 500 ms (counted)" in lines
    assert "- apt-get not available" in lines


def test_fmt_ms_rounds_and_says_why_a_figure_is_missing():
    assert readme_table.fmt_ms(4.567) == "4.6 ms"
    assert readme_table.fmt_ms(1315.2) == "1,315 ms"
    assert readme_table.fmt_ms(None, "no diagnostics for version 3 within 60 s") == "none within 60 s"
    assert readme_table.fmt_ms(None, "LspError: server closed its output") == "no result"
    assert readme_table.fmt_ms(None) == "no result"


def test_replace_section_changes_only_the_text_between_the_markers():
    readme = "# T\n\nbefore\n<!-- bench:start -->\nold table\n<!-- bench:end -->\nafter\n"
    new = readme_table.replace_section(readme, "new table\n")
    assert new == "# T\n\nbefore\n<!-- bench:start -->\nnew table\n<!-- bench:end -->\nafter\n"
    assert readme_table.replace_section(new, "new table") == new  # idempotent
    with pytest.raises(readme_table.TableError):
        readme_table.replace_section("no markers", "x")
    with pytest.raises(readme_table.TableError):
        readme_table.replace_section("<!-- bench:end -->\n<!-- bench:start -->", "x")
    with pytest.raises(readme_table.TableError):
        readme_table.replace_section(readme + readme, "x")


def test_main_writes_the_readme_and_check_reports_drift(tmp_path):
    res = tmp_path / "results.json"
    res.write_text(json.dumps(results()))
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- bench:start -->\n<!-- bench:end -->\nrest\n")
    args = ["--results", str(res), "--readme", str(readme)]
    assert readme_table.main(args + ["--check"]) == 1
    assert readme_table.main(args) == 0
    text = readme.read_text()
    assert text.startswith("intro\n<!-- bench:start -->\n") and text.endswith("<!-- bench:end -->\nrest\n")
    assert "| measure | servelint | peer | ratio |" in text
    assert readme_table.main(args + ["--check"]) == 0
    res.write_text(json.dumps({"lsp": {}}))
    assert readme_table.main(args) == 2
    assert readme.read_text() == text


def test_the_readme_has_the_markers():
    with open(os.path.join(os.path.dirname(BENCH), "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    assert text.count(readme_table.START) == 1 and text.count(readme_table.END) == 1
    readme_table.replace_section(text, "x")


# --- generated inputs ------------------------------------------------------------------------


@pytest.mark.parametrize("n_lines,n_launches", [(200, 4), (4000, 50)])
def test_k8s_yaml_has_exact_lines_and_one_deployment_per_launch(n_lines, n_launches):
    text = gen.k8s_yaml(n_lines, n_launches, seed=11)
    assert text.count("\n") == n_lines and text == gen.k8s_yaml(n_lines, n_launches, seed=11)
    docs = [d for d in yaml.safe_load_all(text) if d]
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    assert len(deployments) == n_launches == text.count("sglang.launch_server")
    cmd = deployments[0]["spec"]["template"]["spec"]["containers"][0]["command"]
    assert cmd[:3] == ["python3", "-m", "sglang.launch_server"]
    assert any(d["kind"] in ("Service", "ConfigMap") for d in docs)
    assert "--tp_size" in text  # every 4th launch has a mistake


@pytest.mark.parametrize("n_lines,n_launches", [(200, 4), (2000, 100)])
def test_python_launches_has_exact_lines_and_launchers(n_lines, n_launches):
    text = gen.python_launches(n_lines, n_launches, seed=12)
    assert text.count("\n") == n_lines and text == gen.python_launches(n_lines, n_launches, seed=12)
    tree = ast.parse(text)
    names = [f.name for f in tree.body if isinstance(f, ast.FunctionDef)]
    assert sum(n.startswith("launch_") for n in names) == n_launches
    assert any(n.startswith("helper_") for n in names)


def test_generators_refuse_more_launches_than_lines():
    with pytest.raises(ValueError):
        gen.k8s_yaml(100, 10, seed=1)
    with pytest.raises(ValueError):
        gen.python_launches(100, 20, seed=1)
