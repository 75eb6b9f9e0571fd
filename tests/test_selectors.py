"""Codes in settings (select, ignore, extend-*, per-file-ignores, severity keys) must name
a code: servelint's own are judged by the settings field's parser wherever the value comes
from (flag, editor, project file); a rule pack's are judged where the packs are known
(config.py). And "did you mean" for codes reads them as codes (servelint/suggest.py)."""

import pytest

from servelint import cli, config
from servelint.config import parse_table, settings_for
from servelint.docs import all_codes, builtin_codes
from servelint.schema import BY_TOML, Invalid, codes
from servelint.settings import Settings
from servelint.suggest import close_matches

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp_size 2\n"
PACK = ("- id: team-lora\n  code: TEAM-1\n  errorMessage: no LoRA here\n"
        "  condition: {present: --enable-lora}\n")


@pytest.fixture(autouse=True)
def fresh_caches():
    config.invalidate()
    yield
    config.invalidate()


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --- did you mean -------------------------------------------------------------------------


@pytest.mark.parametrize("typed, first", [
    ("SL02", ["SL002", "SL020"]),   # a zero left out: the padded code, then those it begins
    ("SL2", ["SL002"]),
    ("SL0002", ["SL002"]),          # one zero too many
    ("SL04", ["SL004"]),
    ("SK002", ["SL002"]),           # one letter off
    ("SL-002", ["SL002"]),
    ("SL1001", ["SL101"]),          # a digit doubled
    ("SL210", ["SL210"]),           # itself first when it exists
])
def test_a_mistyped_code_suggests_the_code_meant(typed, first):
    got = close_matches(typed, all_codes("latest"), cutoff=0.6)
    assert got[:len(first)] == first, got


def test_sl02_is_not_read_as_sl802():
    got = close_matches("SL02", all_codes("latest"), cutoff=0.6)
    # The old answer (difflib's ties broken by the larger string): SL802, SL602, SL502.
    assert not {"SL802", "SL602", "SL502"} & set(got), got


def test_nearest_number_first_among_one_digit_typos():
    got = close_matches("SL130", ["SL930", "SL131", "SL230", "SL120"], n=4)
    assert got == ["SL131", "SL120", "SL230", "SL930"]


def test_pack_codes_are_codes_too():
    assert close_matches("ACME1", ["ACME-1", "ACME-2", "TEAM-1"], n=1) == ["ACME-1"]
    assert close_matches("TEMA-1", ["TEAM-1", "ACME-1"], n=1) == ["TEAM-1"]


def test_words_that_are_not_codes_are_matched_as_before():
    import difflib
    words = ["--tp-size", "--dp-size", "--tp"]
    assert close_matches("--tp-sise", words, cutoff=0.6) == \
        difflib.get_close_matches("--tp-sise", words, cutoff=0.6) == ["--tp-size", "--dp-size", "--tp"]
    assert close_matches("selct", BY_TOML, n=1, cutoff=0.6) == ["select"]


# --- servelint's own codes: the field's parser ------------------------------------------


def test_an_unknown_own_code_is_invalid_with_a_suggestion():
    with pytest.raises(Invalid) as exc:
        codes(["SL002", "SL04"])
    assert str(exc.value).startswith("names 'SL04', which matches no rule code or code prefix "
                                     "(did you mean SL004?)")
    with pytest.raises(Invalid) as exc:
        codes(["SL04", "sl9999"])
    assert "'SL04' (did you mean SL004?) and 'SL9999'" in str(exc.value)


@pytest.mark.parametrize("ok", [["SL"], ["SL0"], ["SL02"], ["sl101"], ["S"], ["SL0", "SL1"]])
def test_a_prefix_that_matches_a_code_is_fine(ok):
    assert codes(ok) == [x.upper() for x in ok]


def test_a_code_of_an_older_release_only_is_known():
    # Rules with a newer appliesTo are not in 0.4.0's list, but they are servelint's codes.
    older = set(all_codes("0.4.0"))
    newer_only = sorted(builtin_codes() - older)
    assert newer_only, "every rule applies to 0.4.0: pick another release"
    assert codes(newer_only[:3]) == newer_only[:3]


def test_severity_keys_and_per_file_ignores_are_checked():
    problems = parse_table({"severity": {"SL04": "error"}}, "/p/.servelint.toml").problems
    assert problems == ["`severity` names 'SL04', which matches no rule code or code prefix "
                        "(did you mean SL004?); `servelint rules` lists servelint's codes"]
    problems = parse_table({"per-file-ignores": {"legacy/*.sh": ["SL08"]}},
                           "/p/.servelint.toml").problems
    assert len(problems) == 1 and problems[0].startswith(
        "`per-file-ignores` 'legacy/*.sh' names 'SL08', which matches no rule code")


def test_project_file_with_an_unknown_code_is_ignored_as_a_whole(tmp_path):
    write(tmp_path / ".servelint.toml", 'ignore = ["SL04"]\ngpu = "sm90"\n')
    s, problems = settings_for(str(tmp_path / "run.sh"), Settings())
    assert [p.path for p in problems] == [str(tmp_path / ".servelint.toml")]
    assert "did you mean SL004?" in problems[0].message()
    assert s.ignore == [] and s.gpu is None


def test_editor_settings_report_the_key(tmp_path):
    errors: list[str] = []
    s = Settings.from_dict({"servelint": {"ignore": ["SL04"], "select": ["SL0"]}}, errors)
    assert errors == ["servelint.ignore names 'SL04', which matches no rule code or code prefix "
                      "(did you mean SL004?); `servelint rules` lists servelint's codes"]
    assert s.ignore == [] and s.select == ["SL0"]


def test_command_line_flag_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.build_parser().parse_args(["check", "--ignore", "SL002,SL04", "x.sh"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--ignore" in err and "'SL04', which matches no rule code" in err
    assert "did you mean SL004?" in err


# --- rule packs' codes: where the packs are known ----------------------------------------


def test_pack_codes_in_the_project_file(tmp_path):
    write(tmp_path / "packs" / "team.yaml", PACK)
    cfg = write(tmp_path / ".servelint.toml", 'rule-packs = ["packs/team.yaml"]\nignore = ["TEAM"]\n')
    s, problems = settings_for(str(tmp_path / "run.sh"), Settings())
    assert problems == [] and s.ignore == ["TEAM"]
    cfg.write_text('rule-packs = ["packs/team.yaml"]\nignore = ["TEMA"]\n')
    s, problems = settings_for(str(tmp_path / "run.sh"), Settings())
    assert len(problems) == 1
    said = problems[0].message()
    assert "`ignore` names 'TEMA', which matches no rule code or code prefix (did you mean " \
           "TEAM-1?)" in said and "no rule pack read here" in said


def test_project_rules_folder_counts_and_a_new_pack_is_seen(tmp_path):
    write(tmp_path / ".servelint.toml", 'select = ["SL0", "ACME"]\n')
    _, problems = settings_for(str(tmp_path / "run.sh"), Settings())
    assert len(problems) == 1 and "'ACME'" in problems[0].message()
    write(tmp_path / ".servelint" / "rules" / "acme.yaml", PACK.replace("TEAM-1", "ACME-7"))
    config.invalidate(str(tmp_path / ".servelint" / "rules" / "acme.yaml"))  # as the server does
    s, problems = settings_for(str(tmp_path / "run.sh"), Settings())
    assert problems == [] and s.select == ["SL0", "ACME"]


def test_editor_selects_a_workspace_pack_code(tmp_path):
    write(tmp_path / ".servelint" / "rules" / "team.yaml", PACK)
    errors: list[str] = []
    base = Settings.from_dict({"ignore": ["TEAM"]}, errors)
    assert errors == []  # judged with the packs, not by the parser
    _, problems = settings_for(str(tmp_path / "run.sh"), base)
    assert problems == []
    # No pack has it for a file outside that project.
    _, problems = settings_for(str(tmp_path.parent / "elsewhere" / "run.sh"), base)
    assert len(problems) == 1
    assert problems[0].message().startswith("--ignore / servelint.ignore names 'TEAM'")


def test_rule_pack_setting_counts_for_the_command_line(tmp_path):
    pack = write(tmp_path / "team.yaml", PACK)
    base = Settings(select=["TEAM-1"], rule_packs=[str(pack)], project_rules=False)
    assert settings_for(str(tmp_path / "run.sh"), base)[1] == []
    base = Settings(select=["XX9"], project_rules=False)
    _, problems = settings_for(str(tmp_path / "run.sh"), base)
    assert [p.message() for p in problems] == [
        "--select / servelint.select names 'XX9', which matches no rule code or code prefix; "
        + config.PACK_TAIL]


def test_check_with_an_unknown_selector_exits_2(tmp_path, capsys):
    script = write(tmp_path / "run.sh", LAUNCH)
    assert cli.main(["check", "--select", "XX9", "--isolated", str(script)]) == 2
    err = capsys.readouterr().err
    assert "'XX9', which matches no rule code" in err
    assert err.count("'XX9'") == 1  # once, however many files
