"""`servelint --version` (release.version_text): servelint's version, the SGLang releases
its flag catalogs know, and the release a launch is judged by when nothing names one."""

from servelint import __version__
from servelint.catalog import known_versions, resolve_version
from servelint.engine import lint
from servelint.release import version_text


def test_first_line_is_servelint_and_its_version():
    assert version_text().splitlines()[0] == f"servelint {__version__}"


def test_names_the_releases_the_catalog_knows():
    versions = known_versions()
    text = version_text()
    assert f"SGLang releases known: {versions[0]} to {versions[-1]} ({len(versions)} releases" in text


def test_the_default_release_is_the_one_a_launch_without_one_is_judged_by():
    line = version_text().splitlines()[2]
    assert line.startswith(f"Default release: {known_versions()[-1]} ")
    # What the engine does with such a launch: the newest packed release.
    assert resolve_version("auto").version == known_versions()[-1]
    result = lint("python3 -m sglang.launch_server --model-path m --tp 2\n", path=None)
    assert [(r.version, r.source) for r in result.releases] == [(known_versions()[-1], "newest")]
