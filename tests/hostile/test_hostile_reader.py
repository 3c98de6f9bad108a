"""`skill_read_file` never returns a file outside the skill
folder, even while a symlink inside it is swapped, and every `OSError` becomes a
`SkillIOError` (or the not-found / refused errors), never a raw exception."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from conftest import WriteSkill
from skillpack._errors import SkillIOError, SkillNotFoundError, SkillpackError, SkillPermissionError
from skillpack._model import Skill
from skillpack.discovery._skill_files import read_skill_file
from skillpack.parse._frontmatter import parse_skill

needs_symlinks = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")

SECRET = "SECRET: outside the skill folder\n"
INSIDE = "inside the skill folder\n"
SWAP_SECONDS = 2.0


def skill_at(folder: Path) -> Skill:
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    parsed = parse_skill(text, path=str(folder / "SKILL.md"))
    assert parsed.skill is not None
    return parsed.skill


def race(read: object, swap: object) -> tuple[int, int, int]:
    """Run `swap` in a thread while `read` is called for `SWAP_SECONDS`; return
    (reads, reads that returned the secret, reads that raised a raw `OSError`)."""
    stop = threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            swap()  # type: ignore[operator]

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    reads = leaks = raw = 0
    deadline = time.monotonic() + SWAP_SECONDS
    try:
        while time.monotonic() < deadline:
            try:
                content = read()  # type: ignore[operator]
            except SkillpackError:
                content = None
            except OSError:
                content = None
                raw += 1
            reads += 1
            leaks += content == SECRET
    finally:
        stop.set()
        thread.join()
    return reads, leaks, raw


def assert_never_leaks(skill: Skill, swap: object) -> None:
    reads, leaks, raw = race(lambda: read_skill_file(skill, "references/doc.md"), swap)
    assert reads > 100
    assert (leaks, raw) == (0, 0)


@needs_symlinks
def test_a_file_swapped_for_a_symlink_while_read_never_leaks_outside(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    folder = write_skill("skills/alpha", files={"references/doc.md": INSIDE})
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    target = folder / "references" / "doc.md"
    regular, link = folder / "references" / "doc.regular", folder / "references" / "doc.link"
    skill = skill_at(folder)

    def swap() -> None:
        regular.write_text(INSIDE, encoding="utf-8")
        os.replace(regular, target)
        os.symlink(secret, link)
        os.replace(link, target)

    assert_never_leaks(skill, swap)


@needs_symlinks
def test_a_folder_swapped_for_a_symlink_while_read_never_leaks_outside(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    folder = write_skill("skills/alpha", files={"references/doc.md": INSIDE})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "doc.md").write_text(SECRET, encoding="utf-8")
    real = folder / "references"
    parked, link = folder / "refs-real", folder / "refs-link"

    def swap() -> None:
        os.rename(real, parked)
        os.symlink(outside, link)
        os.replace(link, real)
        os.unlink(real)
        os.rename(parked, real)

    skill = skill_at(folder)
    assert_never_leaks(skill, swap)


@needs_symlinks
def test_a_symlink_to_a_file_inside_the_folder_is_still_served(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    folder = write_skill("skills/alpha", files={"references/doc.md": INSIDE})
    os.symlink(folder / "references" / "doc.md", folder / "alias.md")
    os.symlink("references", folder / "refs")
    skill = skill_at(folder)
    assert read_skill_file(skill, "alias.md") == INSIDE
    assert read_skill_file(skill, "refs/doc.md") == INSIDE


@needs_symlinks
def test_a_symlink_leaving_the_folder_is_refused(tmp_path: Path, write_skill: WriteSkill) -> None:
    folder = write_skill("skills/alpha")
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    os.symlink(secret, folder / "leak.md")
    with pytest.raises(SkillPermissionError):
        read_skill_file(skill_at(folder), "leak.md")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_the_folder_is_not_found_not_a_hang(write_skill: WriteSkill) -> None:
    folder = write_skill("skills/alpha")
    os.mkfifo(folder / "pipe.md")
    with pytest.raises(SkillNotFoundError):
        read_skill_file(skill_at(folder), "pipe.md")


@pytest.mark.parametrize(
    "relpath",
    ["a" * 5000, "/".join(["d"] * 3000), "x/" * 200 + "y", "name\udcff.md", "ok/" + "é" * 300],
    ids=["long name", "deep path", "many parts", "surrogate", "long part"],
)
def test_any_oserror_becomes_a_skillpack_error(write_skill: WriteSkill, relpath: str) -> None:
    skill = skill_at(write_skill("skills/alpha"))
    with pytest.raises((SkillIOError, SkillNotFoundError, SkillPermissionError)):
        read_skill_file(skill, relpath)


def test_a_skill_folder_that_is_gone_is_not_found(tmp_path: Path, write_skill: WriteSkill) -> None:
    folder = write_skill("skills/alpha", files={"references/doc.md": INSIDE})
    skill = skill_at(folder)
    os.rename(folder, tmp_path / "moved")
    with pytest.raises(SkillNotFoundError):
        read_skill_file(skill, "references/doc.md")


def test_a_path_over_the_limit_is_refused_by_disk_and_memory_readers(
    write_skill: WriteSkill,
) -> None:
    from skillpack.discovery._memory import MemorySkills

    memory = MemorySkills({"/m/alpha/SKILL.md": "---\ndescription: d\n---\nbody\n"})
    cases = [
        (read_skill_file, skill_at(write_skill("skills/alpha"))),
        (memory.read_file, memory.catalog().skills[0]),
    ]
    for read, skill in cases:
        with pytest.raises(SkillPermissionError, match="over 4096 characters"):
            read(skill, "a/" * 500_000)
