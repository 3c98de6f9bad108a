"""Loading one SKILL.md the walk found: the index first, else one read and one parse.

A file the index has never seen is opened straight away and `fstat`ed there; a
known one is `stat`ed and served from the parse cache when its version matches.
The parser (`_frontmatter`, and with it YAML) is imported on the first parse only.
`read_bytes` is also the bounded read behind `_skill_files.py`.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING

from .._model import Problem, Skill, SkillLocation
from ..index._snapshot import file_version
from ._found import Found, problem

if TYPE_CHECKING:
    from ..index._cache import SkillCache


# O_NONBLOCK: a FIFO (or a device) put where a file was expected opens at once
# instead of waiting for a writer; the `fstat` after the open then refuses it.
# Reads of regular files ignore the flag.
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
)
_READ_STEP = 64 * 1024


def not_regular(path: str) -> OSError:
    """The error for a path that is not a regular file (a FIFO, a device, a folder)."""
    return OSError(errno.EINVAL, "not a regular file", path)


def read_bytes(path: str, limit: int, size: int | None = None) -> bytes:
    """Read at most `limit + 1` bytes (the extra byte detects a file over the limit).

    `size` is the file's size from an earlier `stat`; the `fstat` of the open file
    checks that it is a regular file (a FIFO or device swapped in since is refused
    with an `OSError`, never waited on). The first read asks for `min(size, limit)
    + 1` bytes, which sizes its buffer to the file: asking for `limit + 1` would
    allocate the whole limit for every file. Unless it returned exactly `size`
    bytes, reading goes on in small steps until the end of the file (a file that
    grew or shrank since the `stat`, a file system that returns short reads) or
    past the limit. `os.read` on a descriptor skips building a buffered file object
    per file.
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(path)
        return read_fd(fd, limit, st.st_size if size is None else size)
    finally:
        os.close(fd)


def read_fd(fd: int, limit: int, size: int) -> bytes:
    """`read_bytes` on an open descriptor of a regular file whose size is known."""
    data = os.read(fd, min(size, limit) + 1)
    total = len(data)
    if total == size:
        # Exactly the size it had (a file that grew would give one byte more, a
        # short read fewer): the end of the file, without one more read to see it.
        return data
    parts = [data]
    while total <= limit:
        chunk = os.read(fd, min(limit + 1 - total, _READ_STEP))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return data if len(parts) == 1 else b"".join(parts)


_PARSER: ModuleType | None = None


def _parser() -> ModuleType:
    """`_frontmatter`, imported on the first parse: a warm run never needs it.

    Held as the module, not its function, so that a replaced `parse_skill_bytes`
    (tests count parses that way) is seen; an `import` statement per file would
    cost more than a cold run spends on most of its own steps.
    """
    global _PARSER
    from ..parse import _frontmatter

    _PARSER = _frontmatter
    return _frontmatter


def _too_large(path: str, size: int, limit: int) -> Problem:
    return problem(
        path,
        "error",
        "file-too-large",
        f"{path} is {size} bytes, over the {limit}-byte limit for a SKILL.md; it was not "
        "read. Move long material into references/ files, or raise `max_file_bytes`.",
    )


def _read_skill_md(path: str, limit: int) -> tuple[os.stat_result, bytes | None]:
    """The `fstat` of an open SKILL.md and its bytes, None when over `limit` (not read).

    One open for both: on a cold run this `fstat` replaces a `stat` of the path
    in the walk, which costs more (the path is looked up again).
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return st, None
        return st, read_fd(fd, limit, st.st_size)
    finally:
        os.close(fd)


def _with_stat(item: Found, st: os.stat_result) -> Found:
    """`item` with the stat fields of `st` (a third of the cost of `_replace`)."""
    return tuple.__new__(Found, item[:5] + file_version(st) + item[9:])


def unseen(item: Found, cache: SkillCache | None) -> bool:
    """Whether `item`, from a fresh walk, is a file the index holds no parse of: it is
    opened and read straight away, with no `stat` first (`load_skill_md`)."""
    return item.mtime_ns < 0 and (cache is None or not cache.knows(item.real_path))


def load_skill_md(
    item: Found,
    *,
    cache: SkillCache | None,
    strict: bool,
    max_file_bytes: int,
) -> tuple[Found | None, Skill | None, tuple[Problem, ...]]:
    """Load one SKILL.md: the item with its stat fields, its skill (None when not loaded)
    and its problems; the item is None when the file is gone or no longer a regular file.

    An item from a fresh walk has no stat yet (`mtime_ns` < 0): a file the index
    has never seen is opened straight away and `fstat`ed there, so a cold run
    costs no `stat` per file; a known one is `stat`ed first to try the index.
    """
    if item.mtime_ns < 0 and not unseen(item, cache):
        try:
            st = os.stat(item.path)
        except OSError:
            return None, None, ()
        if not stat.S_ISREG(st.st_mode):
            return None, None, ()
        item = _with_stat(item, st)
    if item.mtime_ns >= 0:
        if item.size > max_file_bytes:
            return item, None, (_too_large(item.path, item.size, max_file_bytes),)
        if cache is not None:
            key = (
                item.real_path,
                item.path,
                item.mtime_ns,
                item.size,
                item.ino,
                item.ctime_ns,
                item.codex_sig,
            )
            hit = cache.lookup(key)
            if hit is not None:
                skill = _relocate(hit.skill, item) if hit.skill is not None else None
                return item, skill, hit.problems
    try:
        st, data = _read_skill_md(item.path, max_file_bytes)
    except (FileNotFoundError, NotADirectoryError):
        return None, None, ()  # removed since the walk saw it
    except OSError as exc:
        unreadable = problem(
            item.path,
            "error",
            "file-unreadable",
            f"Cannot read {item.path}: {exc.strerror or exc}. The skill was not loaded; "
            "check the file's permissions (chmod u+r).",
        )
        return item, None, (unreadable,)
    if not stat.S_ISREG(st.st_mode):
        return None, None, ()
    item = _with_stat(item, st)
    if data is None or len(data) > max_file_bytes:
        size = st.st_size if data is None else len(data)
        return item, None, (_too_large(item.path, size, max_file_bytes),)
    file_problems: list[Problem] = []
    codex_text = None
    if item.codex_path is not None:
        try:
            codex_data = read_bytes(item.codex_path, max_file_bytes)
            codex_text = codex_data[:max_file_bytes].decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "it is not valid UTF-8"
            file_problems.append(
                problem(
                    item.codex_path,
                    "warning",
                    "codex-yaml-invalid",
                    f"Cannot read {item.codex_path} ({reason}); the skill loads without "
                    "its Codex metadata. Fix or remove the file.",
                )
            )
    location = SkillLocation(
        dir=item.dir,
        real_path=item.real_path,
        scope=item.root.scope,
        rank=item.root.rank,
        root=item.root.path,
        plugin=item.plugin,
        mtime_ns=item.mtime_ns,
        size=item.size,
    )
    if item.root.kind == "commands":
        from ..parse._command import parse_command_bytes

        parsed = parse_command_bytes(data, path=item.path, location=location, strict=strict)
        return item, parsed.skill, parsed.problems
    parsed = (_PARSER or _parser()).parse_skill_bytes(
        data,
        path=item.path,
        # A linked folder is an alias: its real folder name is the one the author
        # chose, so name checks use that.
        dir_name=item.real_path.rpartition(os.sep)[0].rpartition(os.sep)[2],
        location=location,
        strict=strict,
        codex_yaml=codex_text,
        codex_path=item.codex_path if codex_text is not None else None,
    )
    file_problems.extend(parsed.problems)
    return item, parsed.skill, tuple(file_problems)


def _relocate(skill: Skill, item: Found) -> Skill:
    """A cached parse with this run's location fields (cheap when they match)."""
    root = item.root
    if (
        skill.scope == root.scope
        and skill.rank == root.rank
        and skill.root == item.root.path
        and skill.plugin == item.plugin
    ):
        return skill
    return replace(skill, scope=root.scope, rank=root.rank, root=item.root.path, plugin=item.plugin)
