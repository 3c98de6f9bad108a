"""A Skill as a JSON-safe dict and back."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from skillpack._model import Skill, SkillLocation
from skillpack.parse._frontmatter import parse_skill
from skillpack.parse._skill_json import skill_from_dict, skill_to_dict

PATH = "/skills/my-skill/SKILL.md"
GOOD = "name: my-skill\ndescription: Does things. Use when testing."


def test_skill_round_trips_through_json() -> None:
    parsed = parse_skill(
        "---\nname: my-skill\ndescription: d\nmetadata:\n  updated: 2026-01-02\n"
        "  when: !!timestamp 2026-01-02 10:00:00\n  n: .nan\n"
        "  raw: !!binary aGk=\n  set: !!set {b, a}\n"
        "allowed-tools: Read\narguments: [a]\nhooks: {Stop: []}\nx:\n  2: one\n  true: true\n"
        "---\nBody\n",
        codex_yaml="interface: {display_name: X}\ndependencies: {tools: [{type: mcp}]}\n"
        "permissions: {network: {enabled: true}, file_system: {write: [./out]}, macos: {a: 1}}\n",
        location=SkillLocation(mtime_ns=5, size=9),
        path=PATH,
    )
    skill = parsed.skill
    assert skill is not None
    data = skill_to_dict(skill)
    text = json.dumps(data, allow_nan=False)
    again = skill_from_dict(json.loads(text))
    assert again == skill
    assert skill_to_dict(again) == data
    assert skill.metadata["when"] == "2026-01-02T10:00:00"
    assert skill.metadata["n"] == ".nan"
    assert skill.metadata["raw"] == "aGk="
    assert skill.metadata["set"] == ["a", "b"]
    assert skill.extra == {"x": {"2": "one", "true": True}}
    assert skill.codex is not None and skill.codex.permissions is not None
    assert skill.codex.permissions.write == ("./out",)


def test_skill_to_dict_stringifies_values_of_a_hand_built_skill() -> None:
    # What a caller past the type hints may hand in: a date and a key that is not a str.
    metadata: dict[Any, Any] = {"when": datetime.date(2024, 5, 6), 3: 4.5}
    skill = Skill(
        name="n",
        description="d",
        path="/p/n/SKILL.md",
        dir="/p/n",
        metadata=metadata,
        shadowed_by="/q/n/SKILL.md",
    )
    data = json.loads(json.dumps(skill_to_dict(skill)))
    assert data["metadata"] == {"when": "2024-05-06", "3": 4.5}
    assert skill_from_dict(data).shadowed_by == "/q/n/SKILL.md"


def test_skill_from_dict_refuses_unknown_keys() -> None:
    skill = parse_skill(f"---\n{GOOD}\n---\n", path=PATH).skill
    assert skill is not None
    data = skill_to_dict(skill)
    data["bogus"] = 1
    with pytest.raises(TypeError):
        skill_from_dict(data)
