"""File discovery (servelint/files.py): which files `servelint check DIR` and the language
server's workspace lint look at. .gitignore is read the way git reads it, checked against
git itself (`git ls-files --others --exclude-standard` and `git check-ignore` on generated
trees); .servelintignore and the `exclude` setting on top."""

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from servelint import cli, config
from servelint.files import (Discovery, IgnoreFile, iter_files, iter_workspace_files,
                             parse_pattern, wildmatch_regex)

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is the oracle of these tests")
LAUNCH = "python3 -m sglang.launch_server --model-path m --tp_size 2\n"


@pytest.fixture(autouse=True)
def fresh_caches():
    config.invalidate()
    yield
    config.invalidate()


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def tree(root: Path, files: list[str]) -> None:
    for f in files:
        write(root / f)


def found(root: Path, **kw) -> list[str]:
    errors: list[str] = []
    out = sorted(os.path.relpath(p, root).replace(os.sep, "/")
                 for p in iter_files([str(root)], errors, **kw))
    assert errors == []
    return out


def git_env(home: Path) -> dict:
    """git with no global or system configuration (no core.excludesFile of the user's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=os.devnull)
    return env


def git(root: Path, env: dict, *args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run([GIT, *args], cwd=root, env=env, input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # check-ignore exits 1 when no path is ignored
    assert done.returncode == 0 or (args[0] == "check-ignore" and done.returncode == 1), \
        done.stderr.decode()
    return done.stdout


def git_init(root: Path, env: dict) -> None:
    git(root, env, "init", "-q", ".")


def git_untracked(root: Path, env: dict) -> list[str]:
    out = git(root, env, "ls-files", "-z", "--others", "--exclude-standard")
    return sorted(p for p in out.decode().split("\0") if p)


# --- the patterns, case by case (each also against git) ----------------------------------


@needs_git
@pytest.mark.parametrize("lines, files, kept", [
    # a name at any depth; a comment; a blank line
    (["# build outputs", "", "t.sh"], ["t.sh", "a/t.sh", "a/u.sh"], ["a/u.sh"]),
    # negation re-includes what an earlier line ignored
    (["*.log", "!keep.log"], ["a.log", "keep.log", "d/keep.log", "d/b.log"],
     ["d/keep.log", "keep.log"]),
    # ... but not below an ignored folder
    (["build/", "!build/keep.sh"], ["build/keep.sh", "build/x.sh", "b.sh"], ["b.sh"]),
    # anchored: only at the top
    (["/top.sh"], ["top.sh", "d/top.sh"], ["d/top.sh"]),
    # a middle slash anchors too
    (["d/x.sh"], ["d/x.sh", "e/d/x.sh"], ["e/d/x.sh"]),
    # a trailing slash: folders only
    (["out/"], ["out/a.sh", "d/out/b.sh", "e/out"], ["e/out"]),
    # ** in front, in the middle, at the end
    (["**/gen/*.sh"], ["gen/a.sh", "x/y/gen/b.sh", "gen/c.txt"], ["gen/c.txt"]),
    (["a/**/z.sh"], ["a/z.sh", "a/b/z.sh", "a/b/c/z.sh", "b/a/z.sh"], ["b/a/z.sh"]),
    (["vendor/**"], ["vendor/a.sh", "vendor/x/b.sh", "vendor.sh"], ["vendor.sh"]),
    # * and ? stay within one folder; ranges and classes
    (["d/*.sh"], ["d/a.sh", "d/e/b.sh"], ["d/e/b.sh"]),
    (["?.sh", "[ab]x.sh", "[!a]y.sh", "[[:digit:]]z.sh"],
     ["a.sh", "ab.sh", "ax.sh", "cx.sh", "ay.sh", "by.sh", "1z.sh", "az.sh"],
     ["ab.sh", "ay.sh", "az.sh", "cx.sh"]),
    # escapes: a leading # or !, a trailing space, a star
    (["\\#notes", "\\!bang", "trail\\ ", "star\\*"],
     ["#notes", "!bang", "trail ", "trail", "star*", "starx"], ["starx", "trail"]),
    # trailing spaces are dropped; CRLF line ends too
    (["spaced.sh   ", "crlf.sh\r"], ["spaced.sh", "crlf.sh", "other.sh"], ["other.sh"]),
])
def test_pattern_case_agrees_with_git(tmp_path, lines, files, kept):
    root = tmp_path / "repo"
    env = git_env(tmp_path)
    tree(root, files)
    (root / ".gitignore").write_bytes(("\n".join(lines) + "\n").encode())
    git_init(root, env)
    expected = sorted(kept + [".gitignore"])
    assert git_untracked(root, env) == expected  # the case says what git does
    assert found(root) == expected


def test_a_malformed_bracket_matches_nothing():
    assert wildmatch_regex("[abc") is None and wildmatch_regex("x[[:nope:]]") is None
    assert wildmatch_regex("trailing\\") is None
    p = parse_pattern("[ab")
    assert p is not None and not p.matches("[ab", "[ab", False)


def test_ignore_file_answers_for_paths_below_it_only(tmp_path):
    f = IgnoreFile.from_text(str(tmp_path / "sub"), "*.sh\n!keep.sh\n")
    assert f.match(str(tmp_path / "sub" / "a.sh"), False) is True
    assert f.match(str(tmp_path / "sub" / "keep.sh"), False) is False
    assert f.match(str(tmp_path / "sub" / "a.txt"), False) is None
    assert f.match(str(tmp_path / "a.sh"), False) is None


# --- levels, info/exclude, where the walk starts ------------------------------------------


@needs_git
def test_every_level_and_info_exclude_agree_with_git(tmp_path):
    root = tmp_path / "repo"
    env = git_env(tmp_path)
    tree(root, ["a.sh", "b.sh", "sub/a.sh", "sub/b.sh", "sub/c.sh", "sub/deep/c.sh",
                "sub/deep/d.sh", "other/c.sh", "local.sh"])
    write(root / ".gitignore", "b.sh\nc.sh\n")
    write(root / "sub" / ".gitignore", "!c.sh\na.sh\n")  # the deeper file wins
    write(root / "sub" / "deep" / ".gitignore", "d.sh\n")
    git_init(root, env)
    write(root / ".git" / "info" / "exclude", "local.sh\n")
    assert git_untracked(root, env) == found(root)
    assert found(root) == [".gitignore", "a.sh", "sub/.gitignore", "sub/c.sh",
                           "sub/deep/.gitignore", "sub/deep/c.sh"]
    # A walk that starts below the top still reads the levels above it and info/exclude.
    assert found(root / "sub") == [".gitignore", "c.sh", "deep/.gitignore", "deep/c.sh"]


def test_outside_a_repository_the_walked_folder_s_files_apply(tmp_path):
    tree(tmp_path, ["proj/build/t.sh", "proj/run.sh"])
    write(tmp_path / "proj" / ".gitignore", "build/\n")
    assert found(tmp_path / "proj") == [".gitignore", "run.sh"]


def test_a_worktree_s_git_file_leads_to_its_info_exclude(tmp_path):
    gitdir = tmp_path / "store" / "worktrees" / "wt"
    write(gitdir / "commondir", "../..\n")
    write(tmp_path / "store" / "info" / "exclude", "local.sh\n")
    write(tmp_path / "wt" / ".git", f"gitdir: {gitdir}\n")
    tree(tmp_path / "wt", ["local.sh", "run.sh"])
    assert found(tmp_path / "wt") == [".git", "run.sh"]


def test_named_files_are_linted_even_when_ignored(tmp_path):
    write(tmp_path / ".gitignore", "build/\n")
    script = write(tmp_path / "build" / "t.sh", LAUNCH)
    errors: list[str] = []
    assert list(iter_files([str(script)], errors)) == [str(script)]
    # A named folder is walked even when a pattern ignores it.
    assert list(iter_files([str(tmp_path / "build")], errors)) == [str(script)]
    assert list(iter_files([str(tmp_path)], errors)) == [str(tmp_path / ".gitignore")]
    assert errors == []


def test_relative_paths_stay_relative(tmp_path, monkeypatch):
    tree(tmp_path, ["d/a.sh", "d/skip.sh"])
    write(tmp_path / "d" / ".gitignore", "skip.sh\n")
    monkeypatch.chdir(tmp_path)
    assert list(iter_files(["d"], [])) == [os.path.join("d", ".gitignore"),
                                            os.path.join("d", "a.sh")]


def test_respect_gitignore_false_reads_no_gitignore(tmp_path):
    write(tmp_path / ".git" / "info" / "exclude", "local.sh\n")  # a repository's
    tree(tmp_path, ["build/t.sh", "gen/g.sh", "run.sh", "local.sh"])
    write(tmp_path / ".gitignore", "build/\n")
    write(tmp_path / ".servelintignore", "gen/\n")
    assert found(tmp_path) == [".gitignore", ".servelintignore", "run.sh"]
    assert found(tmp_path, respect_gitignore=False) == [
        ".gitignore", ".servelintignore", "build/t.sh", "local.sh", "run.sh"]


# --- .servelintignore and exclude ---------------------------------------------------------


def test_servelintignore_beats_gitignore(tmp_path):
    tree(tmp_path, ["build/gen.sh", "build/obj.o", "docs/a.sh", "sub/x.sh", "sub/y.sh"])
    write(tmp_path / ".gitignore", "build/\nbuild/*.o\n")
    # Lint the generated launch scripts git ignores; skip docs; at every level.
    write(tmp_path / ".servelintignore", "!build/\ndocs/\n")
    write(tmp_path / "sub" / ".servelintignore", "x.sh\n")
    assert found(tmp_path) == [".gitignore", ".servelintignore", "build/gen.sh",
                               "sub/.servelintignore", "sub/y.sh"]


def test_exclude_setting_is_anchored_at_its_file(tmp_path):
    tree(tmp_path, ["proj/gen/a.sh", "proj/sub/gen/b.sh", "proj/run.sh", "proj/x.gen.sh",
                    "proj/keep.gen.sh", "gen/c.sh"])
    write(tmp_path / "proj" / ".servelint.toml",
          'exclude = ["/gen", "*.gen.sh", "!keep.gen.sh"]\n')
    assert found(tmp_path / "proj") == [".servelint.toml", "keep.gen.sh", "run.sh",
                                        "sub/gen/b.sh"]
    # Outside the file's folder it does not apply.
    assert "gen/c.sh" in found(tmp_path)
    # --isolated reads no configuration; --config names the one that applies.
    assert "gen/a.sh" in found(tmp_path / "proj", isolated=True)
    other = write(tmp_path / "ci.toml", 'exclude = ["run.sh"]\n')
    assert found(tmp_path / "proj", config_path=str(other)) == [
        ".servelint.toml", "gen/a.sh", "keep.gen.sh", "sub/gen/b.sh", "x.gen.sh"]


def test_exclude_in_pyproject_and_a_nearer_file(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.servelint]\nexclude = ["legacy/"]\n')
    tree(tmp_path, ["legacy/a.sh", "app/legacy/b.sh", "app/x.sh"])
    write(tmp_path / "app" / ".servelint.toml", 'exclude = ["x.sh"]\n')
    # The closest configuration applies to a folder's files, as for every other setting.
    assert found(tmp_path) == ["app/.servelint.toml", "app/legacy/b.sh", "pyproject.toml"]


def test_an_invalid_exclude_makes_the_file_invalid(tmp_path):
    cfg = config.parse_table({"exclude": "build/"}, str(tmp_path / ".servelint.toml"))
    assert cfg.problems == ['`exclude` must be a list of gitignore-style patterns, '
                            'e.g. ["build/", "*.gen.sh"]']
    assert cfg.exclude == []


def test_workspace_walk_respects_the_same_files(tmp_path):
    tree(tmp_path, ["build/t.sh", "run.sh", ".github/workflows/ci.yaml", ".hidden/h.sh",
                    "gen/g.sh", "out/o.sh"])
    write(tmp_path / ".gitignore", "build/\n")
    write(tmp_path / ".servelintignore", "gen/\n")
    write(tmp_path / ".servelint.toml", 'exclude = ["out/"]\n')
    rel = lambda paths: sorted(os.path.relpath(p, tmp_path) for p in paths)  # noqa: E731
    assert rel(iter_workspace_files(str(tmp_path))) == [
        ".github/workflows/ci.yaml", ".gitignore", ".servelint.toml", ".servelintignore",
        "run.sh"]
    assert "build/t.sh" in rel(iter_workspace_files(str(tmp_path), respect_gitignore=False))
    # Limited mode reads no configuration file: no exclude, the ignore files still apply.
    untrusted = rel(iter_workspace_files(str(tmp_path), trusted=False))
    assert "out/o.sh" in untrusted and "gen/g.sh" not in untrusted


def test_check_does_not_lint_a_gitignored_script(tmp_path, capsys):
    write(tmp_path / ".gitignore", "build/\n")
    write(tmp_path / "build" / "t.sh", LAUNCH)
    write(tmp_path / "run.sh", LAUNCH)
    assert cli.main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "run.sh" in out and "build" not in out
    assert cli.main(["check", str(tmp_path / "build" / "t.sh")]) == 1  # named: linted
    assert "t.sh" in capsys.readouterr().out


# --- generated trees against git ----------------------------------------------------------

NAMES = ["a", "b", "ab", "x y", "c.sh", "[a]", "#c", "!n", "t ", "B.SH", "a.log", "-"]
DIRS = ["a", "b", "ab", "d.sh", "x y", "gen", "[a]"]
PIECES = ["a", "b", "ab", "c.sh", "*", "?", "*.sh", "a*", "*b", "[ab]", "[!a]*", "[a-c]",
          "[[:alpha:]]*", "\\[a]", "\\#c", "\\!n", "x y", "x\\ y", "**", "gen", "d.sh",
          "*.log", "B.SH", "[]a]", "-", "t\\ "]


def random_tree(rng: random.Random, root: Path) -> None:
    folders = [root]
    for _ in range(rng.randint(2, 6)):
        parent = rng.choice(folders)
        if len(parent.relative_to(root).parts) < 3:
            child = parent / rng.choice(DIRS)
            child.mkdir(parents=True, exist_ok=True)
            folders.append(child)
    for folder in folders:
        for name in rng.sample(NAMES, rng.randint(1, 5)):
            if not (folder / name).is_dir():
                (folder / name).write_text("x\n")


def random_pattern(rng: random.Random) -> str:
    segments = [rng.choice(PIECES) for _ in range(rng.choice([1, 1, 1, 2, 2, 3]))]
    text = "/".join(segments)
    if rng.random() < 0.25:
        text = "/" + text
    if rng.random() < 0.25:
        text += "/"
    if rng.random() < 0.3:
        text = "!" + text
    if rng.random() < 0.1:
        text += "  "
    return text


def random_ignore(rng: random.Random) -> str:
    lines = [random_pattern(rng) for _ in range(rng.randint(1, 5))]
    if rng.random() < 0.2:
        lines.insert(0, "# a comment")
    return "\n".join(lines) + ("\r\n" if rng.random() < 0.2 else "\n")


def every_path(root: Path) -> list[tuple[str, bool]]:
    out = []
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs + files:
            full = os.path.join(base, name)
            out.append((os.path.relpath(full, root), name in dirs))
    return sorted(out)


def our_ignored(root: Path, paths: list[tuple[str, bool]]) -> dict[str, bool]:
    """Each path ignored as our walk decides: itself, or a folder above it."""
    discovery = Discovery()
    chains = {str(root): discovery.top_chains(str(root))}
    out: dict[str, bool] = {}
    for rel, is_dir in paths:  # sorted: a folder comes before what it holds
        full = str(root / rel)
        parent = os.path.dirname(full)
        parent_rel = os.path.relpath(parent, root)
        if parent_rel != "." and out[parent_rel]:
            out[rel] = True
            continue
        here = chains[parent]
        out[rel] = discovery.decide(full, is_dir, here, None)
        if is_dir:
            g, o = discovery._own(full)
            chains[full] = (here[0] + g, here[1] + o)
    return out


def generated_repo(tmp_path, rng, ignore_files):
    """A git repository holding a random tree, with the same random patterns written under
    each of `ignore_files` in one to three of its folders."""
    root = tmp_path / "repo"
    root.mkdir()
    env = git_env(tmp_path)
    git_init(root, env)
    random_tree(rng, root)
    folders = [root] + [root / rel for rel, is_dir in every_path(root) if is_dir]
    for folder in rng.sample(folders, min(len(folders), rng.randint(1, 3))):
        text = random_ignore(rng).encode()
        for name in ignore_files:
            (folder / name).write_bytes(text)
    return root, env


@needs_git
@pytest.mark.parametrize("seed", range(40))
def test_generated_tree_agrees_with_git(tmp_path, seed):
    rng = random.Random(seed)
    root, env = generated_repo(tmp_path, rng, (".gitignore",))
    if rng.random() < 0.5:
        (root / ".git" / "info" / "exclude").write_bytes(random_ignore(rng).encode())
    assert found(root) == git_untracked(root, env), seed

    paths = every_path(root)
    answer = git(root, env, "check-ignore", "--no-index", "-z", "-v", "-n", "--stdin",
                 stdin=b"\0".join(p.encode() for p, _ in paths) + b"\0").decode()
    fields = answer.split("\0")
    theirs = {}
    for i in range(0, len(fields) - 1, 4):  # source, line number, pattern, path
        source, _, pattern, path = fields[i:i + 4]
        theirs[path] = bool(source) and not pattern.startswith("!")
    assert our_ignored(root, paths) == theirs, seed


@needs_git
@pytest.mark.parametrize("seed", range(10))
def test_servelintignore_reads_the_same_syntax(tmp_path, seed):
    """The same generated patterns in .servelintignore files, with .gitignore not read,
    skip what git skips with them as .gitignore files."""
    rng = random.Random(1000 + seed)
    root, env = generated_repo(tmp_path, rng, (".gitignore", ".servelintignore"))
    expected = git_untracked(root, env)
    names = lambda paths: [p for p in paths if not p.endswith(".servelintignore")]  # noqa: E731
    assert names(found(root, respect_gitignore=False)) == names(expected), seed
