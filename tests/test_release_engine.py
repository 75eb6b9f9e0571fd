"""Each launch is judged by its own SGLang release: the engine picks the release (an
explicit setting, else what the files say), the checks use that release's catalog, the
JSON output and the hover name it, and `--target-version` reports what an upgrade breaks
(tests/test_release_detect.py covers reading the release from the files)."""

import json
import os
import subprocess
import sys

from servelint.catalog import newest_version
from servelint.config import invalidate, settings_for
from servelint.engine import fix_all_text, lint
from servelint.lsp.hover import hover_at
from servelint.settings import Settings

OLD_ONLY = "python -m sglang.launch_server --model-path m --enable-ep-moe --tp 8\n"


def codes(result):
    return sorted(f.code for f in result.findings)


def test_an_explicit_release_judges_the_launch_with_its_own_catalog():
    old = lint(OLD_ONLY, "run.sh", settings=Settings(sglang_version="0.4.6"))
    new = lint(OLD_ONLY, "run.sh", settings=Settings(sglang_version="0.5.23"))
    assert [r.version for r in old.releases] == ["0.4.6"]
    assert old.releases[0].source == "setting"
    assert old.parsed[0].catalog.version == "0.4.6"
    # --enable-ep-moe existed in 0.4.6 and is gone in 0.5.23.
    at = OLD_ONLY.index("--enable-ep-moe")
    assert not [f for f in old.findings if f.span.start == at]
    gone = [f for f in new.findings if f.span.start == at]
    assert gone and all("0.5.23" in f.message and f.severity.label == "error" for f in gone)


def test_a_release_without_a_catalog_uses_the_nearest_older_one_and_says_so():
    result = lint(OLD_ONLY, "run.sh", settings=Settings(sglang_version="0.4.6.post9"))
    release = result.releases[0]
    assert release.version == "0.4.6.post5"
    assert release.declared == "0.4.6.post9"
    assert release.notice and "0.4.6.post9" in release.notice and "0.4.6.post5" in release.notice
    assert release.notice in result.notices


def test_auto_without_any_hint_is_the_newest_release():
    result = lint(OLD_ONLY, None, "shellscript", settings=Settings())
    assert result.releases[0].version == newest_version()
    assert result.releases[0].source == "newest"


def test_per_file_release_override_beats_the_folder_setting(tmp_path):
    (tmp_path / ".servelint.toml").write_text(
        'sglang-version = "0.5.3"\n[per-file-sglang-version]\n"legacy/**" = "0.4.6"\n')
    (tmp_path / "legacy").mkdir()
    legacy, current = tmp_path / "legacy" / "run.sh", tmp_path / "run.sh"
    for p in (legacy, current):
        p.write_text(OLD_ONLY)
    invalidate()
    s_legacy, problems = settings_for(str(legacy), Settings())
    assert problems == []
    s_current, _ = settings_for(str(current), Settings())
    assert s_legacy.sglang_version == "0.4.6"
    assert "per-file-sglang-version" in s_legacy.sglang_version_from
    assert s_current.sglang_version == "0.5.3"
    r = lint(OLD_ONLY, str(legacy), settings=s_legacy).releases[0]
    assert (r.version, r.source) == ("0.4.6", "setting")
    assert "per-file-sglang-version" in r.detail


def test_a_bad_release_setting_is_worded_clearly():
    from servelint.schema import BY_ATTR, Invalid
    field = BY_ATTR["sglang_version"]
    assert field.parse("v0.4.9.post2") == "v0.4.9.post2"
    assert field.parse("AUTO") == "auto"
    try:
        field.parse("zero point five")
    except Invalid as exc:
        assert "auto" in str(exc)
    else:
        raise AssertionError("an unreadable release was accepted")


def test_json_output_carries_the_release_of_each_finding(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text(OLD_ONLY)
    out = subprocess.run([sys.executable, "-m", "servelint", "check", "--format", "json-lines",
                          "--isolated", "--sglang-version", "0.5.3", str(script)],
                         capture_output=True, text=True)
    records = [r for r in map(json.loads, out.stdout.splitlines()) if r["path"] == str(script)]
    assert records, out.stderr
    for rec in records:
        assert rec["release"]["version"] == "0.5.3"
        assert rec["release"]["source"] == "setting"


def test_hover_names_the_release_the_launch_is_judged_by():
    text = OLD_ONLY
    result = lint(text, "run.sh", settings=Settings(sglang_version="0.4.6"))
    shown = hover_at(result, text.index("--tp") + 2)
    assert shown is not None
    assert "Checked as SGLang 0.4.6" in shown


def test_target_version_reports_only_what_the_upgrade_breaks():
    text = "python -m sglang.launch_server --model-path m --enable-ep-moe --nope\n"
    here = lint(text, "run.sh", settings=Settings(sglang_version="0.4.6"))
    moving = lint(text, "run.sh", settings=Settings(sglang_version="0.4.6", target_version="0.5.23"))
    assert moving.target == "0.5.23"
    # --nope is broken on both releases: not an upgrade problem, reported once.
    assert [f.code for f in here.findings] == ["SL001"]
    ups = moving.upgrades
    nope = text.index("--nope")
    assert ups and all(f.span.start == text.index("--enable-ep-moe") for f in ups)
    assert all(f.message.startswith("upgrading this launch from SGLang 0.4.6 to 0.5.23: ")
               for f in ups)
    assert [f.code for f in moving.findings if f.span.start == nope] == ["SL001"]
    assert len(moving.findings) == len(ups) + 1


def test_target_version_leaves_launches_already_there_alone():
    result = lint(OLD_ONLY, "run.sh", settings=Settings(sglang_version="0.5.23",
                                                         target_version="0.5.20"))
    assert result.upgrades == []


def test_target_version_fix_applies_the_safe_upgrade_fixes_only():
    # --tp is an abbreviation (safe fix: spell it out) on both releases; the upgrade
    # adds whatever 0.5.23 finds and fix-all applies only fixes marked safe.
    settings = Settings(sglang_version="0.4.6", target_version="0.5.23")
    before = lint(OLD_ONLY, "run.sh", settings=settings)
    fixed, count = fix_all_text(OLD_ONLY, "run.sh", None, settings)
    after = lint(fixed, "run.sh", settings=settings)
    safe_before = [f for f in before.findings if any(x.safe for x in f.fixes)]
    assert count >= len(safe_before) > 0
    assert not [f for f in after.findings if any(x.safe for x in f.fixes)]


def test_check_target_version_prints_a_line_per_launch(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text(OLD_ONLY + "python -m sglang.launch_server --model-path m\n")
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-m", "servelint", "check", "--isolated",
                          "--sglang-version", "0.4.6", "--target-version", "latest", str(script)],
                         capture_output=True, text=True, env=env)
    lines = [x for x in out.stdout.splitlines() if ": upgrade: " in x]
    assert len(lines) == 2, out.stdout
    assert lines[0].startswith(f"{script}:1: upgrade: SGLang 0.4.6 -> {newest_version()}: ")
    assert lines[0].endswith("(release from --sglang-version)")
    assert "problem(s)" in lines[0]
    assert lines[1].startswith(f"{script}:2: upgrade: SGLang 0.4.6 -> {newest_version()}: "
                               f"nothing breaks")
    assert out.returncode == 1  # the upgrade problems are errors
