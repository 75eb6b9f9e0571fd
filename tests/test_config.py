"""Project configuration files (servelint/config.py), editor settings (settings.py) and how
they combine, through `settings_for` and through the command line."""

import os

import pytest

from servelint import cli, config
from servelint.config import glob_matches, settings_for
from servelint.engine import lint
from servelint.model import Severity
from servelint.settings import Settings, workspace_trusted

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp_size 2 --attention-backend flash_infer --tp 2\n"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def codes(path, settings):
    return sorted({f.code for f in lint(LAUNCH, str(path), None, settings).findings})


@pytest.fixture(autouse=True)
def fresh_caches():
    config.invalidate()
    yield
    config.invalidate()


# --- discovery ------------------------------------------------------------------------


def test_found_by_walking_up_from_the_file(tmp_path):
    cfg = write(tmp_path / "proj" / ".servelint.toml", 'ignore = ["SL002"]\n')
    script = write(tmp_path / "proj" / "a" / "b" / "run.sh", LAUNCH)
    s, problems = settings_for(str(script), Settings())
    assert problems == []
    assert s.ignore == ["SL002"] and s.config_file == str(cfg)
    assert codes(script, s) == ["SL004", "SL007"]
    # A file outside that tree gets none of it.
    other = write(tmp_path / "elsewhere" / "run.sh", LAUNCH)
    s, _ = settings_for(str(other), Settings())
    assert s.ignore == [] and s.config_file is None
    assert codes(other, s) == ["SL002", "SL004", "SL007"]


def test_dot_file_beats_pyproject_in_one_directory(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.servelint]\nignore = ["SL007"]\n')
    dot = write(tmp_path / ".servelint.toml", 'ignore = ["SL002"]\n')
    s, _ = settings_for(str(tmp_path / "run.sh"), Settings())
    assert (s.config_file, s.ignore) == (str(dot), ["SL002"])


def test_closest_directory_wins_and_pyproject_without_table_is_skipped(tmp_path):
    top = write(tmp_path / ".servelint.toml", 'ignore = ["SL002"]\n')
    write(tmp_path / "svc" / "pyproject.toml", '[project]\nname = "svc"\n[tool.ruff]\nline-length = 99\n')
    s, _ = settings_for(str(tmp_path / "svc" / "run.sh"), Settings())
    assert (s.config_file, s.ignore) == (str(top), ["SL002"])  # skipped, as Ruff does
    near = write(tmp_path / "svc" / "deploy" / "pyproject.toml", '[tool.servelint]\nignore = ["SL007"]\n')
    s, _ = settings_for(str(tmp_path / "svc" / "deploy" / "run.sh"), Settings())
    assert (s.config_file, s.ignore) == (str(near), ["SL007"])  # closest, not merged with the top one


def test_an_unrelated_broken_pyproject_is_skipped(tmp_path):
    top = write(tmp_path / ".servelint.toml", 'ignore = ["SL002"]\n')
    write(tmp_path / "svc" / "pyproject.toml", '[project\nname = \n')
    s, problems = settings_for(str(tmp_path / "svc" / "run.sh"), Settings())
    assert problems == [] and s.config_file == str(top)


def test_cache_follows_edits_and_invalidate_sees_new_files(tmp_path):
    cfg = write(tmp_path / ".servelint.toml", 'ignore = ["SL002"]\n')
    script = str(tmp_path / "sub" / "run.sh")
    assert settings_for(script, Settings())[0].ignore == ["SL002"]
    cfg.write_text('ignore = ["SL002", "SL007"]\n')  # another size: seen without invalidate
    assert settings_for(script, Settings())[0].ignore == ["SL002", "SL007"]
    write(tmp_path / "sub" / ".servelint.toml", 'ignore = ["SL004"]\n')
    config.invalidate()  # the server does this on didChangeWatchedFiles
    assert settings_for(script, Settings())[0].ignore == ["SL004"]
    os.remove(tmp_path / "sub" / ".servelint.toml")  # a deleted file is noticed by itself
    assert settings_for(script, Settings())[0].ignore == ["SL002", "SL007"]


# --- keys ------------------------------------------------------------------------------


def test_every_key_is_read(tmp_path):
    write(tmp_path / ".servelint.toml",
          'enable = true\nselect = ["sl0"]\nextend-select = ["SL1"]\nignore = ["SL010"]\n'
          'extend-ignore = ["SL011"]\nsglang-version = "0.5.23"\ngpu = "sm100"\n'
          'max-file-bytes = 1000\nrule-packs = ["rules/team.yaml", "../shared"]\n'
          '[severity]\nSL004 = "error"\n')
    s, problems = settings_for(str(tmp_path / "x.sh"), Settings())
    assert problems == []
    assert s.select == ["SL0", "SL1"] and s.ignore == ["SL010", "SL011"]
    assert (s.gpu, s.max_file_bytes, s.sglang_version) == ("sm100", 1000, "0.5.23")
    assert s.rule_packs == [str(tmp_path / "rules" / "team.yaml"), str(tmp_path.parent / "shared")]
    assert s.severity_for("SL004") == Severity.ERROR


def test_severity_by_code_or_prefix_longest_wins(tmp_path):
    write(tmp_path / ".servelint.toml", '[severity]\nSL0 = "hint"\nSL00 = "warning"\nSL007 = "info"\n')
    script = tmp_path / "run.sh"
    s, _ = settings_for(str(script), Settings())
    by_code = {f.code: f.severity for f in lint(LAUNCH, str(script), None, s).findings}
    assert by_code == {"SL002": Severity.WARNING, "SL004": Severity.WARNING,
                       "SL007": Severity.INFORMATION}
    assert s.severity_for("SL013") == Severity.HINT and s.severity_for("SL101") is None


def test_rule_packs_relative_to_the_config_file_are_loaded(tmp_path):
    write(tmp_path / "team" / "packs" / "lora.yaml",
          "- id: lora\n  code: TEAM-1\n  errorMessage: no LoRA here\n"
          "  condition: {present: --enable-lora}\n")
    write(tmp_path / "team" / ".servelint.toml", 'rule-packs = ["packs/lora.yaml"]\n')
    script = tmp_path / "team" / "deploy" / "run.sh"
    s, _ = settings_for(str(script), Settings(project_rules=False))
    found = lint("python3 -m sglang.launch_server --model-path m --enable-lora\n", str(script), None, s)
    assert "TEAM-1" in [f.code for f in found.findings]
    s, _ = settings_for(str(script), Settings(project_rules=False), isolated=True)
    found = lint("python3 -m sglang.launch_server --model-path m --enable-lora\n", str(script), None, s)
    assert "TEAM-1" not in [f.code for f in found.findings]


def test_per_file_ignores_with_globs(tmp_path):
    write(tmp_path / ".servelint.toml",
          '[per-file-ignores]\n"scripts/*.sh" = ["SL002"]\n"legacy.sh" = ["SL0"]\n'
          '"**/bench/**" = ["sl007"]\n"deploy/" = ["SL004"]\n')
    cases = {
        "scripts/run.sh": ["SL002"],
        "scripts/sub/run.sh": [],            # `*` stays within one folder
        "other/scripts/run.sh": [],          # a pattern with `/` is relative to the config
        "legacy.sh": ["SL0"],
        "deep/down/legacy.sh": ["SL0"],      # a plain name matches the file name anywhere
        "a/bench/b/run.sh": ["SL007"],
        "bench/run.sh": ["SL007"],
        "deploy/k8s/run.sh": ["SL004"],      # a folder: everything below it
    }
    for rel, expected in cases.items():
        s, _ = settings_for(str(tmp_path / rel), Settings())
        assert s.file_ignores == expected, rel
    s, _ = settings_for(str(tmp_path / "scripts" / "run.sh"), Settings())
    assert codes(tmp_path / "scripts" / "run.sh", s) == ["SL004", "SL007"]
    s, _ = settings_for(str(tmp_path / "legacy.sh"), Settings())
    assert codes(tmp_path / "legacy.sh", s) == []


def test_glob_matching():
    assert glob_matches("*.sh", "a/b/c.sh", "c.sh")
    assert not glob_matches("a/*.sh", "a/b/c.sh", "c.sh")
    assert glob_matches("a/**/*.sh", "a/c.sh", "c.sh") and glob_matches("a/**/*.sh", "a/b/c/d.sh", "d.sh")
    assert glob_matches("{k8s,helm}/*.yaml", "helm/x.yaml", "x.yaml")
    assert glob_matches("run[0-9].sh", "x/run3.sh", "run3.sh") and not glob_matches("run[!0-9].sh", "run3.sh", "run3.sh")
    assert glob_matches("./a/?.sh", "a/b.sh", "b.sh") and not glob_matches("a/?.sh", "a/bb.sh", "bb.sh")


@pytest.mark.parametrize("text, key, problem", [
    ('selct = ["SL0"]\n', "selct", "did you mean `select`"),
    ('select = "SL0"\n', "select", "must be a list"),
    ('gpu = "sm1"\n', "gpu", "not one of sm80"),
    ('max-file-bytes = -1\n', "max-file-bytes", "positive"),
    ('[severity]\nSL004 = "loud"\n', "severity", "not one of error"),
    ('[per-file-ignores]\n"*.sh" = "SL002"\n', "per-file-ignores", "must be a list"),
    ('enable = "yes"\n', "enable", "true or false"),
    ('select = [\n', None, "invalid TOML"),
])
def test_invalid_file_is_ignored_as_a_whole(tmp_path, text, key, problem):
    write(tmp_path / ".servelint.toml", 'ignore = ["SL002"]\n')  # a parent: not used instead
    bad = write(tmp_path / "svc" / ".servelint.toml", 'ignore = ["SL007"]\n' + text)
    s, problems = settings_for(str(tmp_path / "svc" / "run.sh"), Settings())
    assert s == Settings()  # defaults: nothing from the broken file, nothing from its parent
    assert [p.path for p in problems] == [str(bad)]
    message = problems[0].message()
    assert str(bad) in message and problem in message and "whole file is ignored" in message
    if key:
        assert f"`{key}`" in message


def test_pyproject_table_problems_name_the_file(tmp_path):
    bad = write(tmp_path / "pyproject.toml", '[tool.servelint]\nrule_packs = ["x"]\n')
    _, problems = settings_for(str(tmp_path / "run.sh"), Settings())
    assert "pyproject.toml" in problems[0].message() and "did you mean `rule-packs`" in problems[0].message()
    assert problems[0].path == str(bad)


# --- editor settings and preferences ---------------------------------------------------


def test_editor_settings_shapes_and_errors():
    for raw in ({"select": ["sl0"]}, {"servelint": {"select": ["SL0"]}},
                {"settings": {"select": ["SL0"]}}, {"settings": {"servelint": {"select": ["SL0"]}}}):
        assert Settings.from_dict(raw).select == ["SL0"], raw
    s = Settings.from_dict({"ignoreSuppressions": True, "configurationPreference": "filesystemFirst",
                            "severity": {"SL0": "hint"}, "maxFileBytes": 10})
    assert not s.respect_suppressions and s.configuration_preference == "filesystemFirst"
    assert s.severity_for("SL004") == Severity.HINT and s.max_file_bytes == 10
    errors = []
    s = Settings.from_dict({"select": "SL0", "configurationPreference": "mine", "maxFileBytes": "big",
                            "enable": "no", "gpu": "h100", "ignoreSuppressions": 1}, errors)
    assert s == Settings()
    for key in ("servelint.select", "servelint.configurationPreference", "servelint.maxFileBytes",
                "servelint.enable", "servelint.gpu", "servelint.ignoreSuppressions"):
        assert any(e.startswith(key + " ") for e in errors), key


def test_editor_values_equal_to_defaults_are_not_explicit():
    s = Settings.from_dict({"enable": True, "select": [], "ignore": ["SL004"], "sglangVersion": "auto",
                            "gpu": None, "ignoreSuppressions": False, "severity": {}})
    assert s.explicit == {"ignore"}


def test_workspace_trusted():
    assert workspace_trusted(None) and workspace_trusted({"servelint": {}})
    for opts in ({"workspaceTrusted": False}, {"settings": {"workspaceTrusted": False}},
                 {"servelint": {"workspaceTrusted": False}}):
        assert not workspace_trusted(opts), opts


@pytest.fixture
def project(tmp_path):
    write(tmp_path / ".servelint.toml",
          'ignore = ["SL002"]\ngpu = "sm90"\n[severity]\nSL004 = "error"\nSL007 = "warning"\n'
          '[per-file-ignores]\n"run.sh" = ["SL007"]\n')
    return tmp_path / "run.sh"


def test_editor_first_project_values_then_explicit_editor_values(project):
    editor = Settings.from_dict({"ignore": ["SL004"], "enable": True, "severity": {"SL007": "hint"}})
    s, _ = settings_for(str(project), editor)
    assert s.ignore == ["SL004"]  # set in the editor: wins
    assert s.gpu == "sm90"  # not set in the editor: the project's
    assert s.severity_for("SL004") == Severity.ERROR and s.severity_for("SL007") == Severity.HINT
    assert s.file_ignores == ["SL007"]  # per-file ignores always apply


def test_filesystem_first_project_wins(project):
    editor = Settings.from_dict({"ignore": ["SL004"], "gpu": "sm100", "severity": {"SL007": "hint"},
                                "configurationPreference": "filesystemFirst"})
    s, _ = settings_for(str(project), editor)
    assert (s.ignore, s.gpu) == (["SL002"], "sm90")
    assert s.severity_for("SL007") == Severity.WARNING and s.file_ignores == ["SL007"]


def test_editor_only_reads_no_file(project):
    editor = Settings.from_dict({"configurationPreference": "editorOnly"})
    s, _ = settings_for(str(project), editor)
    assert (s.ignore, s.gpu, s.file_ignores, s.config_file) == ([], None, [], None)


def test_untrusted_reads_no_file_and_no_rule_packs(project):
    editor = Settings.from_dict({"rulePacks": ["/somewhere/pack.yaml"]})
    s, _ = settings_for(str(project), editor, trusted=False)
    assert (s.ignore, s.rule_packs, s.project_rules, s.config_file) == ([], [], False, None)


# --- the command line ------------------------------------------------------------------


@pytest.fixture
def cli_project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / ".servelint.toml", 'ignore = ["SL002"]\n')
    write(tmp_path / "run.sh", LAUNCH)
    write(tmp_path / "alt.toml", 'ignore = ["SL007"]\n')
    return tmp_path


def run_cli(capsys, *argv):
    rc = cli.main(["check", "-q", *argv])
    out, err = capsys.readouterr()
    return rc, sorted({line.split()[2] for line in out.splitlines()}), err


def test_cli_uses_the_project_file_and_flags_override_it(cli_project, capsys):
    assert run_cli(capsys, "run.sh")[:2] == (1, ["SL004", "SL007"])
    assert run_cli(capsys, "run.sh", "--ignore", "SL004")[:2] == (1, ["SL002", "SL007"])


def test_cli_config_and_isolated(cli_project, capsys):
    assert run_cli(capsys, "run.sh", "--config", "alt.toml")[:2] == (1, ["SL002", "SL004"])
    assert run_cli(capsys, "run.sh", "--isolated")[:2] == (1, ["SL002", "SL004", "SL007"])
    rc, _, err = run_cli(capsys, "run.sh", "--config", "missing.toml")
    assert rc == 2 and "missing.toml" in err
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", "run.sh", "--config", "alt.toml", "--isolated"])
    assert exc.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_cli_invalid_config_reported_once_and_defaults_used(cli_project, capsys):
    (cli_project / ".servelint.toml").write_text('ignore = ["SL002"]\nignroe = ["SL004"]\n')
    write(cli_project / "sub" / "b.sh", LAUNCH)
    rc, found, err = run_cli(capsys, "run.sh", "sub/b.sh")
    assert rc == 2 and found == ["SL002", "SL004", "SL007"]
    assert err.count("invalid servelint configuration") == 1
    assert ".servelint.toml" in err and "`ignroe`" in err and "defaults" in err


def test_cli_no_suppressions_sets_respect_suppressions(cli_project, capsys):
    args = cli.build_parser().parse_args(["check", "run.sh", "--no-suppressions"])
    assert cli.cli_settings(args).respect_suppressions is False
    args = cli.build_parser().parse_args(["check", "run.sh"])
    assert cli.cli_settings(args).respect_suppressions is True
    # and the linted file sees it, through the project file's combination too
    s, _ = settings_for(str(cli_project / "run.sh"),
                        cli.cli_settings(cli.build_parser().parse_args(["check", "x", "--no-suppressions"])))
    assert s.respect_suppressions is False and s.ignore == ["SL002"]
    assert run_cli(capsys, "run.sh", "--no-suppressions")[:2] == (1, ["SL004", "SL007"])
