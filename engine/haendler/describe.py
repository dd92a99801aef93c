"""Plain-English sentences for Die Händler's events (first cut)."""
# ruff: noqa: E501  (one readable line per event type)

from __future__ import annotations

from typing import Any


_NAMES: list[Any] = []


def _seat(p: Any) -> str:
    if isinstance(p, int) and 0 <= p < len(_NAMES):
        return str(_NAMES[p])
    return f"seat {p}"


def _goods(goods: list[Any]) -> str:
    return ", ".join(g if isinstance(g, str) else f"{g['good']}→{g['city']}" for g in goods) or "nothing"


def describe_event(e: dict[str, Any], names: Any = ()) -> str:
    _NAMES[:] = list(names)
    t = e["type"]
    s = _seat(e.get("seat"))
    lines: dict[str, Any] = {
        "round_started": lambda: f"\n== Round {e['round']} (start player: {_seat(e['start'])})",
        "abilities_dealt": lambda: f"{s} is dealt {' + '.join(e['cards'])} and pays {e['paid']}",
        "ability_named": lambda: f"{s} names {e['card']} at {e['bid']}",
        "ability_bid": lambda: f"{s} bids {e['bid']} for {e['card']}",
        "ability_pass": lambda: f"{s} passes on {e['card']}",
        "ability_bought": lambda: f"{s} takes {e['card']} for {e['paid']}",
        "abilities_removed": lambda: f"removed from the game: {', '.join(e['cards'])}",
        "bought": lambda: f"{s} buys {_goods(e['goods'])} for {e['paid']}",
        "cart_auction": lambda: f"cart {e['cart']} auction, bids {e['bids']}: {_seat(e['master'])} is master for {e['paid']}",
        "cart_master": lambda: f"{s} (master of cart {e['cart']}) loads {_goods(e['loaded'])}; tariffs {e['tariffs']}",
        "cart_loaded": lambda: f"cart {e['cart']} loading: " + ("; ".join(
            f"{_seat(x['seat'])} loads {_goods(x['goods'])} ({'card' if x['card'] else x['paid']})" for x in e["loads"]) or "nobody loads"),
        "achsbruch_played": lambda: "Achsbruch: " + ("; ".join(
            f"{_seat(x['seat'])} on cart(s) {x['carts']}" for x in e["plays"] if x["carts"]) or "none played"),
        "moved": lambda: f"{s} moves: " + "; ".join(_step(x) for x in e["steps"]) + (f" (lifted Achsbruch on {e['lifted']})" if e["lifted"] else ""),
        "card_gained": lambda: f"{s} gains an influence card ({e['deck_size']} left in the deck)",
        "card_gain_missed": lambda: f"{s} would gain a card but the deck is empty",
        "tiles_reset": lambda: f"{s} turns all movement tiles face up",
        "price_votes": lambda: f"price wheel: arrows {e['arrows']}; rows now {e['prices']}",
        "price_adjusted": lambda: f"{s} adjusts prices {e['moves']}; rows now {e['prices']}",
        "warehouse_sales": lambda: f"warehouse sales: Lagerverkauf {e['lagerverkauf']}, Sonder-Verkauf {e['sonder_verkauf']}",
        "arrival_track": lambda: f"carts {e['arrived']} arrived; arrival track at {e['position']}",
        "bonus_cards_played": lambda: f"Verkauf mit Bonus played: {e['plays']}",
        "cart_sold": lambda: f"cart {e['cart']} sold in {e['city']} (bonus {e['bonus']}): " + ("; ".join(
            f"{_seat(x['seat'])} {_goods(x['goods'])} for {x['received']}" for x in e["sales"]) or "empty"),
        "bonus_markers": lambda: f"bonus markers {e['bonus']}",
        "last_round": lambda: f"the arrival track reached {e['arrivals']}: this is the last round",
        "upkeep": lambda: f"{s} pays upkeep {e['paid']}",
        "upkeep_shortfall": lambda: f"{s} had only {e['money']}, drops to level {e['level']} and pays {e['paid']}",
        "credit": lambda: f"{s} {'takes' if e['taken'] else 'declines'} a credit",
        "credit_repaid": lambda: f"{s} repays {e['count']} credit(s)",
        "advance": lambda: f"{s} advances {e['levels']} level(s) to {e['level']}" + (f" for {e['paid']}" if e["levels"] else ""),
        "transfer": lambda: f"{s} gives {_seat(e['to'])} {e['money']} and {e['cards']} card(s)",
        "game_over": lambda: "\n== Game over. Money: " + str(e["money"]),
    }  # fmt: skip
    return str(lines[t]()) if t in lines else f"{t}: {e}"


def _step(x: dict[str, Any]) -> str:
    if "messenger" in x:
        return f"messenger ({x['messenger']}) {x['from']}→{x['to']}" + (" +card" if x["card"] else "")
    if x.get("forfeit"):
        return f"tile {x['tile']} forfeited"
    how = f"tile {x['tile']}" if "tile" in x else "Wagnerei"
    pts = f"+{x['points']}" if x.get("points") and "tile" in x else (f" {x['points']}" if "tile" not in x else "")
    return f"{how}{pts} cart {x['cart']} {x['from']}→{x['to']}" + (" +card" if x["card"] else "")
