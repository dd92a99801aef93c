"""Create and invite in the browser (issue 22, item 1): for each title a host creates a
game from the front page ("Create a game": title, 4 seats, a variant, two seats as bots,
the host's key made in the browser), lands on the host controls, copies an invitation
link; a second person (a second browser context, its own storage) opens it, gives a
name, makes a key and joins; the host takes a seat too with the key they play with (not
the game's host key), then starts the game; both reach their seat pages from the game's
public page. Pinned: the game's seats as the server has them (names, bots, each seat's
key id equal to the key in that browser), the host key kept as the `kontor` command keeps
it, the game running, and each seat page saying whose it is. The new pages pass axe-core
and never scroll sideways at 390 px; screenshots of them at 1280 and 390 px go to SHOTS
(`make screenshots`: docs/screenshots).

One browser for the module (browserkit); the tests skip, saying why, only when Chromium
or playwright cannot be had.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from service.client.keystore import Keystore
from tests.service.browserkit import FOLLOW, SHOTS, assert_accessible, watch

#: Per title: a variant to tick (its option) and the bots' kind for seats 2 and 3.
PLAN = {"haendler": ("light", "greedy"), "aufachse": ("kids", "planner"), "fantasy": ("trading", "trader")}
#: The widths the new pages are drawn at: a desktop and a phone.
WIDTHS = {"": (1280, 900), "-390": (390, 844)}


def _fits_and_reads(page: Any, what: str, shot: str | None) -> None:
    """axe-core passes the page, it never scrolls sideways on a phone; its screenshots."""
    assert_accessible(page, what)
    for suffix, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(100)  # the layout settles
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{what} scrolls sideways at {width}"
        if shot:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"{shot}{suffix}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def _keys(page: Any) -> dict[str, Any]:
    return dict(json.loads(page.evaluate("localStorage.getItem('kontor.keys')")))


@pytest.mark.parametrize("title", list(PLAN))
def test_create_invite_join_and_start_in_the_browser(browser: Any, live_server: str, title: str,
                                                     tmp_path: Path) -> None:
    base = live_server
    variant, bot = PLAN[title]
    shots = title == "haendler"  # the screenshots once
    hctx = browser.new_context(viewport={"width": 1280, "height": 900},
                               permissions=["clipboard-read", "clipboard-write"])
    gctx = browser.new_context(viewport={"width": 1280, "height": 900})
    host, guest = hctx.new_page(), gctx.new_page()
    herr, gerr = watch(host), watch(guest)
    try:
        # -- the host creates the game from the front page
        host.goto(f"{base}/")
        host.get_by_role("link", name="Create a game").click()
        host.wait_for_selector("#new-form[data-ready]")
        host.select_option("#f-title", title)
        host.fill("#f-seats", "4")
        host.wait_for_selector("#f-seat-3")
        host.check(f"#o-{title}-{variant}")
        # the variant is explained in words, with its place in the player's guide
        link = host.get_attribute(f"#o-{title}-{variant} ~ a", "href")
        assert link.startswith(f"/titles/{title}/rules#")
        assert requests.get(base + link.split("#")[0], timeout=10).status_code == 200
        host.fill("#f-name", f"Friends of {title}")
        host.select_option("#f-seat-2", bot)
        host.select_option("#f-seat-3", bot)
        host.fill("#f-host-name", "Hanna Host")
        settings = ("signed", "public") if title == "fantasy" else ("reply_address", "all")
        if title == "fantasy":  # orders by mail and messages between players, in words
            host.check("#f-mail-signed")
            host.check("#f-press-public")
        if title == "aufachse":  # a time bank and a bot for absent players (issue 25)
            host.check("#f-clock-bank")
            host.select_option("#f-bank-start", str(2 * 86400))
            host.select_option("#f-bank-add", "3600")
            host.select_option("#f-bank-cap", str(5 * 86400))
            host.check("#f-absence-bot")
        if shots:  # bad input is said next to its field, and creates nothing
            host.fill("#f-seats", "9")
            host.click("#create")
            assert host.inner_text("#e-seats") == "Die Händler is played by 2 to 4 players."
            assert requests.get(f"{base}/games?status=lobby", timeout=10).json()["items"] == []
            host.fill("#f-seats", "4")
        if shots:
            _fits_and_reads(host, "the create page", "create")
        else:
            assert_accessible(host, "the create page")
        host.click("#create")
        host.wait_for_url("**/play/*#host")
        gid = host.url.split("/play/")[1].split("#")[0]
        host.wait_for_selector("#host[data-ready]")
        game = requests.get(f"{base}/games/{gid}", timeout=10).json()
        assert (game["title"], game["seats"], game["status"]) == (title, 4, "lobby")
        assert game["name"] == f"Friends of {title}"
        assert game["options"][variant] is True
        assert [p["bot"] for p in game["players"]] == [None, None, bot, bot]
        assert (game["mail_orders"], game["press"]) == settings
        assert game["deadlines"]["sealed_seconds"] == 86400 and game["deadlines"]["on_expiry"] == "defaults"
        if title == "aufachse":
            assert {k: game["deadlines"][k] for k in ("clock", "bank_start_seconds", "bank_add_seconds",
                                                      "bank_cap_seconds", "absence", "absence_limit_seconds")} == {
                "clock": "bank", "bank_start_seconds": 2 * 86400, "bank_add_seconds": 3600,
                "bank_cap_seconds": 5 * 86400, "absence": "bot", "absence_limit_seconds": 7 * 86400}
        else:
            assert (game["deadlines"]["clock"], game["deadlines"]["absence"]) == ("fixed", "extend")
        # the host key: a fresh key of the game's own, kept as the `kontor` command keeps it
        (hanna,) = _keys(host)["identities"].values()
        assert hanna["games"][gid]["host"]["kid"] == game["host_kid"] != hanna["kid"]
        assert host.inner_text("#host-start-why").startswith("Seats 0, 1 are still open")
        assert host.get_attribute("#host-start-button", "disabled") is not None
        if shots:  # the same page for every title but its bots' kinds: checked once
            _fits_and_reads(host, "the host controls", "host")
        # -- the host copies the invitation for seat 1; the guest opens it and joins
        host.click("#host button[aria-label='Copy the invitation link for seat 1']")
        host.wait_for_selector("#host-status:has-text('Copied')")
        invite = host.evaluate("navigator.clipboard.readText()")
        assert invite == f"{base}/play/{gid}/join/1"
        guest.goto(invite)
        guest.wait_for_selector("#join-form[data-ready]")
        guest.fill("#join-name", "Gus Guest")
        if shots:  # the same page for every title but its bots' kinds: checked once
            _fits_and_reads(guest, "the invitation page", "join")
        guest.click("#join-send")
        guest.wait_for_url(f"**/play/{gid}/1")
        # the host sees the guest join, live
        host.wait_for_selector("#host tr[data-seat='1'] td:has-text('Gus Guest')", timeout=FOLLOW)
        # -- the host takes a seat with the key they play with
        assert ("To play yourself, take a seat with “join a seat”: choose your own key or make one."
                in host.inner_text("#host"))
        host.click("#host-join")
        host.wait_for_selector("#join-form[data-ready]")
        host.fill("#join-name", "Hanna")
        host.select_option("#join-held", "Hanna_Host")
        host.click("#join-send")
        host.wait_for_url(f"**/play/{gid}/0")
        # a taken seat's invitation says so in words; in the browser holding that seat: yours
        host.goto(invite)
        assert "Seat 1 is taken (by Gus Guest)" in host.inner_text("#join-closed")
        guest.goto(invite)
        guest.wait_for_selector("#join-closed[data-yours='1']")
        assert guest.inner_text("#join-closed") == "This is your seat (Gus Guest): open your page."
        # -- the host starts
        host.goto(f"{base}/play/{gid}")
        host.wait_for_selector("#host-start-button:not([disabled])")
        assert host.inner_text("#host-start-why") == "Every seat is taken or a bot: the game can start."
        host.click("#host-start-button")
        host.wait_for_selector("#host-status:has-text('The game has started')")
        host.wait_for_selector("#content[data-status='running']", state="attached", timeout=FOLLOW)
        # while it runs, the host can still hand a seat to a bot (for a player who is away)
        host.wait_for_selector("#host[data-status='running'] #host-change-h:has-text('Hand a seat to a bot')")
        assert host.locator("#host-start").is_hidden() and host.locator("#host-invites").is_hidden()
        game = requests.get(f"{base}/games/{gid}", timeout=10).json()
        assert game["status"] == "running"
        host.goto(invite)  # an invitation once the game runs says so (someone else's seat)
        assert host.inner_text("#join-closed").startswith("This game has started")
        assert host.get_by_role("link", name="Go to the game’s page").get_attribute("href") == f"/play/{gid}"
        guest.goto(f"{base}/play/{gid}/join")  # the guest's own browser: its seat
        guest.wait_for_selector("#join-closed[data-yours='1']")
        assert guest.get_attribute("#join-closed a", "href") == f"/play/{gid}/1"
        (gus,) = _keys(guest)["identities"].values()
        hanna = _keys(host)["identities"]["Hanna_Host"]
        seats = [(p["name"], p["bot"], p["kid"]) for p in game["players"]]
        assert seats[:2] == [("Hanna", None, hanna["kid"]), ("Gus Guest", None, gus["kid"])]
        assert [s[1] for s in seats[2:]] == [bot, bot]
        assert hanna["games"][gid]["seat"] == 0 and gus["games"][gid]["seat"] == 1
        # the host's key file, as this browser exports it, hosts and plays from the command line
        (tmp_path / "keys.json").write_text(json.dumps(_keys(host)), encoding="utf-8")
        cli = Keystore.load(tmp_path).get("Hanna_Host")
        assert cli.host_key(gid).kid == game["host_kid"] and cli.seat_in(gid) == 0
        # -- both reach their seat pages from the game's public page
        for page, seat, name in ((host, 0, "Hanna"), (guest, 1, "Gus Guest")):
            page.goto(f"{base}/play/{gid}")
            page.click(f"#known a[href='/play/{gid}/{seat}']")  # "you in this game" (known.js)
            page.wait_for_url(f"**/play/{gid}/{seat}")
            page.wait_for_selector(f".crumbs:has-text('you are {name}')", timeout=FOLLOW)
        if title == "aufachse":  # once: an absent player's seat handed to a bot from the host's controls
            guest.goto("about:blank")  # the player is away
            host.goto(f"{base}/play/{gid}")
            host.wait_for_selector("#host[data-ready]")
            host.select_option("#host-seat", "1")
            host.select_option("#host-to", f"bot:{bot}")
            host.click("#host-seat-send")
            host.wait_for_selector(f"#host-status:has-text('Seat 1 is played by a bot ({bot}) now.')")
            seat1 = requests.get(f"{base}/games/{gid}/seats/1", timeout=10).json()
            assert seat1["bot"] == bot and seat1["name"] == f"Gus Guest ({bot} bot)"
    finally:
        hctx.close()
        gctx.close()
    assert not (herr or gerr), f"script errors on the pages: {herr + gerr}"
