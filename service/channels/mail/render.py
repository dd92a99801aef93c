"""Rendering a mail from a delivery's notices: text and HTML parts with the same content.

A notice is the redaction point (`service.channels.notify`): `render` reads nothing of the game
from the store, so a mail can never show a seat more than its notices hold. The rulings
on headers, threading and the `#orders` block are in `service.channels.mail.send`.

A mail reads like a letter, in the title's words (the notices' `sentences`, `summary`,
`headline` and `asked`), never the raw state: a greeting and what the mail is about;
what happened; what is asked, with the legal choices in words where they are short, and
the deadline in the seat's time zone; the table (the title's summary of the seat's
view, monospace); how to answer by reply (the `#orders` block); the rules and links.

The words are built here, the layout is Jinja templates (`templates/notice.txt`,
`notice.html`, and `digest.*` with their own opening): the HTML part escapes every value
by autoescape, the text part shows it as it is. No HTML is built in Python.

Rulings:
* Kontor's step counter is a "step" in every text; "phase" is left to the titles (Die
  Händler's six phases), whose `headline` says where the game stands.
* The subject says what the mail is about once: the game's name (the title's name only
  when the game's name does not hold it already), then what is asked, or the news.
"""

from __future__ import annotations

import email.policy
import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from service import words
from service.channels.mail.unsubscribe import unsubscribe_token, unsubscribe_url
from service.channels.notify import orders_address, reply_address
from service.protocol.plain import emptied, plain_form
from service.store.json import dumps

if TYPE_CHECKING:
    from service.core.kontor import Kontor


#: SMTP line endings, no header folding below the RFC 5322 line limit.
POLICY = email.policy.SMTP.clone(max_line_length=998)
#: Which notice a mail is about, most important first ("request": a step that asks the seat;
#: "default": a step where the seat's default order was played; "yours": the notice that a
#: bot or another player now plays the seat; "consent": the host's rollback waiting for the
#: seat's answer).
LEAD = ("deadline.reminder", "request", "consent", "default", "yours", "game.paused", "game.resumed",
        "deadline.extended", "game.finished", "absence.summary", "message.received", "step.opened", "step.resolved",
        "seat.replaced")
#: The subject's separator between the game and what the mail is about.
DASH = " \N{EM DASH} "
#: The mail templates (`templates/`: notice and digest, text and HTML; receipt): the
#: `.html` ones escape every value (autoescape), the `.txt` ones show text as it is.
TEMPLATES = Environment(loader=PackageLoader("service.channels.mail", "templates"),
                        autoescape=select_autoescape(["html"], default_for_string=False, default=False),
                        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                        undefined=StrictUndefined)
_URL_RE = re.compile(r"https?://[^\s<>\"']+[^\s<>\"'.,;:)]")
_LINK_RE = re.compile(rf"{words.RULE_LINK_RE.pattern.replace('(?P<url>', '(?P<rurl>')}|(?P<url>{_URL_RE.pattern})")


def linkify(text: str) -> Markup:
    """`text` escaped for HTML, each http(s) URL in it made a link (the HTML part's lines),
    and a rule cited as "rule H-41 <url>" (`words.cite_rules`) a link named "rule H-41"."""
    out, last = [], 0
    for m in _LINK_RE.finditer(text):
        if m["what"]:
            link = Markup('<a href="{}">rule {}</a>').format(m["rurl"], m["what"])
        else:
            link = Markup('<a href="{0}">{0}</a>').format(m["url"])
        out += [escape(text[last:m.start()]), link]
        last = m.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)


TEMPLATES.filters["linkify"] = linkify


@dataclass
class Section:
    """A part of a mail body, laid out the same way by the text and the HTML template."""

    title: str
    level: int = 2
    lines: list[str] = field(default_factory=list)  # paragraphs; one indented by 4 spaces is code
    items: list[str] = field(default_factory=list)  # a bulleted list
    numbered: list[str] = field(default_factory=list)  # a numbered list (1. ...), after the lines
    after: list[str] = field(default_factory=list)  # paragraphs after the lists
    pre: list[str] = field(default_factory=list)  # a block shown as is (monospace)
    links: list[tuple[str, str]] = field(default_factory=list)
    image: tuple[str, str] | None = None  # (src, alt): a picture the HTML part shows (the text part has `pre`)


def render(k: Kontor, gid: str, seat: int, contact: dict[str, Any], notices: list[dict[str, Any]],
           delivery_id: str, digest: bool = False) -> EmailMessage:
    """The mail of one delivery to `seat` (at `contact["email"]`): one notice, the
    notices of one commit, or a digest of many."""
    domain = k.settings.mail_domain
    zone = ZoneInfo(contact.get("timezone") or "UTC")
    title = words.cite_rules(subject(notices, digest), None, ())
    address = contact["email"]
    svg = picture_of(k, notices)
    picture = (make_msgid("table", domain=domain)[1:-1], svg) if svg else None
    opened = opening(notices, seat, digest)
    if "line" in opened:
        opened["line"] = words.cite_rules(opened["line"], None, ())
    context = {"title": title, "sections": cited(k, notices[0].get("title"), letter(k, notices, seat, zone, picture)),
               "seat": seat, "game": gid, "unsubscribe": unsubscribe_url(k, address),
               "farewell": any(n.get("farewell") for n in notices), **opened}
    kind = "digest" if digest else "notice"

    msg = EmailMessage(policy=POLICY)
    msg["Subject"] = title
    msg["From"] = k.settings.mail_from
    msg["To"] = address
    msg["Reply-To"] = reply_to(k, notices)
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = make_msgid(idstring=delivery_id, domain=domain)
    thread = f"<game-{gid}-{seat}@{domain}>"
    msg["In-Reply-To"] = thread
    msg["References"] = thread
    msg["List-Id"] = f"Kontor game {gid} <game-{gid}.{domain}>"
    token = unsubscribe_token(k, address)
    msg["List-Unsubscribe"] = f"<{unsubscribe_url(k, address)}>, <mailto:unsubscribe@{domain}?subject={token}>"
    msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["Auto-Submitted"] = "auto-generated"
    msg["X-Kontor-Delivery"] = delivery_id
    msg.set_content(TEMPLATES.get_template(f"{kind}.txt").render(context), cte="quoted-printable")
    msg.add_alternative(TEMPLATES.get_template(f"{kind}.html").render(context), subtype="html",
                        cte="quoted-printable")
    if picture:
        html = msg.get_payload()[1]
        html.add_related(picture[1].encode(), maintype="image", subtype="svg+xml", cid=f"<{picture[0]}>",
                         disposition="inline", filename="table.svg")
    return msg


def reply_to(k: Kontor, notices: list[dict[str, Any]]) -> str:
    """Where an answer goes: the newest request's `reply_to` (or, for a notice that
    offers actions or asks the seat to agree to a rollback, the step's), else the seat's
    own reply address (`seat_reply`), else the orders address."""
    asked = [n["request"] for n in notices if n.get("request")]
    acting = [n for n in notices if (n.get("actions") or n.get("consent")) and not n.get("held")]
    return ((asked[-1].get("reply_to") if asked else acting[-1].get("reply_to") if acting else None)
            or seat_reply(k, notices) or orders_address(k))


def seat_reply(k: Kontor, notices: list[dict[str, Any]]) -> str | None:
    """For a mail that asks nothing (a pause, a moved deadline, an absence's summary, a
    rematch...): the seat's reply address for the game's open step, where the game takes
    mail from it, so a reply can still say `away ...`, `back` or answer a rollback (the
    judge reads those at any of the seat's reply addresses; an order there is checked
    against the open step as always). None for a farewell to a former holder (whose
    addresses are dead) and where the game takes no mail orders."""
    n = notices[-1]
    gid, seat = n.get("game"), n.get("seat")
    if any(x.get("farewell") for x in notices) or not isinstance(gid, str) or not isinstance(seat, int):
        return None
    meta = k.store.meta(gid)
    if meta.get("reply_orders") != "1" or meta.get("status") != "running":
        return None
    step = k.store.phase(gid).get("id")
    return reply_address(k, gid, int(step), seat) if step else None


# -- rule citations --------------------------------------------------------------------------
@lru_cache(maxsize=16)
def _anchors(path: str, stamp: tuple[int, int]) -> frozenset[str]:
    return words.rule_anchors(Path(path).read_text(encoding="utf-8"))


def anchors(k: Kontor, title: str) -> frozenset[str]:
    """The rule ids with an anchor in the title's player's guide (none without a guide)."""
    path = k.rules_file(title)
    if path is None:
        return frozenset()
    st = path.stat()
    return _anchors(str(path), (st.st_mtime_ns, st.st_size))


def citer(k: Kontor, title: str | None) -> Callable[[str], str]:
    """`text -> text` with its rule citations made links to the title's guide (or dropped)."""
    known = anchors(k, title) if title else frozenset()
    guide = f"{k.settings.public_url.rstrip('/')}/titles/{title}/rules" if title else None
    return lambda text: words.cite_rules(text, guide, known)


def cited(k: Kontor, title: str | None, sections: list[Section]) -> list[Section]:
    """`sections` with every rule citation in their text a link to the rule (or dropped)."""
    cite = citer(k, title)
    for s in sections:
        s.title = words.cite_rules(s.title, None, ())
        for name in ("lines", "items", "numbered", "after", "pre"):
            setattr(s, name, [cite(x) for x in getattr(s, name)])
        if s.image:
            s.image = (s.image[0], words.cite_rules(s.image[1], None, ()))
    return sections


# -- what a mail is about ----------------------------------------------------------------
def kind_of(n: dict[str, Any]) -> str:
    """What a notice is about, as `LEAD` names it."""
    if n["type"] == "deadline.reminder":
        return n["type"]
    if n.get("request"):
        return "request"
    if n.get("consent"):  # the host's rollback waits for this seat's answer
        return "consent"
    if n.get("default_played") is not None or n.get("clock_played") is not None:
        return "default"
    if n["type"] == "seat.replaced" and n.get("yours"):
        return "yours"
    return str(n["type"])


def rank(n: dict[str, Any]) -> int:
    kind = kind_of(n)
    return LEAD.index(kind) + (len(LEAD) if n.get("held") else 0) if kind in LEAD else 2 * len(LEAD)


def lead(notices: list[dict[str, Any]]) -> dict[str, Any]:
    """The notice a mail is about: the newest of the most important kind."""
    return min(reversed(notices), key=rank)


def names(n: dict[str, Any]) -> list[str]:
    """The seat names a notice carries ("Seat N" for a notice without them)."""
    given = n.get("names")
    if isinstance(given, list) and given:
        return [str(x) for x in given]
    seat = int(n.get("seat") or 0)
    return words.names_of(seat + 1, {seat: n.get("seat_name")})


def game_label(n: dict[str, Any]) -> str:
    """`Die Händler #b51b`; `Sunday table (Die Händler)` when the name lacks the title."""
    name = str(n.get("game_name") or f"Game {n.get('game')}")
    title = str(n.get("title_name") or "")
    return f"{name} ({title})" if title and title.casefold() not in name.casefold() else name


def step_label(n: dict[str, Any]) -> str:
    """`step 14 — round 2, phase 3: moving carts` (Kontor's step, then the title's own
    position)."""
    out = f"step {n.get('phase')}" if n.get("phase") is not None else ""
    if n.get("headline"):
        out = f"{out}{DASH}{n['headline']}" if out else str(n["headline"])
    return out


def asked_of(n: dict[str, Any]) -> str:
    """What a notice asks of its seat, in words (the order kind when the title has none)."""
    if n.get("asked"):
        return str(n["asked"])
    kind = str((n.get("request") or {}).get("kind") or "an order").replace("_", " ")
    return f"Your {kind} order."


def writer_of(n: dict[str, Any]) -> str:
    m = n.get("message") or {}
    return words.seat_name(names(n), m.get("from")) if isinstance(m.get("from"), int) else "the host"


def gist(n: dict[str, Any], notices: list[dict[str, Any]]) -> str:
    """What the mail is about, in a few words, for its subject."""
    who = names(n)
    if n.get("request") or n["type"] == "deadline.reminder":
        ask = words.lower_first(words.short(asked_of(n), 60), who)
        if n["type"] == "deadline.reminder":
            left = n.get("seconds_left")
            return f"reminder: {ask}" + (f", due in {words.span(left)}" if isinstance(left, int | float) else "")
        where = words.round_part(n.get("headline"))
        extra = f" ({where})" if where and where.casefold() not in ask.casefold() else ""
        return f"your turn: {ask}{extra}"
    if kind_of(n) == "default":
        return f"your default order was played (step {n.get('phase')})"
    if kind_of(n) == "yours":
        return "a bot now plays your seat" if n.get("bot") else "another player now plays your seat"
    if n["type"] == "game.finished":
        end = words.finish_sentence(n.get("ranking") or [], who)
        return "game over" + end.removeprefix("The game is over").rstrip(".")
    if n["type"] == "message.received":
        return f"message from {writer_of(n)}"
    if n["type"] == "lobby.closing":
        return f"closes on {words.utc_time(n.get('closes_at'))} unless the host starts it"
    if n["type"] == "rematch.started":
        return f"rematch started: {(n.get('rematch') or {}).get('name') or 'a new game'}"
    if n.get("consent"):
        return "the host asks you to agree to go back to an earlier step"
    if n["type"] == "game.paused":
        return "the host paused the game; the clock is stopped"
    if n["type"] == "game.resumed":
        return f"the host resumed the game; deadline {words.utc_time(n.get('deadline'))}"
    if n["type"] == "deadline.extended":
        if absence_reason(n):
            return f"the deadline moved to {words.utc_time(n.get('deadline'))}: a player is away"
        return f"the host extended the deadline to {words.utc_time(n.get('deadline'))}"
    if n["type"] == "absence.summary":
        return "what was played for you while you were away"
    said = [s for x in sorted(notices, key=lambda x: x["type"] != "step.resolved") for s in x.get("sentences") or []]
    if said:
        return words.short(said[0], 70, clause=False)
    return f"step {n.get('phase')} resolved" if n["type"] == "step.resolved" else step_label(n) or "news"


def subject(notices: list[dict[str, Any]], digest: bool) -> str:
    first = notices[0]
    if digest:
        what = f"digest: {words.plural(len(notices), 'update')}"
    else:
        what = gist(lead(notices), notices)
    return once(game_label(first), what)


def once(label: str, what: str) -> str:
    """`label — what`, where `what` does not repeat `label` (nor itself)."""
    if what.casefold().startswith(label.casefold()):
        what = what[len(label):].lstrip(" :-\N{EM DASH}")
    return f"{label}{DASH}{what}" if what else label


# -- the letter --------------------------------------------------------------------------
def opening(notices: list[dict[str, Any]], seat: int, digest: bool) -> dict[str, Any]:
    """What the templates greet with: the seat's `name` and, for a notice, the `line`
    on what the mail is about; for a digest, how many `updates` from which game (`label`)."""
    first, n = notices[0], lead(notices)
    who = names(first)
    label = game_label(first)
    out = {"name": words.seat_name(who, seat), "label": label, "count": len(notices),
           "updates": words.plural(len(notices), "update")}
    if digest:
        return out
    step = f"step {n.get('phase')}"
    where = f"{step} ({n['headline']})" if n.get("headline") else step
    if n["type"] == "deadline.reminder":
        left = n.get("seconds_left")
        line = f"this is a reminder: {label} still waits for your order in {where}" + (
            f", and {words.span(left)} are left." if isinstance(left, int | float) and left > 0 else ".")
    elif kind_of(n) == "default":
        line = f"step {n.get('phase')} of {label} has resolved without your answer: its deadline passed."
    elif kind_of(n) == "yours" and n.get("farewell"):
        line = (f"the host handed your seat in {label} to a bot ({words.label(n['bot'])}): it plays that seat from "
                "now on." if n.get("bot") else f"the host handed your seat in {label} to another player.") + (
                " This is the last mail about the game to this address: nothing of the seat is sent here any "
                "more, and the links and reply addresses of earlier mails no longer work. You can still follow "
                "the game on its public page.")
    elif kind_of(n) == "yours":
        line = (f"the host handed your seat in {label} to a bot ({words.label(n['bot'])}): it plays for you from "
                "now on, and no mail will ask you for an order. You can still follow the game on its page, and "
                "your key still reads it as a spectator." if n.get("bot") else
                f"your seat in {label} is now played by another player's key; no mail will ask you for an order.")
    elif n.get("request"):
        line = f"it is your turn in {label}: {where}."
    elif n["type"] == "game.finished":
        line = f"{label} is over."
    elif n["type"] == "message.received":
        line = f"{writer_of(n)} wrote to you in {label}."
    elif n["type"] == "lobby.closing":
        line = f"{label} closes in less than a day unless the host starts it."
    elif n["type"] == "rematch.started":
        line = (f"the host of {label} started a rematch with the same players: "
                f"“{(n.get('rematch') or {}).get('name') or 'a new game'}”.")
    elif n["type"] == "game.paused":
        line = (f"the host paused {label}: the clock is stopped, and nothing is resolved until the host resumes "
                "it. You may still read the game, write messages and enter or change your order.")
    elif n["type"] == "game.resumed":
        line = f"the host resumed {label}: the clock runs again, and the deadline moved on by the time paused."
    elif n["type"] == "deadline.extended":
        line = (f"the deadline of {where} in {label} moved on: a player is away." if absence_reason(n) else
                f"the host extended the deadline of {where} in {label}.")
    elif n["type"] == "step.opened":
        waiting = words.listing([words.seat_name(who, s) for s in n.get("seats") or []])
        bot = " (a bot plays your seat)" if n.get("bot") else ""
        line = f"here is the news from {label}. Now {where} waits for {waiting}; nothing is asked of you{bot}."
    else:
        line = f"here is the news from {label}."
    return {**out, "line": line[:1].upper() + line[1:]}


def letter(k: Kontor, notices: list[dict[str, Any]], seat: int, zone: ZoneInfo,
           picture: tuple[str, str] | None = None) -> list[Section]:
    """The body: what happened since the seat's last mail (held notices), each notice's
    sections, then the table (once, the newest; with `picture`, its content id and SVG,
    shown in the HTML part), how to answer, and the rules and links."""
    earlier = [n for n in notices if n.get("held") and not n.get("whole")]
    out = [Section("Since your last mail", items=[f"Step {n.get('phase')}: {s}" for n in earlier
                                                  for s in n.get("sentences") or []])] if earlier else []
    out += [s for n in notices if n.get("whole") for s in notice_sections(n, zone)]
    out += [s for n in notices if not n.get("held") for s in notice_sections(n, zone)]
    table = [n for n in notices if n.get("summary")]
    if table:
        newest = table[-1]
        summary = str(newest["summary"])
        known = not newest.get("headline") or str(newest["headline"]).casefold() in summary.casefold()
        out.append(Section("The table", lines=[] if known else [step_label(newest).capitalize() + ":"],
                           pre=summary.splitlines(), image=picture and (f"cid:{picture[0]}", alt_text(newest))))
    asked = [n for n in notices if n.get("request")]
    if asked:
        out.append(answer_section(k, asked[-1], asked[-1]["request"]))
    out += closing_sections(k, notices, seat)
    return out


def alt_text(n: dict[str, Any]) -> str:
    """The picture's alternative text: the headline and the summary on one line."""
    text = " ".join(f"{n.get('headline') or ''}. {n.get('summary') or ''}".split()).lstrip(". ")
    return words.short(text, 1500, clause=False) if text else "The table"


def picture_of(k: Kontor, notices: list[dict[str, Any]]) -> str | None:
    """The title's SVG picture of the newest view the notices hold (the seat's own view:
    the notice is the redaction point, nothing else is read), or None."""
    viewed = [n for n in notices if isinstance(n.get("view"), dict) and n.get("title")]
    if not viewed:
        return None
    n = viewed[-1]
    try:
        game = k._title(str(n["title"]))
    except Exception:  # a title no longer registered: the mail goes without a picture
        return None
    svg = words.said("picture", game.picture, n["view"], names(n))
    return svg if svg and svg.lstrip().startswith("<svg") else None


def news(n: dict[str, Any]) -> list[str]:
    """A notice's sentences, but those the mail says in its own words (the step that
    opened: the mail says what it asks, or whom it waits for)."""
    said = list(n.get("sentences") or [])
    restated = {words.service_sentence(e, names(n)) for e in n.get("events") or [] if e.get("type") == "step_opened"}
    return [s for s in said if s not in restated]


def notice_sections(n: dict[str, Any], zone: ZoneInfo) -> list[Section]:
    kind, said = n["type"], news(n)
    req = n.get("request")
    out: list[Section] = []
    if kind == "step.resolved":
        out.append(Section(f"What happened in step {n.get('phase')}", items=said,
                           lines=[] if said else ["Nothing that you may see happened."]))
    elif kind == "game.finished":
        out.append(Section("Final ranking", lines=said,
                           items=words.ranking_lines(n.get("ranking") or [], names(n), n.get("seat"))))
    elif kind == "seat.replaced" and n.get("yours"):
        out.append(Section("Your seat", lines=said or ["A bot now plays your seat." if n.get("bot") else
                                                       "Another player now plays your seat."]))
    elif kind == "lobby.closing":
        out.append(Section("The game closes", lines=said))
    elif kind == "rematch.started":
        out += rematch_sections(n, said)
    elif kind in ("game.paused", "game.resumed", "deadline.extended"):
        out.append(Section("The clock", items=said))
        if n.get("deadline"):
            paused = " (the clock is stopped: it moves on by the time paused when the host resumes the game)" \
                if n.get("paused") else until(n["deadline"])
            out.append(Section("Deadline", lines=[deadline_text(n["deadline"], zone) + paused]))
    elif kind == "message.received":
        m = n.get("message") or {}
        to = m.get("to")
        whom = "everyone" if to in (None, "all") else "you" if to == [n.get("seat")] else \
            words.listing([words.seat_name(names(n), s) for s in to]) if isinstance(to, list) else str(to)
        out.append(Section(f"Message from {writer_of(n)}", lines=[f"To {whom}:"],
                           pre=str(m.get("text") or "").splitlines()))
    elif said:
        out.append(Section("What happened", items=said))
    if n.get("actions") and not n.get("held"):
        out.append(action_section(n["actions"]))
    if n.get("clock_played") is not None:
        out.append(Section("Your clock ran out", lines=[
            f"Your time bank ran out in step {n.get('phase')}, so this was played for you: {n['clock_played']}.",
            "Your clock gains its time per decision again from your next turn."]))
    if n.get("default_played") is not None:
        out.append(Section("Your default order was played", lines=[
            f"You did not answer step {n.get('phase')} before its deadline, so your default order was played: "
            f"{n['default_played']}."]))
    if req:
        title = "Reminder: your order is due" if kind == "deadline.reminder" else "Your turn"
        out.append(Section(title, lines=asked_lines(n, req)))
        choices = choice_section(req.get("prompt"), asked_of(n))
        if choices is not None:
            out.append(choices)
        deadline = req.get("deadline") or n.get("deadline")
        if req.get("clock"):  # a time bank: the seat's own clock, not the step's deadline
            lines = [req["clock"]]
            if req.get("clock_runs_out_at"):
                lines.append("It runs only while you are asked and have not answered; it runs out "
                             f"{deadline_text(req['clock_runs_out_at'], zone)} unless you answer first.")
            out.append(Section("Your clock", lines=lines))
        elif deadline:
            lines = [deadline_text(deadline, zone) + until(deadline)]
            if kind == "deadline.reminder" and isinstance(n.get("seconds_left"), int | float):
                lines.append(f"Time left when this reminder was sent: {words.span(n['seconds_left'])}.")
            out.append(Section("Deadline", lines=lines))
    return out


def asked_lines(n: dict[str, Any], req: dict[str, Any]) -> list[str]:
    """What is asked (the title's words), whether the step is sealed, and, when the title
    has no words for it, the legal choices in words where they are short."""
    lines = [asked_of(n)]
    if req.get("sealed") and "sealed" not in lines[0].casefold():
        lines.append("This step is sealed: nobody sees your order before the step resolves.")
    prompt = req.get("prompt")
    if prompt:
        said = prompt.get("default")
        lines.append(f"If you do not answer in time, this is played for you: {said}." if said else
                     "If you do not answer in time, your default order is played for you.")
        return lines
    if not n.get("asked"):
        said, left = words.choice_lines(req.get("choices"))
        if said:
            lines.append("Your choices: " + "; ".join(said) + ("; and more (see the links below)." if left else "."))
        elif left:
            lines.append("Your choices are too many to list here: see the links below.")
    default = req.get("default_order")
    if default is not None:
        lines.append(f"If you do not answer in time, your default order is played ({words.order_words(default)}).")
    return lines


#: Up to how many options a mail numbers (the rest: by their names, or on the page).
NUMBERED = 30
#: What a reply may name in plain words.
PLAIN = ("You may also write the order in plain words, naming goods, cities, cards and players as the game "
         "does (capitals and accents do not matter: Brügge, Bruegge, brugge).")


def choice_section(prompt: dict[str, Any] | None, asked: str = "") -> Section | None:
    """The seat's open decision as the mail offers it: what to do (unless `asked`, the
    line above it, says it already), the options numbered ("reply 2 to ..."), a number
    with its bounds or a sheet of numbers as a line to fill in; for a decision of several
    parts, an example reply of one line per part."""
    if not prompt:
        return None
    if asked and words.tidy(str(prompt.get("say") or "")).rstrip(".").casefold() == \
            words.tidy(asked).rstrip(".").casefold():
        prompt = {**prompt, "say": ""}
    ask = prompt.get("ask")
    if not ask:
        return Section("Your choices", lines=[x for x in (prompt.get("say"),) if x], after=[
            f"There is nothing to choose: {prompt.get('sentence') or 'your default order'}. Reply "
            "\N{LEFT DOUBLE QUOTATION MARK}default\N{RIGHT DOUBLE QUOTATION MARK} to play it now, or let the "
            "deadline play it."])
    lines = [x for x in (prompt.get("say"), ask.get("question")) if x]
    if len(lines) == 2 and lines[0] == lines[1]:
        lines.pop()
    numbered: list[str] = []
    after: list[str] = []
    if ask["kind"] == "choose":
        options = ask["options"]
        shown = options[:NUMBERED]
        numbered = [o["label"] + (f" — {o['hint']}" if o.get("hint") else "") for o in shown]
        if len(options) > NUMBERED:
            after.append(f"And {words.plural(len(options) - NUMBERED, 'more choice')}: write the name of the one "
                         "you want, or choose on your page.")
        which = min(2, len(shown))
        after.append(f"Reply {which} to choose {shown[which - 1]['label']}, or write the words of an option.")
    elif ask["kind"] == "number":
        after.append(f"Reply with {bounds(ask['number'])}.")
    else:
        sheet = ask["sheet"]
        after += ["Reply with one line giving a number for each, like this:",
                  "    " + ", ".join(f"{n['label']} {n['default'] if n.get('default') is not None else n['min']}"
                                     for n in sheet),
                  "; ".join(f"{n['label']}: {bounds(n)}" for n in sheet) + "."]
    example = prompt.get("example")
    if example:
        after += ["This decision has several parts: write one line for each, in order. For example, the lines",
                  *(f"    {line}" for line in example["lines"]),
                  f"mean: {example['sentence']}. A reply that stops early is answered with what is still missing, "
                  "and its choices."]
    after.append(PLAIN)
    return Section("Your choices", lines=lines, numbered=numbered, after=after)


def action_section(actions: dict[str, Any]) -> Section:
    """What the seat may do now without being asked, as lines to reply with."""
    ask = actions.get("ask") or {}
    labels = [o["label"] for o in ask.get("options") or []]
    lines = [x for x in (actions.get("say"), ask.get("question")) if x][:1]
    after = ["To do one of these, reply with it as a line, in words (for example "
             f"“{labels[0] if labels else 'play'}”); "
             "you get a receipt."]
    return Section("What you may do now", lines=lines, items=labels, after=after)


def bounds(n: dict[str, Any]) -> str:
    """`a whole number from 0 to 800 in steps of 10, or “pass”` (`Number.bounds`)."""
    return str(n["bounds"])


def until(at_iso: str) -> str:
    """` (in 23h 59m)` from now; empty once past."""
    try:
        left = (datetime.fromisoformat(at_iso) - datetime.now(UTC)).total_seconds()
    except ValueError:
        return ""
    return f" (in {words.span(left)})" if left > 0 else ""


def rematch_sections(n: dict[str, Any], said: list[str]) -> list[Section]:
    """The rematch of a finished game (`rematch.started`): what it is, the seat's page in
    it, and how to play it by mail."""
    again = n.get("rematch") or {}
    links = n.get("links") or {}
    out = [Section("The rematch", lines=said or ["The host started a rematch with the same players."])]
    how = n.get("by_mail")
    if not isinstance(how, dict):
        out.append(Section("Your seat", lines=[
            "Your seat in this game is held by someone else in the rematch (or by nobody you set up here): "
            f"follow it on its page, {again.get('url') or links.get('rematch')}."]))
        return out
    mine = words.seat_name(names(n), n.get("seat"))
    lines = [f"You play {mine} again, on your page of the rematch: {links.get('rematch_page')}"]
    if how.get("bot"):
        lines.append("A bot plays that seat, as in this game: nothing will be asked of you.")
    out.append(Section("Your seat", lines=lines))
    mail = []
    if how.get("same_address"):
        mail.append("Your mail settings came along: the rematch's mails come to this address, as in this game. "
                    "To stop them, remove the address on your page of the rematch.")
    else:
        mail.append("To be told by mail in the rematch, give your address on your page of the rematch.")
    if how.get("reply_to"):
        if how.get("reply_orders"):
            mail.append(f"Its step {how.get('step')} asks you now. Its own mail says what is asked; reply to that "
                        f"mail (it goes to {how['reply_to']}) with your order in plain words, as in this game.")
        else:
            mail.append(f"Its step {how.get('step')} asks you now. Its own mail says what is asked; the rematch "
                        f"takes orders by mail as signed order tokens, sent to {how['reply_to']}.")
    elif how.get("reply_orders") and not how.get("bot"):
        mail.append("When the rematch asks you something, its mail says what, and you reply to that mail with "
                    "your order in plain words, as in this game.")
    if not how.get("bot"):
        out.append(Section("Playing the rematch by mail", lines=mail))
    return out


def closing_sections(k: Kontor, notices: list[dict[str, Any]], seat: int) -> list[Section]:
    """The rules page and the links of every notice."""
    links: dict[str, str] = {}
    for n in notices:
        links.update(n.get("links") or {})
    first = notices[0]
    rules = links.pop("rules", None) or (
        f"{k.settings.public_url.rstrip('/')}/titles/{first['title']}/rules" if first.get("title") else None)
    out = []
    if rules:
        out.append(Section("Rules", lines=[f"The rules of {first.get('title_name') or 'the game'}, "
                                           f"as a player's guide: {rules}"]))
    if links:
        out.append(Section("Links", links=[(LINK_NAMES.get(name, name), url.replace("{seat}", str(seat)))
                                           for name, url in links.items()]))
    return out


#: How the links of a notice are named in a mail.
LINK_NAMES = {"page": "Your page (the game in your browser)", "game": "The game (JSON)", "view": "Your view (JSON)",
              "events": "The events (JSON)", "public": "The game's page, as the public sees it",
              "phase": "The open step and your choices (JSON)", "order": "Where an order goes (API)",
              "rematch": "The rematch's page", "rematch_page": "Your page in the rematch"}


def deadline_text(at_iso: str, zone: ZoneInfo) -> str:
    """`Wed 2033-05-18 05:33 CEST (Europe/Berlin, UTC+02:00) = 2033-05-18 03:33 UTC`."""
    at = datetime.fromisoformat(at_iso)
    local = at.astimezone(zone)
    if zone.key == "UTC":
        return f"{local:%a %Y-%m-%d %H:%M} UTC"
    offset = local.strftime("%z")
    return (f"{local:%a %Y-%m-%d %H:%M %Z} ({zone.key}, UTC{offset[:3]}:{offset[3:]}) = "
            f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC")


def orders_block(gid: str, seat: int, phase: int, order: Any) -> list[str]:
    """The block `service.channels.inbound.judge` reads; the line between is the order as compact JSON."""
    return [f"#orders {gid} {seat} {phase}", compact(order), "#end"]


def answer_section(k: Kontor, n: dict[str, Any], req: dict[str, Any]) -> Section:
    if req.get("prompt"):
        return words_answer_section(k, n, req)
    gid, phase = n["game"], n["phase"]
    order = compact(req.get("default_order"))
    address = req.get("reply_to") or orders_address(k)
    if address.startswith("orders+"):
        said = plain_form(req.get("default_order"))
        lines = ["Just reply to this mail and write your order at the top, above the quoted text; no signature "
                 "or program is needed (the reply goes to your secret address for this step)."]
        if said:
            lines += ["In plain words, your default order for this step is:", f"    {said}",
                      plain_hint(req.get("default_order"))]
        else:
            lines += ["This step's order is too nested to say in plain words: copy the block below into your "
                      "reply and edit the line between #orders and #end (JSON, or KEY=VALUE lines)."]
        page = (n.get("links") or {}).get("page")
        if page and "cap=" in page:
            lines.append(f"Or answer on your page, in the browser: {page}")
        lines.append("Keep this mail to yourself: whoever has that address or link can order for your seat in "
                     "this step.")
    else:
        lines = ["This game takes signed orders by mail. Make a token for your order with",
                 f"    kontor order {gid} --as <you> --step {phase} --json {shlex.quote(order)} --print-token",
                 f"replace the line between #orders and #end with that token, and send it to {address} "
                 "(the Reply-To of this mail)."]
    lines += ["With a block, the last #orders block in a mail counts; quoted lines (starting with >) and "
              "everything outside the block are ignored. You get a receipt by mail.",
              "The block holds your default order: what you play if you do not answer in time."]
    return Section("How to answer by reply", lines=lines, pre=orders_block(gid, n["seat"], phase,
                                                                          req.get("default_order")))


def words_answer_section(k: Kontor, n: dict[str, Any], req: dict[str, Any]) -> Section:
    """How to answer a decision the mail offers in words: reply with the number, the
    words or the order (at the step's secret address), or a signed token."""
    gid, phase, seat = n["game"], n["phase"], n["seat"]
    address = req.get("reply_to") or orders_address(k)
    if address.startswith("orders+"):
        lines = ["Just reply to this mail and write your answer at the top, above the quoted text: no signature or "
                 "program is needed (the reply goes to your secret address for this step). Reply "
                 "“default” to play your default "
                 "order now. The receipt repeats your order in words; until the deadline you may send another, "
                 "which replaces it."]
        page = (n.get("links") or {}).get("page")
        if page and "cap=" in page:
            lines.append(f"Or answer on your page, in the browser: {page}")
        lines.append("Keep this mail to yourself: whoever has that address or link can order for your seat in "
                     "this step.")
        return Section("How to answer by reply", lines=lines)
    lines = ["This game takes signed orders by mail. The kontor program offers these choices and signs your answer:",
             f"    kontor order {gid} --as <you> --step {phase} --print-token",
             f"Put the token it prints between a line #orders and a line #end, as below, and send it to {address} "
             "(the Reply-To of this mail). You get a receipt by mail."]
    return Section("How to answer by reply", lines=lines, pre=[f"#orders {gid} {seat} {phase}", "<your token>", "#end"])


def plain_hint(order: Any) -> str:
    """How to reply with the default order or another one, for a default order that
    plain words can say: another value of its first number or text field (`bid
    <number>`); for an order of lists and mappings, the block below."""
    scalar = next((key for key, value in order.items() if isinstance(value, int | str) and
                   not isinstance(value, bool)), None) if isinstance(order, dict) else None
    if scalar is not None:
        what = "number" if isinstance(order[scalar], int) else words.label(scalar)
        return (f"Reply with that (or just 'default') to play it, or with another value, as in "
                f"'{scalar} <{what}>'.")
    nested = isinstance(order, dict) and any(isinstance(v, list | dict) for v in order.values())
    passing = isinstance(order, dict) and {k: emptied(v) for k, v in order.items()} == order
    same = "that, 'default' or 'pass'" if passing else "that or 'default'"
    return (f"Reply with {same} to play it. "
            "To choose something instead, reply with the "
            "block below, its line between #orders and #end edited (JSON, or KEY=VALUE lines with JSON "
            "values)." if nested else "Reply with that (or just 'default') to play it.")


def compact(value: Any) -> str:
    return dumps(value, ensure_ascii=False)


def receipt_text(receipt: dict[str, Any] | None = None, deadline: str = "",
                 errors: list[tuple[str, str]] | None = None, said: str = "", events: list[str] | None = None) -> str:
    """The text of the receipt of an order by mail (`templates/receipt.txt`): accepted
    (`receipt`, the step's `deadline` in words and the order as understood, `said`: the
    title's sentence for an order in words, else the order's fields in words) or an
    action taken (`receipt` with `action`, and the `events` it made, in words) or refused
    (`errors`: code, detail). An order in words is not shown as JSON."""
    order = ""
    if receipt and "order" in receipt and not said:
        said = words.order_words(receipt["order"])
        order = json.dumps(receipt["order"], indent=2, ensure_ascii=False, sort_keys=True)
    return TEMPLATES.get_template("receipt.txt").render(receipt=receipt, deadline=deadline, errors=errors or [],
                                                        order=order, said=said, events=events or [])


def absence_reason(n: dict[str, Any]) -> bool:
    """Whether a `deadline.extended` notice tells of a deadline moved for an away seat
    (`service.core.absence`), not by the host."""
    return any(e.get("reason") == "absence" for e in n.get("events") or [])
