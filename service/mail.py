"""Email out: one mail per delivery, rendered from that delivery's notices only.

A notice is the redaction point (`service.notify`): `render` reads nothing of the game
from the store, so a mail can never show a seat more than its notices hold.

Rulings:
* Every mail has a text and an HTML part with the same content; the HTML escapes every
  value. Headers stay on one line (`POLICY`): RFC 8058 wants `List-Unsubscribe` and
  `List-Unsubscribe-Post` covered by the relay's DKIM signature, which folding breaks.
* A mail is threaded per game and seat (`In-Reply-To`/`References` a stable id), so a
  player's mail client keeps one conversation per seat.
* A mail that asks something carries the `#orders <game> <seat> <phase>` ... `#end`
  block prefilled with the default order, which `service.inbound` reads back.
* Unsubscribing is per address, for every game (`store.set_unsubscribed`); the link's
  token names the address (base64url, readable by whoever holds the mail) and an HMAC of
  it under the server secret, so no one can unsubscribe an address they did not mail.
* The send job is idempotent: it acts only on a `queued`/`retrying` delivery whose
  attempt it has not made yet. It checks the address again just before sending (an
  unsubscribed, changed or cleared address is `suppressed`). SMTP failures never raise:
  a temporary one is retried on `mail_retry` (+/-20 % jitter), a permanent one, or the
  last temporary one, marks the delivery `failed` and the seat's contact
  `email_status="failed"` (the host sees it); a later sent mail sets it back to `ok`.
"""

from __future__ import annotations

import base64
import email.policy
import hmac
import json
import logging
import re
import secrets
import shlex
import smtplib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from html import escape
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from service.config import Settings
from service.notify import Notifier, mac, mask, orders_address
from service.problems import Problem
from service.smtp import send_message, temporary

if TYPE_CHECKING:
    from service.games import Kontor

log = logging.getLogger("kontor.mail")

#: SMTP line endings, no header folding below the RFC 5322 line limit.
POLICY = email.policy.SMTP.clone(max_line_length=998)
#: The delivery states a send job acts on (any other: the job is a duplicate).
SENDABLE = ("queued", "retrying")
#: Which notice a mail's subject is about, most important first.
HEADLINE = ("request", "game.finished", "deadline.reminder", "message.received", "step.opened", "step.resolved")
#: Event fields every event has; an event line shows the others.
EVENT_BASICS = ("id", "at", "type", "visible_to")

_jitter = secrets.SystemRandom()


# -- unsubscribe links ---------------------------------------------------------------------
def unsubscribe_token(k: Kontor, address: str) -> str:
    """`<base64url of the address>.<HMAC of it>` (the address lowercased)."""
    addr = address.strip().lower()
    encoded = base64.urlsafe_b64encode(addr.encode()).decode().rstrip("=")
    return f"{encoded}.{mac(k, 'unsub', addr, length=24)}"


def unsubscribe_address(k: Kontor, token: str) -> str:
    """The address a genuine unsubscribe token names; any other token: `no_such_token`."""
    encoded, _, signature = token.rpartition(".")
    addr = None
    if encoded and len(token) <= 1024:
        try:
            addr = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
        except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
            addr = None
    if addr is None or not hmac.compare_digest(signature.encode(), mac(k, "unsub", addr, length=24).encode()):
        raise Problem("no_such_token", "this unsubscribe link is not valid (it may have been cut or mistyped)")
    return addr


def unsubscribe_by_token(k: Kontor, token: str, on: bool = True) -> str:
    """Unsubscribe (`on=False`: subscribe again) the address a token names; the address.
    Used by the unsubscribe links and by mail to `unsubscribe@<mail_domain>`. A token
    that is not genuine changes nothing (`no_such_token`)."""
    address = unsubscribe_address(k, token)
    k.store.set_unsubscribed(address, on)
    return address


def unsubscribe_url(k: Kontor, address: str) -> str:
    return f"{k.settings.public_url.rstrip('/')}/unsubscribe/{unsubscribe_token(k, address)}"


# -- rendering -----------------------------------------------------------------------------
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


# -- sending (the RQ job body) -------------------------------------------------------------
def send_delivery(k: Kontor, gid: str, delivery_id: str, attempt: int) -> str:
    """Make attempt `attempt` of mail delivery `delivery_id`; its outcome: `sent`,
    `retrying`, `failed`, `suppressed`, `skipped`, or `noop` for a duplicate job."""
    rec = k.store.delivery(gid, delivery_id)
    if rec is None or rec["status"] not in SENDABLE or attempt <= int(rec.get("attempts") or 0):
        return "noop"
    seat, address = rec["seat"], rec["target"]
    contact = k.store.contact(gid, seat) or {}
    reason = suppressed_because(k, address, contact)
    if reason:
        return finish(k, gid, delivery_id, "suppressed", last_error=reason)
    if not k.settings.smtp_url:
        return finish(k, gid, delivery_id, "skipped", last_error="no SMTP server is configured (KONTOR_SMTP_URL)")
    msg = render(k, gid, seat, contact, rec["payload"], delivery_id, digest=bool(rec.get("digest")))
    try:
        send_message(k.settings.smtp_url, msg)
    except OSError as exc:  # smtplib's errors are OSErrors too
        return failed_attempt(k, gid, rec, attempt, exc)
    if contact.get("email_status") == "failed":
        k.store.update_contact(gid, seat, email_status="ok")
    return finish(k, gid, delivery_id, "sent", attempts=attempt, last_error=None)


def suppressed_because(k: Kontor, address: str, contact: dict[str, Any]) -> str | None:
    """Why nothing may go to `address` any more, if so."""
    if k.store.unsubscribed(address) or contact.get("email_status") == "unsubscribed":
        return "the address has unsubscribed"
    if (contact.get("email") or "").lower() != address.lower():
        return "the seat's address changed before the mail was sent"
    return None


def failed_attempt(k: Kontor, gid: str, rec: dict[str, Any], attempt: int, exc: OSError) -> str:
    """Retry a temporary failure while `mail_retry` has delays left; else give up."""
    from service.games import iso

    now = k.now()
    error = smtp_error(exc, rec["target"])
    delays = Settings.delays(k.settings.mail_retry)
    if temporary(exc) and attempt <= len(delays):
        delay = delays[attempt - 1] * _jitter.uniform(0.8, 1.2)
        finish(k, gid, rec["id"], "retrying", attempts=attempt, last_error=error, next_attempt_at=iso(now + delay))
        k.jobs.mail(gid, rec["id"], attempt + 1, delay=delay)
        return "retrying"
    if temporary(exc):
        error += f" (gave up after {attempt} attempts)"
    log.warning("mail %s to seat %s of %s failed: %s", rec["id"], rec["seat"], gid, error)
    finish(k, gid, rec["id"], "failed", attempts=attempt, last_error=error)
    k.store.update_contact(gid, rec["seat"], email_status="failed", last_error=f"{iso(now)}: {error}")
    return "failed"


def smtp_error(exc: OSError, address: str) -> str:
    """The SMTP code and message (or the connection error), the address masked: the host
    reads it."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        text = "; ".join(f"{code} {reply.decode(errors='replace')}" for code, reply in exc.recipients.values())
    elif isinstance(exc, smtplib.SMTPResponseException):
        reply = exc.smtp_error
        text = f"{exc.smtp_code} {reply.decode(errors='replace') if isinstance(reply, bytes) else reply}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return re.sub(re.escape(address), mask(address), text, flags=re.IGNORECASE)


def finish(k: Kontor, gid: str, delivery_id: str, status: str, **fields: Any) -> str:
    """Record a delivery's new status (and fields); the status."""
    from service.games import iso

    k.store.update_delivery(gid, delivery_id, status=status, updated_at=iso(k.now()),
                            next_attempt_at=fields.pop("next_attempt_at", None), **fields)
    return status


# -- digests -------------------------------------------------------------------------------
def send_digests(k: Kontor, now: float) -> int:
    """Send the digest mails that are due; how many. Called by every sweep. A due seat is
    taken off the schedule with ZREM: only the process whose ZREM removed it sends."""
    key = f"{k.store.prefix}:digests"
    made = 0
    due: list[str] = k.r.zrangebyscore(key, "-inf", now)  # type: ignore[assignment]
    for member in due:
        gid, _, seat = member.rpartition(":")
        if k.r.zrem(key, member) and send_digest(k, gid, int(seat), now):
            made += 1
    return made


def send_digest(k: Kontor, gid: str, seat: int, now: float) -> bool:
    """One mail with every notice waiting for the seat, to its current address. Ruling:
    a seat that cleared its address since gets nothing (its notices stay readable through
    the API)."""
    notices = k.store.take_digest(gid, seat)
    address = (k.store.contact(gid, seat) or {}).get("email")
    if not notices or not address:
        return False
    did = Notifier(k).record(gid, seat, "email", notices, address, now)
    k.store.update_delivery(gid, did, digest=True)
    k.jobs.mail(gid, did)
    return True
