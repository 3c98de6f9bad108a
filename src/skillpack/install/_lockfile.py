"""The lock file: what is installed in a scope, from where, with which digests.

One format for both scopes, the `skills` npm CLI's `skills-lock.json`:

    {"version": 1, "skills": {"<name>": {source, sourceUrl?, ref?, sourceType,
                                          skillPath?, computedHash, wellKnownDigest?,
                                          "skillpack": {...}}}}

- **project** scope: `<project root>/skills-lock.json`, the very file that CLI
  reads and writes, so a project can switch tools either way;
- **user** scope: `~/.agents/.skillpack-lock.json` (that CLI keeps its own global
  lock in another format; skillpack does not write it).

skillpack's own data lives in one `skillpack` object inside each entry (that CLI
keeps unknown per-entry fields on entries it does not reinstall, and drops unknown
top-level keys): `skillDigest` and per-file `files` digests, `installedAt`,
`updatedAt`, and what the source resolved to (`commit`, `indexUrl`, `artifactUrl`,
`artifactDigest`, `version` of skillpack for bundled skills; for an OCI artifact
`oci`: reference, registry, repository, tag, manifestDigest, format, subPath).
Entries skillpack does not understand are kept untouched. An entry without the
`skillpack` object (installed by that CLI) is still checked and updated, through `computedHash` and
`wellKnownDigest`.

Writes are whole-file atomic replacements (`write_atomic`), skills sorted by name,
two-space JSON with a final newline, as that CLI writes them. A lock file that is
not valid is never overwritten: the error says to fix or remove it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import SkillIOError
from ._digest import computed_hash
from ._kinds import lock_types
from ._values import Candidate, OciPin, Origin, SourceType

LOCK_VERSION = 1
PROJECT_LOCK_NAME = "skills-lock.json"
USER_LOCK_NAME = ".skillpack-lock.json"
OURS = "skillpack"
"""The key of skillpack's object inside each entry."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LockedSkill:
    """One lock entry, read."""

    name: str
    entry: Mapping[str, Any]
    """The raw entry, as stored."""
    origin: Origin | None
    """Its provenance; None when the entry's `sourceType` is not one skillpack reads."""
    file_digests: Mapping[str, str] | None
    """Per-file digests recorded by skillpack (None for entries from other tools)."""
    skill_digest: str | None
    computed_hash: str | None

    @property
    def ours(self) -> Mapping[str, Any]:
        value = self.entry.get(OURS)
        return value if isinstance(value, Mapping) else {}


def read_lock(path: Path) -> dict[str, Any]:
    """The lock document at `path` (an empty one when the file does not exist).

    Raises:
        SkillIOError: unreadable, not JSON, or not a version >= 1 lock; the message
            says to fix or remove it (it is never overwritten).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"version": LOCK_VERSION, "skills": {}}
    except (OSError, UnicodeDecodeError) as error:
        raise SkillIOError(f"Cannot read the lock file {path} ({error}).") from None
    try:
        document = json.loads(text)
    except ValueError as error:
        raise _invalid(path, f"not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise _invalid(path, "not a JSON object")
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < LOCK_VERSION:
        raise _invalid(path, f"its version is {version!r}, not a number >= 1")
    if not isinstance(document.get("skills"), dict):
        raise _invalid(path, "it has no `skills` object")
    return document


def _invalid(path: Path, why: str) -> SkillIOError:
    return SkillIOError(
        f"The lock file {path} is {why}; skillpack will not overwrite it. Fix it or move it "
        "away (then `skillpack doctor` lists the skills it no longer records)."
    )


def write_lock(path: Path, document: Mapping[str, Any]) -> None:
    """Replace the lock file atomically, skills sorted by name."""
    from ..config._atomic import write_atomic

    skills = document.get("skills", {})
    ordered = {name: skills[name] for name in sorted(skills, key=_js_order)}
    data = {"version": document.get("version", LOCK_VERSION), **document, "skills": ordered}
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _js_order(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")


def locked_skills(document: Mapping[str, Any], *, lock_dir: Path | None) -> dict[str, LockedSkill]:
    """Every entry of a lock document, read (entries that are not objects are left out)."""
    result: dict[str, LockedSkill] = {}
    for name, entry in document.get("skills", {}).items():
        if not isinstance(entry, dict):
            continue
        raw = entry.get(OURS)
        ours: dict[str, Any] = raw if isinstance(raw, dict) else {}
        files = ours.get("files")
        result[name] = LockedSkill(
            name=name,
            entry=entry,
            origin=_origin(entry, ours, lock_dir),
            file_digests=dict(files) if isinstance(files, dict) else None,
            skill_digest=_str(ours.get("skillDigest")),
            computed_hash=_str(entry.get("computedHash")),
        )
    return result


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _origin(
    entry: Mapping[str, Any], ours: Mapping[str, Any], lock_dir: Path | None
) -> Origin | None:
    source_type = entry.get("sourceType")
    source = entry.get("source")
    # Every registered kind's sourceType is read back, and the npm CLI's `gitlab`.
    if source_type not in lock_types() | {"gitlab"} or not isinstance(source, str):
        return None
    kind: SourceType = "git" if source_type == "gitlab" else source_type
    source_url = _str(entry.get("sourceUrl"))
    if kind in ("local", "archive") and "://" not in source:
        if lock_dir is not None and not os.path.isabs(source):
            source = os.path.normpath(os.path.join(lock_dir, source))
        source_url = source
    return Origin(
        source_type=kind,
        source=source,
        source_url=source_url,
        ref=_str(entry.get("ref")),
        skill_path=_str(entry.get("skillPath")),
        commit=_str(ours.get("commit")),
        index_url=_str(ours.get("indexUrl")),
        artifact_url=_str(ours.get("artifactUrl")),
        artifact_digest=_str(ours.get("artifactDigest")),
        well_known_digest=_str(entry.get("wellKnownDigest")),
        oci=_oci_pin(ours.get("oci")) if kind == "oci" else None,
    )


def _oci_pin(value: Any) -> OciPin | None:
    if not isinstance(value, dict):
        return None
    fields = ("registry", "repository", "manifestDigest")
    registry, repository, digest = (_str(value.get(key)) for key in fields)
    if registry is None or repository is None or digest is None:
        return None
    return OciPin(
        reference=_str(value.get("reference")) or f"oci://{registry}/{repository}@{digest}",
        registry=registry,
        repository=repository,
        tag=_str(value.get("tag")),
        digest=digest,
        format=_str(value.get("format")) or "agentskills",
        sub_path=_str(value.get("subPath")) or "",
        insecure=value.get("insecure") is True,
        signature=_str(value.get("signature")),
    )


def make_entry(
    candidate: Candidate,
    *,
    lock_dir: Path | None,
    now: str,
    previous: LockedSkill | None,
    version: str | None = None,
) -> dict[str, Any]:
    """The lock entry for an installed candidate, fields in the order that CLI writes.

    `lock_dir` (project scope) makes local paths relative to it, as that CLI stores
    them; `previous` keeps the first `installedAt`; `version` records the skillpack
    version for bundled skills.
    """
    origin = candidate.origin
    entry: dict[str, Any] = {"source": _portable(origin, lock_dir)}
    local_archive = origin.source_type == "archive" and "://" not in origin.source
    if origin.source_url and origin.source_type not in ("local", "github", "system"):
        entry["sourceUrl"] = origin.source if local_archive else origin.source_url
    if origin.ref:
        entry["ref"] = origin.ref
    entry["sourceType"] = origin.source_type
    if origin.skill_path and origin.source_type in ("github", "git", "archive", "oci"):
        entry["skillPath"] = origin.skill_path
    entry["computedHash"] = computed_hash(candidate.payload.files)
    if origin.source_type == "well-known" and origin.well_known_digest:
        entry["wellKnownDigest"] = origin.well_known_digest
    ours: dict[str, Any] = {
        "skillDigest": candidate.skill_digest,
        "files": dict(candidate.file_digests),
    }
    for key, value in (
        ("commit", origin.commit),
        ("indexUrl", origin.index_url),
        ("artifactUrl", origin.artifact_url),
        ("artifactDigest", origin.artifact_digest),
        ("version", version),
    ):
        if value:
            ours[key] = value
    if origin.oci is not None:
        ours["oci"] = origin.oci.to_dict()
    installed = previous.ours.get("installedAt") if previous is not None else None
    ours["installedAt"] = installed if isinstance(installed, str) else now
    ours["updatedAt"] = now
    entry[OURS] = ours
    return entry


def _portable(origin: Origin, lock_dir: Path | None) -> str:
    """A local path relative to the lock's folder (`./x`, `../x`), as that CLI writes it."""
    if origin.source_type not in ("local", "archive") or lock_dir is None:
        return origin.source
    if "://" in origin.source:
        return origin.source
    relative = os.path.relpath(origin.source, lock_dir).replace(os.sep, "/")
    if os.path.isabs(relative):
        return relative
    if relative == ".":
        return "."
    return relative if relative.startswith("../") or relative == ".." else f"./{relative}"
