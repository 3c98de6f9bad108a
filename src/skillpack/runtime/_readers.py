"""Where a session reads skill content: the `SkillReader` seam and its disk default.

`SkillReader` gives a skill's body and bundled files as text (what a model reads);
`SkillContent` gives them as bytes with their digests (what a server publishes).
`FileSystemReader` is both, over `discovery._skill_files`; `discovery.MemorySkills`
and the sources of `_sources.py` are the others.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._errors import SkillNotFoundError
from .._limits import MAX_SKILL_FILE_BYTES
from .._model import Skill, SkillFile

if TYPE_CHECKING:
    from ..index._digests import FrontmatterStore


class SkillReader(Protocol):
    """Where a session reads skill bodies and bundled files from (the I/O seam).

    The default reads the filesystem; tests and hosts with skills in memory pass
    their own.
    """

    def read_body(self, skill: Skill) -> str:
        """The body as it is now, checked to still parse (`parse._frontmatter.
        loadable_body`); a `SkillParseError` when it no longer does."""
        ...

    def version(self, skill: Skill) -> tuple[int, ...]:
        """The SKILL.md's version now, `(mtime_ns, size, ...)`: any difference from an
        earlier answer means the file changed (the filesystem adds `ctime_ns`)."""
        ...

    def list_files(self, skill: Skill) -> tuple[tuple[str, ...], bool]: ...

    def read_file(self, skill: Skill, relpath: str) -> str: ...


@runtime_checkable
class SkillContent(Protocol):
    """A reader's raw side: a skill's files as bytes with their digests (what servers
    publish). Readers that serve skills to other programs implement it too."""

    def manifest(
        self, skill: Skill, *, max_files: int, max_bytes: int
    ) -> tuple[tuple[SkillFile, ...], bool]:
        """Every file the skill serves: its SKILL.md first, nested skills' files included.

        Digests are computed for the files within the first `max_bytes` bytes (in
        listing order); a file past them has digest `""`. Returns the files and
        whether the listing stopped at `max_files`.
        """
        ...

    def read_bytes(self, skill: Skill, relpath: str, *, max_bytes: int) -> bytes:
        """One file's bytes (confined to the skill, at most `max_bytes`)."""
        ...


class FileSystemReader:
    """The default `SkillReader`: the filesystem, through `_skill_files.py`."""

    def __init__(self, *, index: str | None = None, persist: bool = False) -> None:
        """Args:
        index: The index file digests are kept in (default: the user's).
        persist: Keep file digests in the index across processes (`manifest`).
        """
        self._digests: Any = None
        self._digests_lock = threading.Lock()
        self._index = index
        self._persist = persist
        self._frontmatters: FrontmatterStore | None = None

    def read_body(self, skill: Skill) -> str:
        from ..discovery._skill_files import read_body

        return read_body(skill)

    def read_body_head(self, skill: Skill, max_chars: int) -> str:
        """`read_body(skill)[:max_chars]` from a bounded read (what search indexes)."""
        from ..discovery._skill_files import read_body_head

        return read_body_head(skill, max_chars)

    def read_source(self, skill: Skill) -> bytes:
        """The SKILL.md's bytes as they are now (for its digest)."""
        from ..discovery._load import read_bytes

        return read_bytes(skill.path, MAX_SKILL_FILE_BYTES)

    def version(self, skill: Skill) -> tuple[int, ...]:
        from ..discovery._skill_files import skill_version

        return skill_version(skill)

    def list_files(self, skill: Skill) -> tuple[tuple[str, ...], bool]:
        from ..discovery._skill_files import list_skill_files

        return list_skill_files(skill)

    def read_file(self, skill: Skill, relpath: str) -> str:
        from ..discovery._skill_files import read_skill_file

        return read_skill_file(skill, relpath)

    def manifest(
        self, skill: Skill, *, max_files: int, max_bytes: int
    ) -> tuple[tuple[SkillFile, ...], bool]:
        from ..discovery._skill_files import DigestCache, skill_tree

        with self._digests_lock:
            if self._digests is None:
                store = None
                if self._persist:
                    from ..index._digests import DigestStore

                    store = DigestStore(self._index)
                self._digests = DigestCache(store=store)
            digests: DigestCache = self._digests
        tree, truncated = skill_tree(skill, max_files=max_files)
        files: list[SkillFile] = []
        total = 0
        for item in tree:
            total += item.size
            if total > max_bytes:
                files.append(SkillFile(path=item.path, size=item.size, digest=""))
                continue
            try:
                files.append(digests.file(skill, item, max_bytes=max_bytes))
            except SkillNotFoundError:
                continue  # deleted since the listing: not a file of the skill any more
        return tuple(files), truncated

    def frontmatter_store(self) -> FrontmatterStore | None:
        """Where parsed frontmatters are kept across processes (the index file, when
        this reader keeps digests there), else None."""
        if not self._persist:
            return None
        with self._digests_lock:
            if self._frontmatters is None:
                from ..index._digests import FrontmatterStore

                self._frontmatters = FrontmatterStore(self._index)
            return self._frontmatters

    def close(self) -> None:
        """Write the digests and frontmatters not yet kept in the index; the reader
        stays usable."""
        with self._digests_lock:
            digests, frontmatters = self._digests, self._frontmatters
        if digests is not None and digests.store is not None:
            digests.store.close()
        if frontmatters is not None:
            frontmatters.close()

    def read_bytes(self, skill: Skill, relpath: str, *, max_bytes: int) -> bytes:
        from ..discovery._skill_files import read_skill_bytes

        return read_skill_bytes(skill, relpath, max_bytes=max_bytes)
