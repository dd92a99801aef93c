"""Write the site's `static/favicon.ico` from its `static/favicon.svg` (issue 22): the SVG
drawn by Chromium (playwright, the browser tests' kit) at 16, 32 and 48 px, each a PNG
inside one ICO file (an ICO may hold PNGs; every browser reads them).

    python -m service.dev.favicon

The pages link the SVG; `GET /favicon.ico` answers the ICO to browsers that ask for it.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

#: service/http/static, where both icons live.
STATIC = Path(__file__).resolve().parents[1] / "http" / "static"
SIZES = (16, 32, 48)


def pngs(svg: Path) -> list[tuple[int, bytes]]:
    """The SVG file (its own document: it fills the window) drawn at each of SIZES, as PNG
    bytes (transparent around it)."""
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("KONTOR_CHROMIUM", "/usr/bin/chromium")
    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox"])
        for size in SIZES:
            page = browser.new_page(viewport={"width": size, "height": size})
            page.goto(svg.as_uri())
            out.append((size, page.screenshot(omit_background=True)))
        browser.close()
    return out


def ico(images: list[tuple[int, bytes]]) -> bytes:
    """An ICO file holding `images` (size, PNG bytes): its header, one entry each, the PNGs."""
    head = struct.pack("<HHH", 0, 1, len(images))
    offset = len(head) + 16 * len(images)
    entries, data = b"", b""
    for size, png in images:
        entries += struct.pack("<BBBBHHII", size % 256, size % 256, 0, 0, 1, 32, len(png), offset + len(data))
        data += png
    return head + entries + data


def main() -> None:
    (STATIC / "favicon.ico").write_bytes(ico(pngs(STATIC / "favicon.svg")))
    print(f"wrote {STATIC / 'favicon.ico'}")


if __name__ == "__main__":
    main()
