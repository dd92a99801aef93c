"""Every relative link of README.md and of every page under docs/ resolves: to a file of the
repository (images too, Markdown or HTML), and a `#anchor` to a heading of the target (by
GitHub's rules for a heading's anchor) or to an explicit anchor (`<a id="...">`, `name=`).
Links in code (fenced blocks, code spans) are not links; links to other sites are not checked."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
#: `[text](target "title")` and `![alt](target)`; the target ends at a space or the bracket.
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
#: `[label]: target` reference definitions.
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
#: `src="..."` and `href="..."` of HTML in the page.
HTML_LINK = re.compile(r"<(?:a|img|source)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.I)
EXPLICIT = re.compile(r"<[a-z]+\b[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def without_code(text: str) -> str:
    """The page with its fenced blocks and code spans blanked out (never links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text as rendered (no link targets, code marks,
    emphasis marks or HTML), lowercased, punctuation dropped (letters, digits, `_`, `-` and
    spaces stay, accented letters too), each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")          # HTML tags, code marks
    text = re.sub(r"(?<![\w*])[*_]+|[*_]+(?![\w*])", "", text)    # emphasis marks, not my_name
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors_of(text: str) -> set[str]:
    """Every anchor a page has: each heading's slug (a repeated one gets -1, -2, ... as on
    GitHub) and every explicit `id` or `name`."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found | set(EXPLICIT.findall(FENCE.sub("", text)))


def links_of(text: str) -> list[str]:
    """Every link target of a page, in the order they appear: inline links and images,
    reference definitions, and HTML `href`/`src`."""
    prose = without_code(text)
    return [t for t in INLINE.findall(prose) + REFERENCE.findall(prose) + HTML_LINK.findall(prose) if t]


@cache
def repository_files() -> frozenset[str]:
    """The repository's files (those not yet committed too, but never ignored ones)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return frozenset(out.splitlines())


def broken(page: Path, text: str, files: frozenset[str] | None = None) -> list[str]:
    """Each link of `text` (the content of `page`) that does not resolve, and why."""
    files = repository_files() if files is None else files
    found: list[str] = []
    for target in links_of(text):
        if re.match(r"[a-zA-Z][\w+.-]*:|//", target):
            continue  # another site, mailto: and the like
        path, _, anchor = target.partition("#")
        path = unquote(path.split("?", 1)[0])
        dest = (ROOT / path.lstrip("/")) if path.startswith("/") else (page.parent / path) if path else page
        dest = Path(*_normal(dest.parts))
        if dest != ROOT and ROOT not in dest.parents:
            found.append(f"{target}: outside the repository")
            continue
        rel = dest.relative_to(ROOT).as_posix() if dest != ROOT else ""
        is_file = rel in files
        if not is_file and not any(f.startswith(rel + "/") for f in files if rel):
            found.append(f"{target}: no such file")
            continue
        if anchor:
            if not is_file or dest.suffix != ".md":
                continue  # an anchor into something else than a page: not checked
            target_text = text if dest == page else dest.read_text(encoding="utf-8")
            if unquote(anchor) not in anchors_of(target_text):
                found.append(f"{target}: no heading or anchor #{anchor} in {rel}")
    return found


def _normal(parts: tuple[str, ...]) -> list[str]:
    """`..` and `.` resolved by name (no symlinks followed)."""
    out: list[str] = []
    for part in parts:
        if part == "..":
            if len(out) > 1:
                out.pop()
        elif part != ".":
            out.append(part)
    return out


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page, page.read_text(encoding="utf-8")) == []


def test_the_pages_are_all_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/signing.md", "docs/rules/haendler.md"} <= names


# -- the checker itself, on small samples ------------------------------------------------------
def test_slug_follows_githubs_rules() -> None:
    assert slug("Quickstart: in the browser") == "quickstart-in-the-browser"
    assert slug("Steps and `--json`") == "steps-and---json"
    assert slug("`make run` on one machine") == "make-run-on-one-machine"
    assert slug("Live: the event stream") == "live-the-event-stream"
    assert slug("Die Händler's orders") == "die-händlers-orders"
    assert slug("**Bold** and [a link](x.md) and KONTOR_PORT") == "bold-and-a-link-and-kontor_port"
    assert slug("Ports, settings & defaults (all)") == "ports-settings--defaults-all"


def test_repeated_headings_and_explicit_anchors() -> None:
    text = "# Title\n## Notes\n## Notes\n```\n## Not a heading\n```\n<a id=\"rule-3\"></a>\n"
    assert anchors_of(text) == {"title", "notes", "notes-1", "rule-3"}


def test_links_in_code_are_not_links() -> None:
    text = "[a](a.md) `[b](b.md)` ![c](img/c.png \"C\")\n```\n[d](d.md)\n```\n[e]: e.md\n<img src=\"f.png\">\n"
    assert links_of(text) == ["a.md", "img/c.png", "e.md", "f.png"]


def test_a_broken_sample_is_found_broken() -> None:
    page = ROOT / "docs" / "sample.md"
    files = frozenset({"README.md", "docs/sample.md", "docs/api.md", "docs/screenshots/haendler.png"})
    sample = """# Sample
## A part
[ok](api.md) [ok too](../README.md) [here](#a-part) [image](screenshots/haendler.png)
[missing](nope.md) ![missing image](screenshots/nope.png) [bad anchor](#no-part)
[outside](../../elsewhere.md) [site](https://example.org/x.md) [mail](mailto:a@b.c)
<img src="screenshots/gone.png" alt="">
"""
    assert broken(page, sample, files) == [
        "nope.md: no such file",
        "screenshots/nope.png: no such file",
        "#no-part: no heading or anchor #no-part in docs/sample.md",
        "../../elsewhere.md: outside the repository",
        "screenshots/gone.png: no such file",
    ]
    # A heading of another page is read from that page.
    assert broken(page, "[x](../README.md#no-such-heading-anywhere)", files) == [
        "../README.md#no-such-heading-anywhere: no heading or anchor #no-such-heading-anywhere in README.md"]
