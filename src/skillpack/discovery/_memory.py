"""Skills held in memory: a catalog and a `SkillReader` without a filesystem.

The in-memory twin of the filesystem seam, for tests and for hosts that keep skills
in a database or ship them inside another package. Files are given as a mapping of
absolute POSIX paths to text; every `…/SKILL.md` is a skill, and its Codex sidecar
(`agents/openai.yaml`) is read by the disk's rule (`_walk.CODEX_SIDECARS`).
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Mapping

from .._errors import SkillNotFoundError
from .._limits import MAX_LISTED_FILES
from .._model import Catalog, Problem, Root, Scope, Skill, SkillFile, SkillLocation, sha256_digest
from ..parse._frontmatter import parse_skill
from ..parse._loadable import loadable_body
from ..select._collisions import resolve_collisions
from ._confine import SKILL_FILE, confined_parts, in_tree, listed, missing, too_large
from ._skill_files import fair_listing
from ._walk import CODEX_SIDECARS


class MemorySkills:
    """A mutable set of in-memory files that yields catalogs and reads like the disk."""

    def __init__(self, files: Mapping[str, str] | None = None, *, scope: Scope = "extra") -> None:
        self._files: dict[str, str] = {}
        self._versions: dict[str, int] = {}
        self._lock = threading.Lock()
        self.scope: Scope = scope
        for path, text in (files or {}).items():
            self.write(path, text)

    def write(self, path: str, text: str) -> None:
        """Add or change a file; a changed SKILL.md gets a new version."""
        path = posixpath.normpath(path)
        with self._lock:
            self._files[path] = text
            self._versions[path] = self._versions.get(path, 0) + 1

    def remove(self, path: str) -> None:
        with self._lock:
            self._files.pop(posixpath.normpath(path), None)

    def catalog(self, *, strict: bool = False) -> Catalog:
        """Parse every SKILL.md into a catalog (one root, scope `self.scope`)."""
        with self._lock:
            files = dict(self._files)
            versions = dict(self._versions)
        skills: list[Skill] = []
        problems: list[Problem] = []
        for path in sorted(p for p in files if posixpath.basename(p) == "SKILL.md"):
            folder = posixpath.dirname(path)
            sidecars = (posixpath.join(folder, rel) for rel in CODEX_SIDECARS)
            codex_path = next((p for p in sidecars if p in files), None)
            parsed = parse_skill(
                files[path],
                path=path,
                strict=strict,
                codex_yaml=None if codex_path is None else files[codex_path],
                codex_path=codex_path,
                location=SkillLocation(
                    scope=self.scope,
                    root="/",
                    real_path=path,
                    mtime_ns=versions[path],
                    size=len(files[path].encode("utf-8")),
                ),
            )
            problems.extend(parsed.problems)
            if parsed.skill is not None:
                skills.append(parsed.skill)
        root = Root(path="/", scope=self.scope)
        skills = resolve_collisions(skills, problems)
        return Catalog(skills=tuple(skills), problems=tuple(problems), roots=(root,))

    # -- a skill source (`runtime._sources.SkillSource`) ----------------------------

    def owns(self, skill: Skill) -> bool:
        """Whether `skill` is one of these files' skills."""
        with self._lock:
            return skill.path in self._files

    def close(self) -> None:
        """Nothing to release: the files are plain memory."""

    # -- SkillReader ------------------------------------------------------------

    def _text(self, path: str) -> str:
        with self._lock:
            text = self._files.get(path)
        if text is None:
            raise SkillNotFoundError(f"No file {path} in this in-memory skill set.")
        return text

    def read_body(self, skill: Skill) -> str:
        """The body, re-checked as the disk reader does (`loadable_body`)."""
        return loadable_body(self._text(skill.path), path=skill.path, skill_dir=skill.dir)

    def read_source(self, skill: Skill) -> bytes:
        """The SKILL.md as bytes (for its digest)."""
        return self._text(skill.path).encode("utf-8")

    def version(self, skill: Skill) -> tuple[int, ...]:
        text = self._text(skill.path)
        with self._lock:
            return self._versions.get(skill.path, 0), len(text.encode("utf-8"))

    def list_files(
        self, skill: Skill, *, max_files: int = MAX_LISTED_FILES
    ) -> tuple[tuple[str, ...], bool]:
        """The skill's files by the disk's listing rule (`_confine.listed`), sorted."""
        prefix = skill.dir.rstrip("/") + "/"
        with self._lock:
            paths = sorted(p[len(prefix) :] for p in self._files if p.startswith(prefix))
        files = [rel for rel in paths if listed(tuple(rel.split("/")))]
        return fair_listing(files, max_files), len(files) > max_files

    def manifest(
        self, skill: Skill, *, max_files: int, max_bytes: int
    ) -> tuple[tuple[SkillFile, ...], bool]:
        """Every file of the skill's folder by the disk's tree rule (`_confine.in_tree`),
        its SKILL.md first, as UTF-8 bytes with their digests (`SkillContent`)."""
        prefix = skill.dir.rstrip("/") + "/"
        with self._lock:
            texts = {p[len(prefix) :]: t for p, t in self._files.items() if p.startswith(prefix)}
        # The disk's order: SKILL.md, then breadth-first, names sorted in each folder.
        paths = sorted(
            (rel for rel in texts if in_tree(tuple(rel.split("/")))),
            key=lambda rel: (rel != SKILL_FILE, rel.count("/"), rel.split("/")),
        )
        files: list[SkillFile] = []
        total = 0
        for rel in paths[:max_files]:
            data = texts[rel].encode("utf-8")
            total += len(data)
            digest = sha256_digest(data) if total <= max_bytes else ""
            files.append(SkillFile(path=rel, size=len(data), digest=digest))
        return tuple(files), len(paths) > max_files

    def read_bytes(self, skill: Skill, relpath: str, *, max_bytes: int) -> bytes:
        """One file of the skill as UTF-8 bytes, confined like `read_file`."""
        data = self.read_file(skill, relpath).encode("utf-8")
        if len(data) > max_bytes:
            raise too_large(posixpath.join(skill.dir, relpath), len(data), max_bytes)
        return data

    def read_file(self, skill: Skill, relpath: str) -> str:
        """One file of the skill, confined by the same rule as the disk (`_confine`)."""
        parts = confined_parts(skill, relpath)
        with self._lock:
            text = self._files.get(posixpath.join(skill.dir, *parts))
        if text is None:
            raise missing(skill, parts)
        return text
