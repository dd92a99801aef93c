"""The host's rollback by mail (issue 25): a proposal that needs consent is mailed at once to
every seat asked, in words, with how to answer; a reply "agree to roll back" or "refuse the
roll back" answers it, with a receipt in words; the applied rollback reaches every seat.
With the test title Stall (tests/service/stall.py: a hoard tells the hoarder privately
what it has left, so a rollback over it needs consent)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.channels.inbound.parse import rollback_consent
from service.channels.mail.render import lead
from service.config import Settings
from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.channels import Mailbox, work_all
from tests.service.channels.test_mail_actions import reply, stall_game, text
from tests.service.stall import registered

ADA, BRUNO = "ada@players.example.org", "bruno@players.example.org"


@pytest.fixture
def stall() -> Iterator[None]:
    with registered():
        yield


def test_rollback_consent_words() -> None:
    for said in ("agree to roll back", "Agree to the rollback.", "I agree to roll back", "agree to roll-back"):
        assert rollback_consent(said) is True, said
    for said in ("refuse the roll back", "Refuse the rollback", "I refuse to roll back!", "refuse roll back"):
        assert rollback_consent(said) is False, said
    for said in ("agree", "roll back", "buy 2 wein", "agree to roll back and buy", ""):
        assert rollback_consent(said) is None, said


def test_rollback_by_mail(stall: Any, nkontor: Kontor, notify_settings: Settings, mailbox: Mailbox) -> None:
    k = nkontor
    gid = stall_game(k)
    work_all(notify_settings)
    k.act(gid, 1, {"hoard": "wein"}, via="test")
    k.submit(gid, 1, 0, {"buy": "tuch", "count": 1}, via="test")
    work_all(notify_settings)
    assert k.current_phase(gid, "public")["id"] == 2
    before = {a: len(mailbox.to(a)) for a in (ADA, BRUNO)}
    assert k.propose_rollback(gid, 1)["status"] == "pending"
    work_all(notify_settings)
    asks = {}
    for address in (ADA, BRUNO):
        got = mailbox.wait(before[address] + 1, address=address)
        mail = got[-1]
        body = text(mail)
        assert "The host proposes to go back to step 1 (Ada's turn: buy 1 to 3 of a good). As step 1 told some " \
               "players what the others did not see, it happens only if every player agrees: Ada and Bruno." in body
        assert 'reply "agree to roll back"' in body and 'reply "refuse the roll back"' in body
        assert "agree to go back" in str(mail.message["Subject"]) or "go back" in body
        said = [line for line in body.splitlines() if "roll back" in line or "go back" in line]
        assert said and not problems(" ".join(said)), problems(" ".join(said))
        asks[address] = mail
    receipt = reply(k, mailbox, 0, asks[ADA], "agree to roll back")
    assert receipt.message["X-Kontor-Status"] == "accepted", text(receipt)
    assert str(receipt.message["Subject"]).endswith("[answer recorded]")  # not an "order"
    assert text(receipt).startswith("Your agreement to go back is recorded; the other players are still asked.")
    assert k.current_phase(gid, "public")["id"] == 2
    receipt = reply(k, mailbox, 1, asks[BRUNO], "Agree to the roll back.")
    assert receipt.message["X-Kontor-Status"] == "accepted", text(receipt)
    assert text(receipt).startswith("You agreed, and so did every other player: the game is back.")
    ph = k.current_phase(gid, "public")
    assert (ph["id"], ph["requested"]) == (3, [0])
    assert k.store.state(gid)["players"][1]["coins"] == 5  # the hoard is undone
    work_all(notify_settings)
    last = text(mailbox.to(ADA)[-1])
    assert "The host rolled the game back to step 1 (Ada's turn: buy 1 to 3 of a good) with every player's " \
           "consent; it is open again as step 3." in " ".join(last.split())


def test_rollback_consent_request_leads_its_mail_over_news() -> None:
    """A mail that holds the host's rollback proposal (asking this seat's consent) and news
    of other events is about the proposal: its subject says so."""
    news = {"type": "rollback.answered", "sentences": ["The host rolled the game back to step 11."]}
    ask = {"type": "rollback.proposed", "consent": True, "sentences": ["The host proposes to go back to step 10."]}
    assert lead([ask, news]) is ask and lead([news, ask]) is ask


def test_rollback_reasons_say_the_steps_of_one_reason_together() -> None:
    """"steps 7, 9 and 12 were sealed", not the same clause once per step."""
    from service import words

    said = words.reasons_text([{"why": "sealed", "phase": 7}, {"why": "private_event", "phase": 8},
                               {"why": "sealed", "phase": 9}, {"why": "sealed", "phase": 12}])
    assert said == ("steps 7, 9 and 12 were sealed: their orders were secret until they resolved and step 8 "
                    "told some players what the others did not see")


def test_rollback_steps_say_what_was_decided_and_no_seat_s_own_figures() -> None:
    """A step that asked several seats at once is named by what it decided; only the first
    clause of the title's words, so a bid's range (the asked seat's money, private in Die
    Händler, H-14) is never said to everyone."""
    from engine.core import registry
    from service.core.rollback import step_text

    game = registry.get("haendler")
    state = game.setup(3, None, 7)
    for _ in range(6):  # the six purchases, to the first sealed cart bids
        state, _ = game.step(state, {r.seat: game.default_order(state, r.seat) for r in game.requests(state)})
    said = step_text(game, state, ["Alice", "Bob", "Irma"], 7)
    assert said == "Step 7: Bob, Irma and Alice at once: bid for the loading mastership of cart 1 in Paris"
    assert "4,000" not in said
