"""The fast Skill constructors build exactly what the dataclass builds."""

from __future__ import annotations

from typing import Any

import pytest

from skillpack._model import CodexMetadata, Skill
from skillpack.index._snapshot import skill_from_values, skill_values
from skillpack.parse._skill_build import FAST, new_skill


def test_the_fast_path_is_active() -> None:
    assert FAST


def testnew_skill_builds_what_the_dataclass_builds() -> None:
    given: dict[str, Any] = {
        "name": "a",
        "description": "A.",
        "path": "/r/a/SKILL.md",
        "dir": "/r/a",
        "scope": "user",
        "allowed_tools": ("Read",),
        "body_lines": 3,
    }
    built = new_skill(**given)
    assert type(built) is Skill
    assert built == Skill(**given)
    # Default factories give each skill its own mapping.
    assert built.metadata == {} and built.metadata is not new_skill(**given).metadata
    with pytest.raises(TypeError):
        new_skill(name="a", description="A.", path="/r/a/SKILL.md")  # no `dir`
    with pytest.raises(TypeError):
        new_skill(**given, colour="red")


def test_values_round_trip_through_the_generated_builder() -> None:
    skill = Skill(
        name="a",
        description="A.",
        path="/r/a/SKILL.md",
        dir="/r/a",
        codex=CodexMetadata(allow_implicit_invocation=False),
        metadata={"k": "v"},
    )
    assert skill_from_values(skill_values(skill)) == skill
    with pytest.raises(ValueError):
        skill_from_values(skill_values(skill)[:-1])
