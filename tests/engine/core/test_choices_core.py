"""The choices core: picks held to their asks, and a person's words read as picks."""

from __future__ import annotations

from typing import Any

import pytest

from engine.core.choices import Ask, Number, Option, Prompt, check_pick, fold, read_words, walk
from engine.core.errors import IllegalOrder

GOODS = Ask("good", "Which good?", options=(Option("wein", "Wein"), Option("tuch", "Tuch"), Option("salz", "Salz")))
CITIES = Ask("city", "Where?", options=(Option("BRU", "Brügge", words=("Bruges",), place="city-BRU"),
                                         Option("KOE", "Köln"), Option("LYO", "Lyon")))
COUNT = Ask("count", "How many?", number=Number("cards", 1, 3, named=(Option("none", "none"),)))
SHEET = Ask("prices", "Your prices", sheet=(Number("Tuch", 2, 10, key="tuch"), Number("Wein", 2, 10, key="wein")))


def buy(picks: list[Any]) -> Prompt:
    seq = [CITIES, GOODS, COUNT]
    chosen, ask = walk(picks, lambda pre: seq[len(pre)] if len(pre) < len(seq) else None)
    order = {"city": picks[0], "good": picks[1], "n": picks[2]} if ask is None else None
    return Prompt("Buy goods.", tuple(picks), ask, order, " ".join(chosen), tuple(chosen))


def test_fold_ignores_case_accents_and_umlaut_spellings() -> None:
    assert fold("Brügge") == fold("BRUGGE") == fold("Bruegge") == fold("brugge") == "brugge"
    assert fold("Köln") == fold("Koeln") == "koln"
    assert fold("Straße") == fold("strasse")
    assert fold("  Wein, Tuch! ") == "wein tuch"


def test_check_pick_holds_exact_types_and_bounds() -> None:
    assert check_pick(GOODS, "wein") == "Wein"
    assert check_pick(COUNT, 3) == "3 cards" or check_pick(COUNT, 3) == "3"
    assert check_pick(COUNT, "none") == "none"
    for bad_ask, bad in [(GOODS, "Wein"), (COUNT, 4), (COUNT, 0), (COUNT, True), (COUNT, "3"), (COUNT, -1),
                         (SHEET, {"tuch": 5}), (SHEET, {"tuch": 5, "wein": 11}), (SHEET, [5, 6])]:
        with pytest.raises(IllegalOrder) as exc:
            check_pick(bad_ask, bad)
        assert exc.value.code == "bad_pick"
    assert check_pick(SHEET, {"tuch": 5, "wein": 6}) == "Tuch 5, Wein 6"


def test_an_ask_has_exactly_one_kind() -> None:
    with pytest.raises(ValueError):
        Ask("x", "?")
    with pytest.raises(ValueError):
        Ask("x", "?", options=(Option(1, "one"),), number=Number("n", 0, 1))


def test_read_words_takes_numbers_words_and_plain_sentences() -> None:
    assert read_words("1\n2\n3", buy).order == {"city": "BRU", "good": "tuch", "n": 3}
    assert read_words("Buy 2 Wein in Lyon", buy).order == {"city": "LYO", "good": "wein", "n": 2}
    assert read_words("bruegge; SALZ; none", buy).order == {"city": "BRU", "good": "salz", "n": "none"}
    assert read_words("Koeln wein 1", buy).order == {"city": "KOE", "good": "wein", "n": 1}
    half = read_words("Bruges", buy)
    assert half.order is None and half.ask is GOODS and half.picks == ("BRU",)


def test_read_words_refuses_what_answers_nothing_and_out_of_bounds() -> None:
    with pytest.raises(IllegalOrder, match="does not answer"):
        read_words("Paris", buy)
    with pytest.raises(IllegalOrder) as exc:
        read_words("Lyon Wein 9", buy)
    assert exc.value.code == "bad_pick"
    with pytest.raises(IllegalOrder):
        read_words("Lyon Wein -1", buy)
    with pytest.raises(IllegalOrder, match="already complete"):
        read_words("Lyon\nWein\n1\nmore", buy)


def test_read_words_reads_a_sheet() -> None:
    def sheet(picks: list[Any]) -> Prompt:
        chosen, ask = walk(picks, lambda pre: SHEET if not pre else None)
        return Prompt("Set prices.", tuple(picks), ask, picks[0] if picks else None, "", tuple(chosen))

    assert read_words("Tuch 5, Wein 6", sheet).order == {"tuch": 5, "wein": 6}
    assert read_words("wein 7 / tuch 2", sheet).order == {"tuch": 2, "wein": 7}
    with pytest.raises(IllegalOrder):
        read_words("Tuch 5", sheet)  # no default for Wein: a sheet is whole
    with pytest.raises(IllegalOrder):
        read_words("Tuch 50, Wein 6", sheet)


def test_as_dict_is_plain_json() -> None:
    import json
    p = buy(["BRU"])
    d = json.loads(json.dumps(p.as_dict()))
    assert d["ask"]["kind"] == "choose" and d["chosen"] == ["Brügge"] and d["complete"] is False
    assert CITIES.as_dict()["options"][0] == {
        "value": "BRU", "label": "Brügge", "words": ["Bruges"], "place": "city-BRU"}


def test_a_label_with_a_note_in_parentheses_is_named_by_its_first_part_too() -> None:
    ask = Ask("to", "To whom?", options=(Option(1, "Gertrud (trader bot)"), Option(2, "Konrad (random bot)")))

    def fn(picks: list[Any]) -> Prompt:
        chosen, nxt = walk(picks, lambda pre: ask if not pre else None)
        return Prompt("Pick.", tuple(picks), nxt, {"to": picks[0]} if picks else None, "", tuple(chosen))

    assert read_words("propose to Gertrud", fn).order == {"to": 1}
    assert read_words("konrad", fn).order == {"to": 2}


def test_bounds_write_thousands_with_a_comma_as_the_prompts_do() -> None:
    assert Number("bid", 0, 3700, step=100).bounds == "a whole number from 0 to 3,700 in steps of 100"
    assert Number("money", 1000, 12000, step=1000, unit="money").bounds == \
        "a whole number from 1,000 to 12,000 in steps of 1,000 (money)"
    assert Number("cards", 1, 3).bounds == "a whole number from 1 to 3"
