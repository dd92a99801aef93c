"""The web pages, for people (issue 13): a page per game and seat, the lobby, the join
page and "my games"; and the one JSON route they add, a mail link's one-step order.

Pages (HTML, Jinja2 with autoescape, `templates/play/`; scripts and styles only from
`static/play/`; not part of the JSON API, so not in the OpenAPI document, like `/docs`):

* `GET /` the lobby: open games, running games to watch, the titles' guides, the API docs.
* `GET /new` the create-a-game page: a title, seats, its variants (each in words with a
  link to the guide), deadlines, which seats are bots; the host's key is made in the
  browser (`static/play/new.js`), which creates the game, makes the bot seats and lands on
  the game's page, where the host panel (`static/play/host.js`) invites, hands seats to
  bots or keys and starts the game.
* `GET /play/<game>/join` and `GET /play/<game>/join/<seat>` the invite links: a name and
  a key (made here, held here or imported) in one step (`static/play/join.js`), then the
  seat's page.
* `GET /play/<game>` the public page (the host's too): board picture, summary, players,
  who still has to answer, the deadline, the events in sentences. In the lobby it is the
  join page (joinform.html: a key made, held or imported in the browser); for the browser
  that holds the game's host key, also the host's controls (`static/play/host.js`).
* `GET /play/<game>/<seat>` a seat's page. Without credentials it shows the public view
  and its script looks for the seat's key in the browser (`static/play/keys.js`); with a
  key it reads the seat's own parts with a self-signed bearer token. With `?step=&cap=`
  (a mail's link in a game that takes reply-address orders, `service.channels.links`)
  it shows the seat's view and its decision at once, for that one open step only.
* A seat's decision is made in its prompt's words (issue 21, `static/play/decide.js`): the
  part embeds the first level of the seat's prompt (`you.prompt`) and of its actions
  (`you.actions`); the script asks `POST /games/<game>/seats/<seat>/choices` for the
  next levels, shows the order as a sentence, and sends it signed (or by the mail link);
  an action goes to `POST /games/<game>/seats/<seat>/actions`. The order's JSON stays
  behind a closed "For programmers".
* `GET /play/<game>/part` and `GET /play/<game>/<seat>/part` the page's `<main>` alone,
  for the script's live refresh (a seat's needs its bearer in `Authorization`, or the
  capability in the query).
* Every game page's top (`<div id="known">`, `static/play/known.js`) names the seats whose
  keys this browser holds (by public key) with a link to each, and the game it hosts.
* `GET /mine` "My games and keys" (`static/play/mine.js`): what is asked of you first (each
  seat's phase read with its own bearer), the other games you play, those you host, and
  the keys this browser holds with their public keys (import, export in the `kontor` key
  file format). The front page's "Your games" line (`static/play/front.js`) counts the
  games waiting for you.
* `GET /favicon.ico` the site's icon (`static/favicon.ico`; the pages link
  `static/favicon.svg`), for the browsers that ask for it by that name.

The JSON route: `PUT /games/<game>/phases/<step>/orders/<seat>/by-link` takes
`{"cap": ..., "order": {...}}`: the capability checked (constant time, this game, step
and seat only) and the order submitted as a reply-address mail's is
(`submit_by_link`, the same `Kontor.submit` path), recorded `via` `page`.

Every page answers with a strict Content-Security-Policy (`CSP`): scripts from /static
only, no inline script; the title's SVG is inlined (the titles escape every name), and
its presentation attributes are not styles.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import marshmallow as ma
from flask import Blueprint as FlaskBlueprint
from flask import Response, current_app, jsonify, render_template, request, send_from_directory
from flask.views import MethodView
from markupsafe import Markup

from engine.core import registry
from service import words
from service.channels.links import submit_by_link, verify_page_cap
from service.core.auth import bearer_caller
from service.core.errors import Problem
from service.core.kontor import Caller, Kontor
from service.core.rollback import undoes
from service.http import schemas as s
from service.http.api import (
    PROBLEM,
    STORE_RETRY_AFTER,
    Blueprint,
    ProblemSchema,
    Schema,
    http_problem,
    kontor,
)
from service.http.headers import PAGE
from service.http.resources.titles import slug
from service.store import STORE_DOWN
from service.words import CITATION_RE, number, rule_anchors

#: The HTML pages: a plain Flask blueprint (pages for people are not the JSON API).
pages = FlaskBlueprint("pages", __name__)
#: The pages' JSON route, documented in the OpenAPI document.
links_blp = Blueprint("links", __name__, description="Orders from a game's web page opened from a mail's link.")

#: The pages' policy (service/http/headers.py sets it on every other HTML answer too).
CSP = PAGE
#: How many of the latest events a page tells.
EVENTS = 40
#: Keys of a view's `players[i]` that hold money (shown where the view shows them).
MONEY_KEYS = ("money", "cash", "crowns")


def html(body: str, status: int = 200) -> Response:
    resp = Response(body, status=status, mimetype="text/html")
    resp.headers["Content-Security-Policy"] = CSP
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Referrer-Policy"] = "no-referrer"  # a capability in the URL stays here
    return resp


def error_page(exc: Problem) -> Response:
    resp = html(render_template("play/error.html", problem=exc), exc.status)
    if exc.extra.get("retry_after") is not None:  # `rate_limited`: when to try again
        resp.headers["Retry-After"] = str(exc.extra["retry_after"])
    return resp


def store_down(exc: Exception) -> Response:
    resp = error_page(http_problem("store_unavailable"))
    resp.headers["Retry-After"] = str(STORE_RETRY_AFTER)
    return resp


pages.register_error_handler(Problem, error_page)
for _down in STORE_DOWN:
    pages.register_error_handler(_down, store_down)


# -- what a page shows -------------------------------------------------------------------
def left(deadline: str | None, now: float) -> str | None:
    """Time left until an ISO deadline, in words (`1d 2h 3m`), or None."""
    if not deadline:
        return None
    secs = datetime.fromisoformat(deadline).timestamp() - now
    return "passed" if secs <= 0 else words.span(secs)


def away_words(absences: list[dict[str, Any]] | None, now: float) -> str | None:
    """A player's next absence in words: `away until 3 January` (away now) or `away 20
    December to 3 January` (planned); None without one."""
    for a in absences or []:
        if datetime.fromisoformat(a["from"]).timestamp() <= now:
            return f"away until {words.day(a['until'])}"
        return f"away {words.away_span(a['from'], a['until'])}"
    return None


def money_of(view: dict[str, Any], seats: int) -> list[Any]:
    """Each seat's money where the caller's view shows it (else None)."""
    players = view.get("players") if isinstance(view, dict) else None
    out: list[Any] = [None] * seats
    if isinstance(players, list):
        for i, p in enumerate(players[:seats]):
            if isinstance(p, dict):
                out[i] = next((p[key] for key in MONEY_KEYS if isinstance(p.get(key), int)), None)
    return out


def table(k: Kontor, gid: str, caller: Caller, cap: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything a game's page shows, as `caller` may see it (a seat, or the public)."""
    game = k.game(gid)
    meta = k._meta(gid)
    title = k._title(meta["title"])
    names = k.names(gid, meta)
    seat = caller if isinstance(caller, int) else None
    out: dict[str, Any] = {"game": game, "gid": gid, "seat": seat, "names": names, "cap": cap,
                           "rules": f"/titles/{game['title']}/rules", "now": k.now()}
    waiting = set(game["phase"]["requested"]) if game.get("phase") else set()
    if game["status"] == "lobby":
        out["closes"] = words.utc_time(k.lobby_expiry(meta))
        out["closing_soon"] = bool(meta.get("closing_told"))  # the day-before notice was given
        out["players"] = [{**p, "display": names[p["seat"]] if p["taken"] or p["bot"] else "open", "money": None,
                           "asked": False, "answered": False} for p in game["players"]]
        return out
    view = k.view(gid, caller)
    phase = k.current_phase(gid, caller)
    answered = set(phase.get("answered") or [])
    money = money_of(view["state"], game["seats"])
    out["players"] = [{**p, "display": names[p["seat"]],
                       "money": None if money[p["seat"]] is None else number(money[p["seat"]]),
                       "asked": p["seat"] in waiting and phase["status"] == "collecting",
                       "answered": p["seat"] in answered} for p in game["players"]]
    for p in out["players"]:  # issue 25: "away until 3 January" (it explains a moved deadline)
        p["away"] = away_words(p.get("absences"), out["now"])
    out.update(headline=view.get("headline"), summary=view.get("summary"), phase=phase,
               left=left(phase.get("deadline"), out["now"]),
               # the host's pause (issue 25): when, and the deadline as it stands, in words
               paused_since=words.utc_time(phase.get("paused_since")),
               deadline_at=words.utc_time(phase.get("deadline")),
               # The title escapes every name it draws (see each title's picture.py).
               picture=Markup(k.picture(gid, caller)),
               events=sentences(k, gid, caller, title, names))
    if game.get("clocks"):  # a time bank: each seat's clock in words, the caller's own first
        clocks = game["clocks"]
        out["my_clock"] = words.clock_text(names[seat], clocks.get(str(seat)), you=True) \
            if seat is not None else None
        out["clocks"] = [words.clock_text(names[s], clocks.get(str(s))) for s in range(game["seats"])
                         if s != seat and str(s) in clocks]
    you = phase.get("you")
    # what the seat may do unprompted (its first level; the page asks for the rest)
    out["actions"] = you.get("actions") if you else None
    if you and you.get("requested"):
        out["you"] = you
        # the open decision's first level in words (None: the title offers none; then
        # the default order and the programmers' JSON are the page's only ways to answer)
        out["prompt"] = you.get("prompt")
        out["default_json"] = json.dumps(you.get("default_order"), ensure_ascii=False)
        out["order_json"] = json.dumps(you.get("order") if you.get("order") is not None
                                       else you.get("default_order"), ensure_ascii=False)
    if game["status"] == "finished" and game.get("result"):
        out["ranking"] = words.ranking_lines(game["result"], names, seat)
    if game.get("rematch"):  # its name, for the link (issue 25)
        out["rematch_name"] = k.store.meta(game["rematch"]["id"]).get("name")
    return out


def sentences(k: Kontor, gid: str, caller: Caller, title: Any, names: list[str]) -> list[dict[str, Any]]:
    """The latest events the caller may see, oldest first, each in the title's words."""
    last = k.last_event(gid, caller)  # the caller's own ids (`service.store.numbering`)
    page = k.events(gid, caller, max(0, last - EVENTS * 3), EVENTS * 3)
    out = []
    items = page["items"]
    for i, ev in enumerate(items):
        text = words.describe(title, ev, names)
        if text:
            if undone_by_rollback(ev, items[i + 1:]):
                text += " (Undone: the host rolled the game back.)"
            out.append({"id": ev["id"], "at": ev.get("at"), "text": text})
    return out[-EVENTS:]


#: Events that are not moves of the game, which a rollback does not undo.
NOT_MOVES = {"message", "game_started", "game_paused", "game_resumed", "deadline_extended", "seat_replaced",
             "lobby_closing", "rematch_started", "absence_summary", *words.ROLLBACK_EVENTS}


def undone_by_rollback(ev: dict[str, Any], later: list[dict[str, Any]]) -> bool:
    """Whether a move of the game (`ev`) was undone by a rollback among the `later`
    events: one to step k, made while step P was open, undoes what steps k to P did (the
    opening of step k itself stands: the game went back to it)."""
    if ev.get("type") in NOT_MOVES:
        return False
    return any(undoes(rb, ev.get("phase"), ev.get("type")) for rb in later)


def capability(k: Kontor, gid: str, seat: int) -> dict[str, Any] | None:
    """The page capability of the query (`?step=&cap=`), when it is genuine and its step
    is the open one; None without one. A wrong one, or one for a step that is over, is
    a problem (the page says so and shows the public view)."""
    step, cap = request.args.get("step"), request.args.get("cap")
    if step is None and cap is None:
        return None
    if not (step or "").isascii() or not (step or "").isdigit() or not cap:
        raise Problem("bad_page_link")
    verify_page_cap(k, gid, int(step or 0), seat, cap)
    phase = k.store.phase(gid)
    # a link opens only its own open step, and only while no bot has taken the seat over
    # (the former player then reads the game as the public, like any former key)
    stale = (phase.get("id") != step or phase.get("status") != "collecting"
             or bool((k.store.seats(gid).get(seat) or {}).get("bot")))
    return {"step": int(step), "cap": cap, "stale": stale}


def seat_caller(k: Kontor, gid: str, seat: int) -> tuple[Caller, dict[str, Any] | None]:
    """Who reads a seat's page: the seat (its bearer, or a live capability), else the public."""
    k.check_seat(k._meta(gid), seat)
    auth = request.headers.get("Authorization")
    if auth:
        caller = bearer_caller(k, gid, auth)
        if caller != seat:
            raise Problem("wrong_seat", f"this is seat {seat}'s page")
        return seat, None
    cap = capability(k, gid, seat)
    if cap and not cap["stale"]:
        return seat, cap
    return "public", cap


# -- pages -------------------------------------------------------------------------------
@pages.get("/")
def lobby() -> Response:
    k = kontor()
    open_games, running = k.listing("lobby", 50, None)["items"], k.listing("running", 20, None)["items"]
    games = open_games + running
    known = registry.titles()
    titles = [{"id": tid, "name": g.name, "min": g.min_seats, "max": g.max_seats} for tid, g in sorted(known.items())]
    for g in games:
        g["title_name"] = known[g["title"]].name if g["title"] in known else g["title"]
    for g in open_games:
        g["closes"] = words.utc_time(datetime.fromisoformat(g["created_at"]).timestamp() + k.settings.lobby_ttl)
    return html(render_template("play/lobby.html", open=open_games, running=running, titles=titles))


@pages.get("/favicon.ico")
def favicon() -> Response:
    return send_from_directory(str(current_app.static_folder), "favicon.ico", mimetype="image/x-icon", max_age=86400)


@pages.get("/mine")
def mine() -> Response:
    return html(render_template("play/mine.html"))


@pages.get("/play/<gid>")
def public_page(gid: str) -> Response:
    k = kontor()
    return html(render_template("play/game.html", **table(k, gid, "public")))


@pages.get("/play/<gid>/part")
def public_part(gid: str) -> Response:
    k = kontor()
    return html(render_template("play/main.html", **table(k, gid, "public")))


@pages.get("/play/<gid>/<int:seat>")
def seat_page(gid: str, seat: int) -> Response:
    k = kontor()
    try:
        caller, cap = seat_caller(k, gid, seat)
        note = None
    except Problem as exc:
        if exc.code not in ("bad_page_link", "seat_changed"):
            raise
        caller, cap, note = "public", None, exc.detail
    if cap and cap["stale"]:
        note = (f"The link in your mail was for step {cap['step']}, which is over: this is what everyone may see. "
                "Your next mail brings a link for the next step that asks you.")
    data = table(k, gid, caller, cap)
    return html(render_template("play/game.html", page_seat=seat, note=note, **data))


@pages.get("/play/<gid>/<int:seat>/part")
def seat_part(gid: str, seat: int) -> Response:
    k = kontor()
    caller, cap = seat_caller(k, gid, seat)
    return html(render_template("play/main.html", page_seat=seat, **table(k, gid, caller, cap)))


# -- creating a game and joining it ----------------------------------------------------
#: The step lengths the create page offers, in words (seconds -> words).
STEP_CHOICES = [(3600, "1 hour"), (6 * 3600, "6 hours"), (86400, "1 day"), (2 * 86400, "2 days"),
                (3 * 86400, "3 days"), (7 * 86400, "1 week")]
#: The page's choices for a time bank's start and cap (issue 25: docs/hosting.md#time-bank),
#: and for the time a decision adds to it.
BANK_CHOICES = [(86400, "1 day"), (2 * 86400, "2 days"), (3 * 86400, "3 days"), (5 * 86400, "5 days"),
                (7 * 86400, "1 week"), (14 * 86400, "2 weeks")]
BANK_ADD_CHOICES = [(0, "nothing"), (3600, "1 hour"), (4 * 3600, "4 hours"), (12 * 3600, "12 hours"),
                    (86400, "1 day")]
#: The page's choices for how long one step may wait for an absent player.
ABSENCE_LIMIT_CHOICES = [(2 * 86400, "2 days"), (3 * 86400, "3 days"), (7 * 86400, "1 week"),
                         (14 * 86400, "2 weeks")]
#: A rule id inside a parenthesis that also says something else ("(10 with 3–6 seats; R1, V3)").
_ONE = r"(?:[A-Z]{1,3}-?\d{1,3}[a-z]?|§\d+)"
_TRAILING_IDS = re.compile(rf"\s*;\s*{_ONE}(?:\s*,\s*{_ONE})*\s*(?=\))")
_SECTIONS = re.compile(r"\s?\(\s*§\d+(?:\.\d+)?\s*\)")
_ID = re.compile(r"\b[A-Z]{1,3}-?\d{1,3}[a-z]?\b")


def variant(key: str, spec: dict[str, Any], guide: str | None, url: str) -> dict[str, Any] | None:
    """An option of a title as the create page offers it: a yes/no, a list of values or a
    number (empty: the rules' default); its help in words (rule ids dropped) and a link
    into the player's guide (the first cited rule's anchor, else the heading naming the
    option, else its variants heading).
    None for an option a form cannot offer in words (a board or data document, a list)."""
    kinds = {"boolean": "yes", "integer|null": "number"}
    kind = "choice" if spec.get("choices") else kinds.get(str(spec.get("type")))
    if kind is None:
        return None
    raw = str(spec.get("help") or key)
    text = _SECTIONS.sub("", _TRAILING_IDS.sub("", CITATION_RE.sub("", raw))).strip()
    text = re.sub(r"\bnull\b", "leaving it empty", text)
    anchor = None
    if guide is not None:
        known = rule_anchors(guide)
        anchor = next((rule for rule in _ID.findall(raw) if rule in known), None)
        heads = [line.lstrip("#").strip() for line in guide.splitlines() if line.startswith("#")]
        anchor = anchor or next((slug(h) for h in heads if f"`{key}`" in h), None) or next(
            (slug(h) for h in heads if "variant" in h.lower()), None)
    return {"key": key, "kind": kind, "choices": [str(c) for c in spec.get("choices") or []],
            "default": spec.get("default"), "text": text[:1].upper() + text[1:],
            "link": f"{url}#{anchor}" if anchor else url}


@pages.get("/new")
def new_game() -> Response:
    k = kontor()
    titles = []
    for entry in k.catalog():
        tid = entry["id"]
        path = k.rules_file(tid)
        guide = path.read_text(encoding="utf-8") if path else None
        url = f"/titles/{tid}/rules"
        variants = [v for key, spec in entry["options"].items() if (v := variant(key, spec, guide, url))]
        titles.append({"id": tid, "name": entry["name"], "min": entry["seats"]["min"], "max": entry["seats"]["max"],
                       "bots": entry["bots"], "rules": url if guide else None, "variants": variants})
    return html(render_template("play/new.html", titles=titles, steps=STEP_CHOICES, banks=BANK_CHOICES,
                                bank_adds=BANK_ADD_CHOICES, absence_limits=ABSENCE_LIMIT_CHOICES,
                                bounds=(k.settings.min_step_seconds, k.settings.max_step_seconds)))


def join_page(gid: str, seat: int | None) -> Response:
    k = kontor()
    game = k.game(gid)
    names = k.names(gid, k._meta(gid))
    why = None
    if seat is not None:
        k.check_seat(k._meta(gid), seat)
    if game["status"] != "lobby":
        why = "This game has started: its seats are taken. You can watch it on its page."
    elif seat is not None and (game["players"][seat]["taken"] or game["players"][seat]["bot"]):
        who = "a bot" if game["players"][seat]["bot"] else names[seat]
        why = f"Seat {seat} is taken (by {who}). Ask the host for another invitation, or join any open seat."
    elif all(p["taken"] or p["bot"] for p in game["players"]):
        why = "Every seat of this game is taken."
    # the seats' public keys (the page's script recognizes the seats this browser holds)
    seat_keys = [{"seat": p["seat"], "name": names[p["seat"]], "public_key": p.get("public_key")}
                 for p in game["players"] if p["taken"] and not p["bot"] and (seat is None or p["seat"] == seat)]
    closes = words.utc_time(k.lobby_expiry(k._meta(gid))) if game["status"] == "lobby" else None
    return html(render_template("play/join.html", game=game, gid=gid, seat=seat, why=why, names=names, closes=closes,
                                seat_keys=seat_keys,
                                any_open=seat is not None and game["status"] == "lobby" and not all(
                                    p["taken"] or p["bot"] for p in game["players"])))


@pages.get("/play/<gid>/join")
def join_any(gid: str) -> Response:
    return join_page(gid, None)


@pages.get("/play/<gid>/join/<int:seat>")
def join_seat(gid: str, seat: int) -> Response:
    return join_page(gid, seat)


# -- the JSON route ----------------------------------------------------------------------
class LinkOrderSchema(Schema):
    cap = ma.fields.String(required=True, validate=ma.validate.Length(1, 64), metadata={
        "description": "The capability of the page link (`cap` in the mail's link `/play/{gid}/{seat}?step=&cap=`)."})
    order = ma.fields.Dict(required=True, metadata={"description": "The order, as the title's order schema has it."})


@links_blp.route("/games/<gid>/phases/<int:phase>/orders/<int:seat>/by-link", tags=["links"])
class LinkOrder(MethodView):
    @links_blp.arguments(LinkOrderSchema, example={"cap": "k2v7q4x3m9d2a8c6e5b1n0p4rt", "order": {"bid": 300}})
    @links_blp.response(202, s.ReceiptSchema)
    @links_blp.alt_response(401, schema=ProblemSchema, content_type=PROBLEM, description=(
        "The capability is not this server's for this game, step and seat (`bad_page_link`)."))
    @links_blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM, description=(
        "The game takes no orders without a signature (`reply_orders_disabled`), or the capability was "
        "made for the seat's former player: the host has given the seat a new key or a bot since "
        "(`seat_changed`)."))
    @links_blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM, description=(
        "The step is not open (stale, resolving, or not asking this seat); the problem carries the open `phase`."))
    @links_blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM, description=(
        "The order is refused by the rules (the title's order `code`)."))
    @links_blp.doc(operationId="submitOrderByLink")
    def put(self, body: dict[str, Any], gid: str, phase: int, seat: int) -> Any:
        """Submit (or replace) a seat's order for one step with a mail link's capability.

        In a game created with `"mail_orders": "reply_address"`, a seat's mail links its page with
        a capability for the step it asks (`?step=<n>&cap=<capability>`): whoever reads that mail
        may answer that one step, as by mailing the order to the step's reply address (the same
        trust). The order is checked and stored exactly as such a mail's order (receipt `via`
        `page`). Example: `PUT /games/3f9c2a1b7e/phases/4/orders/1/by-link` with
        `{"cap": "<from the link>", "order": {"bid": 300}}`."""
        receipt = submit_by_link(kontor(), gid, phase, seat, body["cap"], body["order"])
        return jsonify({name: receipt[name] for name in s.ReceiptSchema().fields}), 202


__all__ = ["CSP", "links_blp", "pages", "table"]
