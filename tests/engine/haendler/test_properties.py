"""Property tests over bot-played Die Händler games from random seeds.

Each game is played once; a per-step callback checks, after every resolved step:

- money: every seat's change of money equals the flows its step's events report (bank
  payments, bank income, credits, repayments, tariffs and transfers between seats); so
  the money in play changes only by the net bank flow;
- goods: for every good, stock + warehouses + cart rows == the board's stock per type;
- influence cards: deck + hands + played + removed == the printed count of each kind;
- no illegal state: money, levels, rows, carts, tiles, credits, tracks, prices, bonus;
- views: a seat never sees other seats' money or hand, nor the deck or the RNG, the
  public sees no money or hand (until the end, when all becomes public: H-99);
- redaction (H-13 to H-16): on sampled steps, raising another seat's money or swapping
  its hand kinds with the deck changes neither a seat's view, its request, nor what it
  sees of resolving the same orders (events and next view);

and after the game: replaying the accepted orders from the seed rebuilds the state.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core import IllegalOrder, get, visible_to
from engine.core.bots import Dice, play_game, replay
from engine.core.game import Request
from engine.haendler.bots import GreedyBot, RandomBot
from engine.haendler.context import ctx_of
from engine.haendler.view import HIDDEN_PLAYER_FIELDS

GAME = get("haendler")

VARIANTS: list[dict[str, Any]] = [
    {},
    {"abilities": "auction"},
    {"light": True},
    {"negotiation": True},
    {"negotiation": True, "abilities": "auction"},
    {"light": True, "abilities": "auction"},
    {"start_cities": ["BRU", "LYO", "AUG"], "messenger_start": "REI>BAS:1"},
]

#: Events that move no money.
MONEY_NEUTRAL = {
    "ability_named", "ability_bid", "ability_pass", "abilities_removed", "cart_master",
    "achsbruch_played", "moved", "card_gained", "card_gain_missed", "tiles_reset",
    "price_votes", "price_adjusted", "arrival_track", "bonus_cards_played", "bonus_markers",
    "last_round", "round_started", "transfer_cards", "game_over",
}  # fmt: skip


def dumps(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


# -- bots ------------------------------------------------------------------------------------
class Haggler:
    """Wraps a bot and, now and then, attaches a legal free action to its order: a
    transfer of money and/or cards (negotiation variant) or a credit repayment."""

    def __init__(self, inner: Any, seed: str) -> None:
        self.inner, self.dice = inner, Dice(seed)

    def order(self, game: Any, state: dict[str, Any], request: Request) -> dict[str, Any]:
        order = dict(self.inner.order(game, state, request))
        if not self.dice.chance(0.2):
            return order
        me = game.view(state, request.seat)["players"][request.seat]
        extra: dict[str, Any] = {}
        if state["options"]["negotiation"]:
            to = self.dice.pick([p for p in range(state["seats"]) if p != request.seat])
            t: dict[str, Any] = {"to": to, "money": 100 * self.dice.below(12)}
            if me["hand"] and self.dice.chance(0.5):
                t["cards"] = {self.dice.pick(sorted(me["hand"])): 1}
            extra["transfers"] = [t]
        elif me["credits"] and "repay" not in order:
            extra["repay"] = 1
        candidate = {**order, **extra}
        try:
            game.validate(state, request.seat, candidate)
        except IllegalOrder:
            return order
        return candidate


def make_bots(seed: int, seats: int, options: dict[str, Any]) -> dict[int, Any]:
    """A mix of RandomBot and GreedyBot chosen from the seed (plus Haggler wrappers)."""
    dice = Dice(f"bots:{seed}")
    bots: dict[int, Any] = {}
    for p in range(seats):
        bot = (RandomBot, GreedyBot)[dice.below(2)](f"{seed}:{p}")
        bots[p] = Haggler(bot, f"haggle:{seed}:{p}") if dice.chance(0.5) else bot
    return bots


# -- invariants --------------------------------------------------------------------------------
def money_flows(prev: dict[str, Any], events: list[dict[str, Any]]) -> list[int]:
    """Each seat's change of money as the step's public events report it."""
    comp = ctx_of(prev).comp
    flow = [0] * prev["seats"]
    for e in events:
        t = e["type"]
        if e["visible_to"] != "all":
            assert t in ("card_gained", "transfer_cards"), f"unexpected private event {t}"
            continue
        if t in ("bought", "ability_bought", "abilities_dealt", "upkeep", "upkeep_shortfall", "advance"):
            flow[e["seat"]] -= e["paid"]
        elif t == "cart_auction":
            flow[e["master"]] -= e["paid"]
        elif t == "cart_loaded":
            master = prev["carts"][e["cart"] - 1]["master"]
            for x in e["loads"]:
                flow[x["seat"]] -= x["paid"]
                flow[master] += x["paid"]
                assert x["paid"] == 0 or not x["card"]
        elif t == "warehouse_sales":
            for x in e["lagerverkauf"] + e["sonder_verkauf"]:
                flow[x["seat"]] += x["received"]
            for x in e["sonder_verkauf"]:
                assert x["received"] == comp.sonder_verkauf_price
        elif t == "cart_sold":
            for x in e["sales"]:
                flow[x["seat"]] += x["received"]
        elif t == "credit":
            flow[e["seat"]] += comp.credit_value if e["taken"] else 0
        elif t == "credit_repaid":
            flow[e["seat"]] -= e["count"] * comp.credit_repay
        elif t == "transfer":
            flow[e["seat"]] -= e["money"]
            flow[e["to"]] += e["money"]
        else:
            assert t in MONEY_NEUTRAL, f"event {t!r} is not in the money-flow table of this test"
    return flow


def check_money(prev: dict[str, Any], new: dict[str, Any], events: list[dict[str, Any]]) -> None:
    flow = money_flows(prev, events)
    before = [p["money"] for p in prev["players"]]
    after = [p["money"] for p in new["players"]]
    delta = [a - b for a, b in zip(after, before, strict=True)]
    assert sum(delta) == sum(flow), f"money in play changed by {sum(delta)}, the bank flows say {sum(flow)}"
    assert delta == flow, f"per-seat money changes {delta} != event flows {flow}"


def check_initial(s: dict[str, Any]) -> None:
    comp = ctx_of(s).comp
    for p in s["players"]:
        if s["options"]["abilities"] == "pairs":
            assert p["money"] == comp.start_money - comp.pair_price and len(p["abilities"]) == 2
        else:
            assert p["abilities"] == []
            assert p["money"] == comp.start_money
    check_state(s)


def check_state(s: dict[str, Any]) -> None:
    """Conservation laws and the bounds of every piece of a reachable state."""
    ctx = ctx_of(s)
    board, comp = ctx.board, ctx.comp
    n = s["seats"]
    # goods
    for g in board.goods:
        assert s["stock"][g] >= 0
        in_stores = sum(store.get(g, 0) for seat in s["stores"] for store in seat.values())
        on_carts = sum(row.count(g) for cart in s["carts"] for row in cart["rows"])
        assert s["stock"][g] + in_stores + on_carts == board.stock_per_type, f"{g} is not conserved"
    for seat in s["stores"]:
        for city, store in seat.items():
            assert board.is_city(city)
            assert set(store) <= set(board.goods) and all(k >= 0 for k in store.values())
    # influence cards
    piles = [s["deck"], s["played"], s["removed"], *(p["hand"] for p in s["players"])]
    for pile in piles:
        assert set(pile) <= set(comp.influence) and all(k >= 0 for k in pile.values()), pile
    for kind, count in comp.influence.items():
        assert sum(pile.get(kind, 0) for pile in piles) == count, f"influence card {kind} is not conserved"
    # players
    levels = board.top_level
    for p in s["players"]:
        assert isinstance(p["money"], int) and p["money"] >= 0
        assert p["money"] % comp.money_step == 0
        assert 1 <= p["level"] <= levels
        assert set(p["tiles"]) <= set(comp.tiles) and len(set(p["tiles"])) == len(p["tiles"])
        assert p["credits"] >= 0
        assert len(p["abilities"]) <= 2 and set(p["abilities"]) <= set(comp.abilities)
    owned = [a for p in s["players"] for a in p["abilities"]]
    assert len(owned) == len(set(owned)), "an ability card is held twice"
    assert not set(owned) & set(s["pool"])
    assert s["credit_supply"] >= 0
    assert s["credit_supply"] + sum(p["credits"] for p in s["players"]) == comp.credit_cards
    # carts
    spots = [c["at"] for c in s["carts"]]
    assert len(set(spots)) == len(spots), f"two carts on one node: {spots}"
    for c in s["carts"]:
        assert c["at"] in board.succ
        assert len(c["rows"]) == n
        assert all(len(row) <= comp.master_slots for row in c["rows"])
        m = c["master"]
        if m is not None:
            assert board.is_city(c["at"]), "a loading master on a cart outside a city"
            mine = c["rows"][m]
            assert len(set(mine)) <= 1, f"the master's row mixes types: {mine}"
            for p, row in enumerate(c["rows"]):
                if p != m:
                    assert len(row) <= comp.other_slots, f"seat {p} holds {len(row)} goods on a cart"
                    assert not set(row) & set(mine), "another seat holds the master's type"
        else:
            assert sum(1 for row in c["rows"] if len(row) > comp.other_slots) <= 1
            assert all(len(set(row)) <= 1 for row in c["rows"] if len(row) > comp.other_slots)
        assert all(g in board.goods for row in c["rows"] for g in row)
    assert board.is_space(s["messenger"])
    for b in s["blocks"]:
        assert 1 <= b["cart"] <= len(s["carts"]) and 0 <= b["by"] < n
    # tracks
    assert 0 <= s["arrivals"] <= comp.arrival_cap
    assert all(1 <= row <= board.top_row for row in s["prices"].values())
    assert set(s["prices"]) == set(board.goods)
    assert all(v in board.bonus_values for v in s["bonus"].values())
    assert set(s["bonus"]) == set(board.cities)
    assert 0 <= s["start"] < n


def check_views(s: dict[str, Any]) -> None:
    n = s["seats"]
    rng = str(s["rng"])
    public = GAME.view(s, "public")
    views = [(p, GAME.view(s, p)) for p in range(n)] + [("public", public)]
    for viewer, v in views:
        text = json.dumps(v)
        assert "rng" not in v and rng not in text, f"view({viewer!r}) shows the RNG"
        if s["over"]:
            # H-99: at the end all money and all hands become public
            assert all("money" in pl and "hand" in pl for pl in v["players"])
            continue
        assert "deck" not in v, f"view({viewer!r}) shows the deck"
        assert v["deck_size"] == sum(s["deck"].values())
        for p, pl in enumerate(v["players"]):
            assert pl["hand_size"] == sum(s["players"][p]["hand"].values())
            if p == viewer:
                assert pl["money"] == s["players"][p]["money"] and pl["hand"] == s["players"][p]["hand"]
            else:
                for key in HIDDEN_PLAYER_FIELDS:
                    assert key not in pl, f"view({viewer!r}) shows seat {p}'s {key}"


# -- redaction -----------------------------------------------------------------------------------
def seen_by(events: list[dict[str, Any]], viewer: int | str) -> list[dict[str, Any]]:
    """The events `viewer` sees, without its own private card_gained (it shows the deck
    composition to the gainer by design: H-73)."""
    return [
        e for e in events
        if visible_to(e, viewer) and not (e["type"] == "card_gained" and e["visible_to"] != "all")
    ]  # fmt: skip


def requests_of(s: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    return [r.as_dict() for r in GAME.requests(s) if r.seat == seat]


def reveals(events: list[dict[str, Any]]) -> bool:
    """Steps whose events reveal money or hands by design: an upkeep shortfall (H-15,
    H-91; more money may also avoid it) and the end of the game (H-99)."""
    return any(e["type"] in ("upkeep_shortfall", "game_over") for e in events)


def money_is_public(s: dict[str, Any]) -> bool:
    """During the setup auction of ability cards (H-34) every seat's money follows from
    public payments alone (the rules' note on D0-NAME): a chooser who can pay no card
    takes the cheapest for all of it, which everybody could work out. A state with one
    seat's money changed then is no state a game can reach, so it is not perturbed."""
    return bool(s["at"]["st"] == "auction")


def perturb_money(s: dict[str, Any], j: int, dice: Dice) -> dict[str, Any]:
    t = json.loads(json.dumps(s))
    t["players"][j]["money"] += 100 * (1 + dice.below(60))
    return t


def perturb_hand(s: dict[str, Any], j: int, dice: Dice) -> dict[str, Any] | None:
    """Swap one card kind of j's hand with another kind in the deck (counts kept)."""
    hand, deck = s["players"][j]["hand"], s["deck"]
    pairs = [(a, b) for a in sorted(hand) if hand[a] for b in sorted(deck) if deck[b] and b != a]
    if not pairs:
        return None
    a, b = dice.pick(pairs)
    t = json.loads(json.dumps(s))
    h, d = t["players"][j]["hand"], t["deck"]
    h[a] -= 1
    d[a] = d.get(a, 0) + 1
    h[b] = h.get(b, 0) + 1
    d[b] -= 1
    for pile in (h, d):
        for k in [k for k, v in pile.items() if not v]:
            del pile[k]
    return t


def check_redaction(
    prev: dict[str, Any], orders: dict[int, Any], new: dict[str, Any], events: list[dict[str, Any]], dice: Dice
) -> int:
    """Perturb one seat's hidden fields in `prev`; nothing anybody else sees may change.
    Returns how many event comparisons were made."""
    n = prev["seats"]
    j = dice.below(n)
    others: list[int | str] = [p for p in range(n) if p != j] + ["public"]
    compared = 0
    richer = perturb_money(prev, j, dice)  # drawn in any case, so the later draws stay as they were
    for alt in (None if money_is_public(prev) else richer, perturb_hand(prev, j, dice)):
        if alt is None:
            continue
        check_state(alt)
        for i in others:
            assert GAME.view(alt, i) == GAME.view(prev, i), f"view({i!r}) depends on seat {j}'s hidden fields"
            if isinstance(i, int):
                assert requests_of(alt, i) == requests_of(prev, i), f"seat {i}'s request depends on seat {j}'s"
        try:
            for seat, order in orders.items():
                GAME.validate(alt, seat, order)
        except IllegalOrder:
            continue  # j's own order used a card the swap took away
        alt_new, alt_events = GAME.resolve(alt, orders)
        if reveals(events) or reveals(alt_events):
            continue
        compared += 1
        for i in others:
            assert seen_by(alt_events, i) == seen_by(events, i), (
                f"seat {i!r} sees different events when seat {j}'s hidden fields change"
            )
            if new["over"]:
                continue
            gained = isinstance(i, int) and any(e["type"] == "card_gained" and e["seat"] == i for e in events)
            if not gained:  # a gain from a differently composed deck may differ (H-73)
                assert GAME.view(alt_new, i) == GAME.view(new, i), (
                    f"seat {i!r}'s next view depends on seat {j}'s hidden fields"
                )
    return compared


# -- the games -----------------------------------------------------------------------------------
def deal_cards(s: dict[str, Any], k: int, dice: Dice) -> None:
    """Move k random influence cards from the deck into each hand (a state the game can
    reach, made common: bots rarely gain cards)."""
    for player in s["players"]:
        for _ in range(k):
            kinds = sorted(kind for kind, left in s["deck"].items() if left)
            if kinds:
                kind = dice.pick(kinds)
                s["deck"][kind] -= 1
                player["hand"][kind] = player["hand"].get(kind, 0) + 1


class Checker:
    """The per-step callback: checks every invariant on each step of one game."""

    def __init__(self, start: dict[str, Any], seed: int, redact_every: int) -> None:
        self.prev = start
        self.dice = Dice(f"checker:{seed}")
        self.redact_every = redact_every
        self.steps = 0
        self.compared = 0
        self.kinds: set[str] = set()

    def __call__(self, new: dict[str, Any], orders: dict[int, Any], events: list[dict[str, Any]]) -> None:
        prev = self.prev
        text = json.dumps(new)
        assert json.loads(text) == new, "the state does not round-trip through JSON"
        assert new["step"] == prev["step"] + 1
        self.kinds.add(prev["pending"]["kind"])
        check_money(prev, new, events)
        check_state(new)
        check_views(new)
        if self.redact_every and self.dice.below(self.redact_every) == 0:
            self.compared += check_redaction(prev, orders, new, events, self.dice)
        self.prev = new
        self.steps += 1


def play(seed: int, seats: int, options: dict[str, Any], redact_every: int = 0) -> tuple[Any, Checker]:
    """One bot game through `play_game`, checked at every step."""
    start = GAME.setup(seats, options, seed)
    check_initial(start)
    check_views(start)
    check = Checker(start, seed, redact_every)
    playout = play_game(GAME, seats, make_bots(seed, seats, options), seed, options, on_step=check)
    assert check.steps == len(playout.steps)
    return playout, check


def play_with_hands(seed: int, seats: int, options: dict[str, Any], redact_every: int) -> Checker:
    """A bot game whose seats start with a few influence cards each, checked at every step."""
    state = GAME.setup(seats, options, seed)
    deal_cards(state, 3, Dice(f"deal:{seed}"))
    check_state(state)
    check = Checker(state, seed, redact_every)
    bots = make_bots(seed, seats, options)
    for _ in range(5000):
        requests = GAME.requests(state)
        if not requests:
            break
        orders = {r.seat: bots[r.seat].order(GAME, state, r) for r in requests}
        state, events = GAME.resolve(state, orders)
        check(state, orders, events)
    assert GAME.result(state) is not None
    return check


seeds = st.integers(0, 2**32)
seat_counts = st.sampled_from([2, 3, 4])
variants = st.sampled_from(VARIANTS)


@settings(max_examples=220, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, seats=seat_counts, variant=variants)
def test_every_step_of_a_random_game_keeps_the_invariants(seed: int, seats: int, variant: dict[str, Any]) -> None:
    playout, check = play(seed, seats, variant, redact_every=8)
    final = playout.state
    assert final["over"] and GAME.requests(final) == []
    ranking = GAME.result(final)
    assert ranking is not None and sorted(r["seat"] for r in ranking) == list(range(seats))
    assert [r["money"] for r in sorted(ranking, key=lambda r: r["seat"])] == [p["money"] for p in final["players"]]
    # replay determinism
    rebuilt = replay(GAME, seats, seed, variant, playout.steps)
    assert dumps(rebuilt) == dumps(final)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, seats=seat_counts, variant=variants)
def test_hidden_fields_of_one_seat_never_reach_another(seed: int, seats: int, variant: dict[str, Any]) -> None:
    check = play_with_hands(seed, seats, variant, redact_every=1)
    assert check.compared > 0
