"""Mails and HTML pages come from Jinja templates with autoescape (issue 12, item 5):
no HTML is built from f-strings anywhere in `service/`, the HTML parts escape every
value, the text parts show them as they are, and the templates ship with the package."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from service.channels.mail.render import TEMPLATES, receipt_text
from service.channels.mail.unsubscribe import unsubscribe_token

SERVICE = Path(__file__).resolve().parents[3] / "service"
#: An HTML tag (or doctype) at the start of a literal part of an f-string.
HTML_TAG = re.compile(
    r"<\s*/?\s*(?:!doctype|html|head|body|title|meta|link|script|style|p|a|ul|ol|li|pre|code|h[1-6]|div|span"
    r"|small|hr|br|form|input|button|table|thead|tbody|tr|td|th|img|label|select|option|textarea|section"
    r"|article|nav|header|footer|main|strong|em|b|i|blockquote|details|summary|svg)\b", re.IGNORECASE)


def html_fstrings(root: Path) -> list[str]:
    """Every f-string under `root` whose literal text holds an HTML tag: `path:line: text`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.JoinedStr):
                text = "".join(part.value for part in node.values
                               if isinstance(part, ast.Constant) and isinstance(part.value, str))
                if HTML_TAG.search(text):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {text[:60]!r}")
    return found


def test_no_html_is_built_from_f_strings_in_the_service() -> None:
    assert html_fstrings(SERVICE) == [], "build HTML with a Jinja template (autoescape), not an f-string"


def test_the_f_string_check_finds_html_and_leaves_other_angle_brackets(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "page.py").write_text(
        'x = 1\nA = f"<p>{x}</p>"\nB = f"<game-{x}@kontor.test>"\nC = f"<!DOCTYPE html>{x}"\n'
        'D = f"kontor order --as <you> {x}"\nE = f"<{x}>, <mailto:unsubscribe@{x}>"\nF = "<p>plain</p>"\n')
    assert [line.split(":")[1] for line in html_fstrings(tmp_path / "pkg")] == ["2", "4"]


def test_mail_templates_escape_html_and_keep_text_as_it_is() -> None:
    from service.channels.mail.render import Section

    context: dict[str, Any] = {
        "title": "A <b> & 'c'", "name": "Ada <script>", "line": "It is <your> turn & more.", "seat": 0,
        "game": "g1", "unsubscribe": "http://kontor.test/unsubscribe/x?a=1&b=2",
        "sections": [Section("Who <wins>", lines=["a < b", "    kontor order --as <you>"], items=["x & y"],
                             pre=["<pre> inside"], links=[("The <game>", "http://kontor.test/g?a=1&b=\"2\"")])],
    }
    html = TEMPLATES.get_template("notice.html").render(context)
    text = TEMPLATES.get_template("notice.txt").render(context)
    for raw in ("<script>", "<your>", "<wins>", "a < b", "<you>", "x & y", "<pre> inside", "<game>", "<b>"):
        assert raw not in html and raw in text + context["title"]
    assert "Ada &lt;script&gt;" in html and "<pre>kontor order --as &lt;you&gt;</pre>" in html
    assert 'href="http://kontor.test/g?a=1&amp;b=&#34;2&#34;"' in html
    assert text.startswith("Hello Ada <script>,\n\nIt is <your> turn & more.\n\nWho <wins>\n----------\na < b\n")
    assert text.endswith("-- \nYou get this mail because seat 0 of game g1 gave this address as its contact; "
                         "change that in the seat's contact settings.\n"
                         "Stop every Kontor mail to this address: http://kontor.test/unsubscribe/x?a=1&b=2\n")


def test_a_receipt_reads_as_before() -> None:
    refused = receipt_text(errors=[("bad_token", "the token's <signature> & more")])
    assert refused.startswith("Your mail was refused; nothing was changed.\n\n"
                              "The token's <signature> & more\n\nTo answer a step, reply to its mail")
    accepted = receipt_text({"game": "g1", "phase": 3, "seat": 1, "receipt": "r1", "replaced": False,
                             "order": {"goods": ["Tuch"]}}, "none")
    assert accepted == ("Your order was accepted.\n\ngame:     g1\nstep:     3\nseat:     1\nreceipt:  r1\n"
                        "replaced: no\ndeadline: none\n\nThe order as understood: goods: Tuch.\n"
                        '{\n  "goods": [\n    "Tuch"\n  ]\n}\n')


@pytest.mark.parametrize("name", ["notice.txt", "notice.html", "digest.txt", "digest.html", "receipt.txt"])
def test_the_mail_templates_are_package_files(name: str) -> None:
    assert (SERVICE / "channels" / "mail" / "templates" / name).is_file()
    assert TEMPLATES.get_template(name)


def test_the_unsubscribe_page_is_a_template_and_escapes(nkontor: Any, nclient: Any) -> None:
    address = "o'brien<x>@example.org"
    page = nclient.get(f"/unsubscribe/{unsubscribe_token(nkontor, address)}")
    body = page.get_data(as_text=True)
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert "o***@example.org" in body and "<x>" not in body
    assert '<form method="post" action="/unsubscribe/' in body
    assert '<button type="submit">Unsubscribe</button>' in body
    assert (SERVICE / "http" / "templates" / "unsubscribe.html").is_file()
