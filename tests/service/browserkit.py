"""What every browser test shares: headless Chromium (Debian's `chromium`; `make test`
installs it when missing) driven by playwright, one browser per test module, a fresh
context per test that fails the test on a script error, the axe-core check of a page
(WCAG 2.2 A and AA) and the geometry of a page's SVG picture (text size and overlaps).

tests/service/conftest.py imports the fixtures `browser` and `tab` for every service test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("KONTOR_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[2]
#: Where the screenshots go: test artefacts under var/ (not tracked); `make screenshots`
#: writes the committed ones in docs/screenshots/ (KONTOR_SCREENSHOTS=docs/screenshots).
SHOTS = ROOT / os.environ.get("KONTOR_SCREENSHOTS", "var/screenshots")
#: Milliseconds the page may take to follow the game (it polls every 3 s).
FOLLOW = 20_000
#: The axe-core rule tags a page must pass: WCAG 2.0, 2.1 and 2.2, levels A and AA.
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (`make test` installs Debian's chromium as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (`make test` installs the dev extras)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def watch(page: Any) -> list[str]:
    """The script errors `page` will log (uncaught exceptions and console errors)."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # (with where: a failed load's location is the resource's URL)
    page.on("console", lambda msg: errors.append(f"{msg.text} [{(msg.location or {}).get('url', '')}]")
            if msg.type == "error" and "404" not in msg.text else None)
    return errors


@pytest.fixture
def tab(browser: Any, live_server: str) -> Iterator[Any]:
    """A fresh browser context (its own storage) and page; fails the test on a script error.
    (It takes `live_server` so that the page is closed before its server stops.)"""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors = watch(page)
    #: Console errors a test expects (substrings), e.g. a refusal the page must meet.
    page.expected_errors = []
    yield page
    ctx.close()
    errors = [e for e in errors if not any(x in e for x in page.expected_errors)]
    assert not errors, f"script errors on the page: {errors}"


def axe_violations(page: Any, context: Any = None) -> list[str]:
    """axe-core's WCAG 2.2 A and AA violations on the page as it is now, one line each
    (rule, impact, help, and the first nodes' selectors); empty when it passes."""
    from axe_playwright_python.sync_playwright import Axe

    options = {"runOnly": {"type": "tag", "values": WCAG}, "resultTypes": ["violations"]}
    result = Axe().run(page, context=context, options=options)
    out = []
    for v in result.response.get("violations", []):
        targets = [", ".join(map(str, n.get("target", []))) for n in v.get("nodes", [])[:4]]
        out.append(f"{v['id']} ({v.get('impact')}): {v.get('help')} — {len(v.get('nodes', []))} node(s): {targets}")
    return out


def assert_accessible(page: Any, what: str) -> None:
    """Fail unless axe-core finds no WCAG 2.2 A/AA violation on `page` (`what` names it)."""
    found = axe_violations(page)
    assert not found, f"{what}: axe-core finds {len(found)} violation(s):\n" + "\n".join(found)


#: Measures every <text> of the first SVG picture inside `root` as the browser lays it out:
#: its rendered font size in CSS pixels (the computed size times the SVG's scale on the
#: screen), its box on the screen, and its words.
_MEASURE = """(root) => {
  const svg = (root || document).querySelector("svg");
  if (!svg) return null;
  const box = svg.getBoundingClientRect();
  const out = [];
  for (const t of svg.querySelectorAll("text")) {
    if (!t.textContent.trim()) continue;
    const cs = getComputedStyle(t);
    if (cs.display === "none" || cs.visibility === "hidden" || Number(cs.opacity) === 0) continue;
    const m = t.getScreenCTM();
    const scale = m ? Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)) : 1;
    const r = t.getBoundingClientRect();
    out.push({text: t.textContent.trim().slice(0, 40), px: parseFloat(cs.fontSize) * scale,
              x: r.left, y: r.top, w: r.width, h: r.height});
  }
  return {width: box.width, height: box.height, left: box.left, texts: out};
}"""


def picture_problems(page: Any, selector: str = "figure.picture", min_px: float | None = 11.0,
                     slack: float = 0.5) -> list[str]:
    """What is wrong with the picture in `selector` as laid out now: a text smaller than
    `min_px` CSS pixels (None: any size), two texts whose boxes overlap (by more than
    `slack` px each way). Empty when it reads."""
    data = page.eval_on_selector(selector, _MEASURE)
    assert data, f"no SVG picture in {selector}"
    out = []
    texts = data["texts"]
    if min_px is not None:
        for t in texts:
            if t["px"] < min_px - 0.01:
                out.append(f"text {t['text']!r} is {t['px']:.1f} px (under {min_px})")
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            dx = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
            dy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
            if dx > slack and dy > slack:
                out.append(f"texts {a['text']!r} and {b['text']!r} overlap ({dx:.1f} x {dy:.1f} px)")
    return out


def show_svg(page: Any, svg: str, width: int) -> None:
    """Lay out a picture alone as the page's `figure.picture` is, `width` CSS px wide
    (with the pages' stylesheet), for `picture_problems` without a server."""
    css = (ROOT / "service/http/static/play/play.css").read_text(encoding="utf-8")
    page.set_viewport_size({"width": max(width + 40, 320), "height": 900})
    page.set_content(f"<!doctype html><html><head><meta charset='utf-8'><style>{css}</style></head>"
                     f"<body><div style='width:{width}px'><figure class='picture'>{svg}</figure></div></body></html>")
