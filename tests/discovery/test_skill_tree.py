"""A skill's whole tree as the MCP server serves it: every file with its size, digests
kept while the file's stat stays, bytes read confined to the folder."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from conftest import WriteSkill
from skillpack._errors import SkillNotFoundError, SkillPermissionError
from skillpack._model import Root, Skill
from skillpack.discovery import _skill_files
from skillpack.discovery._discover import discover
from skillpack.discovery._skill_files import DigestCache, read_skill_bytes, skill_tree


def named(root: Path, name: str) -> Skill:
    (skill,) = discover(roots=[Root(path=str(root), scope="extra")], use_cache=False).named(name)
    return skill


def test_the_tree_starts_with_skill_md_and_walks_into_nested_skills(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    outer = write_skill(
        "outer",
        files={
            "z.md": "z",
            "a/b.md": "b",
            ".hidden/x.md": "x",
            "node_modules/p.js": "p",
            "a/.env": "secret",
        },
    )
    write_skill("outer/tools/inner")
    os.symlink(tmp_path, outer / "up")  # a folder link: not walked
    os.symlink("/etc/hostname", outer / "host")  # a file link leaving the folder: left out

    files, truncated = skill_tree(named(tmp_path, "outer"), max_files=100)

    assert [f.path for f in files] == ["SKILL.md", "z.md", "a/b.md", "tools/inner/SKILL.md"]
    assert [f.size for f in files][1:3] == [1, 1]
    assert truncated is False
    assert skill_tree(named(tmp_path, "outer"), max_files=2) == (files[:2], True)


def test_bytes_are_read_as_they_are_and_confined(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("alpha", files={"logo.bin": "x"})
    (tmp_path / "alpha" / "logo.bin").write_bytes(b"\x00\xff\r\n")
    alpha = named(tmp_path, "alpha")
    assert read_skill_bytes(alpha, "logo.bin", max_bytes=10) == b"\x00\xff\r\n"
    with pytest.raises(SkillPermissionError):
        read_skill_bytes(alpha, "../alpha/logo.bin", max_bytes=10)
    with pytest.raises(SkillNotFoundError):
        read_skill_bytes(alpha, "nope.bin", max_bytes=10)


def test_a_digest_is_read_once_per_file_version(
    tmp_path: Path, write_skill: WriteSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill("alpha", files={"a.md": "one"})
    alpha = named(tmp_path, "alpha")
    reads: list[str] = []
    real = _skill_files.read_skill_bytes

    def counting(skill: Skill, relpath: str, *, max_bytes: int) -> bytes:
        reads.append(relpath)
        return real(skill, relpath, max_bytes=max_bytes)

    monkeypatch.setattr(_skill_files, "read_skill_bytes", counting)
    cache = DigestCache()

    def digest_of_a() -> str:
        (item,) = [f for f in skill_tree(alpha, max_files=10)[0] if f.path == "a.md"]
        return cache.file(alpha, item, max_bytes=100).digest

    first = digest_of_a()
    assert digest_of_a() == first == "sha256:" + hashlib.sha256(b"one").hexdigest()
    assert reads == ["a.md"]
    (tmp_path / "alpha" / "a.md").write_text("two", encoding="utf-8")  # same size
    assert digest_of_a() == "sha256:" + hashlib.sha256(b"two").hexdigest()
    assert reads == ["a.md", "a.md"]
