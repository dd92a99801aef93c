"""Plain-English sentences for Die Händler's events, shown by every channel (CLI, mail,
webhook, web page) instead of JSON.

Each sentence says exactly what its event carries, with the players' names and the
display names of cities, goods and cards: an event only one seat may see may name the
card it gained; the public one says only that a card was gained. `Words` (names, places
and money in words) is shared with the text board (`summary`) and the picture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from engine.core.errors import EngineError
from engine.haendler.board import Board, board_names, load_board
from engine.haendler.components import components

Names = Sequence[str]


def money(n: Any) -> str:
    """An amount as players read it: 1200 -> "1,200"."""
    return f"{n:,}" if isinstance(n, int) and not isinstance(n, bool) else str(n)


def join(items: Iterable[str], last: str = "and") -> str:
    """["a", "b", "c"] -> "a, b and c"."""
    xs = list(items)
    return xs[0] if len(xs) == 1 else f"{', '.join(xs[:-1])} {last} {xs[-1]}" if xs else ""


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


_Known = tuple[dict[str, str], dict[str, str], dict[tuple[str, str], int]]


def _known(boards: Iterable[Board]) -> _Known:
    """Node and goods display names and road lengths of `boards` (the first one wins)."""
    nodes: dict[str, str] = {}
    goods: dict[str, str] = {}
    roads: dict[tuple[str, str], int] = {}
    for b in boards:
        for n in (*b.cities, *b.junction_names):
            nodes.setdefault(n, b.node_name(n))
        for g, shown in b.goods_names.items():
            goods.setdefault(g, shown)
        for x, y, k in b.roads:
            roads.setdefault((x, y), k)
    return nodes, goods, roads


@lru_cache(maxsize=1)
def _shipped() -> _Known:
    """What the shipped boards name, for events (which do not say which board they belong
    to). A node only an inline board has keeps its id."""
    boards = []
    for name in board_names():
        try:
            boards.append(load_board(name))
        except EngineError:  # a broken extra file must not silence the log
            continue
    return _known(boards)


class Words:
    """Names of seats, places, goods and cards in words, for one board (or, without one,
    the shipped boards' names)."""

    def __init__(self, names: Names, board: Board | None = None) -> None:
        self.names = list(names)
        self.board = board
        self.comp = components()
        self._nodes, self._goods, self._roads = _shipped() if board is None else _known([board])

    def seat(self, p: Any) -> str:
        try:
            i = int(p)
        except (TypeError, ValueError):
            return "someone"
        return str(self.names[i]) if 0 <= i < len(self.names) else f"seat {i}"

    def node(self, n: Any) -> str:
        """A city or junction by its display name."""
        return self._nodes.get(str(n), str(n))

    def place(self, n: Any, inline: bool = False) -> str:
        """A node in words: "Köln", or "road Köln→Brügge, space 3 of 4" (inline, for the
        middle of a sentence: "space 3 of 4 on the road Köln→Brügge")."""
        text = str(n)
        if ">" not in text or ":" not in text:
            return self.node(text)
        road, _, i = text.rpartition(":")
        a, _, b = road.partition(">")
        total = self._roads.get((a, b))
        space = f"space {i}" + (f" of {total}" if total is not None else "")
        way = f"road {self.node(a)}→{self.node(b)}"
        return f"{space} on the {way}" if inline else f"{way}, {space}"

    def good(self, g: Any) -> str:
        return self._goods.get(str(g)) or str(g).capitalize()

    def goods(self, goods: Iterable[Any]) -> str:
        """["salz", "salz", "tuch"] -> "2 Salz and 1 Tuch" (in order of first mention)."""
        counted: dict[str, int] = {}
        for g in goods:
            counted[str(g)] = counted.get(str(g), 0) + 1
        return join(f"{k} {self.good(g)}" for g, k in counted.items()) or "nothing"

    def card(self, c: Any) -> str:
        a = self.comp.abilities.get(str(c))
        return a.name if a else self.comp.influence_names.get(str(c), str(c).replace("_", " "))

    def cards(self, hand: Mapping[str, int]) -> str:
        return join(f"{k} {self.card(c)}" for c, k in hand.items() if k) or "none"


# -- the sentences ----------------------------------------------------------------------
def describe_event(e: Mapping[str, Any], names: Names, board: Board | None = None) -> str:
    """One sentence for the event `e`, naming seats by `names` (see the module doc)."""
    w = Words(names, board)
    kind = str(e.get("type", "event"))
    say = _SAY.get(kind)
    if say is not None:
        try:
            return say(w, e)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            pass  # an event of an older or newer shape: the generic sentence below
    who = f" ({w.seat(e['seat'])})" if isinstance(e.get("seat"), int) else ""
    return f"Game event: {kind.replace('_', ' ')}{who}."


def _s(w: Words, e: Mapping[str, Any]) -> str:
    return w.seat(e["seat"])


def _bought(w: Words, e: Mapping[str, Any]) -> str:
    goods = e["goods"]
    if not goods:
        return f"{_s(w, e)} bought nothing."
    by_city: dict[str, list[str]] = {}
    for x in goods:
        by_city.setdefault(x["city"], []).append(x["good"])
    where = join(f"{w.goods(gs)} in {w.node(c)}" for c, gs in by_city.items())
    return f"{_s(w, e)} bought {where} for {money(e['paid'])}."


def _cart_auction(w: Words, e: Mapping[str, Any]) -> str:
    bids = sorted(((int(k), v) for k, v in e["bids"].items()), key=lambda kv: (-kv[1], kv[0]))
    shown = join(f"{w.seat(p)} {money(v)}" for p, v in bids)
    paid = f"for {money(e['paid'])}" if e["paid"] else "for free"
    return f"Sealed bids for cart {e['cart']}: {shown}; {w.seat(e['master'])} becomes its loading master {paid}."


def _tariff(t: Any) -> str:
    return "refused" if t is None else f"{money(t[0])} for one good, {money(t[1])} for two"


def _cart_master(w: Words, e: Mapping[str, Any]) -> str:
    same: dict[str, list[str]] = {}  # seats with the same tariff share one phrase
    for p, t in sorted(e["tariffs"].items(), key=lambda x: int(x[0])):
        same.setdefault(_tariff(t), []).append(w.seat(p))
    tariffs = "; ".join(f"{join(seats)} {t}" for t, seats in same.items())
    loaded = w.goods(e["loaded"]) if e["loaded"] else "nothing"
    return (f"{_s(w, e)}, loading master of cart {e['cart']}, loaded {loaded} and set the tariffs: "
            f"{tariffs or 'none'}.")  # fmt: skip


def _cart_loaded(w: Words, e: Mapping[str, Any]) -> str:
    loads = [
        f"{w.seat(x['seat'])} loaded {w.goods(x['goods'])} "
        + ("with Kostenlose Zuladung" if x["card"] else f"for {money(x['paid'])}")
        for x in e["loads"]
    ]
    if not loads:
        return f"Nobody else loaded goods onto cart {e['cart']}."
    return f"Onto cart {e['cart']}: {join(loads)}."


def _achsbruch(w: Words, e: Mapping[str, Any]) -> str:
    plays = [f"{w.seat(x['seat'])} on {_carts(x['carts'])}" for x in e["plays"] if x["carts"]]
    return f"Achsbruch played: {join(plays)}." if plays else "Nobody played Achsbruch."


def _carts(numbers: Sequence[Any]) -> str:
    return f"cart{'s' if len(numbers) != 1 else ''} {join(str(n) for n in numbers)}"


def _step(w: Words, x: Mapping[str, Any]) -> str:
    meets = " and met the messenger" if x.get("card") else ""
    if "messenger" in x:
        met = " and met a cart" if x.get("card") else ""
        return (f"moved the messenger with {w.card(x['messenger'])} from {w.place(x['from'], True)} "
                f"to {w.place(x['to'], True)}{met}")  # fmt: skip
    if x.get("forfeit"):
        return f"flipped tile {x['tile']} without moving (no cart could move {x['tile']})"
    if "tile" in x:
        extra = f" plus {plural(x['points'], 'Wagnerei point')}" if x.get("points") else ""
        return f"flipped tile {x['tile']}{extra} and moved cart {x['cart']} from {w.place(x['from'], True)} " \
               f"to {w.place(x['to'], True)}{meets}"  # fmt: skip
    return (f"moved cart {x['cart']} by {plural(x['points'], 'Wagnerei point')} from {w.place(x['from'], True)} "
            f"to {w.place(x['to'], True)}{meets}")  # fmt: skip


def _moved(w: Words, e: Mapping[str, Any]) -> str:
    parts = [f"lifted Achsbruch from {_carts(e['lifted'])}"] if e["lifted"] else []
    parts += [_step(w, x) for x in e["steps"]]
    gains = f", gaining {plural(e['gains'], 'influence card')}" if e.get("gains") else ""
    return f"{_s(w, e)} {'; then '.join(parts) or 'did not move'}{gains}."


def _card_gained(w: Words, e: Mapping[str, Any]) -> str:
    if "kind" in e:  # the gainer's own event
        deck = {k: v for k, v in (e.get("deck") or {}).items() if v}
        came = f" (the deck held {w.cards(deck)})" if deck else ""
        return f"{_s(w, e)} took a {w.card(e['kind'])} card from the influence deck{came}."
    return f"{_s(w, e)} gained an influence card; {plural(e['deck_size'], 'card')} left in the deck."


def _price_votes(w: Words, e: Mapping[str, Any]) -> str:
    shown = "; ".join(
        f"{w.seat(p)} {join('shield' if a is None else w.good(a) for a in arrows)}"
        for p, arrows in sorted(e["arrows"].items(), key=lambda x: int(x[0]))
    )
    votes = e["votes"]
    moved = join(f"{w.good(g)} {plural(n, 'vote')} (now row {e['prices'][g]})" for g, n in votes.items())
    return f"Price wheels: {shown}; " + (f"{moved}." if votes else "no price changes.")


def _price_adjusted(w: Words, e: Mapping[str, Any]) -> str:
    moves = [f"{w.good(m['good'])} {m['dir']} with {w.card(m['card'])}" for m in e["moves"]]
    if not moves:
        return f"{_s(w, e)} changed no price."
    now = join(f"{w.good(g)} row {e['prices'][g]}" for g in dict.fromkeys(m["good"] for m in e["moves"]))
    # Großes Kontor may wrap (H-80): one move down that lands on the top row, or up that
    # lands on row 1, went round the table; say so, or "down ... now row 5" reads wrong.
    top = len((w.board or load_board("reconstructed-default")).price_rows)
    only = e["moves"][0] if len(e["moves"]) == 1 else None
    wrapped = only is not None and e["prices"][only["good"]] == (top if only["dir"] == "down" else 1)
    return f"{_s(w, e)} moved {join(moves)} one row{', wrapping round the price table' if wrapped else ''}; now {now}."


def _warehouse_sales(w: Words, e: Mapping[str, Any]) -> str:
    sales = [
        f"{w.seat(x['seat'])} sold {w.goods(x['goods'])} from {w.node(x['city'])} by Lagerverkauf "
        f"for {money(x['received'])}"
        for x in e["lagerverkauf"]
    ] + [
        f"{w.seat(x['seat'])} sold 1 {w.good(x['good'])} from {w.node(x['city'])} by Sonder-Verkauf "
        f"for {money(x['received'])}"
        for x in e["sonder_verkauf"]
    ]
    return f"Warehouse sales: {join(sales)}." if sales else "Nobody sold goods from a warehouse."


def _cart_sold(w: Words, e: Mapping[str, Any]) -> str:
    sales = [f"{w.seat(x['seat'])} {w.goods(x['goods'])} for {money(x['received'])}" for x in e["sales"]]
    where = f"Cart {e['cart']} was sold in {w.node(e['city'])} (bonus {money(e['bonus'])})"
    return f"{where}: {join(sales)}." if sales else f"Cart {e['cart']} arrived in {w.node(e['city'])} empty."


def _bonus_cards(w: Words, e: Mapping[str, Any]) -> str:
    plays = [f"{w.seat(p)} on {_carts(c)}" for p, c in sorted(e["plays"].items(), key=lambda x: int(x[0])) if c]
    return f"Verkauf mit Bonus played: {join(plays)}." if plays else "Nobody played Verkauf mit Bonus."


def _advance(w: Words, e: Mapping[str, Any]) -> str:
    if not e["levels"]:
        return f"{_s(w, e)} stayed at status level {e['level']}."
    cards = f", using {plural(e['cards'], 'Sozialer Aufstieg card')}" if e.get("cards") else ""
    return (f"{_s(w, e)} advanced {plural(e['levels'], 'status level')} to level {e['level']} "
            f"for {money(e['paid'])}{cards}.")  # fmt: skip


def _transfer(w: Words, e: Mapping[str, Any]) -> str:
    gifts = ([money(e["money"])] if e["money"] else []) + (
        [plural(e["cards"], "influence card")] if e["cards"] else [])  # fmt: skip
    return f"{_s(w, e)} gave {w.seat(e['to'])} {join(gifts) or 'nothing'}."


def tiebreaks(ranking: Sequence[Mapping[str, Any]]) -> list[str | None]:
    """What set each ranking row apart from the row before it (the row's own `tiebreak`
    when it has one): "credits", "level", "money", "shared", or None for the first."""
    out: list[str | None] = []
    for i, row in enumerate(ranking):
        if "tiebreak" in row or i == 0:
            out.append(row.get("tiebreak"))
            continue
        prev = ranking[i - 1]
        out.append("credits" if bool(prev["credits"]) != bool(row["credits"])
                   else "level" if prev["level"] != row["level"]
                   else "money" if prev["money"] != row["money"] else "shared")  # fmt: skip
    return out


_WHY = {
    "credits": "ranks below everyone without a credit",
    "level": "lower status level than {prev}",
    "money": "same level as {prev}, less money",
    "shared": "shares the place with {prev}: same level and money",
}


def why_words(why: str | None, prev: str) -> str:
    """A ranking row's tiebreak in words, against the row before (named `prev`)."""
    return _WHY[why].format(prev=prev) if why in _WHY else ""


def _game_over(w: Words, e: Mapping[str, Any]) -> str:
    rows = list(e["ranking"])
    parts = []
    for i, (row, why) in enumerate(zip(rows, tiebreaks(rows), strict=True)):
        facts = f"level {row['level']}, money {money(row['money'])}" + (", holds a credit" if row["credits"] else "")
        reason = f"; {why_words(why, w.seat(rows[i - 1]['seat']))}" if i and why else ""
        parts.append(f"{ordinal(row['place'])} {w.seat(row['seat'])} ({facts}{reason})")
    return f"Game over. Final ranking: {', '.join(parts)}."


_Say = Callable[[Words, Mapping[str, Any]], str]
_SAY: dict[str, _Say] = {
    "round_started": lambda w, e: f"Round {e['round']} begins; {w.seat(e['start'])} is the start player.",
    "abilities_dealt": lambda w, e: (f"{_s(w, e)} was dealt {join(w.card(c) for c in e['cards'])} "
                                     f"and paid {money(e['paid'])}."),
    "ability_named": lambda w, e: f"{_s(w, e)} put {w.card(e['card'])} up for auction at {money(e['bid'])}.",
    "ability_bid": lambda w, e: f"{_s(w, e)} bid {money(e['bid'])} for {w.card(e['card'])}.",
    "ability_pass": lambda w, e: f"{_s(w, e)} passed on {w.card(e['card'])}.",
    "ability_bought": lambda w, e: f"{_s(w, e)} took {w.card(e['card'])} for {money(e['paid'])}.",
    "abilities_removed": lambda w, e: (f"Nobody took {join(w.card(c) for c in e['cards'])}: out of the game."
                                       if e["cards"] else "Every special ability card has been taken."),
    "bought": _bought,
    "cart_auction": _cart_auction,
    "cart_master": _cart_master,
    "cart_loaded": _cart_loaded,
    "achsbruch_played": _achsbruch,
    "moved": _moved,
    "card_gained": _card_gained,
    "card_gain_missed": lambda w, e: f"{_s(w, e)} would gain an influence card, but the deck is empty.",
    "tiles_reset": lambda w, e: f"{_s(w, e)} turned all movement tiles face up again.",
    "price_votes": _price_votes,
    "price_adjusted": _price_adjusted,
    "warehouse_sales": _warehouse_sales,
    "arrival_track": lambda w, e: (f"{_carts(e['arrived']).capitalize()} arrived; the arrival track "
                                   f"moves to {e['position']}."),
    "bonus_cards_played": _bonus_cards,
    "cart_sold": _cart_sold,
    "bonus_markers": lambda w, e: "Bonus markers now: " + ", ".join(
        f"{w.node(c)} {money(v)}" for c, v in e["bonus"].items()) + ".",
    "last_round": lambda w, e: f"The arrival track reached {e['arrivals']}: this is the last round.",
    "upkeep": lambda w, e: f"{_s(w, e)} paid {money(e['paid'])} upkeep for status level {e['level']}.",
    "upkeep_shortfall": lambda w, e: (f"{_s(w, e)} could not pay the upkeep with {money(e['money'])}, "
                                      f"dropped to status level {e['level']} and paid {money(e['paid'])}."),
    "credit": lambda w, e: (f"{_s(w, e)} took a credit of {money(e['value'])}." if e["taken"]
                            else f"{_s(w, e)} took no credit."),
    "credit_repaid": lambda w, e: f"{_s(w, e)} repaid {plural(e['count'], 'credit')}.",
    "advance": _advance,
    "transfer": _transfer,
    "transfer_cards": lambda w, e: f"{_s(w, e)} handed {w.seat(e['to'])} {w.cards(e['cards'])}.",
    "game_over": _game_over,
}  # fmt: skip
