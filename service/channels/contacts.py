"""A seat's contact settings: where and how its notifications go.

Set by the seat itself (its bearer token); the mail mode `delivery` is `asked` (the
default), `every` or `digest` (`service.channels.notify`; `immediate`, the earlier name
of `every`, is taken and stored as `every`, and a contact stored with it reads as
`every`); a webhook gets every notice, or only the event types its
`webhook_events` names (null: all; Standard Webhooks leaves the choice of events to the
endpoint's subscription, as Svix's `filterTypes` and GitHub's `events` do; mail is not
filtered); the host sees the outcome of deliveries
(failures, an unsubscribed or disabled channel) with the targets masked, never the
secret. A webhook's signing secret is shown once, in the answer that made it.

A contact belongs to the seat's holder who set it: it records the holder's key id
(`kid`), and when the host gives the seat another key or a bot it leaves with that
holder (`Store.set_seat`; told once, `service.channels.notify`). The new holder starts
with no contact until they set one. A contact that names another key than the seat's
holder (set by the former holder in the instant the seat changed hands) is no contact of
the seat: it is read as none and replaced whole by the holder's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from email_validator import EmailNotValidError, validate_email

from service.channels.links import seat_holder
from service.channels.notify import bound, mask, mode_of, new_webhook_secret
from service.channels.webhook.deliver import EVENT_HELP, check_target, masked_error
from service.core.errors import Problem
from service.core.kontor import iso

if TYPE_CHECKING:
    from service.core.kontor import Caller, Kontor

EMPTY: dict[str, Any] = {
    "email": None, "email_status": None, "webhook_url": None, "webhook_status": None, "webhook_events": None,
    "timezone": "UTC", "reminder_lead": None, "delivery": "asked", "last_error": None, "updated_at": None,
}


def normalize_email(address: str) -> str:
    """The address in its normalized form, or `bad_email` with the validator's reason."""
    try:
        return validate_email(address, check_deliverability=False).normalized
    except EmailNotValidError as exc:
        raise Problem("bad_email", str(exc), field="email") from None


def set_contact(k: Kontor, gid: str, seat: int, body: dict[str, Any]) -> dict[str, Any]:
    """Replace the seat's contact settings (fields left out keep their value; null clears).
    A new or changed webhook URL, or `rotate_secret`, makes a new signing secret, answered
    once as `webhook_secret`."""
    k.check_seat(k._meta(gid), seat)
    holder = seat_holder(k, gid, seat)
    current = k.store.contact(gid, seat) or {}
    if not bound(current, holder):
        current = {}
    rec = {**EMPTY, **current, "kid": holder}
    if "email" in body:
        address = body["email"]
        rec["email"] = normalize_email(address) if address else None
        if rec["email"] != current.get("email"):
            rec["email_status"] = "ok" if rec["email"] else None
    if "timezone" in body:
        try:
            ZoneInfo(body["timezone"])
        except (ZoneInfoNotFoundError, ValueError):
            raise Problem("bad_timezone", f"{body['timezone']!r} is not an IANA time zone (e.g. Europe/Berlin)",
                          field="timezone") from None
        rec["timezone"] = body["timezone"]
    if "reminder_lead" in body:
        lead = body["reminder_lead"]
        if lead is not None and not 1 <= lead <= k.settings.max_step_seconds:
            raise Problem("invalid_request", f"reminder_lead is 1 to {k.settings.max_step_seconds} seconds",
                          field="reminder_lead")
        rec["reminder_lead"] = lead
    if "delivery" in body:
        rec["delivery"] = mode_of({"delivery": body["delivery"]})
    secret = None
    if "webhook_url" in body:
        url = body["webhook_url"]
        if url:
            check_target(url, k.settings)
            if url != current.get("webhook_url") or not rec.get("webhook_secret"):
                secret = new_webhook_secret()
            rec["webhook_status"] = "active"
        else:
            rec.update(webhook_secret=None, webhook_status=None, webhook_events=None)
        rec["webhook_url"] = url or None
    if "webhook_events" in body:
        rec["webhook_events"] = event_types(body["webhook_events"])
        if rec["webhook_events"] is not None and not rec.get("webhook_url"):
            raise Problem("invalid_request", "there is no webhook to choose the events of: set webhook_url too",
                          field="webhook_events")
    if body.get("rotate_secret"):
        if not rec.get("webhook_url"):
            raise Problem("invalid_request", "there is no webhook to rotate a secret for", field="rotate_secret")
        secret = new_webhook_secret()
    if secret:
        rec["webhook_secret"] = secret
    rec["updated_at"] = iso(k.now())
    k.store.set_contact(gid, seat, rec)
    out = shown(rec, seat, for_host=False)
    if secret:
        out["webhook_secret"] = secret
    return out


def event_types(chosen: list[str] | None) -> list[str] | None:
    """The webhook event types a contact chose (`webhook_events`), in the order the API
    lists them (`EVENT_HELP`), each once; None (every type) stays None. An empty choice,
    or a type that is not one, is `invalid_request`."""
    if chosen is None:
        return None
    unknown = sorted(set(chosen) - set(EVENT_HELP))
    if unknown:
        raise Problem("invalid_request", f"not a webhook event type: {', '.join(unknown)} (the types: "
                      f"{', '.join(EVENT_HELP)})", field="webhook_events")
    if not chosen:
        raise Problem("invalid_request", "choose at least one event type (null: every type; to get none, "
                      "remove the webhook)", field="webhook_events")
    return [kind for kind in EVENT_HELP if kind in chosen]


def get_contact(k: Kontor, gid: str, seat: int, caller: Caller) -> dict[str, Any]:
    k.check_seat(k._meta(gid), seat)
    stored = k.store.contact(gid, seat) or {}
    rec = {**EMPTY, **(stored if bound(stored, seat_holder(k, gid, seat)) else {})}
    if rec.get("email") and k.store.unsubscribed(rec["email"]):
        rec["email_status"] = "unsubscribed"
    return shown(rec, seat, for_host=caller != seat)


def shown(rec: dict[str, Any], seat: int, for_host: bool) -> dict[str, Any]:
    """A contact as answered: never the webhook secret; to the host, targets masked."""
    out = {key: rec.get(key) for key in EMPTY}
    out["delivery"] = mode_of(rec)
    out["seat"] = seat
    out["webhook_secret_set"] = bool(rec.get("webhook_secret"))
    if for_host:
        if out["webhook_url"] and out["last_error"]:  # (errors recorded before they were masked at the source)
            out["last_error"] = masked_error(out["last_error"], out["webhook_url"])
        for key in ("email", "webhook_url"):
            if out[key]:
                out[key] = mask(out[key])
    return out
