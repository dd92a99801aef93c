"""What a title shows to whom: the declared information structure and the one stripper.

A title declares its state's information structure as data (`Information`), and every
view of every title is built from that declaration by `strip`, by allow-list: a state key
that nobody declared never leaves the engine, whoever looks. (OpenSpiel declares a game's
information type up front; boardgame.io strips `secret` and other players' entries in one
place. Kontor does both, per field.)

The parts of a declaration:

* `PUBLIC`: everyone sees the value (copied whole).
* `Own(...)`: inside `Seats`, the value belongs to one seat (the entry's index). The
  owner sees it; so do the seats a title grants it to (`shown_to`, e.g. a card that lets
  one player look at another's hand), the admin, and everyone once the game is over.
  Other viewers get at most its size (`count_as`).
* `Secret(...)`: nobody sees it while the game runs (a deck's order); the admin does; it
  opens at the end unless `reveal_at_end=False`. `count_as` publishes its size.
* `NEVER`: never leaves the engine, not even for the admin or at the end (the RNG state:
  the seed is revealed by the service, and replaying rebuilds the stream).
* `Fields({...})`: a JSON object whose keys are allow-listed, each with its own part.
* `Seats(part)`: a list indexed by seat (or an object keyed by seat number), each entry
  read with `part` and that seat as its owner.
* `Derived(fn)`: a public value computed from the whole state in place of the stored one
  (e.g. a board's name instead of its whole document).

Who sees what, for a viewer that is a seat `i`, the public, or the admin:

| part       | seat i (owner)    | seat i (not owner)         | public          | admin            |
|------------|-------------------|----------------------------|-----------------|------------------|
| PUBLIC     | yes               | yes                        | yes             | yes              |
| Own        | yes               | count only, unless granted | count only      | yes              |
| Secret     | count only        | count only                 | count only      | yes              |
| NEVER      | no                | no                         | no              | no               |
| (undeclared) | no              | no                         | no              | no               |

Once `Information.is_over(state)` holds, Own and Secret (with `reveal_at_end`) open for
everyone. The key `commitment` (the seed commitment the core adds at setup) is always
public.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.core.types import State, Viewer, clone

#: State keys the core itself manages and shows to everyone.
CORE_PUBLIC = ("commitment",)


class Part:
    """One node of an information declaration."""


@dataclass(frozen=True)
class _Public(Part):
    def __repr__(self) -> str:
        return "PUBLIC"


@dataclass(frozen=True)
class _Never(Part):
    def __repr__(self) -> str:
        return "NEVER"


PUBLIC: Part = _Public()
NEVER: Part = _Never()

Grant = Callable[[State, int], Iterable[int]]


@dataclass(frozen=True)
class Own(Part):
    """A seat's own value. `count_as` names a public sibling key holding its size
    (`count` is "sum" for a map of counts, "len" for a list or map); `shown_to(state,
    owner)` lists further seats allowed to see it right now."""

    count_as: str | None = None
    count: str = "sum"
    shown_to: Grant | None = None


@dataclass(frozen=True)
class Secret(Part):
    """Hidden from every seat while the game runs (the admin sees it)."""

    count_as: str | None = None
    count: str = "sum"
    reveal_at_end: bool = True


@dataclass(frozen=True)
class Fields(Part):
    fields: Mapping[str, Part]


@dataclass(frozen=True)
class Seats(Part):
    each: Part


@dataclass(frozen=True)
class Derived(Part):
    fn: Callable[[State], Any]


@dataclass(frozen=True)
class Hidden:
    """A hidden value of a state: where it is, whose it is (None for a secret), and its part."""

    path: tuple[Any, ...]
    owner: int | None
    part: Part


@dataclass(frozen=True)
class Information:
    """A title's declaration: the parts of its top-level state object, and when the game
    is over (everything but NEVER opens then)."""

    fields: Mapping[str, Part]
    is_over: Callable[[State], bool] = field(default=lambda s: bool(s.get("over")))
    #: `fields` compiled for `strip` (see `_compile`); made once, with the check.
    plan: Plan = field(init=False, repr=False, compare=False)
    _only: dict[tuple[str, ...], Information] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check(Fields(self.fields), "state", in_seats=False)
        object.__setattr__(self, "plan", _compile(self.fields))
        object.__setattr__(self, "_only", {})

    def only(self, keys: tuple[str, ...]) -> Information:
        """This declaration of the top-level `keys` only: `strip` with it builds just those
        parts of a view (and their `count_as` sizes), for a caller that reads no other,
        such as a bot (remembered per `keys`)."""
        found = self._only.get(keys)
        if found is None:
            found = self._only[keys] = Information({k: p for k, p in self.fields.items() if k in keys}, self.is_over)
        return found

    def hidden_paths(self, state: State) -> list[Hidden]:
        """Every value of `state` that some viewer may not see: the Own values of every
        seat and the Secret values, with their path (keys and list indexes) and owner.
        For the generic redaction tests, which change them and check that nobody else's
        output changes."""
        out: list[Hidden] = []
        _hidden(Fields(self.fields), state, (), None, out)
        return out

    def may_see(self, hidden: Hidden, state: State, viewer: Viewer) -> bool:
        """Whether `viewer` may see the hidden value `hidden` in `state` right now."""
        walker = _Walker(state, viewer, self.is_over(state))
        if isinstance(hidden.part, Own):
            return walker.sees_own(hidden.part, hidden.owner)
        return walker.admin or (walker.over and isinstance(hidden.part, Secret) and hidden.part.reveal_at_end)


def strip(info: Information, state: State, viewer: Viewer, *, share: bool = False) -> dict[str, Any]:
    """The state as `viewer` may see it, built from `info` by allow-list. The result
    shares nothing with `state` (the caller may change it freely), unless `share` is
    set: then it holds the state's own values (for a caller that only reads it, such as
    a bot, which need not pay for the copy)."""
    walker = _Walker(state, viewer, info.is_over(state))
    out = walker.fields(info.plan, state, None)
    for key in CORE_PUBLIC:
        if key in state:
            out[key] = state[key]
    return out if share else clone(out)


def owner_fields(info: Information) -> dict[str, list[str]]:
    """For documentation: top-level key -> the names of its seat-owned fields."""
    out: dict[str, list[str]] = {}
    for key, part in info.fields.items():
        if isinstance(part, Seats) and isinstance(part.each, Fields):
            out[key] = [k for k, p in part.each.fields.items() if isinstance(p, Own)]
    return out


# -- internals ---------------------------------------------------------------------------
def _check(part: Part, path: str, in_seats: bool) -> None:
    if isinstance(part, Own) and not in_seats:
        raise TypeError(f"{path}: an Own part must sit inside Seats(...)")
    if isinstance(part, Own | Secret) and part.count not in ("sum", "len"):
        raise TypeError(f"{path}: count must be 'sum' or 'len'")
    if isinstance(part, Fields):
        for key, sub in part.fields.items():
            _check(sub, f"{path}.{key}", in_seats)
    elif isinstance(part, Seats):
        _check(part.each, f"{path}[seat]", True)
    elif not isinstance(part, Part):
        raise TypeError(f"{path}: {part!r} is not an information part")


def size(value: Any, how: str) -> int:
    """The public size of a hidden value (`count_as`): a sum of counts, or a length."""
    kind = type(value)  # the exact JSON types first: an ABC check is slow, and views ask often
    if how == "sum" and (kind is dict or isinstance(value, Mapping)):
        return sum(v for v in value.values() if isinstance(v, int))
    if kind is list or kind is dict or kind is str or isinstance(value, Mapping | list | tuple | str):
        return len(value)
    return 0 if value is None else 1


# A declaration compiled for `strip`: each part becomes an opcode, so a view is built by
# one loop per object instead of a chain of isinstance tests per key (a view is built on
# every bot decision). A compiled `Fields` is a `Plan`: a tuple of (key, opcode, part,
# compiled sub-part) entries in declaration order (the order of the view's keys), where
# a run of consecutive PUBLIC keys is one `_RUN` entry whose key is the tuple of keys.
_RUN, _PUBLIC, _OWN, _SECRET, _FIELDS, _SEATS, _DERIVED, _NOTHING = range(8)
#: (opcode, part, compiled sub-part); the part is typed `Any` as its opcode says what it is.
Compiled = tuple[int, Any, Any]
Plan = tuple[tuple[Any, int, Any, Any], ...]


def _compile_part(part: Part) -> Compiled:
    """One part as (opcode, part, its compiled sub-part: a `Plan` for `Fields`, a
    `Compiled` for `Seats`). Only the `PUBLIC` object itself is public (as `is` tests)."""
    if part is PUBLIC:
        return (_PUBLIC, part, None)
    if isinstance(part, Own):
        return (_OWN, part, None)
    if isinstance(part, Secret):
        return (_SECRET, part, None)
    if isinstance(part, Fields):
        return (_FIELDS, part, _compile(part.fields))
    if isinstance(part, Seats):
        return (_SEATS, part, _compile_part(part.each))
    if isinstance(part, Derived):
        return (_DERIVED, part, None)
    return (_NOTHING, part, None)


def _compile(spec: Mapping[str, Part]) -> Plan:
    out: list[tuple[Any, int, Any, Any]] = []
    run: list[str] = []
    for key, part in spec.items():
        code, _part, sub = _compile_part(part)
        if code == _PUBLIC:
            run.append(key)
            continue
        if run:
            out.append((tuple(run), _RUN, PUBLIC, None))
            run = []
        if code != _NOTHING:  # NEVER, and anything else: nothing, whoever looks
            out.append((key, code, part, sub))
    if run:
        out.append((tuple(run), _RUN, PUBLIC, None))
    return tuple(out)


class _Walker:
    __slots__ = ("state", "viewer", "over", "admin")

    def __init__(self, state: State, viewer: Viewer, over: bool) -> None:
        self.state = state
        self.viewer = viewer
        self.over = over
        self.admin = viewer == "admin"

    def fields(self, plan: Plan, value: Mapping[str, Any], owner: int | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, code, part, sub in plan:
            if code == _RUN:
                for k in key:
                    if k in value:
                        out[k] = value[k]
                continue
            if code == _DERIVED:
                out[key] = part.fn(self.state)
                continue
            if key not in value:
                continue
            item = value[key]
            if code == _OWN:
                if part.count_as:  # `size`, of a list the length whatever `count` says
                    out[part.count_as] = len(item) if type(item) is list else size(item, part.count)
                if (self.admin or self.over or (owner is not None and self.viewer == owner)  # `sees_own`, inlined
                        or (part.shown_to is not None and self.sees_own(part, owner))):
                    out[key] = item
            elif code == _SECRET:
                if part.count_as:
                    out[part.count_as] = size(item, part.count)
                if self.admin or (self.over and part.reveal_at_end):
                    out[key] = item
            elif code == _FIELDS:
                if type(item) is dict or isinstance(item, Mapping):
                    out[key] = self.fields(sub, item, owner)
            else:  # _SEATS
                out[key] = self.seats(sub, item)
        return out

    def seats(self, each: Compiled, value: Any) -> Any:
        if type(value) is list or isinstance(value, list):
            if each[0] == _FIELDS:  # `entry`, inlined for the usual seat entry
                fields, sub = self.fields, each[2]
                return [fields(sub, v, i) if type(v) is dict or isinstance(v, Mapping) else None
                        for i, v in enumerate(value)]
            return [self.entry(each, v, i) for i, v in enumerate(value)]
        if isinstance(value, Mapping):
            return {k: self.entry(each, v, int(k)) for k, v in value.items() if _seat_key(k)}
        return None

    def entry(self, each: Compiled, value: Any, owner: int) -> Any:
        code, part, sub = each
        if code == _PUBLIC:
            return value
        if code == _FIELDS:
            return self.fields(sub, value, owner) if type(value) is dict or isinstance(value, Mapping) else None
        if code == _OWN:
            return value if self.sees_own(part, owner) else None
        if code == _SECRET:
            return value if self.admin or (self.over and part.reveal_at_end) else None
        if code == _SEATS:
            return self.seats(sub, value)
        return None

    def sees_own(self, part: Own, owner: int | None) -> bool:
        if self.admin or self.over or (owner is not None and self.viewer == owner):
            return True
        if part.shown_to is None or owner is None or not isinstance(self.viewer, int):
            return False
        return self.viewer in set(part.shown_to(self.state, owner))


def _seat_key(k: Any) -> bool:
    return isinstance(k, int) or (isinstance(k, str) and k.isascii() and k.isdigit())


def _hidden(part: Part, value: Any, path: tuple[Any, ...], owner: int | None, out: list[Hidden]) -> None:
    if isinstance(part, Own | Secret):
        out.append(Hidden(path, owner if isinstance(part, Own) else None, part))
    elif isinstance(part, Fields) and isinstance(value, Mapping):
        for key, sub in part.fields.items():
            if key in value:
                _hidden(sub, value[key], (*path, key), owner, out)
    elif isinstance(part, Seats):
        if isinstance(value, list):
            for i, v in enumerate(value):
                _hidden(part.each, v, (*path, i), i, out)
        elif isinstance(value, Mapping):
            for k, v in value.items():
                if _seat_key(k):
                    _hidden(part.each, v, (*path, k), int(k), out)
