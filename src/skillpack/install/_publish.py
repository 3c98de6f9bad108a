"""`publish`: a folder of skills as a well-known tree that any static web server serves.

    <out>/.well-known/agent-skills/index.json          the discovery 0.2.0 index
    <out>/.well-known/agent-skills/<name>/<path>       every file, for file-by-file clients
    <out>/.well-known/agent-skills/<name>.tar.gz       the archive of a multi-file skill

A skill that is only a SKILL.md gets a `skill-md` entry (`url: <name>/SKILL.md`);
any other an `archive` entry with a reproducible `.tar.gz`. Each entry also lists
`files: [{path, digest}]` and the draft's `skillDigest`; clients that do not know
them ignore them (the `skills` npm CLI does), skillpack verifies them.

Nothing is written unless every skill passes strict validation and fits the rules
that the `skills` npm CLI enforces (name, description length, digest form) and the
draft's path rules (printable ASCII, no `\\ ? # [ ]`). The tree is built beside the
old one and swapped in with renames, so a server never serves half of it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import SkillError, UsageError
from ._archive import make_targz
from ._collect import find_skill_dirs, nested_dirs, read_folder
from ._digest import file_digests, sha256_digest, skill_digest
from ._values import Limits, Payload, Refused
from ._wellknown import INDEX_FILE, SCHEMA_V2, WELL_KNOWN_PATHS

_SAFE_PATH = re.compile(r"[\x20-\x7e]+")
_UNSAFE_CHARS = set("\\?#[]")


@dataclass(frozen=True, kw_only=True, slots=True)
class PublishedSkill:
    name: str
    kind: str
    """`skill-md` or `archive`."""
    url: str
    """Relative to the index."""
    digest: str
    """`sha256:` of the artifact."""
    skill_digest: str
    files: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.kind,
            "url": self.url,
            "digest": self.digest,
            "skill_digest": self.skill_digest,
            "files": dict(self.files),
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class PublishReport:
    out: str
    index: str
    """Path of the written index.json."""
    skills: tuple[PublishedSkill, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "index": self.index,
            "skills": [skill.to_dict() for skill in self.skills],
        }


def publish(source_dir: str, out: str, *, limits: Limits | None = None) -> PublishReport:
    """Write the well-known tree of every skill under `source_dir` into `out`.

    Raises:
        UsageError: `source_dir` holds no skill, or two skills share a name.
        SkillError: a skill fails strict validation or breaks a publishing rule
            (nothing is written).
    """
    built = gather(source_dir, limits=limits or Limits(), what="a site")
    for name, _description, payload in built:
        _check_paths(name, payload)
    return _write_tree(Path(out).resolve(), built)


def gather(source_dir: str, *, limits: Limits, what: str) -> list[tuple[str, str, Payload]]:
    """`(name, description, payload)` of every skill under `source_dir`, by name.

    Raises:
        UsageError: no skill, or two skills share a name (`what` can publish one).
        SkillError: a skill fails strict validation or cannot be read.
    """
    source = os.path.abspath(source_dir)
    if not os.path.isdir(source):
        raise UsageError(f"{source} is not a folder of skills.")
    found, failed = find_skill_dirs(source)
    if failed:
        problems = tuple(p for failure in failed for p in failure.problems)
        listing = "; ".join(f"{f.relpath}: {p.code}" for f in failed for p in f.problems)
        raise SkillError(
            f"{len(failed)} skill(s) under {source} fail strict validation ({listing}); "
            "nothing was published. Run `skillpack validate --strict` on them.",
            problems=problems,
        )
    if not found:
        raise UsageError(f"No skills (folders with a SKILL.md) under {source}.")
    names: dict[str, str] = {}
    for skill in found:
        if skill.name in names:
            raise UsageError(
                f"Two skills are named '{skill.name}' ({names[skill.name]} and "
                f"{skill.relpath}); {what} can publish one skill per name."
            )
        names[skill.name] = skill.relpath
    built: list[tuple[str, str, Payload]] = []
    for skill in sorted(found, key=lambda s: s.name):
        try:
            payload = read_folder(
                skill.dir, limits=limits, exclude=nested_dirs(skill, found), label=skill.relpath
            )
        except Refused as refused:
            raise SkillError(f"Cannot publish {skill.name}: {refused.message}") from None
        built.append((skill.name, skill.description, payload))
    return built


def _check_paths(name: str, payload: Payload) -> None:
    for path in payload.files:
        if not _SAFE_PATH.fullmatch(path) or _UNSAFE_CHARS & set(path):
            raise SkillError(
                f"Cannot publish {name}: the file name {path!r} is not printable ASCII or "
                "holds one of \\ ? # [ ] (the discovery draft's rule for paths served over "
                "HTTP). Rename the file."
            )


def _write_tree(out: Path, built: list[tuple[str, str, Payload]]) -> PublishReport:
    well_known = out / WELL_KNOWN_PATHS[0]
    staging = well_known.parent / f".{well_known.name}.new-{os.urandom(4).hex()}"
    entries: list[dict[str, Any]] = []
    published: list[PublishedSkill] = []
    try:
        staging.mkdir(parents=True)
        for name, description, payload in built:
            digests = file_digests(payload.files)
            for path, data in payload.files.items():
                target = staging / name / Path(*path.split("/"))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            if list(payload.files) == ["SKILL.md"]:
                kind, url, artifact = "skill-md", f"{name}/SKILL.md", payload.files["SKILL.md"]
            else:
                try:
                    artifact = make_targz(payload.files, payload.executable)
                except ValueError as error:
                    raise SkillError(
                        f"Cannot publish {name}: a path is too long for a portable tar "
                        f"archive ({error}); shorten it to 100 characters per name and 255 "
                        "in all."
                    ) from None
                kind, url = "archive", f"{name}.tar.gz"
                (staging / url).write_bytes(artifact)
            digest = sha256_digest(artifact)
            whole = skill_digest(digests)
            entries.append(
                {
                    "name": name,
                    "type": kind,
                    "description": description,
                    "url": url,
                    "digest": digest,
                    "skillDigest": whole,
                    "files": [{"path": p, "digest": d} for p, d in digests.items()],
                }
            )
            published.append(
                PublishedSkill(
                    name=name,
                    kind=kind,
                    url=url,
                    digest=digest,
                    skill_digest=whole,
                    files=digests,
                )
            )
        index = {"$schema": SCHEMA_V2, "skills": entries}
        (staging / INDEX_FILE).write_text(
            json.dumps(index, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        _swap_in(staging, well_known)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return PublishReport(out=str(out), index=str(well_known / INDEX_FILE), skills=tuple(published))


def _swap_in(staging: Path, live: Path) -> None:
    old = live.parent / f".{live.name}.old-{os.urandom(4).hex()}"
    if live.exists():
        os.rename(live, old)
    os.rename(staging, live)
    shutil.rmtree(old, ignore_errors=True)
