"""`servelint check --format`: text, json, json-lines, sarif, github, gitlab, junit (issue 15).

Every format is written from the same records (servelint/report.py): a golden file per format
over the same input (tests/golden/formats/input/), and tests of what each consumer needs.

The SARIF schema in tests/data/sarif-schema-2.1.0.json is the OASIS SARIF 2.1.0 (errata 01)
schema, `sarif-2.1/schema/sarif-schema-2.1.0.json` of github.com/oasis-tcs/sarif-spec at
commit e0583813964ec43cea53b6b531b402866095ed1f (its `id`:
https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json).

Set SERVELINT_UPDATE_GOLDEN=1 to rewrite the golden outputs, then review the diff.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from servelint import __version__, cli, report
from servelint.cli import main
from servelint.docs import PAGES

GOLDEN = Path(__file__).parent / "golden" / "formats"
INPUTS = ["launch.sh", "compose.yaml", "clean.sh"]
SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
UPDATE = os.environ.get("SERVELINT_UPDATE_GOLDEN") == "1"
BAD = "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp_size 2 --dtype fp16\n"


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    """The golden inputs copied to a folder that is the working folder, named relatively."""
    for name in INPUTS:
        shutil.copy(GOLDEN / "input" / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(["check", "--isolated", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def normalised(out: str) -> str:
    """The output without what depends on the machine: the installed rule pages' folder
    (a `file:` URI) and servelint's version (in the SARIF driver)."""
    out = out.replace(PAGES.as_uri(), "{PAGES}")
    return re.sub(r'("name": "servelint",\s*"version": )"[^"]*"', r'\1"{VERSION}"', out)


@pytest.mark.parametrize("fmt", report.FORMATS)
def test_golden_output_per_format(fmt, inputs, capsys):
    # The release pinned, so that a newer catalog does not change what the goldens show.
    code, out, _ = run(capsys, "--sglang-version", "0.5.23", "--format", fmt, *INPUTS)
    assert code == 1  # two errors in launch.sh
    got = normalised(out)
    expected = GOLDEN / f"output.{fmt}"
    if UPDATE:
        expected.write_text(got, encoding="utf-8")
    assert expected.exists(), f"missing {expected}; run with SERVELINT_UPDATE_GOLDEN=1"
    assert got == expected.read_text(encoding="utf-8")


def findings_of(fmt: str, out: str) -> list[tuple[str, str, int, int]]:
    """(path, code, line, column) of each finding, read back from one format's output."""
    if fmt == "text":
        rows = [re.match(r"(.+?):(\d+):(\d+): \w+ (\S+) ", line).groups() for line in out.splitlines()]
        return [(p, c, int(l), int(col)) for p, l, col, c in rows]
    if fmt in ("json", "json-lines"):
        recs = json.loads(out) if fmt == "json" else [json.loads(l) for l in out.splitlines()]
        return [(r["path"], r["code"], r["range"]["start"]["line"] + 1,
                 r["range"]["start"]["character"] + 1) for r in recs]
    if fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        locs = [r["locations"][0]["physicalLocation"] for r in results]
        return [(loc["artifactLocation"]["uri"], r["ruleId"], loc["region"]["startLine"],
                 loc["region"]["startColumn"]) for r, loc in zip(results, locs)]
    if fmt == "github":
        rows = [re.match(r"::\w+ file=(.+?),line=(\d+),col=(\d+),.*title=(\w+)::", line).groups()
                for line in out.splitlines()]
        return [(p, c, int(l), int(col)) for p, l, col, c in rows]
    if fmt == "gitlab":
        return [(i["location"]["path"], i["check_name"], i["location"]["lines"]["begin"], None)
                for i in json.loads(out)]
    assert fmt == "junit"
    cases = ET.fromstring(out).iter("testcase")
    out_rows = []
    for case in cases:
        if case.find("failure") is None:
            continue
        code, at = case.get("name").split(" at ")
        line, col = at.split(":")
        out_rows.append((case.get("file"), code, int(line), int(col)))
    return out_rows


def test_every_format_reports_the_same_findings(inputs, capsys):
    _, out, _ = run(capsys, "--format", "json", *INPUTS)
    want = findings_of("json", out)
    assert len(want) == 5 and {p for p, *_ in want} == {"launch.sh", "compose.yaml"}
    for fmt in report.FORMATS:
        _, out, _ = run(capsys, "--format", fmt, *INPUTS)
        got = findings_of(fmt, out)
        if fmt == "gitlab":  # Code Quality has lines, no columns
            assert got == [(p, c, l, None) for p, c, l, _ in want], fmt
        else:
            assert got == want, fmt


def test_json_is_one_array_and_json_lines_one_record_per_line(inputs, capsys):
    _, array, _ = run(capsys, "--format", "json", *INPUTS)
    _, lines, _ = run(capsys, "--format", "json-lines", *INPUTS)
    records = json.loads(array)
    assert isinstance(records, list)
    assert [json.loads(l) for l in lines.splitlines()] == records
    _, clean, _ = run(capsys, "--format", "json", "clean.sh")
    assert json.loads(clean) == []


def test_records_carry_fix_applicability_and_the_rule_url(inputs, capsys):
    _, out, _ = run(capsys, "--format", "json", "launch.sh")
    by_code = {r["code"]: r for r in json.loads(out)}
    sl002 = by_code["SL002"]["fixes"][0]
    assert sl002["applicability"] == "safe" and sl002["safe"] is True
    assert [f["applicability"] for f in by_code["SL007"]["fixes"]] == ["unsafe"] * 3
    assert all(f["safe"] is False for f in by_code["SL007"]["fixes"])
    for code, rec in by_code.items():
        assert rec["url"] == (PAGES / f"{code}.md").as_uri()
        assert Path(PAGES / f"{code}.md").is_file()


# --- SARIF ----------------------------------------------------------------------------------

def sarif_validator():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_sarif_is_valid_against_the_sarif_2_1_0_schema(inputs, capsys):
    validator = sarif_validator()
    _, out, _ = run(capsys, "--format", "sarif", *INPUTS)
    log = json.loads(out)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors]
    # A clean run is a valid log too.
    _, clean, _ = run(capsys, "--format", "sarif", "clean.sh")
    assert list(validator.iter_errors(json.loads(clean))) == []
    assert json.loads(clean)["runs"][0]["results"] == []


def test_the_schema_check_rejects_a_broken_log(inputs, capsys):
    """The validation can fail: the same log with a result that lost its message, or a
    region with a 0 line, is refused."""
    validator = sarif_validator()
    _, out, _ = run(capsys, "--format", "sarif", "launch.sh")
    log = json.loads(out)
    del log["runs"][0]["results"][0]["message"]
    assert list(validator.iter_errors(log))
    log = json.loads(out)
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert list(validator.iter_errors(log))


def test_sarif_rules_results_and_fixes(inputs, capsys):
    _, records, _ = run(capsys, "--format", "json", "launch.sh")
    records = json.loads(records)
    _, out, _ = run(capsys, "--format", "sarif", "launch.sh")
    sarif_run = json.loads(out)["runs"][0]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "servelint" and driver["version"] == __version__
    rules = {r["id"]: r for r in driver["rules"]}
    assert set(rules) == {r["code"] for r in records}
    assert rules["SL002"]["name"] == "underscore-option"
    assert rules["SL002"]["shortDescription"]["text"] == "Option written with underscores"
    assert rules["SL002"]["helpUri"] == (PAGES / "SL002.md").as_uri()
    assert rules["SL002"]["defaultConfiguration"] == {"level": "error"}
    assert rules["SL004"]["defaultConfiguration"] == {"level": "note"}  # a hint
    assert sarif_run["columnKind"] == "utf16CodeUnits"
    for res, rec in zip(sarif_run["results"], records):
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"] == rec["code"]
        region = res["locations"][0]["physicalLocation"]["region"]
        start, end = rec["range"]["start"], rec["range"]["end"]
        assert region == {"startLine": start["line"] + 1, "startColumn": start["character"] + 1,
                          "endLine": end["line"] + 1, "endColumn": end["character"] + 1}
        assert res["message"]["text"] == rec["message"]
        assert len(res.get("fixes", [])) == len(rec["fixes"])
    sl002 = next(r for r in sarif_run["results"] if r["ruleId"] == "SL002")
    fix = sl002["fixes"][0]
    assert fix["description"]["text"] == "Replace --tp_size with --tp-size"
    assert fix["properties"] == {"applicability": "safe"}
    change = fix["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "launch.sh"
    # The replacement, applied to the file by its 1-based columns (UTF-16 units; the line
    # has an emoji before it), gives what --fix writes.
    rep = change["replacements"][0]
    line = (inputs / "launch.sh").read_text(encoding="utf-8").splitlines()[2]
    units = line.encode("utf-16-le")
    a, b = rep["deletedRegion"]["startColumn"] - 1, rep["deletedRegion"]["endColumn"] - 1
    assert units[2 * a:2 * b].decode("utf-16-le") == "--tp_size"
    assert rep["insertedContent"]["text"] == "--tp-size"


def test_sarif_uri_of_an_absolute_path_and_of_a_name_to_escape(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my dir").mkdir()
    p = tmp_path / "my dir" / "run 1.sh"
    p.write_text(BAD, encoding="utf-8")
    _, out, _ = run(capsys, "--format", "sarif", "my dir/run 1.sh", str(p))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(out)["runs"][0]["results"]]
    assert uris[0] == "my%20dir/run%201.sh"
    assert uris[-1] == p.as_uri() and uris[-1].startswith("file:///")
    assert list(sarif_validator().iter_errors(json.loads(out))) == []


# --- GitHub ---------------------------------------------------------------------------------

def runner_unescape_data(text: str) -> str:
    """How the GitHub Actions runner reads a workflow command's message back
    (actions/runner ActionCommand: %0D, %0A, then %25)."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def runner_unescape_property(text: str) -> str:
    for esc, ch in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(esc, ch)
    return text


def parse_command(line: str) -> tuple[str, dict, str]:
    m = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
    assert m, line
    props = dict(kv.split("=", 1) for kv in m.group(2).split(","))
    return m.group(1), {k: runner_unescape_property(v) for k, v in props.items()}, \
        runner_unescape_data(m.group(3))


def test_github_escapes_as_the_runner_reads_back():
    rec = {"path": "deploy:v2/run,1.sh", "code": "SL002", "severity": "warning",
           "message": "100% sure: a, b\r\nsecond line %0A stays text",
           "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}},
           "fixes": []}
    line = report.github_line(rec)
    assert line == ("::warning file=deploy%3Av2/run%2C1.sh,line=1,col=5,endLine=1,endColumn=10,"
                    "title=SL002::100%25 sure: a, b%0D%0Asecond line %250A stays text")
    assert "\n" not in line and "\r" not in line
    level, props, message = parse_command(line)
    assert level == "warning" and message == rec["message"]
    assert props == {"file": "deploy:v2/run,1.sh", "line": "1", "col": "5", "endLine": "1",
                     "endColumn": "10", "title": "SL002"}


def test_github_levels_and_paths_relative_to_the_workspace(inputs, capsys):
    (inputs / "sub").mkdir()
    shutil.copy(inputs / "launch.sh", inputs / "sub" / "launch.sh")
    _, out, _ = run(capsys, "--format", "github", str(inputs / "sub" / "launch.sh"), "compose.yaml")
    cmds = [parse_command(l) for l in out.splitlines()]
    assert {p["file"] for _, p, _ in cmds} == {"sub/launch.sh", "compose.yaml"}
    levels = {p["title"]: level for level, p, _ in cmds}
    assert levels == {"SL002": "error", "SL007": "error", "SL004": "notice", "SL010": "warning",
                      "SL008": "warning"}


# --- GitLab ---------------------------------------------------------------------------------

def test_gitlab_code_quality_report(inputs, capsys):
    _, out, _ = run(capsys, "--format", "gitlab", *INPUTS)
    issues = json.loads(out)
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issue)
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert isinstance(issue["location"]["lines"]["begin"], int)
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert {i["check_name"]: i["severity"] for i in issues} == {
        "SL002": "major", "SL007": "major", "SL004": "info", "SL010": "minor", "SL008": "minor"}


def test_gitlab_fingerprints_are_stable(inputs, capsys):
    """The same findings get the same fingerprints in another run, from another folder, and
    when lines are added above them; two identical findings in one file differ."""
    _, first, _ = run(capsys, "--format", "gitlab", "launch.sh")
    _, again, _ = run(capsys, "--format", "gitlab", str(inputs / "launch.sh"))
    prints = [i["fingerprint"] for i in json.loads(first)]
    assert [i["fingerprint"] for i in json.loads(again)] == prints
    text = (inputs / "launch.sh").read_text(encoding="utf-8")
    head, rest = text.split("\n", 1)
    (inputs / "launch.sh").write_text(f"{head}\n# a new comment\n\n{rest}", encoding="utf-8")
    _, moved, _ = run(capsys, "--format", "gitlab", "launch.sh")
    moved_issues = json.loads(moved)
    assert [i["fingerprint"] for i in moved_issues] == prints
    assert [i["location"]["lines"]["begin"] for i in moved_issues] == [
        i["location"]["lines"]["begin"] + 2 for i in json.loads(first)]
    twice = "#!/bin/bash\npython3 -m sglang.launch_server --tp_size 2\npython3 -m sglang.launch_server --tp_size 2\n"
    (inputs / "twice.sh").write_text(twice, encoding="utf-8")
    _, out, _ = run(capsys, "--format", "gitlab", "twice.sh")
    same = [i for i in json.loads(out) if i["check_name"] == "SL002"]
    assert len(same) == 2 and same[0]["fingerprint"] != same[1]["fingerprint"]


# --- JUnit --------------------------------------------------------------------------------

def test_junit_one_suite_per_file_one_failure_per_finding(inputs, capsys):
    _, out, _ = run(capsys, "--format", "junit", *INPUTS)
    root = ET.fromstring(out)
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == INPUTS
    assert [len(s.findall("testcase/failure")) for s in suites.values()] == [4, 1, 0]
    assert root.get("failures") == "5" and root.get("tests") == "6"
    clean = suites["clean.sh"].findall("testcase")
    assert len(clean) == 1 and clean[0].find("failure") is None
    failure = suites["launch.sh"].find("testcase/failure")
    assert failure.get("message").startswith("SL002 unrecognized arguments: --tp_size")
    assert failure.get("type") == "error"


def test_junit_of_a_clean_run_is_a_valid_document(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.sh").write_text(
        "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp-size 2\n")
    code, out, _ = run(capsys, "--format", "junit", "ok.sh")
    assert code == 0
    root = ET.fromstring(out)
    assert (root.get("tests"), root.get("failures")) == ("1", "0")
    (tmp_path / "empty").mkdir()
    code, out, _ = run(capsys, "--format", "junit", "empty")
    assert code == 0
    root = ET.fromstring(out)
    assert root.tag == "testsuites" and root.get("tests") == "0" and list(root) == []


# --- text and colour ----------------------------------------------------------------------------

def test_text_summary_on_stderr(inputs, capsys):
    _, out, err = run(capsys, *INPUTS)
    assert out.splitlines()[0] == ("launch.sh:3:74: error SL002 unrecognized arguments: --tp_size "
                                   "(SGLang spells it --tp-size)")
    assert err.splitlines()[-1] == "5 finding(s) in 3 file(s): 2 error, 2 warning, 1 hint"
    for fmt in ("json", "sarif", "github"):
        _, _, err = run(capsys, "--format", fmt, *INPUTS)
        assert "finding(s)" not in err  # machine formats: stderr stays quiet


def test_color_flag_and_no_color(inputs, capsys, monkeypatch):
    _, plain, _ = run(capsys, "launch.sh")
    assert "\x1b[" not in plain
    _, always, _ = run(capsys, "--color", "always", "launch.sh")
    assert "\x1b[1;31merror\x1b[0m" in always and "\x1b[1mSL002\x1b[0m" in always
    assert re.sub(r"\x1b\[[0-9;]*m", "", always) == plain
    monkeypatch.setenv("NO_COLOR", "1")
    _, forced, _ = run(capsys, "--color", "always", "launch.sh")
    assert forced == always  # an explicit --color always beats NO_COLOR


class FakeTerminal:
    def __init__(self, tty: bool):
        self.tty = tty

    def isatty(self):
        return self.tty


def test_auto_colour_is_for_terminals_without_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert cli.use_color("auto", FakeTerminal(True)) is True
    assert cli.use_color("auto", FakeTerminal(False)) is False
    assert cli.use_color("never", FakeTerminal(True)) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli.use_color("auto", FakeTerminal(True)) is False
    monkeypatch.setenv("NO_COLOR", "")  # the NO_COLOR convention: only a non-empty value
    assert cli.use_color("auto", FakeTerminal(True)) is True


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_colour_on_a_real_terminal(inputs):
    """Through a pseudo-terminal, as a person runs it: coloured; with NO_COLOR, plain."""
    import pty

    def on_tty(env_extra: dict) -> bytes:
        master, slave = pty.openpty()
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | env_extra
        proc = subprocess.Popen([sys.executable, "-m", "servelint", "check", "--isolated",
                                 "launch.sh"], stdout=slave, stderr=subprocess.DEVNULL, env=env)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the other end closed (Linux raises EIO)
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=120)
        os.close(master)
        return b"".join(chunks)

    coloured = on_tty({})
    assert b"\x1b[1;31merror\x1b[0m" in coloured
    plain = on_tty({"NO_COLOR": "1"})
    assert b"SL002" in plain and b"\x1b[" not in plain


# --- the rest of the command line ---------------------------------------------------------------

def test_output_file(inputs, capsys):
    # a missing folder is created, as Ruff does (`-o reports/servelint.sarif` in CI)
    code, out, _ = run(capsys, "--format", "sarif", "--output-file", "out/servelint.sarif", *INPUTS)
    assert code == 1 and out == ""
    _, direct, _ = run(capsys, "--format", "sarif", *INPUTS)
    assert (inputs / "out" / "servelint.sarif").read_text(encoding="utf-8") == direct
    (inputs / "file").write_text("not a folder")
    code, out, err = run(capsys, "--format", "sarif", "-o", "file/servelint.sarif", *INPUTS)
    assert code == 2 and "--output-file file/servelint.sarif" in err  # said, not a traceback


def test_unknown_format_and_combinations_are_usage_errors(inputs, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--format", "xml", "launch.sh"])
    assert exc.value.code == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err
    code, _, err = run(capsys, "--format", "sarif", "--statistics", "launch.sh")
    assert code == 2 and "--statistics prints a table" in err
    code, _, err = run(capsys, "--format", "json", "--diff", "launch.sh")
    assert code == 2 and "drop --format json" in err


def test_exit_zero_keeps_usage_errors(inputs, capsys):
    assert run(capsys, "launch.sh")[0] == 1
    assert run(capsys, "--exit-zero", "launch.sh")[0] == 0
    assert run(capsys, "--exit-zero", "--format", "sarif", "launch.sh")[0] == 0
    assert run(capsys, "--exit-zero", "no-such-file.sh")[0] == 2


def test_version_is_worked_out_only_when_asked(capsys, monkeypatch, tmp_path):
    import servelint.release as release
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"servelint {__version__}\n")
    assert out == release.version_text() + "\n"
    assert "SGLang releases known:" in out

    def boom():
        raise AssertionError("version_text was called by a check")
    monkeypatch.setattr(release, "version_text", boom)
    (tmp_path / "ok.sh").write_text("#!/bin/bash\npython3 -m sglang.launch_server --model-path m\n")
    assert main(["check", "--isolated", str(tmp_path / "ok.sh")]) == 0


def test_no_respect_gitignore_and_the_exclude_of_the_configuration_in_use(tmp_path, capsys):
    """Walking a folder: a gitignored file is skipped, and linted with --no-respect-gitignore;
    the exclude of the --config file applies, and --isolated reads none."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n")
    for name in ("build/t.sh", "gen/a.sh", "run.sh"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(BAD)
    other = tmp_path / "elsewhere.toml"
    other.write_text('exclude = ["gen/"]\n')

    def linted(*flags) -> set[str]:
        main(["check", "--format", "json", *flags, str(tmp_path)])
        return {os.path.relpath(r["path"], tmp_path) for r in json.loads(capsys.readouterr().out)}

    assert linted("--isolated") == {"gen/a.sh", "run.sh"}
    assert linted("--isolated", "--no-respect-gitignore") == {"build/t.sh", "gen/a.sh", "run.sh"}
    assert linted("--config", str(other)) == {"run.sh"}
    assert linted("--config", str(other), "--no-respect-gitignore") == {"build/t.sh", "run.sh"}
