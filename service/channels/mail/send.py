"""Email out: one mail per delivery, rendered from that delivery's notices only.

A notice is the redaction point (`service.channels.notify`): `render` (`service.channels.mail.render`)
reads nothing of the game from the store, so a mail can never show a seat more than its
notices hold.

Rulings:
* Every mail has a text and an HTML part with the same content; the HTML escapes every
  value. Headers stay on one line (`service.channels.mail.render.POLICY`): RFC 8058 wants `List-Unsubscribe` and
  `List-Unsubscribe-Post` covered by the relay's DKIM signature, which folding breaks.
* A mail is threaded per game and seat (`In-Reply-To`/`References` a stable id), so a
  player's mail client keeps one conversation per seat.
* A mail that asks something carries the `#orders <game> <seat> <phase>` ... `#end`
  block prefilled with the default order, which `service.channels.inbound.judge` reads back.
* Unsubscribing is per address, for every game (`store.set_unsubscribed`); the link's
  token names the address (base64url, readable by whoever holds the mail) and an HMAC of
  it under the server secret, so no one can unsubscribe an address they did not mail.
* The send job is idempotent: it acts only on a `queued`/`retrying` delivery whose
  attempt it has not made yet. It checks the address again just before sending (an
  unsubscribed, changed or cleared address is `suppressed`). SMTP failures never raise:
  a temporary one is retried on `mail_retry` (+/-20 % jitter; the rules shared with
  webhooks are in `service.channels.retry`), a permanent one, or the last temporary one,
  marks the delivery `failed` and the seat's contact `email_status="failed"` (the host
  sees it); a later sent mail sets it back to `ok`.
"""

from __future__ import annotations

import logging
import re
import smtplib
from typing import TYPE_CHECKING, Any

from service.channels import retry
from service.channels.links import seat_holder
from service.channels.mail.render import render
from service.channels.mail.smtp import send_message, temporary
from service.channels.notify import Notifier, bound, mask
from service.config import Settings
from service.core.clock import iso
from service.logs import redact

if TYPE_CHECKING:
    from service.core.kontor import Kontor

log = logging.getLogger("kontor.mail")


# -- sending (the RQ job body) -------------------------------------------------------------
def send_delivery(k: Kontor, gid: str, delivery_id: str, attempt: int) -> str:
    """Make attempt `attempt` of mail delivery `delivery_id`; its outcome: `sent`,
    `retrying`, `failed`, `suppressed`, `skipped`, or `noop` for a duplicate job."""
    rec = k.store.delivery(gid, delivery_id)
    if rec is None or not retry.is_due(rec, attempt):
        return "noop"
    seat, address = rec["seat"], rec["target"]
    contact = k.store.contact_for(gid, rec)  # a farewell's: the former contact's
    reason = suppressed_because(k, address, contact)
    if reason:
        return retry.mark(k, gid, delivery_id, "suppressed", last_error=reason)
    if not k.settings.smtp_url:
        return retry.mark(k, gid, delivery_id, "skipped", last_error="no SMTP server is configured (KONTOR_SMTP_URL)")

    msg = render(k, gid, seat, contact, rec["payload"], delivery_id, digest=bool(rec.get("digest")))
    try:
        send_message(k.settings.smtp_url, msg)
    except OSError as exc:  # smtplib's errors are OSErrors too
        return failed_attempt(k, gid, rec, attempt, exc)
    if contact.get("email_status") == "failed" and not rec.get("former"):
        k.store.update_contact(gid, seat, email_status="ok")
    return retry.mark(k, gid, delivery_id, "sent", attempts=attempt, last_error=None)


def suppressed_because(k: Kontor, address: str, contact: dict[str, Any]) -> str | None:
    """Why nothing may go to `address` any more, if so."""
    if k.store.unsubscribed(address) or contact.get("email_status") == "unsubscribed":
        return "the address has unsubscribed"
    if (contact.get("email") or "").lower() != address.lower():
        return "the seat's address changed before the mail was sent"
    return None


def failed_attempt(k: Kontor, gid: str, rec: dict[str, Any], attempt: int, exc: OSError) -> str:
    """Retry a temporary failure while `mail_retry` has waits left (`service.channels.retry`);
    else give up: the delivery and the seat's address are `failed`."""
    now = k.now()
    error = smtp_error(exc, rec["target"])
    delay = retry.next_delay(Settings.delays(k.settings.mail_retry), attempt) if temporary(exc) else None
    if delay is not None:
        return retry.retry_later(k, gid, rec["id"], attempt, delay, k.jobs.mail, now, last_error=error)
    if temporary(exc):
        error += f" (gave up after {attempt} attempts)"
    log.warning("mail %s to seat %s of %s failed: %s", rec["id"], rec["seat"], gid, error)
    retry.mark(k, gid, rec["id"], "failed", now, attempts=attempt, last_error=error)
    if not rec.get("former"):  # a farewell's failure is not the seat's current contact's
        k.store.update_contact(gid, rec["seat"], email_status="failed", last_error=f"{iso(now)}: {error}")
    return "failed"


def smtp_error(exc: OSError, address: str) -> str:
    """The SMTP code and message (or the connection error), the address (and any other,
    or a credential) masked: the host reads it, the logs show it."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        text = "; ".join(f"{code} {reply.decode(errors='replace')}" for code, reply in exc.recipients.values())
    elif isinstance(exc, smtplib.SMTPResponseException):
        reply = exc.smtp_error
        text = f"{exc.smtp_code} {reply.decode(errors='replace') if isinstance(reply, bytes) else reply}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return redact(re.sub(re.escape(address), mask(address), text, flags=re.IGNORECASE))


# -- digests -------------------------------------------------------------------------------
def send_digests(k: Kontor, now: float) -> int:
    """Send the digest mails that are due; how many. Called by every sweep; only the
    process that took a digest off the schedule sends it (`Store.due_digests`)."""
    return sum(send_digest(k, gid, seat, now) for gid, seat in k.store.due_digests(now))


def send_digest(k: Kontor, gid: str, seat: int, now: float) -> bool:
    """One mail with every notice waiting for the seat, to its current address. Ruling:
    a seat that cleared its address since gets nothing (its notices stay readable through
    the API), and so does a contact the seat's holder did not set (`notify.bound`): a
    former holder never gets a digest."""
    notices = k.store.take_digest(gid, seat)
    contact = k.store.contact(gid, seat) or {}
    address = contact.get("email") if bound(contact, seat_holder(k, gid, seat)) else None
    if not notices or not address:
        return False
    did = Notifier(k).record(gid, seat, "email", notices, address, now)
    k.store.update_delivery(gid, did, digest=True)
    k.jobs.mail(gid, did)
    return True
