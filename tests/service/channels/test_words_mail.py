"""Mail that reads like a letter: the title's sentences and summary instead of the raw
state, a subject that says what is asked once, Kontor's "step" (never "phase N" for it),
a ranking with names and what decided it, and never another seat's money.

The last test writes a few mails as a player gets them to /tmp/kontor-mail/ (.eml and
the text part), to read them."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from engine.core import registry
from service.channels.mail.render import render, subject
from service.channels.notify import Notifier
from service.config import Settings
from service.core.kontor import Kontor
from tests.service.channels import Mailbox, Received, work_all
from tests.service.conftest import default_step, domain_game, work

GAME = registry.get("haendler")
BLOCK = re.compile(r"^#orders .*?^#end$", re.S | re.M)
OUT = Path("/tmp/kontor-mail")


def text_of(mail: Received) -> str:
    return mail.text.replace("\r\n", "\n")


def prose(text: str) -> str:
    """A mail's text without the order to reply with (the one place JSON belongs)."""
    return BLOCK.sub("", "\n".join(line for line in text.splitlines() if "kontor order" not in line))


def segments(title: str) -> list[str]:
    return [p.strip().casefold() for p in re.split(r" \N{EM DASH} |: |; |, | \(|\)", title) if p.strip()]


def no_kontor_phase(text: str) -> bool:
    """No "phase N" but the title's own ("round 2, phase 3: moving carts")."""
    return not re.search(r"\bphase \d", re.sub(r"round \d+, phase \d+", "", text))


def contacts_for(k: Kontor, gid: str, seats: range) -> None:
    for seat in seats:
        k.store.set_contact(gid, seat, {"email": f"p{seat}@players.example.org", "email_status": "ok",
                                        "timezone": "Europe/Berlin", "delivery": "immediate"})


def payload_of(k: Kontor, gid: str, mail: Received) -> list[dict[str, Any]]:
    return list(k.store.delivery(gid, mail.message["X-Kontor-Delivery"])["payload"])


def test_mails_carry_the_sentences_and_the_summary_never_the_raw_state(
        nkontor: Kontor, notify_settings: Settings, mailbox: Mailbox) -> None:
    gid, _ = domain_game(nkontor, 3, seed="words-mail-1")
    contacts_for(nkontor, gid, range(3))
    for _ in range(14):
        default_step(nkontor, gid)
        work_all(notify_settings)
    name = nkontor.store.meta(gid)["name"]
    assert name.startswith("Die Händler #")
    for seat in range(3):
        mails = mailbox.to(f"p{seat}@players.example.org")
        assert len(mails) >= 3  # `every` mode: the start, then a mail per decision of the seat's own
        for mail in mails:
            text, notices = text_of(mail), payload_of(nkontor, gid, mail)
            # The subject: the game once (its name holds the title's), then what it is about, once.
            title = mail.message["Subject"]
            assert title.startswith(f"{name} \N{EM DASH} ") and "(Die Händler)" not in title
            assert len(segments(title)) == len(set(segments(title))), title
            assert no_kontor_phase(title) and no_kontor_phase(text), title
            # The words: every sentence, the newest summary; no raw state.
            for n in notices:
                for sentence in n["sentences"]:
                    assert sentence in text, (title, sentence)
            summary = [n["summary"] for n in notices if n.get("summary")][-1]
            assert summary.strip() in text
            assert '"players"' not in prose(text) and '{"st' not in prose(text) and '"money"' not in text
            asked = [n for n in notices if n.get("request")]
            if asked:
                assert title.startswith(f"{name} \N{EM DASH} your turn: ") and asked[-1]["asked"] in text
            else:
                assert "your turn" not in title and "How to answer by reply" not in text


def test_a_seats_mail_never_shows_another_seats_money(nkontor: Kontor, notify_settings: Settings) -> None:
    gid, _ = domain_game(nkontor, 3, seed="words-mail-2")
    for _ in range(6):
        default_step(nkontor, gid)
        work(notify_settings)
    meta, seats = nkontor.store.meta(gid), nkontor.store.seats(gid)
    last = int(meta["event_seq"])
    events = nkontor.store.events_between(gid, 1, last)
    closing = int(nkontor.store.phase(gid)["id"]) - 1
    state = nkontor.store.state(gid)
    contact = {"email": "p@players.example.org", "timezone": "UTC"}
    for seat in range(3):
        for rich in range(3):
            tampered = copy.deepcopy(state)
            tampered["players"][rich]["money"] = 987_653
            notices = Notifier(nkontor).commit_notices(gid, meta, seats, closing, tampered, "2000000000", events, seat)
            msg = render(nkontor, gid, seat, contact, notices, f"e_{seat}_{rich}")
            text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
            html = msg.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
            shown = "987,653" in text or "987653" in text
            assert shown == (seat == rich), (seat, rich)
            assert ("987,653" in html or "987653" in html) == (seat == rich)


def test_the_subject_says_the_game_once_and_what_is_asked(nkontor: Kontor) -> None:
    head = {"game": "b51b0c", "title": "haendler", "title_name": "Die Händler", "seat": 0,
            "names": ["Ada", "Bob"], "headline": "round 2, phase 1: buying goods"}
    asked = {"type": "step.opened", **head, "game_name": "Die Händler #b51b", "phase": 14,
             "request": {"kind": "buy"}, "asked": "Buy up to 3 goods: Tuch 100, Wein 100 (round 2, phase 1).",
             "sentences": []}
    assert subject([asked], False) == "Die Händler #b51b \N{EM DASH} your turn: buy up to 3 goods (round 2)"
    news = {"type": "step.resolved", **head, "game_name": "Friday table", "phase": 13,
            "sentences": ["Bob bought 2 Salz in Brügge for 200.", "Ada bought nothing."]}
    opened = {"type": "step.opened", **head, "game_name": "Friday table", "phase": 14, "request": None,
              "seats": [1], "sentences": []}
    assert subject([news, opened], False) == \
        "Friday table (Die Händler) \N{EM DASH} Bob bought 2 Salz in Brügge for 200"
    bare = {**news, "sentences": []}
    assert subject([bare], False) == "Friday table (Die Händler) \N{EM DASH} step 13 resolved"
    # The title's words may name the game's round already: it is not said twice.
    again = {**asked, "asked": "Round 2: buy goods."}
    assert subject([again], False) == "Die Händler #b51b \N{EM DASH} your turn: round 2"


def test_the_final_mail_names_the_ranking_and_what_decided_it(nkontor: Kontor) -> None:
    gid, _ = domain_game(nkontor, 4, seed="words-mail-3")
    meta, seats = nkontor.store.meta(gid), nkontor.store.seats(gid)
    head = Notifier(nkontor).header(gid, meta, 1, seats)
    ranking = [
        {"place": 1, "seat": 2, "level": 5, "money": 5200, "credits": 0, "tiebreak": None},
        {"place": 2, "seat": 1, "level": 5, "money": 3100, "credits": 0, "tiebreak": "money"},
        {"place": 3, "seat": 0, "level": 4, "money": 9000, "credits": 0, "tiebreak": "level"},
        {"place": 3, "seat": 3, "level": 4, "money": 9000, "credits": 0, "tiebreak": "shared"},
    ]
    finished = {"type": "game.finished", **head, "phase": 120, "at": None, "links": {}, "ranking": ranking,
                "sentences": ["The game is over: P2 wins."], "summary": "Die Händler \N{EM DASH} game over",
                "headline": "game over"}
    msg = render(nkontor, gid, 1, {"email": "p1@players.example.org"}, [finished], "e_end")
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert msg["Subject"].endswith("\N{EM DASH} game over: P2 wins")
    assert "Final ranking\n-------------\nThe game is over: P2 wins.\n" in text
    assert "- 1. P2: status level 5, money 5,200, no credits\n" in text
    assert "- 2. P1 (you): status level 5, money 3,100, no credits (same status level as P2; money decided)" in text
    assert "- 3. P0: status level 4, money 9,000, no credits (behind P1 on status level)" in text
    assert "- 3. P3: status level 4, money 9,000, no credits (shares the place with P0: same level and money)" in text
    assert "seat" not in text.split("Final ranking", 1)[1].split("\n\n")[0]


def test_read_a_whole_game_of_mail_as_a_player_gets_it(nkontor: Kontor, notify_settings: Settings,
                                                        mailbox: Mailbox) -> None:
    """Seat 0 plays by default orders against two bots to the end; its mails are kept in
    /tmp/kontor-mail/ to read. The last one tells the end, with the ranking in names."""
    gid, _ = domain_game(nkontor, 3, seed="words-mail-4", bots={1: "greedy", 2: "random"})
    contacts_for(nkontor, gid, range(1))
    for _ in range(300):
        if nkontor.store.meta(gid)["status"] == "finished":
            break
        default_step(nkontor, gid)
        work_all(notify_settings)
    else:
        raise AssertionError("the game did not finish")
    work_all(notify_settings)
    mails = mailbox.to("p0@players.example.org")
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*"):
        old.unlink()
    asked = [m for m in mails if "your turn" in m.message["Subject"]]
    for label, mail in (("first", mails[0]), ("your-turn", asked[len(asked) // 2]), ("last", mails[-1])):
        (OUT / f"{label}.eml").write_bytes(mail.raw)
        (OUT / f"{label}.txt").write_text(f"Subject: {mail.message['Subject']}\n\n{text_of(mail)}")
    last = text_of(mails[-1])
    result = nkontor.game(gid)["result"]
    assert "Final ranking\n-------------\nThe game is over: " in last
    names = [nkontor.store.seats(gid)[s]["name"] for s in range(3)]
    assert names[0] == "P0" and names[1].endswith(" (greedy bot)") and names[2].endswith(" (random bot)")
    winner = names[result[0]["seat"]]
    assert f"- 1. {winner}" in last and mails[-1].message["Subject"].endswith(("wins", "share first place"))
    assert all(no_kontor_phase(text_of(m)) and no_kontor_phase(m.message["Subject"]) for m in mails)


def test_words_for_kontors_own_events_and_a_title_without_words() -> None:
    from service import words

    names = ["Ada", "Bob", "Cy"]
    assert words.describe(GAME, {"type": "step_opened", "phase": 4, "seats": [1], "sealed": False}, names) == \
        "Now it is Bob's turn."
    assert words.describe(GAME, {"type": "step_opened", "phase": 5, "seats": [0, 2], "sealed": True}, names) == \
        "Now Ada and Cy answer at once (sealed: no order is shown before all have answered)."
    assert words.describe(GAME, {"type": "step_resolved", "phase": 5, "defaults": []}, names) is None
    assert words.describe(GAME, {"type": "step_resolved", "phase": 5, "defaults": [2]}, names) == \
        "Cy did not answer in step 5 and was given the default order."
    assert words.describe(GAME, {"type": "message", "from": 1, "to": [0], "text": "Salt\nfor wine?"}, names) == \
        "Bob wrote to Ada: Salt for wine?"
    assert words.names_of(3, {0: "Ada", 1: None, 2: "  "}) == ["Ada", "Seat 1", "Seat 2"]

    class Broken:
        def describe_event(self, event: Any, names: Any) -> str:
            raise KeyError("no words yet")

    class Raw:
        def describe_event(self, event: Any, names: Any) -> str:
            return f"{event['type']}: {event}"

    assert words.describe(Broken(), {"type": "cart_sold", "cart": 1}, names) == "Cart sold."
    assert words.describe(Raw(), {"type": "cart_sold", "cart": 1}, names) == "Cart sold."
