"""Webhooks per the Standard Webhooks specification (v1, HMAC-SHA256, `whsec_` secrets).

A webhook delivery is one notice (see `service.channels.notify`) POSTed as
`{"type", "timestamp", "data"}` to the seat's URL, signed with the seat's secret by the
reference `standardwebhooks` library. The first attempts of a commit's deliveries are
made by the job that makes its notices (`deliver_all`: side by side through a bounded
pool of threads, on pooled keep-alive connections); on a failure worth retrying, each
delivery enqueues its next attempt, an RQ job (`deliver`), itself.

Rulings:
* `webhook-id` is the delivery id: the same on every attempt, the consumer's
  idempotency key (a rare duplicate request, e.g. a worker lost mid-attempt, carries it
  too). `webhook-timestamp` is the attempt's own time: every attempt is signed anew.
* An attempt runs once: a job for a delivery that is settled, or for an attempt already
  made, is a duplicate and does nothing.
* Each attempt signs with the contact's secret and URL *at that moment*: after a
  `rotate_secret` the retries verify with the new secret. A delivery whose URL was
  changed or removed since it was made is `skipped`; one to a disabled webhook is
  `disabled`. Neither sends a request.
* The target is checked again at every attempt (DNS may have changed). A refused target
  fails the delivery at once (no request is made, so there is nothing to retry); the
  contact keeps its status and shows the error.
* Any 2xx is success; 410 Gone disables the webhook (no more deliveries to it); every
  other answer (3xx included, redirects are not followed), a timeout or a connection
  error is retried on `Settings.webhook_schedule` with +/-20 % jitter, or after the
  receiver's `Retry-After` (429, 503) when that is longer (at most a day); the rules
  shared with mail are in `service.channels.retry`. When the schedule is used up the
  delivery has `failed` and the webhook is disabled; the seat and the host see both,
  and setting the URL again re-enables it.
* The host sees a target as `notify.mask` shows it (scheme, host, port), and so do
  errors and logs (`masked_error`): a URL's path and query may be the receiver's key.
* Payloads stay under `MAX_PAYLOAD` bytes: a notice whose `view` would make it larger
  goes without it (its `links.view` fetches the view). Nothing else is cut.
* A payload carries the notice's words beside its JSON (`sentences`, `summary`,
  `headline`, `asked`, `names`; see `service.channels.notify`), so a chat bridge can post them
  as they are; the JSON `view` and `events` stay for programs.
* Proxies from the environment are honoured (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
  `NO_PROXY`, read once per process): an egress proxy (the spec's SSRF advice) is the
  guard against a name that resolves differently between check and request. A target
  whose host is an IP address is checked without asking the resolver.
* The requests go out on keep-alive connections (`service.channels.webhook.sender`:
  one per thread and receiver, the answer read by `http.client`; urllib3 through a
  proxy). A kept connection the receiver closed is noticed before a request is written
  on it; a request that raced the receiver closing an idle kept connection (reset, or
  closed before any answer) is made again at once, once, on a new connection, with the
  same `webhook-id`. Any other failed request is the attempt's failure, retried on the
  schedule.
"""

from __future__ import annotations

import contextvars
import functools
import ipaddress
import logging
import re
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from standardwebhooks import Webhook

from service.channels import retry
from service.channels.notify import dumps_payload, mask
from service.channels.webhook import sender
from service.channels.webhook.sender import DRAIN_LIMIT as DRAIN_LIMIT
from service.channels.webhook.sender import Answer, requote_uri
from service.config import Settings
from service.core.errors import Problem
from service.store.json import dumps

if TYPE_CHECKING:
    from service.core.kontor import Kontor

log = logging.getLogger("kontor.webhooks")

#: A payload's size limit in bytes (the spec: keep them under ~20 KB).
MAX_PAYLOAD = 20_000
USER_AGENT = "Kontor-Webhooks/1"
#: Statuses whose `Retry-After` is honoured, and the longest wait it may ask for.
RETRY_AFTER_STATUSES = (429, 503)
RETRY_AFTER_CAP = 86_400.0


def check_target(url: str, settings: Settings) -> list[str]:
    """Refuse a webhook URL that is not http(s), or whose host resolves to a loopback,
    private, link-local, multicast or reserved address (unless the settings allow
    loopback or private targets): `webhook_target_refused`. Answers the addresses. A
    host that is an IP address is that address (no resolver asked, and an accepted one
    is remembered: nothing can change its answer); a name is resolved at every call."""
    known = _ACCEPTED.get((url, settings.webhook_allow_loopback, settings.webhook_allow_private))
    if known is not None:
        return list(known)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Problem("webhook_target_refused", "a webhook URL is http:// or https:// with a host", field="webhook_url")
    if parts.username or parts.password:
        raise Problem("webhook_target_refused", "a webhook URL carries no user or password", field="webhook_url")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        literal = ip_literal(parts.hostname)
        addresses = [literal] if literal else sorted(
            {str(info[4][0]) for info in socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)})
    except (OSError, ValueError) as exc:
        raise Problem("webhook_target_refused", f"cannot resolve {parts.hostname!r}: {exc}",
                      field="webhook_url") from None
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%")[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
            ip = ip.ipv4_mapped
        if ip.is_loopback:
            if not settings.webhook_allow_loopback:
                raise Problem("webhook_target_refused", f"{parts.hostname} is a loopback address ({ip})",
                              field="webhook_url")
        elif not ip.is_global or ip.is_multicast:
            if not settings.webhook_allow_private:
                raise Problem("webhook_target_refused",
                              f"{parts.hostname} is on a private or reserved network ({ip})", field="webhook_url")
    if literal:
        if len(_ACCEPTED) >= 4096:
            _ACCEPTED.clear()
        _ACCEPTED[url, settings.webhook_allow_loopback, settings.webhook_allow_private] = (literal,)
    return addresses


#: Accepted targets whose host is an IP address, by (URL, loopback allowed, private allowed).
_ACCEPTED: dict[tuple[str, bool, bool], tuple[str, ...]] = {}


def ip_literal(host: str) -> str | None:
    """`host` (as `urlsplit` gives it: no brackets) as the resolver would answer it when
    it is an IP address in the standard notation, else None (a name, or a form such as
    `127.1` that only the resolver reads: it goes to the resolver)."""
    if not host or not (host[0].isdigit() or ":" in host):
        return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


# -- the request --------------------------------------------------------------------------
def payload(notice: dict[str, Any], delivery_id: str, at: str | None = None) -> bytes:
    """The body of `notice`'s delivery: compact UTF-8 JSON `{type, timestamp, data}`, the
    data being the notice without its type and the timestamp its `at` (else `at`, the
    delivery's own time). Over `MAX_PAYLOAD` bytes the notice goes without its `view`."""
    kind, timestamp = notice["type"], notice.get("at") or at
    data = {key: value for key, value in notice.items() if key != "type"}
    body = encode(kind, timestamp, data)
    if len(body) > MAX_PAYLOAD and "view" in data:
        log.info("delivery %s: %d bytes, sent without the view", delivery_id, len(body))
        del data["view"]
        body = encode(kind, timestamp, data)
    return body


def body_of(rec: dict[str, Any], text: str | None = None) -> bytes:
    """The body of delivery `rec`'s request (`payload` of its one notice); `text`: the
    record as stored (`dumps` of it), when known: the notice's JSON is then taken from it
    rather than encoded again, where that gives the same bytes (`reused`)."""
    if text is not None and len(rec["payload"]) == 1:
        body = reused(rec["payload"][0], text, rec.get("created_at"))
        if body is not None:
            return body
    return payload(rec["payload"][0], rec["id"], rec.get("created_at"))


_PAYLOAD_FIELD = ',"payload":['


def reused(notice: dict[str, Any], text: str, at: str | None) -> bytes | None:
    """`payload(notice, ..., at)` made from `text`, a record whose last field is its
    payload `[notice]` as `dumps` wrote it (the first `,"payload":[` in it is that field's:
    the fields before it are plain values, and no string holds an unescaped quote), or
    None when it would not be the same bytes: the record not so written, the notice not
    starting with its `type`, anything in it escaped as `\\u` (a character that is not
    ASCII, or a control character: the payload writes the one as it is; None then, to
    be safe, for both), or a body over `MAX_PAYLOAD` (`payload` leaves the view out)."""
    start = text.find(_PAYLOAD_FIELD)
    if start < 0 or not text.endswith("]}"):
        return None
    kind = dumps(notice["type"])
    head = '{"type":' + kind + ","
    inner = text[start + len(_PAYLOAD_FIELD):-2]
    if not inner.startswith(head) or "\\u" in inner:
        return None
    body = ('{"type":' + kind + ',"timestamp":' + dumps(notice.get("at") or at) + ',"data":{'
            + inner[len(head):] + "}").encode()
    return body if len(body) <= MAX_PAYLOAD else None


def encode(kind: str, timestamp: str | None, data: dict[str, Any]) -> bytes:
    return dumps_payload({"type": kind, "timestamp": timestamp, "data": data}).encode()


def signed_headers(secret: str, delivery_id: str, body: bytes, now: float) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt made at `now` (epoch seconds)."""
    stamp = int(now)
    signature = signer(secret).sign(delivery_id, datetime.fromtimestamp(stamp, UTC), body.decode())
    return {"webhook-id": delivery_id, "webhook-timestamp": str(stamp), "webhook-signature": signature,
            "Content-Type": "application/json", "User-Agent": USER_AGENT}


@functools.lru_cache(maxsize=1024)
def signer(secret: str) -> Webhook:
    """The reference library's signer for `secret` (made once per secret: it decodes the
    secret)."""
    return Webhook(secret)


#: How many webhook requests one process makes at once (`deliver_all`): a worker's drain
#: job has up to `service.jobs.tasks.IN_FLIGHT` (8) commits' sends in flight, each a
#: game's seats but the first from this pool.
POOL_SIZE = 24
#: (`DRAIN_LIMIT`, from `sender`: an answer's body is read up to this many bytes and
#: dropped, so that its keep-alive connection can carry the next request; a longer one
#: closes the connection instead.)

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def session() -> sender.Connections:
    """This thread's keep-alive connections (one per receiver): each serves the next
    deliveries to the same receiver. Proxies from the environment apply (`sender`)."""
    return sender.connections()


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
    """POST once, following no redirect, on a kept connection to the receiver; the
    answer's body is drained (at most `DRAIN_LIMIT` bytes) and never looked at. An
    error is masked (`masked_error`)."""
    answer = sender.post(url, body, headers, timeout)
    if answer.error is None:
        return answer
    return answer._replace(error=masked_error(answer.error, url)[:300])


def pool() -> ThreadPoolExecutor:
    """The process's bounded pool of webhook senders (`POOL_SIZE` threads)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(POOL_SIZE, thread_name_prefix="webhook")
        return _pool


#: Where requests quoted a request's target in its errors (`... with url: /path?query`;
#: errors so written may still be in the store).
_URL_IN_ERROR = re.compile(r"(\burl: )\S+")


def masked_error(text: str, url: str) -> str:
    """An error about a request to `url` as the host and the logs may see it: the URL
    shown as `mask` shows it (scheme, host, port), its path and query never (requests
    quoted the request target in its errors: `... with url: /path?query`)."""
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    whole = [url, requote_uri(url), url.partition("#")[0]]
    pieces = [target, requote_uri(target), parts.path if len(parts.path) > 1 else "", parts.query, parts.fragment]
    for secret in sorted({x for x in whole if x}, key=len, reverse=True):
        text = text.replace(secret, mask(url))
    for secret in sorted({x for x in pieces if x}, key=len, reverse=True):
        text = text.replace(secret, "/***" if secret.startswith("/") else "***")
    return _URL_IN_ERROR.sub(r"\1/***", text)  # whatever the replacements above missed


# -- the retry schedule -------------------------------------------------------------------
def next_delay(schedule: list[float], attempt: int, answer: Answer, now: float) -> float | None:
    """Seconds until attempt `attempt + 1` after attempt `attempt` failed, or None when
    the schedule is used up (`service.channels.retry.next_delay`). Entry 0 of the
    schedule is the first attempt (made at once), entry i the wait before attempt i + 1;
    a longer `Retry-After` on 429 or 503 wins."""
    wish = retry_after(answer.retry_after, now) if answer.status in RETRY_AFTER_STATUSES else 0.0
    return retry.next_delay(schedule[1:], attempt, at_least=wish)


def retry_after(value: str | None, now: float) -> float:
    """A `Retry-After` header (seconds or an HTTP date) as seconds from `now`, at most
    `RETRY_AFTER_CAP`; 0 when missing or unreadable."""
    if not value:
        return 0.0
    value = value.strip()
    if value.isascii() and value.isdigit():
        seconds = float(value)
    else:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return 0.0
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - now
    return min(max(seconds, 0.0), RETRY_AFTER_CAP)


# -- the job --------------------------------------------------------------------------------
def deliver(k: Kontor, gid: str, delivery_id: str, attempt: int) -> str:
    """Attempt `attempt` (from 1) of a webhook delivery: the RQ job body. Answers the
    outcome: `sent`, `retrying`, `failed`, `disabled`, `skipped`, or `noop` for a
    duplicate job. A failed delivery is recorded, never raised."""
    rec = k.store.delivery(gid, delivery_id)
    if rec is None or not retry.is_due(rec, attempt):
        return "noop"
    return attempt_one(k, gid, rec, k.store.contact_for(gid, rec), k.now(), attempt)


def deliver_all(k: Kontor, gid: str, records: list[dict[str, Any]], stored: dict[str, str] | None = None,
                read: tuple[dict[int, dict[str, Any]], float] | None = None) -> list[str]:
    """Attempt 1 of several new webhook deliveries of one game (records as just stored,
    never attempted), at once: the notify job's sender (`Notifier.send`). The seats'
    go out side by side through the process's bounded pool (`POOL_SIZE`) on keep-alive
    connections, one seat's in turn (in order). Each is still its own delivery, with its
    own record, `webhook-id` and retry schedule (a failed one enqueues its own retry
    job, as `deliver` does). The contacts are read once for all, and the outcomes are
    recorded together once all were attempted (`record_all`: one script call, for each
    record whose stored text is still `stored[id]`, the text it was read from; any
    other through `retry.mark`'s transaction). `read`: the contacts and the store's
    clock, when read just now (as the records were stored: `Notifier.keep_pending`).
    Answers the outcomes, in order."""
    if not records:
        return []
    contacts, now = read if read is not None else k.store.contacts_and_time(gid)  # one round trip
    by_seat: dict[tuple[int, str], list[dict[str, Any]]] = {}  # (seat, former contact or "")
    for rec in records:
        by_seat.setdefault((rec["seat"], rec.get("former") or ""), []).append(rec)

    def contact_of(recs: list[dict[str, Any]]) -> dict[str, Any]:
        return k.store.contact_for(gid, recs[0]) if recs[0].get("former") else contacts.get(recs[0]["seat"]) or {}

    marks: list[list[Mark]] = [[] for _ in by_seat]
    groups = list(zip(by_seat.values(), marks, strict=True))
    # The first seat's go from this thread, the others' side by side in the pool.
    # What was attempted is recorded even when a seat's sending failed (or the job was
    # stopped): a delivery made and not recorded would be made again by the next job.
    futures = []
    try:
        futures = [pool().submit(contextvars.copy_context().run, in_turn, k, gid, recs,  # keeps the log's ids
                                 contact_of(recs), now, mine, stored) for recs, mine in groups[1:]]
        outcomes = in_turn(k, gid, groups[0][0], contact_of(groups[0][0]), now, groups[0][1], stored)
        outcomes += [x for f in futures for x in f.result()]
    finally:
        for f in futures:  # the others' attempts end before theirs are recorded
            f.exception()
        record_all(k, gid, [m for mine in marks for m in mine], stored or {})
    done = dict(zip([r["id"] for recs in by_seat.values() for r in recs], outcomes, strict=True))
    # (at INFO when any was not sent, as an attempt's own line; all sent: DEBUG)
    level = logging.DEBUG if all(outcome == "sent" for outcome in outcomes) else logging.INFO
    if log.isEnabledFor(level):
        counts: dict[str, int] = {}
        for outcome in outcomes:
            counts[outcome] = counts.get(outcome, 0) + 1
        log.log(level, "game %s: %d webhook deliveries attempted: %s", gid, len(outcomes),
                ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())))
    return [done[r["id"]] for r in records]


@dataclass(frozen=True, slots=True)
class Mark:
    """An attempt's outcome, to be recorded on its delivery (`record_all`): the record
    as this job read it, the fields that change, and what follows once they are
    recorded (the retry's job, disabling the webhook), if anything."""

    rec: dict[str, Any]
    changes: dict[str, Any]
    then: Callable[[], object] | None = None


def record_all(k: Kontor, gid: str, marks: list[Mark], stored: dict[str, str]) -> None:
    """Record several attempts' outcomes: one script call (`Store.mark_deliveries`)
    writes the new record of each delivery whose stored text is still the one its record
    was read from (`stored`, by id; the new text is made here, from that record and the
    changes); any other (changed meanwhile: another job marked it, or not read from a
    known text) takes the changes through `Store.update_delivery`'s transaction, as a
    retry does. Then what follows each, in order."""
    fast: list[tuple[Mark, tuple[str, str, str]]] = []
    slow: list[Mark] = []
    for m in marks:
        text = stored.get(m.rec["id"])
        if text is None:
            slow.append(m)
        else:
            fast.append((m, (m.rec["id"], text, changed_text(m.rec, text, m.changes))))
    written = k.store.mark_deliveries(gid, [args for _, args in fast])
    slow += [m for (m, _), ok in zip(fast, written, strict=True) if not ok]
    for m in slow:
        k.store.update_delivery(gid, m.rec["id"], **m.changes)
    for m in marks:
        if m.then is not None:
            m.then()


def changed_text(rec: dict[str, Any], text: str, changes: dict[str, Any]) -> str:
    """The text of delivery `rec` (stored as `text`) with `changes`. When `text` is the
    record's fields but its payload, encoded as `dumps` does, then `"payload":` and the
    payload (the last field, and most of the bytes), the payload's text is taken as it is
    rather than encoded again; any other record is encoded whole."""
    if "payload" not in rec or "payload" in changes:
        return dumps({**rec, **changes})
    head = {k: v for k, v in rec.items() if k != "payload"}
    before = dumps(head)[:-1] + ',"payload":'
    if not text.startswith(before) or not text.endswith("}"):
        return dumps({**rec, **changes})
    head.update(changes)
    return dumps(head)[:-1] + text[len(before) - len(',"payload":'):]


def in_turn(k: Kontor, gid: str, records: list[dict[str, Any]], contact: dict[str, Any], now: float,
            marks: list[Mark] | None = None, stored: dict[str, str] | None = None) -> list[str]:
    """One seat's new deliveries, one after the other (a receiver gets a step's
    notices in order); after a 410 the rest are not sent (the webhook is disabled).
    `marks`: the outcomes are kept there for `record_all`, not recorded one by one;
    `stored`: the records' texts as stored, by id (`body_of`)."""
    out = []
    for rec in records:
        outcome = attempt_one(k, gid, rec, contact, now, marks=marks, text=(stored or {}).get(rec["id"]))
        if outcome == "disabled":
            contact = {**contact, "webhook_status": "disabled"}
        out.append(outcome)
    return out


def attempt_one(k: Kontor, gid: str, rec: dict[str, Any], contact: dict[str, Any], now: float,
                attempt: int = 1, marks: list[Mark] | None = None, text: str | None = None) -> str:
    """Attempt `attempt` of the delivery `rec` (due: checked by the caller) to `contact`
    as it is now, and record the outcome (`deliver`'s body after its checks); with
    `marks`, the outcome is kept there for `record_all` instead. `text`: the record as
    stored, when known (`body_of`)."""
    delivery_id = rec["id"]
    held = held_back(contact, rec["target"])
    if held:
        status, why = held
        return settle(k, gid, rec, status, now, marks, last_error=why)
    try:
        check_target(rec["target"], k.settings)
    except Problem as exc:
        error = masked_error(f"target refused: {exc.detail}", rec["target"])
        log.warning("game %s delivery %s: %s", gid, delivery_id, error)
        return settle(k, gid, rec, "failed", now, marks, lambda: k.store.update_contact(gid, rec["seat"],
                                                                                          last_error=error),
                      attempts=attempt, last_error=error)
    body = body_of(rec, text)
    answer = post(rec["target"], body, signed_headers(contact["webhook_secret"], delivery_id, body, now),
                  k.settings.webhook_timeout)
    outcome = record_answer(k, gid, rec, attempt, answer, now, marks)
    log.log(logging.DEBUG if outcome == "sent" else logging.INFO, "game %s delivery %s attempt %d: %s (%s)", gid,
            delivery_id, attempt, outcome, answer.status or answer.error)
    return outcome


def settle(k: Kontor, gid: str, rec: dict[str, Any], status: str, now: float, marks: list[Mark] | None,
           then: Callable[[], object] | None = None, **fields: Any) -> str:
    """Record `status` and `fields` on the delivery `rec`, then do `then`: at once
    (`retry.mark`), or kept in `marks` for `record_all`. Answers the status."""
    changes = retry.changes(status, now, **fields)
    if marks is None:
        k.store.update_delivery(gid, rec["id"], **changes)
        if then is not None:
            then()
    else:
        marks.append(Mark(rec, changes, then))
    return status


def held_back(contact: dict[str, Any], target: str) -> tuple[str, str] | None:
    """Why no request is made for a delivery to `target`: (`skipped`, why) when the
    webhook was removed or its URL changed, (`disabled`, why) when it is disabled."""
    if not contact.get("webhook_url") or not contact.get("webhook_secret"):
        return "skipped", "the webhook was removed"
    if contact["webhook_url"] != target:
        return "skipped", "the webhook URL changed"
    if contact.get("webhook_status") == "disabled":
        return "disabled", "the webhook is disabled"
    return None


def record_answer(k: Kontor, gid: str, rec: dict[str, Any], attempt: int, answer: Answer, now: float,
                  marks: list[Mark] | None = None) -> str:
    """Record an attempt's answer on the delivery (and the contact), enqueue the next
    attempt when there is one; the outcome. With `marks`, what is recorded (and what
    follows it) is kept there for `record_all`."""
    seen = {"attempts": attempt, "last_status": answer.status}
    if answer.status is not None and 200 <= answer.status < 300:
        return settle(k, gid, rec, "sent", now, marks, last_error=None, **seen)
    error = answer.error or f"HTTP {answer.status}"
    if answer.status == 410:
        return settle(k, gid, rec, "disabled", now, marks,
                      lambda: disable(k, gid, rec, "HTTP 410 Gone: the receiver asked for no more deliveries"),
                      last_error=error, **seen)
    delay = next_delay(Settings.delays(k.settings.webhook_schedule), attempt, answer, now)
    if delay is None:
        return settle(k, gid, rec, "failed", now, marks,
                      lambda: disable(k, gid, rec, f"{attempt} attempts failed, the last: {error}"),
                      last_error=error, **seen)
    did = rec["id"]
    changes = retry.retrying(attempt, delay, now, last_error=error, last_status=answer.status)
    then = lambda: k.jobs.webhook(gid, did, attempt + 1, delay=delay)  # noqa: E731
    if marks is None:
        k.store.update_delivery(gid, did, **changes)
        then()
    else:
        marks.append(Mark(rec, changes, then))
    return "retrying"


def disable(k: Kontor, gid: str, rec: dict[str, Any], error: str) -> None:
    """Disable the seat's webhook, if it still points where the delivery went (a former
    contact's farewell changes no contact of the seat)."""
    if rec.get("former"):
        return
    contact = k.store.contact(gid, rec["seat"]) or {}
    if contact.get("webhook_url") == rec["target"]:
        k.store.update_contact(gid, rec["seat"], webhook_status="disabled", last_error=error)
        log.warning("game %s seat %d: webhook disabled: %s", gid, rec["seat"], error)


#: What each event type tells (the OpenAPI document's `webhooks`).
EVENT_HELP = {
    "step.opened": "A step opened; `data.request` says what it asks of the seat (null: nothing).",
    "step.resolved": "A step resolved; `data.events` are its events the seat may see; `data.default_played` "
                     "(when present) is the seat's default order, in words, played because it did not answer.",
    "deadline.reminder": "The seat has not answered and the deadline is within its reminder lead time.",
    "message.received": "An in-game message to the seat (public or private).",
    "game.finished": "The game is over; `data.ranking` is the final ranking.",
    "seat.replaced": "The host gave a seat (`data.replaced`) to a bot (`data.bot`, its kind) or to another "
                     "player's key (`data.bot` null). The seat's own webhook, set by its former holder, gets "
                     "this once with `data.yours` and `data.farewell` true, no view and nothing that acts, and "
                     "nothing after it: the new holder sets a contact of their own.",
    "action.taken": "A seat acted unprompted (an instant played, a transfer proposed); `data.events` are the "
                    "action's events the seat may see, `data.sentences` the same in words.",
    "rollback.proposed": "The host proposes to roll the game back to an earlier step (`data.events`: the "
                         "`rollback_proposed` event, its `to_phase`); when `data.consent` is true, the seat must "
                         "agree (`POST /games/{id}/rollback/consent`) or refuse; `data.sentences` say it in words.",
    "rollback.answered": "A seat agreed to or refused the host's rollback proposal, the host withdrew it, or it "
                         "lapsed; `data.sentences` say which in words. An applied rollback is told as "
                         "`step.opened` (its events include `game_rolled_back`).",
    "lobby.closing": "Nobody has started the game and it closes at `data.closes_at` (a day later, by default), "
                     "after which it is removed; `data.open_seats` are the seats still open, `data.sentences` "
                     "the same in words. Sent once, when the sweeper's `lobby_closing` event is appended.",
    "rematch.started": "The host started a rematch of the finished game: `data.rematch` names the new game "
                       "(`game`, `name`, `url`: its page; `seat`: this seat's number there when the same holder "
                       "holds it, else null), `data.by_mail` how the seat plays it by mail (`reply_to` when its "
                       "open step asks the seat), `data.sentences` the same in words. This webhook carries over "
                       "to the rematch's seat with its signing secret. Sent once, the finished game's last event.",
    "clock.ran_out": "A time bank: a seat (`data.events[0].seat`) ran out of time and its decision was played "
                     "for it; `data.sentences` in words. The seat's own delivery has `data.clock_played`: what "
                     "was played for it, in words (a sealed order is told to that seat alone).",
    "game.paused": "The host paused the game: the clock is stopped (nothing resolves, no deadline passes) until "
                   "the host resumes it; `data.deadline` is the deadline as it stood, `data.sentences` in words.",
    "game.resumed": "The host resumed a paused game: the open step's deadline moved on by the time paused "
                    "(`data.events[0].paused_seconds`) to `data.deadline`.",
    "deadline.extended": "The host extended the open step's deadline by `data.events[0].seconds` to "
                         "`data.deadline` (`data.paused`: the game is still paused, and the deadline moves on again "
                         "when it resumes).",
    "absence.summary": "The seat's absence (`data.from` to `data.until`) has ended: `data.sentences` say, in "
                       "words, each decision played for it while it was away (by a bot or by default at a "
                       "deadline). Sent once, to that seat alone.",
}


def openapi_webhooks() -> dict[str, Any]:
    """The OpenAPI 3.1 `webhooks` object: one entry per event type, each a signed POST
    of a `WebhookEvent` to the seat's webhook URL."""
    headers = [
        {"in": "header", "name": "webhook-id", "required": True, "schema": {"type": "string"},
         "description": "The delivery's id: the same on every retry (use it to drop duplicates)."},
        {"in": "header", "name": "webhook-timestamp", "required": True, "schema": {"type": "integer"},
         "description": "Unix seconds of this attempt."},
        {"in": "header", "name": "webhook-signature", "required": True, "schema": {"type": "string"},
         "description": "`v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the seat's `whsec_` secret "
                        "(Standard Webhooks; verify with a standardwebhooks library)."},
    ]
    return {
        kind: {"post": {
            "summary": kind, "description": text, "parameters": headers,
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/WebhookEvent"}}}},
            "responses": {"2XX": {"description": "Delivered."},
                          "410": {"description": "Gone: Kontor disables this webhook."}},
        }}
        for kind, text in EVENT_HELP.items()
    }
