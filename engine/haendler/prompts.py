"""Every Die Händler decision in the player's own words and clicks (`engine.core.choices`).

`prompt` builds a seat's open decision as a sequence of asks, each narrowed by the picks
before it, from that seat's own view only (never the state: so a prompt shows nothing
the seat may not see). Each decision kind is a small generator (`Flow`): it yields a
`Stage` (the next ask, the order the picks make so far, that order in words) and is sent
each pick; it returns its last stage when nothing more may be picked. The order JSON it
makes is exactly what `Haendler.validate` accepts; the legality itself is never written
twice here: the flows call the rules' own helpers (`moving.Turn`, `graph.cart_ends`,
`buying.cost`, `carts.master_types`, ...) and, where a bound depends on the whole order
(money left for a gift, credits that can be repaid), the decision's own `check` on the
seat's view.

The free actions of H-22 (repay credits, H-96; gifts in the negotiation variant, H-106)
follow the main choices: once the picks make an order, the next ask also offers "Repay
credits" (only to a seat holding credits) and "Give a gift" (only in the negotiation
variant); their bounds keep the whole order legal.

Picks are option values (goods, cities and cards by their ids, carts by number, a few
plain words such as "done" or "lift:2"), numbers and, for a tariff and a gift of cards,
sheets of numbers. None of these is shown to a person: labels, questions and sentences
are words, with places named as on the board.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.core.choices import Ask, Number, Option, Prompt, check_pick
from engine.core.errors import IllegalOrder
from engine.core.game import Request
from engine.haendler import buying, carts, moving, prices, selling, status
from engine.haendler.abilities import affordable
from engine.haendler.context import Ctx, S, all_played, buy_price, has, level_price, store_count
from engine.haendler.decision import Decision, Order
from engine.haendler.describe import Words, join, money, plural
from engine.haendler.free import check_free
from engine.haendler.graph import messenger_ends, reaches
from engine.haendler.picture import cart_id, good_id, place_id, seat_id
from engine.haendler.summary import COLOURS, describe_request

__all__ = ["Stage", "prompt", "seat_words", "tariff_bounds"]

#: Option values of the plain words a flow reads (never shown: the labels are).
DONE, REPAY, GIFT = "done", "+repay", "+gift"


@dataclass(frozen=True)
class Stage:
    """Where a decision stands after some picks: what may be picked next (None: nothing),
    the order the picks make (None while they make none) and that order in words."""

    ask: Ask | None
    order: Order | None = None
    sentence: str = ""


#: A decision's flow: yields stages, is sent each pick, returns its last stage.
Flow = Generator[Stage, Any, Stage]


def seat_words(seat: int) -> str:
    """A seat as its prompt names another player: by colour (H-1), "the yellow player"."""
    return f"the {COLOURS[seat]} player" if 0 <= seat < len(COLOURS) else f"player {seat + 1}"


def tariff_bounds(ctx: Ctx) -> tuple[int, int]:
    """The highest tariffs the master's prompt offers, for one and for two goods: what the
    goods could fetch at best (the top sell price plus the top city bonus, H-87). The
    rules set no upper limit (H-52); the order JSON accepts any amount."""
    one = ctx.board.price_rows[-1][1] + ctx.board.bonus_values[-1]
    return one, 2 * one


class P:
    """What one seat's prompt is built from: its own view (as the state the rules' helpers
    read), the board and components, and the open decision's legality check."""

    def __init__(self, ctx: Ctx, view: S, seat: int, d: Decision) -> None:
        self.ctx, self.v, self.seat, self.d = ctx, view, seat, d
        self.board, self.comp = ctx.board, ctx.comp
        self.w = Words([], ctx.board)
        me = view["players"][seat]
        self.me = me
        self.money: int = me["money"]
        self.hand: dict[str, int] = dict(me.get("hand") or {})
        self.step = ctx.comp.money_step

    # legality, by the rules' own check -----------------------------------------------------
    def valid(self, order: Order) -> bool:
        try:
            self.d.check(self.ctx, self.v, self.seat, order, check_free(self.ctx, self.v, self.seat, order))
        except IllegalOrder:
            return False
        return True

    # words and options ---------------------------------------------------------------------
    def good(self, g: str) -> str:
        return self.w.good(g)

    def city(self, c: str) -> str:
        return self.w.node(c)

    def good_option(self, g: str, label: str | None = None, hint: str = "") -> Option:
        name = self.good(g)
        return Option(g, label or name, words=(name,) if label and label != name else (), place=good_id(g), hint=hint)

    def city_option(self, c: str, label: str | None = None, hint: str = "") -> Option:
        name = self.city(c)
        return Option(c, label or name, words=(name,) if label and label != name else (), place=place_id(c), hint=hint)

    def where(self, node: str) -> str:
        """A cart's place in a phrase: "in Köln", "at Reims", "on the road Köln→Brügge, space 3 of 4"."""
        if self.board.is_city(node):
            return f"in {self.city(node)}"
        if node in self.board.junction_names:
            return f"at {self.city(node)}"
        return f"on the {self.w.place(node)}"

    def cart_option(self, n: int, label: str | None = None, hint: str = "") -> Option:
        at = self.v["carts"][n - 1]["at"]
        return Option(n, label or f"cart {n} {self.where(at)}", words=(f"cart {n}",), place=cart_id(n), hint=hint)

    def done(self, label: str, *words: str) -> Option:
        return Option(DONE, label, words=words)


# -- the free actions (H-22) ----------------------------------------------------------------
def _extras(p: P, order: Order) -> tuple[Option, ...]:
    """The free actions that may still be added to `order` (each keeping it legal)."""
    out = []
    left = p.me["credits"] - int(order.get("repay") or 0)
    if left > 0 and p.valid({**order, "repay": int(order.get("repay") or 0) + 1}):
        out.append(Option(REPAY, f"Repay credits ({money(p.comp.credit_repay)} each)",
                          words=("repay", "repay a credit", "repay credits")))  # fmt: skip
    if p.v["options"].get("negotiation") and any(True for _ in _gift_seats(p, order)):
        out.append(Option(GIFT, "Give a gift of money or influence cards", words=("gift", "give")))
    return tuple(out)


def _given(order: Order) -> list[dict[str, Any]]:
    return list(order.get("transfers") or [])


def _gift_seats(p: P, order: Order) -> list[int]:
    """Other seats not yet given a gift in `order`, when the seat can give anything."""
    given = {t["to"] for t in _given(order)}
    others = [q for q in range(p.v["seats"]) if q != p.seat and q not in given]
    if not others:
        return []
    probe = others[0]
    if _most_money(p, order, probe) > 0 or _giftable_cards(p, order, probe, 0):
        return others
    return []


def _with_gift(order: Order, to: int, amount: int, cards: Mapping[str, int]) -> Order:
    gift: dict[str, Any] = {"to": to, "money": amount}
    if cards:
        gift["cards"] = dict(cards)
    return {**order, "transfers": [*_given(order), gift]}


def _most_money(p: P, order: Order, to: int) -> int:
    """The largest gift of money (in money steps) that keeps `order` legal."""
    lo, hi = 0, p.money // p.step
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if p.valid(_with_gift(order, to, mid * p.step, {})):
            lo = mid
        else:
            hi = mid - 1
    return lo * p.step


def _giftable_cards(p: P, order: Order, to: int, amount: int) -> dict[str, int]:
    """For each influence kind in hand, how many may be given along with `amount`."""
    out = {}
    for kind, held in sorted(p.hand.items()):
        k = held
        while k > 0 and not p.valid(_with_gift(order, to, amount, {kind: k})):
            k -= 1
        if k:
            out[kind] = k
    return out


def _extras_flow(p: P, order: Order, sentence: str, first: Any) -> Flow:
    order = dict(order)
    said = [sentence] if sentence else []
    pick = first
    while True:
        if pick is None:
            opts = _extras(p, order)
            if not opts:
                return Stage(None, order, _sentence(said))
            pick = yield Stage(Ask("more", "Anything to add to this order?", opts), order, _sentence(said))
        if pick == REPAY:
            done = int(order.get("repay") or 0)
            most = 0
            for k in range(p.me["credits"] - done, 0, -1):
                if p.valid({**order, "repay": done + k}):
                    most = k
                    break
            k = yield Stage(Ask("repay", f"How many credits will you repay, at {money(p.comp.credit_repay)} each?",
                                number=Number("Credits to repay", 1, most)), None, _sentence(said))  # fmt: skip
            order["repay"] = done + k
            said.append(f"repay {plural(k, 'credit')} ({money(k * p.comp.credit_repay)})")
        elif pick == GIFT:
            seats = _gift_seats(p, order)
            to = yield Stage(Ask("to", "To whom?", tuple(
                Option(q, seat_words(q).capitalize(), words=(COLOURS[q],) if q < len(COLOURS) else (),
                       place=seat_id(q)) for q in seats)), None, _sentence(said))  # fmt: skip
            cards = _giftable_cards(p, order, to, 0)
            most = _most_money(p, order, to)
            amount = 0
            if most > 0:
                amount = yield Stage(Ask("money", f"How much money will you give {seat_words(to)}?",
                                         number=Number("Money", 0 if cards else p.step, most, p.step)),
                                     None, _sentence(said))  # fmt: skip
            cards = _giftable_cards(p, order, to, amount)
            given: dict[str, int] = {}
            if cards:
                sheet = tuple(Number(p.w.card(k), 0, n, key=k, default=0) for k, n in cards.items())
                picked = yield Stage(Ask("cards", f"Which influence cards will you give {seat_words(to)}?",
                                         sheet=sheet), None, _sentence(said))  # fmt: skip
                given = {k: n for k, n in picked.items() if n}
            if amount or given:
                order = _with_gift(order, to, amount, given)
                what = join([money(amount)] * bool(amount) + ([p.w.cards(given)] if given else []))
                said.append(f"give {seat_words(to)} {what}")
        pick = None


def _sentence(parts: Sequence[str]) -> str:
    text = "; ".join(x for x in parts if x)
    return text[:1].upper() + text[1:] if text else ""


def _first(flow: Flow) -> Stage:
    """The first stage of `flow` (its last, when it asks nothing)."""
    try:
        return next(flow)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def _send(flow: Flow, pick: Any) -> Stage:
    try:
        return flow.send(pick)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def _with_extras(p: P, main: Flow) -> Flow:
    """`main`, with the free actions offered once its picks make an order."""
    stage = _first(main)
    while stage.ask is not None:
        ask = stage.ask
        extra: tuple[Option, ...] = ()
        if stage.order is not None and ask.options:
            extra = _extras(p, stage.order)
        shown = Ask(ask.key, ask.question, options=(*ask.options, *extra)) if extra else ask
        pick = yield Stage(shown, stage.order, stage.sentence)
        if any(pick == o.value and type(pick) is type(o.value) for o in extra):
            assert stage.order is not None
            main.close()
            return (yield from _extras_flow(p, stage.order, stage.sentence, pick))
        stage = _send(main, pick)
    assert stage.order is not None, "a decision's flow ends with an order"
    return (yield from _extras_flow(p, stage.order, stage.sentence, None))


# -- the decisions -------------------------------------------------------------------------------
def _name_card(p: P) -> Flow:
    """D0-NAME (H-34): a remaining card the chooser can pay."""
    cards = affordable(p.ctx, p.v, p.seat)
    opts = tuple(Option(c, f"{p.w.card(c)} (opens at {money(p.comp.abilities[c].cost)})", words=(p.w.card(c),))
                 for c in cards)  # fmt: skip
    card = yield Stage(Ask("card", "Which special ability card will you put up for auction?", opts))
    cost = p.comp.abilities[card].cost
    return Stage(None, {"card": card}, f"Put {p.w.card(card)} up for auction at {money(cost)}")


def _card_bid(p: P) -> Flow:
    """D0-BID (H-34): raise above the high bid in money steps, or pass."""
    a = p.v["auction"]
    name, lo, hi = p.w.card(a["card"]), a["high"] + p.step, p.money // p.step * p.step
    passing = Option("pass", "pass", words=("no", "pass for good"))
    if lo <= hi:
        ask = Ask("bid", f"Your bid for {name} (the high bid is {money(a['high'])}), or pass for good",
                  number=Number("Bid", lo, hi, p.step, named=(passing,)))
    else:
        ask = Ask("bid", f"You cannot raise the bid for {name} above {money(a['high'])}: pass for good",
                  options=(Option("pass", "Pass", words=("no",)),))
    bid = yield Stage(ask)
    if bid == "pass":
        return Stage(None, {"pass": True}, f"Pass on {name} for good")
    return Stage(None, {"bid": bid}, f"Bid {money(bid)} for {name}")


def _buy(p: P) -> Flow:
    """D1-BUY (H-41 to H-44): goods one type at a time, each with a count and a city."""
    entries: list[tuple[str, str]] = []
    whole = has(p.v, p.seat, "guenstiger_einkauf")
    most = p.comp.max_buy
    while True:
        bought = [g for g, _ in entries]
        order = {"goods": [{"good": g, "city": c} for g, c in entries]}
        sentence = _buy_words(p, entries)

        def fits(g: str, k: int, bought: list[str] = bought) -> bool:
            return (len(bought) + k <= most and p.v["stock"][g] - bought.count(g) >= k
                    and buying.cost(p.ctx, p.v, p.seat, [*bought, *[g] * k]) <= p.money)  # fmt: skip

        opts = []
        for g in p.board.goods:
            if fits(g, 1):
                left = p.v["stock"][g] - bought.count(g)
                price = "" if whole else f", {money(buy_price(p.ctx, p.v, g))} each"
                opts.append(p.good_option(g, f"{p.good(g)}{price} ({left} in stock)"))
        if not opts:
            return Stage(None, order, sentence)
        if not entries:
            opts.append(p.done("Buy nothing", "nothing", "none"))
        g = yield Stage(Ask("good", "Which good will you buy?" if not entries else "Buy another good?",
                            tuple(opts)), order, sentence)  # fmt: skip
        if g == DONE:
            return Stage(None, order, sentence)
        kmax = max(k for k in range(1, most + 1) if fits(g, k))
        k = 1
        if kmax > 1:
            k = yield Stage(Ask("count", f"How many {p.good(g)}?", number=Number(p.good(g), 1, kmax)))
        makers = [c for c in p.board.cities if g in p.board.produces[c]]
        c = yield Stage(Ask("city", f"Into your warehouse in which city (one that makes {p.good(g)})?",
                            tuple(p.city_option(c) for c in makers)))  # fmt: skip
        entries += [(g, c)] * k


def _buy_words(p: P, entries: list[tuple[str, str]]) -> str:
    if not entries:
        return "Buy nothing"
    groups: dict[tuple[str, str], int] = {}
    for e in entries:
        groups[e] = groups.get(e, 0) + 1
    cost = buying.cost(p.ctx, p.v, p.seat, [g for g, _ in entries])
    what = join(f"{k} {p.good(g)} in {p.city(c)}" for (g, c), k in groups.items())
    return f"Buy {what} for {money(cost)}"


def _cart_bid(p: P) -> Flow:
    """D2-BID (H-46, H-47): a sealed bid from 0 up to the seat's money."""
    n, cart = carts.cart_of(p.v)
    where = f"cart {n} {p.where(cart['at'])}"
    nothing = Option(0, "no bid", words=("nothing", "pass", "zero"))
    bid = yield Stage(Ask("bid", f"Your sealed bid to be loading master of {where}",
                          number=Number("Bid", 0, p.money // p.step * p.step, p.step, named=(nothing,))))  # fmt: skip
    return Stage(None, {"bid": bid}, f"Bid {money(bid)} for {where}" if bid else f"Bid nothing for {where}")


def _master(p: P) -> Flow:
    """D2-MASTER (H-50 to H-52, H-104): the master's load, then a tariff or a refusal for
    each other player (a player left out is refused)."""
    n, cart = carts.cart_of(p.v)
    where = f"cart {n} {p.where(cart['at'])}"
    room = p.comp.master_slots - len(cart["rows"][p.seat])
    opts = []
    for g in carts.master_types(p.v, p.seat, cart):
        k = min(room, store_count(p.v, p.seat, cart["at"], g))
        if k:
            opts.append(p.good_option(g, f"{p.good(g)} (up to {k})"))
    opts.append(p.done("Load nothing", "nothing", "none"))
    good = yield Stage(Ask("load", f"As loading master of {where}: which goods will you load?", tuple(opts)))
    load = 0
    if good != DONE:
        most = min(room, store_count(p.v, p.seat, cart["at"], good))
        load = 1
        if most > 1:
            load = yield Stage(Ask("count", f"How many {p.good(good)}?", number=Number(p.good(good), 1, most)))
    base: Order = {"load": load, **({"good": good} if load else {})}
    loaded = f"Load {load} {p.good(good)} onto {where}" if load else f"Load nothing onto {where}"
    if p.v["options"]["light"]:
        fixed = p.comp.light_tariff
        return Stage(None, base, f"{loaded} (tariffs are fixed at {money(fixed[0])} / {money(fixed[1])})")
    tariffs: dict[str, list[int] | None] = {}
    one, two = tariff_bounds(p.ctx)
    others = [q for q in range(p.v["seats"]) if q != p.seat]

    def words(t: Mapping[str, list[int] | None]) -> str:
        parts, refused = [], []
        for q in others:
            given = t.get(str(q))
            if given is None:
                refused.append(seat_words(q))
            else:
                parts.append(f"{seat_words(q)} {money(given[0])} for 1, {money(given[1])} for 2")
        out = loaded
        if parts:
            out += "; offer " + join(parts)
        if refused:
            out += "; refuse " + join(refused)
        return out

    for q in others:
        order = {**base, "tariffs": {str(o): tariffs.get(str(o)) for o in others}}
        colour = (COLOURS[q],) if q < len(COLOURS) else ()
        pick = yield Stage(Ask("tariff", f"Will {seat_words(q)} be able to load on {where}?", (
            Option("offer", f"Offer {seat_words(q)} a tariff", words=tuple(f"offer {c}" for c in colour),
                   place=seat_id(q)),
            Option("refuse", f"Refuse {seat_words(q)}", words=("refuse", *(f"refuse {c}" for c in colour))),
        )), order, words(order["tariffs"]))  # fmt: skip
        if pick == "refuse":
            tariffs[str(q)] = None
            continue
        price = yield Stage(Ask("prices", f"The tariff for {seat_words(q)}: the price to load 1 good and 2 goods",
                                sheet=(Number("1 good", 0, one, p.step, key="one"),
                                       Number("2 goods", 0, two, p.step, key="two"))))  # fmt: skip
        tariffs[str(q)] = [price["one"], price["two"]]
    order = {**base, "tariffs": {str(o): tariffs.get(str(o)) for o in others}}
    return Stage(None, order, words(order["tariffs"]))


def _load(p: P) -> Flow:
    """D2-LOAD (H-50, H-53, H-54): goods from the warehouse here, paid by the tariff or
    loaded free with Kostenlose Zuladung."""
    n, cart = carts.cart_of(p.v)
    where = f"cart {n} {p.where(cart['at'])}"
    room = p.comp.other_slots - len(cart["rows"][p.seat])
    have = {g: store_count(p.v, p.seat, cart["at"], g) for g in carts.loadable(p.v, p.seat, cart)}
    tariff = p.v["tariffs"].get(str(p.seat))
    card = p.hand.get(carts.ZULADUNG, 0) > 0

    def ways(k: int) -> list[str]:
        out = ["tariff"] if tariff is not None and tariff[k - 1] <= p.money else []
        return out + ["card"] * card

    def order_of(goods: list[str], way: str) -> Order:
        return {"goods": list(goods), **({"card": True} if goods and way == "card" else {})}

    def words(goods: list[str], way: str) -> str:
        if not goods:
            return f"Load nothing onto {where}"
        how = "playing Kostenlose Zuladung" if way == "card" else f"paying {money(tariff[len(goods) - 1])}"
        return f"Load {p.w.goods(goods)} onto {where}, {how}"

    picked: list[str] = []
    while True:
        k = len(picked)
        way = ((ways(k) if k else []) or ["tariff"])[0]
        opts = [p.good_option(g, f"{p.good(g)} ({have[g] - picked.count(g)} in your warehouse)")
                for g in have if have[g] > picked.count(g) and k < room and ways(k + 1)]  # fmt: skip
        if not opts:
            break
        if not picked:
            opts.append(p.done("Load nothing", "nothing", "none"))
        g = yield Stage(Ask("good", f"Which good will you load onto {where}?" if not picked else "Load another good?",
                            tuple(opts)), order_of(picked, way), words(picked, way))  # fmt: skip
        if g == DONE:
            break
        most = max(j for j in range(1, room - k + 1) if have[g] - picked.count(g) >= j and ways(k + j))
        j = 1
        if most > 1:
            j = yield Stage(Ask("count", f"How many {p.good(g)}?", number=Number(p.good(g), 1, most)))
        picked += [g] * j
    if not picked:
        return Stage(None, order_of([], "tariff"), words([], "tariff"))
    choice = ways(len(picked))
    way = choice[0]
    if len(choice) > 1:
        price = money(tariff[len(picked) - 1])
        way = yield Stage(Ask("pay", "How will you pay?", (
            Option("tariff", f"Pay the tariff, {price}", words=("tariff", "pay")),
            Option("card", "Play Kostenlose Zuladung and load free", words=("Kostenlose Zuladung", "card", "free")),
        )), order_of(picked, way), words(picked, way))  # fmt: skip
    return Stage(None, order_of(picked, way), words(picked, way))


def _achsbruch(p: P) -> Flow:
    """D3-ACHSBRUCH (H-57): Achsbruch cards from hand, each on a cart (several may hit one)."""
    held = p.hand.get(moving.ACHSBRUCH, 0)
    chosen: list[int] = []

    def words() -> str:
        if not chosen:
            return "Play no Achsbruch"
        return "Play Achsbruch on " + join(f"cart {c}" for c in chosen)

    while len(chosen) < held:
        opts = [p.cart_option(c) for c in range(1, len(p.v["carts"]) + 1)]
        if not chosen:
            opts.append(p.done("Play none", "none", "nothing"))
        pick = yield Stage(Ask("cart", f"Play an Achsbruch on which cart? (you hold {held - len(chosen)})",
                               tuple(opts)), {"carts": list(chosen)}, words())  # fmt: skip
        if pick == DONE:
            break
        chosen.append(pick)
    return Stage(None, {"carts": chosen}, words())


def _spaces(p: P, start: str, end: str, value: int) -> int:
    """How many nodes a cart moves from `start` to `end` with a move of `value` (H-63)."""
    for reach in reaches(p.board, start, value):
        if end in reach:
            return reach.index(end) + 1
    return value


def _end_words(p: P, start: str, end: str, value: int) -> str:
    """Where a cart move ends, from where it starts: "into Brügge", "3 spaces toward Brügge"."""
    k = _spaces(p, start, end, value)
    if p.board.is_city(end):
        return f"into {p.city(end)}"
    if end in p.board.junction_names:
        return f"{plural(k, 'space')} to {p.city(end)}"
    toward = end.rpartition(":")[0].partition(">")[2]
    return f"{plural(k, 'space')} toward {p.city(toward)}"


def _end_options(p: P, start: str, ends: Mapping[str, int], hints: Mapping[str, str]) -> tuple[Option, ...]:
    """Options for a cart's legal ends (end -> a move value that reaches it)."""
    labels = {e: _end_words(p, start, e, v) for e, v in ends.items()}
    toward = {e: label.split(" ", 2)[2] for e, label in labels.items() if " toward " in label}  # "toward Brügge"
    out = []
    for e, label in labels.items():
        words: tuple[str, ...] = ()
        if p.board.is_city(e) or e in p.board.junction_names:
            words = (p.city(e),)
        elif list(toward.values()).count(toward[e]) == 1:
            words = (toward[e],)  # the only end toward there: "cart 2 toward Brügge" names it
        if list(labels.values()).count(label) > 1:
            label = f"{label} ({p.w.place(e)})"
        out.append(Option(e, label, words=words, place=place_id(e), hint=hints.get(e, p.w.place(e))))
    return tuple(out)


def _move(p: P) -> Flow:
    """D3-MOVE (H-58 to H-73): lift own Achsbruch first (H-59), then exactly one tile step
    (a cart the tile alone can move, to one of its legal ends, with Wagnerei points added
    or not; or a forfeit when the tile moves no cart, H-65), then separate Wagnerei moves
    (H-69) and messenger moves (H-71) in any order, and the influence card wanted if the
    moves gain one (H-73). Every end offered is one `Turn` finds legal."""
    t = moving.Turn(p.ctx, p.v, p.seat)
    tiles = list(p.me["tiles"])
    lifts: list[int] = []
    steps: list[dict[str, Any]] = []
    prefer: list[str] = []
    said: list[str] = []
    tile_done = prefer_done = False

    def order() -> Order | None:
        if not tile_done:
            return None
        out: Order = {"steps": [dict(s) for s in steps]}
        if lifts:
            out["lift"] = list(lifts)
        if prefer:
            out["prefer"] = list(prefer)
        return out

    def mine() -> list[int]:
        return sorted({b["cart"] for b in t.blocks if b["by"] == p.seat})

    while True:
        opts: list[Option] = []
        if not tile_done:
            if not steps:
                opts += [Option(f"lift:{c}", f"Lift your Achsbruch from cart {c}", words=(f"lift cart {c}",),
                                place=cart_id(c)) for c in mine()]  # fmt: skip
            for c in range(len(t.pos)):
                with_tiles = [v for v in tiles if c in t.movable(v)]
                if with_tiles:
                    hint = "the tile " + join((str(v) for v in with_tiles), "or") + " can move it"
                    opts.append(p.cart_option(c + 1, hint=hint))
            for v in tiles:
                if not t.movable(v):
                    opts.append(Option(f"forfeit:{v}", f"Flip tile {v} without moving (it can move no cart)",
                                       words=(f"forfeit {v}", f"forfeit tile {v}")))  # fmt: skip
        elif t.points:
            for c in range(len(t.pos)):
                if t.eligible(c) and any(t.ends(c, w) for w in range(1, t.points + 1)):
                    opts.append(p.cart_option(c + 1, f"Move cart {c + 1} {p.where(t.pos[c])} with Wagnerei points"))
        for card in t.couriers:
            if messenger_ends(p.board, t.messenger, t.couriers[card]):
                opts.append(Option(f"messenger:{card}", f"Move the messenger with {p.w.card(card)}",
                                   words=(p.w.card(card), "messenger"), place="messenger"))  # fmt: skip
        if tile_done and t.gains and not prefer_done:
            opts.append(Option("prefer", "Choose the influence card you gain", words=("prefer", "influence card")))
        sentence = _sentence(said)
        if not opts:
            return Stage(None, order(), sentence)
        question = ("Which cart will you move with your tile?" if not tile_done
                    else "Anything more in this movement turn?")  # fmt: skip
        pick = yield Stage(Ask("move", question, tuple(opts)), order(), sentence)
        if isinstance(pick, str) and pick.startswith("lift:"):
            c = int(pick[5:])
            t.lift([c])
            lifts.append(c)
            said.append(f"lift your Achsbruch from cart {c}")
        elif isinstance(pick, str) and pick.startswith("forfeit:"):
            v = int(pick[8:])
            step: dict[str, Any] = {"tile": v, "forfeit": True}
            t.tile_step(step, tiles)
            steps.append(step)
            tile_done = True
            said.append(f"flip tile {v} without moving a cart")
        elif isinstance(pick, str) and pick.startswith("messenger:"):
            card = pick[10:]
            spots = messenger_ends(p.board, t.messenger, t.couriers[card])
            to = yield Stage(Ask("to", f"Move the messenger with {p.w.card(card)} to which space?",
                                 tuple(Option(e, p.w.place(e), place=place_id(e)) for e in spots)),
                             order(), sentence)  # fmt: skip
            start = t.messenger
            t.move_messenger(card, to)
            steps.append({"messenger": card, "to": to})
            said.append(f"move the messenger with {p.w.card(card)} from the {p.w.place(start)} "
                        f"to the {p.w.place(to)}")  # fmt: skip
        elif pick == "prefer":
            left = [k for k in p.comp.default_ranking if not all_played(p.ctx, p.v, k)]
            while left:
                opts = [Option(k, p.w.card(k)) for k in left]
                if prefer:
                    opts.append(p.done("No more wishes", "no more", "done"))
                kind = yield Stage(Ask("prefer", "Which influence card do you want most?" if not prefer
                                       else "And if none of those is left?", tuple(opts)), order(),
                                   _sentence(said))  # fmt: skip
                if kind == DONE:
                    break
                prefer.append(kind)
                left.remove(kind)
            prefer_done = True
            said.append("if you gain a card, take " + join(p.w.card(k) for k in prefer) + " first, in that order")
        elif not tile_done:  # a cart for the tile step
            c, start = pick - 1, t.pos[pick - 1]
            fewest: dict[str, dict[int, int]] = {}  # end -> tile -> the fewest Wagnerei points added
            for v in tiles:
                if c in t.movable(v):
                    for w in range(t.points + 1):
                        for e in t.ends(c, v + w):
                            fewest.setdefault(e, {}).setdefault(v, w)
            # per end, the ways there: fewest points first, then the lowest tile (the first is
            # the one taken when the player does not say, e.g. "cart 2 to Brügge")
            combos = {e: sorted(ways.items(), key=lambda vw: (vw[1], vw[0])) for e, ways in fewest.items()}
            ends = {e: sum(ways[0]) for e, ways in combos.items()}
            hints = {e: p.w.place(e) + ": " + join((_how(v, w) for v, w in combos[e]), "or") for e in combos}
            to = yield Stage(Ask("to", f"Where does cart {pick} go?", _end_options(p, start, ends, hints)),
                             None, _sentence([*said, f"move cart {pick} from {p.w.place(start, inline=True)}"]))

            def tile_step(v: int, w: int, pick: int = pick, to: str = to, start: str = start) -> tuple[Order, str]:
                step = {"tile": v, "cart": pick, "to": to, **({"points": w} if w else {})}
                words = (f"flip tile {v} and move cart {pick} from {p.w.place(start, inline=True)} "
                         f"{_end_words(p, start, to, v + w)}" + (f" with {plural(w, 'Wagnerei point')}" if w else ""))
                return step, words

            v, w = combos[to][0]
            if len(combos[to]) > 1:
                step, words = tile_step(v, w)
                tentative: Order = {"steps": [*steps, step], **({"lift": list(lifts)} if lifts else {})}
                how = yield Stage(Ask("tile", "Which tile will you flip for it?", tuple(
                    Option(f"{v}+{w}", _how(v, w), words=(f"tile {v}",)) for v, w in combos[to])),
                    tentative, _sentence([*said, words]))  # fmt: skip
                v, w = (int(x) for x in how.split("+"))
            step, words = tile_step(v, w)
            t.tile_step(step, tiles)
            steps.append(step)
            tile_done = True
            said.append(words)
        else:  # a cart for a separate Wagnerei move
            c, start = pick - 1, t.pos[pick - 1]
            ends = {}
            for w in range(1, t.points + 1):
                for e in t.ends(c, w):
                    ends.setdefault(e, w)
            hints = {e: f"{p.w.place(e)}: {plural(w, 'Wagnerei point')}" for e, w in ends.items()}
            to = yield Stage(Ask("to", f"Where does cart {pick} go with Wagnerei points?",
                                 _end_options(p, start, ends, hints)), order(), sentence)  # fmt: skip
            w = ends[to]
            step = {"cart": pick, "points": w, "to": to}
            t.points_step(step)
            steps.append(step)
            said.append(f"move cart {pick} from {p.w.place(start, inline=True)} {_end_words(p, start, to, w)} "
                        f"with {plural(w, 'Wagnerei point')}")  # fmt: skip


def _how(v: int, w: int) -> str:
    return f"tile {v}" + (f" and {plural(w, 'Wagnerei point')}" if w else "")


def _wheel(p: P) -> Flow:
    """D4-WHEEL (H-78): two arrows, each at a good (a vote) or at the shield."""
    rows = p.v["prices"]
    opts = tuple([p.good_option(g, hint=f"now on row {rows[g]} of {p.board.top_row}") for g in p.board.goods]
                 + [Option("shield", "your shield (no vote)", words=("shield", "no vote"))])  # fmt: skip
    first = yield Stage(Ask("arrow", "Where does your first arrow point?", opts))
    arrows: list[str | None] = [None if first == "shield" else first, None]
    second = yield Stage(Ask("arrow", "And your second arrow?", opts), {"arrows": list(arrows)},
                         _wheel_words(p, arrows))  # fmt: skip
    arrows[1] = None if second == "shield" else second
    return Stage(None, {"arrows": arrows}, _wheel_words(p, arrows))


def _wheel_words(p: P, arrows: list[str | None]) -> str:
    votes = [a for a in arrows if a is not None]
    if not votes:
        return "Point both arrows at your shield (no vote)"
    if len(votes) == 2 and votes[0] == votes[1]:
        return f"Vote twice for {p.good(votes[0])}"
    if len(votes) == 2:
        return f"Vote for {p.good(votes[0])} and for {p.good(votes[1])}"
    return f"Vote for {p.good(votes[0])} and point the other arrow at your shield"


def _kontor(p: P) -> Flow:
    """D4-KONTOR (H-80): one price one row up or down per Kontor card, in the order given."""
    cards = prices.kontor_cards(p.ctx, p.v, p.seat)
    rows = dict(p.v["prices"])
    top = p.board.top_row
    moves: list[dict[str, str]] = []
    said: list[str] = []
    while cards:
        order = {"moves": [dict(m) for m in moves]}
        sentence = _sentence(said) or "Change no price"
        card = cards[0]
        if len(cards) > 1:
            opts = [Option(c, f"Use {p.w.card(c)}", words=(p.w.card(c),)) for c in cards]
            if not moves:
                opts.append(p.done("Change no price", "nothing", "none", "no change"))
            card = yield Stage(Ask("card", "Which price card will you use first?", tuple(opts)), order, sentence)
            if card == DONE:
                break
        opts = []
        for g in p.board.goods:
            buy, sell = p.board.price_rows[rows[g] - 1]
            opts.append(p.good_option(g, f"{p.good(g)} (row {rows[g]}: buy {money(buy)}, sell {money(sell)})"))
        if not moves and len(cards) == 1:
            opts.append(p.done("Change no price", "nothing", "none", "no change"))
        g = yield Stage(Ask("good", f"Which price will you move with {p.w.card(card)}?", tuple(opts)), order,
                        sentence)  # fmt: skip
        if g == DONE:
            break
        wrap = p.comp.abilities[card].wrap
        dirs = []
        for way, shift, edge in (("up", 1, top), ("down", -1, 1)):
            if wrap or rows[g] != edge:
                row = prices.wrap_row(rows[g], shift, top)
                buy, sell = p.board.price_rows[row - 1]
                dirs.append(Option(way, f"one row {way}, to row {row} (buy {money(buy)}, sell {money(sell)})",
                                   words=(way,)))  # fmt: skip
        way = yield Stage(Ask("dir", f"Move {p.good(g)} up or down?", tuple(dirs)))
        before = rows[g]
        rows[g] = prices.wrap_row(before, 1 if way == "up" else -1, top)
        moves.append({"card": card, "good": g, "dir": way})
        cards = [c for c in cards if c != card]
        said.append(f"with {p.w.card(card)} move {p.good(g)} one row {way}, from row {before} to row {rows[g]}")
    return Stage(None, {"moves": moves}, _sentence(said) or "Change no price")


def _sales(p: P) -> Flow:
    """D4-SALES (H-81 to H-83): Lagerverkauf (up to 3 goods from one warehouse at the buy
    price) and Sonder-Verkauf (one good per card, from any warehouse)."""
    stores = {c: dict(g) for c, g in p.v["stores"][p.seat].items()}
    lager_ok = has(p.v, p.seat, "lagerverkauf")
    cards = p.hand.get(prices.SONDER, 0)
    lager: tuple[str, list[str]] | None = None
    sonder: list[tuple[str, str]] = []
    price = money(p.comp.sonder_verkauf_price)

    def order() -> Order:
        out: Order = {}
        if lager is not None and lager[1]:
            out["lager"] = {"city": lager[0], "goods": list(lager[1])}
        if sonder:
            out["sonder"] = [{"city": c, "good": g} for c, g in sonder]
        return out

    def words() -> str:
        parts = []
        if lager is not None and lager[1]:
            parts.append(f"sell {p.w.goods(lager[1])} from your warehouse in {p.city(lager[0])} with Lagerverkauf")
        if sonder:
            parts.append("sell " + join(f"{p.good(g)} from {p.city(c)}" for c, g in sonder)
                         + f" with Sonder-Verkauf for {price} each")  # fmt: skip
        return _sentence(parts) or "Sell nothing"

    def cities() -> tuple[Option, ...]:
        return tuple(p.city_option(c, hint="your warehouse there: " + p.w.goods(g for g, k in held.items()
                                                                                  for _ in range(k)))
                     for c, held in stores.items() if any(held.values()))  # fmt: skip

    def take(c: str, g: str, k: int) -> None:
        stores[c][g] -= k

    while True:
        opts = []
        stocked = bool(cities())
        if lager_ok and lager is None and stocked:
            opts.append(Option("lager", f"Lagerverkauf: sell up to {p.comp.lagerverkauf_max} goods from one "
                               "warehouse at the buy price", words=("Lagerverkauf",)))  # fmt: skip
        if len(sonder) < cards and stocked:
            opts.append(Option("sonder", f"Sonder-Verkauf: sell one good for {price} ({cards - len(sonder)} "
                               "card" + ("s" if cards - len(sonder) != 1 else "") + " left)",
                               words=("Sonder-Verkauf", "Sonderverkauf")))  # fmt: skip
        if not opts:
            return Stage(None, order(), words())
        if lager is None and not sonder:
            opts.append(p.done("Sell nothing", "nothing", "none"))
        pick = yield Stage(Ask("sale", "Which sale will you make?" if lager is None and not sonder
                               else "Another sale?", tuple(opts)), order(), words())  # fmt: skip
        if pick == DONE:
            return Stage(None, order(), words())
        what = "with Lagerverkauf" if pick == "lager" else f"with Sonder-Verkauf for {price}"
        city = yield Stage(Ask("city", "From your warehouse in which city?", cities()), None, f"Sell {what}")
        if pick == "sonder":
            g = yield Stage(Ask("good", "Which good?", tuple(p.good_option(g) for g, k in stores[city].items() if k)),
                            None, f"Sell from {p.city(city)} {what}")  # fmt: skip
            take(city, g, 1)
            sonder.append((city, g))
            continue
        lager = (city, [])
        while len(lager[1]) < p.comp.lagerverkauf_max and any(stores[city].values()):
            opts = [p.good_option(g, f"{p.good(g)}, {money(buy_price(p.ctx, p.v, g))} each ({k} there)")
                    for g, k in stores[city].items() if k]  # fmt: skip
            if lager[1]:
                opts.append(p.done("No more goods", "no more", "done"))
            g = yield Stage(Ask("good", "Which good will you sell?" if not lager[1] else "Sell another good?",
                                tuple(opts)), order() if lager[1] else None,
                            words() if lager[1] else f"Sell from {p.city(city)} {what}")  # fmt: skip
            if g == DONE:
                break
            most = min(stores[city][g], p.comp.lagerverkauf_max - len(lager[1]))
            k = 1
            if most > 1:
                k = yield Stage(Ask("count", f"How many {p.good(g)}?", number=Number(p.good(g), 1, most)))
            take(city, g, k)
            lager[1].extend([g] * k)


def _bonus(p: P) -> Flow:
    """D5-BONUS (H-86, R-26): one Verkauf mit Bonus per arrived cart carrying the seat's goods."""
    mine = selling.my_arrived(p.v, p.seat)
    held = p.hand.get(selling.BONUS_CARD, 0)
    chosen: list[int] = []

    def words() -> str:
        return ("Play Verkauf mit Bonus on " + join(f"cart {c}" for c in chosen)) if chosen else \
            "Play no Verkauf mit Bonus"  # fmt: skip

    while len(chosen) < held:
        left = [c for c in mine if c not in chosen]
        if not left:
            break
        opts = [p.cart_option(c) for c in left]
        if not chosen:
            opts.append(p.done("Play none", "none", "nothing"))
        pick = yield Stage(Ask("cart", "Play Verkauf mit Bonus on which arrived cart?", tuple(opts)),
                           {"carts": list(chosen)}, words())  # fmt: skip
        if pick == DONE:
            break
        chosen.append(pick)
    return Stage(None, {"carts": chosen}, words())


def _credit(p: P) -> Flow:
    """D6-CREDIT (H-95): take one credit or not."""
    opts = []
    if p.v["credit_supply"] > 0:
        opts.append(Option("take", f"Take a credit (+{money(p.comp.credit_value)})",
                           words=("take a credit", "take", "yes"),
                           hint=f"{money(p.comp.credit_repay)} to repay"))  # fmt: skip
    opts.append(Option("no", "No credit", words=("no",)))
    pick = yield Stage(Ask("take", "Will you take a credit?", tuple(opts)))
    if pick == "take":
        return Stage(None, {"take": True}, f"Take a credit of {money(p.comp.credit_value)}")
    return Stage(None, {"take": False}, "Take no credit")


def _advance(p: P) -> Flow:
    """D6-ADVANCE (H-92 to H-94): 0 to 2 levels, Sozialer Aufstieg cards at most one per
    level; a seat holding credits repays them all in the same order to advance."""
    level, credits = p.me["level"], p.me["credits"]
    most = min(p.comp.max_levels_per_round, p.board.top_level - level)
    held = p.hand.get(status.AUFSTIEG, 0)
    price = level_price(p.ctx, p.v)
    repay: Order = {"repay": credits} if credits else {}
    names = p.board.level_names

    def ok(levels: int, cards: int) -> bool:
        return p.valid({"levels": levels, "cards": cards, **repay})

    opts = [Option(0, "No level", words=("none", "no level", "nothing"))]
    for n in range(1, most + 1):
        if any(ok(n, k) for k in range(min(n, held) + 1)):
            label = f"{plural(n, 'level')}, to level {level + n} {names[level + n - 1]} ({money(n * price)})"
            if credits:
                label += f", repaying your {plural(credits, 'credit')} first"
            opts.append(Option(n, label, words=(plural(n, "level"),)))
    levels = yield Stage(Ask("levels", f"How many status levels will you buy, at {money(price)} each?", tuple(opts)))
    if not levels:
        return Stage(None, {"levels": 0}, f"Stay at level {level}, {names[level - 1]}")
    cards = 0
    usable = [k for k in range(min(levels, held) + 1) if ok(levels, k)]
    if usable != [0]:
        opts = []
        for k in usable:
            total = money(status.advance_cost(p.ctx, p.v, levels, k))
            opts.append(Option(k, f"{plural(k, 'Sozialer Aufstieg card')}, {total} in all" if k
                               else f"None, {total} in all", words=(f"{k} Sozialer Aufstieg",) if k else ("none",)))
        cards = yield Stage(Ask("cards", "How many Sozialer Aufstieg cards will you play (one per level)?",
                                tuple(opts)))
    order = {"levels": levels, **({"cards": cards} if cards else {}), **repay}
    cost = status.advance_cost(p.ctx, p.v, levels, cards)
    text = f"Buy {plural(levels, 'level')}, to level {level + levels} {names[level + levels - 1]}, for {money(cost)}"
    if cards:
        text += f", playing {plural(cards, 'Sozialer Aufstieg card')}"
    if credits:
        text += f", after repaying {plural(credits, 'credit')} ({money(credits * p.comp.credit_repay)})"
    return Stage(None, order, text)


FLOWS = {
    "name_card": _name_card, "card_bid": _card_bid, "buy": _buy, "cart_bid": _cart_bid, "master": _master,
    "load": _load, "achsbruch": _achsbruch, "move": _move, "wheel": _wheel, "kontor": _kontor,
    "sales": _sales, "bonus": _bonus, "credit": _credit, "advance": _advance,
}  # fmt: skip


def prompt(ctx: Ctx, d: Decision, request: Request, view: S, picks: Sequence[Any]) -> Prompt:
    """`request`'s decision in words after `picks`, built from `view` (the seat's own)."""
    if not isinstance(picks, list | tuple):
        raise IllegalOrder("bad_pick", "picks are a list")
    p = P(ctx, view, request.seat, d)
    flow = _with_extras(p, FLOWS[d.kind](p))
    stage = _first(flow)
    chosen: list[str] = []
    for pick in picks:
        if stage.ask is None:
            raise IllegalOrder("bad_pick", "the order is complete: nothing more may be picked")
        chosen.append(check_pick(stage.ask, pick))
        stage = _send(flow, pick)
    names = [seat_words(q) for q in range(view["seats"])]
    names[request.seat] = "you"
    say = describe_request(request, view, names)
    return Prompt(say=say, picks=tuple(picks), ask=stage.ask, order=stage.order, sentence=stage.sentence,
                  chosen=tuple(chosen))
