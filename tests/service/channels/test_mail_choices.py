"""Every decision of every title answered from its turn mail (issue 21, Deliver 4).

Per title, a seeded 3-seat game whose seats play by mail (reply addresses, `asked`
mode). The first times a decision kind comes up it is answered from the mail three
ways, each read from the mail's own text (never from the engine or JSON):

* `number`: the number of an option ("2"), part by part: a reply that names only the
  first part is answered with what is still missing and the next choices numbered, and
  the reply to that answer goes on from there;
* `words`: the words of an option, part by part the same way;
* `plain`: the whole order at once in plain words with display names, one line per
  part, lower case and umlauts spelled out ("bruegge"), as a person types them.

Every receipt states the order in words: the title's sentence for exactly the picks
the replies made (read again with `engine.core.choices.read_words` to know them). The
other steps are answered directly with the title's first bot's orders, to reach more kinds. Every
mail and receipt, text and HTML, is scanned for ids, `null` and JSON
(`tests/playertext.py`), rule links aside.
"""

from __future__ import annotations

import random
import re
from email.message import EmailMessage
from typing import Any

import pytest

from engine.core import registry
from engine.core.choices import Ask, read_words
from service import words
from service.channels.inbound.judge import process, store_inbound
from service.channels.mail.render import NUMBERED
from service.channels.notify import reply_address
from service.channels.offer import prompt_of
from service.config import Settings
from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.channels import Mailbox, Received, work_all
from tests.service.conftest import Player, work

METHODS = ("number", "words", "plain")
#: The decision kinds each title's seeded games reach with something to choose, every one
#: answered by mail all three ways.
KINDS = {
    "haendler": {"buy", "cart_bid", "master", "load", "move", "wheel", "kontor", "sales", "advance"},
    "aufachse": {"place", "move", "bid", "event_space"},
    "fantasy": {"select", "open", "bid", "lone", "price", "w_open", "w_close", "w_reveal", "w_spy"},
}
#: Kinds the games reach too rarely with a choice to answer them three ways (Auf Achse:
#: the arrival's trailers and loads, a won load, a shortcut; their prompts are pinned by
#: tests/engine/aufachse/test_prompts.py and the generic choices test).
RARE = {"haendler": set(), "aufachse": {"arrive", "load_won", "shortcut"}, "fantasy": set()}
STEPS = 400
#: How many seeded games a title may take to reach every kind.
GAMES = 2
#: The players' names (names like "P2" would read as rule ids).
NAMES = ["Ada", "Bruno", "Cäcilie"]
_NUMBERED = re.compile(r"^  (\d+)\. (.+)$", re.M)
_BOUNDS = re.compile(r"Reply with a whole number from (-?\d+) to (-?\d+)")


def text_of(mail: Received) -> str:
    return mail.text.replace("\r\n", "\n")


def html_text(html: str) -> str:
    """The HTML part's text, its links' text left out only where they are rule links."""
    html = re.sub(r'<a href="[^"]*#[A-Z][^"]*">rule [^<]*</a>', "", html)
    html = re.sub(r"<[^>]+>", " ", html)
    return re.sub(r"&[a-z]+;|&#\d+;", " ", html)


def scan(mail: Received) -> list[str]:
    said = [str(mail.message["Subject"]), words.without_rule_links(text_of(mail)),
            words.without_rule_links(html_text(mail.html)) if mail.html else ""]
    return [p for t in said for p in problems(t)]


def options_in(text: str) -> list[str]:
    """The numbered choices a mail offers (its first numbered list), hints cut off."""
    return [label.split(" \N{EM DASH} ")[0] for _, label in _NUMBERED.findall(text)]


class Table:
    def __init__(self, k: Kontor, settings: Settings, mailbox: Mailbox, title: str, seed: str,
                 delivery: str = "asked") -> None:
        self.k, self.settings, self.mailbox, self.title = k, settings, mailbox, title
        self.game = registry.get(title)
        host = Player.new()
        self.gid = k.create_game(title, 3, None, None, seed, host.key.public, mail_orders="reply_address")["id"]
        for seat in range(3):
            p = Player.new()
            k.join(self.gid, NAMES[seat], p.key.public, seat)
            k.store.set_contact(self.gid, seat, {"email": self.address(seat), "email_status": "ok", "timezone": "UTC",
                                                 "delivery": delivery})
        k.start(self.gid)
        self.rng = random.Random(seed)
        bots = self.game.bots()
        self.bot = bots[sorted(bots)[0]](seed)
        self.read = len(mailbox.messages)  # (the mails of this game only)
        self.problems: list[str] = []

    @staticmethod
    def address(seat: int) -> str:
        return f"p{seat}@players.example.org"

    def new_mail(self) -> list[Received]:
        got = self.mailbox.messages[self.read:]
        self.read += len(got)
        for m in got:
            self.problems += [f"{m.message['Subject']}: {p}" for p in scan(m)]
        return got

    def turn_mail(self, phase: int, seat: int) -> Received:
        address = reply_address(self.k, self.gid, phase, seat)
        mails = [m for m in self.mailbox.to(self.address(seat)) if m.message["Reply-To"] == address
                 and not m.message["X-Kontor-Status"]]
        assert mails, f"no turn mail for seat {seat} in step {phase}"
        return mails[-1]

    def reply(self, seat: int, to: Received, text: str) -> Received:
        """Reply `text` to the mail `to` (above its quote); the receipt."""
        msg = EmailMessage()
        msg["From"] = self.address(seat)
        msg["To"] = str(to.message["Reply-To"])
        msg["Subject"] = f"Re: {to.message['Subject']}"
        msg["Message-ID"] = f"<r{self.rng.randrange(10**12)}@players.example.org>"
        msg["In-Reply-To"] = str(to.message["Message-ID"])
        msg["References"] = str(to.message["Message-ID"])
        quoted = "\n".join(f"> {line}" for line in text_of(to).splitlines())
        msg.set_content(f"{text}\n\nOn Mon, 1 Jun 2026, Kontor wrote:\n{quoted}\n")
        before = len(self.mailbox.to(self.address(seat)))
        mail_id = store_inbound(self.k, msg.as_bytes(), [str(to.message["Reply-To"])], self.address(seat))
        process(self.k, mail_id)
        got = self.mailbox.wait(before + 1, address=self.address(seat))
        receipt = got[-1]
        assert receipt.message["In-Reply-To"] == msg["Message-ID"]
        return receipt

    def answer(self, phase: int, seat: int, method: str) -> None:
        """Answer the open decision of `seat` from its turn mail by `method`."""
        _, _, state = self.k.store.snapshot(self.gid)
        fn = prompt_of(self.game, state, seat, names=self.k.names(self.gid, self.k.store.snapshot(self.gid)[0]))
        mail = self.turn_mail(phase, seat)
        text = text_of(mail)
        assert "Your choices\n------------\n" in text, text
        if method == "plain":
            replies = [self.plain_order(fn)]
        else:
            replies = []
            current, shown = mail, text
            for _ in range(20):
                line = self.part(shown, method)
                replies.append(line)
                receipt = self.reply(seat, current, line)
                status = receipt.message["X-Kontor-Status"]
                if status == "refused" and method == "number" and "could be option" in text_of(receipt):
                    # "2" where another option reads "2 levels": refused in words; the words then
                    ambiguous = options_in(shown)[int(line) - 1]
                    assert f"could be option {line} ({ambiguous}) or " in " ".join(text_of(receipt).split())
                    replies[-1] = ambiguous  # (the refused number changed nothing)
                    receipt = self.reply(seat, current, ambiguous)
                    status = receipt.message["X-Kontor-Status"]
                if status == "accepted":
                    break
                assert status == "incomplete", text_of(receipt)
                current, shown = receipt, text_of(receipt)
                assert "Still missing: " in shown
            else:
                raise AssertionError("the decision never completed")
        if method == "plain":
            receipt = self.reply(seat, mail, replies[0])
        assert receipt.message["X-Kontor-Status"] == "accepted", (method, replies, text_of(receipt))
        # The receipt states the order in words: the title's sentence for these picks.
        expected = read_words("\n".join(replies), fn)
        assert expected.order is not None
        stored = self.k.store.orders(self.gid, phase)[seat]
        assert stored["order"] == expected.order and stored["via"] == "email"
        assert f"The order as understood: {expected.sentence}." in text_of(receipt), text_of(receipt)
        assert "{" not in text_of(receipt)

    def nothing_to_choose(self, phase: int, seat: int) -> bool:
        """A decision with nothing to choose: "default" plays it, and the receipt says it."""
        mail = self.turn_mail(phase, seat)
        if "There is nothing to choose: " not in text_of(mail):
            return False
        said = text_of(mail).split("There is nothing to choose: ", 1)[1].split(". Reply ", 1)[0]
        receipt = self.reply(seat, mail, "default")
        assert receipt.message["X-Kontor-Status"] == "accepted"
        assert f"The order as understood: {said}." in text_of(receipt)
        return True

    def part(self, shown: str, method: str) -> str:
        """A reply to the first part a mail (or an answer) offers, read from its text."""
        options = options_in(shown)
        if options:
            i = self.rng.randrange(len(options))
            return str(i + 1) if method == "number" else options[i]
        bounds = _BOUNDS.search(shown)
        if bounds:
            return bounds[1]
        sheet = re.search(r"like this:\n    (.+)\n", shown)
        assert sheet, shown
        return sheet[1]

    def plain_order(self, fn: Any) -> str:
        """A whole order in plain words with display names, a line per part, as a person
        types them (lower case, umlauts spelled out)."""
        picks: list[Any] = []
        lines: list[str] = []
        current = fn([])
        while current.ask is not None and (current.order is None or not picks) and len(picks) < 20:
            pick, line = self.some_pick(current.ask)
            picks.append(pick)
            lines.append(line)
            current = fn(picks)
        assert current.order is not None
        return "\n".join(lines).replace("ü", "ue").replace("ö", "oe").replace("ä", "ae").lower()

    def some_pick(self, ask: Ask) -> tuple[Any, str]:
        if ask.options:
            o = self.rng.choice(ask.options[:NUMBERED])
            return o.value, (o.words[0] if o.words else o.label)
        if ask.number is not None:
            n = ask.number
            return n.max, str(n.max)
        return {n.key: n.min for n in ask.sheet}, ", ".join(f"{n.label} {n.min}" for n in ask.sheet)

    def bot_step(self, phase: int) -> None:
        """The orders not answered by mail: the title's first bot's (a game of defaults
        never buys, so it never loads or sells)."""
        _, _, state = self.k.store.snapshot(self.gid)
        for r in self.game.requests(state):
            if r.seat not in self.k.store.orders(self.gid, phase):
                self.k.submit(self.gid, phase, r.seat, self.bot.order(self.game, state, r), via="test")


@pytest.mark.parametrize("title", sorted(KINDS))
def test_every_decision_is_answered_from_the_turn_mail_three_ways(
        nkontor: Kontor, notify_settings: Settings, mailbox: Mailbox, title: str) -> None:
    done: dict[str, list[str]] = {}
    seen: set[str] = set()
    found: list[str] = []
    for g in range(GAMES):
        if done.keys() >= KINDS[title] and all(len(m) == len(METHODS) for m in done.values()):
            break
        table = Table(nkontor, notify_settings, mailbox, title, seed=f"mail-choices-{title}-{g}")
        play(table, done, seen)
        found += table.problems
    covered = {kind for kind, m in done.items() if len(m) == len(METHODS)}
    assert covered == KINDS[title] and seen - covered <= RARE[title], done
    assert found == [], "\n".join(sorted({p.split(": ", 1)[1][:160] for p in found})[:40])


def play(table: Table, done: dict[str, list[str]], seen: set[str]) -> None:
    """Play `table`'s game until it ends, every kind of the title is answered all three
    ways, or `STEPS` steps. The mails are made (and scanned) before each step answered
    by mail and at the end."""
    k = table.k

    def wanted(kind: str) -> bool:
        return len(done.get(kind, [])) < len(METHODS)

    for _ in range(STEPS):
        work(table.settings)  # the step's resolution (and the jobs it makes)
        if k.game(table.gid)["status"] == "finished" or not any(wanted(kind) for kind in KINDS[table.title]):
            break
        phase = int(k.current_phase(table.gid, "public")["id"])
        _, _, state = k.store.snapshot(table.gid)
        asked = table.game.requests(state)
        seen.update(r.kind for r in asked)
        if any(wanted(r.kind) for r in asked):
            work_all(table.settings)  # the turn mails (and every mail before them)
            table.new_mail()
            for r in asked:
                methods = done.setdefault(r.kind, [])
                if wanted(r.kind) and not table.nothing_to_choose(phase, r.seat):
                    table.answer(phase, r.seat, METHODS[len(methods)])
                    methods.append(METHODS[len(methods)])
        table.bot_step(phase)
    work_all(table.settings)
    table.new_mail()


@pytest.mark.parametrize("title", sorted(KINDS))
def test_no_mail_of_three_seeded_games_shows_an_id_null_or_json(
        nkontor: Kontor, notify_settings: Settings, mailbox: Mailbox, title: str) -> None:
    """Three seeded games per title played to the end by bot orders, every seat mailed in
    `every` mode (the fullest mails: each step told): every subject, text and HTML part
    is words (rule ids only as links to the guide)."""
    found: list[str] = []
    for g in range(3):
        table = Table(nkontor, notify_settings, mailbox, title, seed=f"mail-scan-{title}-{g}", delivery="every")
        for _ in range(STEPS):
            work(notify_settings)
            if nkontor.game(table.gid)["status"] == "finished":
                break
            table.bot_step(int(nkontor.current_phase(table.gid, "public")["id"]))
        else:
            raise AssertionError("the game did not finish")
        work_all(notify_settings)
        got = table.new_mail()
        assert len(got) >= 6 and any("Final ranking" in text_of(m) for m in got)
        found += table.problems
    assert found == [], "\n".join(sorted({p.split(": ", 1)[1][:160] for p in found})[:40])
