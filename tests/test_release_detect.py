"""release.detect_release: which SGLang release each launch declares, in every format, in
the documented order (image, pin, project, floor, newest); parse_image over real tag
spellings; project files that are hostile (binary, huge, FIFO) are skipped promptly."""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time
from pathlib import Path

import pytest

from servelint import release
from servelint.catalog import known_versions
from servelint.extract import formats
from servelint.model import LineIndex
from servelint.release import ReleaseHint, detect_release, parse_image

DATA = Path(__file__).parent / "data" / "release"
FORMATS = DATA / "formats"
REAL = DATA / "real"


def launches(path: Path | str, text: str | None = None):
    """(text, format name, launches) of a document, read as the engine reads it."""
    path = str(path)
    if text is None:
        text = Path(path).read_text(encoding="utf-8")
    fmt = next(f for f in formats() if f.detect(path, None, text))
    return text, fmt.name, fmt.extract(text, LineIndex(text), path, None).launches


def hints(path: Path | str, text: str | None = None, root: Path | str | None = None) -> list[ReleaseHint]:
    text, fmt, found = launches(path, text)
    assert found, f"no launch read in {path}"
    return [detect_release(text, fmt, launch, str(path), str(root) if root else None)
            for launch in found]


def spanned(text: str, hint: ReleaseHint) -> str:
    assert hint.span is not None
    return text[hint.span.start:hint.span.end]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project: a directory with `.git`, so the search stops there."""
    (tmp_path / ".git").mkdir()
    return tmp_path


# --- parse_image -------------------------------------------------------------------------------

# Every reference below is spelled as found in public files (GitHub search, 2025-2026:
# Kubernetes manifests, compose files, SkyPilot and dstack tasks, Modal apps, Slurm
# scripts, AMD docs); see tests/data/release/README.md.
IMAGES = [
    ("lmsysorg/sglang:v0.4.9.post1-cu126", "0.4.9.post1"),
    ("lmsysorg/sglang:v0.5.0rc0-cu126", "0.5.0rc0"),
    ("lmsysorg/sglang:v0.5.19-cu130", "0.5.19"),
    ("lmsysorg/sglang:v0.5.9", "0.5.9"),
    ("lmsysorg/sglang:v0.4.1.post4-rocm620", "0.4.1.post4"),
    ("lmsysorg/sglang:v0.4.9.post1-rocm630-srt", "0.4.9.post1"),
    ("lmsysorg/sglang:v0.5.3.post3-rocm700-mi30x", "0.5.3.post3"),
    ("lmsysorg/sglang:v0.5.9-rocm720-mi35x", "0.5.9"),
    ("lmsysorg/sglang:v0.5.7-cu129-amd64", "0.5.7"),
    ("lmsysorg/sglang:v0.5.9-cu129-amd64-runtime", "0.5.9"),
    ("lmsysorg/sglang:v0.5.6.post2-cu129-amd64-runtime", "0.5.6.post2"),
    ("lmsysorg/sglang:v0.4.9.post3-cu128-b200", "0.4.9.post3"),
    ("lmsysorg/sglang:v0.5.6-cann8.5.0-a3", "0.5.6"),
    ("docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64", "0.5.5.post3"),
    ("docker.io/lmsysorg/sglang:v0.5.10.post1-cu130", "0.5.10.post1"),
    ("iaas-gpu-cn-beijing.cr.volces.com/serving/sglang:v0.4.9.post2.iaas.dev.202507161949",
     "0.4.9.post2"),
    ("aibrix/sglang:v0.4.9.post3-cu126-nixl-v0.4.1", "0.4.9.post3"),
    ("rocm/sgl-dev:v0.5.10rc0-rocm720-mi35x-20260403", "0.5.10rc0"),
    ("rocm/sgl-dev:v0.4.9.post2-rocm630-mi30x-20250716", "0.4.9.post2"),
    ("rocm/sgl-dev:sglang-0.5.14-rocm720-mi35x-mori-0701", "0.5.14"),
    ("docker:lmsysorg/sglang:v0.4.6", "0.4.6"),  # SkyPilot image_id
    ("docker://lmsysorg/sglang:v0.4.6.post1", "0.4.6.post1"),  # enroot / apptainer
    ("lmsysorg/sglang:latest", "newest"),
    ("lmsysorg/sglang:latest-runtime", "newest"),
    ("lmsysorg/sglang:dev", "newest"),
    ("lmsysorg/sglang:dev-cu13", "newest"),
    ("lmsysorg/sglang:dev-dsv41-mi35x", "newest"),
    ("lmsysorg/sglang:nightly-dev-cu13-20260416-a4cf2ea1", "newest"),
    ("lmsysorg/sglang:nightly-dev@sha256:" + "d" * 64, "newest"),  # the tag counts
    ("lmsysorg/sglang:v0.5.19-cu130@sha256:" + "4c" * 32, "0.5.19"),
    ("lmsysorg/sglang:main-cann8.5.0-a3", "newest"),
    ("chutes/sglang:nightly-2025081600", "newest"),
    ("lmsysorg/sglang", "newest"),  # no tag: Docker pulls `latest`
    ("docker.io/lmsysorg/sglang@sha256:" + "3a" * 32, None),  # a digest only: unknown
    ("lmsysorg/sglang:glm-5.3-flash", None),  # a tag that names no release
    ("lmsysorg/sglang:kimi-k3", None),
    ("rocm/sgl-dev:upstream_20250312_v1", None),
    ("vllm/vllm-openai:v0.4.6", None),  # not SGLang's
    ("aibrix/sglang-router:v0.1.6", None),
    ("whatcanyousee/verl:ngc-th2.5.1-cu126-sglang0.4.4.post3", None),
    ("nvidia/cuda:12.4.1-devel-ubuntu22.04", None),
    ("lmsysorg/sglang:{{ .Values.tag }}", None),
    ("lmsysorg/sglang:${{ matrix.tag }}", None),
]


@pytest.mark.parametrize("ref,expected", IMAGES)
def test_parse_image(ref, expected):
    assert parse_image(ref) == expected


# --- shell ---------------------------------------------------------------------------------------


def test_shell_script_each_launch_its_own_release():
    text = (FORMATS / "deploy.sh").read_text()
    got = hints(FORMATS / "deploy.sh", root=FORMATS)
    assert [(h.version, h.source) for h in got] == [
        ("0.4.9.post2", "image"),  # docker run "$IMAGE", IMAGE=... above
        ("0.5.3rc0", "image"),  # podman run IMAGE bash -c "..."
        (None, "image"),  # srun --container-image=...:nightly-...
        ("0.4.6", "image"),  # apptainer exec docker://...
        ("0.4.6.post1", "pin"),  # pip install "sglang[all]==0.4.6.post1" (a commented one above it is not)
    ]
    assert spanned(text, got[0]) == '"$IMAGE"'
    assert got[0].detail == ('image lmsysorg/sglang:v0.4.9.post2-cu126 '
                             '(line 10, "$IMAGE" with $IMAGE set on line 5)')
    assert spanned(text, got[2]) == "lmsysorg/sglang:nightly-dev-cu13-20260416-a4cf2ea1"
    assert spanned(text, got[4]) == "sglang[all]==0.4.6.post1"
    assert got[4].detail == "sglang[all]==0.4.6.post1 on line 24"


def test_shell_pin_nearest_above_wins_else_nearest_below(project):
    text = ("pip install sglang==0.4.5\n"
            "python -m sglang.launch_server --model-path a\n"
            "uv pip install 'sglang[all]==0.4.8.post1'\n"
            "python -m sglang.launch_server --model-path b\n")
    got = hints(project / "run.sh", text)
    assert [h.version for h in got] == ["0.4.5", "0.4.8.post1"]
    below = "python -m sglang.launch_server --model-path a\npip install sglang==0.4.7\n"
    assert hints(project / "run.sh", below)[0].version == "0.4.7"


def test_shell_pin_forms(project):
    cases = {
        "SGLANG_VERSION=0.4.9\n": "0.4.9",
        "export SGLANG_VERSION=v0.5.0rc0-cu129\n": "0.5.0rc0",
        "git clone -b v0.4.6 https://github.com/sgl-project/sglang.git\n": "0.4.6",
        "git clone https://github.com/sgl-project/sglang.git --branch=v0.5.4.post3\n": "0.5.4.post3",
        "git clone https://github.com/sgl-project/sglang.git\ncd sglang\ngit checkout v0.4.6.post5\n":
            "0.4.6.post5",
        'pip install "sglang[all] @ git+https://github.com/sgl-project/sglang.git@v0.4.7#subdirectory=python"\n':
            "0.4.7",
        "VER=0.4.9.post6\npip install sglang==$VER\n": "0.4.9.post6",
        "pip install sglang==${SGL:-0.4.2}\n": "0.4.2",
    }
    for lines, expected in cases.items():
        text = lines + "python -m sglang.launch_server --model-path m\n"
        hint = hints(project / "run.sh", text)[0]
        assert (hint.version, hint.source) == (expected, "pin"), lines


def test_shell_what_is_not_a_pin(project):
    for lines in ("# pip install sglang==0.4.6\n",
                  "pip install sglang-router==0.1.6\n",
                  "git clone https://github.com/other/sglang.git\ngit checkout v0.4.6\n",
                  "git clone https://github.com/sgl-project/sglang.git\n"
                  "git clone https://github.com/flashinfer-ai/flashinfer.git\ngit checkout v0.2.5\n",
                  "pip install sglang\n",
                  "SGLANG_VERSION=0.0.0.dev0\n",  # a source build's placeholder
                  "pip install git+https://github.com/sgl-project/sglang.git@fdebc938f7f4d16fe6b9f55dcd9a767cf0899ea1\n"):
        text = lines + "python -m sglang.launch_server --model-path m\n"
        hint = hints(project / "run.sh", text)[0]
        assert (hint.version, hint.source) == (None, "newest"), lines


def test_shell_floor_in_the_file(project):
    text = 'pip install "sglang[all]>=0.4.9"\npython -m sglang.launch_server --model-path m\n'
    hint = hints(project / "run.sh", text)[0]
    assert (hint.version, hint.source) == (None, "floor")
    assert hint.detail == ('sglang[all]>=0.4.9 on line 1: any release from 0.4.9 on; '
                           'checked as the newest')
    assert spanned(text, hint) == "sglang[all]>=0.4.9"


def test_shell_bounded_range_takes_the_newest_known_release_inside(project):
    text = 'pip install "sglang>=0.4.6,<0.5"\npython -m sglang.launch_server --model-path m\n'
    hint = hints(project / "run.sh", text)[0]
    inside = [v for v in known_versions() if v.startswith("0.4.")]
    assert hint.source == "floor"
    assert hint.version == inside[-1]  # 0.5.0rc* are pre-releases of 0.5: outside `<0.5`
    compatible = 'pip install "sglang~=0.4.6.post1"\npython -m sglang.launch_server --model-path m\n'
    assert hints(project / "run.sh", compatible)[0].version == \
        [v for v in known_versions() if v.startswith("0.4.6")][-1]


def test_shell_variable_image_without_a_value_goes_on(project):
    text = 'docker run "$IMAGE" python3 -m sglang.launch_server --model-path m\n'
    hint = hints(project / "run.sh", text)[0]
    assert (hint.version, hint.source) == (None, "newest")
    with_default = ('docker run "${IMAGE:-lmsysorg/sglang:v0.4.7-cu124}" '
                    'python3 -m sglang.launch_server --model-path m\n')
    hint = hints(project / "run.sh", with_default)[0]
    assert (hint.version, hint.source) == ("0.4.7", "image")
    assert "the default of $IMAGE" in hint.detail


def test_shell_non_sglang_image_goes_on_to_the_pin(project):
    text = ("pip install sglang==0.4.4\n"
            "docker run vllm/vllm-openai:v0.8.0 python3 -m sglang.launch_server --model-path m\n")
    hint = hints(project / "run.sh", text)[0]
    assert (hint.version, hint.source) == ("0.4.4", "pin")


# --- Markdown ------------------------------------------------------------------------------------


def test_markdown_fences():
    text = (FORMATS / "SERVING.md").read_text()
    got = hints(FORMATS / "SERVING.md", root=FORMATS)
    assert [(h.version, h.source) for h in got] == [
        ("0.4.8.post1", "pin"),
        ("0.4.9.post1", "image"),
        ("0.4.10.post2", "pin"),  # git clone -b v0.4.10.post2 ... sgl-project/sglang
        ("0.5.1", "image"),  # the Dockerfile fence's FROM
    ]
    assert spanned(text, got[1]) == "lmsysorg/sglang:v0.4.9.post1-cu126"
    assert spanned(text, got[3]) == "lmsysorg/sglang:v0.5.1-cu126"


# --- YAML ----------------------------------------------------------------------------------------


def test_k8s_pod_each_container_its_own_image():
    text = (FORMATS / "pod-two-containers.yaml").read_text()
    got = hints(FORMATS / "pod-two-containers.yaml", root=FORMATS)
    assert [(h.version, h.source) for h in got] == [
        ("0.4.6.post1", "image"),
        ("0.5.3rc0", "image"),  # a tag before the digest counts
        (None, "newest"),  # a digest only names no release
    ]
    assert spanned(text, got[0]) == "lmsysorg/sglang:v0.4.6.post1-cu124"
    assert spanned(text, got[1]).startswith("lmsysorg/sglang:v0.5.3rc0-cu126@sha256:")
    assert "names no release" in got[2].detail


def test_k8s_leader_worker_set():
    got = hints(FORMATS / "lws.yaml", root=FORMATS)
    assert [h.version for h in got] == ["0.4.9.post2", "0.4.9.post3"]


def test_compose_two_services_and_a_merged_image():
    got = hints(FORMATS / "compose.yaml", root=FORMATS)
    assert [(h.version, h.source) for h in got] == [("0.4.7", "image"), ("0.4.9.post2", "image")]


def test_github_workflow_job_containers():
    got = hints(FORMATS / "workflow.yml", root=FORMATS)
    assert [(h.version, h.source) for h in got] == [
        ("0.4.6.post5", "image"),  # container: IMAGE
        ("0.5.2rc2", "image"),  # container: {image: IMAGE}
        ("0.4.5", "image"),  # a docker run in a step names its own image
        ("0.4.3", "pin"),  # no container: the pip pin above the launch
    ]


def test_skypilot_image_id():
    text = (FORMATS / "skypilot.yaml").read_text()
    hint = hints(FORMATS / "skypilot.yaml", root=FORMATS)[0]
    assert (hint.version, hint.source) == ("0.4.9.post2", "image")
    assert spanned(text, hint) == "lmsysorg/sglang:v0.4.9.post2-cu126"  # without `docker:`
    hint = hints(FORMATS / "skypilot-any-of.yaml", root=FORMATS)[0]
    assert (hint.version, hint.source) == ("0.5.1", "image")


def test_yaml_template_image_is_not_read_as_a_release(project):
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n"
            "    image: lmsysorg/sglang:{{ .Values.tag }}\n"
            "    command: [python3, -m, sglang.launch_server]\n")
    hint = hints(project / "pod.yaml", text)[0]
    assert hint.source == "newest"


# --- Dockerfile ----------------------------------------------------------------------------------


def test_dockerfile_stages():
    text = (FORMATS / "Dockerfile").read_text()
    got = hints(FORMATS / "Dockerfile", root=FORMATS)
    assert [(h.version, h.source) for h in got] == [
        ("0.4.9.post2", "image"),  # FROM lmsysorg/sglang:${SGLANG_TAG}, ARG default
        ("0.4.9.post2", "image"),  # FROM runtime: followed to runtime's image
        ("0.4.3.post2", "pin"),  # FROM nvidia/cuda: the pip pin in the file
        ("0.4.6.post5", "pin"),  # installed in its own stage over v0.4.6
    ]
    assert spanned(text, got[0]) == "lmsysorg/sglang:${SGLANG_TAG}"
    assert got[1].span == got[0].span
    assert "installed over the image lmsysorg/sglang:v0.4.6-cu124" in got[3].detail


def test_dockerfile_pin_of_another_stage_does_not_replace_the_image(project):
    text = ("FROM lmsysorg/sglang:v0.4.7 AS a\nRUN pip install sglang==0.5.0\n"
            "FROM lmsysorg/sglang:v0.4.8 AS b\n"
            'CMD ["python3", "-m", "sglang.launch_server"]\n')
    hint = hints(project / "Dockerfile", text)[0]
    assert (hint.version, hint.source) == ("0.4.8", "image")


def test_dockerfile_arg_version_pin(project):
    text = ("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nARG SGLANG_VERSION=0.4.9\n"
            'RUN pip install "sglang[all]==${SGLANG_VERSION}"\n'
            'CMD ["python3", "-m", "sglang.launch_server"]\n')
    hint = hints(project / "Dockerfile", text)[0]
    assert (hint.version, hint.source) == ("0.4.9", "pin")
    env = ("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nENV SGLANG_VERSION 0.4.6.post4\n"
           'CMD ["python3", "-m", "sglang.launch_server"]\n')
    assert hints(project / "Dockerfile", env)[0].version == "0.4.6.post4"


# --- launch.json and Python: the project ------------------------------------------------------------


def test_launch_json_reads_the_project_lock():
    project_dir = FORMATS / "vscode-project"
    hint = hints(project_dir / ".vscode" / "launch.json", root=project_dir)[0]
    assert (hint.version, hint.source) == ("0.4.10.post2", "project")
    assert hint.detail == f"sglang 0.4.10.post2 in {os.path.join('..', 'uv.lock')}"
    assert hint.path is not None and os.path.samefile(hint.path, project_dir / "uv.lock")
    assert hint.span is None


def test_launch_json_without_the_lock_reads_the_pyproject_floor(tmp_path):
    shutil.copytree(FORMATS / "vscode-project", tmp_path / "p")
    (tmp_path / "p" / "uv.lock").unlink()
    (tmp_path / "p" / ".git").mkdir()
    hint = hints(tmp_path / "p" / ".vscode" / "launch.json")[0]
    assert (hint.version, hint.source) == (None, "floor")
    assert hint.detail == ("sglang[all]>=0.4.9 in ../pyproject.toml: any release from 0.4.9 "
                           "on; checked as the newest").replace("/", os.sep)


def test_python_pin_in_the_file():
    text = (FORMATS / "pip_serve.py").read_text()
    hint = hints(FORMATS / "pip_serve.py", root=FORMATS)[0]
    assert (hint.version, hint.source) == ("0.4.6.post1", "pin")
    assert spanned(text, hint) == "sglang[all]==0.4.6.post1"


def test_python_named_image():
    text = (FORMATS / "modal_serve.py").read_text()
    hint = hints(FORMATS / "modal_serve.py", root=FORMATS)[0]
    assert (hint.version, hint.source) == ("0.5.9", "image")
    assert spanned(text, hint) == "lmsysorg/sglang:v0.5.9-cu129-amd64-runtime"


def test_python_project_requirements(project):
    (project / "requirements.txt").write_text("requests\n-r serving.txt\n")
    (project / "serving.txt").write_text("sglang[all]==0.4.5.post3 --hash=sha256:abc\n")
    src = project / "app" / "serve.py"
    src.parent.mkdir()
    text = 'import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server"])\n'
    hint = hints(src, text)[0]
    assert (hint.version, hint.source) == ("0.4.5.post3", "project")
    assert hint.detail == "sglang[all]==0.4.5.post3 in " + os.path.join("..", "serving.txt")


# --- the project search --------------------------------------------------------------------------


PY_LAUNCH = 'import subprocess\nsubprocess.run(["python", "-m", "sglang.launch_server"])\n'


def project_hint(src: Path, root: Path | None = None) -> ReleaseHint:
    src.parent.mkdir(parents=True, exist_ok=True)
    return hints(src, PY_LAUNCH, root)[0]


def test_project_nearest_directory_first(project):
    (project / "requirements.txt").write_text("sglang==0.4.1\n")
    (project / "svc").mkdir()
    (project / "svc" / "requirements.txt").write_text("sglang==0.4.2\n")
    assert project_hint(project / "svc" / "a.py").version == "0.4.2"
    assert project_hint(project / "other" / "a.py").version == "0.4.1"


def test_project_exact_anywhere_beats_a_nearer_floor(project):
    (project / "requirements.txt").write_text("sglang==0.4.1\n")
    (project / "svc").mkdir()
    (project / "svc" / "requirements.txt").write_text("sglang>=0.4.0\n")
    hint = project_hint(project / "svc" / "a.py")
    assert (hint.version, hint.source) == ("0.4.1", "project")


def test_project_lock_beats_requirements_in_one_directory(project):
    (project / "requirements.txt").write_text("sglang>=0.4\n")
    (project / "poetry.lock").write_text('[[package]]\nname = "sglang"\nversion = "0.4.3.post4"\n'
                                        'description = "x"\n')
    assert project_hint(project / "a.py").version == "0.4.3.post4"


def test_project_stops_at_git_and_at_root(tmp_path):
    (tmp_path / "requirements.txt").write_text("sglang==0.4.1\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert project_hint(repo / "a.py").source == "newest"  # above .git: not read
    inner = tmp_path / "plain" / "deep"
    assert project_hint(inner / "a.py").version == "0.4.1"  # no .git: up to the parent
    assert project_hint(inner / "a.py", root=inner).source == "newest"


@pytest.mark.parametrize("pyproject,expected", [
    ('[project]\ndependencies = ["sglang[all]==0.4.6.post2"]\n', ("0.4.6.post2", "project")),
    ('[project.optional-dependencies]\nserve = ["sglang==0.4.7.post1 ; sys_platform == \'linux\'"]\n',
     ("0.4.7.post1", "project")),
    ('[dependency-groups]\nserve = ["sglang==0.5.1.post3"]\n', ("0.5.1.post3", "project")),
    ('[tool.poetry.dependencies]\npython = "^3.10"\nsglang = "0.4.4"\n', ("0.4.4", "project")),
    ('[tool.poetry.dependencies]\nsglang = { version = "==0.4.4.post1", extras = ["all"] }\n',
     ("0.4.4.post1", "project")),
    ('[tool.poetry.group.serve.dependencies]\nsglang = { git = "https://github.com/sgl-project/sglang", tag = "v0.4.8" }\n',
     ("0.4.8", "project")),
    ('[tool.poetry.dependencies]\nsglang = "^0.4.6"\n', ("0.4.10.post2", "floor")),
    ('[project]\ndependencies = ["sglang>=0.4.9"]\n', (None, "floor")),
    ('[project]\ndependencies = ["sglang-router==0.1.6"]\n', (None, "newest")),
    ("not toml at all [[[", (None, "newest")),
])
def test_project_pyproject(project, pyproject, expected):
    (project / "pyproject.toml").write_text(pyproject)
    hint = project_hint(project / "a.py")
    if expected[1] == "floor" and expected[0] is not None:
        expected = ([v for v in known_versions() if v.startswith("0.4.")][-1], "floor")
    assert (hint.version, hint.source) == expected


def test_project_uv_lock_with_two_versions_takes_the_first(project):
    (project / "uv.lock").write_text(
        'version = 1\n\n[[package]]\nname = "sglang"\nversion = "0.4.6.post5"\n'
        'source = { registry = "https://pypi.org/simple" }\nresolution-markers = ["x"]\n\n'
        '[[package]]\nname = "sglang"\nversion = "0.5.1"\n'
        'source = { registry = "https://pypi.org/simple" }\n')
    hint = project_hint(project / "a.py")
    assert (hint.version, hint.source) == ("0.4.6.post5", "project")
    assert "of 2 locked: 0.4.6.post5, 0.5.1" in hint.detail


def test_project_files_are_cached_by_mtime_and_size(project, monkeypatch):
    req = project / "requirements.txt"
    req.write_text("sglang==0.4.1\n")
    reads = []
    real = release.read_capped
    monkeypatch.setattr(release, "read_capped", lambda p, cap: reads.append(p) or real(p, cap))
    assert project_hint(project / "a.py").version == "0.4.1"
    first = len(reads)
    assert first >= 1
    for _ in range(5):
        assert project_hint(project / "a.py").version == "0.4.1"
    assert len(reads) == first  # nothing read again
    req.write_text("sglang==0.4.22\n")  # another size
    assert project_hint(project / "a.py").version == "0.4.22"
    assert len(reads) > first


# --- hostile project files ---------------------------------------------------------------------------


def within(seconds: float, fn):
    """fn() run on a thread; fails (instead of hanging the suite) when it takes longer."""
    out: list = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds}s"
    assert out, "raised"
    return out[0], time.monotonic() - start


def test_binary_requirements_are_skipped(project):
    (project / "requirements.txt").write_bytes(b"sglang==0.4.1\n\x00\x01\x02" * 100)
    (project / "constraints.txt").write_text("sglang==0.4.2\n")
    hint, _ = within(5, lambda: project_hint(project / "a.py"))
    assert (hint.version, hint.source) == ("0.4.2", "project")


def test_huge_project_files_are_not_read(project):
    huge = project / "requirements.txt"
    with open(huge, "wb") as f:  # sparse: large without filling the disk
        f.write(b"sglang==0.4.1\n")
        f.truncate(release.MAX_BYTES + 1)
    lock = project / "uv.lock"
    with open(lock, "wb") as f:
        f.write(b'[[package]]\nname = "sglang"\nversion = "0.4.1"\n')
        f.truncate(release.MAX_LOCK_BYTES + 1)
    hint, took = within(5, lambda: project_hint(project / "a.py"))
    assert hint.source == "newest"
    assert took < 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_project_files_never_block(project):
    for name in ("requirements.txt", "pyproject.toml", "uv.lock"):
        os.mkfifo(project / name)  # nobody writes: opening one for reading would block
    (project / "poetry.lock").write_text('[[package]]\nname = "sglang"\nversion = "0.4.3"\n')
    hint, took = within(5, lambda: project_hint(project / "a.py"))
    assert (hint.version, hint.source) == ("0.4.3", "project")
    assert took < 2
    text, took = within(5, lambda: release.read_capped(str(project / "uv.lock"), 1000))
    assert text is None and took < 2  # opened without blocking, then refused


def test_directories_links_and_unreadable_files_are_skipped(project):
    (project / "requirements.txt").mkdir()
    (project / "pyproject.toml").symlink_to(project / "pyproject.toml")  # a loop
    locked = project / "constraints.txt"
    locked.write_text("sglang==0.4.2\n")
    locked.chmod(0)
    try:
        readable = os.access(locked, os.R_OK)  # root reads it anyway
        hint, _ = within(5, lambda: project_hint(project / "a.py"))
    finally:
        locked.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert (hint.version, hint.source) == (("0.4.2", "project") if readable else (None, "newest"))


def test_no_path_no_project():
    text = "python -m sglang.launch_server --model-path m\n"
    _, fmt, found = launches("run.sh", text)
    hint = detect_release(text, fmt, found[0], None)
    assert hint == ReleaseHint(None, "newest", "no SGLang release declared in the file or its "
                               "project: checked as the newest", None)


# --- precedence -----------------------------------------------------------------------------------


def test_precedence_image_pin_project_floor_newest(project):
    (project / "requirements.txt").write_text("sglang==0.4.2\n")
    src = project / "run.sh"
    image = "docker run lmsysorg/sglang:v0.4.9.post2-cu126 python3 -m sglang.launch_server\n"
    bare = "python3 -m sglang.launch_server\n"
    pin = "pip install sglang==0.4.6\n"
    floor = "pip install 'sglang>=0.4.8'\n"

    def one(text):
        h = hints(src, text)[0]
        return h.version, h.source

    assert one(pin + floor + image) == ("0.4.9.post2", "image")
    assert one(pin + floor + bare) == ("0.4.6", "pin")
    assert one(floor + bare) == ("0.4.2", "project")
    (project / "requirements.txt").write_text("sglang>=0.4.3\n")
    assert one(floor + bare)[1] == "floor"
    hint = hints(src, floor + bare)[0]
    assert hint.span is not None and hint.path is None  # the file's floor before the project's
    assert one(bare) == (None, "floor")
    assert hints(src, bare)[0].path == str(project / "requirements.txt")
    (project / "requirements.txt").unlink()
    assert one(bare) == (None, "newest")


# --- real files -----------------------------------------------------------------------------------


def test_real_aibrix_storm_service():
    """vllm-project/aibrix samples/disaggregation/sglang/tp-1p1d.yaml: a StormService whose
    prefill and decode roles run a mirror's `.../serving/sglang:v0.4.9.post2.iaas.dev...`;
    its router role runs sglang_router (no launch_server) from an `sglang-router` image."""
    text = (REAL / "aibrix-tp-1p1d.yaml").read_text()
    got = hints(REAL / "aibrix-tp-1p1d.yaml", root=REAL)
    assert [(h.version, h.source) for h in got] == [("0.4.9.post2", "image")] * 2
    assert [text.count("\n", 0, h.span.start) + 1 for h in got if h.span] == [55, 120]


def test_real_dstack_task():
    hint = hints(REAL / "dstack-deepseek-amd.dstack.yml", root=REAL)[0]
    assert (hint.version, hint.source, hint.detail) == (
        "0.4.1.post4", "image", "image lmsysorg/sglang:v0.4.1.post4-rocm620 (line 4)")


def test_real_sglang_compose_and_statefulset():
    compose = hints(REAL / "sglang-compose.yaml", root=REAL)
    assert [(h.version, h.source, h.detail) for h in compose] == [
        (None, "image", "image lmsysorg/sglang:latest (line 3)")]
    sts = hints(REAL / "sglang-k8s-distributed-sts.yaml", root=REAL)
    assert [(h.version, h.source, h.detail) for h in sts] == [
        (None, "image", "image docker.io/lmsysorg/sglang:latest (line 20)")]


def test_extractors_leave_image_none_where_nothing_names_one():
    text = "python -m sglang.launch_server --model-path m\n"
    for path in ("run.sh", "README.md"):
        body = text if path.endswith(".sh") else f"```bash\n{text}```\n"
        _, _, found = launches(path, body)
        assert [l.image for l in found] == [None]
    _, _, found = launches(FORMATS / "vscode-project" / ".vscode" / "launch.json")
    assert [l.image for l in found] == [None]
