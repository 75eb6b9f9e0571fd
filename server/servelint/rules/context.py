"""What a rule is evaluated against: the launch as read, the release's flag catalog, the
target GPU (the `gpu` setting). Passed explicitly to `evaluate`; the model a launch serves
will join these fields when rules read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

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

    @classmethod
    def of(cls, parsed: ParsedLaunch, gpu: str | None = None) -> RuleContext:
        return cls(parsed, parsed.catalog, gpu)
