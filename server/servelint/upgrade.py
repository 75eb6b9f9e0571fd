"""Upgrade planning: what breaks when each launch moves from the release it runs on to a
target release (`--target-version`, the editor's `targetVersion`, the code action "Check
upgrade to SGLang X" on an image tag).

The document is linted a second time with every launch judged as the target release; a
finding of that lint is an upgrade problem when the launch's own release does not have it
(same launch, code and place). It keeps its code, fixes and severity and says so in its
message, so fix-all and `--fix` apply its safe fixes like any other. Launches already at
or past the target are left alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from servelint.catalog import resolve_version, version_key
from servelint.model import Finding

if TYPE_CHECKING:
    from servelint.engine import LintResult
    from servelint.settings import Settings


def target_of(settings: Settings) -> str | None:
    """The catalog release the settings' target names, or None without a target."""
    if not settings.target_version:
        return None
    return resolve_version(settings.target_version).version


def upgrade_findings(result: LintResult, settings: Settings,
                     language_id: str | None = None) -> list[Finding]:
    """The findings the launches of `result` get only once they run on the target."""
    from servelint.engine import lint

    target = target_of(settings)
    if target is None or not result.releases:
        return []
    moving = {n for n, r in enumerate(result.releases)
              if version_key(r.version) < version_key(target)}
    if not moving:
        return []
    there_settings = settings.copy()
    there_settings.sglang_version = target
    there_settings.sglang_version_from = "the upgrade target"
    there_settings.target_version = None
    there = lint(result.text, result.path, language_id, there_settings, result.format)
    if len(there.launches) != len(result.launches):
        return []  # cannot happen for one text; never pair the wrong launches
    here = {(f.launch_index, f.code, f.span.start, f.span.end) for f in result.findings}
    out = []
    for f in there.findings:
        n = f.launch_index
        if n not in moving or (n, f.code, f.span.start, f.span.end) in here:
            continue
        assert n is not None
        f.message = (f"upgrading this launch from SGLang {result.releases[n].version} to "
                     f"{target}: {f.message}")
        out.append(f)
    return out


def summary(result: LintResult, upgrades: list[Finding], target: str) -> list[tuple[int, str]]:
    """(line, text) per launch: its release, where that came from, and what moving it to
    `target` breaks (for `servelint check --target-version`)."""
    lines = []
    for n, release in enumerate(result.releases):
        line = result.index.line_of(result.launches[n].span.start) + 1
        mine = [f for f in upgrades if f.launch_index == n]
        if version_key(release.version) >= version_key(target):
            lines.append((line, f"runs SGLang {release.version}, already at or past {target} "
                                f"(release from {release.detail})"))
            continue
        safe = sum(1 for f in mine if any(x.safe for x in f.fixes))
        said = (f"{len(mine)} problem(s), {safe} with a safe fix" if mine else "nothing breaks")
        lines.append((line, f"SGLang {release.version} -> {target}: {said} "
                            f"(release from {release.detail})"))
    return lines
