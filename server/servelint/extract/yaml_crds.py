"""Custom resources that keep a launch's command apart from its arguments.

A Kubernetes container writes its argv as `command` + `args` in one mapping, and every
resource that embeds containers (Deployments, LeaderWorkerSets, Argo, KServe and OME
runtimes, Dynamo graphs, ...) is read that way by `yaml_launch`. Some resources split the
two: the command in one place, the arguments in another, possibly several alternatives.
`SPLITS` names them with their field paths; `yaml_launch` joins the pieces into one launch
per alternative. Field paths are keys separated by dots; `[]` takes every item of a list.

Resources that only *complete* containers written elsewhere are `OPEN`: a runtime whose
container is finished by the object that uses it (a KServe or OME InferenceService adds
or replaces arguments). There a launch written without any argument is not known to lack
them, so it gets an unknown stretch instead of "--model-path is required".

RoleBasedGroup pod templates are patched per leader and worker (`PATCHED_TEMPLATES`):
each pod's containers are the template's, with the patch's containers of the same name
over them (strategic merge: `command`, `args`, `image` replaced, `env` merged by name).

The generic rule for other kinds (in `yaml_launch.walk`): a `command` list that ends with an
SGLang entrypoint, in a mapping that is not a container (no `args`, no `name` + `image`, not
in a `containers` list), takes its arguments from a sibling list whose key names arguments
(`extraArgs`, `serverArgs`, `arguments`, ...) or from the `args` of each item of a sibling
list of mappings; when none is there, the arguments are unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

_Node = Any  # yaml_launch.Node (kind, value, items, get(), resolved())


@dataclass(frozen=True)
class Split:
    kind: str
    groups: tuple[str, ...]  # API groups (apiVersion before the '/')
    command: str  # field path of the command list
    args: str  # field path of the argument lists (each one is an alternative)
    image: str | None = None  # field path of the image
    tag: str | None = None  # field path of a tag kept apart from the image
    note: str = ""


SPLITS: tuple[Split, ...] = (
    Split("BackendRuntime", ("inference.llmaz.io",), "spec.command",
          "spec.recommendedConfigs[].args", "spec.image", "spec.version",
          "llmaz: one launch per recommended config; a Playground picks one by name"),
)

# Runtimes that another object completes (an InferenceService adds or replaces arguments).
OPEN: dict[str, tuple[str, ...]] = {
    "ServingRuntime": ("serving.kserve.io", "ome.io"),
    "ClusterServingRuntime": ("serving.kserve.io", "ome.io"),
}

# RoleBasedGroup (workloads.x-k8s.io v1alpha1 and v1alpha2): where each role's pod template
# is, and the patches applied to it per pod.
RBG_GROUP = "workloads.x-k8s.io"
RBG_HOLDERS = ("leaderWorkerPattern", "standalonePattern", "customComponentsPattern")
RBG_POD_PATCHES = (("leaderTemplatePatch", "workerTemplatePatch"),  # v1alpha2, in the pattern
                   ("patchLeaderTemplate", "patchWorkerTemplate"))  # v1alpha1, in leaderWorkerSet

ARGS_KEY = re.compile(r"(?i)^(?:args|arguments|.*Args|.*Arguments|.*_args)$")
CONTAINER_LISTS = {"containers", "initContainers", "ephemeralContainers"}
CONTAINER_KEYS = {"container", "mainContainer", "runner", "sidecar", "script"}


def api_group(root: _Node) -> str:
    api = root.get("apiVersion")
    text = api.resolved().value if api is not None and api.resolved().kind == "scalar" else None
    return (text or "").split("/", 1)[0] if text and "/" in text else ""


def kind_of(root: _Node) -> str:
    kind = root.get("kind")
    text = kind.resolved().value if kind is not None and kind.resolved().kind == "scalar" else None
    return text or ""


def split_for(root: _Node) -> Split | None:
    kind, group = kind_of(root), api_group(root)
    return next((s for s in SPLITS if s.kind == kind and group in s.groups), None)


def is_open(root: _Node) -> bool:
    return api_group(root) in OPEN.get(kind_of(root), ())


def at_path(node: _Node, path: str) -> Iterator[_Node]:
    """Every node at `path` below `node` (`a.b[].c`)."""
    if node is None:
        return
    parts = path.split(".") if path else []
    yield from _walk(node, parts)


def _walk(node: _Node, parts: list[str]) -> Iterator[_Node]:
    if not parts:
        yield node
        return
    head, rest = parts[0], parts[1:]
    many = head.endswith("[]")
    key = head[:-2] if many else head
    r = node.resolved()
    if r.kind != "map":
        return
    child = r.get(key)
    if child is None:
        return
    if many:
        c = child.resolved()
        if c.kind != "seq":
            return
        for item in c.items:
            yield from _walk(item, rest)
    else:
        yield from _walk(child, rest)


def first(node: _Node, path: str) -> _Node:
    return next(at_path(node, path), None)
