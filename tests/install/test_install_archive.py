"""Installing from archives (local and served) and local folders."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

from install_support import serve, skill_md, tree_files, write_skill

from skillpack.install import approve_all, install
from skillpack.install._values import Limits


def make_zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def make_targz(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def installed(home: Path) -> Path:
    return home / ".agents" / "skills"


def test_a_release_style_archive_with_a_wrapper_folder_and_several_skills_installs(
    tmp_path: Path, isolated_home: Path
) -> None:
    archive = make_zip(
        tmp_path / "pack.zip",
        {
            "pack-1.0/README.md": b"readme",
            "pack-1.0/skills/a/SKILL.md": skill_md("a").encode(),
            "pack-1.0/skills/b/SKILL.md": skill_md("b").encode(),
            "pack-1.0/skills/b/references/x.md": b"x",
        },
    )
    outcome = install(str(archive), all_skills=True, approve=approve_all)
    assert outcome.ok, outcome.refusals
    assert tree_files(installed(isolated_home) / "a") == {"SKILL.md": skill_md("a").encode()}
    assert tree_files(installed(isolated_home) / "b") == {
        "SKILL.md": skill_md("b").encode(),
        "references/x.md": b"x",
    }
    lock = json.loads((isolated_home / ".agents" / ".skillpack-lock.json").read_text())
    entry = lock["skills"]["b"]
    assert (entry["sourceType"], entry["skillPath"]) == ("archive", "pack-1.0/skills/b/SKILL.md")
    assert entry["skillpack"]["artifactDigest"].startswith("sha256:")


def test_an_archive_with_skill_md_at_its_root_is_one_skill_named_by_its_frontmatter(
    tmp_path: Path, isolated_home: Path
) -> None:
    archive = make_targz(
        tmp_path / "download.tar.gz",
        {"SKILL.md": skill_md("solo").encode(), "scripts/run.sh": b"#!/bin/sh\n"},
    )
    with serve(tmp_path) as server:
        outcome = install(
            f"{server.url}/download.tar.gz", approve=approve_all, limits=Limits(timeout=2.0)
        )
    assert outcome.ok and [i.candidate.name for i in outcome.written] == ["solo"]
    assert (installed(isolated_home) / "solo" / "scripts" / "run.sh").read_bytes() == b"#!/bin/sh\n"
    assert archive.exists()


def test_a_malicious_archive_given_as_source_is_refused_and_nothing_is_written(
    tmp_path: Path, isolated_home: Path
) -> None:
    archive = make_zip(
        tmp_path / "evil.zip",
        {"SKILL.md": skill_md("evil").encode(), "../../escape.sh": b"rm -rf ~\n"},
    )
    outcome = install(str(archive), approve=approve_all)
    assert [(r.code) for r in outcome.refusals] == ["unsafe-entry"]
    assert not (tmp_path.parent / "escape.sh").exists()
    assert not installed(isolated_home).exists()


def test_a_local_folder_installs_and_nested_skills_are_their_own(
    tmp_path: Path, isolated_home: Path
) -> None:
    src = tmp_path / "src"
    outer = write_skill(src, "outer", files={"notes.md": "n"})
    write_skill(outer, "inner")
    outcome = install(str(src), all_skills=True, approve=approve_all)
    assert outcome.ok
    assert tree_files(installed(isolated_home) / "outer") == {
        "SKILL.md": skill_md("outer").encode(),
        "notes.md": b"n",
    }
    assert (installed(isolated_home) / "inner" / "SKILL.md").is_file()
