"""Every numbered rule of shared/rules/fantasy-business.md (R1.., FD1.., S1.., O1.., P1..,
I1.., E1.., V1..) has a test named after it (`test_r15_...`, `test_fd3_...`), and every
worked example FB-n is a test (`test_fb_4_...`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RULES = HERE.parents[2].parent / "shared" / "rules" / "fantasy-business.md"
PREFIXES = ("R", "FD", "S", "O", "P", "I", "E", "V", "FB-")


def _test_names() -> set[str]:
    names = set()
    for path in HERE.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names.add(node.name)
    return names


def _numbers(prefix: str) -> list[int]:
    text = RULES.read_text(encoding="utf-8")
    return sorted({int(n) for n in re.findall(rf"\*\*{re.escape(prefix)}(\d+)\b", text)})


@pytest.mark.skipif(not RULES.is_file(), reason="shared/rules is not beside this checkout")
@pytest.mark.parametrize("prefix", PREFIXES)
def test_every_numbered_rule_and_example_has_a_named_test(prefix: str) -> None:
    names = _test_names()
    numbers = _numbers(prefix)
    assert numbers, f"no {prefix}n found in {RULES}"
    tag = prefix.lower().replace("-", "_")
    missing = [n for n in numbers if not any(f"_{tag}{n}_" in f"_{name[5:]}" for name in names)]
    assert not missing, f"{prefix} rules without a test named after them: {missing}"
