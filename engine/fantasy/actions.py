"""What a seat may do unprompted, whether or not it is asked (FD12, V4): `act` and its
prompt in words (`action_prompt`).

* **Instants (FD12).** Subsidies and Divination Spell are accepted at any moment while
  the game runs and take effect at once; each play is announced publicly, a Divination's
  result only to its caster (its look stays open in the caster's view until the open
  step resolves).
* **Transfers (V4, trading variant).** Outside the frozen span (from the opening of the
  price sheets to the end of income) a seat may propose a transfer to one other seat
  (item cards, special cards and crowns each way) and withdraw it; the recipient may
  accept or reject it at once. On acceptance both sides must still own what they offer,
  neither may be left with fewer crowns than a high bid it holds (R27, net), and no
  special in the transfer may be part of an order already submitted in the open window
  (`submitted`); a failed check is refused (privately, by the service) and changes
  nothing. A proposal made as an action does not stop play: it waits for its
  recipient's answer (an action) until it is withdrawn, lapses (it can no longer be
  carried out) or the offer phase ends. A proposal riding on an order (kept for programs)
  asks its recipient before play goes on (D-ACCEPT, `trading.ACCEPT`); once asked, it is
  answered there and can no longer be withdrawn.

An action never changes who is asked in the open step, or for what: `pending` and the
auction are left alone. Everything here is off the engine's fast paths (`requests`,
`resolve`).

Actions are JSON objects with a verb under "do":
``{"do": "play", "card": "SU1"}``, ``{"do": "play", "card": "DS1", "target": 2}``,
``{"do": "propose", "to": 2, "give": {...}, "get": {...}}`` (the sides as in an order's
"propose"), ``{"do": "withdraw"}``, ``{"do": "accept", "from": 1, "specials": [...]}``,
``{"do": "reject", "from": 1}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core.events import Event, event
from engine.fantasy import trading
from engine.fantasy.components import kind_of
from engine.fantasy.specials import KINDS
from engine.fantasy.specials.windows import apply_instants
from engine.fantasy.state import S, copy_state, fail, high_bid_held, need, seat_entry, seat_no, whole

#: The verbs of an action, with the keys each takes.
KEYS: dict[str, frozenset[str]] = {
    "play": frozenset({"do", "card", "target"}),
    "propose": frozenset({"do", "to", "give", "get"}),
    "withdraw": frozenset({"do"}),
    "accept": frozenset({"do", "from", "specials"}),
    "reject": frozenset({"do", "from"}),
}

_SIDE = {"type": "object", "properties": {
    "items": {"type": "array", "items": {"type": "string"}},
    "crowns": {"type": "integer", "minimum": 0},
    "specials": {"description": "give: a list of your special cards; get: how many of theirs (they choose)"}},
    "additionalProperties": False}
SCHEMA: dict[str, Any] = {
    "title": "Fantasy Business action (FD12 instants; V4 transfers)",
    "oneOf": [
        {"type": "object", "required": ["do", "card"], "additionalProperties": False,
         "properties": {"do": {"const": "play"}, "card": {"type": "string"},
                        "target": {"type": "integer", "description": "Divination Spell: the opponent's seat"}}},
        {"type": "object", "required": ["do", "to"], "additionalProperties": False,
         "properties": {"do": {"const": "propose"}, "to": {"type": "integer"}, "give": _SIDE, "get": _SIDE}},
        {"type": "object", "required": ["do"], "additionalProperties": False,
         "properties": {"do": {"const": "withdraw"}}},
        {"type": "object", "required": ["do", "from"], "additionalProperties": False,
         "properties": {"do": {"const": "accept"}, "from": {"type": "integer"},
                        "specials": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "required": ["do", "from"], "additionalProperties": False,
         "properties": {"do": {"const": "reject"}, "from": {"type": "integer"}}},
    ],
}


def asked_proposal(s: S) -> dict[str, Any] | None:
    """The proposal its recipient is asked about in the open step (D-ACCEPT), if any."""
    pending = s["pending"]
    if pending is not None and pending["kind"] == "accept" and s["proposals"]:
        return s["proposals"][0]  # type: ignore[no-any-return]
    return None


def committed(submitted: Mapping[Any, Any] | None, seat: int) -> set[str]:
    """The special cards `seat`'s order stored for the open step names: its window plays,
    its instants and the specials its proposal gives."""
    if not submitted:
        return set()
    order = submitted.get(seat, submitted.get(str(seat)))
    if not isinstance(order, Mapping):
        return set()
    out: set[str] = set()
    for key in ("play", "instants"):
        plays = order.get(key)
        if isinstance(plays, list):
            out.update(p["card"] for p in plays if isinstance(p, Mapping) and isinstance(p.get("card"), str))
    prop = order.get("propose")
    if isinstance(prop, Mapping) and isinstance(prop.get("give"), Mapping):
        sp = prop["give"].get("specials")
        if isinstance(sp, list):
            out.update(c for c in sp if isinstance(c, str))
    return out


def act(s0: S, seat: int, action: Any, submitted: Mapping[Any, Any] | None) -> tuple[S, list[Event]]:
    if s0["over"]:
        fail("game_over", "the game has ended: no cards are played and nothing changes hands now (R24)")
    if not seat_no(seat, s0):
        fail("not_your_turn", "no such seat")
    if not isinstance(action, Mapping):
        fail("malformed_order", "an action is an object with what to do")
    do = action.get("do")
    if do not in KEYS:
        fail("no_action", "an action plays Subsidies or Divination Spell, or proposes, withdraws, accepts or "
             "rejects a transfer")
    extra = set(action) - KEYS[do]
    if extra:
        fail("malformed_order", f"unknown field(s) {', '.join(sorted(map(str, extra)))} for this action")
    s = copy_state(s0)
    ev: list[Event] = []
    asked = asked_proposal(s0)
    if do == "play":
        _play(s, seat, action, submitted, ev)
    elif do == "propose":
        prop = {k: action[k] for k in ("to", "give", "get") if k in action}
        p = s["players"][seat]
        trading.check_offer(s, seat, prop, {"crowns": p["crowns"], "hand": tuple(p["hand"])})
        trading.add_proposal(s, seat, prop, ev, ask=False)
    elif do == "withdraw":
        mine = [p for p in s["proposals"] if p["from"] == seat]
        need(bool(mine), "no_proposal", "you have no open proposal to withdraw")
        need(mine[0] is not asked, "proposal_asked", "its recipient is deciding on your proposal now: it can no "
             "longer be withdrawn (V4)")
        s["proposals"] = [p for p in s["proposals"] if p is not mine[0]]
        seat_entry(s, seat)["offered"] = []
        ev.append(event("proposal_withdrawn", seat=seat, to=mine[0]["to"]))
    else:
        giver = action.get("from")
        theirs = [p for p in s["proposals"] if p["from"] == giver and p["to"] == seat]
        need(bool(theirs), "no_proposal", "there is no open proposal from that player to you")
        prop = theirs[0]
        giver = int(prop["from"])
        need(prop is not asked, "proposal_asked", "this proposal is your open decision now: answer it there")
        s["proposals"] = [p for p in s["proposals"] if p is not prop]
        specials = list(s["players"][giver]["offered"])
        seat_entry(s, giver)["offered"] = []
        if do == "reject":
            ev.append(event("proposal_rejected", seat=seat, by=giver))
        else:
            mine_sp = _acceptance(s, seat, prop, specials, action.get("specials", []), submitted)
            trading.carry_out(s, prop, specials, mine_sp, ev)
    trading.lapse_undeliverable(s, ev, keep=asked)
    step = s["step"]
    for e in ev:
        e["step"] = step
    return s, ev


def _play(s: S, seat: int, action: Mapping[str, Any], submitted: Mapping[Any, Any] | None,
          ev: list[Event]) -> None:
    """FD12: an instant, at once."""
    card = action.get("card")
    hand = s["players"][seat]["hand"]
    if not (isinstance(card, str) and card in hand and KINDS[kind_of(card)].window == "instant"):
        fail("no_such_card", "you hold no such card to play now: only Subsidies and Divination Spell are played "
             "at any time (FD12)")
    need(card not in committed(submitted, seat), "special_committed",
         "that card is already part of the order you submitted for this step")
    play = {k: v for k, v in action.items() if k != "do"}
    if not play.keys() <= KINDS[kind_of(card)].keys:
        fail("malformed_order", "Subsidies takes no target")
    KINDS[kind_of(card)].check(s, seat, play)
    apply_instants(s, seat, [play], ev)
    if kind_of(card) == "DS":  # the look opens now, in the open step, not at the next one
        looks = s["looks"]
        s["looks"] = [*looks[:-1], {**looks[-1], "step": s["step"]}]


def _acceptance(s: S, seat: int, prop: dict[str, Any], specials: list[str], mine_sp: Any,
                submitted: Mapping[Any, Any] | None) -> list[str]:
    """V4's checks on acceptance; the recipient's specials given (checked)."""
    giver = prop["from"]
    give, get = prop["give"], prop["get"]
    me, them = s["players"][seat], s["players"][giver]
    n = get["specials"]
    need(isinstance(mine_sp, list) and all(isinstance(c, str) for c in mine_sp) and len(set(mine_sp)) == len(mine_sp)
         == n, "bad_transfer", f"the proposal asks for {n} of your special cards: name exactly that many")
    need(all(c in me["hand"] for c in mine_sp), "offer_gone", "you do not hold every special card you name")
    need(all(c in me["items"] for c in get["items"]), "offer_gone", "you no longer own every item asked of you")
    need(all(c in them["items"] for c in give["items"]) and all(c in them["hand"] for c in specials),
         "offer_gone", "the proposer no longer owns everything the proposal offers")
    need(whole(get["crowns"]) and me["crowns"] - get["crowns"] + give["crowns"] >= high_bid_held(s, seat),
         "not_enough_crowns", f"paying {get['crowns']} crowns would leave you fewer crowns than a high bid you "
         "hold, or than you have (R27)")
    need(them["crowns"] - give["crowns"] + get["crowns"] >= high_bid_held(s, giver), "not_enough_crowns",
         "the proposer can no longer pay the crowns it offers and keep a high bid it holds (R27)")
    need(not (set(mine_sp) & committed(submitted, seat)), "special_committed",
         "a special card you name is part of the order you submitted in the open window")
    need(not (set(specials) & committed(submitted, giver)), "special_committed",
         "a special card the proposer offers is part of an order it submitted in the open window")
    return list(mine_sp)
