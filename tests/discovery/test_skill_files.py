"""Skill content on disk: the body, the bundled files, one file confined to the folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import WriteSkill
from skillpack._errors import SkillIOError, SkillNotFoundError, SkillPermissionError
from skillpack._model import Root, Skill
from skillpack.discovery._discover import discover
from skillpack.discovery._skill_files import list_skill_files, read_body, read_skill_file


def only_skill(root: Path) -> Skill:
    (skill,) = discover(roots=[Root(path=str(root), scope="extra")], use_cache=False).skills
    return skill


def test_read_body_returns_the_markdown_after_the_frontmatter(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("doc", body="# Title\n\nA --- B\n\n---\n\nafter the rule\n")

    body = read_body(only_skill(tmp_path))

    assert body.lstrip("\n") == "# Title\n\nA --- B\n\n---\n\nafter the rule\n"


def test_read_body_of_a_deleted_skill_says_to_rediscover(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    folder = write_skill("gone")
    skill = only_skill(tmp_path)
    (folder / "SKILL.md").unlink()

    with pytest.raises(SkillNotFoundError, match="skillpack list"):
        read_body(skill)


def test_list_skill_files_lists_bundled_files_only(tmp_path: Path, write_skill: WriteSkill) -> None:
    folder = write_skill(
        "kit",
        files={
            "README.md": "r",
            "references/guide.md": "g",
            "scripts/run.sh": "s",
            ".env": "secret",
            ".cache/x": "x",
            "node_modules/m/index.js": "m",
        },
    )
    write_skill("kit/nested", files={"inner.md": "i"})
    (tmp_path / "outside.md").write_text("o", encoding="utf-8")
    (folder / "escape.md").symlink_to(tmp_path / "outside.md")
    (folder / "alias.md").symlink_to(folder / "README.md")

    files, truncated = list_skill_files(only_named(tmp_path, "kit"))

    assert files == ("README.md", "alias.md", "references/guide.md", "scripts/run.sh")
    assert truncated is False


def only_named(root: Path, name: str) -> Skill:
    (skill,) = discover(roots=[Root(path=str(root), scope="extra")], use_cache=False).named(name)
    return skill


def test_list_skill_files_is_bounded(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("many", files={f"f{i:02}.md": "x" for i in range(12)})

    files, truncated = list_skill_files(only_skill(tmp_path), max_files=5)

    assert files == ("f00.md", "f01.md", "f02.md", "f03.md", "f04.md")
    assert truncated is True


@pytest.mark.parametrize(
    "relpath",
    [
        "../other/SKILL.md",
        "references/../../other/SKILL.md",
        "/etc/passwd",
        "%2e%2e/other/SKILL.md",
        "%252e%252e/other/SKILL.md",
        "..%2fother%2fSKILL.md",
        "..\\other\\SKILL.md",
        "\\etc\\passwd",
        "C:\\Windows\\win.ini",
        "guide.md\x00.txt",
        "guide.md%00",
        ".env",
        "escape.md",
    ],
    ids=[
        "dotdot",
        "dotdot-inside",
        "absolute",
        "percent-encoded",
        "double-encoded",
        "encoded-slashes",
        "backslashes",
        "backslash-absolute",
        "drive-letter",
        "nul",
        "encoded-nul",
        "hidden",
        "symlink-outside",
    ],
)
def test_read_skill_file_refuses_paths_leaving_the_skill(
    tmp_path: Path, write_skill: WriteSkill, relpath: str
) -> None:
    write_skill("other")
    folder = write_skill("kit", files={"guide.md": "ok", ".env": "secret"})
    (folder / "escape.md").symlink_to(tmp_path / "other" / "SKILL.md")

    with pytest.raises(SkillPermissionError, match="Refused to read"):
        read_skill_file(only_named(tmp_path, "kit"), relpath)


@pytest.mark.parametrize(
    "relpath",
    ["references/guide.md", "./references/guide.md", "references\\guide.md", "inner-link.md"],
    ids=["plain", "dot-prefix", "backslash-separator", "symlink-inside"],
)
def test_read_skill_file_reads_files_inside_the_skill(
    tmp_path: Path, write_skill: WriteSkill, relpath: str
) -> None:
    folder = write_skill("kit", files={"references/guide.md": "the guide\n"})
    (folder / "inner-link.md").symlink_to(folder / "references" / "guide.md")

    assert read_skill_file(only_skill(tmp_path), relpath) == "the guide\n"


@pytest.mark.parametrize(
    ("relpath", "error"),
    [
        ("missing.md", SkillNotFoundError),
        ("references", SkillNotFoundError),
        ("", SkillNotFoundError),
        ("big.md", SkillIOError),
        ("blob.bin", SkillIOError),
    ],
    ids=["missing", "folder", "empty", "too-large", "binary"],
)
def test_read_skill_file_errors(
    tmp_path: Path, write_skill: WriteSkill, relpath: str, error: type[Exception]
) -> None:
    folder = write_skill("kit", files={"references/a.md": "a", "big.md": "x" * 2000})
    (folder / "blob.bin").write_bytes(b"\x00\x01\x02")

    with pytest.raises(error, match="kit|big.md|blob.bin"):
        read_skill_file(only_skill(tmp_path), relpath, max_bytes=1000)
