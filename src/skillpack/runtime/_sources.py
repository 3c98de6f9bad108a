"""Skill sources beside the discovery roots: how skills held elsewhere join a catalog.

A `SkillSource` yields its own catalog (as `discovery.MemorySkills` does for skills in
memory, and `_mcp_skills.McpSkills` for skills other MCP servers publish) and reads its
own skills. `with_sources` adds such catalogs to a discovered one, resolving name
collisions over the union (one rule: `select._collisions`), and a `RoutingReader`
hands each skill to the source that owns it, every other skill to the filesystem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .._limits import MAX_SKILL_FILE_BYTES
from .._model import Catalog, Skill, SkillFile
from ..select._collisions import resolve_collisions
from ._readers import SkillContent, SkillReader

if TYPE_CHECKING:
    from ..index._digests import FrontmatterStore

COLLISION_CODES = frozenset({"name-shadowed", "name-ambiguous", "skill-dependency-missing"})
"""Problems of the whole catalog (`resolve_collisions`): worked out again when sources join."""


@runtime_checkable
class SkillSource(SkillReader, SkillContent, Protocol):
    """Skills from somewhere other than the discovery roots, and how to read them."""

    def catalog(self) -> Catalog:
        """The source's skills and problems now (collisions among them not resolved)."""
        ...

    def owns(self, skill: Skill) -> bool:
        """Whether `skill` came from this source (and so is read through it)."""
        ...

    def close(self) -> None:
        """Release what the source holds open (connections, processes); idempotent."""
        ...


def with_sources(catalog: Catalog, added: Sequence[Catalog]) -> Catalog:
    """`catalog` plus the skills, problems and roots of `added`, with shadowed and
    ambiguous names worked out again over all of them."""
    if not added:
        return catalog
    skills = [
        replace(s, shadowed_by=None) if s.shadowed_by is not None else s
        for s in (*catalog.skills, *(s for c in added for s in c.skills))
    ]
    problems = [p for p in catalog.problems if p.code not in COLLISION_CODES]
    problems += [p for c in added for p in c.problems]
    skills = resolve_collisions(skills, problems)
    roots = (*catalog.roots, *(r for c in added for r in c.roots))
    return Catalog(skills=tuple(skills), problems=tuple(problems), roots=roots)


class RoutingReader:
    """A `SkillReader` and `SkillContent`: each skill is read by the source that owns it,
    the others by `fallback` (the filesystem)."""

    def __init__(self, fallback: SkillReader, sources: Callable[[], Sequence[SkillSource]]) -> None:
        self._fallback = fallback
        self._sources = sources

    def reader_for(self, skill: Skill) -> SkillReader:
        for source in self._sources():
            if source.owns(skill):
                return source
        return self._fallback

    def _content(self, skill: Skill) -> SkillContent:
        reader = self.reader_for(skill)
        if not (hasattr(reader, "manifest") and hasattr(reader, "read_bytes")):
            from .._errors import SkillIOError

            raise SkillIOError(f"Skill '{skill.name}' cannot be read as bytes from its source.")
        return reader  # type: ignore[return-value]

    def read_body(self, skill: Skill) -> str:
        return self.reader_for(skill).read_body(skill)

    def read_body_head(self, skill: Skill, max_chars: int) -> str:
        reader = self.reader_for(skill)
        head = getattr(reader, "read_body_head", None)
        if head is not None:
            text: str = head(skill, max_chars)
            return text
        return reader.read_body(skill)[:max_chars]

    def read_source(self, skill: Skill) -> bytes:
        """The SKILL.md's bytes, from the source that owns the skill."""
        reader = self.reader_for(skill)
        read_source = getattr(reader, "read_source", None)
        if read_source is not None:
            data: bytes = read_source(skill)
            return data
        return self._content(skill).read_bytes(skill, "SKILL.md", max_bytes=MAX_SKILL_FILE_BYTES)

    def frontmatter_store(self) -> FrontmatterStore | None:
        """The fallback reader's (frontmatters are kept by content, whoever read them)."""
        store = getattr(self._fallback, "frontmatter_store", None)
        found: FrontmatterStore | None = None if store is None else store()
        return found

    def version(self, skill: Skill) -> tuple[int, ...]:
        return self.reader_for(skill).version(skill)

    def list_files(self, skill: Skill) -> tuple[tuple[str, ...], bool]:
        return self.reader_for(skill).list_files(skill)

    def read_file(self, skill: Skill, relpath: str) -> str:
        return self.reader_for(skill).read_file(skill, relpath)

    def manifest(
        self, skill: Skill, *, max_files: int, max_bytes: int
    ) -> tuple[tuple[SkillFile, ...], bool]:
        return self._content(skill).manifest(skill, max_files=max_files, max_bytes=max_bytes)

    def read_bytes(self, skill: Skill, relpath: str, *, max_bytes: int) -> bytes:
        return self._content(skill).read_bytes(skill, relpath, max_bytes=max_bytes)
