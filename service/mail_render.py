"""Rendering a mail from a delivery's notices: text and HTML parts with the same content.

A notice is the redaction point (`service.notify`): `render` reads nothing of the game
from the store, so a mail can never show a seat more than its notices hold. The rulings
on headers, threading and the `#orders` block are in `service.mail`.
"""

from __future__ import annotations

import email.policy
import json
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from html import escape
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from service.mail import unsubscribe_token, unsubscribe_url
from service.notify import orders_address

if TYPE_CHECKING:
    from service.games import Kontor


#: SMTP line endings, no header folding below the RFC 5322 line limit.
POLICY = email.policy.SMTP.clone(max_line_length=998)
#: Which notice a mail's subject is about, most important first.
HEADLINE = ("request", "game.finished", "deadline.reminder", "message.received", "step.opened", "step.resolved")
#: Event fields every event has; an event line shows the others.
EVENT_BASICS = ("id", "at", "type", "visible_to")


@dataclass
class Section:
    """A part of a mail body, rendered the same way as text and as HTML."""

    title: str
    level: int = 2
    lines: list[str] = field(default_factory=list)  # paragraphs; one indented by 4 spaces is code
    items: list[str] = field(default_factory=list)  # a bulleted list
    pre: list[str] = field(default_factory=list)  # a block shown as is (monospace)
    links: list[tuple[str, str]] = field(default_factory=list)


def render(k: Kontor, gid: str, seat: int, contact: dict[str, Any], notices: list[dict[str, Any]],
           delivery_id: str, digest: bool = False) -> EmailMessage:
    """The mail of one delivery to `seat` (at `contact["email"]`): one notice, the
    notices of one commit, or a digest of many."""
    first, domain = notices[0], k.settings.mail_domain
    zone = ZoneInfo(contact.get("timezone") or "UTC")
    title = subject(notices, digest)
    intro = (f"{first.get('game_name') or 'Game'} (game {gid}) · {first.get('title_name')} · "
             f"you are seat {seat}" + (f" ({first['seat_name']})" if first.get("seat_name") else ""))
    if digest:
        intro += f"\nDigest: {len(notices)} updates since the last one."
    sections = [s for n in notices for s in notice_sections(k, n, zone)] + closing_sections(notices, seat)
    address = contact["email"]
    footer = [f"You get this mail because seat {seat} of game {gid} gave this address as its contact; "
              "change that in the seat's contact settings.",
              f"Stop every Kontor mail to this address: {unsubscribe_url(k, address)}"]

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
    msg.set_content(as_text(intro, sections, footer), cte="quoted-printable")
    msg.add_alternative(as_html(title, intro, sections, footer), subtype="html", cte="quoted-printable")
    return msg


def reply_to(k: Kontor, notices: list[dict[str, Any]]) -> str:
    """Where an answer goes: the newest request's `reply_to`, else the orders address."""
    asked = [n["request"] for n in notices if n.get("request")]
    return (asked[-1].get("reply_to") if asked else None) or orders_address(k)


def headline(notices: list[dict[str, Any]]) -> dict[str, Any]:
    """The notice a mail is about: the newest of the most important kind."""
    def rank(n: dict[str, Any]) -> int:
        return 0 if n.get("request") else HEADLINE.index(n["type"])

    return min(reversed(notices), key=rank)


def subject(notices: list[dict[str, Any]], digest: bool) -> str:
    first = notices[0]
    if digest:
        what = f"digest: {len(notices)} update{'s' if len(notices) != 1 else ''}"
    else:
        lead = headline(notices)
        what = summary(lead) if lead.get("phase") is None else f"phase {lead['phase']}: {summary(lead)}"
    return f"[Kontor] {first.get('game_name') or 'Game'} ({first['game']}) · {first.get('title_name')} · {what}"


def summary(n: dict[str, Any]) -> str:
    """What a notice says, in a few words."""
    req = n.get("request")
    if req:
        return f"your turn ({req['kind']}{', sealed' if req.get('sealed') else ''})"
    kind = n["type"]
    if kind == "step.opened":
        return f"{n.get('kind') or 'a step'} opened, nothing asked of you"
    if kind == "step.resolved":
        return "resolved"
    if kind == "game.finished":
        return "game over"
    if kind == "deadline.reminder":
        return "reminder: your order is due"
    if kind == "message.received":
        return f"message from seat {(n.get('message') or {}).get('from')}"
    return str(kind)


def notice_sections(k: Kontor, n: dict[str, Any], zone: ZoneInfo) -> list[Section]:
    phase = f"Phase {n['phase']}: " if n.get("phase") is not None else ""
    out = [Section(phase + summary(n), level=1)]
    if n.get("events"):
        out.append(Section("What happened", items=[event_line(e) for e in n["events"]]))
    if n["type"] == "game.finished":
        out.append(Section("Final ranking", items=[ranking_line(r, n["seat"]) for r in n.get("ranking") or []]))
    if n["type"] == "message.received":
        out.append(message_section(n.get("message") or {}))
    req = n.get("request")
    if req:
        out.append(Section("What is asked", lines=[asked_line(req), "Legal choices:"], pre=outline(req.get("choices"))))
    deadline = (req or {}).get("deadline") or n.get("deadline")
    if deadline and n["type"] in ("step.opened", "deadline.reminder"):
        out.append(Section("Deadline", lines=[deadline_text(deadline, zone)]))
    if req:
        out.append(answer_section(k, n, req))
    return out


def closing_sections(notices: list[dict[str, Any]], seat: int) -> list[Section]:
    """The seat's newest view (once, not per notice) and the links of every notice."""
    out = []
    viewed = [n for n in notices if n.get("view") is not None]
    if viewed:
        newest = viewed[-1]
        out.append(Section(f"Your view (after phase {newest.get('phase')})", pre=outline(newest["view"])))
    links: dict[str, str] = {}
    for n in notices:
        links.update(n.get("links") or {})
    if links:
        out.append(Section("Links", links=[(name, url.replace("{seat}", str(seat))) for name, url in links.items()]))
    return out


def event_line(ev: dict[str, Any]) -> str:
    """`bought: seat=0, goods=[], paid=0`: the type and every field but the basics."""
    rest = ", ".join(f"{key}={scalar(v)}" for key, v in ev.items() if key not in EVENT_BASICS)
    return f"{ev.get('type')}: {rest}" if rest else str(ev.get("type"))


def ranking_line(r: dict[str, Any], seat: int) -> str:
    rest = ", ".join(f"{key} {scalar(v)}" for key, v in r.items() if key not in ("place", "seat"))
    you = " (you)" if r.get("seat") == seat else ""
    return f"{r.get('place')}. seat {r.get('seat')}{you}" + (f": {rest}" if rest else "")


def message_section(m: dict[str, Any]) -> Section:
    to = m.get("to")
    to_text = "everyone" if to in (None, "all") else ", ".join(f"seat {s}" for s in to) if isinstance(to, list) \
        else f"seat {to}"
    return Section("Message", lines=[f"From seat {m.get('from')} to {to_text}:"],
                   pre=str(m.get("text") or "").splitlines())


def asked_line(req: dict[str, Any]) -> str:
    if req.get("sealed"):
        return f"{req['kind']}, sealed: no seat sees another's order before the step resolves."
    return f"{req['kind']}, open: the other seats see your order."


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
    """The block `service.inbound` reads; the line between is the order as compact JSON."""
    return [f"#orders {gid} {seat} {phase}", compact(order), "#end"]


def answer_section(k: Kontor, n: dict[str, Any], req: dict[str, Any]) -> Section:
    gid, phase = n["game"], n["phase"]
    order = compact(req.get("default_order"))
    address = req.get("reply_to") or orders_address(k)
    if address.startswith("orders+"):
        lines = ["Reply to this mail: its Reply-To is your secret address for this step, so no signature is "
                 "needed. Copy the block below into your reply (above any quoted text), edit the JSON line "
                 "to your order, and send.",
                 "Keep this mail to yourself: whoever has that address can order for your seat in this step."]
    else:
        lines = ["This game takes signed orders by mail. Make a token for your order with",
                 f"    kontor order {gid} --as <you> --phase {phase} --json {shlex.quote(order)} --print-token",
                 f"replace the JSON line of the block below with that token, and send it to {address} "
                 "(the Reply-To of this mail)."]
    lines += ["The last #orders block in a mail counts; quoted lines (starting with >) and everything outside "
              "the block are ignored. You get a receipt by mail.",
              "The block holds your default order: what you play if you do not answer in time."]
    return Section("How to answer by reply", lines=lines, pre=orders_block(gid, n["seat"], phase,
                                                                          req.get("default_order")))


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def scalar(value: Any) -> str:
    return value if isinstance(value, str) else compact(value)


def outline(value: Any, depth: int = 0) -> list[str]:
    """A JSON value as an indented outline: `key: value`, nested values one level in;
    small values (up to 60 characters as JSON) stay on their key's line."""
    pad = "  " * depth
    if isinstance(value, dict):
        entries = list(value.items())
    elif isinstance(value, list):
        entries = [(f"[{i}]", v) for i, v in enumerate(value)]
    else:
        return [pad + scalar(value)]
    lines = []
    for key, v in entries:
        if isinstance(v, dict | list) and len(compact(v)) > 60:
            lines.append(f"{pad}{key}:")
            lines.extend(outline(v, depth + 1))
        else:
            lines.append(f"{pad}{key}: {scalar(v)}")
    return lines


def as_text(intro: str, sections: list[Section], footer: list[str]) -> str:
    out = [intro, ""]
    for s in sections:
        out += [s.title, ("=" if s.level == 1 else "-") * len(s.title)]
        out += s.lines
        out += [f"- {item}" for item in s.items]
        out += [f"{name}: {url}" for name, url in s.links]
        if s.pre:
            out += ["", *s.pre]
        out.append("")
    out += ["-- ", *footer]
    return "\n".join(out) + "\n"


def as_html(title: str, intro: str, sections: list[Section], footer: list[str]) -> str:
    out = ['<!doctype html><html><head><meta charset="utf-8">', f"<title>{escape(title)}</title></head><body>",
           *(f"<p>{escape(line)}</p>" for line in intro.splitlines())]
    for s in sections:
        out.append(f"<h{s.level + 1}>{escape(s.title)}</h{s.level + 1}>")
        out += [f"<pre>{escape(line.strip())}</pre>" if line.startswith("    ") else f"<p>{escape(line)}</p>"
                for line in s.lines]
        if s.items:
            out.append("<ul>" + "".join(f"<li>{escape(item)}</li>" for item in s.items) + "</ul>")
        if s.links:
            out.append("<ul>" + "".join(f'<li><a href="{escape(url)}">{escape(name)}</a></li>'
                                        for name, url in s.links) + "</ul>")
        if s.pre:
            out.append(f"<pre>{escape(chr(10).join(s.pre))}</pre>")
    out += ["<hr>", *(f"<p><small>{escape(line)}</small></p>" for line in footer), "</body></html>"]
    return "\n".join(out) + "\n"


