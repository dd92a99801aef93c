"""The pages on a screen and on a phone (issue 22, item 3), measured in a real browser.

The layout contract: on a 1280 px window the picture (`figure.picture`) gets a column at
least 780 CSS px wide and its SVG fills it, the side panel beside it; at 390 px every page
fits the width (no sideways scroll) and the picture fills it. The board zooms and pans
(`static/play/zoom.js`) without a drag counting as a click on a place. Each title's
picture reads: at 1280 px no text under 11 px and no two texts overlapping; at 390 px no
overlap (`picture_problems`, tests/service/browserkit.py). No page asks another host for
anything, and none gets a 404 (the favicon included).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from tests.service.browserkit import FOLLOW, picture_problems, watch
from tests.service.test_browser import _game, _import_keys, _key_file, _seated

#: The titles' bots and a short game's options (as the whole-game browser test plays them).
BOTS = {"haendler": ("greedy", {"light": True}), "aufachse": ("planner", {"kids": True}),
        "fantasy": ("trader", {"rounds": 1})}
#: Each title at its largest seat count and at a small one.
SEATS = {"haendler": (4, 2), "aufachse": (6, 2), "fantasy": (8, 3)}
#: The contract: the picture's column on a 1280 px window, in CSS px.
COLUMN = 780
PHONE = 390

#: How wide the page is laid out and how wide it shows: a page that scrolls sideways is wider.
WIDTHS = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
#: The elements that reach past the window's right edge, outermost first (what makes a page too wide).
STICKING_OUT = """() => {
  const w = document.documentElement.clientWidth, out = [];
  const clipped = (e) => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
    if (getComputedStyle(a).overflowX !== "visible") return true; return false; };
  for (const e of document.body.querySelectorAll("*")) {
    if (clipped(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.right > w + 0.5 && !(e.parentElement && e.parentElement.getBoundingClientRect().right > w + 0.5))
      out.push(`${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}${e.className && e.className.baseVal === undefined
               ? "." + String(e.className).trim().replace(/\\s+/g, ".") : ""} (${Math.round(r.right - w)} px)`);
  }
  return out.slice(0, 8);
}"""
#: The picture's box, its SVG's and the side panel's, on the screen.
BOXES = """() => {
  const box = (sel) => { const e = document.querySelector(sel); if (!e) return null;
    const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, width: r.width}; };
  const fig = document.querySelector("figure.picture");
  return {figure: box("figure.picture"), svg: box("figure.picture svg"), side: box(".board .side"),
          inner: fig ? fig.clientWidth : 0};
}"""


def _wide(tab: Any, where: str) -> None:
    scroll, client = tab.evaluate(WIDTHS)
    assert scroll <= client, (f"{where}: the page is {scroll - client} px wider than the window ({client} px): "
                              f"{tab.evaluate(STICKING_OUT)}")


def _at(tab: Any, width: int) -> None:
    tab.set_viewport_size({"width": width, "height": 900 if width > 800 else 844})
    tab.wait_for_timeout(100)  # the layout settles


def _seat_page(tab: Any, base: str, worker: Any, title: str, seats: int) -> str:
    """A running game of `title` with `seats` seats, this browser holding seat 0's key, on
    seat 0's page while it is asked; the game's id."""
    bot, options = BOTS[title]
    host = _game(base, title, seats, options=options)
    me, _ = _seated(base, host, "Clara", seats, bot, worker)
    _import_keys(tab, base, _key_file(me, "clara"))
    tab.goto(f"{base}/play/{host.game}/{me.seat}")
    tab.wait_for_selector("#decide[data-wired]", state="attached", timeout=FOLLOW)
    return host.game


def _check_layout(tab: Any, where: str) -> None:
    """The page keeps the layout contract at 1280 px and at 390 px (and ends at 1280 px)."""
    _at(tab, 1280)
    _wide(tab, f"{where} at 1280 px")
    b = tab.evaluate(BOXES)
    assert b["svg"]["width"] >= COLUMN, f"{where}: the picture is {b['svg']['width']:.0f} px wide at 1280 px"
    assert b["svg"]["width"] >= b["inner"] - 20, f"{where}: the picture does not fill its column"
    assert b["side"]["left"] >= b["figure"]["right"], f"{where}: the side panel is not beside the picture"
    _at(tab, PHONE)
    _wide(tab, f"{where} at {PHONE} px")
    b = tab.evaluate(BOXES)
    assert b["figure"]["right"] <= PHONE and b["svg"]["width"] >= b["inner"] - 20, f"{where}: {b}"
    assert b["side"]["top"] > b["figure"]["top"], f"{where}: the side panel is not below the picture on a phone"
    _at(tab, 1280)


@pytest.mark.parametrize("title", sorted(BOTS))
def test_the_page_gives_the_picture_its_column(tab: Any, live_server: str, worker: Any, title: str) -> None:
    """Seat page and public page of each title (largest seat count): the picture's column
    is at least 780 px on a 1280 px window, with the side panel beside it; on a 390 px
    phone the page does not scroll sideways, the picture fills the width, the panel below."""
    base = live_server
    gid = _seat_page(tab, base, worker, title, SEATS[title][0])
    _check_layout(tab, f"{title}'s seat page")
    tab.goto(f"{base}/play/{gid}")
    tab.wait_for_selector("figure.picture svg")
    _check_layout(tab, f"{title}'s public page")


def _pictures(tab: Any, title: str, where: str) -> list[str]:
    _at(tab, 1280)
    found = [f"{where} at 1280 px: {p}" for p in picture_problems(tab)]
    _at(tab, PHONE)
    found += [f"{where} at {PHONE} px: {p}" for p in picture_problems(tab, min_px=None)]
    _wide(tab, f"{where} at {PHONE} px")
    _at(tab, 1280)
    return found


@pytest.mark.parametrize("title,seats", [
    pytest.param(title, seats, id=f"{title}-{seats}")
    for title in sorted(SEATS) for seats in SEATS[title]])
def test_the_picture_reads(tab: Any, live_server: str, worker: Any, title: str, seats: int) -> None:
    """Each title's picture on a seat's page and on the public page, at the largest seat
    count and a small one: at 1280 px no text under 11 px and none overlapping another; at
    390 px none overlapping (the picture can be zoomed there) and no sideways scroll."""
    base = live_server
    gid = _seat_page(tab, base, worker, title, seats)
    found = _pictures(tab, title, f"{title} ({seats} seats), seat page")
    tab.goto(f"{base}/play/{gid}")
    tab.wait_for_selector("figure.picture svg")
    found += _pictures(tab, title, f"{title} ({seats} seats), public page")
    assert not found, "\n".join(found)


def _visit(tab: Any, url: str, ready: str, asked: list[str], failed: list[str]) -> None:
    """Open `url`, wait for `ready`, and check it fits a phone and a screen."""
    start = len(asked)
    tab.goto(url)
    tab.wait_for_selector(ready, state="attached", timeout=FOLLOW)
    icons = tab.eval_on_selector_all("link[rel~=icon]", "(ls) => ls.map((l) => l.href)")
    assert icons, f"{url}: no <link rel=icon>"
    for icon in icons:
        r = requests.get(icon, timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("image/"), (url, icon, r.status_code)
    for width in (PHONE, 1280):
        _at(tab, width)
        _wide(tab, f"{url} at {width} px")
    assert len(asked) > start, url


def test_every_page_fits_asks_only_its_server_and_finds_everything(tab: Any, live_server: str,
                                                                    worker: Any) -> None:
    """The front page, "my games", the rules, a game in the lobby, a seat's page, the
    public page, an error page and the API's documentation (Swagger UI and ReDoc): each
    fits a 390 px phone without sideways scroll, links its favicon, asks no host but the
    server for anything (scripts, styles, fonts, images), breaks no rule of its
    Content-Security-Policy (the docs' viewers and ReDoc's search worker too) and gets no
    404 (`/favicon.ico`, which browsers ask for by themselves, answers too)."""
    base = live_server
    here = urlsplit(base).netloc
    asked: list[str] = []
    failed: list[str] = []
    tab.on("request", lambda req: asked.append(req.url))
    tab.on("response", lambda resp: failed.append(f"{resp.status} {resp.url}") if resp.status == 404 else None)
    # every page's Content-Security-Policy violations (none allowed)
    tab.add_init_script("window.__violations = []; document.addEventListener('securitypolicyviolation', "
                        "(e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));")
    open_game = _game(base, "fantasy", 4)
    gid = _seat_page(tab, base, worker, "haendler", 2)
    pages = [("/", "nav.top"), ("/mine", "#import"), ("/titles/haendler/rules", "main h1"),
             ("/titles/aufachse/rules", "main h1"), ("/titles/fantasy/rules", "main h1"),
             (f"/play/{open_game.game}", "#join-form"), (f"/play/{gid}/0", "#decide[data-wired]"),
             (f"/play/{gid}", "figure.picture svg"), ("/new", "#create:not([disabled])"),
             (f"/play/{open_game.game}/join", "#join-form"), (f"/play/{open_game.game}/join/2", "#join-form")]
    for path, ready in pages:
        _visit(tab, base + path, ready, asked, failed)
        assert tab.evaluate("window.__violations") == [], path
    for path, ready in (("/docs", ".swagger-ui .info"), ("/redoc", "[role=menu]")):
        answer = tab.goto(base + path)
        # the viewers render under their Content-Security-Policy (service/http/headers.py)
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"], path
        tab.wait_for_selector(ready, timeout=FOLLOW)
        tab.wait_for_load_state("networkidle")
        assert tab.eval_on_selector_all("link[rel~=icon]", "(ls) => ls.length"), path
        assert tab.evaluate("window.__violations") == [], path
    tab.goto(base + "/redoc")
    tab.fill("input[placeholder=\"Search...\"]", "order")  # ReDoc's search runs in a worker
    tab.wait_for_selector("[data-role='search:results'] li", timeout=FOLLOW)
    assert tab.evaluate("window.__violations") == [], "/redoc search"
    errors = watch(tab)
    tab.goto(f"{base}/play/no-such-game")
    assert tab.inner_text("h1") and tab.locator("link[rel~=icon]").count() == 1
    _at(tab, PHONE)
    _wide(tab, "an error page at 390 px")
    _at(tab, 1280)
    failed.remove(f"404 {base}/play/no-such-game")
    assert not errors or all("404" in e for e in errors), errors
    elsewhere = sorted({u for u in asked if urlsplit(u).scheme in ("http", "https") and urlsplit(u).netloc != here})
    assert not elsewhere, f"asked another host: {elsewhere}"
    assert not failed, failed
    favicon = requests.get(f"{base}/favicon.ico", timeout=10)
    assert favicon.status_code == 200 and favicon.headers["Content-Type"] == "image/x-icon"
    assert favicon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file


#: The picture's width on the screen, and how far its box is scrolled (panned).
SVG_WIDTH = "() => document.querySelector('figure.picture svg').getBoundingClientRect().width"
PANNED = "() => { const f = document.querySelector('figure.picture'); return [f.scrollLeft, f.scrollTop]; }"


def test_the_board_zooms_and_pans_and_a_drag_is_no_click(tab: Any, live_server: str, worker: Any) -> None:
    """The board's zoom (static/play/zoom.js) on a Händler seat page asked to buy (its goods
    are places on the board): the buttons, by keyboard, zoom around the box's middle; ctrl +
    wheel zooms; a zoomed board pans in its own box (the page never wider than a phone) by a
    mouse drag, and a drag that starts and ends on a lit place picks nothing, while a click
    on it still picks; "Fit" goes back to the column's width; the level carries over the
    page's live refresh (the next step) and a reload."""
    base = live_server
    gid = _seat_page(tab, base, worker, "haendler", 2)
    tab.wait_for_selector("#decide[data-ready]", state="attached", timeout=FOLLOW)
    bar = "figure.picture .zoom"
    assert tab.locator(f"{bar} button").all_inner_texts() == ["Zoom out", "Fit", "Zoom in"]
    assert tab.inner_text(f"{bar} .zoom-level") == "100 %"
    fit = tab.evaluate(SVG_WIDTH)
    assert fit >= COLUMN and tab.get_attribute("figure.picture", "tabindex") is None
    tab.focus(f"{bar} .zoom-in")
    tab.keyboard.press("Enter")
    tab.keyboard.press("Space")
    assert tab.evaluate(SVG_WIDTH) == pytest.approx(fit * 1.25 ** 2, rel=0.01)
    assert tab.inner_text(f"{bar} .zoom-level") == "156 %"
    assert tab.get_attribute("figure.picture", "tabindex") == "0"  # it scrolls: the keyboard pans it
    _wide(tab, "a zoomed board at 1280 px")
    # a drag on a lit place pans the board and picks nothing
    halo = tab.locator("figure.picture svg .halos .halo").first
    halo.scroll_into_view_if_needed()
    box = halo.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    left, top = tab.evaluate(PANNED)
    tab.mouse.move(x, y)
    tab.mouse.down()
    tab.mouse.move(x + 90, y + 30, steps=6)  # (the lit places are at the right: there is room to pan back)
    tab.mouse.up()
    assert left >= 90 and top >= 30, (left, top)
    assert tab.evaluate(PANNED) == [pytest.approx(left - 90, abs=2), pytest.approx(top - 30, abs=2)]
    tab.wait_for_timeout(400)  # a pick would ask the server for the next choices by now
    assert tab.get_attribute("#decide", "data-picks") in (None, "0")
    assert tab.locator("#decide ol.picked li").count() == 0
    # a click on it picks
    halo.click()
    tab.wait_for_selector("#decide[data-picks='1']", state="attached")
    # ctrl + wheel zooms in, around the pointer; Fit goes back
    # (a pick on the board brings the next question into view smoothly: hovering waits for
    # the board to stand still, so the wheel turns over it and not where it was)
    tab.locator("figure.picture").hover(position={"x": 200, "y": 200})
    tab.keyboard.down("Control")
    tab.mouse.wheel(0, -200)
    tab.keyboard.up("Control")
    tab.wait_for_function("(w) => document.querySelector('figure.picture svg').getBoundingClientRect().width > w",
                          arg=fit * 1.25 ** 2 + 5)
    tab.click(f"{bar} .zoom-fit")
    assert tab.evaluate(SVG_WIDTH) == pytest.approx(fit, rel=0.005) and tab.evaluate(PANNED) == [0, 0]
    # on a phone: zoomed, the board pans in its box and the page stays as wide as the screen
    _at(tab, PHONE)
    phone = tab.evaluate(SVG_WIDTH)
    tab.click(f"{bar} .zoom-in")
    assert tab.evaluate(SVG_WIDTH) == pytest.approx(phone * 1.25, rel=0.01)
    _wide(tab, "a zoomed board at 390 px")
    _at(tab, 1280)
    # the level carries over the live refresh of the page's part (the next step) and a reload
    step = tab.get_attribute("#decide", "data-step")
    tab.click("#send-default")
    tab.wait_for_selector("#order-status:has-text('Order received')", timeout=10_000)
    worker()
    tab.wait_for_selector(f"#content:not([data-step='{step}'])", timeout=FOLLOW)
    tab.wait_for_selector(f"{bar} .zoom-level:has-text('125 %')", timeout=FOLLOW)
    assert tab.evaluate(SVG_WIDTH) == pytest.approx(fit * 1.25, rel=0.01)
    tab.goto(f"{base}/play/{gid}/0")
    tab.wait_for_selector(f"{bar} .zoom-level:has-text('125 %')", timeout=FOLLOW)
