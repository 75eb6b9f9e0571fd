"""`servelint check --fix` never loses what the user wrote, and the command line reads only
regular files (issue 17, points 2 and 4): bytes outside the edits kept exactly, a file that
is not UTF-8 or changed since it was read left alone, no writing through a symbolic link out
of the given folders, an unwritable file reported without stopping, a FIFO never opened."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from servelint import cli
from servelint.cli import main

BAD = "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp_size 2\n"
FIXED = BAD.replace("--tp_size", "--tp-size")


def check(capsys, *args) -> tuple[int, str, str]:
    code = main(["check", "--isolated", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_fix_keeps_bom_line_endings_and_mode(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = ("\ufeff" + BAD.replace("\n", "\r\n") + "# tail  \r\n").encode("utf-8")
    f = tmp_path / "run.sh"
    f.write_bytes(raw)
    f.chmod(0o751)
    code, _, err = check(capsys, "--fix", "run.sh")
    assert "applied 1 fix edit(s)" in err, err
    assert f.read_bytes() == raw.replace(b"--tp_size", b"--tp-size")
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".servelint-")]  # no temp left


def test_fix_leaves_a_file_that_is_not_utf8_as_it_is(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = BAD.encode() + b"# caf\xe9 \xff\n"
    (tmp_path / "run.sh").write_bytes(raw)
    code, _, err = check(capsys, "--fix", "run.sh")
    assert code == 2
    assert "run.sh: not fixed: the file is not valid UTF-8" in err
    assert (tmp_path / "run.sh").read_bytes() == raw


def test_fix_refuses_a_file_changed_since_it_was_read(tmp_path, capsys, monkeypatch):
    """Another program's edit between servelint's read and its write is kept, not lost."""
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "run.sh"
    f.write_text(BAD)
    from servelint import engine
    real = engine.fix_all_text

    def meanwhile(text, *a, **kw):
        f.write_text(BAD + "# added by an editor\n")
        return real(text, *a, **kw)

    monkeypatch.setattr(engine, "fix_all_text", meanwhile)
    code, _, err = check(capsys, "--fix", "run.sh")
    assert code == 2 and "run.sh: not fixed: the file changed since servelint read it" in err
    assert f.read_text() == BAD + "# added by an editor\n"


def test_fix_of_a_folder_does_not_write_through_a_link_out_of_it(tmp_path, capsys, monkeypatch):
    outside = tmp_path / "outside.sh"
    outside.write_text(BAD)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "inside.sh").write_text(BAD)
    (proj / "link.sh").symlink_to(outside)
    monkeypatch.chdir(proj)
    code, _, err = check(capsys, "--fix", ".")
    assert code == 2
    assert "link.sh: not fixed: it is a symbolic link to" in err and "outside the paths given" in err
    assert outside.read_text() == BAD
    assert (proj / "inside.sh").read_text() == FIXED
    assert (proj / "link.sh").is_symlink()
    # named itself, the link's file is fixed (the user asked for that file)
    code, _, err = check(capsys, "--fix", "link.sh")
    assert outside.read_text() == FIXED and (proj / "link.sh").is_symlink()


def test_an_unwritable_file_is_reported_and_the_next_one_still_fixed(tmp_path, capsys,
                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sh").write_text(BAD)
    (tmp_path / "b.sh").write_text(BAD)
    real = cli.write_atomically

    def refuse_a(path, text):
        if os.path.basename(path) == "a.sh":
            raise PermissionError(13, "Permission denied")
        real(path, text)

    monkeypatch.setattr(cli, "write_atomically", refuse_a)
    code, _, err = check(capsys, "--fix", "a.sh", "b.sh")
    assert code == 2
    assert "a.sh: not fixed: cannot write it: Permission denied" in err
    assert "Traceback" not in err
    assert (tmp_path / "a.sh").read_text() == BAD
    assert (tmp_path / "b.sh").read_text() == FIXED


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_never_opened(tmp_path):
    """A FIFO named like a script blocks whoever opens it until a writer comes: in a folder
    it is skipped, named it is an error; the run ends either way (a subprocess with a
    timeout, so a regression fails instead of hanging the suite)."""
    os.mkfifo(tmp_path / "run.sh")
    (tmp_path / "ok.sh").write_text(FIXED)
    env = {**os.environ, "NO_COLOR": "1"}

    def run(*args):
        return subprocess.run([sys.executable, "-m", "servelint", "check", "--isolated", *args],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)

    folder = run(".")
    assert folder.returncode == 0, folder.stderr
    assert "1 file(s)" in folder.stderr
    named = run("run.sh", "ok.sh")
    assert named.returncode == 2
    assert "run.sh: not a regular file" in named.stderr


def test_read_text_cuts_off_at_the_cap_whatever_the_size_said(tmp_path, monkeypatch):
    """The cap bounds what is read even when the file grows after its size was taken."""
    from servelint import files
    f = tmp_path / "big.sh"
    f.write_text(BAD + "#" * 5000 + "\n")
    real_stat = os.stat

    class Small:
        def __init__(self, st):
            self.st_mode, self.st_size = st.st_mode, 10

    monkeypatch.setattr(files.os, "stat", lambda p, *a, **k: (
        Small(real_stat(p, *a, **k)) if str(p) == str(f) else real_stat(p, *a, **k)))
    with pytest.raises(files.TooLarge):
        files.read_text(str(f), True, 1000)
    monkeypatch.undo()
    assert files.read_text(str(f), True, 10_000) == Path(f).read_text()


CONFIG = ("model-path: m\n"
          "cuda-graph-bs:\n  - 1\n  - 2\n"
          "enable-hisparse:\n  true\n"
          "# a comment at the key's depth stays\n"
          "prefill-only-disable-kv-cache:\n  true\n")


def test_config_fixes_edit_whole_entries(tmp_path, capsys, monkeypatch):
    """Removing a key whose value sits on the next line removes the value too (it used to
    stay and join the key above: `model-path: m` became 'm true'); a key is added after the
    whole of the entry before it, not inside its block list. The other keys keep their
    values, and the file still reads as YAML."""
    import yaml
    monkeypatch.chdir(tmp_path)
    (tmp_path / "server.yaml").write_text(CONFIG)
    (tmp_path / "run.sh").write_text("python3 -m sglang.launch_server --config server.yaml\n")
    check(capsys, "--fix", ".")
    fixed = (tmp_path / "server.yaml").read_text()
    got = yaml.safe_load(fixed)
    assert got["model-path"] == "m"
    assert got["cuda-graph-bs-decode"] == [1, 2]
    assert "enable-hisparse" not in got
    assert got["prefill-only-disable-kv-cache"] is True
    assert "# a comment at the key's depth stays\n" in fixed
    assert "\n  true\n" in fixed  # prefill-only's own value, not hisparse's
    assert fixed.count("true") == 2  # prefill-only's, and one added key's


def test_a_config_file_beyond_the_cap_is_not_read(tmp_path, capsys, monkeypatch):
    """A file named by the launch's --config is capped like a linted file: said on the
    --config value, not read (a 33 MB config kept the CLI busy for over a minute)."""
    from servelint.schema import MAX_FILE_BYTES
    monkeypatch.chdir(tmp_path)
    with open(tmp_path / "server.yaml", "w") as fh:
        fh.write("tp-size: 2\n")
        fh.write(("# " + "x" * 98 + "\n") * (MAX_FILE_BYTES // 100 + 10))
    (tmp_path / "run.sh").write_text("python3 -m sglang.launch_server --config server.yaml\n")
    code, out, _ = check(capsys, "run.sh")
    assert "server.yaml has" in out and "more than the" in out and "not checked" in out


def test_removing_an_unused_html_suppression_keeps_the_text_after_it(tmp_path, capsys,
                                                                     monkeypatch):
    """The comment only: Markdown after `<!-- ... -->` on its line stays (the whole line,
    warning included, used to go); a comment alone on its line takes the line."""
    monkeypatch.chdir(tmp_path)
    text = ("# Deploy\n\n"
            "<!-- servelint: disable-file=SL008 --> **Never run this on the production cluster.**\n"
            "\n<!-- servelint: disable-file=SL007 -->\n\n"
            "```sh\npython3 -m sglang.launch_server --model-path m --tp-size 2\n```\n")
    (tmp_path / "d.md").write_text(text)
    check(capsys, "--fix", "d.md")
    assert (tmp_path / "d.md").read_text() == text.replace(
        "<!-- servelint: disable-file=SL008 --> ", "").replace(
        "<!-- servelint: disable-file=SL007 -->\n", "")


def test_a_suppression_looking_line_inside_a_python_string_is_data(tmp_path, capsys,
                                                                     monkeypatch):
    """Not a suppression (it silences nothing and is never 'unused'), so no fix deletes it
    and the docstring's closing quotes with it."""
    monkeypatch.chdir(tmp_path)
    text = ('"""Doc.\n# servelint: disable=SL004 -- data\n"""\nimport subprocess\n'
            'subprocess.run(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"])\n')
    (tmp_path / "l.py").write_text(text)
    code, out, _ = check(capsys, "l.py")
    assert "SL094" not in out and "SL004" in out  # reported: the line in the string silences nothing
    check(capsys, "--fix", "l.py")
    fixed = (tmp_path / "l.py").read_text()
    assert fixed == text.replace('"--tp", "2"', '"--tp-size", "2"')
    compile(fixed, "l.py", "exec")


def test_a_suppression_looking_line_inside_a_heredoc_is_data(tmp_path, capsys, monkeypatch):
    """A here-document's text is data for the command that reads it: a `# servelint:` line
    there silences nothing and no fix removes it; a real comment after it still works."""
    monkeypatch.chdir(tmp_path)
    text = ("#!/bin/bash\n"
            "cat > notes.txt <<EOF\n# servelint: disable=SL004 -- text written to a file\nEOF\n"
            "python3 -m sglang.launch_server --model-path m --tp 2\n"
            "cat <<-'END'\n\t# servelint: disable-file=SL004 -- data\n\tEND\n"
            "cat <<<'# servelint: disable-file=SL004 -- a here-string, one line'\n"
            "# servelint: disable=SL004 -- a real one\n"
            "python3 -m sglang.launch_server --model-path m --tp 2\n")
    (tmp_path / "run.sh").write_text(text)
    code, out, _ = check(capsys, "run.sh")
    assert [line.split()[2] for line in out.splitlines()] == ["SL004"]
    assert out.startswith("run.sh:5:")
    check(capsys, "--fix", "run.sh")
    assert (tmp_path / "run.sh").read_text() == text.replace(
        "--model-path m --tp 2\ncat <<-", "--model-path m --tp-size 2\ncat <<-")


def test_a_suppression_looking_line_inside_a_yaml_block_scalar_is_data(tmp_path, capsys,
                                                                       monkeypatch):
    """A block scalar's lines (a ConfigMap's note, a `bash -c` script) and a quoted scalar
    that goes on over lines are text: a `# servelint:` line there silences nothing and no
    fix removes it; a real YAML comment still works."""
    monkeypatch.chdir(tmp_path)
    text = ("apiVersion: v1\nkind: ConfigMap\ndata:\n  notes: |\n"
            "    # servelint: disable-file=SL002 -- text in a block scalar\n"
            "  more: \"a quoted scalar\n    # servelint: disable-file=SL002 -- still text\"\n"
            "---\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n"
            "    command: [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\","
            " \"--tp_size\", \"2\"]\n"
            "  - name: t\n"
            "    # servelint: disable=SL002 -- a real comment\n"
            "    command: [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\","
            " \"--tp_size\", \"2\"]\n")
    (tmp_path / "pod.yaml").write_text(text)
    code, out, _ = check(capsys, "pod.yaml")
    assert [line.split()[2] for line in out.splitlines() if line.startswith("pod.yaml:")] == ["SL002"]
    assert out.startswith("pod.yaml:14:")
    check(capsys, "--fix", "pod.yaml")
    fixed = (tmp_path / "pod.yaml").read_text()
    assert fixed.count("# servelint:") == 3 and fixed.count("--tp-size") == 1
