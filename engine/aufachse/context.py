"""Shared helpers of the Auf Achse rules: the data a state refers to, one resolution run,
money, loading and the end check.

Most helpers read only keys that also appear in a seat's own view (positions, markers,
loaded orders, its own hand), so bots can call them on their view.
"""

from __future__ import annotations

from typing import Any, NoReturn

from engine.aufachse.dataset import DataSet, load_data
from engine.core.errors import IllegalOrder
from engine.core.events import ALL, Event, event

S = dict[str, Any]
_DATA: dict[str, DataSet] = {}


def ctx_of(s: S) -> DataSet:
    """The data set a state (or a view) was set up with."""
    key = s.get("data_key", "")
    found = _DATA.get(key)
    if found is None:
        found = load_data(s["options"]["data"])
        _DATA[key] = found
    return found


def fail(code: str, message: str) -> NoReturn:
    raise IllegalOrder(code, message)


class GameOver(Exception):
    """The end condition came true (T9): the rest of the step is cancelled."""


class Run:
    """One resolution (or, with `dry`, one validation) of an order on a private state.

    `shared` lists the seats whose entries `s["players"]` still shares with the state it
    was copied from (see `fork`): `player(seat)` copies such an entry on first use. So a
    seat's entry is changed only through `player`, and an entry that may be changed while
    it is held is taken from `player` too. Likewise `lent` lists the keys of `OWNED`
    whose values `s` still shares: a value changed in place is taken from `own(key)`.

    `checked` marks a resolution of an order that has just passed `validate` on this
    very state (`resolve_validated`): a check that could only reject it may be skipped."""

    __slots__ = ("ctx", "s", "ev", "dry", "shared", "lent", "checked")

    def __init__(self, ctx: DataSet, s: S, dry: bool = False, shared: set[int] | None = None,
                 lent: set[str] | None = None) -> None:
        self.ctx, self.s, self.dry = ctx, s, dry
        self.ev: list[Event] = []
        self.shared: set[int] = set() if shared is None else shared
        self.lent: set[str] = set() if lent is None else lent
        self.checked = False

    def say(self, type_: str, audience: Any = "all", **data: Any) -> None:
        """Record an event (`engine.core.events.event`; built here when everyone sees it,
        as most are, to save a call: a step records several)."""
        if not self.dry:
            self.ev.append({"type": type_, "visible_to": ALL, **data} if audience == ALL
                           else event(type_, audience, **data))

    def player(self, seat: int) -> dict[str, Any]:
        """Seat `seat`'s entry, private to this run (to change freely)."""
        players: list[dict[str, Any]] = self.s["players"]
        if seat in self.shared:
            self.shared.discard(seat)
            players[seat] = copy_seat(players[seat])
        return players[seat]

    def move_to(self, seat: int, space: str) -> None:
        """Put seat `seat`'s truck on `space` (`player(seat)["at"] = space`, without
        copying the seat's lists while they are shared: a move changes only where it
        stands, and `player` copies them when something else changes)."""
        players: list[dict[str, Any]] = self.s["players"]
        if seat in self.shared:
            players[seat] = {**players[seat], "at": space}
        else:
            players[seat]["at"] = space

    def own(self, key: str) -> Any:
        """`s[key]` (a key of `OWNED`), private to this run (to change in place)."""
        value = self.s[key]
        if key in self.lent:
            self.lent.discard(key)
            value = self.s[key] = _copy_value(key, value)
        return value


def fork(ctx: DataSet, s: S, dry: bool = False) -> Run:
    """A run on a copy of `s` that never changes `s`: the top level is copied, and each
    seat's entry and each value of `OWNED` only when the run first changes it
    (`Run.player`, `Run.own`); a step changes one or two seats of up to six and few of
    those values, and every validation and resolution forks."""
    out = s.copy()
    out["players"] = list(s["players"])
    return Run(ctx, out, dry, set(range(len(out["players"]))), set(OWNED))


# -- holdings ------------------------------------------------------------------------------
def capacity(ctx: DataSet, pl: dict[str, Any]) -> int:
    comp = ctx.comp
    out: int = comp.truck_capacity
    for k, n in pl["trailers"].items():
        if n:
            out += comp.trailers[k].capacity * int(n)
    return out


def load(ctx: DataSet, pl: dict[str, Any]) -> int:
    orders = ctx.orders
    out = 0
    for o in pl["loaded"]:
        out += orders[o].goods
    return out


def hand_of(pl: dict[str, Any]) -> list[str]:
    """The seat's whole hand: hidden cards (when visible) and cards won at auction."""
    return list(pl.get("hand") or []) + list(pl["open"])


def own_cities(ctx: DataSet, pl: dict[str, Any]) -> set[str]:
    """OC(P) (AD1): start cities of hand orders and destinations of loaded orders."""
    orders = ctx.orders
    out = set()
    for cards in (pl.get("hand") or (), pl["open"]):
        for o in cards:
            out.add(orders[o].start)
    for o in pl["loaded"]:
        out.add(orders[o].dest)
    return out


def markers(s: S) -> frozenset[str]:
    """The spaces holding the roadworks and the jam."""
    rw, jam = s.get("roadworks"), s.get("jam")
    if rw is None and jam is None:
        return _NO_MARKERS
    key = (rw, jam["at"] if jam else None)
    found = _MARKERS.get(key)
    if found is None:
        if jam:
            found = frozenset((rw, jam["at"])) if rw else frozenset((jam["at"],))
        else:
            found = frozenset((rw,)) if rw else frozenset()
        if len(_MARKERS) > 4096:
            _MARKERS.clear()
        _MARKERS[key] = found
    return found


#: `markers` by (roadworks, jam space): the same few sets are asked for on every move.
_MARKERS: dict[tuple[Any, Any], frozenset[str]] = {}
_NO_MARKERS: frozenset[str] = frozenset()


def holds_nothing(pl: dict[str, Any]) -> bool:
    return not pl["loaded"] and not pl["open"] and not pl["hand"]


# -- money (§14) -----------------------------------------------------------------------------
def credit(run: Run, seat: int, amount: int, why: str) -> None:
    """The bank pays `seat`; then that seat's debts are settled ($3, $5)."""
    if amount <= 0:
        return
    run.player(seat)["cash"] += amount
    run.s["bank"] += amount
    settle(run, seat)


def pay_bank(run: Run, seat: int, amount: int, what: str) -> None:
    """A cash payment to the bank that must be affordable ($1)."""
    pl = run.player(seat)
    if pl["cash"] < amount:
        fail("not_enough_money", f"{what} costs {amount} but only {pl['cash']} cash is at hand ($1)")
    pl["cash"] -= amount
    run.s["bank"] -= amount


def event_payment(run: Run, payer: int, amount: int, creditor: int | None, card: str) -> None:
    """An event payment: paid in full, or a debt of twice the amount ($2, AD8)."""
    pl = run.player(payer)
    if amount <= 0:
        return
    if pl["cash"] >= amount:
        pl["cash"] -= amount
        if creditor is None:
            run.s["bank"] -= amount
        run.say("paid", seat=payer, amount=amount, to=creditor, card=card)
        if creditor is not None:
            run.player(creditor)["cash"] += amount
            settle(run, creditor)
        return
    pl["debts"].append({"to": creditor, "amount": 2 * amount, "card": card})
    run.say("debt", seat=payer, amount=2 * amount, to=creditor, card=card)


def _walk(run: Run, seat: int) -> list[int]:
    pl = run.player(seat)
    paid: list[int] = []
    keep = []
    for debt in pl["debts"]:
        if debt["amount"] <= pl["cash"]:
            pl["cash"] -= debt["amount"]
            to = debt["to"]
            if to is None:
                run.s["bank"] -= debt["amount"]
            else:
                run.player(to)["cash"] += debt["amount"]
                paid.append(to)
            run.say("debt_paid", seat=seat, amount=debt["amount"], to=to, card=debt.get("card"))
        else:
            keep.append(debt)
    pl["debts"] = keep
    return paid


def settle(run: Run, seat: int) -> None:
    """The settlement walk of `seat`, then the chained walks of R19 ($5)."""
    if not run.player(seat)["debts"]:
        return
    paid = _walk(run, seat)
    if not paid:
        return
    n = run.s["seats"]
    first = paid[0]
    rose = set(paid)
    while True:
        any_paid = False
        for i in range(n):
            q = (first + i) % n
            if q in rose and run.player(q)["debts"]:
                rose.discard(q)
                got = _walk(run, q)
                if got:
                    any_paid = True
                    rose.update(got)
        if not any_paid:
            return


def final_money(s: S, seat: int) -> int:
    """G3: cash − own debts + debts other players owe this seat."""
    pl = s["players"][seat]
    owed: int = sum(int(d["amount"]) for q in s["players"] for d in q["debts"] if d["to"] == seat)
    return int(pl["cash"]) - sum(int(d["amount"]) for d in pl["debts"]) + owed


# -- the end (§15) -----------------------------------------------------------------------------
def end_condition(s: S) -> bool:
    if s["display"] or s["deck"]:
        return False
    for pl in s["players"]:
        if holds_nothing(pl):
            return True
    return False


def end_check(run: Run) -> None:
    """G1 / T9: end the game at once when the condition holds."""
    if run.dry or run.s["over"] or not end_condition(run.s):
        return
    finish(run)
    raise GameOver


def finish(run: Run) -> None:
    s = run.s
    s["over"] = True
    s["pending"] = None
    s["queue"] = []
    s["phase"] = "over"
    ranking = ranking_of(s)
    run.say("game_over", ranking=ranking)


def ranking_of(s: S) -> list[dict[str, Any]]:
    money = [final_money(s, p) for p in range(s["seats"])]
    order = sorted(range(s["seats"]), key=lambda p: (-money[p], p))
    return [{"seat": p, "place": 1 + sum(1 for q in range(s["seats"]) if money[q] > money[p]),
             "money": money[p], "cash": s["players"][p]["cash"]} for p in order]


#: Lists of card ids a resolution changes in place (their items are strings).
_LISTS = ("display", "deck", "reserve", "events", "used_events", "discard", "fresh")
#: The state's values a resolution changes in place besides the seats' entries, each
#: taken from `Run.own` for that, which copies it first (`_copy_value`): the `supply`
#: map, the `queue` list, the `auction` and its `passed` and `log` lists, and the card
#: lists of `_LISTS`. A seat's entry and its `debts`, `hand`, `open` and `loaded` lists
#: and `trailers` map are copied by `Run.player` (`copy_seat`). Everything else is
#: shared and never changed in place, only replaced: `options`, `rng`, `dice`,
#: `pending`, `jam`, `last_move`, the queued tasks, each debt, each `fresh` entry and
#: each auction log entry. A field added to the state must be placed in one of these
#: groups; the contract tests check that nothing a resolve or validate was given ever
#: changes.
OWNED = frozenset(("supply", "queue", "auction", *_LISTS))


def _copy_value(key: str, value: Any) -> Any:
    """A copy of the value of a key of `OWNED` that shares nothing a resolution changes."""
    if key == "supply":
        return dict(value)
    if key == "auction":
        return None if value is None else {**value, "passed": list(value["passed"]), "log": list(value["log"])}
    return list(value)


def copy_seat(p: dict[str, Any]) -> dict[str, Any]:
    """A copy of a seat's entry that shares nothing a resolution changes (see `OWNED`)."""
    q = p.copy()
    q["debts"] = p["debts"][:]
    q["open"] = p["open"][:]
    q["loaded"] = p["loaded"][:]
    q["trailers"] = p["trailers"].copy()
    hand = p.get("hand")
    if hand is not None:  # a view shows only the viewer's own hand
        q["hand"] = hand[:]
    return q
