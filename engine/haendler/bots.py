"""Die Händler bots: `RandomBot` (a random legal order) and `GreedyBot` (a simple plan).

Both see only their seat's request choices and view, and keep an order only when
`validate` accepts it (`first_legal`), falling back to the default order.

GreedyBot: buys cheap goods in cities where it can load them and that sell with a bonus
elsewhere; bids for carts standing where it has goods; as master loads its most
plentiful type and sets a fair tariff; votes its own goods up; moves the cart carrying
most of its goods towards a city; plays its cards when they pay; buys status when it can.
"""

from __future__ import annotations

from typing import Any

from engine.core.bots import Dice, first_legal
from engine.core.game import Game, Order, Request, State
from engine.haendler.components import components


class RandomBot:
    """Uniformly-ish random legal orders, drawn from the request's choices."""

    needs_view = False

    def __init__(self, seed: int | str) -> None:
        self.dice = Dice(seed)

    def order(self, game: Game, state: State, request: Request) -> Order:
        make = getattr(self, f"_{request.kind}")
        me = game.view(state, request.seat) if self.needs_view else {}
        candidates = (make(request.choices, me, request.seat) for _ in range(3))
        return first_legal(game, state, request.seat, candidates)

    # one proposal per order kind ---------------------------------------------------------
    def _name_card(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        return {"card": self.dice.pick(sorted(ch["cards"]))}

    def _card_bid(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        if self.dice.chance(0.5) or ch["min"] > ch["max"]:
            return {"pass": True}
        return {"bid": ch["min"] + ch["step"] * self.dice.below(3)}

    def _buy(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        stock, money, flat = dict(ch["stock"]), ch["money"], ch["whole_step_price"]
        picks: list[str] = []
        for _ in range(self.dice.below(ch["max"] + 1)):
            goods = [g for g, k in stock.items() if k and (flat is not None or ch["prices"][g] <= money)]
            if not goods or (flat is not None and flat > money):
                break
            good = self.dice.pick(goods)
            stock[good] -= 1
            money -= 0 if flat is not None else ch["prices"][good]
            picks.append(good)
        return {"goods": [{"good": g, "city": self.dice.pick(ch["cities"][g])} for g in picks]}

    def _cart_bid(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        return {"bid": ch["step"] * self.dice.below(min(ch["max"], 1000) // ch["step"] + 1)}

    def _master(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        order: Order = {"load": 0}
        if ch["goods"]:
            good = self.dice.pick(sorted(ch["goods"]))
            order = {"load": 1 + self.dice.below(max(1, ch["goods"][good])), "good": good}
        if ch["fixed_tariff"] is None:
            menu = [None, [100, 200], [200, 300], [300, 500]]
            order["tariffs"] = {str(p): self.dice.pick(menu) for p in ch["tariff_for"]}
        return order

    def _load(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        pool = [g for g, k in ch["goods"].items() for _ in range(k)]
        n = min(len(pool), ch["room"], self.dice.below(3))
        card = ch["can_play_card"] and (ch["tariff"] is None or self.dice.chance(0.3))
        if not card:
            tariff = ch["tariff"] or [0, 0]
            n = 0 if ch["tariff"] is None else max([0] + [k for k in range(1, n + 1) if tariff[k - 1] <= ch["money"]])
        goods = [pool.pop(self.dice.below(len(pool))) for _ in range(n)]
        return {"goods": goods, "card": card and bool(goods)}

    def _achsbruch(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        if ch["cards"] and self.dice.chance(0.4):
            return {"carts": [self.dice.pick(ch["carts"])]}
        return {"carts": []}

    def _move(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        steps: list[dict[str, Any]] = []
        for card, ends in ch["messenger_cards"].items():
            if ends and self.dice.chance(0.5):
                steps.append({"messenger": card, "to": self.dice.pick(ends)})
        tile = self.dice.pick(ch["tiles"])
        free = [c for c in ch["carts"] if not c["blocked"] and not c["arrived"]]
        movable = [c for c in free if c["ends"][str(tile)]]
        if not movable:
            steps.append({"tile": tile, "forfeit": True})
            return {"steps": steps, "lift": self._lifts(ch)}
        cart = self.dice.pick(movable)
        points = self.dice.below(ch["points"] + 1)
        if not cart["ends"][str(tile + points)]:
            points = 0
        steps.append({"tile": tile, "cart": cart["cart"], "points": points,
                      "to": self.dice.pick(cart["ends"][str(tile + points)])})  # fmt: skip
        left = ch["points"] - steps[-1]["points"]
        others = [c for c in free if c is not cart and c["ends"].get(str(left))]
        if left and others and self.dice.chance(0.5):
            other = self.dice.pick(others)
            steps.append({"cart": other["cart"], "points": left, "to": self.dice.pick(other["ends"][str(left)])})
        kinds = sorted(components().influence)
        return {"steps": steps, "lift": self._lifts(ch), "prefer": [self.dice.pick(kinds)]}

    def _lifts(self, ch: dict[str, Any]) -> list[int]:
        return [c for c in ch["my_blocks"] if self.dice.chance(0.5)]

    def _wheel(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        options = [None, *ch["goods"]]
        return {"arrows": [self.dice.pick(options), self.dice.pick(options)]}

    def _kontor(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        moves = []
        for card in ch["cards"]:
            if self.dice.chance(0.6):
                good = self.dice.pick(sorted(ch["rows"]))
                moves.append({"card": card, "good": good, "dir": self.dice.pick(["up", "down"])})
        return {"moves": moves}

    def _sales(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        order: Order = {}
        stores = ch["warehouses"]
        if ch["lagerverkauf"] and stores and self.dice.chance(0.3):
            city = self.dice.pick(sorted(stores))
            goods = [g for g, k in stores[city].items() for _ in range(k)][: ch["lagerverkauf_max"]]
            order["lager"] = {"city": city, "goods": goods[: 1 + self.dice.below(len(goods))]}
        if ch["sonder_verkauf_cards"] and stores and self.dice.chance(0.5):
            city = self.dice.pick(sorted(stores))
            order["sonder"] = [{"city": city, "good": self.dice.pick(sorted(stores[city]))}]
        return order

    def _bonus(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        return {"carts": ch["carts"][: ch["cards"]]}

    def _credit(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        return {"take": self.dice.chance(0.5)}

    def _advance(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        order: Order = {}
        money = ch["money"]
        if ch["credits"]:
            if money < ch["repay"] * ch["credits"] or self.dice.chance(0.5):
                return {"levels": 0}
            order["repay"] = ch["credits"]
            money -= ch["repay"] * ch["credits"]

        def cost(n: int) -> int:
            cards = min(n, ch["cards"])
            return int(cards * ch["card_price"] + (n - cards) * ch["level_price"])

        affordable = [n for n in range(ch["max_levels"] + 1) if cost(n) <= money]
        levels = self.dice.pick(affordable)
        return {**order, "levels": levels, "cards": min(levels, ch["cards"])}


class GreedyBot(RandomBot):
    """A simple plan on top of the random bot (see the module docstring)."""

    needs_view = True

    def _goods_on(self, cart: dict[str, Any], seat: int) -> int:
        return len(cart["rows"][seat])

    def _buy(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        carts = [c["at"] for c in me["carts"]]
        cities = [c for c in carts if c in {x for v in ch["cities"].values() for x in v}]
        budget = me["players"][seat]["money"] - 1500
        order: list[dict[str, str]] = []
        for good in sorted(ch["prices"], key=lambda g: ch["prices"][g]):
            where = [c for c in ch["cities"][good] if c in cities] or ch["cities"][good]
            price = ch["whole_step_price"] if ch["whole_step_price"] is not None else ch["prices"][good]
            if len(order) < ch["max"] and ch["stock"][good] > sum(1 for o in order if o["good"] == good):
                if budget >= price:
                    order.append({"good": good, "city": where[0]})
                    budget -= 0 if ch["whole_step_price"] is not None and len(order) > 1 else price
        return {"goods": order}

    def _cart_bid(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        mine = sum(me["stores"][seat].get(ch["city"], {}).values())
        bid = min(ch["max"] - 1000, 200 * mine)
        return {"bid": max(0, bid - bid % ch["step"])}

    def _master(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        order: Order = {"load": 0}
        if ch["goods"]:
            good = max(sorted(ch["goods"]), key=lambda g: ch["goods"][g])
            order = {"load": ch["goods"][good], "good": good}
        if ch["fixed_tariff"] is None:
            order["tariffs"] = {str(p): [200, 400] for p in ch["tariff_for"]}
        return order

    def _load(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        pool = [g for g, k in sorted(ch["goods"].items()) for _ in range(k)][: ch["room"]]
        if ch["tariff"] is None:
            return {"goods": pool if ch["can_play_card"] else [], "card": ch["can_play_card"] and bool(pool)}
        return {"goods": pool}

    def _move(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        tiles = sorted(ch["tiles"])
        free = [c for c in ch["carts"] if not c["blocked"] and not c["arrived"]]
        best: tuple[int, Order] | None = None
        for tile in tiles:
            for cart in free:
                if not cart["ends"][str(tile)]:
                    continue
                total = tile + ch["points"]
                ends = cart["ends"][str(total)] or cart["ends"][str(tile)]
                points = ch["points"] if cart["ends"][str(total)] else 0
                city = [e for e in ends if ">" not in e]
                to = city[0] if city else ends[0]
                load = self._goods_on(me["carts"][cart["cart"] - 1], seat)
                score = load * 10 + (5 if city else 0) - tile
                step = {"tile": tile, "cart": cart["cart"], "to": to, "points": points}
                if best is None or score > best[0]:
                    best = (score, {"steps": [step], "prefer": ["verkauf_mit_bonus", "sozialer_aufstieg"]})
        if best is None:
            return {"steps": [{"tile": tiles[0], "forfeit": True}]}
        return best[1]

    def _wheel(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        mine = [g for cart in me["carts"] for g in cart["rows"][seat]]
        mine += [g for store in me["stores"][seat].values() for g in store]
        top = max(ch["rows"].values())
        good = [g for g in sorted(set(mine)) if ch["rows"][g] < top]
        arrows = (good * 2)[:2] if good else [None, None]
        return {"arrows": arrows + [None] * (2 - len(arrows))}

    def _bonus(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        return {"carts": ch["carts"][: ch["cards"]]}

    def _credit(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        return {"take": True}

    def _advance(self, ch: dict[str, Any], me: dict[str, Any], seat: int) -> Order:
        order: Order = {}
        money = ch["money"]
        if ch["credits"] and money >= ch["repay"] * ch["credits"]:
            order["repay"] = ch["credits"]
            money -= ch["repay"] * ch["credits"]
        elif ch["credits"]:
            return {"levels": 0}
        for levels in range(ch["max_levels"], 0, -1):
            cards = min(levels, ch["cards"])
            if cards * ch["card_price"] + (levels - cards) * ch["level_price"] <= money - 600:
                return {**order, "levels": levels, "cards": cards}
        return {**order, "levels": 0}


BOTS = {"random": RandomBot, "greedy": GreedyBot}
