"""Suppression comments: `servelint: disable=` above a launch, `disable-file=`, unused (SL094)
and unusable (SL095) suppressions, the "Disable CODE" code actions, in every format."""

import ast
import json
import re

import pytest
import yaml

from servelint.engine import fix_all_text, lint
from servelint.edits import apply_edits, fix_all_edits
from servelint.settings import Settings


def found(text, path, settings=None, **kw):
    """[(1-based line, code)] of the findings."""
    r = lint(text, path, settings=settings, **kw)
    return [(r.index.position(f.span.start)[0] + 1, f.code) for f in r.findings]


def finding(text, path, code, line=None, **kw):
    r = lint(text, path, suppression_actions=True, **kw)
    for f in r.findings:
        if f.code == code and (line is None or r.index.position(f.span.start)[0] + 1 == line):
            return f
    raise AssertionError(f"no {code} at line {line}: {[(f.code, f.message) for f in r.findings]}")


def action(f, kind="launch"):
    fixes = [x for x in f.fixes if x.title == f"Disable {f.code} for this {kind}"]
    assert len(fixes) == 1, [x.title for x in f.fixes]
    assert fixes[0].safe is False and fixes[0].preferred is False
    return fixes[0]


def no_suppression_reports(pairs):
    return not [c for _, c in pairs if c in ("SL094", "SL095")]


# --- every format: the launch below is silenced, the next one is not -------------------------

SHELL = """\
#!/bin/bash
# servelint: disable=SL002 -- the old image still reads --tp_size
python3 -m sglang.launch_server --model-path m --tp_size 2
python3 -m sglang.launch_server --model-path m --tp_size 2
"""

K8S = """\
apiVersion: v1
kind: Pod
spec:
  containers:
    - name: a
      image: lmsysorg/sglang:latest
      # servelint: disable=SL002 -- legacy spelling
      command: ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"]
    - name: b
      image: lmsysorg/sglang:latest
      command:
        - python3
        - -m
        - sglang.launch_server
      args:
        - --model-path
        - m
        - --tp_size
        - "2"
"""

COMPOSE = """\
services:
  a:
    image: lmsysorg/sglang:latest
    # servelint: disable=SL002 -- legacy spelling
    command: >
      python3 -m sglang.launch_server
      --model-path m --tp_size 2
  b:
    image: lmsysorg/sglang:latest
    command: python3 -m sglang.launch_server --model-path m --tp_size 2
"""

DOCKERFILE = """\
# syntax=docker/dockerfile:1
FROM lmsysorg/sglang:latest
# servelint: disable=SL002 -- legacy spelling
RUN --mount=type=cache,target=/root/.cache \\
    python3 -m sglang.launch_server --model-path m --tp_size 2 & \\
    sleep 60
CMD ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"]
"""

PYTHON = """\
import subprocess


def start():
    # servelint: disable=SL002 -- legacy spelling
    server = subprocess.Popen(
        ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"])
    return server


subprocess.run("python3 -m sglang.launch_server --model-path m --tp_size 2", shell=True)
"""

LAUNCH_JSON = """\
{
    "version": "0.2.0",
    "configurations": [
        // servelint: disable=SL002 -- legacy spelling
        {
            "name": "server",
            "type": "debugpy",
            "request": "launch",
            "module": "sglang.launch_server",
            "args": ["--model-path", "m", "--tp_size", "2"]
        },
        {
            "name": "server2",
            "type": "debugpy",
            "request": "launch",
            "module": "sglang.launch_server",
            "args": ["--model-path", "m", "--tp_size", "2"]
        }
    ]
}
"""

MARKDOWN = """\
# Deploy

```bash
# servelint: disable=SL002 -- legacy spelling
python3 -m sglang.launch_server --model-path m --tp_size 2
python3 -m sglang.launch_server --model-path m --tp_size 2
```

```python
import subprocess
# servelint: disable=SL002 -- legacy spelling
subprocess.run(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"])
subprocess.run(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp_size", "2"])
```
"""

# (name, path, text, the lines of the SL002 that stays)
FORMATS = [
    ("shell", "run.sh", SHELL, [4]),
    ("k8s", "pod.yaml", K8S, [18]),
    ("compose", "compose.yaml", COMPOSE, [10]),
    ("dockerfile", "Dockerfile", DOCKERFILE, [7]),
    ("python", "launch.py", PYTHON, [11]),
    ("launch-json", ".vscode/launch.json", LAUNCH_JSON, [17]),
    ("markdown", "README.md", MARKDOWN, [6, 13]),
]


@pytest.mark.parametrize("name,path,text,left", FORMATS, ids=[f[0] for f in FORMATS])
def test_suppression_silences_the_launch_below_only(name, path, text, left):
    got = found(text, path)
    assert [ln for ln, c in got if c == "SL002"] == left, got
    assert no_suppression_reports(got), got
    # Without the comment, both launches report it.
    bare = "".join(l for l in text.splitlines(True) if "servelint:" not in l)
    assert len([c for _, c in found(bare, path) if c == "SL002"]) == len(left) + text.count("servelint:")


@pytest.mark.parametrize("name,path,text,left", FORMATS, ids=[f[0] for f in FORMATS])
def test_respect_suppressions_false_reports_everything(name, path, text, left):
    settings = Settings()
    settings.respect_suppressions = False  # the setting another change adds; read with getattr
    bare = "".join(l for l in text.splitlines(True) if "servelint:" not in l)
    got = found(text, path, settings)
    assert len([c for _, c in got if c == "SL002"]) == len(left) + text.count("servelint:")
    assert no_suppression_reports(got), got
    assert len(found(bare, path)) == len(got)


def _still_valid(path, text):
    if path.endswith(".yaml"):
        list(yaml.safe_load_all(text))
    elif path.endswith(".py"):
        ast.parse(text)
    elif path.endswith(".json"):
        stripped = re.sub(r"(?m)^\s*//.*$", "", text)
        json.loads(stripped)


@pytest.mark.parametrize("name,path,text,left", FORMATS, ids=[f[0] for f in FORMATS])
def test_code_action_round_trip(name, path, text, left):
    """Insert "Disable SL002 for this launch" on the launch that still reports it: the text
    stays valid in its format, and re-linted, nothing is reported any more."""
    bare = "".join(l for l in text.splitlines(True) if "servelint:" not in l)
    for start in (text, bare):
        current = start
        for _ in range(6):
            r = lint(current, path, suppression_actions=True)
            remaining = [f for f in r.findings if f.code == "SL002"]
            if not remaining:
                break
            current = apply_edits(current, action(remaining[0]).edits)
            _still_valid(path, current)
        got = found(current, path)
        assert got == [], (got, current)
        assert current.count("servelint: disable") == len(left) + text.count("servelint:"), current


def test_inserted_comment_has_the_launch_indentation_and_marker():
    cases = [
        (K8S, "pod.yaml", 18, "      # servelint: disable=SL002 -- TODO: reason\n        - python3\n"),
        (COMPOSE, "compose.yaml", 10, "    # servelint: disable=SL002 -- TODO: reason\n    command: python3"),
        (PYTHON, "launch.py", 11, "\n# servelint: disable=SL002 -- TODO: reason\nsubprocess.run("),
        (LAUNCH_JSON, ".vscode/launch.json", 17,
         "        },\n        // servelint: disable=SL002 -- TODO: reason\n        {\n"),
        (DOCKERFILE, "Dockerfile", 7, "\n# servelint: disable=SL002 -- TODO: reason\nCMD ["),
    ]
    for text, path, line, expect in cases:
        f = finding(text, path, "SL002", line)
        new = apply_edits(text, action(f).edits)
        assert expect in new, (path, new)


def test_python_comment_goes_above_the_statement():
    text = ('from sglang.utils import launch_server_cmd\n\n'
            'def go():\n'
            '    server, port = launch_server_cmd(\n'
            '        "python3 -m sglang.launch_server --model-path m --tp_size 2",\n'
            '        port=31000,\n'
            '    )\n')
    f = finding(text, "go.py", "SL002")
    new = apply_edits(text, action(f).edits)
    assert "def go():\n    # servelint: disable=SL002 -- TODO: reason\n    server, port = " in new
    assert found(new, "go.py") == []


def test_yaml_folded_scalar_comment_goes_above_the_key():
    """A `#` line inside a folded scalar would become part of the command."""
    text = ("services:\n  a:\n    image: x\n    command: >\n"
            "      python3 -m sglang.launch_server\n      --model-path m --tp_size 2\n")
    f = finding(text, "compose.yaml", "SL002")
    new = apply_edits(text, action(f).edits)
    assert "    image: x\n    # servelint: disable=SL002 -- TODO: reason\n    command: >\n" in new
    assert yaml.safe_load(new)["services"]["a"]["command"].startswith("python3 -m")
    assert found(new, "compose.yaml") == []


def test_yaml_literal_script_comment_is_a_shell_comment_in_the_script():
    text = ("run: |\n  echo start\n  python3 -m sglang.launch_server \\\n"
            "    --model-path m --tp_size 2\n")
    f = finding(text, "sky.yaml", "SL002")
    new = apply_edits(text, action(f).edits)
    assert "  echo start\n  # servelint: disable=SL002 -- TODO: reason\n  python3 -m" in new
    assert found(new, "sky.yaml") == []


def test_shell_command_continued_from_an_earlier_line():
    text = "cd /srv && \\\n  python3 -m sglang.launch_server --model-path m --tp_size 2\n"
    f = finding(text, "run.sh", "SL002")
    new = apply_edits(text, action(f).edits)
    assert new.startswith("# servelint: disable=SL002 -- TODO: reason\ncd /srv && \\\n")
    assert found(new, "run.sh") == []


def test_markdown_block_quote_keeps_its_prefix():
    text = "> ```bash\n> python3 -m sglang.launch_server --model-path m --tp_size 2\n> ```\n"
    f = finding(text, "doc.md", "SL002")
    new = apply_edits(text, action(f).edits)
    assert "> # servelint: disable=SL002 -- TODO: reason\n> python3" in new
    assert found(new, "doc.md") == []


def test_sglang_config_file_above_the_first_key():
    text = "# Config for the embedding tier\nmodel-path: m\ntp_size: 2\n"
    assert [c for _, c in found(text, "server_config.yaml")] == ["SL002"]
    sup = ("# Config for the embedding tier\n# servelint: disable=SL002 -- legacy\n"
           "model-path: m\ntp_size: 2\n")
    assert found(sup, "server_config.yaml") == []
    # Separated from the keys by a blank line: it is above nothing.
    loose = "# servelint: disable=SL002 -- legacy\n\nmodel-path: m\ntp_size: 2\n"
    assert sorted(c for _, c in found(loose, "server_config.yaml")) == ["SL002", "SL094"]
    f = finding(text, "server_config.yaml", "SL002")
    assert [x.title for x in f.fixes if x.title.startswith("Disable")] == ["Disable SL002 for this file"]
    assert found(apply_edits(text, action(f, "file").edits), "server_config.yaml") == []


# --- disable-file -------------------------------------------------------------------------------

@pytest.mark.parametrize("path,text", [
    ("run.sh", "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp_size 2\n"
               "python3 -m sglang.launch_server --model-path m --tp_size 4\n"
               "# servelint: disable-file=SL002 -- the old image reads --tp_size\n"),
    ("pod.yaml", "# servelint: disable-file=sl002\ncommand: [python3, -m, sglang.launch_server, "
                 "--model-path, m, --tp_size, '2']\n"),
    (".vscode/launch.json", '{\n  // servelint: disable-file=SL002 -- why\n  "configurations": [{"type": "debugpy", '
                            '"module": "sglang.launch_server", "args": ["--model-path", "m", "--tp_size", "2"]}]\n}\n'),
    ("README.md", "<!-- servelint: disable-file=SL002 -- old docs -->\n```bash\n"
                  "python3 -m sglang.launch_server --model-path m --tp_size 2\n```\n"),
    ("README.md", "```bash\npython3 -m sglang.launch_server --model-path m --tp_size 2\n"
                  "# servelint: disable-file=SL002\n```\n"),
])
def test_disable_file(path, text):
    assert found(text, path) == []
    bare = "".join(l for l in text.splitlines(True) if "servelint:" not in l)
    assert "SL002" in [c for _, c in found(bare, path)]


def test_file_action_inserts_after_what_must_stay_first():
    cases = [
        ("run.sh", "#!/bin/bash\npython3 -m sglang.launch_server --model-path m --tp_size 2\n",
         "#!/bin/bash\n# servelint: disable-file=SL002 -- TODO: reason\npython3"),
        ("Dockerfile", "# syntax=docker/dockerfile:1\nFROM x\nCMD python3 -m sglang.launch_server --model-path m --tp_size 2\n",
         "# syntax=docker/dockerfile:1\n# servelint: disable-file=SL002 -- TODO: reason\nFROM x\n"),
        ("README.md", "---\ntitle: x\n---\n```bash\npython3 -m sglang.launch_server --model-path m --tp_size 2\n```\n",
         "---\ntitle: x\n---\n<!-- servelint: disable-file=SL002 -- TODO: reason -->\n```bash\n"),
        (".vscode/launch.json", '{"configurations": [{"type": "debugpy", "module": "sglang.launch_server", '
                                '"args": ["--model-path", "m", "--tp_size", "2"]}]}\n',
         '// servelint: disable-file=SL002 -- TODO: reason\n{"configurations"'),
    ]
    for path, text, expect in cases:
        f = finding(text, path, "SL002")
        new = apply_edits(text, action(f, "file").edits)
        assert new.startswith(expect), (path, new)
        assert found(new, path) == [], (path, new)


def test_file_action_appends_to_an_existing_disable_file():
    text = ("# servelint: disable-file=SL004 -- tp\n"
            "python3 -m sglang.launch_server --model-path m --tp 2 --tp_size 2\n")
    f = finding(text, "run.sh", "SL002")
    new = apply_edits(text, action(f, "file").edits)
    assert new.startswith("# servelint: disable-file=SL004,SL002 -- tp\n")
    assert found(new, "run.sh") == []


def test_crlf_lines_get_crlf():
    text = "echo hi\r\npython3 -m sglang.launch_server --model-path m --tp_size 2\r\n"
    f = finding(text, "run.sh", "SL002")
    new = apply_edits(text, action(f).edits)
    assert "echo hi\r\n# servelint: disable=SL002 -- TODO: reason\r\npython3" in new
    assert found(new, "run.sh") == []


# --- stacking, codes, all -------------------------------------------------------------------------

def test_stacked_comments_and_plain_comments_between():
    text = ("# servelint: disable=SL002 -- legacy spelling\n"
            "# Start the server on two GPUs.\n"
            "# servelint: disable=SL004 -- short flags on purpose\n"
            "python3 -m sglang.launch_server --model-path m --tp 2 --tp_size 2\n")
    assert found(text, "run.sh") == []
    # A blank line ends the stack: the first comment is above nothing.
    loose = text.replace("spelling\n", "spelling\n\n")
    assert sorted(found(loose, "run.sh")) == [(1, "SL094"), (5, "SL002")]


def test_code_action_appends_to_the_comment_above():
    text = ("# servelint: disable=SL004 -- short flags on purpose\n"
            "python3 -m sglang.launch_server --model-path m --tp 2 --tp_size 2\n")
    f = finding(text, "run.sh", "SL002")
    new = apply_edits(text, action(f).edits)
    assert new == ("# servelint: disable=SL004,SL002 -- short flags on purpose\n"
                   "python3 -m sglang.launch_server --model-path m --tp 2 --tp_size 2\n")
    assert found(new, "run.sh") == []


def test_all_and_case():
    text = ("# servelint: disable=all -- generated\n"
            "python3 -m sglang.launch_server --model-path m --tp 2 --tp_size 2\n"
            "python3 -m sglang.launch_server --model-path m --tp_size 2\n")
    assert found(text, "run.sh") == [(3, "SL002")]
    assert found(text.replace("disable=all", "disable=sl002, sl004"), "run.sh") == [(3, "SL002")]


def test_codes_are_exact_not_prefixes():
    text = ("# servelint: disable=SL00 -- every catalog check?\n"
            "python3 -m sglang.launch_server --model-path m --tp_size 2\n")
    r = lint(text, "run.sh")
    assert [(f.code, f.message.split(":")[0]) for f in r.findings] == [
        ("SL095", "unknown code 'SL00' in this suppression"), ("SL002", "unrecognized arguments")]
    assert "SL00" in r.findings[0].message


def test_unknown_code_and_unreadable_comments():
    text = ("# servelint: disable=SL999,SL002 -- typo\n"
            "python3 -m sglang.launch_server --model-path m --tp_size 2\n"
            "# servelint: enable=SL002\n"
            "# servelint: disable=\n"
            "# servelint: disable SL002 no equals\n"
            "python3 -m sglang.launch_server --model-path m\n")
    r = lint(text, "run.sh")
    got = [(r.index.position(f.span.start)[0] + 1, f.code) for f in r.findings]
    assert got == [(1, "SL095"), (3, "SL095"), (4, "SL095"), (5, "SL095")], got
    assert "SL999" in r.findings[0].message
    assert r.findings[0].span == r.findings[0].span.__class__(text.index("SL999"), text.index("SL999") + 5)


def test_rule_codes_are_known():
    text = ("# servelint: disable=SL101 -- checked by hand\n"
            "python3 -m sglang.launch_server --model-path m --prefill-only-disable-kv-cache "
            "--enable-hisparse\n")
    bare = text.split("\n", 1)[1]
    assert "SL101" in [c for _, c in found(bare, "run.sh")]
    assert "SL101" not in [c for _, c in found(text, "run.sh")]
    assert no_suppression_reports(found(text, "run.sh"))


def test_comment_after_a_continuation_does_not_apply():
    text = ("python3 -m sglang.launch_server --model-path m \\\n"
            "# servelint: disable=SL002 -- too late: this line is part of the command above\n"
            "python3 -m sglang.launch_server --model-path m --tp_size 2\n")
    r = lint(text, "run.sh")
    got = [(r.index.position(f.span.start)[0] + 1, f.code) for f in r.findings]
    assert got == [(2, "SL095"), (3, "SL002")], got
    assert "backslash" in r.findings[0].message


def test_comment_between_the_lines_of_a_command_does_not_apply():
    text = ("python3 -m sglang.launch_server --model-path m \\\n"
            "  --tp_size 2 \\\n"
            "  # servelint: disable=SL002\n"
            "  --port 30000\n")
    got = found(text, "run.sh")
    assert (2, "SL002") in got and (3, "SL095") in got


def test_servelint_mentioned_elsewhere_is_not_a_directive():
    text = ('echo "# servelint: disable=SL002"\n'
            "python3 -m sglang.launch_server --model-path m --tp_size 2  # servelint: disable=SL002\n"
            "# see servelint: disable=SL002 is how you silence it\n"
            "python3 -m sglang.launch_server --model-path m --tp_size 2\n")
    assert found(text, "run.sh") == [(2, "SL002"), (4, "SL002")]


def test_hash_is_not_a_comment_in_launch_json():
    text = LAUNCH_JSON.replace("// servelint", "# servelint")
    assert [c for _, c in found(text, ".vscode/launch.json")].count("SL002") == 2


def test_host_findings_inside_the_launch_span():
    """SL092 is made while merging --config, without a launch_index: it is in the span."""
    text = ("# servelint: disable=SL092 -- the wrapper splits it\n"
            "python3 -m sglang.launch_server --model-path m --config=server.yaml\n"
            "python3 -m sglang.launch_server --model-path m --config=server.yaml\n")
    assert found(text, "run.sh") == [(3, "SL092")]


# --- unused suppressions (SL094) ---------------------------------------------------------------

def test_unused_suppression_and_its_fix_removes_the_line():
    text = ("#!/bin/bash\n"
            "# servelint: disable=SL004 -- short flags on purpose\n"
            "python3 -m sglang.launch_server --model-path m --tp-size 2\n")
    r = lint(text, "run.sh")
    assert [f.code for f in r.findings] == ["SL094"]
    f = r.findings[0]
    assert f.unnecessary and f.severity == 2
    assert text[f.span.start:f.span.end] == "SL004"
    assert "SL004" in f.message
    fx = f.fixes[0]
    assert fx.safe and fx.preferred
    assert apply_edits(text, fx.edits) == ("#!/bin/bash\n"
                                           "python3 -m sglang.launch_server --model-path m --tp-size 2\n")
    # fix-all (and so `servelint check --fix`) removes it
    assert fix_all_text(text, "run.sh")[0] == apply_edits(text, fx.edits)


def test_unused_code_among_used_ones_is_removed_alone():
    text = ("# servelint: disable=SL004, SL002,SL010 -- reasons\n"
            "python3 -m sglang.launch_server --model-path m --tp 2\n")
    r = lint(text, "run.sh")
    assert [(f.code, text[f.span.start:f.span.end]) for f in r.findings] == [
        ("SL094", "SL002"), ("SL094", "SL010")]
    assert apply_edits(text, r.findings[0].fixes[0].edits).startswith(
        "# servelint: disable=SL004,SL010 -- reasons\n")
    assert apply_edits(text, r.findings[1].fixes[0].edits).startswith(
        "# servelint: disable=SL004, SL002 -- reasons\n")
    fixed, _ = fix_all_text(text, "run.sh")
    assert fixed.startswith("# servelint: disable=SL004 -- reasons\npython3")
    assert found(fixed, "run.sh") == []


def test_unused_in_every_format_is_removed_cleanly():
    for name, path, text, left in FORMATS:
        bare = "".join(l for l in text.splitlines(True) if "servelint:" not in l)
        stale = text.replace("disable=SL002", "disable=SL010")
        r = lint(stale, path)
        unused = [f for f in r.findings if f.code == "SL094"]
        assert len(unused) == text.count("servelint:"), (name, [(f.code, f.message) for f in r.findings])
        assert apply_edits(stale, [e for f in unused for e in f.fixes[0].edits]) == bare, name


def test_unused_last_line_without_newline():
    text = "python3 -m sglang.launch_server --model-path m\n# servelint: disable-file=SL004"
    r = lint(text, "run.sh")
    assert [f.code for f in r.findings] == ["SL094"]
    assert apply_edits(text, r.findings[0].fixes[0].edits) == "python3 -m sglang.launch_server --model-path m"


def test_suppression_above_nothing_is_unused():
    text = ("# servelint: disable=SL002 -- forgot to delete\n\n"
            "python3 -m sglang.launch_server --model-path m --tp_size 2\n")
    assert sorted(found(text, "run.sh")) == [(1, "SL094"), (3, "SL002")]
    msg = lint(text, "run.sh").findings[0].message
    assert "no launch starts right below" in msg


def test_unused_not_judged_for_codes_the_settings_leave_out():
    text = ("# servelint: disable=SL004,SL010 -- r\n"
            "python3 -m sglang.launch_server --model-path m --tp-size 2\n")
    assert found(text, "run.sh", Settings(ignore=["SL010"])) == [(1, "SL094")]
    assert found(text, "run.sh", Settings(ignore=["SL0"])) == []
    assert found(text, "run.sh", Settings(select=["SL004", "SL094"])) == [(1, "SL094")]
    assert found(text, "run.sh", Settings(ignore=["SL094"])) == []


def test_sl094_can_be_disabled_for_the_file():
    text = ("# servelint: disable-file=SL094 -- kept for the old image\n"
            "# servelint: disable=SL004 -- r\n"
            "python3 -m sglang.launch_server --model-path m --tp-size 2\n")
    assert found(text, "run.sh") == []


def test_respect_suppressions_false_no_sl094_no_sl095():
    text = ("# servelint: disable=SL004,SL999 -- r\n"
            "python3 -m sglang.launch_server --model-path m --tp-size 2 --tp_size 2\n")
    settings = Settings()
    settings.respect_suppressions = False
    assert found(text, "run.sh", settings) == [(2, "SL002")]
    assert sorted(c for _, c in found(text, "run.sh")) == ["SL002", "SL094", "SL095"]


# --- code actions are never applied by fix-all --------------------------------------------------

def test_disable_actions_are_unsafe_and_skipped_by_fix_all():
    text = "python3 -m sglang.launch_server --model-path m --tp 2 --tp_size 2\n"
    r = lint(text, "run.sh", suppression_actions=True)
    assert all(any(x.title.startswith("Disable") for x in f.fixes) for f in r.findings)
    fixed = apply_edits(text, fix_all_edits(r.findings))
    assert "servelint:" not in fixed and "--tp-size 2 --tp-size 2" in fixed
    assert "servelint:" not in fix_all_text(text, "run.sh")[0]
    # Without the flag (the CLI, fix-all), no action is attached at all.
    plain = lint(text, "run.sh")
    assert not any(x.title.startswith("Disable") for f in plain.findings for x in f.fixes)


def test_no_action_when_the_code_is_already_listed_or_for_notebooks():
    text = ("# servelint: disable=SL002 -- r\n"
            "python3 -m sglang.launch_server --model-path m --tp_size 2\n")
    settings = Settings()
    settings.respect_suppressions = False
    r = lint(text, "run.sh", settings=settings, suppression_actions=True)
    assert [x.title for x in r.findings[0].fixes if x.title.startswith("Disable")] == [
        "Disable SL002 for this file"]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["!python -m sglang.launch_server --model-path m --tp_size 2"]}],
          "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    r = lint(json.dumps(nb, indent=1), "n.ipynb", suppression_actions=True)
    assert [f.code for f in r.findings] == ["SL002"]
    assert not any(x.title.startswith("Disable") for x in r.findings[0].fixes)


def test_many_launches_and_suppressions_stay_linear():
    """200 launches each with a suppression: every one silenced, nothing reported."""
    text = "".join("# servelint: disable=SL002 -- r\n"
                   f"python3 -m sglang.launch_server --model-path m --tp_size {i}\n"
                   "echo done\n" for i in range(200))
    assert found(text, "run.sh") == []


# --- every list style the docs name (issue 13) --------------------------------------------------
#
# Each case: the text with `# servelint: disable=SL004 -- ...` where docs/suppressions.md puts
# it. With the comment nothing is reported and fix-all changes nothing; without it SL004 is
# reported on `--tp` (so the case does test something).

K8S_HEAD = ("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: sglang\n          image: lmsysorg/sglang:latest\n")
NOTE = "# servelint: disable=SL004 -- short flags are this team's style"
PLACEMENTS = [
    ("k8s block list", "deploy.yaml", K8S_HEAD +
     f"          {NOTE}\n"
     "          command:\n"
     "            - python3\n            - -m\n            - sglang.launch_server\n"
     "            - --model-path\n            - m\n            - --tp\n            - \"2\"\n"),
    ("k8s compact block list", "deploy.yaml", K8S_HEAD +
     f"          {NOTE}\n"
     "          command:\n"
     "          - python3\n          - -m\n          - sglang.launch_server\n"
     "          - --model-path\n          - m\n          - --tp\n          - \"2\"\n"),
    ("k8s flow list", "deploy.yaml", K8S_HEAD +
     f"          {NOTE}\n"
     "          command: [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\","
     " \"--tp\", \"2\"]\n"),
    ("k8s flow list over lines", "deploy.yaml", K8S_HEAD +
     f"          {NOTE}\n"
     "          command: [\"python3\", \"-m\", \"sglang.launch_server\",\n"
     "                    \"--model-path\", \"m\", \"--tp\", \"2\"]\n"),
    ("k8s args after command, block lists", "deploy.yaml", K8S_HEAD +
     f"          {NOTE}\n"
     "          command:\n            - python3\n            - -m\n            - sglang.launch_server\n"
     "          args:\n            - --model-path\n            - m\n            - --tp\n            - \"2\"\n"),
    ("k8s args after command, flow lists", "deploy.yaml", K8S_HEAD +
     f"          {NOTE}\n"
     "          command: [\"python3\", \"-m\", \"sglang.launch_server\"]\n"
     "          args: [\"--model-path\", \"m\", \"--tp\", \"2\"]\n"),
    ("k8s literal block script, comment inside", "deploy.yaml", K8S_HEAD +
     "          command: [bash, -c]\n          args:\n            - |\n"
     f"              {NOTE}\n"
     "              python3 -m sglang.launch_server --model-path m --tp 2\n"),
    ("k8s literal block script, comment above args", "deploy.yaml", K8S_HEAD +
     "          command: [bash, -c]\n"
     f"          {NOTE}\n"
     "          args:\n            - |\n"
     "              python3 -m sglang.launch_server --model-path m --tp 2\n"),
    ("compose folded", "compose.yaml",
     "services:\n  sglang:\n    image: lmsysorg/sglang:latest\n"
     f"    {NOTE}\n"
     "    command: >\n      python3 -m sglang.launch_server --model-path m\n      --tp 2\n"),
    ("compose block list", "compose.yaml",
     "services:\n  sglang:\n    image: lmsysorg/sglang:latest\n"
     f"    {NOTE}\n"
     "    command:\n      - python3\n      - -m\n      - sglang.launch_server\n"
     "      - --model-path\n      - m\n      - --tp\n      - \"2\"\n"),
    ("workflow run script", "ci.yml",
     "jobs:\n  serve:\n    runs-on: gpu\n    steps:\n"
     f"      {NOTE}\n"
     "      - run: |\n          python3 -m sglang.launch_server --model-path m --tp 2\n"),
    ("python list in the call", "serve.py",
     "import subprocess\n\n"
     f"{NOTE}\n"
     "proc = subprocess.Popen(\n"
     "    [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\", \"--tp\", \"2\"]\n"
     ")\n"),
    ("python list assigned, comment above the list", "serve.py",
     "import subprocess\nimport sys\n\n"
     f"{NOTE}\n"
     "cmd = [\n    sys.executable, \"-m\", \"sglang.launch_server\",\n"
     "    \"--model-path\", \"m\",\n    \"--tp\", \"2\",\n]\n"
     "proc = subprocess.Popen(cmd)\n"),
    ("python list assigned, comment above the call", "serve.py",
     "import subprocess\n\n"
     "cmd = [\n    \"python3\", \"-m\", \"sglang.launch_server\",\n"
     "    \"--model-path\", \"m\",\n    \"--tp\", \"2\",\n]\n"
     f"{NOTE}\n"
     "proc = subprocess.Popen(cmd)\n"),
    ("python launch_server_cmd", "serve.py",
     "from sglang.utils import launch_server_cmd\n\n"
     f"{NOTE}\n"
     "server, port = launch_server_cmd(\n"
     "    \"python3 -m sglang.launch_server --model-path m --tp 2\"\n)\n"),
    ("dockerfile exec form", "Dockerfile",
     "FROM lmsysorg/sglang:latest\n"
     f"{NOTE}\n"
     "CMD [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\", \"--tp\", \"2\"]\n"),
    ("dockerfile exec form over lines", "Dockerfile",
     "FROM lmsysorg/sglang:latest\n"
     f"{NOTE}\n"
     "CMD [\"python3\", \"-m\", \"sglang.launch_server\", \\\n"
     "     \"--model-path\", \"m\", \\\n     \"--tp\", \"2\"]\n"),
    ("dockerfile ENTRYPOINT + CMD", "Dockerfile",
     "FROM lmsysorg/sglang:latest\n"
     f"{NOTE}\n"
     "ENTRYPOINT [\"python3\", \"-m\", \"sglang.launch_server\"]\n"
     "CMD [\"--model-path\", \"m\", \"--tp\", \"2\"]\n"),
    ("shell continued", "run.sh",
     f"{NOTE}\n"
     "cd /srv && \\\n  python3 -m sglang.launch_server --model-path m --tp 2\n"),
]


@pytest.mark.parametrize("name,path,text", PLACEMENTS, ids=[p[0] for p in PLACEMENTS])
def test_documented_placement_works_in_every_list_style(name, path, text):
    assert found(text, path) == [], name
    assert fix_all_text(text, path)[0] == text  # fix-all keeps the comment and `--tp`
    bare = "".join(l for l in text.splitlines(True) if "servelint:" not in l)
    assert [c for _, c in found(bare, path)] == ["SL004"], name


@pytest.mark.parametrize("name,path,text", PLACEMENTS, ids=[p[0] for p in PLACEMENTS])
def test_placement_with_a_stale_code_is_unused_and_removed(name, path, text):
    """The same comment naming a code the launch does not have is unused (SL094), and that is
    said about the launch below (the comment does apply to it), with the safe removal."""
    stale = text.replace("disable=SL004", "disable=SL004,SL010")
    r = lint(stale, path)
    assert [f.code for f in r.findings] == ["SL094"], name
    assert "is not reported on the launch below" in r.findings[0].message
    assert fix_all_text(stale, path)[0] == text


def test_k8s_block_list_issue_case_with_cli_fix(tmp_path):
    """The issue's case: `--fix` used to remove the comment AND expand `--tp`."""
    from servelint.cli import main
    text = PLACEMENTS[0][2]
    p = tmp_path / "deploy.yaml"
    p.write_text(text)
    assert main(["check", "--fix", str(p)]) == 0
    assert p.read_text() == text


def test_a_mapping_key_does_not_carry_a_comment_to_every_launch_below():
    """Above `containers:` (a list of mappings) the comment is too far from any launch."""
    text = ("spec:\n"
            f"  {NOTE}\n"
            "  containers:\n    - name: a\n"
            "      command: [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\","
            " \"--tp\", \"2\"]\n")
    assert sorted(c for _, c in found(text, "pod.yaml")) == ["SL004", "SL094"]


def test_a_comment_above_a_python_def_does_not_reach_into_its_body():
    text = ("import subprocess\n\n"
            f"{NOTE}\n"
            "def main():\n"
            "    subprocess.run([\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\","
            " \"--tp\", \"2\"])\n")
    assert sorted(c for _, c in found(text, "serve.py")) == ["SL004", "SL094"]


# --- a misplaced comment is not an unused one: fix-all never undoes it ---------------------------

MISPLACED = [
    ("above image:", "deploy.yaml", K8S_HEAD.replace(
        "          image:", f"          {NOTE}\n          image:") +
     "          command:\n            - python3\n            - -m\n            - sglang.launch_server\n"
     "            - --model-path\n            - m\n            - --tp\n            - \"2\"\n"),
    ("blank line below", "run.sh",
     f"{NOTE}\n\npython3 -m sglang.launch_server --model-path m --tp 2\n"),
    ("between two statements", "serve.py",
     "import subprocess\n\n"
     f"{NOTE}\n"
     "print('starting')\n"
     "subprocess.run([\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\","
     " \"--tp\", \"2\"])\n"),
]


@pytest.mark.parametrize("name,path,text", MISPLACED, ids=[m[0] for m in MISPLACED])
def test_misplaced_suppression_is_left_alone_by_fix_all(name, path, text):
    r = lint(text, path)
    assert sorted(f.code for f in r.findings) == ["SL004", "SL094"], name
    sl094 = next(f for f in r.findings if f.code == "SL094")
    assert "SL004 is reported on the launch below" in sl094.message
    # Neither the comment's removal nor the silenced code's fix is applied by fix-all: the
    # first would delete the user's suppression, the second would undo what it silences
    # (and then make the comment look unused, so that a later pass deleted it).
    assert not any(x.safe for f in r.findings for x in f.fixes)
    assert fix_all_text(text, path)[0] == text
    # The editor offers to move it (preferred, unsafe); moved, it silences the launch.
    move = sl094.fixes[0]
    assert move.title.startswith("Move this suppression") and move.preferred and not move.safe
    moved = apply_edits(text, move.edits)
    assert found(moved, path) == []
    assert moved.count("servelint:") == 1


def test_misplaced_comment_other_fixes_still_apply():
    """Fixes of codes the comment does not name still land; the one it names does not."""
    text = f"{NOTE}\n\npython3 -m sglang.launch_server --model-path m --tp 2 --mem_fraction_static 0.8\n"
    fixed, _ = fix_all_text(text, "run.sh")
    assert fixed == text.replace("--mem_fraction_static", "--mem-fraction-static")


def test_stale_comment_far_from_its_code_is_still_removed():
    """A comment above nothing whose code is not reported on the next launch is simply stale:
    the safe removal stays (the code is reported on another launch, not the one below)."""
    text = (f"{NOTE}\n\n"
            "python3 -m sglang.launch_server --model-path m --tp-size 2\n"
            "python3 -m sglang.launch_server --model-path m --tp 2\n")
    r = lint(text, "run.sh")
    sl094 = next(f for f in r.findings if f.code == "SL094")
    assert sl094.fixes[0].safe and "reported on the launch below" not in sl094.message
    assert fix_all_text(text, "run.sh")[0] == text.split("\n", 1)[1].replace("--tp 2", "--tp-size 2")
