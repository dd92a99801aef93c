"""A whole game of each title played with the keyboard alone (issue 22, item 5).

The player (seat 0, bots in the other seats, a short game as in test_browser.py's whole
game) answers every decision from the seat's page with `page.keyboard` only: Tab and
Shift+Tab to reach a control (pressed until `document.activeElement` is it; the test
reads the focus, it never sets it), Enter and Space to press buttons and the board's lit
places, the arrow keys in a list, digits typed into number fields. Never a click, never
`focus()` from the test. Where an ask offers places on the board, a place is chosen by
keyboard at least once per title. After every pick, order and reload of the page the
focus is on a control or heading of the page, never dropped to <body>.

On the way the seat's page is checked with axe-core (tests/service/test_a11y.py `check`)
while asked, with the first pick made and with "For programmers" open, and so is the
game-over page at the end.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests

from tests.service.browserkit import FOLLOW
from tests.service.test_a11y import check, here
from tests.service.test_browser import WHOLE, _game, _import_keys, _key_file, _readable_problems, _seated

#: Where the focus is: the element's tag, id and classes, or "body" when it is lost.
FOCUS = """() => { const a = document.activeElement;
  if (!a || a === document.body) return "body";
  return `${a.tagName.toLowerCase()}#${a.id || ""}.${(a.getAttribute("class") || "").split(/\\s+/).join(".")}`; }"""
#: Whether the focused element matches a CSS selector.
FOCUSED = "(sel) => { const a = document.activeElement; return !!a && a !== document.body && a.matches(sel); }"


#: How many of a game's picks are made on the board by keyboard (the first asks that offer
#: places; the later ones by the buttons and lists beside it, a few key presses each).
BOARD = 3


class Keys:
    """The player's keyboard and what it took: key presses, places picked on the board."""

    def __init__(self, tab: Any) -> None:
        self.tab = tab
        self.presses = 0
        self.places = 0

    def press(self, key: str) -> None:
        self.tab.keyboard.press(key)
        self.presses += 1

    def type(self, text: str) -> None:
        self.tab.keyboard.type(text)
        self.presses += len(text)

    def to(self, selector: str, limit: int = 400) -> None:
        """Tab (forward) until the focus is on an element matching `selector`."""
        for _ in range(limit):
            if self.tab.evaluate(FOCUSED, selector):
                return
            self.press("Tab")
        raise AssertionError(f"Tab never reaches {selector} (the focus is on {self.tab.evaluate(FOCUS)})")

    def focus_kept(self, what: str) -> None:
        # the page moves the focus once it has drawn the next question (a frame later on a
        # loaded machine): wait for that, then a focus left on <body> is lost
        try:
            self.tab.wait_for_function("() => document.activeElement && document.activeElement !== document.body",
                                       timeout=3_000)
        except Exception:  # noqa: BLE001 - said by the assertion below
            pass
        at = self.tab.evaluate(FOCUS)
        assert at != "body", f"the focus is lost to <body> after {what}"


def _decide_by_keys(tab: Any, keys: Keys, first: bool) -> str:
    """Make the open decision with the keyboard alone (as test_browser's `_decide` does by
    clicks: a lit place on the board where the ask offers some, else the first button, the
    first entry of a long list, a named value, the number field's least value typed, a sheet
    as it comes) and send it. What was sent, in words."""
    decide = tab.locator("#decide")
    for _ in range(20):
        tab.wait_for_selector("#decide[data-ready]:not([aria-busy])", state="attached", timeout=10_000)
        picks = int(decide.get_attribute("data-picks") or 0)
        found = _readable_problems(tab)
        assert not found, "\n".join(found)
        if decide.get_attribute("data-complete") == "1":
            sentence = tab.inner_text("#order-sentence")
            keys.to("#order-send")
            keys.press("Enter")
            tab.wait_for_selector("#order-status:has-text('Order received')", timeout=10_000)
            keys.focus_kept("sending the order")
            return sentence
        if (keys.places < BOARD and tab.locator("#decide .ask-choose").count()
                and tab.locator("figure.picture svg .pick").count()):
            keys.to("figure.picture svg .pick")
            if tab.locator("figure.picture svg .pick").count() > 1:  # the arrows walk the lit places
                before = tab.evaluate(FOCUS)
                keys.press("ArrowRight")
                assert tab.evaluate(FOCUS) != before and tab.evaluate(FOCUSED, "figure.picture svg .pick")
            assert tab.locator("figure.picture svg .halos .halo.focus").count() == 1  # its ring is drawn
            keys.press("Space" if keys.places % 2 else "Enter")
            keys.places += 1
        elif tab.locator("#decide .ask-choose button.option").count():
            keys.to("#decide .ask-choose button.option")
            keys.press("Enter")
        elif tab.locator("#decide .ask-choose select").count():
            keys.to("#decide .ask-choose select")
            keys.press("ArrowDown")  # the first entry
            if not tab.evaluate(FOCUSED, "#decide .ask-choose select") or tab.eval_on_selector(
                    "#decide .ask-choose select", "s => s.selectedIndex") != 1:
                continue  # the page brought itself up to date under the list: look again
            keys.to("#decide .ask-choose button[type=submit]")
            keys.press("Enter")
        elif tab.locator("#decide .ask-number button.named").count():
            keys.to("#decide .ask-number button.named")
            keys.press("Space")
        elif tab.locator("#decide .ask-number").count():
            field = tab.locator("#decide .ask-number input[type=number]")
            keys.to("#decide .ask-number input[type=number]")
            keys.press("End")
            for _ in range(len(field.input_value())):
                keys.press("Backspace")
            keys.type(field.get_attribute("min") or "0")
            keys.press("Enter")
        elif tab.locator("#decide .ask-sheet").count():
            keys.to("#decide .ask-sheet button[type=submit]")
            keys.press("Enter")
        else:
            continue  # the part was reloaded as we looked: look again once it is drawn
        try:
            tab.wait_for_selector(f"#decide[data-picks='{picks + 1}']:not([aria-busy])", state="attached",
                                  timeout=10_000)
        except Exception as exc:
            raise AssertionError(f"the pick was not taken: {tab.inner_text('#decide')}") from exc
        keys.focus_kept("a pick")
        if first and picks == 0:  # the page with a decision half made, and the JSON box open
            check(tab, "the seat's page, one pick made")
            keys.to("#programmers summary")
            keys.press("Enter")
            assert tab.locator("#programmers[open]").count() == 1
            check(tab, "the seat's page, For programmers open")
            keys.press("Enter")  # closed again
            first = False
    raise AssertionError(f"no order after 20 picks: {tab.inner_text('#decide')}")


@pytest.mark.parametrize("title", sorted(WHOLE))
def test_a_whole_game_by_keyboard(tab: Any, live_server: str, worker: Any, title: str) -> None:
    """A whole game of each title from the seat's page with the keyboard alone; every
    order goes in through the decision UI (none a default), a place on the board is
    chosen by keyboard, the focus is never lost, and the pages pass axe-core."""
    base = live_server
    seats, bot, options = WHOLE[title]
    host = _game(base, title, seats, options=options)
    me, _ = _seated(base, host, "Kim", seats, bot, worker)
    _import_keys(tab, base, here(_key_file(me, "kim"), base))
    tab.wait_for_selector("#games li strong:has-text('your turn')")
    check(tab, "my games, asked")
    tab.goto(f"{base}/play/{host.game}")
    check(tab, "the public page of a running game")
    tab.goto(f"{base}/play/{host.game}/{me.seat}")
    tab.wait_for_selector("#decide[data-ready]", state="attached", timeout=FOLLOW)
    check(tab, "the seat's page, asked")
    keys = Keys(tab)
    keys.press("Tab")  # the skip link comes first and leads to the decision
    assert tab.evaluate(FOCUSED, "a.skip") and tab.inner_text("a.skip") == "Skip to your turn"
    keys.press("Enter")
    keys.press("Tab")
    assert tab.evaluate(FOCUSED, "#decide *"), f"the decision is not next: {tab.evaluate(FOCUS)}"
    done: set[str] = set()
    sent = []
    until = time.monotonic() + 420
    while not tab.locator("#over-h").count():
        assert time.monotonic() < until, "the game did not end in time"
        ready = tab.locator("#decide[data-ready]")
        step = None
        if ready.count():
            try:  # the page may draw its part again between the count and the read
                step = ready.get_attribute("data-step", timeout=2_000)
            except Exception as exc:
                if type(exc).__name__ != "TimeoutError":
                    raise
                continue
        if step is not None and step not in done:
            if done:
                keys.focus_kept("the page moved on to the next decision")
            done.add(step)
            sent.append(_decide_by_keys(tab, keys, first=len(done) == 1))
            continue
        worker()
        tab.wait_for_timeout(60)
    keys.focus_kept("the game's end")
    assert tab.evaluate(FOCUSED, "#over-h"), f"the focus is not on the game's end: {tab.evaluate(FOCUS)}"
    assert len(sent) >= 3 and keys.places >= 1, (len(sent), keys.places)
    history = requests.get(f"{base}/games/{host.game}/history", timeout=10).json()
    mine = [st for st in history["steps"] if str(me.seat) in (st.get("orders") or {})]
    assert len(mine) == len(sent)
    assert not any(me.seat in (st.get("defaults") or []) for st in history["steps"])
    check(tab, "the game-over page")
