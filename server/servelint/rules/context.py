"""What a rule is evaluated against: the launch as read, the release's flag catalog, the
target GPU (the `gpu` setting), the launch's environment as the file shows it, and the
served model when known. Passed explicitly to `evaluate`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol

from servelint.args import ParsedLaunch, Use
from servelint.catalog import Catalog


class Written(Protocol):
    """What a condition reads of a launch: the uses of each option, and whether a word
    the file does not fix may hold any option (a `ParsedLaunch`, or a launch that writes
    nothing when rules are indexed)."""

    @property
    def uncertain(self) -> bool: ...

    def uses_of(self, dest: str) -> list[Use]: ...

    def last_use(self, dest: str) -> Use | None: ...


@dataclass(frozen=True)
class RuleContext:
    launch: Written
    catalog: Catalog | None  # the release's catalog; None only for the empty launch of the index
    gpu: str | None = None  # the target GPU generation, None when the user has not said
    env: Mapping[str, str | None] | None = None  # variables the file sets (None: value not fixed)
    env_complete: bool = False  # the file shows the whole environment: others are unset
    model: Mapping[str, str] | None = None  # {"architecture": ..., "type": ...} when known
    assume: dict[Any, bool] | None = None  # values tried for unsettled GPU/env/model atoms

    @classmethod
    def of(cls, parsed: ParsedLaunch, gpu: str | None = None,
           model: Mapping[str, str] | None = None) -> RuleContext:
        from servelint.rules.resolve import view
        launch = parsed.launch
        # the resolved launch (resolve.py): what every condition reads, made once here
        return cls(view(parsed), parsed.catalog, gpu, env=launch.env,
                   env_complete=getattr(launch, "env_complete", False), model=model)
