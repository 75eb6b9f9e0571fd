"""When each SGLang option string, default and choice came and went.

Built from the catalog pack by `servelint.catalog.history()`, never at import. Every
question is about an option *string* (`--tp-size`, its alias `--tensor-parallel-size`,
a `--no-x` form): the string is what a user writes, and the same string can belong to
different option records over time (an alias moved, a flag became `bool_optional`).
Versions are the packed releases in PEP 440 order, pre-releases included.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NamedTuple

from servelint.catalog import Option, version_key

if TYPE_CHECKING:
    from servelint.catalog import _Pack

EVENT_KINDS = ("added", "removed", "readded", "deprecated", "retired", "default", "choices",
               "kind", "type", "alias")


class Event(NamedTuple):
    version: str  # the first release showing the change
    kind: str  # one of EVENT_KINDS
    detail: str  # short, human: "default 8 → 16", "choices +qwen3 -qwen25"


def show(value: Any, limit: int = 40) -> str:
    """A value as the release notes print it: strings bare, the rest as JSON."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _choice_set(choices: tuple[Any, ...] | None) -> list[Any]:
    return list(choices) if choices is not None else []


def _diff(old: list[Any], new: list[Any]) -> tuple[list[Any], list[Any]]:
    return [c for c in new if c not in old], [c for c in old if c not in new]


def changes(old: Option, new: Option, name: str | None = None) -> list[tuple[str, str]]:
    """(kind, detail) for each change that matters to a user between two records of the
    same option string, in a fixed order. `name` is the string asked about (for alias
    changes it is not listed as its own alias)."""
    out: list[tuple[str, str]] = []
    if old.kind != new.kind:
        out.append(("kind", f"kind {old.kind} → {new.kind}"))
    if old.type != new.type:
        out.append(("type", f"type {old.type or 'none'} → {new.type or 'none'}"))
    if old.default != new.default or type(old.default) is not type(new.default):
        out.append(("default", f"default {show(old.default)} → {show(new.default)}"))
    if old.choices != new.choices:
        added, gone = _diff(_choice_set(old.choices), _choice_set(new.choices))
        parts = [f"+{show(c, 30)}" for c in added] + [f"-{show(c, 30)}" for c in gone]
        if new.choices is None:
            parts.append("(now any value)")
        elif old.choices is None:
            parts.append("(was any value)")
        if parts:  # a new order alone accepts the same values
            out.append(("choices", "choices " + " ".join(parts)))
    if old.names != new.names:
        added, gone = _diff(list(old.names), list(new.names))
        added = [n for n in added if n != name]
        gone = [n for n in gone if n != name]
        if added or gone:
            out.append(("alias", "aliases " + " ".join([f"+{n}" for n in added]
                                                       + [f"-{n}" for n in gone])))
    if old.deprecated != new.deprecated:
        if new.deprecated:
            out.append(("deprecated", f"deprecated, use {new.replacement}" if new.replacement
                        else "deprecated"))
        else:
            out.append(("deprecated", "no longer deprecated"))
    if old.removed != new.removed:
        if new.removed:
            out.append(("retired", "retired: " + show(new.message, 80) if new.message
                        else "retired"))
        else:
            out.append(("retired", "no longer retired"))
    return out


class History:
    def __init__(self, pack: _Pack):
        self._pack = pack
        self.versions: tuple[str, ...] = pack.versions
        self._pos = {v: i for i, v in enumerate(self.versions)}
        self._keys = [version_key(v) for v in self.versions]
        # option string -> record id per release (-1 where absent), by release position
        n = len(self.versions)
        self._release_rids = [pack.release_rids(v) for v in self.versions]
        names_of = [pack.names(rid) for rid in range(len(pack.records))]
        at: dict[str, list[int]] = {}
        for i, rids in enumerate(self._release_rids):
            for rid in rids:
                for name in names_of[rid]:
                    row = at.get(name)
                    if row is None:
                        row = at[name] = [-1] * n
                    row[i] = rid
        self._at = at

    # -- releases ------------------------------------------------------------

    def _position(self, version: str) -> int:
        i = self._pos.get(version)
        if i is None:
            key = version_key(version)  # ValueError for a non-version
            for j, k in enumerate(self._keys):
                if k == key:
                    return j
            raise KeyError(f"no flag catalog for SGLang {version}")
        return i

    def _upto(self, upto: str | None) -> int:
        """Position of the last release <= upto (any version, packed or not); -1 if none."""
        if upto is None:
            return len(self.versions) - 1
        key = version_key(upto)
        j = -1
        for i, k in enumerate(self._keys):
            if k <= key:
                j = i
        return j

    def names(self) -> list[str]:
        """Every option string any packed release accepts, sorted."""
        return sorted(self._at)

    # -- presence ------------------------------------------------------------

    def ranges(self, name: str) -> list[tuple[str, str]]:
        """(first, last) runs of consecutive releases in which `name` is accepted."""
        row = self._at.get(name)
        if row is None:
            return []
        out: list[tuple[str, str]] = []
        start = -1
        for i, rid in enumerate(row):
            if rid >= 0 and start < 0:
                start = i
            elif rid < 0 and start >= 0:
                out.append((self.versions[start], self.versions[i - 1]))
                start = -1
        if start >= 0:
            out.append((self.versions[start], self.versions[-1]))
        return out

    def first_seen(self, name: str) -> str | None:
        row = self._at.get(name)
        if row is None:
            return None
        return next(self.versions[i] for i, rid in enumerate(row) if rid >= 0)

    def last_seen(self, name: str, upto: str | None = None) -> str | None:
        """The last release <= `upto` (default: all) that accepts `name`."""
        row = self._at.get(name)
        if row is None:
            return None
        for i in range(self._upto(upto), -1, -1):
            if row[i] >= 0:
                return self.versions[i]
        return None

    def option_at(self, name: str, version: str) -> Option | None:
        """The option `name` belongs to in packed release `version` (KeyError if that
        release is not packed), or None when that release does not accept it."""
        i = self._position(version)
        row = self._at.get(name)
        if row is None or row[i] < 0:
            return None
        return self._pack.option(row[i])

    def dest_names(self, dest: str, version: str) -> list[str]:
        """Every option string writing `dest` in `version`, in registration order."""
        i = self._position(version)
        out: list[str] = []
        for rid in self._release_rids[i]:
            if self._pack.dest(rid) == dest:
                out.extend(self._pack.option(rid).names)
        return out

    def choice_last_seen(self, name: str, value: Any, upto: str | None = None) -> str | None:
        """The last release <= `upto` whose option `name` accepted `value` among its
        choices (compared as given, or as text: "2" matches the int choice 2)."""
        row = self._at.get(name)
        if row is None:
            return None
        text = str(value)
        for i in range(self._upto(upto), -1, -1):
            if row[i] < 0:
                continue
            choices = self._pack.option(row[i]).choices
            if choices is not None and any(c == value or str(c) == text for c in choices):
                return self.versions[i]
        return None

    # -- changes -------------------------------------------------------------

    def events(self, name: str) -> list[Event]:
        """What happened to `name`, oldest first: added (or present in the oldest packed
        release), removed, readded, and the changes `changes()` reports between two
        consecutive releases that both accept it."""
        row = self._at.get(name)
        if row is None:
            return []
        out: list[Event] = []
        prev = -1  # record id in the previous release
        last = -1  # position of the last release accepting it
        for i, rid in enumerate(row):
            version = self.versions[i]
            if rid >= 0 and prev < 0:
                opt = self._pack.option(rid)
                if last >= 0:
                    out.append(Event(version, "readded",
                                     f"back after {self.versions[last]}"))
                    out.extend(Event(version, k, d)
                               for k, d in changes(self._pack.option(row[last]), opt, name))
                elif i == 0:
                    out.append(Event(version, "added", f"in {version}, the oldest release "
                                                       "servelint knows"))
                else:
                    out.append(Event(version, "added", _added_detail(opt, name)))
            elif rid < 0 and prev >= 0:
                out.append(Event(version, "removed", f"last in {self.versions[i - 1]}"))
            elif rid >= 0 and rid != prev:
                out.extend(Event(version, k, d)
                           for k, d in changes(self._pack.option(prev), self._pack.option(rid),
                                               name))
            if rid >= 0:
                last = i
            prev = rid
        return out


def _added_detail(opt: Option, name: str) -> str:
    canonical = opt.name
    if name == canonical:
        return f"new {opt.kind} option"
    if opt.kind == "bool_optional" and name == "--no-" + canonical[2:]:
        return f"negative form of {canonical}"
    return f"alias of {canonical}"
