"""Reading many launches out of one shell text costs time linear in their number: each
launch's environment (the `export` lines above it) used to be found by reading the text
from its start, and even the test for the words `export`/`declare` read the whole text
again for each launch (a Markdown file of 2,222 shell blocks, read as one shell view,
spent 2.7 s there). Times are compared, never asserted in absolute terms; margins wide
(a quadratic cost is 64x for 8x the input)."""

import time

from servelint.engine import lint
from servelint.extract.shell import exported

BLOCK = ("export HF_HOME=/data/hf\n"
         "python3 -m sglang.launch_server --model-path m --tp_size 2\n")


def test_the_environments_of_many_launches_cost_linear_time():
    """What the shell reader asks for each launch of a text, in order."""
    def took(n: int) -> float:
        text = "#!/bin/bash\n" + BLOCK * n
        at = [i for i in range(len(text)) if text.startswith("python3", i)]
        out = float("inf")
        for _ in range(3):
            fresh = text[:1] + text[1:]  # a new string object: nothing remembered
            start = time.perf_counter()
            envs = [exported(fresh, a) for a in at]
            out = min(out, time.perf_counter() - start)
        assert envs[-1] == {"HF_HOME": "/data/hf"} and len(envs) == n
        return out

    took(100)
    small, large = took(1000), took(8000)
    assert large < small * 24, (small, large)


def test_many_launches_in_one_shell_text_are_all_read():
    # Under the size at which a script is read in windows: one parse, every launch.
    result = lint("#!/bin/bash\n" + BLOCK * 300, "/tmp/servelint-growth/run.sh")
    assert sum(1 for f in result.findings if f.code == "SL002") == 300
    assert all(p.launch.env == {"HF_HOME": "/data/hf"} for p in result.parsed)


def test_the_environment_of_each_launch_is_what_the_lines_above_export():
    text = "export A=1\nrun\nunset A\nexport B=\"$X\"\nrun\nexport A=2 && run\n"
    first, second = text.index("run"), text.index("run", text.index("unset"))
    assert exported(text, first) == {"A": "1"}
    assert exported(text, second) == {"B": None}
    assert exported(text, text.index("&& run") + 3) == {"B": None, "A": "2"}
    assert exported(text, first) == {"A": "1"}  # asked again, above the last question


def test_a_long_chain_of_commands_costs_linear_time(monkeypatch):
    """`bash -c "a && b && ..."` (a Dockerfile CMD of 208 KB took 7.4 s): tree-sitter finds
    a node's parent or the node at an offset by walking down from the root, and on a
    chain that walk is as long as the chain, for every launch in it. A large text with
    many launches has its tree's parents read once (extract/shell.py _Family). Both sizes
    are read the same way (the thresholds at 0); 8x the commands may cost at most 24x the
    time (quadratic: 64x)."""
    from servelint.extract import shell
    monkeypatch.setattr(shell, "FAMILY_BYTES", 0)
    monkeypatch.setattr(shell, "FAMILY_LAUNCHES", 0)
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)

    def took(n: int) -> float:
        parts = ["python3 -m sglang.launch_server --tp_size 2" if i % 10 == 0 else "echo step"
                 for i in range(n)]
        text = "#!/bin/bash\nbash -c '" + " && ".join(parts) + "'\n"
        out = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            result = lint(text, "/tmp/servelint-growth/chain.sh")
            out = min(out, time.perf_counter() - start)
        assert sum(1 for f in result.findings if f.code == "SL002") == len(range(0, n, 10))
        return out

    took(400)
    small, large = took(4000), took(32000)
    assert large < small * 24, (small, large)
