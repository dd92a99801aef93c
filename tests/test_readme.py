"""The README is true and short, and so are the topic pages in docs/: the README stays
at most 260 lines, and every repository path, link, `make` target, `kontor` command and
option, `python -m` module and `KONTOR_*` variable that README.md or docs/*.md names
exists. (The quickstart's lines themselves are run by tests/service/client/test_cli_turns.py.)"""

from __future__ import annotations

import re
import subprocess
from dataclasses import fields
from functools import cache
from pathlib import Path

import click
import pytest

from service.client.cli import cli
from service.config import Settings
from tests.test_docs_links import anchors_of

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The README's length, at most (about 250 lines; topics live in docs/; issue 22: at most 260).
README_LINES = 260
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]

#: Names in backticks that look like files but are no file of the repository: the key file
#: the `kontor` command keeps in ~/.config/kontor, the history file a reader writes with
#: `python -m engine play --history`, the guide's source served at /titles/<id>/rules.md,
#: and the boardgame.io harness's files (`bench/peer_bench.py --peer DIR`, its PEER_FILES).
NOT_FILES = {"keys.json", "game.json", "rules.md", "server.js", "bench.js", "sealedbid.js"}
FILE_SUFFIXES = (".py", ".lua", ".toml", ".json", ".md", ".yaml", ".js", ".css", ".html", ".png", ".jsonl")


@cache
def tracked() -> frozenset[str]:
    """The repository's files (those not yet committed too, but never ignored ones)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return frozenset(out.splitlines())


@cache
def top_level() -> frozenset[str]:
    """The repository's top-level files and folders (committed ones: never `.venv`)."""
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return frozenset(p.split("/", 1)[0] for p in out.splitlines())


def exists(path: str) -> bool:
    """A tracked file, or a folder holding tracked files; `<title>` and `*` match any part."""
    path = path.rstrip("/")
    if "<" in path or "*" in path:
        pattern = re.compile(re.sub(r"<[^>/]*>|\\\*", "[^/]+", re.escape(path)) + "(/.*)?$")
        return any(pattern.match(p) for p in tracked())
    return path in tracked() or any(p.startswith(path + "/") for p in tracked())


def code_of(text: str) -> list[str]:
    """The code a page shows: each line of its fenced blocks, and each inline code span."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    return [line for b in blocks for line in b.splitlines()] + re.findall(r"`([^`\n]+)`", prose)


def anchors(page: Path) -> set[str]:
    """A page's anchors, by GitHub's rules (the link check's own, tests/test_docs_links.py)."""
    return anchors_of(page.read_text(encoding="utf-8"))


def problems(page: Path, text: str) -> list[str]:
    """What `text` (the content of `page`) names that does not exist."""
    found: list[str] = []
    if "../shared" in text or "/work/" in text:
        found.append("a path outside the repository (../shared or /work/)")
    # Links: relative to the page, inside the repository, to a heading that is there.
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:|/", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if ROOT not in dest.parents and dest != ROOT:
            found.append(f"link outside the repository: {target}")
        elif not exists(str(dest.relative_to(ROOT))):
            found.append(f"link to a missing file: {target}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            found.append(f"link to a missing heading: {target}")
    # Paths: anything that starts with a top-level folder of the repository.
    tops = "|".join(re.escape(t) for t in sorted(top_level()) if not t.startswith(".git"))
    for path in re.findall(rf"(?<![\w./$~-])((?:{tops})(?:/[\w.<>*-]+)+/?)", text):
        path = path.rstrip(".")
        if not exists(path):
            found.append(f"missing path: {path}")
    code = code_of(text)
    for span in code:
        # A bare file name: some tracked file has it.
        name = span.strip()
        if re.fullmatch(r"[\w-]+(\.[\w-]+)*", name) and name.endswith(FILE_SUFFIXES) and name not in NOT_FILES:
            if not any(p == name or p.endswith("/" + name) for p in tracked()):
                found.append(f"no file named {name}")
        for target in re.findall(r"(?<![\w.-])make ([a-z][\w-]*)", span):
            if target not in make_targets():
                found.append(f"no make target {target}")
        for module in re.findall(r"python -m ([\w.]+)", span):
            if not module_exists(module):
                found.append(f"no module {module}")
        for command in re.findall(r"(?<![\w./-])kontor ([^|#;)`]*)", span):
            found += [f"kontor {command.strip()}: {p}" for p in kontor_problems(command.split())]
    for var in set(re.findall(r"\bKONTOR_[A-Z_]*[A-Z]\b", text)):
        if not variable_exists(var):
            found.append(f"no variable {var}")
    return found


@cache
def make_targets() -> frozenset[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return frozenset(t for line in re.findall(r"^([\w .-]+):(?!=)", makefile, re.M) for t in line.split())


def module_exists(module: str) -> bool:
    base = ROOT / module.replace(".", "/")
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file() or (
        base / "__main__.py").is_file()


def kontor_problems(words: list[str]) -> list[str]:
    """A `kontor` command line: its commands exist, and so do its options."""
    command: click.Command = cli
    for word in words:
        if isinstance(command, click.Group) and re.fullmatch(r"[a-z]+(-[a-z]+)*", word):
            sub = command.commands.get(word)
            if sub is None:
                return [f"no command {word}"]
            command = sub
        elif word.startswith("-") and re.fullmatch(r"--?[a-z][\w-]*(=.*)?", word):
            option = word.split("=", 1)[0]
            if not any(option in p.opts or option in p.secondary_opts for p in command.params) \
                    and option not in ("--help", "-h"):
                return [f"no option {option} of {command.name}"]
    return []


@cache
def code_text() -> str:
    """Every tracked source file outside README.md and docs/ (where a variable is read)."""
    return "\n".join((ROOT / p).read_text(encoding="utf-8", errors="replace") for p in tracked()
                     if (p.endswith((".py", ".js", ".toml")) or p in ("Makefile", "Procfile"))
                     and p != "tests/test_readme.py")


def variable_exists(var: str) -> bool:
    setting = var.removeprefix("KONTOR_").lower()
    return setting in {f.name for f in fields(Settings)} or re.search(rf"\b{var}\b", code_text()) is not None


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_LINES, f"README.md has {lines} lines; move topics to docs/"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_name_on_the_page_exists(page: Path) -> None:
    assert problems(page, page.read_text(encoding="utf-8")) == []


def test_the_check_finds_what_is_missing() -> None:
    text = """See [the guide](rules/nope.md), [a heading](api.md#no-such-heading),
`engine/nope.py`, `docs/rules/<title>.txt`, `nope_module.py`, `make nope`,
`python -m service.nope`, `kontor order $GAME --nope`, `kontor nope`, `KONTOR_NOPE` and
[outside](../../x.md); ../shared/rules/haendler.md."""
    found = problems(ROOT / "docs" / "api.md", text)
    assert found == [
        "a path outside the repository (../shared or /work/)",
        "link to a missing file: rules/nope.md",
        "link to a missing heading: api.md#no-such-heading",
        "link outside the repository: ../../x.md",
        "missing path: engine/nope.py",
        "missing path: docs/rules/<title>.txt",
        "no file named nope_module.py",
        "no make target nope",
        "no module service.nope",
        "kontor order $GAME --nope: no option --nope of order",
        "kontor nope: no command nope",
        "no variable KONTOR_NOPE",
    ]
    good = """[guide](rules/haendler.md), [api](api.md#auth), `tests/engine/<title>/playthroughs/`,
`queue.py`, `make run`, `python -m workers.mailin`, `kontor seat contact $GAME --as bob --email a@b`,
`KONTOR_REDIS_URL`, `KONTOR_URL`."""
    assert problems(ROOT / "docs" / "api.md", good) == []


def test_every_setting_is_documented_with_its_variable() -> None:
    """Each field of `Settings` has a row of a settings table (docs/operations.md for the
    service, docs/mail.md for mail and webhooks) naming its `KONTOR_*` variable."""
    lines = [line for page in ("operations.md", "mail.md")
             for line in (ROOT / "docs" / page).read_text(encoding="utf-8").splitlines()]
    rows = [line for line in lines if line.startswith("| `KONTOR_")]
    named = {var for row in rows for var in re.findall(r"`(KONTOR_[A-Z_]+)`", row.split(" | ")[0])}
    missing = [f"KONTOR_{f.name.upper()}" for f in fields(Settings) if f"KONTOR_{f.name.upper()}" not in named]
    assert rows and missing == []
