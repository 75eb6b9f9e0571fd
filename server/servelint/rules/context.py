"""What a rule is evaluated against: the launch as read, the release's flag catalog, the
target GPU (the `gpu` setting), the launch's environment as the file shows it, and the
served model when known. Passed explicitly to `evaluate`."""

from __future__ import annotations

from typing import Any, Mapping, Protocol

from servelint.args import ParsedLaunch, Use
from servelint.catalog import Catalog
from servelint import lazy


class Record:
    """A frozen record (a parsed condition, a resolution step): what a frozen dataclass
    made (the same init, equality, hash and repr over the annotated fields), without
    generating code for each class at import, a few milliseconds of every cold start
    (issue 16)."""

    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls) -> None:
        cls._fields = tuple(cls.__dict__.get("__annotations__", ()))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        name = type(self).__qualname__
        if len(args) > len(fields):
            raise TypeError(f"{name}() takes {len(fields)} arguments, {len(args)} given")
        d = self.__dict__
        d.update(zip(fields, args))
        for key, value in kwargs.items():
            if key not in fields or key in d:
                raise TypeError(f"{name}() got an unexpected or repeated argument {key!r}")
            d[key] = value
        for key in fields:
            if key not in d and not hasattr(type(self), key):
                raise TypeError(f"{name}() missing argument {key!r}")

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        got = self.__dict__.get("_hash")
        if got is None:
            got = self.__dict__["_hash"] = hash(self._values())
        return got

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__qualname__}({inner})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")


class Written(Protocol):
    """What a condition reads of a launch: the uses of each option, and whether a word
    the file does not fix may hold any option (a `ParsedLaunch`, or a launch that writes
    nothing when rules are indexed)."""

    @property
    def uncertain(self) -> bool: ...

    def uses_of(self, dest: str) -> list[Use]: ...

    def last_use(self, dest: str) -> Use | None: ...


class RuleContext(lazy.Record, frozen=True):
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

    def assuming(self, assume: dict[Any, bool] | None) -> RuleContext:
        """This context with other assumptions (`dataclasses.replace`, without its
        per-call field walk: `assumptions` makes one per combination it tries)."""
        new = object.__new__(RuleContext)
        new.__dict__.update(self.__dict__)
        new.__dict__["assume"] = assume
        return new
