"""Auf Achse's decisions in the player's words and clicks (`Game.prompt`, issue 21).

Each open decision is offered as a sequence of asks, each narrowed by the picks before
it (`engine.core.choices`):

* placing the truck (S6): any space that has room, clicked on the board;
* a move (T3): first where the truck goes, every end of a legal path clicked on the
  board ("to Hamburg, 6 spaces", "stop on the road Linz–Wien 2 spaces before Wien"),
  or first a trailer bought or sold or an order loaded here (each offered only while it
  is legal, and then the ends after it: loading makes a city one where the truck may
  stop early, M12); then, where several paths lead there, which way ("via Bremen"); then
  the die and its value where more than one fits; the roadworks' space after a 1 (K1);
  and in a city the arrival: trailers, loads and, when the move used its full value,
  a public order to pick for auction or the decline (P1);
* arriving by an event (R17), loading a won order (A8), the auction bid (a number of
  steps with its bounds, or "pass", A3/A4), the marker's space (K1, K3) and the shortcut
  (E13).

Everything is built from the seat's own view (`engine.core.info.strip`), so a prompt
shows nothing that seat may not see, and every option is checked by the engine's own
rules: the paths are `Mover`'s, trailers and loads are tried with `cargo` on a copy of
the view, markers' spaces come from `effects`. The picks make exactly the order JSON
that `validate` accepts. Nothing here runs while orders are validated or resolved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.aufachse import cargo, effects, flow, public
from engine.aufachse.cards import SIZES
from engine.aufachse.context import Run, capacity, ctx_of, fork, load
from engine.aufachse.dataset import DataSet
from engine.aufachse.describe import order_words
from engine.aufachse.movement import DIE_NAMES, Mover, values
from engine.aufachse.picture import place_id
from engine.core.choices import Ask, Number, Option, Prompt, check_pick
from engine.core.errors import IllegalOrder
from engine.core.info import strip

S = dict[str, Any]
Order = dict[str, Any]


class _Open(Exception):
    """The picks ran out at `ask`; `order` is the order the picks make already (None
    while they make none)."""

    def __init__(self, ask: Ask, order: Order | None) -> None:
        super().__init__(ask.key)
        self.ask, self.order = ask, order


class _Picks:
    """The picks read so far against the asks a decision makes, in words."""

    def __init__(self, picks: Sequence[Any]) -> None:
        if not isinstance(picks, list | tuple):
            raise IllegalOrder("bad_pick", "picks are a list")
        self.picks = list(picks)
        self.i = 0
        self.chosen: list[str] = []
        #: The order the picks make so far (for the sentence).
        self.order: Order = {}

    def take(self, ask: Ask, done: Order | None = None) -> Any:
        """The next pick, held to `ask`; `done` is the order if the decision may stop
        here. Raises `_Open` when the picks have run out."""
        if self.i >= len(self.picks):
            raise _Open(ask, done)
        pick = self.picks[self.i]
        self.i += 1
        self.chosen.append(check_pick(ask, pick))
        return pick


class _Table:
    """One decision's facts: the data set, the seat's view and the seat."""

    def __init__(self, ctx: DataSet, view: S, seat: int, pending: S) -> None:
        self.ctx, self.view, self.seat, self.pending = ctx, view, seat, pending
        self.board = ctx.board

    def order(self, card: str) -> str:
        return order_words(self.ctx, card, "")

    def city(self, city: str) -> str:
        return self.board.city_names[city]

    def legal(self, *steps: Callable[[Run], None]) -> bool:
        """Whether `steps`, run in turn on a copy of the view (as a validation runs
        them), are all allowed."""
        run = fork(self.ctx, self.view, dry=True)
        try:
            for do in steps:
                do(run)
        except IllegalOrder:
            return False
        return True

    def after(self, *steps: Callable[[Run], None]) -> S:
        """The view as `steps` leave it (each already known to be allowed)."""
        run = fork(self.ctx, self.view, dry=True)
        for do in steps:
            do(run)
        return run.s


def prompt(game: Any, state: S, seat: Any, picks: Sequence[Any] = ()) -> Prompt:
    """`seat`'s open decision after `picks` (see the module's docstring)."""
    pending = state.get("pending")
    if state.get("over") or pending is None or seat != pending["seat"] or isinstance(seat, bool):
        raise IllegalOrder("not_your_turn", f"seat {seat} has no open decision now")
    view = strip(game.information, state, seat, share=True)
    t = _Table(ctx_of(view), view, seat, pending)
    r = _Picks(picks)
    kind = pending["kind"]
    ask: Ask | None = None
    try:
        order: Order | None = MAKERS[kind](t, r)
    except _Open as opened:
        ask, order = opened.ask, opened.order
    else:
        if r.i < len(r.picks):
            raise IllegalOrder("bad_pick", "the decision is complete: nothing more may be picked")
    return Prompt(say=SAY[kind](t), picks=tuple(r.picks), ask=ask, order=order,
                  sentence=sentence(t, kind, r.order) if r.order or order is not None else "",
                  chosen=tuple(r.chosen))


def describe(game: Any, state: S, seat: int, order: Mapping[str, Any]) -> str:
    """`order` (valid for `seat`'s open decision) in words: the `sentence` its prompt
    says for it, built from the seat's view the same way."""
    pending = state["pending"]
    view = strip(game.information, state, seat, share=True)
    t = _Table(ctx_of(view), view, seat, pending)
    return sentence(t, pending["kind"], {k: v for k, v in order.items() if k != "kind"})


# -- placing (S6) ------------------------------------------------------------------------------
def _place(t: _Table, r: _Picks) -> Order:
    board = t.board
    hand = _hand(t.view, t.seat)
    opts = []
    for sid in board.spaces:
        if flow.space_full(t.ctx, t.view, sid):
            continue
        starts = [t.order(c) for c in hand if t.ctx.orders[c].start == sid]
        hint = ("your order" + ("s " if len(starts) > 1 else " ") + "; ".join(starts) + " start"
                + ("" if len(starts) > 1 else "s") + " here") if starts else ""
        opts.append(Option(sid, _space_label(t, sid), place=place_id(sid), hint=hint))
    space = r.take(Ask("space", "Where do you place your truck? Any city or road space with room.", tuple(opts)))
    r.order = {"space": space}
    return r.order


# -- moving (T3) -------------------------------------------------------------------------------
def _move(t: _Table, r: _Picks) -> Order:
    extra = bool(t.pending["extra"])
    seat, view = t.seat, t.view
    start = view["players"][seat]["at"]
    dice = view["dice"]
    trailers: list[dict[str, str]] = []
    loads: list[str] = []
    order = r.order

    def before(run: Run) -> None:  # T3 steps 1–2, as picked so far
        cargo.trailer_actions(run, seat, list(trailers))
        cargo.load_orders(run, seat, list(loads))

    while True:
        ws = t.after(before) if trailers or loads else view
        extras = [] if extra else _extras(t, _nothing, trailers, loads, start, "before you drive")
        moves = _moves(t, ws)
        ends = [_end_option(t, start, end, ways) for end, ways in moves.items()]
        question = (f"The dice show {dice[0]} and {dice[1]}. Where does your truck go? Pick the space where the move "
                    "ends" + ("" if not extras else ", or first buy or sell a trailer or load an order here") + ".")
        pick = r.take(Ask("to", question, tuple(extras + ends)))
        if pick == "wait" or pick in t.board.rank:
            break
        _extra_pick(pick, trailers, loads)
        if trailers:
            order["trailers"] = list(trailers)
        if loads:
            order["load"] = list(loads)
    end = start if pick == "wait" else pick
    ways = moves[pick]
    paths = list(ways)
    if len(paths) > 1:
        way_opts = _way_options(t, start, paths)
        path = paths[r.take(Ask("way", f"Which way to {_space_short(t, end)}?", tuple(way_opts)))]
    else:
        path = paths[0]
    order["path"] = list(path)
    k = len(path)
    uses = ways[path]
    if len(uses) > 1:
        die_opts = tuple(Option(f"{d}{n}", _die_label(dice, d, n, k), words=(f"die {d} as {n}",),
                                hint=_die_hint(t, ws, end, k, n, extra)) for d, n in uses)
        die, n = _split(r.take(Ask("die", "Which die, and which value?", die_opts)))
    else:
        die, n = uses[0]
    order["die"] = die
    if dice[DIE_NAMES.index(die)] == 6:
        order["n"] = n
    if n == 1:  # K1: the roadworks, from where the truck ends
        spots = effects.roadworks_targets_at(t.ctx, ws, end)
        opts = tuple(Option(x, t.board.name(x), place=place_id(x)) for x in spots)
        order["roadworks"] = r.take(Ask("roadworks", "You used a 1: where does the roadworks go?", opts))
    if extra or k == 0 or end not in t.board.city_set:
        return order

    def arrival(run: Run) -> None:  # T5 steps 1–2 after the move
        before(run)
        run.move_to(seat, end)
        flow._arrival(run, seat, end)

    _arrive_picks(t, r, arrival, end, k == n and flow.eligible_now(view), {}, order)
    return order


def _nothing(run: Run) -> None:
    return None


def _arrive_picks(t: _Table, r: _Picks, base: Callable[[Run], None], city: str, eligible: bool, part: Order,
                  whole: Order) -> None:
    """T5 step 3 (and D-ARRIVE): trailers, loads, then the pick or the decline when
    eligible, into `part` (which `whole` holds as its arrival part unless they are one),
    on the view as `base` leaves it."""
    trailers: list[dict[str, str]] = []
    loads: list[str] = []
    display = t.view["display"]  # (an arrival outside the kids variant never changes it)
    while True:
        opts = _extras(t, base, trailers, loads, city, "here")
        if eligible:
            opts += [Option(f"pick:{j}", f"pick {t.order(c)} for auction", words=(f"pick {_route(t, c)}",),
                            hint=f"the public order in slot {j}") for j, c in enumerate(display, 1)]
            opts.append(Option("decline", f"decline: {t.order(display[0])} is discarded", words=("decline",)))
        if not opts:
            return
        question = (f"In {t.city(city)}: " + ("buy or sell a trailer, load an order, and pick a public order for "
                                               "auction or decline." if eligible else
                                               "anything more to do? Buy or sell a trailer or load an order."))
        pick = r.take(Ask("arrival", question, tuple(opts)), None if eligible else whole)
        if pick == "decline":
            part["decline"] = True
        elif pick.startswith("pick:"):
            part["pick"] = int(pick[5:])
        else:
            _extra_pick(pick, trailers, loads)
            if trailers:
                part["trailers"] = list(trailers)
            if loads:
                part["load"] = list(loads)
        if part is not whole:
            whole["arrive"] = part
        if "pick" in part or "decline" in part:
            return


def _extras(t: _Table, base: Callable[[Run], None], trailers: list[dict[str, str]], loads: list[str], city: str,
            where: str) -> list[Option]:
    """The trailer buys and sells (before any load, H1–H3) and the loads (L2) allowed
    after `base` and the trailers and loads picked so far."""
    seat, comp = t.seat, t.ctx.comp

    def tried(more: list[dict[str, str]], also: list[str]) -> Callable[[Run], None]:
        def run_it(run: Run) -> None:
            base(run)
            cargo.trailer_actions(run, seat, [*trailers, *more])
            cargo.load_orders(run, seat, [*loads, *also])
        return run_it

    out: list[Option] = []
    if not loads:
        for verb in ("buy", "sell"):
            for size in SIZES:
                if t.legal(tried([{verb: size}], [])):
                    spec = comp.trailers[size]
                    label = (f"buy a {size} trailer (room for {spec.capacity} more goods) for {spec.price}"
                             if verb == "buy" else f"sell a {size} trailer back for {comp.trailer_refund}")
                    out.append(Option(f"{verb}:{size}", label, words=(f"{verb} a {size} trailer",)))
    if city in t.board.city_set:
        now = t.after(tried([], []))
        pl = now["players"][seat]
        room = capacity(t.ctx, pl) - load(t.ctx, pl)
        for card in _hand(now, seat):
            if t.ctx.orders[card].start == city and t.legal(tried([], [card])):
                out.append(Option(f"load:{card}", f"load {t.order(card)} {where}",
                                  words=(f"load {_route(t, card)}",), hint=f"room on your truck now: {room} goods"))
    return out


def _extra_pick(pick: str, trailers: list[dict[str, str]], loads: list[str]) -> None:
    verb, _, what = pick.partition(":")
    if verb == "load":
        loads.append(what)
    else:
        trailers.append({verb: what})


def _moves(t: _Table, ws: S) -> dict[str, dict[tuple[str, ...], list[tuple[str, int]]]]:
    """Every legal move (M4–M9) on `ws`: end (or "wait") -> path -> the (die, N) that
    allow it, each N once (from a die that shows N, else from the first 6), in
    canonical order."""
    m = Mover(t.ctx, ws, t.seat)
    out: dict[str, dict[tuple[str, ...], list[tuple[str, int]]]] = {}
    seen: set[int] = set()
    dice = ws["dice"]
    plain = sorted(values(dice), key=lambda u: dice[DIE_NAMES.index(u[0])] != u[1])  # a die showing N first
    for die, n in plain:
        if n in seen:
            continue
        seen.add(n)
        for path in m.paths(n):
            key = path[-1] if path else "wait"
            out.setdefault(key, {}).setdefault(tuple(path), []).append((die, n))
    rank = t.board.rank
    ordered = sorted(out, key=lambda e: -1 if e == "wait" else rank[e])
    return {e: {p: sorted(out[e][p], key=lambda u: u[1]) for p in sorted(out[e], key=lambda p: (len(p), p))}
            for e in ordered}


def _end_option(t: _Table, start: str, end: str, ways: dict[tuple[str, ...], list[tuple[str, int]]]) -> Option:
    if end == "wait":
        return Option("wait", "wait where you are", words=("wait",), place=place_id(start),
                      hint="a marker stands next to your truck, so it may stay")
    lengths = sorted({len(p) for p in ways})
    spaces = " or ".join(map(str, lengths)) + (" space" if lengths == [1] else " spaces")
    board = t.board
    if end in board.city_set:
        name = t.city(end)
        return Option(end, f"to {name}, {spaces}", words=(name, f"to {name}"), place=place_id(end))
    eid, k = board.road_of[end]
    e = board.edge_by_id[eid]
    pips = e[4]
    heads = {_toward(board, p[-2] if len(p) > 1 else start, end) for p in ways}
    event = " (event space)" if end in board.events else ""
    if len(heads) == 1:
        toward = heads.pop()
        d = pips - k if toward == e[2] else k
        other = e[1] if toward == e[2] else e[2]
        label = (f"stop {d} space{'s' if d != 1 else ''} before {t.city(toward)} on the {_kind(e)} from "
                 f"{t.city(other)}, {spaces}{event}")
    else:
        label = f"stop on {board.name(end)}, {spaces}{event}"
    return Option(end, label, place=place_id(end))


def _toward(board: Any, prev: str, end: str) -> str:
    """The city a truck that entered road space `end` from `prev` is driving toward."""
    eid, k = board.road_of[end]
    e = board.edge_by_id[eid]
    came = board.road_of.get(prev)
    from_first = prev == e[1] or (came is not None and came[0] == eid and came[1] < k)
    return str(e[2] if from_first else e[1])


def _kind(e: tuple[Any, ...]) -> str:
    return "ferry" if e[3] == "ferry" else "road"


def _way_options(t: _Table, start: str, paths: list[tuple[str, ...]]) -> list[Option]:
    """A way of each path, in words: the cities it passes (or, where two paths pass the
    same cities, the connections it takes)."""
    board = t.board
    labels = []
    for p in paths:
        via = [t.city(x) for x in p[:-1] if x in board.city_set]
        labels.append(("via " + _and(via) if via else "straight there") + f", {len(p)} space"
                      + ("" if len(p) == 1 else "s"))
    if len(set(labels)) < len(labels):
        labels = [_roads(t, start, p) + f", {len(p)} spaces" for p in paths]
    return [Option(i, label, words=(label.rpartition(", ")[0],)) for i, label in enumerate(labels)]


def _roads(t: _Table, start: str, path: tuple[str, ...]) -> str:
    """The connections a path drives along: "along Hamburg–Bremen, Bremen–Hannover"."""
    board = t.board
    seen: list[str] = []
    for x in (start, *path):
        where = board.road_of.get(x)
        if where is not None:
            e = board.edge_by_id[where[0]]
            name = f"{t.city(e[1])}–{t.city(e[2])}"
            if not seen or seen[-1] != name:
                seen.append(name)
    return "along " + _and(seen) if seen else "straight there"


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _die_label(dice: list[int], die: str, n: int, k: int) -> str:
    face = dice[DIE_NAMES.index(die)]
    label = _die_words(face, n)
    lost = n - k
    if k and lost:
        label += f", giving up {lost} pip{'s' if lost != 1 else ''}"
    return label


def _die_words(face: int, n: int) -> str:
    """A die as the player sees it: the page shows the dice's faces, never their letters."""
    return f"the 6 as {n}" if face == 6 and n != 6 else f"the die showing {n}"


def _die_hint(t: _Table, ws: S, end: str, k: int, n: int, extra: bool) -> str:
    if not k or k != n:
        return ""
    if end in t.board.events:
        return "the full value on an event space: you draw an event card"
    if end in t.board.city_set and not extra and flow.eligible_now(ws):
        return "the full value in a city: you pick a public order for auction or decline"
    return ""


def _split(value: str) -> tuple[str, int]:
    return value[0], int(value[1:])


# -- arriving by an event (R17), the auction (A3, A4), the won order (A8) ----------------------------
def _arrive(t: _Table, r: _Picks) -> Order:
    city = t.view["players"][t.seat]["at"]
    eligible = bool(t.pending["eligible"]) and flow.eligible_now(t.view)
    order = r.order
    _arrive_picks(t, r, lambda run: None, city, eligible, order, order)
    return order


def _bid(t: _Table, r: _Picks) -> Order:
    a = t.view["auction"]
    card = t.ctx.orders[a["card"]]
    allowed = public.allowed_bids(t.ctx, t.view, t.seat)
    costs = "a bid of " + ", ".join(f"{b} costs {card.cost(b)}" for b in allowed)
    holder = a["holder"]
    lead = ("nobody has bid yet" if a["step"] == 0 else
            f"the bid stands at {a['step']}" + (", held by you" if holder == t.seat else ""))
    question = (f"Your bid for {t.order(card.id)}: {lead}; {costs}; you have {t.view['players'][t.seat]['cash']}. "
                "Passing is final.")
    number = Number("your bid", allowed[0], allowed[-1], named=(Option("pass", "pass", words=("no bid",)),))
    pick = r.take(Ask("bid", question, number=number))
    r.order = {"pass": True} if pick == "pass" else {"bid": pick}
    return r.order


def _load_won(t: _Table, r: _Picks) -> Order:
    seat, card = t.seat, t.pending["card"]
    city = t.view["players"][seat]["at"]
    order = r.order
    loads: list[str] = []
    trailers: list[dict[str, str]] = []
    while True:
        if t.pending["active"]:
            opts = _extras(t, _nothing, trailers, loads, city, "here")
        else:
            opts = [o for o in _extras(t, _nothing, [], loads, city, "here") if o.value == f"load:{card}"]
        opts.sort(key=lambda o: o.value != f"load:{card}")  # the won order first
        if not opts:
            return order
        question = f"You won {t.order(card)}. Load it here" + (", buy or sell a trailer or load another order?"
                                                               if t.pending["active"] else "?")
        pick = r.take(Ask("load", question, tuple(opts)), order)
        _extra_pick(pick, trailers, loads)
        if trailers:
            order["trailers"] = list(trailers)
        order["load"] = list(loads)


# -- markers (K1, K3) and the shortcut (E13) ---------------------------------------------------------
def _event_space(t: _Table, r: _Picks) -> Order:
    p = t.pending
    roadworks = p["mode"] == "roadworks"
    spots = (effects.roadworks_targets(t.ctx, t.view, p["owner"]) if roadworks
             else effects.jam_targets(t.ctx, t.view, p["owner"], p["by"]))
    opts = tuple(Option(x, t.board.name(x), place=place_id(x)) for x in spots)
    what = "the roadworks" if roadworks else "the traffic jam"
    r.order = {"space": r.take(Ask("space", f"Where does {what} go?", opts))}
    return r.order


def _shortcut(t: _Table, r: _Picks) -> Order:
    cities = effects.shortcut_cities(t.ctx, t.view, t.seat, t.pending["reach"])
    opts = [Option(c, t.city(c), words=(f"to {t.city(c)}",), place=place_id(c)) for c in cities]
    opts.append(Option("decline", "stay where you are", words=("decline", "no shortcut")))
    pick = r.take(Ask("city", f"The shortcut takes your truck to any city at most {t.pending['reach']} spaces away. "
                              "Which city?", tuple(opts)))
    r.order = {"decline": True} if pick == "decline" else {"city": pick}
    return r.order


MAKERS: dict[str, Callable[[_Table, _Picks], Order]] = {
    "place": _place, "move": _move, "arrive": _arrive, "bid": _bid, "load_won": _load_won,
    "event_space": _event_space, "shortcut": _shortcut,
}


# -- words --------------------------------------------------------------------------------------------
def _route(t: _Table, card: str) -> str:
    """An order's route alone ("Zürich → Linz"): the short words a player may write."""
    o = t.ctx.orders[card]
    return f"{t.city(o.start)} → {t.city(o.dest)}"


def _hand(view: S, seat: int) -> list[str]:
    pl = view["players"][seat]
    return list(pl.get("hand") or []) + list(pl["open"])


def _space_label(t: _Table, space: str) -> str:
    event = " (event space)" if space in t.board.events else ""
    return t.board.name(space) + event


def _where(t: _Table, space: str) -> str:
    """A space in a sentence: "Hamburg", "the road Hamburg–Bremen (1 space from Bremen)"."""
    if space in t.board.city_set:
        return t.city(space)
    road, _, near = t.board.name(space).partition(", ")
    return f"{road} ({near})" if near else road


def _space_short(t: _Table, space: str) -> str:
    return t.city(space) if space in t.board.city_set else t.board.name(space)


SAY: dict[str, Callable[[_Table], str]] = {
    "place": lambda t: "Place your truck on any space of the board.",
    "move": lambda t: (f"Your dice show {t.view['dice'][0]} and {t.view['dice'][1]}: choose where your truck "
                       + ("goes on its extra move." if t.pending["extra"] else "goes.")),
    "arrive": lambda t: f"Your truck has arrived in {t.city(t.view['players'][t.seat]['at'])}: act on arrival.",
    "bid": lambda t: f"Bid for {t.order(t.view['auction']['card'])}, or pass.",
    "load_won": lambda t: f"Load {t.order(t.pending['card'])}, which you won, or keep it in hand.",
    "event_space": lambda t: ("Choose the space for the roadworks." if t.pending["mode"] == "roadworks"
                              else "Choose the space for the traffic jam."),
    "shortcut": lambda t: "Choose a city for the shortcut, or stay where you are.",
}


def sentence(t: _Table, kind: str, order: Order) -> str:
    """The order (or the part picked so far) in one sentence."""
    board = t.board
    if kind == "place":
        where = order.get("space")
        return f"Place your truck {'in' if where in board.city_set else 'on'} {_space_short(t, where)}." if where \
            else ""
    if kind == "bid":
        card = t.order(t.view["auction"]["card"])
        if order.get("pass"):
            return f"Pass on {card}."
        cost = t.ctx.orders[t.view["auction"]["card"]].cost(order["bid"])
        return f"Bid {order['bid']} (costs {cost}) for {card}."
    if kind == "event_space":
        what = "roadworks" if t.pending["mode"] == "roadworks" else "traffic jam"
        return f"Put the {what} on {board.name(order['space'])}."
    if kind == "shortcut":
        return "Do not take the shortcut." if order.get("decline") else \
            f"Take the shortcut to {t.city(order['city'])}."
    if kind == "load_won":
        parts = _cargo_words(t, order)
        return (_cap("; ".join(parts)) if parts else f"Keep {t.order(t.pending['card'])} in hand, unloaded") + "."
    if kind == "arrive":
        city = t.city(t.view["players"][t.seat]["at"])
        parts = _cargo_words(t, order) + _pick_words(t, order)
        return f"In {city}: {'; '.join(parts)}." if parts else f"Nothing more to do in {city}."
    parts = _cargo_words(t, order)
    if "path" in order:
        parts.append(_drive_words(t, order))
    if "roadworks" in order:
        parts.append(f"put the roadworks on {_where(t, order['roadworks'])}")
    arrive = order.get("arrive") or {}
    later = _deliver_words(t, arrive) + _cargo_words(t, arrive) + _pick_words(t, arrive)
    if later:
        parts.append("on arrival " + ", ".join(later))
    return _cap("; ".join(parts)) + "." if parts else ""


def _drive_words(t: _Table, order: Order) -> str:
    start = t.view["players"][t.seat]["at"]
    die = order.get("die")
    n = order.get("n", t.view["dice"][DIE_NAMES.index(die)]) if die is not None else None
    using = f" with {_die_words(t.view['dice'][DIE_NAMES.index(die)], n)}" if die is not None and n is not None else ""
    path = order["path"]
    if not path:
        return f"wait at {_where(t, start)}{using}"
    board = t.board
    end = path[-1]
    via = [t.city(x) for x in path[:-1] if x in board.city_set]
    k = len(path)
    lost = n - k if n is not None else 0
    return (f"drive{using} from {_where(t, start)}" + (f" via {_and(via)}" if via else "")
            + f" to {_where(t, end)}, {k} space{'s' if k != 1 else ''}"
            + (f", giving up {lost} pip{'s' if lost != 1 else ''}" if lost else ""))


def _deliver_words(t: _Table, part: Order) -> list[str]:
    """The deliveries an order lists (R27), in their order."""
    listed = part.get("deliver") or []
    return ["deliver " + _and([t.order(c) for c in listed]) + (" in that order" if len(listed) > 1 else "")] \
        if listed else []


def _cargo_words(t: _Table, part: Order) -> list[str]:
    out = [f"{'buy' if 'buy' in a else 'sell'} a {a.get('buy') or a.get('sell')} trailer"
           for a in part.get("trailers") or []]
    out += [f"load {t.order(c)}" for c in part.get("load") or []]
    return out


def _pick_words(t: _Table, part: Order) -> list[str]:
    display = t.view["display"]
    if "pick" in part:
        return [f"pick {t.order(display[part['pick'] - 1])} for auction"]
    if part.get("decline"):
        return [f"decline, discarding {t.order(display[0])}"]
    return []


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
