"""The lock file: the `skills` npm CLI's skills-lock.json format, read and written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from skillpack._errors import SkillIOError
from skillpack.install._candidate import make_candidate
from skillpack.install._lockfile import locked_skills, make_entry, read_lock, write_lock
from skillpack.install._values import Candidate, Origin, Payload

SKILL = b"---\nname: demo\ndescription: Demo. Use when testing.\n---\nbody\n"


def candidate(origin: Origin) -> Candidate:
    return make_candidate(Payload(files={"SKILL.md": SKILL}), origin, name="demo")


def test_a_missing_lock_reads_as_empty_version_one(tmp_path: Path) -> None:
    assert read_lock(tmp_path / "skills-lock.json") == {"version": 1, "skills": {}}


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        '{"version": "1", "skills": {}}',
        '{"version": 0, "skills": {}}',
        '{"version": 1}',
        "[]",
    ],
)
def test_an_invalid_lock_is_an_error_and_is_never_overwritten(tmp_path: Path, text: str) -> None:
    path = tmp_path / "skills-lock.json"
    path.write_text(text)
    with pytest.raises(SkillIOError, match="will not overwrite it"):
        read_lock(path)
    assert path.read_text() == text


def test_written_locks_are_sorted_two_space_json_with_a_newline(tmp_path: Path) -> None:
    path = tmp_path / "skills-lock.json"
    write_lock(
        path,
        {
            "version": 1,
            "skills": {"zeta": {"source": "z"}, "Alpha": {"source": "a"}, "alpha": {"source": "b"}},
        },
    )
    text = path.read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "version": 1,\n  "skills": {\n')
    assert list(json.loads(text)["skills"]) == ["Alpha", "alpha", "zeta"]


def test_unknown_entries_and_fields_survive_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "skills-lock.json"
    foreign = {"source": "pkg", "sourceType": "node_modules", "via": "x", "computedHash": "ab"}
    document = {"version": 1, "skills": {"other": foreign}}
    write_lock(path, document)
    again = read_lock(path)
    assert again["skills"]["other"] == foreign
    skills = locked_skills(again, lock_dir=tmp_path)
    assert skills["other"].origin is None  # a source type skillpack cannot update


def test_a_well_known_entry_has_the_skills_cli_fields_then_skillpacks(tmp_path: Path) -> None:
    origin = Origin(
        source_type="well-known",
        source="example.com",
        source_url="https://example.com",
        index_url="https://example.com/.well-known/agent-skills/index.json",
        artifact_url="https://example.com/.well-known/agent-skills/demo/SKILL.md",
        artifact_digest="sha256:" + "1" * 64,
        well_known_digest="sha256:" + "1" * 64,
    )
    entry = make_entry(candidate(origin), lock_dir=tmp_path, now="T", previous=None)
    assert list(entry) == [
        "source",
        "sourceUrl",
        "sourceType",
        "computedHash",
        "wellKnownDigest",
        "skillpack",
    ]
    ours = entry["skillpack"]
    assert set(ours) == {
        "skillDigest",
        "files",
        "indexUrl",
        "artifactUrl",
        "artifactDigest",
        "installedAt",
        "updatedAt",
    }
    assert ours["files"] == {"SKILL.md": "sha256:" + hashlib.sha256(SKILL).hexdigest()}


def test_git_github_and_local_entries_take_the_skills_cli_shapes(tmp_path: Path) -> None:
    git = Origin(
        source_type="git",
        source="file:///r.git",
        source_url="file:///r.git",
        ref="v1",
        skill_path="skills/demo/SKILL.md",
        commit="c" * 40,
    )
    github = Origin(source_type="github", source="o/r", skill_path="demo/SKILL.md")
    local = Origin(
        source_type="local", source=str(tmp_path / "src"), source_url=str(tmp_path / "src")
    )
    shapes = {
        name: list(make_entry(candidate(o), lock_dir=tmp_path, now="T", previous=None))
        for name, o in (("git", git), ("github", github), ("local", local))
    }
    assert shapes == {
        "git": [
            "source",
            "sourceUrl",
            "ref",
            "sourceType",
            "skillPath",
            "computedHash",
            "skillpack",
        ],
        "github": ["source", "sourceType", "skillPath", "computedHash", "skillpack"],
        "local": ["source", "sourceType", "computedHash", "skillpack"],
    }
    entry = make_entry(candidate(local), lock_dir=tmp_path, now="T", previous=None)
    assert entry["source"] == "./src"
    read = locked_skills({"version": 1, "skills": {"demo": entry}}, lock_dir=tmp_path)
    assert read["demo"].origin is not None and read["demo"].origin.source == str(tmp_path / "src")


def test_an_update_keeps_the_first_install_time(tmp_path: Path) -> None:
    origin = Origin(source_type="local", source="/x", source_url="/x")
    first = make_entry(candidate(origin), lock_dir=None, now="T1", previous=None)
    previous = locked_skills({"version": 1, "skills": {"demo": first}}, lock_dir=None)["demo"]
    second = make_entry(candidate(origin), lock_dir=None, now="T2", previous=previous)
    assert (second["skillpack"]["installedAt"], second["skillpack"]["updatedAt"]) == ("T1", "T2")


@pytest.mark.parametrize(
    ("origin", "kind", "location", "ref"),
    [
        (
            Origin(
                source_type="well-known",
                source="example.com",
                source_url="https://example.com/team",
            ),
            "site",
            "https://example.com/team",
            None,
        ),
        (
            Origin(source_type="github", source="o/r", ref="v1"),
            "git",
            "https://github.com/o/r.git",
            "v1",
        ),
        (
            Origin(source_type="git", source="u", source_url="ssh://h/r.git"),
            "git",
            "ssh://h/r.git",
            None,
        ),
        (
            Origin(source_type="archive", source="/x.zip", source_url="/x.zip"),
            "archive",
            "/x.zip",
            None,
        ),
    ],
)
def test_a_lock_entry_is_re_resolved_from_the_source_it_records(
    origin: Origin, kind: str, location: str, ref: str | None
) -> None:
    from skillpack.install._installer import source_of

    source = source_of(origin)
    assert (source.kind, source.location, source.ref) == (kind, location, ref)


def test_a_local_entry_whose_folder_is_gone_cannot_be_re_resolved(tmp_path: Path) -> None:
    from skillpack.install._installer import source_of

    with pytest.raises(SkillIOError, match="no longer exists"):
        source_of(Origin(source_type="local", source=str(tmp_path / "gone")))
    assert source_of(Origin(source_type="system", source="skillpack")).kind == "folder"
