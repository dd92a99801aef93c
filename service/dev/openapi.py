"""Write the API's OpenAPI document to `openapi/openapi.json` (`make openapi`).

    python -m service.dev.openapi           # (re)write the file
    python -m service.dev.openapi --check   # exit 1 if the committed file is out of date

The document is the one the service serves at `/openapi.json`, built from default
`Settings()` (never the environment), so the committed file does not depend on where it
was made. Building it needs no Redis: the clients connect on first use.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any

from service.config import Settings
from service.http.app import create_app

#: Where the document is committed, relative to the project root.
PATH = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def document() -> dict[str, Any]:
    """The OpenAPI document exactly as the app serves it."""
    app = create_app(Settings())
    response = app.test_client().get("/openapi.json")
    if response.status_code != 200:
        raise RuntimeError(f"/openapi.json answered {response.status_code}")
    spec: dict[str, Any] = response.get_json()
    return spec


def render(spec: dict[str, Any]) -> str:
    """Pretty, key-sorted JSON with a trailing newline: stable diffs in review."""
    return json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.dev.openapi", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed document is out of date")
    parser.add_argument("--path", type=Path, default=PATH, help=f"where the document lives (default {PATH})")
    args = parser.parse_args(argv)
    fresh = render(document())
    if args.check:
        committed = args.path.read_text(encoding="utf-8") if args.path.exists() else ""
        if committed == fresh:
            print(f"{args.path} is up to date")
            return 0
        diff = difflib.unified_diff(committed.splitlines(keepends=True), fresh.splitlines(keepends=True),
                                    fromfile=f"{args.path} (committed)", tofile="generated", n=2)
        sys.stdout.writelines(list(diff)[:60])
        print(f"\n{args.path} is out of date: run `make openapi` and commit the result", file=sys.stderr)
        return 1
    args.path.parent.mkdir(parents=True, exist_ok=True)
    args.path.write_text(fresh, encoding="utf-8")
    print(f"wrote {args.path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
