"""Orders by email: processing an inbound mail (parsed by `service.channels.inbound.parse`) and its receipt.

Both entry points (the SMTP listener `service.channels.inbound.smtpd` and the HTTP endpoint
`POST /inbound/email`) only keep the raw mail with its envelope (`store_inbound`) and
queue the job `inbound_mail`, which runs `process`. So a mail is never lost once
its sender was told it was taken, and every mail and its outcome can be audited for
30 days under `<prefix>:inbound:<mail id>`.

The order is the block between a line `#orders` (optionally `#orders <game> <seat>
<phase>`) and a line `#end`. Rulings (after the PBEM judges, anchors-protocols 4.2):

* Only the plain-text body counts (an HTML-only mail is read with its tags stripped);
  `format=flowed` is unwrapped; everything after the signature line `-- ` or an
  Outlook-style `-----Original Message-----` line, quoted lines (`>`, or an HTML
  `<blockquote>`), text outside the block and the subject are ignored. The last
  complete block wins; if that block is bad, the mail is refused (an earlier block is
  not tried: it is not what the player sent last).
* Inside the block: a compact JWS order token (all whitespace removed, so re-wrapping
  by mail clients is harmless), or, only where the game allows it and only when mailed
  to the seat's secret reply address, an order as a JSON object, `KEY=VALUE` lines, or
  plain words read against the step (`bid 300`, `pass`, `default`:
  `service.protocol.plain`).
* A mail to a reply address needs no block: what the sender wrote above the quote (up
  to an "On ... wrote:" line, quoted lines and the signature left out) is the order, read
  as a block's content is. Every line of it must belong to the order: a greeting is
  refused with the reason, never guessed around.
* A seat a bot plays takes no order at its reply address (`seat_played_by_bot`).
* A token is checked exactly as the HTTP `PUT` checks it (`signed_order`) and goes
  through the same `Kontor.submit`. The address it was mailed to does not matter.
* If the `#orders` line names game, seat and phase, they must agree with the token or
  the reply address.
* A mail for a seat gets a receipt, sent only to the address registered for that seat
  (its contact), never to `From` or the envelope sender: they are untrusted, so a forged
  `From` can neither redirect a receipt nor make Kontor mail a stranger. The seat is the
  one the order was taken for, else the one the reply address names, else the one the
  order token names. A mail that names no seat (to `orders@` without a token, to a
  made-up `orders+...@`) gets no answer: its refusal is recorded for the operator only.
  The Subject is echoed only when `From` is the registered address. A refusal quotes
  only the errors (`code` and `detail`), never game content.
* A mail beyond the bounds (`inbound_max_bytes`, `inbound_max_parts`,
  `inbound_max_depth`) is refused without its body being read (`parse.Bounds`).
* Automatic mail (`Auto-Submitted` other than `no`, `Precedence: bulk|junk|list`, a
  null envelope sender, our own sender address) is refused without a receipt, and no
  receipt ever goes to an address of our own mail domain: mail loops cannot start.
"""

from __future__ import annotations

import base64
import logging
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import TYPE_CHECKING, Any

from engine.core.choices import Prompt, fold, name_seats, named
from engine.core.errors import IllegalOrder
from service.channels import offer
from service.channels.inbound.parse import (
    AbsenceWords,
    Block,
    Bounds,
    Inbound,
    absence_words,
    address_of,
    parse,
    read_block,
    rollback_consent,
)
from service.channels.links import seat_holder, submit_keyless
from service.channels.mail.render import TEMPLATES, choice_section, citer, receipt_text
from service.channels.mail.smtp import send_message
from service.channels.notify import bound, former_reply_address, orders_address, parse_reply_address, reply_address
from service.core.auth import signed_order
from service.core.choices import order_sentence
from service.core.errors import Problem
from service.protocol.crypto import TokenError, unverified_claims
from service.protocol.plain import plain_form, read_plain
from service.store.json import dumps, loads
from service.words import cite_rules

if TYPE_CHECKING:
    from service.core.kontor import Kontor

log = logging.getLogger("kontor.inbound")

#: How long an inbound mail and its outcome are kept.
KEEP_SECONDS = 30 * 86400


# -- keeping the mail --------------------------------------------------------------------
def store_inbound(k: Kontor, raw: bytes, rcpt_tos: list[str], mail_from: str | None, via: str = "smtp") -> str:
    """Keep a raw mail and its envelope for 30 days and queue its processing; its id.
    `mail_from`: the envelope sender, '' for the null sender `<>`, None when unknown."""
    mail_id = f"in_{secrets.token_hex(10)}"
    now = k.now()
    fields = {"id": mail_id, "raw": base64.b64encode(raw).decode(), "rcpt_tos": dumps(rcpt_tos),
              "received_at": f"{now:.6f}", "via": via}
    if mail_from is not None:
        fields["mail_from"] = mail_from
    k.store.keep_inbound(mail_id, fields, now, KEEP_SECONDS)
    k.jobs.inbound(mail_id)
    return mail_id


def inbound_record(k: Kontor, mail_id: str) -> dict[str, Any]:
    """A kept inbound mail and its outcome (raw bytes decoded, JSON fields parsed)."""
    rec: dict[str, Any] = dict(k.store.inbound(mail_id))
    if rec:
        rec["raw"] = base64.b64decode(rec["raw"])
        for name in ("rcpt_tos", "errors", "order"):
            if name in rec:
                rec[name] = loads(rec[name])
    return rec


# -- processing (the job) ----------------------------------------------------------------
@dataclass
class Outcome:
    status: str  # accepted | refused | incomplete
    errors: list[tuple[str, str]] = field(default_factory=list)
    receipt: dict[str, Any] | None = None
    answer: bool = True  # send a receipt
    reply_to: str = ""
    #: An incomplete reply: the prompt after what it said, and where it belongs.
    missing: Incomplete | None = None


@dataclass
class Reading:
    """A reply's words as read against the seat's open decision or its actions: `kind`
    is "order" or "action" (complete; `value` is the order or action JSON) or
    "incomplete" (`prompt` says what is still missing)."""

    kind: str
    value: Any = None
    sentence: str = ""
    prompt: Prompt | None = None
    of: str = "order"


class Incomplete(Exception):
    """A reply that names only the first parts of a decision: what it said so far, what is
    still missing (`prompt`), for which game, seat and step."""

    def __init__(self, prompt: Prompt, of: str, gid: str, seat: int, phase: int) -> None:
        super().__init__("incomplete")
        self.prompt, self.of, self.gid, self.seat, self.phase = prompt, of, gid, seat, phase


def process(k: Kontor, mail_id: str) -> str:
    """Judge one kept mail: submit its order or refuse it, record the outcome on the mail
    and send the receipt. A duplicate job finds the outcome claimed and does nothing."""
    rec = inbound_record(k, mail_id)
    if not rec:
        log.warning("inbound mail %s is gone (kept for 30 days)", mail_id)
        return "missing"
    if not k.store.claim_inbound(mail_id):
        return "duplicate"
    s = k.settings
    bounds = Bounds(s.inbound_max_bytes, s.inbound_max_parts, s.inbound_max_depth)
    try:
        mail = parse(rec["raw"], bounds)
        try:
            outcome = judge(k, mail, rec["rcpt_tos"], rec.get("mail_from"), pending_of(k, mail))
        except RecursionError:  # parse bounds the nesting; a mail still too deep is refused, never a crash
            outcome = Outcome("refused", [("mail_too_deep", "the mail nests its parts too deeply; send the order "
                                                            "as plain text, without forwarded or attached mails")])
    except Exception:
        k.store.release_inbound(mail_id)  # let a retry of the job try again
        raise
    record(k, mail_id, mail, outcome)
    k.store.settle(k.settings)  # the receipt says the order is in: it is on disk first (issue 23)
    log.info("inbound mail %s %s %s", mail_id, outcome.status, outcome.errors[0][0] if outcome.errors else "")
    k.store.note_inbound(mail_id, send_receipt(k, mail, rec["rcpt_tos"], outcome, mail_id))
    return outcome.status


_RECEIPT_ID = re.compile(r"receipt\.(in_[0-9a-f]{20})@")


def pending_of(k: Kontor, mail: Inbound) -> dict[str, Any] | None:
    """The picks an earlier incomplete reply made, when `mail` answers its receipt (the
    receipt's Message-ID names that mail): `{"game", "seat", "phase", "of", "picks"}`.
    They count only for the same game, seat and step as this mail's reply address
    (`by_reply_address` checks), so naming another mail's receipt gains nothing."""
    for found in reversed(_RECEIPT_ID.findall(f"{mail.references} {mail.in_reply_to}")):
        rec = k.store.inbound(found)
        if rec and rec.get("status") == "incomplete" and "picks" in rec:
            return {"game": rec.get("game"), "seat": int(rec.get("seat") or -1), "phase": int(rec.get("phase") or -1),
                    "of": rec.get("of") or "order", "picks": loads(rec["picks"])}
    return None


def judge(k: Kontor, mail: Inbound, rcpt_tos: list[str], mail_from: str | None,
          pending: dict[str, Any] | None = None) -> Outcome:
    auto = mail.auto
    if mail_from == "":
        auto = "the mail has a null envelope sender (a bounce)"
    elif mail.sender.lower() == address_of(k.settings.mail_from).lower():
        auto = "the mail is from Kontor itself"
    if auto:
        return Outcome("refused", [("auto_submitted", auto)], answer=False)
    if mail.errors:
        return Outcome("refused", mail.errors, reply_to=orders_address(k))
    try:
        receipt, via = accept(k, mail.block, rcpt_tos or mail.recipients, mail.text, pending)
    except Incomplete as missing:
        return Outcome("incomplete", missing=missing,
                       reply_to=reply_address(k, missing.gid, missing.phase, missing.seat))
    except Problem as exc:
        return Outcome("refused", [(exc.code, exc.detail)], reply_to=orders_address(k))
    return Outcome("accepted", receipt=receipt, reply_to=via)


def accept(k: Kontor, block: Block | None, rcpt_tos: list[str],
           text: list[str] | None = None, pending: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    """Submit the block's order (without a block, at a reply address: what the sender
    wrote, as the order); the receipt and the address to reply to for a new one."""
    if block is None:
        target = reply_target(k, rcpt_tos)
        if target is None:
            raise Problem("no_order_block", "the mail holds no '#orders' ... '#end' block outside quoted text")
        if not text:
            raise Problem("no_order_block", "the reply holds no order: write it above the quoted mail, in plain "
                                            "words (e.g. 'bid 300', 'pass', 'default'), as KEY=VALUE lines or "
                                            "as JSON")
        said = absence_words(text, datetime.fromtimestamp(k.now(), UTC).date())
        if said is not None:
            return absence_by_mail(k, target[0], target[1], said), target[3]
        found = as_block("\n".join(text))
        if found.token:
            return by_token(k, found), orders_address(k)
        return by_reply_address(k, found, *target, pending=pending), target[3]
    if block.token:
        return by_token(k, block), orders_address(k)
    target = reply_target(k, rcpt_tos)
    if target is None:
        raise Problem("unsigned_order", f"mail to {orders_address(k)} needs a signed order token in the block; "
                                        "an order as JSON, KEY=VALUE lines or plain words is taken only at your "
                                        "step's reply address")
    return by_reply_address(k, block, *target, pending=pending), target[3]


def as_block(text: str) -> Block:
    """What a reply without a block wrote, read as a block's content would be."""
    return read_block("#orders", text.splitlines())


def by_token(k: Kontor, block: Block) -> dict[str, Any]:
    token = block.token or ""
    gid, seat, phase = token_target(token)
    _agree(block, (gid, seat, phase), "the token")
    claims, snap = signed_order(k, gid, phase, seat, token)
    return k.submit(gid, phase, seat, claims["order"], via="email", jti=claims["jti"], token=token, snapshot=snap)


def token_target(token: str) -> tuple[str, int, int]:
    """Game, seat and phase a token names, read from its payload before any check: only
    to know which seat's key to verify it with."""
    try:
        claims = unverified_claims(token)
    except TokenError as exc:
        raise Problem(exc.code, exc.message) from None
    if not isinstance(claims, dict):
        raise Problem("malformed_token", "the token payload is not a JSON object")
    gid, seat, phase = claims.get("game"), claims.get("seat"), claims.get("phase")
    if not isinstance(gid, str) or type(seat) is not int or type(phase) is not int:
        raise Problem("bad_claims", "an order token names its game, seat and step (its `phase` claim)")
    return gid, seat, phase


def reply_target(k: Kontor, rcpt_tos: list[str]) -> tuple[str, int, int, str] | None:
    """(game, seat, phase, address) of the first genuine reply address among the
    recipients; None if the mail went to none. A look-alike is refused, not ignored."""
    domain = "@" + k.settings.mail_domain.lower()
    for address in rcpt_tos:
        found = parse_reply_address(k, address)
        if found:
            gid, phase, seat = found
            return gid, seat, phase, address
        if former_reply_address(k, address):
            raise Problem("seat_changed", "this reply address was sent to the seat's former player: the host has "
                                          "given the seat to another player or a bot since, so it takes no order")
        if address.lower().startswith("orders+") and address.lower().endswith(domain):
            raise Problem("bad_reply_address", f"{address} is not a reply address this server made "
                                               "(mistyped, or changed)")
    return None


def by_reply_address(k: Kontor, block: Block, gid: str, seat: int, phase: int, address: str,
                     pending: dict[str, Any] | None = None) -> dict[str, Any]:
    """An order (or an action) mailed to the seat's reply address for step `phase`: JSON
    or KEY=VALUE lines as they are; words read against the seat's open decision (after
    the picks of an earlier incomplete reply to the same step, `pending`) or, when they
    say no order, against what it may do unprompted. A reply that names only the first
    parts of a decision raises `Incomplete`."""
    _agree(block, (gid, seat, phase), "the reply address")
    consent = rollback_consent(block.words) if block.words is not None else None
    if consent is not None:  # "agree to roll back" / "refuse the roll back" (issue 25)
        keyless(k, gid, seat)
        return {**k.rollback_consent(gid, seat, consent, via="email"), "rollback": True}
    if block.words is None:
        receipt = submit_keyless(k, gid, phase, seat, block.order, via="email")
        return {**receipt, "sentence": said_order(k, gid, seat, receipt.get("order"))}
    mine = pending if pending and (pending["game"], pending["seat"], pending["phase"]) == (gid, seat, phase) else None
    reading = read_reply(k, gid, phase, seat, block.words, mine)
    if reading.kind == "incomplete":
        assert reading.prompt is not None
        raise Incomplete(reading.prompt, reading.of, gid, seat, phase)
    if reading.kind == "action":
        keyless(k, gid, seat)
        done = k.act(gid, seat, reading.value, via="email")
        return {**done, "game": gid, "seat": seat, "action": reading.value, "sentence": reading.sentence}
    receipt = submit_keyless(k, gid, phase, seat, reading.value, via="email")
    return {**receipt, "sentence": reading.sentence} if reading.sentence else receipt


def absence_by_mail(k: Kontor, gid: str, seat: int, said: AbsenceWords) -> dict[str, Any]:
    """`away ... to ...` lines (added to the seat's planned absences) or `back` (none
    planned; one under way ends now), by the seat's reply address (issue 25)."""
    keyless(k, gid, seat)
    if said.back:
        done = k.set_absences(gid, seat, [])
        return {**done, "absence": "back"}
    now = k.now()
    planned = k.get_absences(gid, seat)["absences"]
    added = [{"from": start or datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "until": end}
             for start, end in said.away]
    done = k.set_absences(gid, seat, [*planned, *added])
    return {**done, "absence": "away"}


def absence_text(receipt: dict[str, Any]) -> str:
    """The receipt of `away` / `back` by mail, in words."""
    if receipt["absence"] == "back":
        head = "Welcome back: you have no absence planned now."
    else:
        head = f"Your absence is recorded. {receipt['text']}"
    return (f"{head}\n\nWhile you are away, the game either waits for you (a deadline that falls in your absence "
            "moves to its end, within the game's limit) or a bot plays your decisions, as the host chose; once you "
            "are back you are told what was played for you.\n\nReply 'back' to clear your absences, or 'away 20 "
            "December to 3 January' to add one.\n")


def said_order(k: Kontor, gid: str, seat: int, order: Any) -> str | None:
    """An order given as fields (JSON, KEY=VALUE) in the title's words, for its receipt
    (None: the title has none; the receipt then shows the fields)."""
    meta, _, state = k.store.snapshot(gid)
    if state is None or order is None:
        return None
    return order_sentence(k._title(meta["title"]), state, seat, order, k.names(gid, meta))


def keyless(k: Kontor, gid: str, seat: int) -> None:
    """What a keyless action by mail needs, as an order does (`submit_keyless`)."""
    if k._meta(gid).get("reply_orders") != "1":
        raise Problem("reply_orders_disabled", "this game takes orders by email only as signed order tokens")
    if (k.store.seats(gid).get(seat) or {}).get("bot"):
        raise Problem("seat_played_by_bot", "a bot plays this seat now (the host gave it one), so it takes no "
                                            "order by mail or link; the host can give the seat back to you")


#: Replies that play the default order.
DEFAULT_WORDS = ("default", "default order", "use default", "use default order", "use the default order")


def read_reply(k: Kontor, gid: str, phase: int, seat: int, text: str,
               pending: dict[str, Any] | None = None) -> Reading:
    """A reply's words read against `seat`'s open decision in step `phase` (its prompt:
    option numbers, an option's words, the order in plain words with display names, a
    sheet "Tuch 5, Wein 6"; after `pending` picks), else against what it may do
    unprompted ("play Subsidies"). A title that offers the decision in no words reads
    the reply as before (`service.protocol.plain`). Raises `Problem` saying what was
    expected."""
    meta, ph, state = k.store.snapshot(gid)
    if ph.get("id") != str(phase) or ph.get("status") != "collecting":
        raise Problem("stale_phase", f"step {phase} is no longer open for orders (the open step is "
                                     f"{ph.get('id')}, {ph.get('status')}); answer the newest mail")
    game = k._title(meta["title"])
    names = k.names(gid, meta)
    asked = any(r.seat == seat for r in game.requests(state))
    said = " ".join(fold(text).split())
    if asked and said in DEFAULT_WORDS:
        default = game.default_order(state, seat)
        first = game.prompt(state, seat, [])
        sentence = name_seats(game.describe_order(state, seat, default), names) or (
            offer.default_words(offer.prompt_of(game, state, seat, names=names), named(first, names), default)
            if first else None)
        return Reading("order", default, sentence or "")
    errors: list[IllegalOrder] = []
    if asked:
        first = game.prompt(state, seat, [])
        if first is None:
            return Reading("order", plain_order(k, gid, phase, seat, text))
        starts = [pending["picks"], []] if pending and pending.get("of") == "order" else [[]]
        for picks in starts:
            try:
                got = offer.read(game, state, seat, text, picks, names=names)
            except IllegalOrder as exc:
                errors.append(exc)
                continue
            if got.order is not None:
                return Reading("order", got.order, got.sentence)
            return Reading("incomplete", prompt=got)
    if game.action_prompt(state, seat, []) is not None:
        starts = [pending["picks"], []] if pending and pending.get("of") == "action" else [[]]
        for picks in starts:
            try:
                got = offer.read(game, state, seat, text, picks, action=True, names=names)
            except IllegalOrder as exc:
                errors.append(exc)
                continue
            if got.order is not None:
                return Reading("action", got.order, got.sentence, of="action")
            return Reading("incomplete", prompt=got, of="action")
    if not errors:
        raise Problem("not_requested", f"step {phase} asks nothing of you, and there is nothing you may do now")
    raise Problem("bad_order_words", f"{errors[0].message}. Reply with the number of a choice, its words, or "
                                     "your order in plain words, as the mail shows them")


def plain_order(k: Kontor, gid: str, phase: int, seat: int, text: str) -> dict[str, Any]:
    """The order `text` says in plain words for `seat` in step `phase` (read against that
    step's default order and order schema, `service.protocol.plain`)."""
    meta, ph, state = k.store.snapshot(gid)
    if ph.get("id") != str(phase) or ph.get("status") != "collecting":
        raise Problem("stale_phase", f"step {phase} is no longer open for orders (the open step is "
                                     f"{ph.get('id')}, {ph.get('status')}); answer the newest mail")
    game = k._title(meta["title"])
    mine = [r for r in game.requests(state) if r.seat == seat]
    if not mine:
        raise Problem("not_requested", f"step {phase} asks nothing of seat {seat}")
    default = game.default_order(state, seat)
    try:
        return read_plain(text, default, game.order_schema(mine[0].kind))
    except ValueError as exc:
        raise Problem("bad_order_words", f"{exc}. Write the order in plain words (e.g. "
                                         f"{plain_form(default, game.order_schema(mine[0].kind)) or 'default'!r}, "
                                         "or 'default'), as KEY=VALUE lines, or as JSON") from None


def _agree(block: Block, named: tuple[str, int, int], what: str) -> None:
    if block.head is not None and block.head != (named[0].lower(), named[1], named[2]):
        g, s, p = block.head
        raise Problem("order_block_mismatch", f"the '#orders' line names game {g} seat {s} step {p}, "
                                              f"but {what} is for game {named[0]} seat {named[1]} step {named[2]}")


def record(k: Kontor, mail_id: str, mail: Inbound, outcome: Outcome) -> None:
    fields: dict[str, str] = {"status": outcome.status, "processed_at": f"{k.now():.6f}",
                              "from": mail.sender, "message_id": mail.message_id}
    if outcome.errors:
        code, detail = outcome.errors[0]
        fields.update(code=code, detail=detail, errors=dumps(outcome.errors))
    if outcome.missing is not None:
        m = outcome.missing
        fields.update(game=m.gid, phase=str(m.phase), seat=str(m.seat), of=m.of, picks=dumps(list(m.prompt.picks)))
    if outcome.receipt and "rollback" in outcome.receipt:
        r = outcome.receipt
        fields.update(game=r["game"], phase=str(r["at_phase"]), seat=str(r["seat"]), rollback=r["status"],
                      by="reply_address")
    elif outcome.receipt and "absence" in outcome.receipt:
        r = outcome.receipt
        fields.update(game=r["game"], seat=str(r["seat"]), absence=dumps(r["absences"]), by="reply_address")
    elif outcome.receipt and "action" in outcome.receipt:
        r = outcome.receipt
        fields.update(game=r["game"], phase=str(r["phase"]), seat=str(r["seat"]), action=dumps(r["action"]),
                      by="reply_address")
    elif outcome.receipt:
        r = outcome.receipt
        fields.update(game=r["game"], phase=str(r["phase"]), seat=str(r["seat"]), receipt=r["receipt"],
                      order=dumps(r["order"]), by="token" if mail.block and mail.block.token else "reply_address")
    k.store.note_inbound(mail_id, fields)


# -- the receipt -------------------------------------------------------------------------
def seat_of(k: Kontor, mail: Inbound, rcpt_tos: list[str], outcome: Outcome) -> tuple[str, int] | None:
    """The game and seat a mail is for: the one its order was taken for, else the one its
    reply address names, else the one its order token names (read before any check: it
    only chooses where a refusal may go). None: the mail names no seat."""
    if outcome.receipt:
        return outcome.receipt["game"], int(outcome.receipt["seat"])
    if outcome.missing is not None:
        return outcome.missing.gid, outcome.missing.seat
    try:
        target = reply_target(k, rcpt_tos or mail.recipients)
    except Problem:
        target = None
    if target is not None:
        return target[0], target[1]
    if mail.block is not None and mail.block.token:
        try:
            gid, seat, _ = token_target(mail.block.token)
        except Problem:
            return None
        return gid, seat
    return None


def send_receipt(k: Kontor, mail: Inbound, rcpt_tos: list[str], outcome: Outcome,
                 mail_id: str = "") -> dict[str, str]:
    """Mail the receipt; what became of it, to record on the inbound mail. It goes only
    to the address registered for the seat the mail is for, never to the mail's `From`
    (anyone can forge it): a mail that names no seat, or a seat without an address, gets
    no answer (the refusal stays recorded on the inbound mail for the operator)."""
    if not outcome.answer:
        return {"receipt_status": "none"}
    seat = seat_of(k, mail, rcpt_tos, outcome)
    if seat is None:
        return {"receipt_status": "none", "receipt_error": "the mail names no seat: no receipt to its sender"}
    gid, n = seat
    contact = k.store.contact(gid, n) if k.store.meta(gid) else None
    if contact and not bound(contact, seat_holder(k, gid, n)):  # not the seat's holder's (a former holder's)
        contact = None
    to = (contact or {}).get("email") or ""
    if not to:
        return {"receipt_status": "none", "receipt_error": f"no address is registered for seat {n} of game {gid}"}
    if k.store.unsubscribed(to) or (contact or {}).get("email_status") == "unsubscribed":
        return {"receipt_status": "none", "receipt_error": "the seat's address has unsubscribed"}
    if to.lower().endswith("@" + k.settings.mail_domain.lower()):
        return {"receipt_status": "none", "receipt_error": "no receipt to an address of our own mail domain"}
    msg = receipt_message(k, mail, to, outcome, mail_id, echo=mail.sender.lower() == to.lower())
    if not k.settings.smtp_url:
        return {"receipt_status": "skipped", "receipt_id": msg["Message-ID"]}
    try:
        send_message(k.settings.smtp_url, msg)
    except Exception as exc:  # recorded: the order stands, only its receipt is missing
        log.warning("receipt for %s to %s failed: %s", mail.message_id, to, exc)
        return {"receipt_status": "failed", "receipt_error": str(exc)[:500]}
    return {"receipt_status": "sent", "receipt_id": msg["Message-ID"]}


def receipt_message(k: Kontor, mail: Inbound, to: str, outcome: Outcome, mail_id: str = "",
                    echo: bool = True) -> EmailMessage:
    """The receipt to `to`; `echo`: the mail's Subject is repeated (only when it came from
    that very address: a stranger's words are never mailed to a player)."""
    msg = EmailMessage(policy=policy.SMTP)
    subject = (mail.subject[:200] if echo else "") or "[Kontor] your mail"
    subject = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    msg["Subject"] = f"{subject} [order {outcome.status}]"
    msg["From"] = k.settings.mail_from
    msg["To"] = to
    msg["Reply-To"] = outcome.reply_to or orders_address(k)
    msg["Date"] = formatdate(localtime=False)
    # The receipt's id names the mail it answers, so a reply to an incomplete one goes on from its picks.
    msg["Message-ID"] = make_msgid(f"receipt.{mail_id}" if mail_id else "receipt", domain=k.settings.mail_domain)
    if mail.message_id:
        msg["In-Reply-To"] = mail.message_id
        msg["References"] = f"{mail.references} {mail.message_id}".strip()
    msg["Auto-Submitted"] = "auto-replied"
    msg["X-Auto-Response-Suppress"] = "All"
    msg["X-Kontor-Status"] = outcome.status
    if outcome.errors:
        msg["X-Kontor-Code"] = outcome.errors[0][0]
    if outcome.missing is not None:
        msg.set_content(missing_text(k, outcome.missing))
    elif outcome.receipt and "rollback" in outcome.receipt:
        msg.replace_header("Subject", f"{subject} [answer recorded]")
        msg.set_content(rollback_text(outcome.receipt))
    elif outcome.receipt and "absence" in outcome.receipt:
        msg.replace_header("Subject", f"{subject} [absence recorded]")
        msg.set_content(absence_text(outcome.receipt))
    elif outcome.receipt and "action" in outcome.receipt:
        msg.set_content(action_text(k, outcome.receipt))
    elif outcome.receipt:
        msg.set_content(accepted_text(k, outcome.receipt))
    else:
        msg.set_content(refused_text(outcome.errors, citer_of_mail(k, mail)))
    return msg


def refused_text(errors: list[tuple[str, str]], cite: Callable[[str], str] | None = None) -> str:
    """A refusal: its errors, their rule citations linked to the guide (`cite`) or dropped."""
    cite = cite or citer_for(None)
    return receipt_text(errors=[(code, cite(detail)) for code, detail in errors])


def citer_of_mail(k: Kontor, mail: Inbound) -> Callable[[str], str]:
    """Rule citations linked to the guide of the game the mail's reply address names."""
    title = None
    try:
        target = reply_target(k, mail.recipients)
        title = k.store.meta(target[0]).get("title") if target else None
    except Problem:
        pass
    return citer(k, title)


def citer_for(title: None) -> Callable[[str], str]:
    """No guide: every rule citation is dropped."""
    return lambda text: cite_rules(text, None, ())


def missing_text(k: Kontor, missing: Incomplete) -> str:
    """The answer to a reply that names only the first parts of a decision."""
    title = k.store.meta(missing.gid).get("title")
    return TEMPLATES.get_template("missing.txt").render(
        prompt=missing.prompt, choices=choice_section(missing.prompt.as_dict()), cite=citer(k, title))


def rollback_text(receipt: dict[str, Any]) -> str:
    """The receipt of a reply that agreed to or refused the host's rollback, in words."""
    lines = [{"applied": "You agreed, and so did every other player: the game is back.",
              "agreed": "Your agreement to go back is recorded; the other players are still asked.",
              "refused": "You refused, so the host's proposal to go back is dropped."}.get(receipt["status"], "")]
    if receipt.get("text"):
        lines.append(receipt["text"])
    pending = receipt.get("pending")
    if pending and pending.get("text"):
        lines.append(pending["text"])
    return "\n\n".join(x for x in lines if x) + "\n"


def action_text(k: Kontor, receipt: dict[str, Any]) -> str:
    title = k.store.meta(receipt["game"]).get("title")
    cite = citer(k, title)
    return receipt_text(receipt, said=cite(receipt.get("sentence") or ""),
                        events=[cite(str(e.get("text"))) for e in receipt.get("events") or [] if e.get("text")])


def accepted_text(k: Kontor, receipt: dict[str, Any]) -> str:
    from service.core.kontor import iso

    ph = k.store.phase(receipt["game"])
    if receipt["step_status"] == "resolving":
        deadline = "none: every seat asked has answered, the step is being resolved"
    else:
        deadline = f"{iso(ph.get('deadline'))} (you may replace the order until then)"
    title = k.store.meta(receipt["game"]).get("title")
    said = citer(k, title)(receipt["sentence"]) if receipt.get("sentence") else ""
    return receipt_text(receipt, deadline, said=said)
