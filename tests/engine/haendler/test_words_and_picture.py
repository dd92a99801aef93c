"""Die Händler's words and pictures: event sentences, the text board, what a request
asks, the headline and the SVG picture (the `describe_*`, `summary`, `picture` and
`headline` hooks of the engine contract), plus the data they read: goods' display names
and drawing positions in the board file (rules §18), and the ranking's tiebreak (H-100).

Sentences and boards are checked over seeded bot games of every variant: no raw ids or
JSON, names used, nothing shown that the view does not show (H-13, H-14, H-16).
"""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import pytest

from engine.core.bots import play_game
from engine.core.errors import DataError
from engine.core.game import Request
from engine.haendler import context, describe, status
from engine.haendler.board import load_board, parse_board
from engine.haendler.picture import layout
from engine.haendler.summary import PHASES, board_of
from tests.engine.haendler.helpers import GAME, A, B, C, D, board_doc, new_game, open_at

NAMES = ["Alice", "Bob", "Carol", "Dave"]
CODES = re.compile(r"\b(BRU|PAR|KOE|AUG|LYO|GEN|REI|BAS|CHU|STR)\b")
RAW_GOODS = re.compile(r"\b(tuch|wein|salz|nahrung|eisen|seide)\b")
JSONISH = re.compile(r"[{}\[\]'\"_]|\bNone\b|\bTrue\b|\bFalse\b|\bnull\b")
CITY_NAMES = ("Brügge", "Paris", "Köln", "Augsburg", "Lyon", "Genua")
GOOD_NAMES = {"tuch": "Tuch", "wein": "Wein", "salz": "Salz", "nahrung": "Nahrung", "eisen": "Eisen",
              "seide": "Seide"}  # fmt: skip
VARIANTS: list[dict[str, Any]] = [
    {},
    {"abilities": "auction"},
    {"light": True},
    {"negotiation": True},
    {"start_cities": ["BRU", "LYO", "AUG"], "messenger_start": "KOE>AUG:2"},
]
SVG = "{http://www.w3.org/2000/svg}"


class Played:
    """One seeded bot game: its events and a sample of its states."""

    def __init__(self, seats: int, options: dict[str, Any], seed: str) -> None:
        bots_of = GAME.bots()
        kinds = sorted(bots_of)
        bots = {i: bots_of[kinds[i % len(kinds)]](f"{seed}/{i}") for i in range(seats)}
        self.states: list[dict[str, Any]] = []
        self.seats, self.names = seats, NAMES[:seats]
        out = play_game(GAME, seats, bots, seed, options, on_step=lambda s, o, e: self.states.append(s))
        self.events, self.final = out.events, out.state
        self.first = GAME.setup(seats, options, seed)


@pytest.fixture(scope="module")
def games() -> list[Played]:
    return [Played(2 + (n + k) % 3, opts, f"words-{n}-{k}") for n, opts in enumerate(VARIANTS) for k in range(3)]


def clean(text: str) -> None:
    """No raw city codes, good ids, card ids or JSON in words meant for people."""
    assert not CODES.search(text), text
    assert not RAW_GOODS.search(text), text
    assert not JSONISH.search(text), text


# -- event sentences ---------------------------------------------------------------------------------
EXTRA_EVENTS: list[dict[str, Any]] = [  # event types bot games do not reach (setup, negotiation, empty deck)
    {"type": "abilities_dealt", "visible_to": "all", "seat": 1, "cards": ["kurier", "grosse_wagnerei"], "paid": 1000},
    {"type": "card_gain_missed", "visible_to": "all", "seat": 0, "reason": "deck empty"},
    {"type": "transfer", "visible_to": "all", "seat": 0, "to": 1, "money": 1500, "cards": 2},
    {"type": "transfer_cards", "visible_to": [0, 1], "seat": 0, "to": 1,
     "cards": {"achsbruch": 1, "sonder_verkauf": 1}},
]  # fmt: skip


def test_every_event_type_gets_a_clean_sentence_with_names(games: list[Played]) -> None:
    seen: dict[str, int] = {}
    for g in games:
        for e in [*g.events, *EXTRA_EVENTS]:
            text = GAME.describe_event(e, g.names)
            seen[e["type"]] = seen.get(e["type"], 0) + 1
            clean(text)
            assert text.endswith((".", "?")) and "\n" not in text and "seat " not in text, text
            if isinstance(e.get("seat"), int):
                assert g.names[e["seat"]] in text, text
            if isinstance(e.get("to"), int):
                assert g.names[e["to"]] in text, text
            assert not text.startswith("Game event:"), text  # every known type has its own sentence
    assert set(describe._SAY) <= set(seen), sorted(set(describe._SAY) - set(seen))


def test_sentences_say_what_the_event_carries() -> None:
    say = GAME.describe_event
    assert say({"type": "bought", "visible_to": "all", "seat": 1, "paid": 200,
                "goods": [{"good": "salz", "city": "BRU"}, {"good": "salz", "city": "BRU"}]},
               NAMES) == "Bob bought 2 Salz in Brügge for 200."  # fmt: skip
    auction = say({"type": "cart_auction", "visible_to": "all", "cart": 2, "bids": {"0": 1200, "1": 300},
                   "master": 0, "paid": 1200}, NAMES)  # fmt: skip
    assert "Alice 1,200" in auction and "Bob 300" in auction and "cart 2" in auction
    move = say({"type": "moved", "visible_to": "all", "seat": 2, "lifted": [], "gains": 1, "steps": [
        {"tile": 3, "points": 1, "cart": 2, "from": "KOE", "to": "KOE>BRU:4", "card": True}]}, NAMES)
    assert "space 4 of 4 on the road Köln→Brügge" in move and "Carol" in move and "1 influence card" in move
    # A gained card is named only in the gainer's own event, never in the public one (H-14).
    mine = say({"type": "card_gained", "visible_to": [3], "seat": 3, "kind": "sozialer_aufstieg",
                "deck": {"sozialer_aufstieg": 3}}, NAMES)  # fmt: skip
    public = say({"type": "card_gained", "visible_to": "all", "seat": 3, "deck_size": 14}, NAMES)
    assert "Sozialer Aufstieg" in mine and "Dave" in mine
    assert "Dave" in public and "14" in public
    assert not any(name in public for name in ("Achsbruch", "Sozialer", "Verkauf", "Zuladung"))
    # Kinds of transferred cards only in the event the two seats see (H-106).
    assert "Achsbruch" in say(EXTRA_EVENTS[3], NAMES) and "Achsbruch" not in say(EXTRA_EVENTS[2], NAMES)


def test_unknown_or_malformed_events_get_a_generic_sentence() -> None:
    assert GAME.describe_event({"type": "comet_strike", "visible_to": "all", "seat": 1}, NAMES) == \
        "Game event: comet strike (Bob)."  # fmt: skip
    assert GAME.describe_event({"type": "bought", "visible_to": "all"}, NAMES).startswith("Game event")
    assert GAME.describe_event({"type": "upkeep", "visible_to": "all", "seat": 9, "paid": 100, "level": 2},
                               NAMES) == "seat 9 paid 100 upkeep for status level 2."  # fmt: skip


# -- the ranking's tiebreak (H-100) and the game_over sentence ------------------------------------------
def test_h_100_ranking_rows_say_which_tiebreak_set_them_apart() -> None:
    s = new_game(4)
    for p, (level, cash, credits) in enumerate([(8, 300, 1), (6, 2500, 0), (6, 2500, 0), (5, 4000, 0)]):
        s["players"][p].update(level=level, money=cash, credits=credits)
    rows = status.ranking(s)
    assert [(r["seat"], r["place"], r["tiebreak"]) for r in rows] == [
        (B, 1, None), (C, 1, "shared"), (D, 3, "level"), (A, 4, "credits")]  # fmt: skip
    s["players"][C]["money"] = 2400
    assert [r["tiebreak"] for r in status.ranking(s)] == [None, "money", "level", "credits"]
    text = GAME.describe_event({"type": "game_over", "visible_to": "all", "ranking": status.ranking(s)}, NAMES)
    assert text.index("Bob") < text.index("Carol") < text.index("Dave") < text.index("Alice")
    assert "same level as Bob, less money" in text and "lower status level than Carol" in text
    assert "holds a credit; ranks below everyone without a credit" in text
    # Rows from before the tiebreak field existed are explained the same way.
    old = [{k: v for k, v in r.items() if k != "tiebreak"} for r in status.ranking(s)]
    assert GAME.describe_event({"type": "game_over", "visible_to": "all", "ranking": old}, NAMES) == text


# -- the text board ------------------------------------------------------------------------------------
def _mid(g: Played) -> list[dict[str, Any]]:
    return [g.first, *g.states[:: max(1, len(g.states) // 6)], g.final]


def test_summary_shows_every_cart_good_price_and_player(games: list[Played]) -> None:
    board = load_board("reconstructed-default")
    for g in games:
        for s in _mid(g):
            for seat in range(g.seats):
                text = GAME.summary(GAME.view(s, seat), g.names)
                clean(text)
                lines = text.split("\n")
                assert len(lines) <= 60 and max(map(len, lines)) <= 100, text
                assert all(f"Cart {n}:" in text for n in range(1, len(s["carts"]) + 1))
                for good, shown in GOOD_NAMES.items():
                    buy, sell = board.price_rows[s["prices"][good] - 1]
                    assert re.search(rf"{shown} +{buy:,} / {sell:,} +row {s['prices'][good]}\b", text), text
                assert all(name in text for name in g.names)
                assert "Messenger:" in text and "Bonus markers:" in text and "Arrival track:" in text
                others_hidden = text.count("money hidden")
                assert others_hidden == (0 if s["over"] else g.seats - 1), text
                if not s["over"]:
                    assert f"money {s['players'][seat]['money']:,}" in text


def test_summary_names_phases_decisions_and_roads(games: list[Played]) -> None:
    text = GAME.summary(GAME.view(games[0].states[0], 0), games[0].names)
    assert "Brügge → Reims: 2 spaces" in text and "Lyon → Genua: 6 spaces" in text
    assert "level 1 Krämer" in text and "Waiting for " in text
    assert text.startswith("Die Händler — round 1, phase 1: buying goods")
    over = GAME.summary(GAME.view(games[0].final, "public"), games[0].names)
    assert "game over" in over and "Final ranking:" in over and "1st" in over and "hidden" not in over


def _hide_test(s: dict[str, Any], seat: int, show: Callable[[dict[str, Any]], Any]) -> None:
    """Another seat's money and hand kinds changed: `show(view of seat)` must not change."""
    changed = copy.deepcopy(s)
    for p, pl in enumerate(changed["players"]):
        if p != seat:
            pl["money"] += 1300
            total = sum(pl["hand"].values())
            pl["hand"] = {"achsbruch": total} if total else {}
    assert show(GAME.view(s, seat)) == show(GAME.view(changed, seat))


def test_summary_and_picture_show_no_other_seats_money_or_hand(games: list[Played]) -> None:
    for g in games[::2]:
        for s in [x for x in _mid(g) if not x["over"]]:
            for seat in range(g.seats):
                _hide_test(s, seat, lambda v, names=g.names: GAME.summary(v, names))
                _hide_test(s, seat, lambda v, names=g.names: GAME.picture(v, names))


# -- what a request asks, and the headline --------------------------------------------------------------
HEADLINE = re.compile(r"^(game over|round \d+, (setup: ability card auction|phase [1-6]: (" +
                      "|".join(map(re.escape, list(PHASES.values())[1:])) + ")))$")  # fmt: skip


def test_every_decision_kind_is_asked_in_words(games: list[Played]) -> None:
    asked: dict[str, str] = {}
    for g in games:
        for s in [g.first, *g.states]:
            assert HEADLINE.match(GAME.headline(GAME.view(s, "public"))), GAME.headline(GAME.view(s, "public"))
            for r in GAME.requests(s):
                text = GAME.describe_request(r, GAME.view(s, r.seat), g.names)
                clean(text)
                assert "(round " in text and "\n" not in text, text
                asked.setdefault(r.kind, text)
    assert sorted(asked) == sorted(["name_card", "card_bid", "buy", "cart_bid", "master", "load", "achsbruch",
                                    "move", "wheel", "kontor", "sales", "bonus", "credit", "advance"])  # fmt: skip
    assert all("You have " in text for text in asked.values())  # the seat's own money, from its view


@pytest.mark.parametrize(("kind", "extra", "phase", "words"), [
    ("buy", {}, "phase 1: buying goods", "Buy up to 3 goods"),
    ("cart_bid", {"cart": 2}, "phase 2: cart auctions and loading", "cart 2 in Köln"),
    ("master", {"cart": 1}, "phase 2: cart auctions and loading", "loading master of cart 1 in Paris"),
    ("wheel", {}, "phase 4: price changes and warehouse sales", "price wheel"),
    ("sales", {}, "phase 4: price changes and warehouse sales", "Sonder-Verkauf"),
    ("credit", {}, "phase 6: upkeep and status", "credits left, 2,000 now and 2,500 to repay"),
    ("advance", {}, "phase 6: upkeep and status", "status levels at 1,000 each"),
])  # fmt: skip
def test_forced_decisions_are_asked_with_their_phase(kind: str, extra: dict[str, Any], phase: str,
                                                     words: str) -> None:  # fmt: skip
    s = new_game(4)
    s["players"][B]["hand"] = {"sonder_verkauf": 1}
    s["carts"][0]["master"] = B
    open_at(s, kind, [B], **extra)
    view = GAME.view(s, B)
    assert GAME.headline(view) == f"round 1, {phase}"
    (request,) = GAME.requests(s)
    text = GAME.describe_request(request, view, NAMES)
    clean(text)
    assert words in text and f"(round 1, {phase}" in text and "You have 4,000." in text, text
    assert "Waiting for Bob (you): " in GAME.summary(view, NAMES)
    assert "Waiting for Bob: " in GAME.summary(GAME.view(s, A), NAMES)


def test_headline_of_the_setup_auction_and_the_end() -> None:
    s = new_game(3, abilities="auction")
    assert GAME.headline(GAME.view(s, "public")) == "round 1, setup: ability card auction"
    s["over"], s["pending"] = True, None
    assert GAME.headline(GAME.view(s, "public")) == "game over"
    unknown = Request(0, "mystery", 0, False, {})
    assert "Mystery" in GAME.describe_request(unknown, GAME.view(new_game(3), 0), NAMES)


# -- the picture --------------------------------------------------------------------------------------
def _svg_ok(svg: str, names: list[str]) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert root.find(f"{SVG}title") is not None and root.find(f"{SVG}desc") is not None
    assert len(svg.encode()) < 100_000
    texts = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert all(city in texts for city in CITY_NAMES), texts
    assert all(name in texts for name in names), texts
    assert not CODES.search(texts), texts
    return root


def test_picture_is_valid_accessible_small_and_deterministic(games: list[Played]) -> None:
    for g in games[::2]:
        for s in _mid(g)[::2]:
            for viewer in [*range(g.seats), "public"]:
                view = GAME.view(s, viewer)
                svg = GAME.picture(view, g.names)
                root = _svg_ok(svg, g.names)
                assert GAME.picture(json.loads(json.dumps(view)), g.names) == svg
                titled = [el for el in root.iter() if el.find(f"{SVG}title") is not None]
                assert len(titled) > 20  # hover text on cities, roads, spaces, carts, the messenger


def test_picture_draws_carts_messenger_tracks_and_legend(games: list[Played]) -> None:
    s = games[0].states[len(games[0].states) // 2]
    view = GAME.view(s, 0)
    root = _svg_ok(GAME.picture(view, games[0].names), games[0].names)
    tips = ["".join(t.itertext()) for t in root.iter(f"{SVG}title")]
    for n in range(1, len(s["carts"]) + 1):
        assert any(t.startswith(f"Cart {n} at ") for t in tips), tips
    assert any(t.startswith("Messenger: road ") for t in tips)
    ids = {el.get("id") for el in root.iter()}
    assert {"roads", "places", "carts", "messenger", "prices", "arrivals", "status", "players"} <= ids
    texts = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert "Krämer" in texts and "Ratsherr" in texts and "hidden" in texts and "Reims" in texts


def test_picture_escapes_names_and_lays_out_a_board_without_positions() -> None:
    doc = board_doc()
    doc["id"] = "no-positions"
    for node in [*doc["cities"], *doc["junctions"]]:
        node.pop("x", None)
        node.pop("y", None)
    s = new_game(3, board=doc)
    names = ["<Ann & Co>", 'Bo "B"', "Cy"]
    context._CTX.pop(s["board_key"], None)  # as in another process: the view alone finds the board
    svg = GAME.picture(GAME.view(s, 0), names)
    _svg_ok(svg, names)
    assert "&lt;Ann &amp; Co&gt;" in svg
    pos = layout(load_board(doc))
    assert len({(round(x), round(y)) for x, y in pos.values()}) == len(pos)  # no two places on one spot
    assert "Augsburg" in GAME.summary(GAME.view(s, 1), names)


# -- the data: goods' names and positions in the board file (rules §18) ---------------------------------
def test_board_file_gives_goods_names_and_positions() -> None:
    b = load_board("reconstructed-default")
    assert b.goods_names == GOOD_NAMES
    assert set(b.positions) == set(b.cities) | set(b.junction_names)
    assert b.node_name("REI") == "Reims" and b.node_name("PAR") == "Paris"
    doc = board_doc()
    del doc["goods_names"]
    assert parse_board(doc, "x").goods_names == GOOD_NAMES  # default: the id capitalised
    assert board_of(GAME.view(new_game(2), 0)).board.key == new_game(2)["board_key"]


BAD_NAMES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("not_a_table", lambda d: d.update(goods_names=["Tuch"]), "goods_names"),
    ("one_missing", lambda d: d["goods_names"].pop("seide"), "goods_names"),
    ("unknown_good", lambda d: d["goods_names"].update(gold="Gold"), "goods_names"),
    ("empty_name", lambda d: d["goods_names"].update(salz=" "), "goods_names.salz"),
    ("not_a_string", lambda d: d["goods_names"].update(eisen=5), "goods_names.eisen"),
    ("x_without_y", lambda d: d["cities"][2].pop("y"), "cities[2].y"),
    ("x_not_a_number", lambda d: d["junctions"][1].update(x="left"), "junctions[1].x"),
    ("y_bool", lambda d: d["cities"][0].update(y=True), "cities[0].y"),
]  # fmt: skip


@pytest.mark.parametrize(("check", "edit", "field"), BAD_NAMES, ids=[b[0] for b in BAD_NAMES])
def test_h_26_bad_display_data_names_file_and_field(check: str, edit: Callable[[dict[str, Any]], None],
                                                    field: str) -> None:  # fmt: skip
    doc = board_doc()
    edit(doc)
    with pytest.raises(DataError) as info:
        parse_board(doc, "boards/edited.toml")
    assert (info.value.details["file"], info.value.details["field"]) == ("boards/edited.toml", field)


def test_a_sealed_step_says_who_is_asked_not_who_is_waited_for() -> None:
    """The engine cannot know who has answered a sealed step (the service holds the orders
    until all are in), so the picture and summary say who is asked, not "Waiting for"."""
    from engine.haendler.describe import Words
    from engine.haendler.picture import _waiting

    s = new_game(4)
    w = Words(NAMES, board_of(GAME.view(s, D)).board)
    open_at(s, "cart_bid", [A, B, C, D], cart=2)
    view = GAME.view(s, D)
    assert _waiting(w, view, D) == "Asked of Alice, Bob, Carol and Dave (you): bid for a cart (sealed)"
    summary = GAME.summary(view, NAMES)
    assert "Asked of Alice, Bob, Carol and Dave (you): bid for a cart (sealed), cart 2 in Köln" in summary
    assert "Waiting for" not in GAME.summary(view, NAMES)
    open_at(s, "credit", [B])
    assert _waiting(w, GAME.view(s, "public"), None) == "Waiting for Bob: take a credit or not"
