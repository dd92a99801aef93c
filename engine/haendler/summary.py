"""The Die Händler table in words, built from one view only: the text board (`summary`),
what an open request asks (`describe_request`) and where the game stands (`headline`).

Everything shown comes from the view, so a seat's summary shows another seat's money
and hand kinds only where its view does (at the end, when they open: H-99).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from engine.core.game import Request
from engine.haendler.context import Ctx, ctx_of
from engine.haendler.describe import Names, Words, join, money, ordinal, plural, tiebreaks, why_words
from engine.haendler.status import ranking

#: The six phases of a round (H-36), and the ability auction of the setup (H-34).
PHASES = {
    0: "setup: ability card auction",
    1: "buying goods",
    2: "cart auctions and loading",
    3: "moving carts",
    4: "price changes and warehouse sales",
    5: "selling",
    6: "upkeep and status",
}
#: The phase of each order kind, and of each flow station (between decisions).
KIND_PHASE = {
    "name_card": 0, "card_bid": 0, "buy": 1, "cart_bid": 2, "master": 2, "load": 2, "achsbruch": 3,
    "move": 3, "wheel": 4, "kontor": 4, "sales": 4, "bonus": 5, "credit": 6, "advance": 6,
}  # fmt: skip
STATION_PHASE = {
    "auction": 0, "buy": 1, "carts": 2, "achsbruch": 3, "move": 3, "wheel": 4, "kontor": 4,
    "sales": 4, "bonus": 5, "sell": 5, "upkeep": 6, "advance": 6,
}  # fmt: skip
#: What each order kind asks, in a few words.
KIND_WORDS = {
    "name_card": "name an ability card to auction",
    "card_bid": "raise the bid for an ability card or pass",
    "buy": "buy goods",
    "cart_bid": "bid for a cart (sealed)",
    "master": "load as loading master and set tariffs",
    "load": "load goods onto a cart (sealed)",
    "achsbruch": "play Achsbruch cards (sealed)",
    "move": "move carts",
    "wheel": "set the price wheel (sealed)",
    "kontor": "shift a price with Kontor",
    "sales": "sell from warehouses (sealed)",
    "bonus": "play Verkauf mit Bonus (sealed)",
    "credit": "take a credit or not",
    "advance": "buy status levels",
}
#: The players' colours (H-1), by seat.
COLOURS = ("blue", "yellow", "orange", "red")
WIDTH = 100


def board_of(view: Mapping[str, Any]) -> Ctx:
    """The board and components of the game `view` shows. A view keeps the board's key;
    its `board` is only {id, name, provenance}, so an inline board is read from the
    (public) options and a shipped one by its id, unless the process knows the key."""
    spec: Any = (view.get("options") or {}).get("board")
    if not isinstance(spec, dict):
        shown = view.get("board")
        spec = shown.get("id") if isinstance(shown, dict) else shown
    return ctx_of({"board_key": view.get("board_key"), "board": spec})


def phase_of(view: Mapping[str, Any]) -> int:
    pending = view.get("pending")
    if pending is not None:
        return KIND_PHASE.get(pending["kind"], 1)
    return STATION_PHASE.get((view.get("at") or {}).get("st", ""), 1)


def headline(view: Mapping[str, Any]) -> str:
    """ "round 2, phase 1: buying goods", or "game over"."""
    if view.get("over"):
        return "game over"
    phase = phase_of(view)
    where = PHASES[0] if phase == 0 else f"phase {phase}: {PHASES[phase]}"
    return f"round {view.get('round', '?')}, {where}"


def viewer_of(view: Mapping[str, Any]) -> int | None:
    """The seat whose own view this is (the only seat whose money shows), else None."""
    own = [p for p, pl in enumerate(view["players"]) if "money" in pl]
    return own[0] if len(own) == 1 and len(view["players"]) > 1 else None


# -- what a request asks -------------------------------------------------------------------
def describe_request(request: Request, view: Mapping[str, Any], names: Names) -> str:
    """What `request` asks of its seat, in words, from the request and that seat's view."""
    w = Words(names, board_of(view).board)
    ch = request.choices
    ask = _ASK.get(request.kind)
    try:
        text = ask(w, ch, view) if ask else KIND_WORDS.get(request.kind, request.kind).capitalize() + "."
    except (KeyError, TypeError, ValueError, IndexError):
        text = KIND_WORDS.get(request.kind, request.kind.replace("_", " ")).capitalize() + "."
    when = headline(view) if not view.get("over") else "game over"
    sealed = "; sealed until everyone has answered" if request.sealed else ""
    cash = ch.get("money", view["players"][request.seat].get("money"))
    have = f" You have {money(cash)}." if isinstance(cash, int) else ""
    body, end = (text[:-1], text[-1]) if text[-1:] in ".?" else (text, ".")
    return f"{body} ({when}{sealed}){end}{have}"


def _cart_in(w: Words, ch: Mapping[str, Any]) -> str:
    return f"cart {ch['cart']} in {w.node(ch['city'])}"


def _ask_buy(w: Words, ch: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    prices = ", ".join(f"{w.good(g)} {money(p)}" for g, p in ch["prices"].items() if ch["stock"].get(g))
    whole = f"; with Günstiger Einkauf the whole step costs {money(ch['whole_step_price'])}" \
        if ch.get("whole_step_price") is not None else ""  # fmt: skip
    at = view.get("at") or {}
    which = ""
    if view.get("round") == 1 and at.get("buy_pass") in (1, 2):  # round 1 buys twice (H-37)
        which = f" ({('first', 'second')[at['buy_pass'] - 1]} of your two buys this round)"
    if not prices:
        return f"Buy goods{which}: nothing is left in stock, so buy nothing."
    return f"Buy up to {ch['max']} goods for your warehouses{which}, at {prices}{whole}."


def _ask_master(w: Words, ch: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    goods = join((f"up to {k} {w.good(g)}" for g, k in ch["goods"].items() if k), "or") or "nothing (none to load)"
    others = join(w.seat(p) for p in ch["tariff_for"])
    fixed = ch.get("fixed_tariff")
    tariff = (f"tariffs are fixed at {money(fixed[0])} / {money(fixed[1])}" if fixed
              else f"set a tariff for {others} (prices for 1 and for 2 goods), or refuse")  # fmt: skip
    return f"As loading master of {_cart_in(w, ch)}, load {goods}; {tariff}."


def _ask_load(w: Words, ch: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    goods = join(f"{k} {w.good(g)}" for g, k in ch["goods"].items())
    t = ch.get("tariff")
    tariff = "the master refused you" if t is None else f"the tariff is {money(t[0])} for 1, {money(t[1])} for 2"
    card = "; Kostenlose Zuladung loads free" if ch.get("can_play_card") else ""
    most = min(ch["room"], sum(ch["goods"].values()))
    return f"Load up to {plural(most, 'good')} onto {_cart_in(w, ch)} from your {goods} there; {tariff}{card}."


def _ask_move(w: Words, ch: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    tiles = ("one of your face-up movement tiles " + join((str(t) for t in ch["tiles"]), "or")
             if len(ch["tiles"]) > 1 else f"your last face-up movement tile, {join(map(str, ch['tiles']))},")
    extra = [f"{plural(ch['points'], 'Wagnerei point')}"] if ch.get("points") else []
    extra += [f"{w.card(c)} (messenger at {w.place(ch['messenger'])})" for c in ch.get("messenger_cards") or {}]
    if ch.get("my_blocks"):
        extra.append(f"your Achsbruch on cart {join(str(c) for c in ch['my_blocks'])} to keep or lift")
    more = f"; you also have {join(extra)}" if extra else ""
    return f"Flip {tiles} and move a cart that far{more}."


def _ask_advance(w: Words, ch: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    names = board_of(view).board.level_names
    now = ch["level"]
    text = (f"Buy up to {ch['max_levels']} status levels at {money(ch['level_price'])} each; "
            f"you are level {now}, {names[now - 1] if 0 < now <= len(names) else '?'}")  # fmt: skip
    if ch.get("cards"):
        text += f"; each Sozialer Aufstieg ({ch['cards']} held) makes one cost {money(ch['card_price'])}"
    if ch.get("credits"):
        text += f"; first repay your {plural(ch['credits'], 'credit')} at {money(ch['repay'])} each"
    return text + "."


_Ask = Any
_ASK: dict[str, _Ask] = {
    "name_card": lambda w, ch, v: "Name a special ability card to auction, opening at its cost: "
    + (", ".join(f"{w.card(c)} {money(p)}" for c, p in ch["cards"].items()) or "none affordable") + ".",
    "card_bid": lambda w, ch, v: (f"Raise the bid for {w.card(ch['card'])} (high bid {money(ch['high'])} by "
                                  f"{w.seat(ch['bidder'])}) to at least {money(ch['min'])}, or pass for good."),
    "buy": _ask_buy,
    "cart_bid": lambda w, ch, v: (f"Bid for the loading mastership of {_cart_in(w, ch)}: 0 to "
                                  f"{money(ch['max'])} in steps of {money(ch['step'])}."),
    "master": _ask_master,
    "load": _ask_load,
    "achsbruch": lambda w, ch, v: (f"Play Achsbruch on carts {join((str(c) for c in ch['carts']), 'or')} to block "
                                   f"them; you hold {ch['cards']}" if ch["cards"] else
                                   "You hold no Achsbruch card, so play none."),
    "move": _ask_move,
    "wheel": lambda w, ch, v: "Point both arrows of your price wheel at a good to raise it one row, or at your shield.",
    "kontor": lambda w, ch, v: (f"You may shift one price one row up or down with "
                                f"{join(w.card(c) for c in ch['cards'])}."),
    "sales": lambda w, ch, v: "Sell from your warehouses: " + (join(
        ([f"Lagerverkauf, up to {ch['lagerverkauf_max']} goods from one warehouse at the buy price"]
         if ch["lagerverkauf"] else [])
        + ([f"Sonder-Verkauf, one good for {money(ch['sonder_verkauf_price'])} per card; you hold "
            f"{ch['sonder_verkauf_cards']}"] if ch["sonder_verkauf_cards"] else []), "or")
        or "you hold no card for it, so sell nothing") + ".",
    "bonus": lambda w, ch, v: (f"Play Verkauf mit Bonus on your arrived cart {join(map(str, ch['carts']), 'or')} "
                               f"for the city bonus on all your goods there; you hold {ch['cards']}" if ch["cards"]
                               else "You hold no Verkauf mit Bonus, so play none."),
    "credit": lambda w, ch, v: (f"You could not pay your upkeep: take one of the {ch['supply']} credits left, "
                                f"{money(ch['value'])} now and {money(ch['repay'])} to repay?"),
    "advance": _ask_advance,
}  # fmt: skip


# -- the text board ------------------------------------------------------------------------
def summary(view: Mapping[str, Any], names: Names) -> str:
    """The table as readable text (about one screen), from `view` only."""
    ctx = board_of(view)
    w = Words(names, ctx.board)
    me = viewer_of(view)
    last = " (last round)" if view.get("last_round") and not view.get("over") else ""
    lines = [f"Die Händler — {headline(view)}{last}"]
    lines += _decision(w, view, me)
    lines += ["", "Players:"] + _players(ctx, w, view, me)
    lines += ["", "Carts:"] + _carts(ctx, w, view)
    lines.append(f"Messenger: {w.place(view['messenger'])}")
    lines += ["", f"Prices (buy / sell; row 1 to {ctx.board.top_row}):"] + _prices(ctx, w, view)
    lines.append("Bonus markers: " + ", ".join(f"{w.node(c)} {money(v)}" for c, v in view["bonus"].items()))
    end = ctx.comp.end_threshold.get(view["seats"], ctx.comp.arrival_cap)
    price = ctx.board.arrival_level_price[min(view["arrivals"], len(ctx.board.arrival_level_price) - 1)]
    lines.append(f"Arrival track: {view['arrivals']} of {ctx.comp.arrival_cap}; a status level costs "
                 f"{money(price)}; the game ends in the round it reaches {end}")  # fmt: skip
    lines.append(_influence(ctx, w, view))
    lines += ["", "Warehouses:"] + [
        f"  {w.seat(p)}: " + ("; ".join(f"{w.node(c)} {w.goods(_flat(g))}" for c, g in store.items()) or "empty")
        for p, store in enumerate(view["stores"])
    ]
    lines += ["", "Roads (one way):"]
    lines += pack([f"{w.node(a)} → {w.node(b)}: {plural(k, 'space')}" for a, b, k in ctx.board.roads], "  ")
    return "\n".join(
        out for line in lines
        for out in (textwrap.wrap(line, WIDTH, subsequent_indent=" " * (len(line) - len(line.lstrip()) + 4),
                                  break_on_hyphens=False) or [""])
    )  # fmt: skip


def pack(items: list[str], indent: str, sep: str = "; ") -> list[str]:
    """Items joined by `sep` into lines of at most WIDTH characters, none split."""
    out: list[str] = []
    for item in items:
        if out and len(out[-1]) + len(sep) + len(item) <= WIDTH:
            out[-1] += sep + item
        else:
            out.append(indent + item)
    return out


def _flat(goods: Mapping[str, int]) -> list[str]:
    return [g for g, k in goods.items() for _ in range(k)]


def _decision(w: Words, view: Mapping[str, Any], me: int | None) -> list[str]:
    if view.get("over"):
        rows = _ranking(view)
        return ["Final ranking:"] + [
            f"  {ordinal(r['place'])} {w.seat(r['seat'])}: level {r['level']}, money {money(r['money'])}"
            + (f", {plural(r['credits'], 'credit')}" if r["credits"] else "")
            + (f" ({why_words(why, w.seat(rows[i - 1]['seat']))})" if i and why else "")
            for i, (r, why) in enumerate(zip(rows, tiebreaks(rows), strict=True))
        ]
    pending = view.get("pending")
    out = [f"Start player: {w.seat(view['start'])}"]
    if pending is None:
        return out
    what = KIND_WORDS.get(pending["kind"], pending["kind"])
    if "cart" in pending:
        cart = view["carts"][pending["cart"] - 1]
        what += f", cart {pending['cart']} in {w.place(cart['at'])}"
    who = join(w.seat(p) + (" (you)" if p == me else "") for p in pending["seats"])
    lead = "Waiting for" if len(pending["seats"]) == 1 else "Asked of"  # a sealed step: answers are not shown
    out.append(f"{lead} {who}: {what}")
    if view.get("tariffs"):
        out.append("Tariffs: " + "; ".join(
            f"{w.seat(p)} " + ("refused" if t is None else f"{money(t[0])} / {money(t[1])}")
            for p, t in view["tariffs"].items()))  # fmt: skip
    a = view.get("auction")
    if a:
        out.append(f"Auction of {w.card(a['card'])}: high bid {money(a['high'])} by {w.seat(a['bidder'])}"
                   + (f"; passed: {join(w.seat(p) for p in a['passed'])}" if a["passed"] else ""))  # fmt: skip
    if view.get("pool"):
        out.append("Ability cards to auction: " + ", ".join(w.card(c) for c in view["pool"]))
    return out


def _ranking(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    return ranking(dict(view))


def _players(ctx: Ctx, w: Words, view: Mapping[str, Any], me: int | None) -> list[str]:
    out = []
    levels = ctx.board.level_names
    for p, pl in enumerate(view["players"]):
        tag = ", ".join([COLOURS[p] if p < len(COLOURS) else f"seat {p}"] + (["you"] if p == me else [])
                        + (["start player"] if p == view["start"] else []))  # fmt: skip
        cash = money(pl["money"]) if "money" in pl else "hidden"
        hand = pl.get("hand")
        size = pl.get("hand_size", sum(hand.values()) if hand else 0)
        cards = f"{plural(size, 'influence card')}" + (f" ({w.cards(hand)})" if hand else "")
        level = pl["level"]
        name = levels[level - 1] if 0 < level <= len(levels) else "?"
        out.append(f"  {w.seat(p)} ({tag}): level {level} {name}, money {cash}, "
                   f"{plural(pl['credits'], 'credit')}, {cards}")  # fmt: skip
        down = list(ctx.comp.tiles)
        for t in pl["tiles"]:
            if t in down:
                down.remove(t)
        tiles = ", ".join(map(str, pl["tiles"])) or "none"
        shut = f" (face down {', '.join(map(str, down))})" if down else ""
        out.append(f"    tiles face up {tiles}{shut}; abilities: "
                   f"{', '.join(w.card(c) for c in pl['abilities']) or 'none'}")  # fmt: skip
    return out


def _carts(ctx: Ctx, w: Words, view: Mapping[str, Any]) -> list[str]:
    out = []
    for i, cart in enumerate(view["carts"]):
        facts = [w.place(cart["at"])]
        if cart.get("arrived"):
            facts.append("arrived this round")
        facts.append(f"master {w.seat(cart['master'])}" if cart["master"] is not None else "no master")
        facts += [f"blocked by {w.seat(b['by'])} (Achsbruch)" for b in view.get("blocks", []) if b["cart"] == i + 1]
        loads = "; ".join(f"{w.seat(p)} {w.goods(row)}" for p, row in enumerate(cart["rows"]) if row)
        out.append(f"  Cart {i + 1}: {'; '.join(facts)}")
        out.append(f"    loads: {loads or 'empty'}")
    return out


def _prices(ctx: Ctx, w: Words, view: Mapping[str, Any]) -> list[str]:
    rows = ctx.board.price_rows
    out = []
    for g in ctx.board.goods:
        row = int(view["prices"][g])
        buy, sell = rows[row - 1]
        made = ", ".join(w.node(c) for c in ctx.board.producers[g])
        out.append(f"  {w.good(g):<9} {money(buy):>5} / {money(sell):<6} row {row}   "
                   f"{view['stock'].get(g, 0)} in stock   made in {made}")  # fmt: skip
    out.append("  Rows: " + ", ".join(f"{i + 1}: {money(b)} / {money(s)}" for i, (b, s) in enumerate(rows)))
    return out


def _influence(ctx: Ctx, w: Words, view: Mapping[str, Any]) -> str:
    played = w.cards(view.get("played") or {})
    removed = view.get("removed") or {}
    text = f"Influence deck: {plural(view.get('deck_size', 0), 'card')}; played: {played}"
    if removed:
        text += f"; removed: {w.cards(removed)}"
    return text + f"; credits left: {view.get('credit_supply', 0)}"
