"""Skill content on disk: the body, the bundled files, one file confined to the folder."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import REAL_SKILLS, WriteSkill
from skillpack._errors import (
    SkillIOError,
    SkillNotFoundError,
    SkillParseError,
    SkillPermissionError,
)
from skillpack._model import Root, Skill
from skillpack.discovery import _skill_files
from skillpack.discovery._discover import discover
from skillpack.discovery._skill_files import (
    fair_listing,
    list_skill_files,
    read_body,
    read_body_head,
    read_skill_file,
)
from skillpack.index._search import BODY_CHARS
from skillpack.parse._frontmatter import split_frontmatter


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

    with pytest.raises(SkillNotFoundError, match="no longer exists") as caught:
        read_body(skill)
    assert "skillpack" not in str(caught.value)  # the message may reach a model
    assert caught.value.hint is not None and "skillpack list" in caught.value.hint


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


def test_a_crowded_folder_does_not_hide_the_files_beside_it(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    # 250 assets must not push out what the body points at.
    files = {f"assets/a{i:03}.png": "x" for i in range(250)}
    files |= {"references/checklist.md": "x", "scripts/run.sh": "x", "README.md": "x"}
    write_skill("kit", files=files)

    listed, truncated = list_skill_files(only_skill(tmp_path))

    assert truncated is True and len(listed) == 200
    assert {"README.md", "references/checklist.md", "scripts/run.sh"} <= set(listed)
    assert listed[:2] == ("README.md", "assets/a000.png")  # the walk's order is kept
    assert fair_listing(["b/1", "b/2", "b/3", "a", "c/1"], 3) == ("b/1", "a", "c/1")


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


# -- read_body_head: the bounded read search indexes --------------------------------


def on_disk(path: Path) -> Skill:
    skill = Skill(name="disk", description="A skill on disk.", path=str(path), dir=str(path.parent))
    return dataclasses.replace(skill, size=path.stat().st_size)


def write(tmp_path: Path, data: bytes) -> Skill:
    path = tmp_path / "disk" / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return on_disk(path)


def refuse_whole_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    def whole(skill: Skill) -> str:
        raise AssertionError(f"read the whole of {skill.path}")

    monkeypatch.setattr(_skill_files, "read_body", whole)


FRONTMATTER = b"---\nname: disk\ndescription: A skill on disk.\n---\n"


def split_body(skill: Skill) -> str:
    """The body as `split_frontmatter` cuts the whole file: what the head must equal."""
    return split_frontmatter(Path(skill.path).read_bytes().decode("utf-8-sig")).body


@pytest.mark.parametrize(
    "data",
    [
        FRONTMATTER + b"Short body.\n",
        FRONTMATTER,
        b"\xef\xbb\xbf" + FRONTMATTER + b"Body after a BOM. " * 400,
        FRONTMATTER.replace(b"\n", b"\r\n") + b"CRLF line.\r\n" * 600,
        FRONTMATTER + b"x" * 4096,
        b"---\n---\nEmpty frontmatter.\n",
        b"---\nname: disk\n---\n",
        b"---\nname: disk\n---",
        b"---\nname: disk\n----\nkey: v\n---\nAfter a four-dash line.\n",
        b"---\nname: disk\n---  \nAfter blanks on the closing line.\n",
        b"---  \nname: disk\n---\nAfter blanks on the opening line.\n",
        b"---\nname: disk\n--- x\nkey: v\n---\nAfter a line starting with dashes.\n",
        b"---\nname: disk\n---\nA CR\r inside the body.\n",
        b"---\nname: disk\n---\nA body with --- rules\n---\nbelow.\n",
        FRONTMATTER + "Accents: caf\u00e9, \u2014 dashes.\n".encode(),
    ],
    ids=[
        "short",
        "empty-body",
        "bom",
        "crlf",
        "long-ascii",
        "empty-frontmatter",
        "nothing-after-closing-line",
        "closing-line-without-newline",
        "four-dash-line",
        "blanks-after-closing",
        "blanks-after-opening",
        "dashes-then-text",
        "cr-in-body",
        "rules-in-body",
        "multibyte",
    ],
)
def test_read_body_head_reads_a_bounded_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    skill = write(tmp_path, data)
    expected = split_body(skill)[:500]
    refuse_whole_reads(monkeypatch)

    assert read_body_head(skill, 500) == expected


@pytest.mark.parametrize("shift", [0, 1, 2], ids=["aligned", "cut-1", "cut-2"])
def test_read_body_head_drops_a_character_cut_by_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shift: int
) -> None:
    # Three-byte characters, shifted so the read ends inside one, or between two.
    skill = write(tmp_path, FRONTMATTER + b"a" * shift + "\u2014".encode() * 3000)
    expected = split_body(skill)[:1000]
    refuse_whole_reads(monkeypatch)

    assert read_body_head(skill, 1000) == expected


@pytest.mark.parametrize(
    "data",
    [
        b"---\nname: disk\ndescription: " + b"long " * 2000 + b"\n---\nThe body.\n" * 50,
        FRONTMATTER + "\u00e9".encode() * 5000,
        b"---\nname: disk\n" + b"x" * 8000,
    ],
    ids=["long-frontmatter", "multibyte-body", "unclosed-frontmatter"],
)
def test_read_body_head_reads_the_whole_file_when_the_head_is_not_enough(
    tmp_path: Path, data: bytes
) -> None:
    skill = write(tmp_path, data)

    assert read_body_head(skill, 3000) == split_body(skill)[:3000]


def test_read_body_head_reports_a_missing_file(tmp_path: Path) -> None:
    folder = tmp_path / "gone"
    skill = Skill(name="gone", description="Gone.", path=str(folder / "SKILL.md"), dir=str(folder))

    with pytest.raises(SkillNotFoundError, match="gone"):
        read_body_head(skill, BODY_CHARS)


@pytest.mark.parametrize(
    "data",
    [
        FRONTMATTER + b"caf\xe9 au lait\n" * 10,
        b"---\nname: caf\xe9\n---\nA clean body.\n",
    ],
    ids=["in-body", "in-frontmatter"],
)
def test_read_body_head_reports_text_that_is_not_utf8(tmp_path: Path, data: bytes) -> None:
    skill = write(tmp_path, data)

    with pytest.raises(SkillIOError, match="UTF-8"):
        read_body_head(skill, BODY_CHARS)


@pytest.mark.corpus
@pytest.mark.parametrize("max_chars", [1, 200, BODY_CHARS, 20_000], ids=str)
def test_read_body_head_matches_read_body_on_real_skills(max_chars: int) -> None:
    for path in sorted(REAL_SKILLS.rglob("SKILL.md")):
        skill = on_disk(path)
        assert read_body_head(skill, max_chars) == split_body(skill)[:max_chars], path


@pytest.mark.parametrize(
    ("now", "code"),
    [
        pytest.param(
            "---\nname: doc\ndescription: x\nBody, the close is gone.\n",
            "frontmatter-unclosed",
            id="closing-line-removed",
        ),
        pytest.param(
            "---\nname: doc\ndescription: [unclosed\n---\nBody.\n", "yaml-invalid", id="yaml-broken"
        ),
        pytest.param("No frontmatter any more.\n", "frontmatter-missing", id="frontmatter-gone"),
    ],
)
def test_a_body_read_rechecks_a_file_that_changed_since_discovery(
    tmp_path: Path, write_skill: WriteSkill, now: str, code: str
) -> None:
    folder = write_skill("doc")
    skill = only_skill(tmp_path)
    (folder / "SKILL.md").write_text(now, encoding="utf-8")

    with pytest.raises(SkillParseError, match="no longer parses") as caught:
        read_body(skill)
    assert str(folder / "SKILL.md") in str(caught.value)
    assert [p.code for p in caught.value.problems if p.severity == "error"] == [code]


def test_an_os_permission_error_is_permission_denied_naming_the_file(
    tmp_path: Path, write_skill: WriteSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_skill("doc", files={"references/a.md": "A\n"})
    skill = only_skill(tmp_path)

    def refused(path: str, *args: object) -> bytes:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(_skill_files, "read_bytes", refused)
    monkeypatch.setattr(_skill_files, "read_fd", refused)  # bundled files read from a descriptor
    with pytest.raises(SkillPermissionError, match="Permission denied reading") as caught:
        read_body(skill)
    assert str(folder / "SKILL.md") in str(caught.value)
    with pytest.raises(SkillPermissionError) as caught:
        read_skill_file(skill, "references/a.md")
    assert str(folder / "references" / "a.md") in str(caught.value)


def test_the_recheck_of_a_command_file_uses_the_command_rules(tmp_path: Path) -> None:
    commands = tmp_path / "proj" / ".claude" / "commands"
    commands.mkdir(parents=True)
    (tmp_path / "proj" / ".git").mkdir()
    command = commands / "review.md"
    command.write_text("Review $ARGUMENTS carefully.\n", encoding="utf-8")
    catalog = discover(
        cwd=str(tmp_path / "proj"), include_user=False, include_system=False, use_cache=False
    )
    (skill,) = catalog.skills
    assert read_body(skill) == "Review $ARGUMENTS carefully.\n"  # no frontmatter: still fine
    command.write_text("---\ndescription: x\nThe closing line is gone.\n", encoding="utf-8")
    with pytest.raises(SkillParseError, match="review.md no longer parses"):
        read_body(skill)
