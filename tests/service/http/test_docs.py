"""`/docs` (Swagger UI) and `/redoc` work offline: every script and style sheet they load
is served by the app itself, from files the package installs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest


class Assets(HTMLParser):
    """The URLs a page loads: `<script src>`, `<link href>`, `<img src>`, and ReDoc's `spec-url`."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (name in ("src", "spec-url") or (tag == "link" and name == "href")):
                self.urls.append(value)


@pytest.mark.parametrize("page,needs", [
    ("/docs", ("swagger-ui-bundle.js", "swagger-ui.css")),
    ("/redoc", ("redoc.standalone.js",)),
])
def test_doc_pages_load_only_local_assets(client: Any, page: str, needs: tuple[str, ...]) -> None:
    r = client.get(page)
    assert r.status_code == 200 and r.mimetype == "text/html"
    html = r.get_data(as_text=True)
    parser = Assets()
    parser.feed(html)
    assert all(any(url.endswith(name) for url in parser.urls) for name in needs), parser.urls
    # Nothing from elsewhere: no absolute URL in the page at all (scripts, styles, fonts).
    assert not re.search(r"""(?:src|href|url)\s*=?\s*\(?["']?(?:https?:)?//""", html), html
    for url in parser.urls:
        target = urljoin(f"http://localhost{page}", url)
        assert urlsplit(target).netloc == "localhost", url
        asset = client.get(urlsplit(target).path)
        assert asset.status_code == 200, url
        assert asset.get_data(), url
        if url.endswith(".js"):
            assert asset.mimetype in ("text/javascript", "application/javascript"), (url, asset.mimetype)
        elif url.endswith(".css"):
            assert asset.mimetype == "text/css", url
        asset.close()


def test_swagger_ui_renders_openapi_3_1(client: Any) -> None:
    # Swagger UI before 5 refuses 3.1 documents ("Unable to render this definition").
    bundle = client.get("/static/vendor/swagger-ui/swagger-ui-bundle.js")
    text = bundle.get_data(as_text=True)
    bundle.close()
    assert "isOAS31" in text


def test_redoc_fetches_no_logo_from_elsewhere(client: Any) -> None:
    # The one outside asset of ReDoc's bundle, its sidebar's logo, is taken out
    # (static/vendor/README.md); the browser test checks the pages' requests.
    bundle = client.get("/static/vendor/redoc/redoc.standalone.js")
    text = bundle.get_data(as_text=True)
    bundle.close()
    assert "cdn.redoc.ly" not in text and 'src:"data:,"' in text


def test_swagger_ui_fetches_no_validator_badge(client: Any) -> None:
    assert '"validatorUrl": null' in client.get("/docs").get_data(as_text=True)


def test_vendored_files_are_documented(app: Any) -> None:
    from pathlib import Path

    static = Path(app.static_folder)
    readme = (static / "vendor" / "README.md").read_text(encoding="utf-8")
    for path in sorted((static / "vendor").rglob("*")):
        if path.is_file() and path.suffix in (".js", ".css"):
            assert path.name in readme, path.name
        if path.is_dir():
            assert (path / "LICENSE").is_file(), path
