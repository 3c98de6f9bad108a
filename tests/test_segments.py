"""One path-segment check (`_paths.segment_problem`) and every module that takes segments
from outside refusing what it refuses: archive members, file reads, skill URIs, MCP
upstream manifests and names, new skill names."""

from __future__ import annotations

import pytest

from skillpack._errors import SkillPermissionError, UsageError
from skillpack._model import Skill
from skillpack._paths import SEGMENT_WORDS, segment_problem
from skillpack.discovery._confine import confined_parts
from skillpack.install._archive import normalize_member
from skillpack.install._values import Refused
from skillpack.mcp._uris import parse
from skillpack.runtime._create import check_name
from skillpack.runtime._mcp_skills import _files, _local_path, _unloadable_name

TABLE = [
    ("", "empty"),
    (".", "dot"),
    ("..", "dot"),
    ("a/b", "separator"),
    ("..\\evil", "separator"),
    ("a\x00b", "nul"),
    ("a\x1fb", "control"),
    ("a\x7fb", "control"),
    ("C:", "drive"),
    ("c:evil", "drive"),
    ("...", ""),
    (".hidden", ""),
    ("notes.md", ""),
    ("a:b", "drive"),
    ("ab:c", ""),
    ("é:x", ""),
    ("名前", ""),
]


@pytest.mark.parametrize(("segment", "problem"), TABLE)
def test_a_segment_is_judged_by_the_one_check(segment: str, problem: str) -> None:
    assert segment_problem(segment) == problem
    if problem:
        assert SEGMENT_WORDS[problem]


BAD = [segment for segment, problem in TABLE if problem and segment]
IN_A_PATH = [segment for segment in BAD if "/" not in segment]
"""Bad segments that stay one segment inside a `/`-joined path."""


@pytest.mark.parametrize("segment", IN_A_PATH)
def test_an_archive_member_with_a_bad_segment_is_unsafe(segment: str) -> None:
    with pytest.raises(Refused) as caught:
        normalize_member(f"skill/{segment}/x", label="the archive")
    assert caught.value.code == "unsafe-entry"


@pytest.mark.parametrize("segment", IN_A_PATH)
def test_a_read_of_a_path_with_a_bad_segment_is_refused(segment: str) -> None:
    skill = Skill(name="kit", description="d", path="/s/kit/SKILL.md", dir="/s/kit")
    if segment in (".",):
        assert confined_parts(skill, f"a/{segment}/x") == ("a", "x")  # `.` is dropped
        return
    with pytest.raises(SkillPermissionError):
        confined_parts(skill, f"a/{segment}/x")


@pytest.mark.parametrize("segment", BAD)
def test_a_skill_uri_with_a_bad_segment_is_refused(segment: str) -> None:
    encoded = "".join(c if c.isalnum() or c in ".:" else f"%{ord(c):02X}" for c in segment)
    with pytest.raises(UsageError):
        parse(f"skill://kit/{encoded}/x.md")


@pytest.mark.parametrize("segment", IN_A_PATH)
def test_an_upstream_manifest_or_uri_with_a_bad_segment_is_refused(segment: str) -> None:
    root = "skill://kit/"
    resources = [
        {"uri": f"{root}SKILL.md", "digest": "sha256:" + "a" * 64, "size": 1},
        {"uri": f"{root}{segment}/x.md", "digest": "sha256:" + "b" * 64, "size": 1},
    ]
    assert isinstance(_files(f"{root}SKILL.md", resources), str)
    assert _local_path("up", f"skill://kit/{segment}/SKILL.md") is None


@pytest.mark.parametrize("segment", BAD)
def test_a_new_skill_or_an_upstream_name_with_a_bad_segment_is_refused(segment: str) -> None:
    with pytest.raises(UsageError):
        check_name(segment)
    if segment_problem(segment) != "drive":  # a folder may be named `c:x` on POSIX
        assert _unloadable_name(segment)
