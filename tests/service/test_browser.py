"""The web pages in a real browser (issue 13, item 7): headless Chromium (Debian's
`chromium`, `make test` installs it when missing) driven by playwright, against the app
behind a real HTTP server, the real store and a real RQ worker (the e2e test's stack).

For each title a game runs with one browser player and bots in the other seats (issue
21): the player answers its first decisions from the page with clicks and number fields
only (places on the board, buttons, lists, named values, number fields, sheets; the whole
game is played by keyboard alone in tests/service/test_keyboard.py), each
order shown as a sentence and signed in the browser with the seat's Ed25519 key, and
every text the page shows on the way is scanned for ids, null and JSON
(tests/playertext.py). The decision UI's parts (keyboard on the board, back one step, a
number out of bounds) are pinned on the test title Stall. Also: joining an open game with
a key made in the browser, "my games", a mail link's capability (no key at all, the same
decision UI), the stream, and the key file's import. Screenshots of each title's board
decision at 1280 and 390 px go to var/screenshots/ (`make screenshots`: to
docs/screenshots/, shown in the README).

The seat page keeps up and keeps the player's place (issue 22): a step answered elsewhere
is shown at once, even under a field being typed in, saying why; a pick on the board
brings the next question into view; a reload keeps the open step's picks.

One browser for the whole module; the tests skip, saying why, only when Chromium or
playwright cannot be had.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from service.channels.links import page_url
from service.client.keystore import Keystore
from service.core.kontor import Kontor
from tests.playertext import problems
from tests.service.browserkit import FOLLOW, SHOTS
from tests.service.conftest import Player

#: The games' names (the pages show them as their titles).
NAMES = {"haendler": "Friday traders", "aufachse": "Night haul", "fantasy": "Guild market", "stall": "Market day"}


def _post(base: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    r = requests.post(base + path, json=body, headers={"Idempotency-Key": uuid.uuid4().hex}, timeout=10)
    assert r.status_code == 201, r.text
    return dict(r.json())


def _game(base: str, title: str, seats: int, **body: Any) -> Player:
    host = Player.new()
    host.game = _post(base, "/games", {"title": title, "seats": seats, "host_key": host.key.public, "seed": 11,
                                      "name": NAMES[title], **body})["id"]
    return host


def _bots_and_start(base: str, host: Player, seats: range, bot: str) -> None:
    for seat in seats:
        r = requests.patch(f"{base}/games/{host.game}/seats/{seat}", json={"bot": bot}, headers=host.bearer(),
                           timeout=10)
        assert r.status_code == 200, r.text
    r = requests.patch(f"{base}/games/{host.game}", json={"status": "running"}, headers=host.bearer(), timeout=10)
    assert r.status_code == 200, r.text


def _until_asked(base: str, gid: str, seat: int, worker: Any, limit: int = 80) -> dict[str, Any]:
    """Let the bots play until a step asks `seat`; that step."""
    for _ in range(limit):
        worker()
        ph = requests.get(f"{base}/games/{gid}/phases/current", timeout=10).json()
        assert ph["status"] != "finished"
        if ph["status"] == "collecting" and seat in ph["requested"]:
            return dict(ph)
        time.sleep(0.05)
    raise AssertionError(f"seat {seat} is never asked")


def _seated(base: str, host: Player, name: str, seats: int, bot: str, worker: Any) -> tuple[Player, dict[str, Any]]:
    """`name` joins `host`'s game of `seats` seats first, bots of kind `bot` take the
    other seats, the game starts and is played until `name` is asked: (the player, that step)."""
    me = Player.new()
    me.game = host.game
    me.seat = _post(base, f"/games/{host.game}/seats", {"name": name, "public_key": me.key.public})["seat"]
    _bots_and_start(base, host, range(1, seats), bot)
    return me, _until_asked(base, host.game, me.seat, worker)


def _key_file(player: Player, name: str) -> str:
    """The `kontor` key file (version 2) holding `player`'s key and its seat."""
    key = player.key
    return json.dumps({"version": 2, "identities": {name: {
        "jwk": key.as_jwk(), "public": key.public, "kid": key.kid, "created_at": "2026-11-28T00:00:00+00:00",
        "games": {player.game: {"url": "http://elsewhere.example", "seat": player.seat}}}}})


def _import_keys(tab: Any, base: str, text: str) -> None:
    """Import a key file on "My games and keys", as a player would."""
    tab.goto(f"{base}/mine")
    tab.set_input_files("#import", files=[{"name": "keys.json", "mimeType": "application/json",
                                           "buffer": text.encode()}])
    tab.wait_for_selector("#keys-status:has-text('Imported 1 key')")


def _check_turn_page(tab: Any, title: str) -> int:
    """What a seat's page draws when it is asked; the step it asks (once the page's
    script has wired the decision: a click before that would do nothing)."""
    tab.wait_for_selector("#decide[data-wired]", state="attached", timeout=FOLLOW)
    assert tab.locator("figure.picture svg").count() == 1
    assert tab.locator("figure.picture svg title").count() >= 1  # accessible picture
    assert len(tab.inner_text(".summary pre").strip()) > 20
    assert tab.inner_text("#turn-h").startswith("Your turn")
    assert "(you)" in tab.inner_text("table.players")
    assert "The game begins with" in tab.inner_text("ol.events")
    assert tab.locator("#programmers[open]").count() == 0  # the JSON stays closed away
    return int(tab.get_attribute("#decide", "data-step"))


def _send_and_follow(tab: Any, worker: Any, step: int) -> None:
    """Send the default order and see the page move on."""
    tab.click("#send-default")
    tab.wait_for_selector("#order-status:has-text('Order received')", timeout=10_000)
    worker()  # the step resolves (the bots answered before the seat did)
    tab.wait_for_selector(f"#content:not([data-step='{step}'])", timeout=FOLLOW)  # no eval: the CSP forbids it


#: A whole game per title: its seats (the player in seat 0, bots in the others), the bots'
#: kind and the options of a short game.
WHOLE = {"haendler": (2, "greedy", {"light": True}), "aufachse": (2, "planner", {"kids": True}),
         "fantasy": (3, "trader", {"rounds": 1})}
#: The screenshots each title's game takes (a board decision; Fantasy's sheet too).
SHOTS_OF = {"fantasy": {"board", "sheet"}}
#: How many decisions the game by clicks makes (the keyboard plays whole games:
#: tests/service/test_keyboard.py).
BY_CLICKS = 3
#: The widths the page is drawn at for the screenshots: a desktop and a phone.
WIDTHS = {"": 1280, "-390": 390}
#: What a person reads of the page: its visible text, and the words read out (aria-label)
#: or shown on hover (title) of its parts.
READABLE = """() => [document.body.innerText,
  ...[...document.querySelectorAll('[aria-label], [title]')].map(e =>
      `${e.getAttribute('aria-label') || ''} ${e.getAttribute('title') || ''}`)].join('\\n')"""


def _readable_problems(tab: Any) -> list[str]:
    return problems(tab.evaluate(READABLE))


def _shoot(tab: Any, name: str) -> None:
    """The page at a desktop's and a phone's width (`name.png`, `name-390.png`)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for suffix, width in WIDTHS.items():
        tab.set_viewport_size({"width": width, "height": 900 if width > 800 else 844})
        tab.wait_for_timeout(150)  # the board re-lays its halos' tooltip; the layout settles
        tab.screenshot(path=str(SHOTS / f"{name}{suffix}.png"), full_page=True)
        wide, shown = tab.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert wide <= shown, f"{name}: the page is {wide - shown} px wider than a {width} px window"
    tab.set_viewport_size({"width": 1280, "height": 900})


def _decide(tab: Any, title: str, shots: dict[str, bool]) -> int:
    """Make the open decision with clicks and number fields only: a place on the board
    where the ask has some (its halo clicked, as a player clicks the lit place), else the
    first button, the first entry of a long list, a named value ("pass") or the number
    field's least value, a sheet as it comes; send once the picks make an order. The
    number of clicks."""
    clicks = 0
    decide = tab.locator("#decide")
    for _ in range(20):
        # drawn (a reload of the page's part draws it again, with the picks made so far)
        tab.wait_for_selector("#decide[data-ready]:not([aria-busy])", state="attached", timeout=10_000)
        picks = int(decide.get_attribute("data-picks") or 0)
        found = _readable_problems(tab)
        assert not found, "\n".join(found)
        if decide.get_attribute("data-complete") == "1":
            sentence = tab.inner_text("#order-sentence")
            assert sentence.startswith("Your order: ") and len(sentence) > len("Your order: ") + 2
            tab.click("#order-send")
            tab.wait_for_selector("#order-status:has-text('Order received')", timeout=10_000)
            return clicks + 1
        halos = tab.locator("figure.picture svg .halos .halo")
        if tab.locator("#decide .ask-choose").count() and halos.count():
            targets = tab.locator("figure.picture svg .pick")
            assert targets.count() == halos.count() and targets.first.get_attribute("role") == "button"
            assert targets.first.get_attribute("tabindex") == "0" and targets.first.get_attribute("aria-label")
            if not shots.get("board") and halos.count() <= 40:  # a choice, not "anywhere on the board"
                shots["board"] = True
                _shoot(tab, title)
            halos.last.click()  # drawn last: on top of any halo it overlaps
        elif tab.locator("#decide .ask-choose button.option").count():
            tab.locator("#decide .ask-choose button.option").first.click()
        elif tab.locator("#decide .ask-choose select").count():
            tab.locator("#decide .ask-choose select").select_option(index=1)
            tab.click("#decide .ask-choose button[type=submit]")
        elif tab.locator("#decide .ask-number button.named").count():
            tab.locator("#decide .ask-number button.named").first.click()
        elif tab.locator("#decide .ask-number").count():
            field = tab.locator("#decide .ask-number input[type=number]")
            field.fill(field.get_attribute("min") or "0")
            tab.click("#decide .ask-number button[type=submit]")
        elif not tab.locator("#decide .ask-sheet").count():
            continue  # the part was reloaded as we looked: look again once it is drawn
        else:
            if not shots.get("sheet"):
                shots["sheet"] = True
                _shoot(tab, f"{title}-sheet")
            tab.click("#decide .ask-sheet button[type=submit]")
        clicks += 1
        try:
            tab.wait_for_selector(f"#decide[data-picks='{picks + 1}']", state="attached", timeout=10_000)
        except Exception as exc:
            raise AssertionError(f"the pick was not taken: {tab.inner_text('#decide')}") from exc
    raise AssertionError(f"no order after 20 picks: {tab.inner_text('#decide')}")


def _play_to_the_end(tab: Any, worker: Any, title: str, enough: int | None = None,
                     done: set[str] | None = None) -> tuple[int, int]:
    """Answer every decision of the page's seat until the game is over (or, with `enough`,
    until that many decisions are made and the title's screenshots taken; the steps
    answered go to `done`); (decisions, clicks)."""
    done = set() if done is None else done
    decisions = clicks = 0
    shots: dict[str, bool] = {}
    until = time.monotonic() + 420
    while not tab.locator("#over-h").count():
        if enough is not None and decisions >= enough and set(shots) >= SHOTS_OF.get(title, {"board"}):
            break
        assert time.monotonic() < until, "the game did not end in time"
        ready = tab.locator("#decide[data-ready]")
        step = None
        if ready.count():
            try:  # the page may draw its part again between the count and the read
                step = ready.get_attribute("data-step", timeout=2_000)
            except Exception as exc:  # playwright's TimeoutError (its module may be missing: skipped then)
                if type(exc).__name__ != "TimeoutError":
                    raise
                continue
        if step is not None and step not in done:
            done.add(step)
            clicks += _decide(tab, title, shots)
            decisions += 1
            continue
        worker()
        tab.wait_for_timeout(60)
    return decisions, clicks


@pytest.mark.parametrize("title", sorted(WHOLE))
def test_a_game_from_the_page_by_clicks(tab: Any, live_server: str, worker: Any, title: str) -> None:
    """A player plays the first `BY_CLICKS` decisions of a game of each title from its page
    (and on until the title's screenshots are taken), with clicks and number fields only
    (bots in the other seats, a short game), never typing an identifier nor reading JSON;
    every text the page shows on the way is in words. The orders went in signed by the
    browser, each through the decision UI: the history holds one order of the seat per
    step it was asked, none a default. (The whole game of each title is played by
    keyboard alone, the same way: tests/service/test_keyboard.py.)"""
    base = live_server
    seats, bot, options = WHOLE[title]
    host = _game(base, title, seats, options=options)
    me, _ = _seated(base, host, "Clara", seats, bot, worker)
    _import_keys(tab, base, _key_file(me, "clara"))
    tab.goto(f"{base}/play/{host.game}/{me.seat}")
    _check_turn_page(tab, title)
    steps: set[str] = set()
    decisions, clicks = _play_to_the_end(tab, worker, title, enough=BY_CLICKS, done=steps)
    assert decisions >= BY_CLICKS and clicks >= decisions and len(steps) == decisions
    found = _readable_problems(tab)
    assert not found, "\n".join(found)
    if tab.locator("#over-h").count():  # the game is over (a short one): its history holds every order
        history = requests.get(f"{base}/games/{host.game}/history", timeout=10).json()
        mine = [st for st in history["steps"] if str(me.seat) in (st.get("orders") or {})]
        assert len(mine) == decisions
        assert not any(me.seat in (st.get("defaults") or []) for st in history["steps"])
    else:  # the last step is still open: the seat's order of it is stored, signed in the browser
        last = max(steps, key=int)
        r = requests.get(f"{base}/games/{host.game}/phases/{last}/orders/{me.seat}", headers=me.bearer(), timeout=10)
        assert r.status_code == 200, r.text
        assert r.json()["order"] and r.json()["via"] == "http", r.text


def test_join_in_the_browser_play_and_my_games(tab: Any, live_server: str, worker: Any, tmp_path: Path) -> None:
    base = live_server
    host = _game(base, "haendler", 3, options={"light": True})
    tab.goto(f"{base}/")
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / "lobby.png"), full_page=True)
    tab.click(f"a[href='/play/{host.game}']")
    tab.fill("#join-name", "Anna <Händlerin>")
    tab.click("#join-form button[type=submit]")
    tab.wait_for_url(f"**/play/{host.game}/0")
    stored = json.loads(tab.evaluate("localStorage.getItem('kontor.keys')"))
    (ident,) = stored["identities"].values()
    assert ident["games"][host.game]["seat"] == 0 and set(ident["jwk"]) == {"kty", "crv", "x", "d"}
    seat0 = requests.get(f"{base}/games/{host.game}/seats/0", timeout=10).json()
    assert seat0["public_key"] == ident["public"] and seat0["kid"] == ident["kid"]  # RFC 7638 in the browser
    assert seat0["name"] == "Anna <Händlerin>"
    _bots_and_start(base, host, range(1, 3), "greedy")
    # the page was in the lobby: it notices the start by itself
    tab.wait_for_selector("#decide", state="attached", timeout=FOLLOW)
    step = _check_turn_page(tab, "haendler")
    assert "Anna <Händlerin>" in tab.inner_text("table.players")
    tab.goto(f"{base}/mine")
    tab.wait_for_selector("#games li strong:has-text('your turn')")
    tab.screenshot(path=str(SHOTS / "mine.png"), full_page=True)
    # the export is a key file the `kontor` command reads, with a key the server takes
    with tab.expect_download() as download:
        tab.click("#export")
    saved = tmp_path / "keys.json"
    download.value.save_as(saved)
    (cli,) = Keystore.load(tmp_path).identities.values()
    assert cli.name == "Anna_Handlerin" and cli.seat_in(host.game) == 0 and cli.public == ident["public"]
    as_cli = Player(cli.key, host.game, 0)
    assert requests.get(f"{base}/games/{host.game}/phases/current", headers=as_cli.bearer(),
                        timeout=10).json()["you"]["requested"]
    tab.goto(f"{base}/play/{host.game}/0")
    tab.wait_for_selector("#decide[data-wired]", state="attached", timeout=FOLLOW)
    _send_and_follow(tab, worker, step)
    # the public page shows no form and names who still has to answer
    tab.goto(f"{base}/play/{host.game}")
    assert tab.locator("#decide").count() == 0 and tab.locator("figure.picture svg").count() == 1


@pytest.fixture
def stall() -> Iterator[None]:
    """Stall (tests/service/stall.py) in the registry for the whole test. Named before
    `tab`, it is set up first and ends last: the tab is closed before the title leaves,
    so the page's own polls never meet a game whose title is gone (refused, 422, and a
    script error at the tab's teardown)."""
    from tests.service.stall import registered

    with registered():
        yield


def test_a_mail_link_answers_one_step_without_a_key(stall: None, tab: Any, live_server: str, worker: Any,
                                                    kontor: Kontor) -> None:
    """A mail's page link (its capability, no key in the browser) gets the same decision
    UI: the choices are asked with the capability, the order is sent by the link."""
    base = live_server
    host = _game(base, "stall", 2, mail_orders="reply_address")
    me, ph = _seated(base, host, "Mo", 2, "passer", worker)
    link = page_url(kontor, host.game, me.seat, ph["id"])
    tab.goto(base + link.split("127.0.0.1:8000", 1)[1])
    tab.wait_for_selector("#decide[data-ready]", timeout=FOLLOW)
    step = int(tab.get_attribute("#decide", "data-step"))
    assert step == ph["id"]
    assert "through the link in your mail" in tab.inner_text("#turn")
    assert tab.locator("#actions").count() == 0  # actions are signed: not by a link
    tab.locator("#decide button.option", has_text="Tuch").click()
    tab.wait_for_selector("#decide[data-picks='1']")
    tab.click("#decide form.number button[type=submit]")  # the field starts at its least: 1
    tab.wait_for_selector("#decide[data-complete='1']")
    tab.click("#order-send")
    tab.wait_for_selector("#order-status:has-text('Order received: Buy 1 Tuch.')", timeout=10_000)
    order = requests.get(f"{base}/games/{host.game}/phases/{step}/orders/{me.seat}", headers=me.bearer(),
                         timeout=10).json()
    assert order["via"] == "page" and order["order"] == {"buy": "tuch", "count": 1}
    worker()
    # the link was for that one step: the page goes back to the public view
    tab.wait_for_selector(f"#content:not([data-step='{step}'])", timeout=FOLLOW)  # no eval: the CSP forbids it
    assert tab.locator("#decide").count() == 0


def test_the_page_follows_the_stream(tab: Any, live_server: str, worker: Any) -> None:
    """The page follows `GET /games/{id}/stream` (server-sent events) instead of polling,
    and the stream's frames of the next step reload it: well before the slow poll a
    streaming page still makes (every 15 s)."""
    base = live_server
    host = _game(base, "haendler", 2, options={"light": True})
    me, ph = _seated(base, host, "Sam", 2, "greedy", worker)
    tab.goto(f"{base}/play/{host.game}")
    tab.wait_for_selector("body[data-follow='stream']", timeout=10_000)
    assert tab.get_attribute("#content", "data-step") == str(ph["id"])
    r = requests.put(f"{base}/games/{host.game}/phases/{ph['id']}/orders/{me.seat}",
                     json={"token": me.order_token(ph["id"], ph_default(base, me))}, timeout=10)
    assert r.status_code == 202, r.text
    worker()
    tab.wait_for_selector(f"#content:not([data-step='{ph['id']}'])", timeout=10_000)


def ph_default(base: str, me: Player) -> dict[str, Any]:
    you = requests.get(f"{base}/games/{me.game}/phases/current", headers=me.bearer(), timeout=10).json()["you"]
    return dict(you["default_order"])


def test_a_decision_by_clicks_on_the_test_title(stall: None, tab: Any, live_server: str, worker: Any) -> None:
    """The decision UI on Stall (tests/service/stall.py): the first level's options as
    buttons and as places on the board (role=button, keyboard), a number field with its
    bounds, the breadcrumb and "Back one step", the order as a sentence, then sent."""
    base = live_server
    host = _game(base, "stall", 2)
    me, ph = _seated(base, host, "Rosa", 2, "passer", worker)
    _import_keys(tab, base, _key_file(me, "rosa"))
    tab.goto(f"{base}/play/{host.game}/{me.seat}")
    tab.wait_for_selector("#decide[data-ready]", timeout=FOLLOW)
    assert tab.inner_text("#decide .say") == "Buy 1 to 3 of a good, or pass."
    assert tab.locator("#decide button.option").all_inner_texts() == ["Wein", "Tuch", "Pass"]
    wein = tab.locator("figure.picture svg #good-wein")
    assert wein.get_attribute("role") == "button" and wein.get_attribute("tabindex") == "0"
    assert wein.get_attribute("aria-label") == "Wein"
    tab.locator("figure.picture svg #good-tuch").focus()
    assert tab.inner_text(".board-tip") == "Tuch"
    tab.keyboard.press("Enter")
    tab.wait_for_selector("#decide[data-picks='1']")
    assert tab.locator("#decide ol.picked li").all_inner_texts() == ["Tuch"]
    field = tab.locator("#decide form.number input[type=number]")
    assert (field.get_attribute("min"), field.get_attribute("max")) == ("1", "2")
    tab.click("#order-back")
    tab.wait_for_selector("#decide[data-picks='0']")
    tab.locator("#decide button.option", has_text="Wein").click()
    tab.wait_for_selector("#decide[data-picks='1']")
    field.fill("5")
    tab.click("#decide form.number button[type=submit]")
    assert "from 1 to 3" in tab.inner_text("#decide .decision-status")
    field.fill("2")
    tab.click("#decide form.number button[type=submit]")
    tab.wait_for_selector("#decide[data-complete='1']")
    assert tab.inner_text("#order-sentence") == "Your order: Buy 2 Wein"
    tab.click("#order-send")
    tab.wait_for_selector("#order-status:has-text('Order received: Buy 2 Wein.')", timeout=10_000)
    stored = requests.get(f"{base}/games/{host.game}/phases/{ph['id']}/orders/{me.seat}", headers=me.bearer(),
                          timeout=10).json()
    assert stored["order"] == {"buy": "wein", "count": 2}
    tab.reload()  # the page says so again after a reload, while the step is open
    tab.wait_for_selector("#order-status:has-text('Order received: Buy 2 Wein.')", timeout=FOLLOW)
    # an action at any time, beside the board: picked, shown as a sentence, done at once
    tab.wait_for_selector("#act[data-ready]", state="attached", timeout=FOLLOW)
    assert tab.locator("#act button.option").all_inner_texts() == ["Hoard 1 Wein", "Hoard 1 Tuch"]
    tab.locator("#act button.option", has_text="Hoard 1 Tuch").click()
    tab.wait_for_selector("#act[data-complete='1']")
    assert tab.inner_text("#act-sentence") == "You will: Hoard 1 Tuch for 2 coins"
    tab.click("#act-send")
    tab.wait_for_selector("#action-status:has-text('Rosa hoarded 1 Tuch.')", timeout=10_000)
    assert "Rosa has 3 coins left." in tab.inner_text("#action-status")
    view = requests.get(f"{base}/games/{host.game}/view", headers=me.bearer(), timeout=10).json()
    assert view["state"]["players"][me.seat]["goods"]["tuch"] == 1


# -- the seat page keeps up with the game and keeps the player's place (issue 22) ---------------
#: Whether an element is inside the window (at least in part).
IN_VIEW = """(sel) => { const n = document.querySelector(sel); if (!n) return false;
  const r = n.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight && r.height > 0; }"""


def _stall_page(tab: Any, base: str, worker: Any, name: str) -> tuple[Player, dict[str, Any]]:
    """A Stall game asking `name` (a passer bot in the other seat), its seat page open."""
    host = _game(base, "stall", 2)
    me, ph = _seated(base, host, name, 2, "passer", worker)
    _import_keys(tab, base, _key_file(me, name.lower()))
    tab.goto(f"{base}/play/{host.game}/{me.seat}")
    tab.wait_for_selector("#decide[data-ready]", timeout=FOLLOW)
    return me, ph


def _until(tab: Any, script: str, arg: Any, what: str, limit: float = 5.0) -> None:
    until = time.monotonic() + limit
    while not tab.evaluate(script, arg):
        assert time.monotonic() < until, what
        tab.wait_for_timeout(50)


def test_a_step_answered_elsewhere_is_shown_at_once(stall: None, tab: Any, live_server: str, worker: Any) -> None:
    """The page put the focus into "How many?" by itself after a pick; the player typed
    nothing; the order came from elsewhere and the step moved on: the page shows the new
    state within the poll's time (a field the page focused holds no reload), says in its
    status line why, and keeps the focus on the page."""
    base = live_server
    me, ph = _stall_page(tab, base, worker, "Ida")
    tab.locator("#decide button.option", has_text="Wein").click()
    tab.wait_for_selector("#decide[data-picks='1']")
    assert tab.evaluate("() => document.activeElement.matches('#decide input[type=number]')")
    r = requests.put(f"{base}/games/{me.game}/phases/{ph['id']}/orders/{me.seat}",
                     json={"token": me.order_token(ph["id"], {"buy": "tuch", "count": 1})}, timeout=10)
    assert r.status_code == 202, r.text
    worker()
    tab.wait_for_selector(f"#content:not([data-step='{ph['id']}'])", state="attached", timeout=8_000)
    # the status line is written right after the new state is shown: wait for it too
    tab.wait_for_selector("#order-status:has-text('This step is over')", timeout=8_000)
    assert tab.get_attribute("#order-status", "role") == "status"
    assert tab.evaluate("() => document.activeElement !== document.body")
    # the next step asks again; now the player has typed a number and not sent it: a
    # field being typed in holds no reload that changes what is asked either
    ph = _until_asked(base, me.game, me.seat, worker)
    tab.wait_for_selector(f"#decide[data-step='{ph['id']}'][data-ready]", state="attached", timeout=8_000)
    tab.locator("#decide button.option", has_text="Wein").click()
    tab.wait_for_selector("#decide[data-picks='1']")
    tab.locator("#decide input[type=number]").press_sequentially("2")
    r = requests.put(f"{base}/games/{me.game}/phases/{ph['id']}/orders/{me.seat}",
                     json={"token": me.order_token(ph["id"], {"pass": True})}, timeout=10)
    assert r.status_code == 202, r.text
    worker()
    tab.wait_for_selector(f"#content:not([data-step='{ph['id']}'])", state="attached", timeout=8_000)
    # the status line is written right after the new state is shown: wait for it too
    tab.wait_for_selector("#order-status:has-text('This step is over')", timeout=8_000)


def test_a_reload_under_a_kept_pick_holds_the_focus_on_the_turn_heading(stall: None, tab: Any, live_server: str,
                                                                         worker: Any) -> None:
    """A pick put the keyboard in "How many?"; the part is reloaded (something else on it
    changed, not what it asks): while the decision asks the server again for the kept pick,
    the focus waits on the turn's heading, never on <body>, and then goes back to the field."""
    _stall_page(tab, live_server, worker, "Liv")
    tab.locator("#decide button.option", has_text="Wein").click()
    tab.wait_for_selector("#decide[data-picks='1']")
    assert tab.evaluate("() => document.activeElement.matches('#decide input[type=number]')")
    asked: list[Any] = []  # the decision's question for the kept pick, held back until looked at

    def part(route: Any) -> None:  # the same part with one thing more on it: not what it asks
        answer = route.fetch()
        route.fulfill(response=answer, body=answer.text() + "<!-- reloaded -->")

    tab.route("**/part", part)
    tab.route("**/choices", lambda route: asked.append(route))
    tab.evaluate("() => document.dispatchEvent(new CustomEvent('kontor:changed'))")
    until = time.monotonic() + 10
    while not asked:
        assert time.monotonic() < until, "the reload never asked the server for the kept pick"
        tab.wait_for_timeout(50)
    assert tab.evaluate("() => document.activeElement.id") == "turn-h"
    for route in asked:
        route.continue_()
    tab.wait_for_selector("#decide[data-picks='1'][data-ready]", state="attached", timeout=FOLLOW)
    _until(tab, "(sel) => document.activeElement.matches(sel)", "#decide input[type=number]",
           "the focus did not go back to the kept pick's next question")


def test_a_pick_on_the_board_brings_the_next_question_into_view(stall: None, tab: Any, live_server: str,
                                                                 worker: Any) -> None:
    """A short window: the board's place is in view, the decision is not; the pick on the
    board brings the decision's next question into view, with the focus on it."""
    tab.set_viewport_size({"width": 1280, "height": 260})
    _stall_page(tab, live_server, worker, "Ole")
    place = tab.locator("figure.picture svg #good-tuch")
    place.focus()
    tab.evaluate("() => document.querySelector('figure.picture').scrollIntoView({block: 'end'})")
    assert not tab.evaluate(IN_VIEW, "#decide .question"), "the test needs the decision out of view"
    tab.keyboard.press("Enter")
    tab.wait_for_selector("#decide[data-picks='1']")
    _until(tab, IN_VIEW, "#decide .question", "the next question stays out of view")
    _until(tab, IN_VIEW, "#decide input[type=number]", "the next question's field stays out of view")
    assert tab.evaluate("() => document.activeElement.matches('#decide input[type=number]')")


def test_a_reload_keeps_the_picks_of_the_open_step(stall: None, tab: Any, live_server: str, worker: Any) -> None:
    """Two picks, then the browser reloads the page: the picks are kept (asked again of the
    server), and the page says so; the order they make is sent as it is."""
    base = live_server
    me, ph = _stall_page(tab, base, worker, "Uwe")
    tab.locator("#decide button.option", has_text="Wein").click()
    tab.wait_for_selector("#decide[data-picks='1']")
    tab.fill("#decide form.number input[type=number]", "2")
    tab.click("#decide form.number button[type=submit]")
    tab.wait_for_selector("#decide[data-complete='1']")
    tab.reload()
    tab.wait_for_selector("#decide[data-picks='2'][data-complete='1']", state="attached", timeout=FOLLOW)
    assert tab.inner_text("#decide ol.picked").split("\n") == ["Wein", "2"]
    assert tab.inner_text("#decide .decision-status") == "Your choices so far were kept."
    assert tab.inner_text("#order-sentence") == "Your order: Buy 2 Wein"
    tab.click("#order-send")
    tab.wait_for_selector("#order-status:has-text('Order received: Buy 2 Wein.')", timeout=10_000)
    tab.reload()  # sent: nothing is kept to pick again
    tab.wait_for_selector("#decide[data-ready]", timeout=FOLLOW)
    assert tab.get_attribute("#decide", "data-picks") == "0"
