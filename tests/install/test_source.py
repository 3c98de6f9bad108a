"""SOURCE classification: sites, git repositories, archives, folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillpack._errors import UsageError
from skillpack.install._kinds import parse_source

REMOTE: list[tuple[str, str, str, str | None, str | None, str | None]] = [
    # (SOURCE, kind, location, ref, subpath, github)
    ("https://example.com", "site", "https://example.com", None, None, None),
    ("https://example.com/", "site", "https://example.com", None, None, None),
    ("https://example.com/team", "site", "https://example.com/team", None, None, None),
    (
        "https://example.com/.well-known/agent-skills/index.json",
        "site",
        "https://example.com",
        None,
        None,
        None,
    ),
    (
        "http://127.0.0.1:8765/base/.well-known/skills/index.json",
        "site",
        "http://127.0.0.1:8765/base",
        None,
        None,
        None,
    ),
    (
        "https://example.com/skills.tar.gz",
        "archive",
        "https://example.com/skills.tar.gz",
        None,
        None,
        None,
    ),
    ("https://example.com/dl/x.zip", "archive", "https://example.com/dl/x.zip", None, None, None),
    (
        "https://git.example.com/team/repo.git",
        "git",
        "https://git.example.com/team/repo.git",
        None,
        None,
        None,
    ),
    (
        "https://git.example.com/team/repo.git/skills/pdf#v1.2",
        "git",
        "https://git.example.com/team/repo.git",
        "v1.2",
        "skills/pdf",
        None,
    ),
    (
        "file:///srv/repos/skills.git#main",
        "git",
        "file:///srv/repos/skills.git",
        "main",
        None,
        None,
    ),
    ("git@github.com:o/r.git#dev", "git", "git@github.com:o/r.git", "dev", None, None),
    ("ssh://git@host/o/r.git", "git", "ssh://git@host/o/r.git", None, None, None),
    ("git+https://host/o/r#abc1234", "git", "https://host/o/r", "abc1234", None, None),
    (
        "anthropics/skills",
        "git",
        "https://github.com/anthropics/skills.git",
        None,
        None,
        "anthropics/skills",
    ),
    (
        "anthropics/skills/skills/pdf#main",
        "git",
        "https://github.com/anthropics/skills.git",
        "main",
        "skills/pdf",
        "anthropics/skills",
    ),
    ("github:o/r", "git", "https://github.com/o/r.git", None, None, "o/r"),
    ("https://github.com/o/r", "git", "https://github.com/o/r.git", None, None, "o/r"),
    (
        "https://github.com/o/r/tree/v2/skills/x",
        "git",
        "https://github.com/o/r.git",
        "v2",
        "skills/x",
        "o/r",
    ),
    (
        "https://gitlab.com/g/r/-/tree/main/skills",
        "git",
        "https://gitlab.com/g/r.git",
        "main",
        "skills",
        None,
    ),
]


@pytest.mark.parametrize(
    ("text", "kind", "location", "ref", "subpath", "github"), REMOTE, ids=[r[0] for r in REMOTE]
)
def test_remote_sources_are_classified(
    text: str,
    kind: str,
    location: str,
    ref: str | None,
    subpath: str | None,
    github: str | None,
    tmp_path: Path,
) -> None:
    source = parse_source(text, cwd=str(tmp_path))
    assert (source.kind, source.location, source.ref, source.subpath, source.github) == (
        kind,
        location,
        ref,
        subpath,
        github,
    )


def test_local_folders_archives_and_skill_files_are_classified(tmp_path: Path) -> None:
    (tmp_path / "skills" / "a").mkdir(parents=True)
    (tmp_path / "skills" / "a" / "SKILL.md").write_text("x")
    (tmp_path / "pack.tar.gz").write_bytes(b"")
    folder = parse_source("skills", cwd=str(tmp_path))
    assert (folder.kind, folder.location, folder.is_local) == (
        "folder",
        str(tmp_path / "skills"),
        True,
    )
    skill_file = parse_source("./skills/a/SKILL.md", cwd=str(tmp_path))
    assert (skill_file.kind, skill_file.location) == ("folder", str(tmp_path / "skills" / "a"))
    archive = parse_source(str(tmp_path / "pack.tar.gz"), cwd="/")
    assert (archive.kind, archive.is_local) == ("archive", True)


def test_an_existing_folder_named_like_owner_repo_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "owner" / "repo").mkdir(parents=True)
    assert parse_source("owner/repo", cwd=str(tmp_path)).kind == "folder"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "SOURCE is empty"),
        ("./missing", "No such file or folder"),
        ("just-a-word", "Cannot tell what SOURCE"),
        ("file:///srv/folder", "must name a git repository"),
        ("https://github.com/onlyowner", "does not name a repository"),
    ],
)
def test_bad_sources_say_what_is_wrong(text: str, fragment: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=fragment):
        parse_source(text, cwd=str(tmp_path))


def test_a_local_file_that_is_not_an_archive_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(UsageError, match="not an archive"):
        parse_source("notes.txt", cwd=str(tmp_path))
