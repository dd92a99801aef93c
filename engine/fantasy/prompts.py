"""Every Fantasy Business decision, and every action a seat may take unprompted, in the
player's own terms (`engine.core.choices`): what to do, the options in words with their
places in the picture, numbers with their bounds, the price sheet as a sheet of numbers.

Built from the seat's view only (`Game.view(state, seat)`), so a prompt shows nothing the
seat may not see; the orders the picks make are exactly those `validate` (and `act`)
accept. Nothing here runs inside `requests` or `resolve`.

Picks, decision by decision (the order JSON they make in brackets):

* a window (the opening, closing, Spy and reveal windows): a special card to play, or
  "play nothing"; then its targets, narrowed (an opponent, then one of the item types
  it owns, ...); then another card or "no more cards" (``{"play": [...]}``);
* selecting a card: the card (a display place), then the opening bid (a number from its
  minimum to your crowns) or "pass", or, holding the pre-emption, how to take it
  (``{"pos", "bid"}`` or ``{"pos", "preempt": true}``);
* opening and bidding: a number with its bounds, or "pass" (``{"bid"}``);
* the last eligible player: a card to take at its minimum, or "decline" (``{"take"}``);
* the price sheet: a sheet, one number per owned item type (``{"prices"}``);
* the Spy's revision: keep the sheet, or revise it as a sheet (``{"prices"}``);
* a transfer proposal put to the seat: accept (naming the special cards it asks for,
  one by one) or reject (``{"accept", "specials"}``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.core.choices import Ask, Number, Option, Prompt, check_pick
from engine.core.errors import IllegalOrder
from engine.fantasy.components import kind_of
from engine.fantasy.pricing import price_range
from engine.fantasy.specials import KINDS
from engine.fantasy.specials.antitrust import monopolies
from engine.fantasy.state import MINIMUMS, C, high_bid_held, holds_types, sort_cards

View = dict[str, Any]
#: The most crowns a proposal's form lets a seat ask for (the rules set no bound; the
#: other side's crowns are hidden, so the form cannot know what it could pay).
ASK_CROWNS_MAX = 999

#: What each window is called, and what each special card does, in words.
WINDOW_WORDS = {"open": "as the offer begins", "close": "as the offer ends", "spy": "now that the price sheets "
                "are in", "reveal": "before the price sheets are revealed"}
EFFECT = {
    "AL": "auction off an opponent's monopoly of one item type, the money going to them",
    "BC": "an opponent earns nothing for one item type this round",
    "DI": "an opponent's item card is removed from the game",
    "DS": "see an opponent's special cards",
    "MC": "no cards are offered this round",
    "ND": "an opponent may not buy this round, and one card fewer is offered",
    "FB": "you become the First Buyer this round, with a pre-emption",
    "OS": "nobody earns income for one item type this round",
    "RA": f"an opponent pays you up to {C.racketeering_amount} crowns after a player of your choice earns income",
    "SP": "see every price sheet and revise your own",
    "ST": "take an opponent's item card",
    "SU": f"the bank pays you {C.subsidies_amount} crowns",
    "TR": "swap one of your item cards for an opponent's",
}


def seat_words(seat: int, me: int | None = None) -> str:
    """A seat in words: "Seat 2" (the name channels fall back to), "Seat 2 (you)"."""
    return f"Seat {seat}" + (" (you)" if seat == me else "")


def type_words(t: str) -> str:
    return C.type_names[t]


def special_words(card: str) -> str:
    return C.special_names[kind_of(card)]


def crowns_words(n: int) -> str:
    return f"{n} crown{'s' if n != 1 else ''}"


def _plural(t: str, n: int) -> str:
    return f"{n} {type_words(t)}"


# -- walking the picks ----------------------------------------------------------------
class _Need(Exception):
    """The picks ran out: `ask` is what may come next."""

    def __init__(self, ask: Ask) -> None:
        self.ask = ask


class Walk:
    """Reads a decision's picks one by one, each held to the ask the decision makes at
    that point (`take`); when they run out, what comes next and the order so far."""

    def __init__(self, picks: Sequence[Any]) -> None:
        if not isinstance(picks, list | tuple):
            raise IllegalOrder("bad_pick", "picks are a list")
        self.picks = list(picks)
        self.at = 0
        self.chosen: list[str] = []
        self.order: dict[str, Any] | None = None
        self.sentence = ""

    def take(self, ask: Ask, order: dict[str, Any] | None = None, sentence: str = "") -> Any:
        """The next pick, checked against `ask`; `order` is what the picks make if they
        stop here (None: they make nothing yet)."""
        if self.at == len(self.picks):
            self.order, self.sentence = order, sentence
            raise _Need(ask)
        pick = self.picks[self.at]
        self.chosen.append(check_pick(ask, pick))
        self.at += 1
        return pick


def run(say: str, picks: Sequence[Any], body: Callable[[Walk], tuple[dict[str, Any], str]]) -> Prompt:
    w = Walk(picks)
    try:
        order, sentence = body(w)
    except _Need as need:
        return Prompt(say, tuple(w.picks), need.ask, w.order, w.sentence, tuple(w.chosen))
    if w.at != len(w.picks):
        raise IllegalOrder("bad_pick", "the decision is complete: nothing more may be picked")
    return Prompt(say, tuple(w.picks), None, order, sentence, tuple(w.chosen))


# -- common asks ---------------------------------------------------------------------------
def _opponents(v: View, seat: int, question: str, keep: Callable[[int], bool] = lambda p: True) -> Ask:
    return Ask("target", question, options=tuple(
        Option(p, seat_words(p), place=f"seat-{p}") for p in range(v["seats"]) if p != seat and keep(p)))


def _owned_type(v: View, owner: int, question: str, key: str = "type") -> Ask:
    return Ask(key, question, options=tuple(
        Option(t, type_words(t), place=f"items-{owner}-{t}",
               hint=f"{seat_words(owner)} owns {_plural(t, _count(v, owner, t))}")
        for t in holds_types(v, owner)))


def _count(v: View, seat: int, t: str) -> int:
    return sum(1 for c in v["players"][seat]["items"] if kind_of(c) == t)


def _first_of(v: View, seat: int, t: str, but: Sequence[str] = ()) -> str:
    return str(next(c for c in v["players"][seat]["items"] if kind_of(c) == t and c not in but))


def _has_items(v: View, p: int) -> bool:
    return bool(v["players"][p]["items"])


def _bid(question: str, low: int, crowns: int, pass_words: str) -> Ask:
    """A bid from `low` to the seat's crowns, or pass (only pass when it cannot reach `low`)."""
    if crowns < low:
        return Ask("bid", question, options=(Option("pass", pass_words, words=("pass",)),))
    return Ask("bid", question, number=Number("Bid", low, crowns, unit="crowns",
                                               named=(Option("pass", pass_words, words=("pass",)),)))


# -- the windows ----------------------------------------------------------------------------
def _play_words(p: dict[str, Any], seat: int) -> str:
    card = p["card"]
    kind, name = kind_of(card), special_words(card)
    if kind in ("ND", "DS"):
        return f"{name} on {seat_words(p['target'])}"
    if kind == "AL" or kind == "BC":
        return f"{name} against {seat_words(p['target'])} for {type_words(p['type'])}"
    if kind in ("DI", "ST"):
        return f"{name} on {seat_words(p['_owner'])}'s {type_words(kind_of(p['item']))}"
    if kind == "TR":
        return (f"{name}, giving your {type_words(kind_of(p['give']))} for {seat_words(p['_owner'])}'s "
                f"{type_words(kind_of(p['item']))}")
    if kind == "OS":
        return f"{name} on {type_words(p['type'])}"
    if kind == "RA":
        return (f"{name}, threatening {seat_words(p['target'])} after {seat_words(p['trigger'], seat)} "
                "earns income")
    return name


def _window(v: View, seat: int, window: str, w: Walk) -> tuple[dict[str, Any], str]:
    hand = v["players"][seat]["hand"]
    n = v["seats"]
    monos = [m for m in monopolies(v) if m[0] != seat]
    others_items = any(_has_items(v, p) for p in range(n) if p != seat)

    def usable(card: str) -> bool:
        kind = kind_of(card)
        if kind == "AL":
            return bool(monos)
        if kind in ("DI", "ST", "BC"):
            return others_items
        if kind == "TR":
            return others_items and _has_items(v, seat)
        return True

    plays: list[dict[str, Any]] = []
    while True:
        used = {p["card"] for p in plays}
        spied = any(kind_of(c) == "SP" for c in used)
        kinds_seen: set[str] = set()
        options = []
        for card in hand:
            kind = kind_of(card)
            if KINDS[kind].window != window or card in used or kind in kinds_seen or not usable(card):
                continue
            if kind == "SP" and spied:
                continue
            kinds_seen.add(kind)
            options.append(Option(card, special_words(card), place=f"hand-{card}", hint=EFFECT[kind]))
        options.append(Option("done", "Play nothing" if not plays else "No more cards",
                              words=("pass", "nothing", "none", "done")))
        order = {"play": [{k: v2 for k, v2 in p.items() if not k.startswith("_")} for p in plays]}
        sentence = ("Play " + "; then ".join(_play_words(p, seat) for p in plays) + ".") if plays \
            else "Play nothing."
        question = "Which special card do you play?" if not plays else "Do you play another special card?"
        card = w.take(Ask("card", question, options=tuple(options)), order, sentence)
        if card == "done":
            return order, sentence
        plays.append(_targets(v, seat, card, monos, w))


def _targets(v: View, seat: int, card: str, monos: list[list[Any]], w: Walk) -> dict[str, Any]:
    kind = kind_of(card)
    name = special_words(card)
    play: dict[str, Any] = {"card": card}
    n = v["seats"]
    if kind == "ND":
        play["target"] = w.take(_opponents(v, seat, f"{name}: on which opponent?"))
    elif kind == "AL":
        x = w.take(_opponents(v, seat, f"{name}: against which opponent?",
                              lambda p: any(m[0] == p for m in monos)))
        play["target"] = x
        types = [m[1] for m in monos if m[0] == x]
        play["type"] = w.take(Ask("type", f"{name}: which of their monopolies?", options=tuple(
            Option(t, type_words(t), place=f"items-{x}-{t}", hint=f"{seat_words(x)} owns every card of it in play")
            for t in types)))
    elif kind in ("DI", "ST"):
        x = w.take(_opponents(v, seat, f"{name}: which opponent's item?", lambda p: _has_items(v, p)))
        t = w.take(_owned_type(v, x, f"{name}: which of {seat_words(x)}'s item types?"))
        play["item"], play["_owner"] = _first_of(v, x, t), x
    elif kind == "TR":
        mine = w.take(_owned_type(v, seat, f"{name}: which of your items do you give?", "give"))
        play["give"] = _first_of(v, seat, mine)
        x = w.take(_opponents(v, seat, f"{name}: with which opponent?", lambda p: _has_items(v, p)))
        t = w.take(_owned_type(v, x, f"{name}: which of {seat_words(x)}'s item types do you take?"))
        play["item"], play["_owner"] = _first_of(v, x, t), x
    elif kind == "OS":
        play["type"] = w.take(Ask("type", f"{name}: which item type?", options=tuple(
            Option(t, type_words(t), place=f"type-{t}") for t in C.types)))
    elif kind == "BC":
        x = w.take(_opponents(v, seat, f"{name}: against which opponent?", lambda p: _has_items(v, p)))
        play["target"] = x
        play["type"] = w.take(_owned_type(v, x, f"{name}: for which of {seat_words(x)}'s item types?"))
    elif kind == "RA":
        play["target"] = w.take(_opponents(v, seat, f"{name}: which opponent pays?"))
        play["trigger"] = w.take(Ask("trigger", f"{name}: after which player's first income?", options=tuple(
            Option(p, seat_words(p, seat), place=f"seat-{p}") for p in range(n))))
    return play


# -- the offer -------------------------------------------------------------------------------
def _card_words(card: str | None) -> str:
    return "the face-down special card" if card is None else type_words(kind_of(card))


def _select(v: View, seat: int, w: Walk) -> tuple[dict[str, Any], str]:
    me = v["players"][seat]
    crowns = me["crowns"]
    options = []
    for d in v["display"]:
        if not d:
            continue
        card, pos = d["card"], d["pos"]
        low = MINIMUMS[card]
        what = _card_words(card)
        options.append(Option(pos, f"{what[:1].upper()}{what[1:]} (position {pos}, minimum {low})",
                              words=(what, f"position {pos}"), place=f"offer-{pos}",
                              hint=f"base value {low}" if card is not None else "a special card, seen by its buyer"))
    pos = w.take(Ask("card", "Which card do you offer for sale?", options=tuple(options)))
    card = v["display"][pos - 1]["card"]
    low = MINIMUMS[card]
    what = f"{_card_words(card)} (position {pos})"
    passed = ({"pos": pos, "bid": None}, f"Select {what} and pass the opening.")
    if v["offer"]["preempt"] == seat and crowns >= low:
        how = w.take(Ask("how", f"{what}: open the bidding, pass the opening, or buy it now?", options=(
            Option("open", "Open the bidding"),
            Option("pass", "Pass the opening", words=("pass",)),
            Option("preempt", f"Buy it now for {crowns_words(low)} (your pre-emption)", words=("pre-empt", "buy")))))
        if how == "preempt":
            return {"pos": pos, "preempt": True}, f"Pre-empt {what} for {crowns_words(low)}."
        if how == "pass":
            return passed
        bid = w.take(Ask("bid", f"Open {what} at how much?", number=Number("Bid", low, crowns, unit="crowns")))
    else:
        bid = w.take(_bid(f"Open {what} at how much, or pass the opening?", low, crowns, "Pass the opening"))
    if bid == "pass":
        return passed
    return {"pos": pos, "bid": bid}, f"Select {what} and open the bidding at {crowns_words(bid)}."


def _auction_thing(v: View) -> str:
    a = v["auction"]
    if a.get("pos") is None:
        return type_words(kind_of(a["card"]))
    return f"{_card_words(a['card'])} (position {a['pos']})"


def _open(v: View, seat: int, w: Walk) -> tuple[dict[str, Any], str]:
    a = v["auction"]
    what = _auction_thing(v)
    bid = w.take(_bid(f"Open {what} at how much (at least {a['min']}), or pass the opening?", a["min"],
                      v["players"][seat]["crowns"], "Pass the opening"))
    if bid == "pass":
        return {"bid": None}, f"Pass the opening of {what}."
    return {"bid": bid}, f"Open {what} at {crowns_words(bid)}."


def _raise(v: View, seat: int, w: Walk) -> tuple[dict[str, Any], str]:
    a = v["auction"]
    what = _auction_thing(v)
    bid = w.take(_bid(f"{what}: the high bid is {a['high']}. Raise to how much, or pass for good?", a["high"] + 1,
                      v["players"][seat]["crowns"], "Pass (for good on this card)"))
    if bid == "pass":
        return {"bid": None}, f"Pass on {what}."
    return {"bid": bid}, f"Raise to {crowns_words(bid)} on {what}."


def _lone(v: View, seat: int, w: Walk) -> tuple[dict[str, Any], str]:
    crowns = v["players"][seat]["crowns"]
    options = []
    for d in v["display"]:
        if d and MINIMUMS[d["card"]] <= crowns:
            what, price = _card_words(d["card"]), crowns_words(MINIMUMS[d["card"]])
            options.append(Option(d["pos"], f"Take {what} (position {d['pos']}) for {price}",
                                  words=(what, f"position {d['pos']}"), place=f"offer-{d['pos']}"))
    options.append(Option("decline", "Decline the remaining cards", words=("decline", "none", "nothing")))
    pick = w.take(Ask("take", "You are the last player who may buy: which card do you take?", options=tuple(options)))
    if pick == "decline":
        return {"take": None}, "Decline the remaining cards."
    d = v["display"][pick - 1]
    return {"take": pick}, (f"Take {_card_words(d['card'])} (position {pick}) for "
                            f"{crowns_words(MINIMUMS[d['card']])}.")


# -- prices -------------------------------------------------------------------------------------
def _sheet(v: View, seat: int, question: str) -> Ask:
    return Ask("prices", question, sheet=tuple(
        Number(type_words(t), *price_range(v, t), key=t, default=C.base[t], unit="crowns")
        for t in holds_types(v, seat)))


def _sheet_words(prices: dict[str, int]) -> str:
    return ", ".join(f"{type_words(t)} {p}" for t, p in sorted(prices.items(), key=lambda tp: C.type_rank[tp[0]]))


def _price(v: View, seat: int, w: Walk) -> tuple[dict[str, Any], str]:
    prices = w.take(_sheet(v, seat, "Your price for each item type you own:"))
    return {"prices": dict(prices)}, f"Price sheet: {_sheet_words(prices)}."


def _spy(v: View, seat: int, w: Walk) -> tuple[dict[str, Any], str]:
    options = [Option("keep", "Keep your price sheet", words=("keep",))]
    if holds_types(v, seat):
        options.append(Option("revise", "Revise your price sheet", words=("revise", "change")))
    how = w.take(Ask("how", "You have seen every price sheet: keep yours or revise it?", options=tuple(options)))
    if how == "keep":
        return {"prices": None}, "Keep your price sheet."
    prices = w.take(_sheet(v, seat, "Your revised price for each item type you own:"))
    return {"prices": dict(prices)}, f"Revise your price sheet: {_sheet_words(prices)}."


# -- transfers (V4) ---------------------------------------------------------------------------
def side_words(side: dict[str, Any], hand_known: bool) -> str:
    parts = [type_words(kind_of(c)) for c in side.get("items", [])]
    sp = side.get("specials", 0)
    if isinstance(sp, list):
        parts += [special_words(c) if hand_known else "a special card" for c in sp]
    elif sp:
        parts.append(f"{sp} special card{'s' if sp != 1 else ''} of their choice")
    if side.get("crowns"):
        parts.append(crowns_words(side["crowns"]))
    return ", ".join(parts) or "nothing"


def proposal_words(v: View, p: dict[str, Any], seat: int) -> str:
    """A proposal as its recipient (`seat`) or its maker reads it."""
    giver = p["from"]
    offered = v["players"][giver].get("offered") or []
    give = {**p["give"], "specials": offered or p["give"]["specials"]}
    return (f"{seat_words(giver, seat)} gives {side_words(give, True)}; "
            f"{seat_words(p['to'], seat)} gives {side_words(p['get'], True)}")


def _can_accept(v: View, seat: int, p: dict[str, Any]) -> bool:
    me = v["players"][seat]
    get = p["get"]
    return (all(c in me["items"] for c in get["items"]) and len(me["hand"]) >= get["specials"]
            and me["crowns"] - get["crowns"] >= high_bid_held(v, seat))


def _pick_specials(v: View, seat: int, n: int, w: Walk, question: str) -> list[str]:
    picked: list[str] = []
    for i in range(n):
        left = [c for c in v["players"][seat]["hand"] if c not in picked]
        picked.append(w.take(Ask("special", f"{question} ({i + 1} of {n})", options=tuple(
            Option(c, special_words(c), place=f"hand-{c}") for c in left))))
    return picked


def _accept(v: View, seat: int, w: Walk) -> tuple[dict[str, Any], str]:
    p = v["proposals"][0]
    what = proposal_words(v, p, seat)
    options = [Option("reject", "Reject it", words=("reject", "no"))]
    if _can_accept(v, seat, p):
        options.insert(0, Option("accept", "Accept it", words=("accept", "yes")))
    how = w.take(Ask("answer", f"A proposal: {what}. Accept or reject it?", options=tuple(options)))
    if how == "reject":
        return {"accept": False}, f"Reject the proposal ({what})."
    n = p["get"]["specials"]
    specials = _pick_specials(v, seat, n, w, "Which of your special cards do you give?")
    order: dict[str, Any] = {"accept": True}
    if n:
        order["specials"] = specials
    given = f", giving {', '.join(special_words(c) for c in specials)}" if specials else ""
    return order, f"Accept the proposal ({what}){given}."


# -- the open decision -------------------------------------------------------------------------
SAY = {
    "w_open": "Play special cards as the offer begins (Market Closed, No Delivery, First Buyer), or play nothing.",
    "w_close": "Play special cards as the offer ends (Antitrust Law, Defective Item, Steal an Item, Trading), "
               "or play nothing.",
    "w_spy": "Play one Spy to see every price sheet and revise yours, or play nothing.",
    "w_reveal": "Play special cards before the price sheets are revealed (Out of Season, Bad Check, "
                "Racketeering), or play nothing.",
    "select": "Choose a card to offer, then open the bidding at its minimum or more, or pass the opening.",
    "open": "Open the bidding, or pass the opening.",
    "bid": "Raise the high bid, or pass (a pass is final for this card).",
    "lone": "You are the last player who may buy this round: take one card at its minimum, or decline.",
    "price": "Set your sealed price for each item type you own.",
    "spy": "You have seen every price sheet: keep yours, or revise it.",
    "accept": "A transfer is proposed to you: accept or reject it.",
}
BODIES: dict[str, Callable[[View, int, Walk], tuple[dict[str, Any], str]]] = {
    "select": _select, "open": _open, "bid": _raise, "lone": _lone, "price": _price, "spy": _spy,
    "accept": _accept,
}


def decision_prompt(v: View, seat: int, picks: Sequence[Any]) -> Prompt:
    """`seat`'s open decision after `picks`, from its view `v`."""
    pending = v.get("pending")
    if v.get("over") or pending is None or seat not in pending["seats"]:
        raise IllegalOrder("not_your_turn", "you have no open decision now")
    kind = pending["kind"]
    if kind.startswith("w_"):
        window = kind[2:]
        return run(SAY[kind], picks, lambda w: _window(v, seat, window, w))
    body = BODIES[kind]
    return run(SAY[kind], picks, lambda w: body(v, seat, w))


# -- actions at any time (FD12, V4) ---------------------------------------------------------------
def action_prompt(v: View, seat: int, picks: Sequence[Any]) -> Prompt | None:
    """What `seat` may do unprompted now, from its view `v`; None when nothing."""
    if v.get("over") or not isinstance(seat, int) or not 0 <= seat < v["seats"]:
        return None
    me = v["players"][seat]
    hand = me["hand"]
    pending = v.get("pending")
    asked = v["proposals"][0] if pending and pending["kind"] == "accept" and v["proposals"] else None
    options: list[Option] = []
    su = next((c for c in hand if kind_of(c) == "SU"), None)
    ds = next((c for c in hand if kind_of(c) == "DS"), None)
    if su is not None:
        options.append(Option("subsidies", f"Play Subsidies (the bank pays you {crowns_words(C.subsidies_amount)})",
                              words=("Subsidies",), place=f"hand-{su}"))
    if ds is not None:
        options.append(Option("divination", "Cast Divination Spell (see an opponent's special cards)",
                              words=("Divination", "Divination Spell"), place=f"hand-{ds}"))
    trading_open = bool(v["options"]["trading"]) and v["phase"] == "offer"
    mine = next((p for p in v["proposals"] if p["from"] == seat), None)
    if trading_open and mine is None:
        options.append(Option("propose", "Propose a transfer", words=("propose", "trade", "transfer")))
    if mine is not None and mine is not asked:
        options.append(Option("withdraw", f"Withdraw your proposal to {seat_words(mine['to'])}",
                              words=("withdraw",), hint=proposal_words(v, mine, seat)))
    to_me = [p for p in v["proposals"] if p["to"] == seat and p is not asked]
    for p in to_me:
        who = seat_words(p["from"])
        what = proposal_words(v, p, seat)
        if _can_accept(v, seat, p):
            options.append(Option(f"accept-{p['from']}", f"Accept {who}'s proposal", words=(f"accept {who}",),
                                  hint=what))
        options.append(Option(f"reject-{p['from']}", f"Reject {who}'s proposal", words=(f"reject {who}",),
                              hint=what))
    if not options:
        return None
    by_value = {p["from"]: p for p in to_me}

    def body(w: Walk) -> tuple[dict[str, Any], str]:
        what = w.take(Ask("action", "What do you do?", options=tuple(options)))
        if what == "subsidies":
            return ({"do": "play", "card": su},
                    f"Play Subsidies: the bank pays you {crowns_words(C.subsidies_amount)}.")
        if what == "divination":
            x = w.take(_opponents(v, seat, "Divination Spell: whose special cards do you see?"))
            return {"do": "play", "card": ds, "target": x}, f"Cast Divination Spell on {seat_words(x)}."
        if what == "withdraw":
            assert mine is not None
            return {"do": "withdraw"}, f"Withdraw your proposal to {seat_words(mine['to'])}."
        if what == "propose":
            return _propose(v, seat, w)
        verb, _, frm = str(what).partition("-")
        p = by_value[int(frm)]
        words = proposal_words(v, p, seat)
        if verb == "reject":
            return {"do": "reject", "from": p["from"]}, f"Reject the proposal ({words})."
        n = p["get"]["specials"]
        specials = _pick_specials(v, seat, n, w, "Which of your special cards do you give?")
        given = f", giving {', '.join(special_words(c) for c in specials)}" if specials else ""
        return {"do": "accept", "from": p["from"], "specials": specials}, f"Accept the proposal ({words}){given}."

    return run("Things you may do at any time: play an instant card, or trade.", picks, body)


def _propose(v: View, seat: int, w: Walk) -> tuple[dict[str, Any], str]:
    to = w.take(_opponents(v, seat, "Propose a transfer to whom?"))
    me, them = v["players"][seat], v["players"][to]
    spare = me["crowns"] - high_bid_held(v, seat)
    give: dict[str, Any] = {"items": [], "specials": [], "crowns": 0}
    get: dict[str, Any] = {"items": [], "specials": 0, "crowns": 0}
    who = seat_words(to)
    while True:
        options: list[Option] = []
        for label, cards, given, prefix, owner in (
                ("Give your", me["items"], give["items"], "give-item", seat),
                (f"Ask for {who}'s", them["items"], get["items"], "get-item", to)):
            seen: set[str] = set()
            for c in cards:
                t = kind_of(c)
                if c in given or t in seen:
                    continue
                seen.add(t)
                options.append(Option(f"{prefix}:{c}", f"{label} {type_words(t)}", place=f"items-{owner}-{t}"))
        seen = set()
        for c in me["hand"]:
            if c not in give["specials"] and kind_of(c) not in seen:
                seen.add(kind_of(c))
                options.append(Option(f"give-special:{c}", f"Give your {special_words(c)}", place=f"hand-{c}"))
        if not give["crowns"] and spare >= 1:
            options.append(Option("give-crowns", "Give crowns"))
        if not get["specials"] and them["hand_size"] >= 1:
            options.append(Option("get-specials", f"Ask for special cards of {who}'s choice"))
        if not get["crowns"]:
            options.append(Option("get-crowns", f"Ask {who} for crowns"))
        something = bool(give["items"] or give["specials"] or give["crowns"] or get["items"] or get["specials"]
                         or get["crowns"])
        order = sentence = None
        if something:
            options.append(Option("send", "Send the proposal", words=("send", "done")))
            order = {"do": "propose", "to": to, "give": {k: (list(x) if isinstance(x, list) else x)
                                                          for k, x in give.items()},
                     "get": {k: (list(x) if isinstance(x, list) else x) for k, x in get.items()}}
            sentence = (f"Propose to {who}: you give {side_words(give, True)}; "
                        f"{who} gives {side_words(get, True)}.")
        pick = w.take(Ask("part", "What does the transfer hold? Add something, or send it." if something else
                          "What does the transfer hold?", options=tuple(options)), order, sentence or "")
        if pick == "send":
            assert order is not None and sentence is not None
            return order, sentence
        part, _, card = str(pick).partition(":")
        if part == "give-item":
            give["items"] = sort_cards([*give["items"], card])
        elif part == "get-item":
            get["items"] = sort_cards([*get["items"], card])
        elif part == "give-special":
            give["specials"] = sort_cards([*give["specials"], card])
        elif part == "give-crowns":
            give["crowns"] = w.take(Ask("crowns", "How many crowns do you give?",
                                        number=Number("Crowns", 1, spare, unit="crowns")))
        elif part == "get-specials":
            get["specials"] = w.take(Ask("specials", f"How many special cards of {who}'s choice?",
                                         number=Number("Special cards", 1, them["hand_size"])))
        else:
            get["crowns"] = w.take(Ask("crowns", f"How many crowns does {who} give?",
                                       number=Number("Crowns", 1, ASK_CROWNS_MAX, unit="crowns")))
