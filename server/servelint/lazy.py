"""Modules imported on first use: a shell script never pays for PyYAML (about a third of a
cold `servelint check` of one file went to importing it for the YAML formats' modules).

    from servelint.lazy import yaml   # a stand-in; `yaml.safe_load` imports PyYAML then

Type checkers see the real module (modules write `if TYPE_CHECKING: import yaml`).

`Record` is the other thing a cold start should not pay for: a dataclass made without
generating and compiling its methods at import.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**kwargs: Any):
        """Type checkers read `Record` subclasses as dataclasses; nothing to do at run time."""
        return lambda cls: cls


class LazyModule:
    """Forwards attribute reads to the module `name`, imported at the first read."""

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{'' if self._module is None else ' (imported)'}>"


yaml = LazyModule("yaml")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """What `field()` puts in a `Record` class body (dataclasses.field's options that
    records take)."""

    __slots__ = ("default", "default_factory", "init", "repr", "compare")

    def __init__(self, default: Any, default_factory: Any, init: bool, repr: bool,
                 compare: bool) -> None:
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.compare = init, repr, compare


def field(*, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True,
          repr: bool = True, compare: bool = True) -> Any:
    """A `Record` field's options, as `dataclasses.field` takes them (which records also
    accept): this one does not import dataclasses, whose import (with inspect) is a
    twentieth of a cold check."""
    return Field(default, default_factory, init, repr, compare)


def _field_of(value: Any) -> Any:
    """`value` when it is this module's or dataclasses' field options, else None (a
    dataclasses.Field exists only once dataclasses is imported: it is not imported here)."""
    if isinstance(value, Field):
        return value
    dc = sys.modules.get("dataclasses")
    if dc is not None and isinstance(value, dc.Field):
        return value
    return None


@dataclass_transform(field_specifiers=(field, Field))
class Record:
    """A record class, as `@dataclass` makes it (the annotated fields in order, base
    classes' first; an `__init__` taking them by position or name, with their defaults and
    `field(default_factory=...)`; `__post_init__`; equality over the fields that compare;
    a repr of the fields that show; `frozen=True`: no assignment, hashed by value), from
    one shared set of methods instead of code generated and compiled for every class when
    its module is imported: a dataclass costs about 2.5 million instructions to make, and
    a cold `servelint check` made 47 of them (issue 16).

        class Spot(Record):
            name: str
            uses: list[int] = field(default_factory=list)   # dataclasses.field

    `ClassVar` annotations are not fields; `eq=False` compares and hashes by identity. No
    `slots`, `kw_only`, `order` or `match_args`.
    """

    _fields: ClassVar[tuple[str, ...]] = ()
    _init: ClassVar[tuple[str, ...]] = ()  # the fields __init__ takes (field(init=False): not)
    _compare: ClassVar[tuple[str, ...]] = ()
    _repr: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _factories: ClassVar[dict[str, Any]] = {}
    _frozen: ClassVar[bool] = False

    def __init_subclass__(cls, frozen: bool | None = None, eq: bool = True,
                          **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own_eq = "__eq__" in cls.__dict__
        if not eq:  # as @dataclass(eq=False): compared and hashed by identity
            cls.__eq__ = object.__eq__  # type: ignore[method-assign]
            cls.__hash__ = object.__hash__  # type: ignore[method-assign]
        elif not own_eq and cls.__eq__ is object.__eq__:  # below an eq=False record
            cls.__eq__ = Record.__eq__  # type: ignore[method-assign]
        fields = list(cls._fields)
        init, compare, shown = set(cls._init), set(cls._compare), set(cls._repr)
        defaults, factories = dict(cls._defaults), dict(cls._factories)
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            text = annotation if isinstance(annotation, str) else repr(annotation)
            if text.startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in fields:
                fields.append(name)
            absent = object()
            value = cls.__dict__.get(name, absent)
            defaults.pop(name, None)
            factories.pop(name, None)
            for group in (init, compare, shown):
                group.add(name)
            spec = _field_of(value)
            if spec is not None:
                # dataclasses.field's MISSING is its own: "not given" is any non-callable
                # default_factory, and a default of that sentinel's type
                if not spec.init:
                    init.discard(name)
                if not spec.compare:
                    compare.discard(name)
                if not spec.repr:
                    shown.discard(name)
                if callable(spec.default_factory):
                    factories[name] = spec.default_factory
                if _given(spec.default):
                    defaults[name] = spec.default
                    setattr(cls, name, spec.default)
                else:
                    delattr(cls, name)
            elif value is not absent:
                defaults[name] = value
        cls._fields = tuple(fields)
        cls._init = tuple(f for f in fields if f in init)
        cls._compare = tuple(f for f in fields if f in compare)
        cls._repr = tuple(f for f in fields if f in shown)
        cls._defaults, cls._factories = defaults, factories
        if frozen is not None:
            cls._frozen = frozen
        if cls._frozen:
            if eq:
                cls.__hash__ = Record._frozen_hash  # type: ignore[method-assign,assignment]
            cls.__setattr__ = Record._frozen_setattr  # type: ignore[method-assign,assignment]
            cls.__delattr__ = Record._frozen_delattr  # type: ignore[method-assign,assignment]
        elif not own_eq and eq:
            cls.__hash__ = None  # type: ignore[assignment]  # as a dataclass with eq

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self._init
        if len(args) > len(names):
            raise TypeError(f"{type(self).__qualname__}() takes {len(names)} arguments, "
                            f"{len(args)} given")
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in given:
                raise TypeError(f"{type(self).__qualname__}() got an unexpected or repeated "
                                f"argument {key!r}")
            given[key] = value
        d = self.__dict__
        defaults, factories = self._defaults, self._factories
        for name in self._fields:
            if name in given:
                d[name] = given[name]
            elif name in factories:
                d[name] = factories[name]()
            elif name in defaults:
                d[name] = defaults[name]
            else:
                raise TypeError(f"{type(self).__qualname__}() missing argument {name!r}")
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def _values(self) -> tuple:
        return tuple([getattr(self, f) for f in self._compare])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def _frozen_hash(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._repr)
        return f"{type(self).__qualname__}({inner})"

    def _frozen_setattr(self, name: str, value: Any) -> None:
        from dataclasses import FrozenInstanceError
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def _frozen_delattr(self, name: str) -> None:
        from dataclasses import FrozenInstanceError
        raise FrozenInstanceError(f"cannot delete field {name!r}")


def _given(default: Any) -> bool:
    """Whether a field's default was given (not this module's or dataclasses' MISSING)."""
    if default is MISSING:
        return False
    dc = sys.modules.get("dataclasses")
    return dc is None or default is not dc.MISSING


class LazyPattern:
    """A regular expression compiled at its first use, not when its module is imported: a
    pattern costs about half a million instructions to compile, and most of a module's
    patterns serve texts a cold check may never see (suppression comments, say). After
    the first use its methods are read as fast as a compiled pattern's."""

    def __init__(self, pattern: str | bytes, flags: int = 0):
        self._source = (pattern, flags)

    def __getattr__(self, attr: str) -> Any:
        import re

        pattern, flags = self._source
        compiled: Any = re.compile(pattern, flags)
        for name in ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn",
                     "split", "pattern", "flags", "groups", "groupindex"):
            self.__dict__[name] = getattr(compiled, name)
        return getattr(compiled, attr)

    def __repr__(self) -> str:
        return f"<lazy pattern {self._source[0]!r}>"


class LazyLogger:
    """`logging.getLogger(name)`, with logging imported at the first message: a module that
    logs only when something fails need not import logging (30 million instructions with
    threading and traceback, 6% of a cold check) for every run that does not fail.

        log = LazyLogger(__name__)   # instead of logging.getLogger(__name__)
    """

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        import logging

        return getattr(logging.getLogger(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy logger {self._name!r}>"


# The bytes a `file:` URI keeps as they are (urllib.parse's always-safe set, and `/`).
_URI_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")


def file_uri(path: str) -> str:
    """`pathlib.Path(path).as_uri()` for an absolute, normalized path (`os.path.abspath`'s),
    without importing pathlib and urllib.parse (18 million instructions of a cold check)
    where the URI is plain: on POSIX, the path's bytes with every other byte written
    `%XX`. Elsewhere (Windows drives and UNC shares), pathlib itself."""
    import os

    if os.name != "posix":
        from pathlib import Path

        return Path(path).as_uri()
    data = os.fsencode(path)
    return "file://" + "".join(chr(b) if b in _URI_SAFE else "%%%02X" % b for b in data)
