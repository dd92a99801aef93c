"""A small client of the Kontor HTTP API over `requests`.

It signs what the API asks to be signed (bearer tokens for reads and host actions, order
tokens for orders), sends an `Idempotency-Key` with every creating POST, and turns
problem+json answers into `ApiError` and network failures into `Unreachable`.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import requests

from service.protocol.crypto import SigningKey

#: How long a bearer token lives (the service accepts at most 300 s).
BEARER_TTL = 120


class ApiError(Exception):
    """The service answered with an error (problem+json, or something else)."""

    def __init__(self, status: int, code: str, detail: str, body: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.body = body or {}


class Unreachable(Exception):
    """No answer from the service at `url`."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot reach {url}: {reason}")
        self.url = url
        self.reason = reason


def bearer_token(key: SigningKey, game: str, now: float | None = None, ttl: int = BEARER_TTL) -> str:
    """A short-lived self-signed read token for `game`: claims {game, iat, exp}."""
    iat = int(time.time() if now is None else now)
    return key.sign({"game": game, "iat": iat, "exp": iat + ttl})


def order_token(key: SigningKey, game: str, phase: int, seat: int, order: dict[str, Any],
                now: float | None = None) -> str:
    """A signed order: claims {game, phase, seat, iat, jti, order}; `jti` is a fresh one-time id."""
    iat = int(time.time() if now is None else now)
    return key.sign({"game": game, "phase": phase, "seat": seat, "iat": iat, "jti": uuid.uuid4().hex,
                     "order": order})


def action_token(key: SigningKey, game: str, seat: int, action: dict[str, Any], now: float | None = None) -> str:
    """A signed unprompted action: claims {game, seat, iat, jti, action}; `jti` is fresh."""
    iat = int(time.time() if now is None else now)
    return key.sign({"game": game, "seat": seat, "iat": iat, "jti": uuid.uuid4().hex, "action": action})


class Api:
    """One Kontor server. Methods return the decoded JSON answer."""

    def __init__(self, url: str, timeout: float = 15.0, session: requests.Session | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.http = session or requests.Session()
        self.http.headers.setdefault("User-Agent", "kontor-cli/0.1")

    # -- plumbing -------------------------------------------------------------------
    def request(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None,
                key: SigningKey | None = None, game: str | None = None, idempotent: bool = False,
                headers: dict[str, str] | None = None) -> requests.Response:
        """Send one request; `key` (with `game`) adds a bearer token. Raises `ApiError`
        for any status of 400 or more, `Unreachable` when there is no answer."""
        hdrs = dict(headers or {})
        if key is not None:
            hdrs["Authorization"] = f"Bearer {bearer_token(key, game or '')}"
        if idempotent:
            hdrs["Idempotency-Key"] = str(uuid.uuid4())
        url = self.url + path
        # A creating POST carries an Idempotency-Key, so after a read timeout (the request
        # may have been applied) it is safe to send it again once.
        attempts = 2 if idempotent else 1
        for attempt in range(attempts):
            try:
                r = self.http.request(method, url, json=json, params=params, headers=hdrs, timeout=self.timeout)
                break
            except requests.Timeout as exc:
                if attempt + 1 == attempts:
                    raise Unreachable(self.url, f"no answer within {self.timeout:g} s") from exc
            except requests.ConnectionError as exc:
                raise Unreachable(self.url, _reason(exc)) from exc
            except requests.RequestException as exc:
                raise Unreachable(self.url, str(exc)) from exc
        if r.status_code >= 400:
            raise _error(r)
        return r

    def _json(self, method: str, path: str, **kw: Any) -> Any:
        r = self.request(method, path, **kw)
        try:
            return r.json()
        except ValueError:
            raise ApiError(r.status_code, "bad_response", f"{method} {path} did not answer JSON") from None

    # -- the API ----------------------------------------------------------------------
    def catalog(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self._json("GET", "/catalog")
        return out

    def create_game(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._json("POST", "/games", json=body, idempotent=True))

    def game(self, gid: str) -> dict[str, Any]:
        return dict(self._json("GET", f"/games/{gid}"))

    def start(self, gid: str, host: SigningKey) -> dict[str, Any]:
        return dict(self._json("PATCH", f"/games/{gid}", json={"status": "running"}, key=host, game=gid))

    def rematch(self, gid: str, host: SigningKey, host_key: str | None = None) -> tuple[dict[str, Any], bool]:
        """Start the rematch of the finished game `gid` (host): (the new game, True when this
        request made it; False: it was made before, and this is that game)."""
        body = {"host_key": host_key} if host_key else {}
        r = self.request("POST", f"/games/{gid}/rematch", json=body, key=host, game=gid, idempotent=True)
        return dict(r.json()), r.status_code == 201
    def pause(self, gid: str, host: SigningKey) -> dict[str, Any]:
        return dict(self._json("POST", f"/games/{gid}/pause", key=host, game=gid))

    def resume(self, gid: str, host: SigningKey) -> dict[str, Any]:
        return dict(self._json("POST", f"/games/{gid}/resume", key=host, game=gid))

    def extend(self, gid: str, seconds: int, host: SigningKey) -> dict[str, Any]:
        return dict(self._json("POST", f"/games/{gid}/extend", json={"seconds": seconds}, key=host, game=gid,
                               idempotent=True))

    def join(self, gid: str, name: str, public_key: str, seat: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, "public_key": public_key}
        if seat is not None:
            body["seat"] = seat
        return dict(self._json("POST", f"/games/{gid}/seats", json=body, idempotent=True))

    def seats(self, gid: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self._json("GET", f"/games/{gid}/seats")
        return out

    def update_seat(self, gid: str, seat: int, body: dict[str, Any], host: SigningKey) -> dict[str, Any]:
        return dict(self._json("PATCH", f"/games/{gid}/seats/{seat}", json=body, key=host, game=gid))

    def phase(self, gid: str, key: SigningKey | None = None) -> dict[str, Any]:
        return dict(self._json("GET", f"/games/{gid}/phases/current", key=key, game=gid))

    def view(self, gid: str, key: SigningKey | None = None) -> dict[str, Any]:
        return dict(self._json("GET", f"/games/{gid}/view", key=key, game=gid))

    def history(self, gid: str) -> dict[str, Any]:
        """The game's published history (`kontor-history/1`); 403 while it runs."""
        return dict(self._json("GET", f"/games/{gid}/history"))

    def choices(self, gid: str, seat: int, key: SigningKey, picks: list[Any], of: str = "order",
                words: str | None = None) -> dict[str, Any]:
        """The seat's open decision (or its unprompted actions, `of="action"`) in words
        after `picks` and `words` (read by the server)."""
        body: dict[str, Any] = {"picks": picks, "of": of}
        if words is not None:
            body["words"] = words
        return dict(self._json("POST", f"/games/{gid}/seats/{seat}/choices", json=body, key=key, game=gid))

    def act(self, gid: str, seat: int, token: str) -> dict[str, Any]:
        return dict(self._json("POST", f"/games/{gid}/seats/{seat}/actions", json={"token": token}))

    def submit(self, gid: str, phase: int, seat: int, token: str) -> dict[str, Any]:
        return dict(self._json("PUT", f"/games/{gid}/phases/{phase}/orders/{seat}", json={"token": token}))

    def events(self, gid: str, after: int, key: SigningKey | None = None, etag: str | None = None,
               limit: int = 100) -> tuple[dict[str, Any] | None, str | None]:
        """A page of events after `after`, and its ETag; `(None, etag)` when unchanged
        since the page that `etag` came with (HTTP 304)."""
        headers = {"If-None-Match": etag} if etag else None
        r = self.request("GET", f"/games/{gid}/events", params={"after": after, "limit": limit}, key=key,
                         game=gid, headers=headers)
        if r.status_code == 304:
            return None, etag
        return dict(r.json()), r.headers.get("ETag")

    # -- notifications and messages ---------------------------------------------------
    def contact(self, gid: str, seat: int, key: SigningKey) -> dict[str, Any]:
        return dict(self._json("GET", f"/games/{gid}/seats/{seat}/contact", key=key, game=gid))

    def set_contact(self, gid: str, seat: int, body: dict[str, Any], key: SigningKey) -> dict[str, Any]:
        """Change the seat's contact settings (fields left out keep their value); the answer
        carries `webhook_secret` once, when one was made."""
        return dict(self._json("PUT", f"/games/{gid}/seats/{seat}/contact", json=body, key=key, game=gid))

    def update_absence_policy(self, gid: str, body: dict[str, Any], host: SigningKey) -> dict[str, Any]:
        """Change the game's absence policy (host; refused while someone is away)."""
        return dict(self._json("PATCH", f"/games/{gid}/absence-policy", json=body, key=host, game=gid))

    def absences(self, gid: str, seat: int) -> dict[str, Any]:
        """The seat's absences not ended yet (public)."""
        return dict(self._json("GET", f"/games/{gid}/seats/{seat}/absences"))

    def set_absences(self, gid: str, seat: int, absences: list[dict[str, str]], key: SigningKey) -> dict[str, Any]:
        """Replace the seat's absences (`[]`: back, none planned)."""
        return dict(self._json("PUT", f"/games/{gid}/seats/{seat}/absences", json={"absences": absences}, key=key,
                               game=gid))

    def deliveries(self, gid: str, seat: int, key: SigningKey, limit: int = 50) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self._json("GET", f"/games/{gid}/seats/{seat}/deliveries",
                                               params={"limit": limit}, key=key, game=gid)
        return out

    def post_message(self, gid: str, to: str | list[int], text: str, key: SigningKey) -> dict[str, Any]:
        """Write an in-game message: `to` is "all" or a list of seats."""
        return dict(self._json("POST", f"/games/{gid}/messages", json={"to": to, "text": text}, key=key, game=gid,
                               idempotent=True))

    def messages(self, gid: str, after: int = 0, key: SigningKey | None = None, limit: int = 100) -> dict[str, Any]:
        """A page of the messages the key's holder may see (public ones without a key)."""
        return dict(self._json("GET", f"/games/{gid}/messages", params={"after": after, "limit": limit}, key=key,
                               game=gid))

    # -- rollback (issue 25) --------------------------------------------------------------
    def rollback_options(self, gid: str) -> dict[str, Any]:
        """The steps the game may be rolled back to, in words, and the pending proposal."""
        return dict(self._json("GET", f"/games/{gid}/rollback", game=gid))

    def rollback(self, gid: str, to_phase: int, host: SigningKey) -> dict[str, Any]:
        """The host rolls the game back to step `to_phase` (or proposes it, when consent is needed)."""
        return dict(self._json("POST", f"/games/{gid}/rollback", json={"to_phase": to_phase}, key=host, game=gid))

    def rollback_withdraw(self, gid: str, host: SigningKey) -> dict[str, Any]:
        """The host withdraws the pending rollback proposal."""
        return dict(self._json("DELETE", f"/games/{gid}/rollback", key=host, game=gid))

    def rollback_consent(self, gid: str, agree: bool, key: SigningKey) -> dict[str, Any]:
        """A seat agrees to or refuses the pending rollback."""
        return dict(self._json("POST", f"/games/{gid}/rollback/consent", json={"agree": agree}, key=key, game=gid))


def _error(r: requests.Response) -> ApiError:
    try:
        body = r.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "code" in body:
        return ApiError(r.status_code, str(body["code"]), str(body.get("detail") or body.get("title") or ""), body)
    text = " ".join(r.text.split())[:200] or r.reason
    return ApiError(r.status_code, f"http_{r.status_code}", text, body if isinstance(body, dict) else None)


def _reason(exc: requests.ConnectionError) -> str:
    text = str(exc)
    if "refused" in text.lower():
        return "connection refused"
    if "Name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
        return "unknown host name"
    return text
