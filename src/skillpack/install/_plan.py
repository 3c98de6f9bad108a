"""Plans: what an install or update would change, decided against the lock and the disk.

For each candidate: a skill not in the lock and not on disk is an `install`; one in
the lock from the same source is an `update`, or `unchanged` when the disk already
holds exactly its files. Refused instead: a name in the lock from another source or
a folder no lock entry records (`name-collision`), and a skill whose files were
edited since they were installed (`locally-modified`): installs never overwrite a
user's edits.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._collect import read_folder
from ._digest import computed_hash, file_digests, skill_digest
from ._lockfile import LockedSkill
from ._txn import Target
from ._values import Candidate, Limits, Refusal, Refused

Action = Literal["install", "update"]


@dataclass(frozen=True, kw_only=True, slots=True)
class FileChanges:
    """How an update changes a skill's files (by per-file digest)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, list[str]]:
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanItem:
    """One skill to write."""

    candidate: Candidate
    action: Action
    previous_digest: str | None = None
    """The installed version's skill digest (updates)."""
    changes: FileChanges | None = None
    """File-level changes, when the installed version's files are known."""
    previous_source: str | None = None
    """The installed version's source, when it differs (an OCI tag that moved shows
    `…@old-digest`)."""

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.candidate.name, self.action, self.previous_digest)

    @property
    def signature(self) -> str | None:
        """Where the signature that verified this skill's artifact was found (OCI with
        `--verify-key`), else None."""
        oci = self.candidate.origin.oci
        return oci.signature if oci is not None else None

    def to_dict(self) -> dict[str, Any]:
        candidate = self.candidate
        return {
            "name": candidate.name,
            "action": self.action,
            "source": candidate.origin.label(),
            "source_type": candidate.origin.source_type,
            "skill_digest": candidate.skill_digest,
            "previous_digest": self.previous_digest,
            "previous_source": self.previous_source,
            "signature": self.signature,
            "changes": None if self.changes is None else self.changes.to_dict(),
            "summary": candidate.summary.to_dict(),
            "findings": [finding.to_dict() for finding in candidate.findings],
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Plan:
    """What would be written, what is already current, what is refused."""

    scope: str
    skills_dir: str
    items: tuple[PlanItem, ...] = ()
    unchanged: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "skills_dir": self.skills_dir,
            "items": [item.to_dict() for item in self.items],
            "unchanged": list(self.unchanged),
            "refused": [refusal.to_dict() for refusal in self.refusals],
            "warnings": list(self.warnings),
        }


def make_plan(
    target: Target,
    candidates: tuple[Candidate, ...],
    locked: Mapping[str, LockedSkill],
    *,
    limits: Limits,
) -> tuple[list[PlanItem], list[str], list[Refusal]]:
    """Items to write, names already current, and refusals, for `candidates`."""
    items: list[PlanItem] = []
    unchanged: list[str] = []
    refusals: list[Refusal] = []
    for candidate in candidates:
        name = candidate.name
        live = target.skills_dir / name
        previous = locked.get(name)
        if previous is None:
            if os.path.lexists(live):
                refusals.append(_collision_untracked(name, str(live)))
            else:
                items.append(PlanItem(candidate=candidate, action="install"))
            continue
        if previous.origin is None or not previous.origin.same_source(candidate.origin):
            refusals.append(_collision_source(name, previous, candidate))
            continue
        if not os.path.lexists(live):
            items.append(
                PlanItem(
                    candidate=candidate, action="install", previous_digest=previous.skill_digest
                )
            )
            continue
        state = disk_state(live, limits=limits)
        if state is not None and state[1] == candidate.skill_digest:
            unchanged.append(name)
            continue
        if state is None or not matches_lock(previous, state[0]):
            refusals.append(
                Refusal(
                    name=name,
                    code="locally-modified",
                    message=f"{name}: the files in {live} were changed since they were "
                    "installed, so they are not overwritten. Keep your copy, or discard it "
                    f"with `skillpack remove {name}` and install again.",
                )
            )
            continue
        items.append(
            PlanItem(
                candidate=candidate,
                action="update",
                previous_digest=previous.skill_digest or state[1],
                changes=_changes(state[0], candidate.file_digests),
                previous_source=_moved(previous, candidate),
            )
        )
    return items, unchanged, refusals


def disk_state(
    folder: os.PathLike[str] | str, *, limits: Limits
) -> tuple[dict[str, bytes], str] | None:
    """(files, skill digest) of an installed folder; None when it cannot be read."""
    try:
        payload = read_folder(os.fspath(folder), limits=limits)
    except Refused:
        return None
    files = dict(payload.files)
    return files, skill_digest(file_digests(files))


def matches_lock(previous: LockedSkill, files: Mapping[str, bytes]) -> bool:
    """True when `files` are what the lock entry recorded (skillpack's per-file
    digests, else the `skills` npm CLI's computedHash; an entry with neither is
    trusted)."""
    if previous.file_digests is not None:
        return file_digests(files) == dict(previous.file_digests)
    if previous.computed_hash is not None:
        return computed_hash(files) == previous.computed_hash
    return True


def _changes(files: Mapping[str, bytes], new: Mapping[str, str]) -> FileChanges:
    old = file_digests(files)
    return FileChanges(
        added=tuple(sorted(set(new) - set(old))),
        removed=tuple(sorted(set(old) - set(new))),
        changed=tuple(sorted(p for p in set(old) & set(new) if old[p] != new[p])),
    )


def _collision_untracked(name: str, live: str) -> Refusal:
    return Refusal(
        name=name,
        code="name-collision",
        message=f"{name}: {live} already exists and no lock entry records it (installed by "
        "hand?). Move it away or delete it, then install again.",
    )


def _collision_source(name: str, previous: LockedSkill, candidate: Candidate) -> Refusal:
    theirs = previous.origin.label() if previous.origin else str(previous.entry.get("source"))
    return Refusal(
        name=name,
        code="name-collision",
        message=f"{name} is already installed from {theirs}; refusing to replace it with the "
        f"skill of the same name from {candidate.origin.label()}. Run `skillpack remove "
        f"{name}` first if you want to switch sources.",
    )


def _moved(previous: LockedSkill, candidate: Candidate) -> str | None:
    before = previous.origin.label() if previous.origin is not None else None
    return before if before != candidate.origin.label() else None
