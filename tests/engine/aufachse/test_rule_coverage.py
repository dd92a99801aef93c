"""Every numbered rule of the Auf Achse rules document (R, AD, RNG, S, T, M, K, V, L, H,
P, A, $, G, Y, B, the event cards named in bold) has a test named after it, and every
worked example AA-n is a test. `$n` is written `moneyn` in a test name (`test_money3_…`),
`AA-n` as `aa_n`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RULES = HERE.parents[2].parent / "shared" / "rules" / "auf-achse.md"
PATTERN = re.compile(r"\*\*(AA-\d+|RNG\d+|AD\d+|\$\d+|[RSTMKVLHPAGYBEN]\d+[a-z]?)\b")


def _test_names() -> set[str]:
    names = set()
    for path in HERE.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names.add(node.name)
    return names


def slug(rule: str) -> str:
    return rule.lower().replace("-", "_").replace("$", "money")


def numbered() -> list[str]:
    return sorted(set(PATTERN.findall(RULES.read_text(encoding="utf-8"))))


@pytest.mark.skipif(not RULES.is_file(), reason="the rules document is not beside this checkout")
def test_every_numbered_rule_and_example_has_a_named_test() -> None:
    names = [f"_{n[5:]}_" for n in _test_names()]
    rules = numbered()
    assert len(rules) > 140, rules
    missing = [r for r in rules if not any(f"_{slug(r)}_" in n for n in names)]
    assert not missing, f"rules without a test named after them: {missing}"


def test_slug_writes_money_and_examples() -> None:
    assert slug("$5") == "money5" and slug("AA-10") == "aa_10" and slug("M8b") == "m8b"
