"""Skill folders on disk (a checkout, an unpacked archive, a local folder) as payloads.

`find_skill_dirs` uses discovery with one explicit root, so a source's skills are
found by the same rules as everywhere else (depth, hidden and noise folders,
nested skills, strict validation). `read_folder` reads one skill folder into
memory, confined: a symlink is followed only when it stays inside the folder, a
special file is refused, `.git`, `node_modules` and `__pycache__` are left out, as
are nested skill folders (they are skills of their own), and the `Limits` apply.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from dataclasses import dataclass

from .._model import Problem, Root
from ._audit import Finding, audit_files
from ._values import Limits, Payload, Refused

SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__"})
"""Never part of an installed skill."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FoundSkill:
    """A skill folder found under a source root."""

    name: str
    description: str
    dir: str
    relpath: str
    """The SKILL.md's path relative to the source root (POSIX)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FailedSkill:
    """A SKILL.md under a source root that does not pass strict validation."""

    name: str
    """The folder's name (the skill could not be read far enough for its own)."""
    relpath: str
    problems: tuple[Problem, ...]


def find_skill_dirs(
    root: str, *, strict: bool = True
) -> tuple[tuple[FoundSkill, ...], tuple[FailedSkill, ...]]:
    """The skills under `root` (strictly validated by default), and the SKILL.md files
    that failed."""
    from ..discovery._discover import discover

    catalog = discover(
        roots=[Root(path=root, scope="extra", follow_symlinks=False)],
        strict=strict,
        use_cache=False,
    )
    found = tuple(
        FoundSkill(
            name=skill.name,
            description=skill.description,
            dir=skill.dir,
            relpath=os.path.relpath(skill.path, root).replace(os.sep, "/"),
        )
        for skill in catalog.skills
    )
    by_file: dict[str, list[Problem]] = {}
    for problem in catalog.problems:
        if problem.severity == "error" and problem.path.endswith("SKILL.md"):
            by_file.setdefault(problem.path, []).append(problem)
    failed = tuple(
        FailedSkill(
            name=os.path.basename(os.path.dirname(path)),
            relpath=os.path.relpath(path, root).replace(os.sep, "/"),
            problems=tuple(problems),
        )
        for path, problems in sorted(by_file.items())
    )
    return found, failed


def read_folder(
    folder: str, *, limits: Limits, exclude: Collection[str] = (), label: str | None = None
) -> Payload:
    """Every file of the skill folder `folder`, in memory.

    Args:
        folder: The skill folder.
        limits: File-count and byte caps.
        exclude: Absolute folders to leave out (nested skills).
        label: How messages name the folder (default: its path).

    Raises:
        Refused: `unsafe-entry` (a link leaving the folder, a special file) or
            `too-large`.
    """
    label = label or folder
    top = os.path.realpath(folder)
    excluded = {os.path.realpath(path) for path in exclude}
    files: dict[str, bytes] = {}
    executable: set[str] = set()
    total = 0
    pending: list[tuple[str, str]] = [(folder, "")]
    visited = {top}
    while pending:
        current, prefix = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as error:
            raise Refused(
                "unreadable",
                f"Cannot list {current} ({error.strerror or error}); check its permissions.",
            ) from None
        for entry in entries:
            rel = prefix + entry.name
            path = entry.path
            real = os.path.realpath(path)
            if entry.is_symlink() and not (real == top or real.startswith(top + os.sep)):
                raise Refused(
                    "unsafe-entry",
                    f"{label}: {rel} is a symlink to {real}, outside the skill folder; "
                    "replace it with the file itself.",
                )
            try:
                info = os.stat(path)
            except OSError:
                raise Refused(
                    "unsafe-entry", f"{label}: {rel} is a broken symlink; remove it."
                ) from None
            if stat.S_ISDIR(info.st_mode):
                if entry.name in SKIPPED_DIRS or real in excluded or real in visited:
                    continue
                visited.add(real)
                pending.append((path, rel + "/"))
                continue
            if not stat.S_ISREG(info.st_mode):
                raise Refused(
                    "unsafe-entry",
                    f"{label}: {rel} is not a regular file (a device, socket or FIFO); "
                    "a skill may only hold files and folders.",
                )
            if len(files) >= limits.max_files:
                raise Refused(
                    "too-large",
                    f"{label} has more than {limits.max_files} files; a skill that large is "
                    "likely a mistake (a checkout of dependencies?).",
                )
            try:
                with open(path, "rb") as handle:
                    data = handle.read(limits.max_unpacked_bytes - total + 1)
            except OSError as error:
                raise Refused(
                    "unreadable", f"Cannot read {path} ({error.strerror or error})."
                ) from None
            total += len(data)
            if total > limits.max_unpacked_bytes:
                raise Refused(
                    "too-large",
                    f"{label} holds more than {limits.max_unpacked_bytes} bytes; move large "
                    "assets out of the skill.",
                )
            files[rel] = data
            if info.st_mode & 0o111:
                executable.add(rel)
    return Payload(files=files, executable=frozenset(executable))


def nested_dirs(found: FoundSkill, others: Collection[FoundSkill]) -> list[str]:
    """Folders of other skills inside `found`'s folder."""
    prefix = found.dir + os.sep
    return [other.dir for other in others if other.dir.startswith(prefix)]


def audit_folder(
    folder: str, *, limits: Limits | None = None, exclude: Collection[str] = ()
) -> tuple[Finding, ...]:
    """The audit of one skill folder's files (`exclude`: nested skill folders).

    Raises:
        Refused: the folder cannot be read safely (see `read_folder`).
    """
    payload = read_folder(folder, limits=limits or Limits(), exclude=exclude)
    return audit_files(payload.files)


def audit_tree(
    path: str, *, limits: Limits | None = None
) -> list[tuple[str, str, tuple[Finding, ...]]]:
    """(name, folder, findings) of the skill at `path`, or of every skill under it
    (found leniently: the audit is for skills that may not validate).

    Raises:
        Refused: a folder cannot be read safely.
    """
    if os.path.isfile(os.path.join(path, "SKILL.md")):
        return [(os.path.basename(os.path.abspath(path)), path, audit_folder(path, limits=limits))]
    found, failed = find_skill_dirs(path, strict=False)
    results = [
        (
            skill.name,
            skill.dir,
            audit_folder(skill.dir, limits=limits, exclude=nested_dirs(skill, found)),
        )
        for skill in found
    ]
    for failure in failed:
        folder = os.path.dirname(os.path.join(path, failure.relpath))
        results.append((failure.name, folder, audit_folder(folder, limits=limits)))
    return sorted(results)
