"""`doctor`: the lock file against the disk, per scope.

For each lock entry: `ok`, `missing` (no folder), or `modified` with the files
changed, missing and extra against skillpack's per-file digests (an entry written by
the `skills` npm CLI has only its `computedHash`, so only "modified" is known). Each
folder of the skills folder that holds a SKILL.md and no lock entry records is
`untracked`. An interrupted transaction is finished first (see `_txn.recover`) and
reported. Anything but `ok` is drift.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from ._collect import read_folder
from ._digest import computed_hash, file_digests
from ._lockfile import LockedSkill, locked_skills, read_lock
from ._txn import Target, recover, target_for
from ._values import InstallScope, Limits, Refused

Status = Literal["ok", "modified", "missing", "untracked"]


@dataclass(frozen=True, kw_only=True, slots=True)
class DoctorEntry:
    name: str
    status: Status
    source: str | None = None
    modified: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    detail: str = ""
    """Why, in words."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "source": self.source,
            "modified_files": list(self.modified),
            "missing_files": list(self.missing),
            "extra_files": list(self.extra),
            "detail": self.detail,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class DoctorReport:
    scope: str
    skills_dir: str
    lock: str
    entries: tuple[DoctorEntry, ...]
    recovered: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return all(entry.status == "ok" for entry in self.entries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "skills_dir": self.skills_dir,
            "lock": self.lock,
            "clean": self.clean,
            "skills": [entry.to_dict() for entry in self.entries],
            "recovered": list(self.recovered),
        }


def doctor(
    *, scope: InstallScope = "user", cwd: str | None = None, limits: Limits | None = None
) -> DoctorReport:
    """Compare the scope's lock file with its skills folder (see the module docstring)."""
    limits = limits or Limits()
    target = target_for(scope, cwd=cwd)
    recovered: list[str] = []
    if target.skills_dir.is_dir():
        with target.locked():
            recovered = recover(target)
    locked = locked_skills(read_lock(target.lock_path), lock_dir=target.lock_dir)
    entries = [_check(target, skill, limits) for skill in locked.values()]
    entries.extend(_untracked(target, locked))
    return DoctorReport(
        scope=target.scope,
        skills_dir=str(target.skills_dir),
        lock=str(target.lock_path),
        entries=tuple(sorted(entries, key=lambda e: e.name)),
        recovered=tuple(recovered),
    )


def _check(target: Target, skill: LockedSkill, limits: Limits) -> DoctorEntry:
    source = skill.origin.label() if skill.origin else None
    folder = target.skills_dir / skill.name
    if not folder.is_dir():
        pin = skill.origin.oci if skill.origin else None
        how = f"with `skillpack install {pin.pinned()}`" if pin else ""
        return DoctorEntry(
            name=skill.name,
            status="missing",
            source=source,
            detail=f"{folder} does not exist; reinstall it{' ' + how if how else ''} or "
            f"`skillpack remove {skill.name}`.",
        )
    try:
        files = dict(read_folder(str(folder), limits=limits).files)
    except Refused as refused:
        return DoctorEntry(
            name=skill.name, status="modified", source=source, detail=refused.message
        )
    if skill.file_digests is not None:
        actual = file_digests(files)
        recorded = dict(skill.file_digests)
        modified = tuple(sorted(p for p in recorded if p in actual and actual[p] != recorded[p]))
        missing = tuple(sorted(set(recorded) - set(actual)))
        extra = tuple(sorted(set(actual) - set(recorded)))
        if modified or missing or extra:
            return DoctorEntry(
                name=skill.name,
                status="modified",
                source=source,
                modified=modified,
                missing=missing,
                extra=extra,
                detail="the files differ from the ones installed",
            )
    elif skill.computed_hash is not None and computed_hash(files) != skill.computed_hash:
        return DoctorEntry(
            name=skill.name,
            status="modified",
            source=source,
            detail="the files differ from the computedHash in the lock",
        )
    return DoctorEntry(name=skill.name, status="ok", source=source)


def _untracked(target: Target, locked: dict[str, LockedSkill]) -> list[DoctorEntry]:
    try:
        folders = sorted(os.scandir(target.skills_dir), key=lambda e: e.name)
    except OSError:
        return []
    return [
        DoctorEntry(
            name=entry.name,
            status="untracked",
            detail=f"{entry.path} holds a skill that the lock file does not record",
        )
        for entry in folders
        if not entry.name.startswith(".")
        and entry.name not in locked
        and os.path.isfile(os.path.join(entry.path, "SKILL.md"))
    ]
