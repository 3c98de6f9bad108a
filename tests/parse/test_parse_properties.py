"""Properties of the parser (hypothesis): any bytes in, a `ParsedSkill` out, whose
problems carry documented codes, whose skill exists exactly when no problem is an
error, and whose skill serializes as JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from skillpack.parse._frontmatter import parse_skill, parse_skill_bytes
from skillpack.parse._skill_json import skill_to_dict
from strategies import frontmatter_like

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "design.md"


def documented_codes() -> frozenset[str]:
    text = DESIGN.read_text(encoding="utf-8")
    section = text.split("## Problem codes (stable)", 1)[1].split("\n## ", 1)[0]
    return frozenset(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", section))


CODES = documented_codes()

HOSTILE_PIECES = st.sampled_from(
    ["x: " + "[" * 70, "x: " + "{a: " * 70, "m0: &m0 {a: 1}\nm1: &m1 {<<: [*m0, *m0]}",
     "n: 0x" + "f" * 300, "n: " + "9" * 5000, "a: &a [*a]", "d: !!binary aGk=", "t: !custom x",
     "description: \x1b[2J\u202e", "description: Use when: x", "- a\n- b", "'unclosed",
     "description: |\n  block\n\n  more"]
)  # fmt: skip


@st.composite
def skill_texts(draw: st.DrawFn) -> str:
    fields = draw(frontmatter_like())
    if draw(st.booleans()):
        fields += "\n" + draw(HOSTILE_PIECES)
    opening = draw(st.sampled_from(["---\n", "\ufeff---\r\n", "--- \n", "", "---"]))
    closing = draw(st.sampled_from(["\n---\n", "\n---", "\n--- \n", "\n----\n", ""]))
    return opening + fields + closing + draw(st.text(max_size=40))


def check(parsed: object) -> None:
    problems = parsed.problems  # type: ignore[attr-defined]
    skill = parsed.skill  # type: ignore[attr-defined]
    assert {p.code for p in problems} <= CODES
    assert (skill is None) == any(p.severity == "error" for p in problems)
    if skill is not None:
        assert isinstance(skill.description, str) and isinstance(skill.name, str)
        json.dumps(skill_to_dict(skill))  # every value is JSON, ints print in decimal


@given(skill_texts(), st.booleans())
def test_any_frontmatter_parses_into_a_well_formed_result(text: str, strict: bool) -> None:
    check(parse_skill(text, path="/s/x/SKILL.md", strict=strict))


@given(st.binary(max_size=200))
def test_any_bytes_parse_into_a_well_formed_result(data: bytes) -> None:
    check(parse_skill_bytes(b"---\n" + data, path="/s/x/SKILL.md"))
    check(parse_skill_bytes(data, path="/s/x/SKILL.md"))


@given(st.one_of(frontmatter_like(), HOSTILE_PIECES, st.text(max_size=80)))
def test_any_codex_sidecar_leaves_the_skill_loaded(codex: str) -> None:
    parsed = parse_skill(
        "---\nname: x\ndescription: d\n---\nbody\n", path="/s/x/SKILL.md", codex_yaml=codex
    )
    check(parsed)
    assert parsed.skill is not None
    assert {p.code for p in parsed.problems} <= {"codex-yaml-invalid"}
