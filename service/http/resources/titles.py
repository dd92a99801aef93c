"""HTTP resources: each title's player's guide, for people (`GET /titles/{id}/rules`, an
HTML page) and for programs and editors (`GET /titles/{id}/rules.md`, the markdown).

The guides are markdown files, `<title>.md` in the configured folder (`rules_dir`,
default `docs/rules`). The page is rendered with markdown-it-py (CommonMark plus
tables) with raw HTML off, so a guide's text is always shown as text; every heading gets
an `id` (its slug), and a rule number or decision name that a heading names ("Phase 1 —
buying goods (H-41 to H-44)", "D1-BUY — ...") gets one too, so a refusal that cites
"(H-41)" can link to `/titles/haendler/rules#H-41`. Where several headings name a
number, the most specific (deepest) one holds it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

from flask import Response, render_template
from flask.views import MethodView
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markupsafe import Markup

from service.core.errors import Problem
from service.http.api import (
    CONDITIONAL_DOC,
    CONDITIONAL_HEADERS,
    PROBLEM,
    Blueprint,
    ProblemSchema,
    conditional,
    kontor,
)
from service.words import rule_ids

titles_blp = Blueprint("titles", __name__, description="The titles' players' guides.")

HTML = "text/html"
MARKDOWN = "text/markdown"
NOT_FOUND = {"schema": ProblemSchema, "content_type": PROBLEM,
             "description": "No such title (`title_not_found`), or it has no guide (`rules_not_found`)."}
def guide(title: str) -> Path:
    """The guide of a registered title; problem+json 404 otherwise."""
    k = kontor()
    try:
        k._title(title)
    except Problem:
        raise Problem("title_not_found", f"no title {title!r} (see /catalog)") from None
    path = k.rules_file(title)
    if path is None:
        raise Problem("rules_not_found", f"the title {title!r} has no player's guide yet")
    return path


def slug(text: str) -> str:
    """A heading's id: lower case, letters, digits and hyphens (`D1-BUY — buy goods` ->
    `d1-buy--buy-goods`), as GitHub makes them."""
    text = unicodedata.normalize("NFC", text).strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-") or "section"


def anchors(state: StateCore) -> None:
    """A core rule: an `id` for every heading (its slug, made unique), and an empty
    anchor element for each rule number it holds (the deepest heading naming it)."""
    tokens = state.tokens
    headings = [(i, int(t.tag[1])) for i, t in enumerate(tokens) if t.type == "heading_open"]
    used: set[str] = set()
    holder: dict[str, tuple[int, int]] = {}  # rule id -> (heading token index, level)
    for i, level in headings:
        inline = tokens[i + 1]
        text = "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))
        base = slug(text)
        ident, n = base, 1
        while ident in used:
            ident, n = f"{base}-{n}", n + 1
        used.add(ident)
        tokens[i].attrSet("id", ident)
        for rule in rule_ids(text):
            if rule not in holder or level > holder[rule][1]:
                holder[rule] = (i, level)
    owned: dict[int, list[str]] = {}
    for rule, (i, _) in holder.items():
        if rule not in used:
            owned.setdefault(i, []).append(rule)
    for i, _ in headings:
        inline = tokens[i + 1]
        extra = Markup("").join(Markup('<span id="{}"></span>').format(r) for r in owned.get(i, []))
        link = Markup('<a class="anchor" href="#{}" aria-label="link to this section">#</a>').format(
            str(tokens[i].attrGet("id") or ""))
        marker = Token("html_inline", "", 0)
        marker.content = str(extra + link)
        inline.children = [*(inline.children or []), marker]


def renderer() -> MarkdownIt:
    """CommonMark with tables; raw HTML in a guide is shown as text, never passed on."""
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    md.core.ruler.push("heading_anchors", anchors)
    return md


_MD = renderer()


@lru_cache(maxsize=16)
def _rendered(path: str, stamp: tuple[int, int], name: str) -> str:
    text = Path(path).read_text(encoding="utf-8")
    # A code block or a table wider than the page scrolls: focusable, so that a keyboard
    # scrolls it too (WCAG 2.1.1). Raw HTML in a guide is text, so these are markdown-it's own.
    body = _MD.render(text).replace("<pre>", '<pre tabindex="0">').replace("<table>", '<table tabindex="0">')
    h1 = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.MULTILINE)
    title = h1.group(1) if h1 else f"{name}: how to play"
    # The body is markdown-it's HTML (raw HTML in the guide off): markup, not text.
    return render_template("rules.html", title=title, body=Markup(body), name=name)


def page(path: Path, name: str) -> str:
    """The guide as an HTML page (re-rendered when the file changes)."""
    st = path.stat()
    return _rendered(str(path), (st.st_mtime_ns, st.st_size), name)


def answer(body: str, mimetype: str) -> Response:
    resp = conditional(body, mimetype)
    # A guide is text, shown as text: no scripts, no outside resources.
    resp.headers["Content-Security-Policy"] = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
                                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    return resp


@titles_blp.route("/titles/<title>/rules", tags=["titles"])
class Rules(MethodView):
    @titles_blp.response(200, {"type": "string"}, content_type=HTML, headers=CONDITIONAL_HEADERS, description=(
        "The player's guide as an HTML page. Every heading has an `id`, and so has each rule number "
        "(`#H-41`) or decision name (`#D1-BUY`) a heading names."))
    @titles_blp.alt_response(404, **NOT_FOUND)
    @titles_blp.doc(operationId="getRules", **CONDITIONAL_DOC)
    def get(self, title: str) -> Any:
        """A title's player's guide (rules, decisions, cards, refusal codes), for people.

        Example: `GET /titles/haendler/rules#H-41` opens the page at rule H-41."""
        path = guide(title)
        return answer(page(path, kontor()._title(title).name), HTML)


@titles_blp.route("/titles/<title>/rules.md", tags=["titles"])
class RulesMarkdown(MethodView):
    @titles_blp.response(200, {"type": "string"}, content_type=MARKDOWN, headers=CONDITIONAL_HEADERS,
                         description="The player's guide as markdown (CommonMark with tables).")
    @titles_blp.alt_response(404, **NOT_FOUND)
    @titles_blp.doc(operationId="getRulesMarkdown", **CONDITIONAL_DOC)
    def get(self, title: str) -> Any:
        """A title's player's guide, as its markdown source.

        Example: `GET /titles/haendler/rules.md`."""
        return answer(guide(title).read_text(encoding="utf-8"), MARKDOWN)
