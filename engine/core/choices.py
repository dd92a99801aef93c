"""A decision in the player's own terms: what every channel offers a person.

A title describes each open decision (and each action a seat may take unprompted) as a
`Prompt`: one sentence of what to do, the picks made so far, and the next `Ask`, which is
one of

* a choice among `Option`s the engine enumerates (a cart's legal ends, a truck's legal
  paths, the cards a special may name), each with a label in words, the other names a
  player may write for it, and, where it is a place or thing on the board, the id of that
  element in the title's picture (`place`), so a page can make it clickable;
* a `Number` with its bounds, step and named values ("pass", "no bid");
* a sheet of `Number`s answered together (one price per owned item type).

A decision with several parts is a sequence of picks, each narrowed by the earlier ones:
the title is asked again with the picks so far (`Game.prompt(state, seat, picks)`) and
says what may come next and, once the picks make a whole order, that order
(`Prompt.order`) and the order in words (`Prompt.sentence`). The mapping from picks to
the order JSON is the title's; the order JSON stays the API. A prompt may be complete and
still ask (a buyer may stop after one good or buy another): then `order` is set and `ask`
offers the rest.

Picks are plain JSON values: an option's `value` (a string or an int), an int (or a named
value's `value`) for a number, an object of ints by field key for a sheet. `check_pick`
is the one place that holds a pick to its ask; a title calls it for each pick it reads
(`walk`), so a pick that was not offered is refused with `bad_pick` and changes nothing.

Channels never read a title's order JSON to speak to people: the page shows `ask`'s
options as buttons and board hotspots, number fields with their bounds; the mail numbers
the options and reads replies with `read_words`; the CLI offers them interactively. Every
string here is meant for a person: no ids, no JSON.

(Rally the Troops lists a title's legal atomic actions per prompt and makes the listed
board elements clickable; Diplicity serves a tree of legal orders walked level by level.
A prompt is one level of such a tree, built on demand, so a large tree is never built.)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.core.errors import IllegalOrder, declare_codes
from engine.core.types import Order

__all__ = [
    "Ask", "Number", "Option", "Prompt", "check_pick", "fold", "named", "read_words", "seat_ref", "walk",
]

declare_codes({
    "bad_pick": "A pick that the decision does not offer at this point.",
    "no_action": "No such action may be taken now.",
})

#: A pick: an option's value, a number, or a sheet's numbers by field key.
Pick = Any


@dataclass(frozen=True, slots=True)
class Option:
    """One thing a player may pick: `value` goes into the picks (a string or an int the
    title reads back), `label` is what a person reads ("Brügge, 4 spaces"), `words` are
    the other names a player may write for it (display names, never ids: "Bruegge"),
    `place` the id of its element in the title's picture (or None), `hint` a longer line
    shown on hover or under the label."""

    value: str | int
    label: str
    words: tuple[str, ...] = ()
    place: str | None = None
    hint: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "label": self.label}
        if self.words:
            out["words"] = list(self.words)
        if self.place is not None:
            out["place"] = self.place
        if self.hint:
            out["hint"] = self.hint
        return out


@dataclass(frozen=True, slots=True)
class Number:
    """A whole number from `min` to `max` in steps of `step` (counted from `min`), or one
    of the `named` values (an `Option` whose value may be any int or string, e.g.
    Option("pass", "pass")). `key` names it in a sheet; `default` is what a form fills
    in (None: nothing)."""

    label: str
    min: int
    max: int
    step: int = 1
    key: str = ""
    default: int | None = None
    named: tuple[Option, ...] = ()
    unit: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "min": self.min, "max": self.max, "step": self.step}
        if self.key:
            out["key"] = self.key
        if self.default is not None:
            out["default"] = self.default
        if self.named:
            out["named"] = [o.as_dict() for o in self.named]
        if self.unit:
            out["unit"] = self.unit
        out["bounds"] = self.bounds
        return out

    @property
    def bounds(self) -> str:
        """What it takes, in words, for every channel to show the same: "a whole number
        from 6 to 10 in steps of 2 (crowns), or “pass”"; thousands with a comma ("0 to 3,700")."""
        out = f"a whole number from {self.min:,} to {self.max:,}"
        if self.step != 1:
            out += f" in steps of {self.step:,}"
        if self.unit:
            out += f" ({self.unit})"
        if self.named:
            out += ", or " + " or ".join(f"“{o.label}”" for o in self.named)
        return out

    def allows(self, value: Any) -> bool:
        if any(value == o.value and type(value) is type(o.value) for o in self.named):
            return True
        return (type(value) is int and self.min <= value <= self.max
                and (value - self.min) % self.step == 0)


@dataclass(frozen=True, slots=True)
class Ask:
    """What comes next in a decision: `question` in words, and exactly one of `options`
    (pick one), `number` (a whole number) or `sheet` (several numbers at once, a pick
    being an object of them by key). `key` names the part for programs ("cart", "to")."""

    key: str
    question: str
    options: tuple[Option, ...] = ()
    number: Number | None = None
    sheet: tuple[Number, ...] = ()

    def __post_init__(self) -> None:
        kinds = bool(self.options) + (self.number is not None) + bool(self.sheet)
        if kinds != 1:
            raise ValueError(f"an ask has exactly one of options, number or sheet ({self.key!r} has {kinds})")

    @property
    def kind(self) -> str:
        return "choose" if self.options else "number" if self.number is not None else "sheet"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "kind": self.kind, "question": self.question}
        if self.options:
            out["options"] = [o.as_dict() for o in self.options]
        elif self.number is not None:
            out["number"] = self.number.as_dict()
        else:
            out["sheet"] = [n.as_dict() for n in self.sheet]
        return out

    def option(self, value: Any) -> Option | None:
        for o in self.options:
            if o.value == value and type(o.value) is type(value):
                return o
        return None


@dataclass(frozen=True, slots=True)
class Prompt:
    """One level of a decision: `say` (what to do now, one sentence), the picks so far,
    `ask` (what may come next, None when nothing more may be picked), `order` (the order
    the picks make, once they make one; None while incomplete) and `sentence` (the order
    so far in words: "Move cart 2 from Köln 4 spaces toward Brügge")."""

    say: str
    picks: tuple[Pick, ...] = ()
    ask: Ask | None = None
    order: Order | None = None
    sentence: str = ""
    #: Labels of the picks so far, in words (for "you chose ..." lines).
    chosen: tuple[str, ...] = field(default=())

    @property
    def complete(self) -> bool:
        return self.order is not None

    def as_dict(self) -> dict[str, Any]:
        return {
            "say": self.say,
            "picks": list(self.picks),
            "chosen": list(self.chosen),
            "ask": self.ask.as_dict() if self.ask is not None else None,
            "complete": self.order is not None,
            "order": self.order,
            "sentence": self.sentence,
        }


def check_pick(ask: Ask, pick: Any) -> str:
    """Hold `pick` to `ask`; return the pick in words (for `Prompt.chosen`). Raises
    `IllegalOrder("bad_pick")` for anything the ask does not offer (exact JSON types: a
    bool is no number, "3" is no 3)."""
    if ask.options:
        found = ask.option(pick)
        if found is None:
            raise IllegalOrder("bad_pick", f"{_show(pick)} is not one of the choices for: {ask.question}")
        return found.label
    if ask.number is not None:
        if not ask.number.allows(pick):
            raise IllegalOrder("bad_pick", f"{_show(pick)} is not allowed for: {ask.question} ({ask.number.bounds})")
        return _number_words(ask.number, pick)
    if type(pick) is not dict or set(pick) != {n.key for n in ask.sheet}:
        keys = ", ".join(n.label for n in ask.sheet)
        raise IllegalOrder("bad_pick", f"{ask.question}: give one number for each of {keys}")
    for n in ask.sheet:
        if not n.allows(pick[n.key]):
            raise IllegalOrder("bad_pick", f"{n.label}: {_show(pick[n.key])} is not allowed ({n.bounds})")
    return ", ".join(f"{n.label} {_number_words(n, pick[n.key])}" for n in ask.sheet)


def walk(picks: Sequence[Any], asks: Callable[[tuple[Any, ...]], Ask | None]) -> tuple[list[str], Ask | None]:
    """Check `picks` one by one against the asks a title makes after each prefix
    (`asks(prefix)` is the ask after `prefix`, None when nothing more may be picked);
    return the picks in words and the ask after all of them. A title's `prompt` is
    usually this plus the order its picks make."""
    if not isinstance(picks, list | tuple):
        raise IllegalOrder("bad_pick", "picks are a list")
    chosen: list[str] = []
    for i, pick in enumerate(picks):
        ask = asks(tuple(picks[:i]))
        if ask is None:
            raise IllegalOrder("bad_pick", "the decision is complete: nothing more may be picked")
        chosen.append(check_pick(ask, pick))
    return chosen, asks(tuple(picks))


def _show(pick: Any) -> str:
    if isinstance(pick, str):
        return f"“{pick[:40]}”"
    if type(pick) is int:
        return str(pick)
    return "that"


def _number_words(n: Number, value: Any) -> str:
    for o in n.named:
        if o.value == value and type(o.value) is type(value):
            return o.label
    return f"{value} {n.unit}".strip()


# -- player names ------------------------------------------------------------------------
#: Marks a seat's number in a prompt's texts, for `named` to put the player's name there.
_MARK = "\u2063"
_SEAT = re.compile(_MARK + r"(\d+)" + _MARK)


def seat_ref(seat: int) -> str:
    """A seat in a prompt's words, before names are known: a title writes
    `f"Trade with {seat_ref(2)}"`, and `named` makes it "Trade with Henry". (A title
    builds a prompt from the state and a view, which hold no player names: the service
    knows them.)"""
    return f"{_MARK}{seat}{_MARK}"


def named(prompt: Prompt, names: Sequence[str] | None) -> Prompt:
    """`prompt` with every `seat_ref` in its texts replaced by that seat's name (or
    "Seat N" where `names` has none). Every channel names a prompt before showing it."""
    def put(text: str) -> str:
        return name_seats(text, names)

    def opt(o: Option) -> Option:
        return replace(o, label=put(o.label), hint=put(o.hint), words=tuple(put(w) for w in o.words))

    def num(n: Number) -> Number:
        return replace(n, label=put(n.label), unit=put(n.unit), named=tuple(opt(o) for o in n.named))

    ask = prompt.ask
    if ask is not None:
        ask = replace(ask, question=put(ask.question), options=tuple(opt(o) for o in ask.options),
                      number=num(ask.number) if ask.number is not None else None,
                      sheet=tuple(num(n) for n in ask.sheet))
    return replace(prompt, say=put(prompt.say), sentence=put(prompt.sentence), ask=ask,
                   chosen=tuple(put(c) for c in prompt.chosen))


def name_seats(text: str, names: Sequence[str] | None) -> str:
    """`text` with every `seat_ref` replaced by that seat's name (see `named`)."""
    return _SEAT.sub(lambda m: _name(names, int(m.group(1))), text) if _MARK in text else text


def _name(names: Sequence[str] | None, seat: int) -> str:
    if names is not None and 0 <= seat < len(names) and str(names[seat]).strip():
        return str(names[seat]).strip()
    return f"Seat {seat}"


# -- reading a person's words --------------------------------------------------------------
_SPECIAL = str.maketrans({"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ł": "l"})
_GERMAN = {"ae": "a", "oe": "o", "ue": "u"}
_WORD = re.compile(r"(?:(?<![a-z0-9])-)?\d+|[a-z0-9]+")  # "-5" keeps its sign, "Saint-Malo" is two words


def fold(text: str) -> str:
    """`text` as the reader compares it: case-, accent- and punctuation-insensitive words
    joined by single spaces ("Brügge", "BRUGGE", "Bruegge" and "brugge" all fold to
    "brugge"; "Köln" and "Koeln" to "koln")."""
    t = unicodedata.normalize("NFKD", text.casefold().translate(_SPECIAL))
    t = "".join(c for c in t if not unicodedata.combining(c))
    words = _WORD.findall(t)
    return " ".join(_german(w) for w in words)


def _german(word: str) -> str:
    # "ue" after a consonant or at a word's start is the spelling of an umlaut (Bruegge,
    # Koeln, Muenchen); "ue" after a vowel or q is not (Queue, blue stays readable either way).
    out = []
    i = 0
    while i < len(word):
        pair = word[i:i + 2]
        if pair in _GERMAN and (i == 0 or word[i - 1] not in "aeiouq") and i + 2 <= len(word) and len(word) > 3:
            out.append(_GERMAN[pair])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return "".join(out)


def names_of(option: Option) -> list[str]:
    """Every folded name a person may write for `option`: its label and its words, and
    for a label "X (Y)" also X alone ("Gertrud" for "Gertrud (trader bot)", "Christopher"
    for "Christopher (yellow)", "Horses" for "Horses (position 1)")."""
    seen: list[str] = []
    short = option.label.split(" (", 1)[0] if " (" in option.label else ""
    for n in (option.label, *option.words, short):
        f = fold(n)
        if f and f not in seen:
            seen.append(f)
    return seen


def _find(hay: str, needle: str) -> int:
    """The index of `needle` as whole words in `hay` (both folded), or -1."""
    start = 0
    while True:
        i = hay.find(needle, start)
        if i < 0:
            return -1
        before = i == 0 or hay[i - 1] == " "
        after = i + len(needle) == len(hay) or hay[i + len(needle)] == " "
        if before and after:
            return i
        start = i + 1


def match_option(ask: Ask, text: str) -> tuple[Option, str] | None:
    """The option of `ask` that `text` names (folded; as whole words), preferring the
    earliest, then the longest name ("to Bremen via Hamburg" names Bremen for where to,
    and Hamburg is left for the way); with `text` less the words that named it."""
    hay = fold(text)
    if hay.isdigit() and len(ask.options) >= int(hay) >= 1:
        chosen = ask.options[int(hay) - 1]
        # "2" where another option reads "2 levels" may mean either: ask for the words
        other = next((o for o in ask.options if o is not chosen
                      and any(_find(name, hay) == 0 for name in names_of(o))), None)
        if other is not None:
            raise IllegalOrder("bad_pick", f"“{text.strip()}” could be option {hay} ({chosen.label}) or "
                                           f"{other.label}: write the words, e.g. “{other.label}”")
        return chosen, ""
    best: tuple[int, int, Option, str] | None = None
    for o in ask.options:
        for name in names_of(o):
            i = _find(hay, name)
            if i >= 0:
                rank = (i, -len(name))
                if best is None or rank < best[:2]:
                    best = (rank[0], rank[1], o, name)
    if best is None:
        return None
    i, _, o, name = best
    rest = (hay[:i] + " " + hay[i + len(name):]).strip()
    return o, rest


def match_number(n: Number, text: str) -> tuple[Any, str] | None:
    """A value of `n` named in `text`: one of its named values by its words, else the
    first whole number in the text (a leading minus kept, so "-5" is refused, not read
    as 5)."""
    hay = fold(text)
    for o in n.named:
        for name in names_of(o):
            i = _find(hay, name)
            if i >= 0:
                return o.value, (hay[:i] + " " + hay[i + len(name):]).strip()
    m = re.search(r"(?<![\w.])(-?\d+)(?![\w.])", text)
    if m is None:
        return None
    return int(m.group(1)), (text[:m.start()] + " " + text[m.end():]).strip()


def read_words(text: str, prompt: Callable[[list[Any]], Prompt], *, picks: Iterable[Any] = ()) -> Prompt:
    """Read a person's words as picks: `text` is a reply line or several ("2", "Wein",
    "Buy 1 Wein in Lyon", "cart 2 to Brügge", "Tuch 5, Wein 6"); `prompt(picks)` is the
    title's prompt after `picks`. Each line is read against the asks in turn: a choice
    by the option's number (a line that is only a number) or by the words of an option
    anywhere in the line; a number by a named value's words or the first whole number; a
    sheet by each field's label followed by its number. A line may answer several asks
    ("Buy 1 Wein in Lyon"). Returns the prompt after everything read; raises
    `IllegalOrder("bad_pick")`, saying what was expected, for words that answer no ask
    (a value outside an ask's bounds is refused by `check_pick` the same way)."""
    got = list(picks)
    current = prompt(got)
    lines = [ln.strip() for ln in re.split(r"[\n;]+", text) if ln.strip()]
    for line in lines:
        rest = line
        progressed = False
        while rest.strip() and current.ask is not None:
            step = _read_one(current.ask, rest, whole_line=not progressed)
            if step is None:
                break
            pick, rest = step
            check_pick(current.ask, pick)
            got.append(pick)
            current = prompt(got)
            progressed = True
        if not progressed:
            if current.ask is None:
                raise IllegalOrder("bad_pick", f"the order is already complete; “{line[:60]}” is more than it takes")
            ask = current.ask
            raise IllegalOrder("bad_pick", f"“{line[:60]}” does not answer: {ask.question} {_expect(ask)}")
    return current


def _read_one(ask: Ask, text: str, *, whole_line: bool) -> tuple[Any, str] | None:
    if ask.options:
        if not whole_line and fold(text).isdigit():
            return None  # a bare number after other words is not an option's number
        found = match_option(ask, text)
        return None if found is None else (found[0].value, found[1])
    if ask.number is not None:
        return match_number(ask.number, text)
    values: dict[str, Any] = {}
    for part in re.split(r"[,/]+", text):
        hay = fold(part)
        for n in sorted(ask.sheet, key=lambda n: -len(fold(n.label))):
            label = fold(n.label)
            if n.key in values or not label or _find(hay, label) != 0:
                continue
            num = match_number(n, hay[len(label):])
            if num is not None:
                values[n.key] = num[0]
                break
    if not values:
        return None
    for n in ask.sheet:  # fields not named keep the form's default
        if n.key not in values and n.default is not None:
            values[n.key] = n.default
    return values, ""


def _expect(ask: Ask) -> str:
    if ask.options:
        shown = ", ".join(o.label for o in ask.options[:8])
        more = f" (and {len(ask.options) - 8} more)" if len(ask.options) > 8 else ""
        return f"(one of: {shown}{more})"
    if ask.number is not None:
        return f"({ask.number.bounds})"
    return "(" + ", ".join(f"{n.label} and a number" for n in ask.sheet) + ")"


def options_by_place(prompt: Prompt) -> Mapping[str, Option]:
    """The options of `prompt`'s ask that are places on the picture, by element id."""
    if prompt.ask is None:
        return {}
    return {o.place: o for o in prompt.ask.options if o.place is not None}
