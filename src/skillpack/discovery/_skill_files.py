"""A loaded skill's content on disk: its body, its bundled files, one file as text.

Later layers (sessions, tools, search) read skill content only through these, and
they keep every access inside the skill's folder: absolute paths, `..` (also
percent-encoded or with backslashes), hidden files and symlinks leaving the folder
are refused.

`read_skill_bytes` checks where a path resolves and then opens what it checked, not
the name again: from the skill folder's descriptor, one component at a time with
`O_NOFOLLOW`, so a symlink swapped in between (the folder's content is a stranger's)
fails the open instead of leading outside. Where `dir_fd` is not supported (Windows)
the opened file is compared with the resolved one after the open.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections import OrderedDict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .._errors import SkillIOError, SkillNotFoundError, SkillpackError, SkillPermissionError
from .._limits import MAX_LISTED_FILES, MAX_READ_FILE_BYTES, MAX_SKILL_FILE_BYTES
from .._model import Skill, SkillFile, sha256_digest
from ..index._snapshot import file_version
from ._confine import NOISE_DIRS, SKILL_FILE, confined_parts, missing, refuse, too_large
from ._load import read_bytes, read_fd

if TYPE_CHECKING:
    from ..index._digests import DigestStore

_FRONTMATTER_BYTES = 4096
"""`read_body_head` reads this many bytes more than the characters it returns."""


_REFRESH_HINT = "Run `skillpack list` (or reload the session) to refresh the catalog."


def skill_file_error(skill: Skill, path: str, exc: OSError) -> SkillpackError:
    """The error for an OS failure reading `path` of `skill`, by who can fix it.

    A missing SKILL.md is `SkillNotFoundError` (the catalog is stale), a permission
    refusal `SkillPermissionError` (`PERMISSION_DENIED`), the rest
    `SkillIOError`; each names the file.
    """
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError) and path == skill.path:
        return SkillNotFoundError(
            f"Skill '{skill.name}' is gone: {path} no longer exists.", hint=_REFRESH_HINT
        )
    if isinstance(exc, PermissionError):
        return SkillPermissionError(
            f"Permission denied reading {path} (skill '{skill.name}'): the operating "
            "system refuses access to the file.",
            hint=f"Check the file's owner and mode (e.g. `ls -l {path}`).",
        )
    return SkillIOError(f"Cannot read {path} (skill '{skill.name}'): {reason}.")


def skill_version(skill: Skill) -> tuple[int, ...]:
    """`index._snapshot.file_version` of the skill's SKILL.md now (ctime too, since an
    edit that restores mtime and keeps the size still changes it).

    Raises:
        SkillNotFoundError, SkillPermissionError, SkillIOError: see `skill_file_error`.
    """
    try:
        st = os.stat(skill.path)
    except OSError as exc:
        raise skill_file_error(skill, skill.path, exc) from exc
    return file_version(st)


def read_body(skill: Skill, *, max_bytes: int = MAX_SKILL_FILE_BYTES) -> str:
    """The Markdown body of a skill, re-read from disk (frontmatter removed).

    The text read is parsed again (`parse._frontmatter.loadable_body`): a SKILL.md
    that changed since discovery and no longer parses is an error, never a body
    holding raw frontmatter.

    Raises:
        SkillNotFoundError: the SKILL.md is gone.
        SkillPermissionError: the operating system refuses to read it.
        SkillParseError: it no longer parses as a skill.
        SkillIOError: it cannot be read, is too large or is not UTF-8.
    """
    from ..parse._loadable import loadable_body  # the warm path imports no parser

    text = read_text(skill, max_bytes=max_bytes)
    return loadable_body(text, path=skill.path, skill_dir=skill.dir)


def read_text(skill: Skill, *, max_bytes: int = MAX_SKILL_FILE_BYTES) -> str:
    """The whole SKILL.md of a skill as text (a BOM dropped), not parsed.

    Raises:
        SkillNotFoundError, SkillPermissionError, SkillIOError: as `read_body`.
    """
    try:
        data = read_bytes(skill.path, max_bytes)
    except OSError as exc:
        raise skill_file_error(skill, skill.path, exc) from exc
    if len(data) > max_bytes:
        raise SkillIOError(
            f"{skill.path} is over {max_bytes} bytes; move long material into references/."
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillIOError(
            f"{skill.path} is not valid UTF-8 ({exc}); re-save it as UTF-8."
        ) from exc


def _split_body(skill: Skill) -> str:
    from ..parse._frontmatter import split_frontmatter

    return split_frontmatter(read_text(skill)).body


def read_body_head(skill: Skill, max_chars: int) -> str:
    """The first `max_chars` characters of a skill's body, read from disk: the body as
    split (`split_frontmatter`, what search indexes; no parse re-check as in
    `read_body`), at the cost of a bounded read.

    Reads `max_chars + 4096` bytes (a multi-byte character cut at the end is
    dropped), enough for ASCII text after a 4 KiB frontmatter. Only when that head
    does not hold the frontmatter and `max_chars` characters of body (a long
    frontmatter, text of multi-byte characters) is the whole file read, through
    `read_text`, which also reports a missing, unreadable or non-UTF-8 file.

    Raises:
        SkillNotFoundError: the SKILL.md is gone.
        SkillIOError: it cannot be read, is too large or is not UTF-8.
    """
    limit = max_chars + _FRONTMATTER_BYTES
    try:
        # At most `limit` bytes: `read_bytes` reads one past the limit it is given.
        data = read_bytes(skill.path, limit - 1, skill.size if skill.size > 0 else None)
    except OSError:
        return _split_body(skill)[:max_chars]  # raises the error that says how to fix it
    truncated = len(data) == limit
    body_at = _plain_body_start(data)
    if body_at > 0:
        # The common file: split on bytes, decode only the body.
        body = _decode_cut(data[body_at:], truncated, "utf-8")
        if body is not None and (not truncated or len(body) > max_chars):
            return body[:max_chars]
        return _split_body(skill)[:max_chars]
    text = _decode_cut(data, truncated, "utf-8-sig")
    if text is not None:
        from ..parse._frontmatter import split_frontmatter

        frontmatter, body, _line = split_frontmatter(text)
        # A body longer than asked is known to hold the first `max_chars`
        # characters unchanged: CRLF folding can only alter the cut's last one.
        if not truncated or (frontmatter is not None and len(body) > max_chars):
            return body[:max_chars]
    return _split_body(skill)[:max_chars]


def _plain_body_start(data: bytes) -> int:
    """Where the body starts in a file head of the plain kind, else -1.

    Plain: no BOM and no carriage return, a first line that is exactly `---`, and
    a first line starting with `---` after it that is exactly `---` too, in valid
    UTF-8. `split_frontmatter` finds the same body in such a head; anything else
    (CRLF, blanks after a `---`, a `----` line) is left to it.
    """
    if not data.startswith(b"---\n") or b"\r" in data:
        return -1
    close = data.find(b"\n---", 3)
    if close < 0 or data[close + 4 : close + 5] != b"\n":
        return -1
    try:
        data[:close].decode("utf-8")
    except UnicodeDecodeError:
        return -1
    return close + 5


def _decode_cut(data: bytes, truncated: bool, encoding: str) -> str | None:
    """`data` decoded; when a bounded read cut a multi-byte character at its end,
    the text before that character. None when it is not valid UTF-8."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        if truncated and len(data) - exc.start < 4:
            with contextlib.suppress(UnicodeDecodeError):
                return data[: exc.start].decode(encoding)
    return None


LISTING_WALK_FACTOR: Final = 10
"""A listing looks at up to this many times the files it shows, to share them fairly."""


def list_skill_files(
    skill: Skill, *, max_files: int = MAX_LISTED_FILES
) -> tuple[tuple[str, ...], bool]:
    """Relative POSIX paths of the files bundled with a skill, never read.

    Top-level files first, then each subfolder breadth-first, names sorted. The
    SKILL.md itself, hidden entries, noise folders, nested skills (subfolders with
    their own SKILL.md), folder symlinks and file symlinks leaving the skill folder
    are left out. Up to `LISTING_WALK_FACTOR * max_files` files (and as many
    folders) are visited; when there are more than `max_files`, `fair_listing`
    picks which are shown, so one crowded folder never hides the others.

    Returns:
        The paths, and whether some were left out.
    """
    if skill.legacy_command:
        return (), False  # a command file has no folder of its own: its siblings are others
    files: list[str] = []
    cut = False
    for rel, _entry in _bundled(skill, max_files=max_files * LISTING_WALK_FACTOR, nested=False):
        if rel is None:
            cut = True
            break
        files.append(rel)
    if len(files) <= max_files:
        return tuple(files), cut
    return fair_listing(files, max_files), True


def fair_listing(paths: Sequence[str], limit: int) -> tuple[str, ...]:
    """At most `limit` of `paths`, shared fairly between the top-level entries.

    250 files under `assets/` must not push `references/checklist.md` and
    `scripts/run.sh` (what a body points at) out of a 200-file listing. Top-level
    files count as one group and each top-level folder as one; the groups take turns,
    one path at a time in their order, until `limit` are taken. The result keeps the
    order of `paths`.
    """
    if len(paths) <= limit:
        return tuple(paths)
    groups: dict[str, list[int]] = {}
    for index, path in enumerate(paths):
        head, slash, _rest = path.partition("/")
        groups.setdefault(head if slash else "", []).append(index)
    queues = [deque(indices) for indices in groups.values()]
    taken: list[int] = []
    while len(taken) < limit:
        for queue in queues:
            if queue and len(taken) < limit:
                taken.append(queue.popleft())
        queues = [queue for queue in queues if queue]
    return tuple(paths[index] for index in sorted(taken))


@dataclass(frozen=True, kw_only=True, slots=True)
class TreeFile:
    """One file of a skill's whole tree, with the `stat` values a digest is keyed on."""

    path: str
    """Relative POSIX path inside the skill folder."""
    full: str
    """Absolute path on disk."""
    size: int
    mtime_ns: int
    ino: int
    ctime_ns: int


def skill_tree(skill: Skill, *, max_files: int) -> tuple[tuple[TreeFile, ...], bool]:
    """Every file a skill serves, its SKILL.md first and nested skills' files included.

    The order and rules of `list_skill_files` (hidden entries, noise folders, folder
    symlinks and file symlinks leaving the folder are left out), except that the
    SKILL.md is listed and nested skills' folders are walked: as seen from the
    enclosing skill, their files are supporting files.

    Returns:
        The files, and whether the listing stopped at `max_files`.
    """
    files: list[TreeFile] = []
    for rel, entry in _bundled(skill, max_files=max_files, nested=True):
        if rel is None or entry is None:
            return tuple(files), True
        try:
            st = entry.stat()
        except OSError:
            continue
        files.append(
            TreeFile(
                path=rel,
                full=entry.path,
                size=st.st_size,
                mtime_ns=st.st_mtime_ns,
                ino=st.st_ino,
                ctime_ns=st.st_ctime_ns,
            )
        )
    return tuple(files), False


def _bundled(
    skill: Skill, *, max_files: int, nested: bool
) -> Iterator[tuple[str | None, os.DirEntry[str] | None]]:
    """(relative path, entry) of each file, breadth-first; `(None, None)` when cut short.

    `nested`: walk into subfolders holding their own SKILL.md, and list the skill's
    own SKILL.md first (else both are left out: a nested skill owns its files).
    """
    base_real = ""  # the folder's real path, found when a symlink needs it
    queue: deque[tuple[str, str]] = deque([(skill.dir, "")])
    files = folders = 0
    while queue:
        if files >= max_files or folders >= max_files:
            yield None, None
            return
        folder, prefix = queue.popleft()
        folders += 1
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        if prefix and not nested and any(e.name == SKILL_FILE for e in entries):
            continue
        if not prefix:
            # The SKILL.md leads (or is left out); the rest follows in name order.
            entries.sort(key=lambda e: e.name != SKILL_FILE)
        for entry in entries:
            name = entry.name
            own_skill_md = not prefix and name == SKILL_FILE
            if name[0] == "." or name in NOISE_DIRS or (own_skill_md and not nested):
                continue
            rel = f"{prefix}{name}"
            try:
                if entry.is_symlink():
                    base_real = base_real or os.path.realpath(skill.dir)
                    if entry.is_dir() or not _inside(os.path.realpath(entry.path), base_real):
                        continue
                    if not entry.is_file():
                        continue
                elif entry.is_dir():
                    queue.append((entry.path, f"{rel}/"))
                    continue
                elif not entry.is_file():
                    continue
            except OSError:
                continue
            if files >= max_files:
                yield None, None
                return
            files += 1
            yield rel, entry


def _links_below(folder: str, parts: tuple[str, ...]) -> bool:
    """Whether a path component below `folder` is a symlink (or cannot be checked).

    Without one, `parts` (no `..`, no absolute part: `confined_parts`) stay inside the
    folder by construction, and the `realpath` of the whole path is not needed.
    """
    path = folder
    for part in parts:
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return True
        except OSError:
            return False  # absent: nothing to follow (the read reports it missing)
    return False


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_FILE_FLAGS = (
    os.O_RDONLY
    | _NOFOLLOW
    | _CLOEXEC
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
)
_STEPWISE = bool(_NOFOLLOW) and os.open in os.supports_dir_fd
"""Open step by step from the folder's descriptor (POSIX); else verify after open."""


def read_skill_bytes(skill: Skill, relpath: str, *, max_bytes: int) -> bytes:
    """The bytes of one file of a skill, confined to the skill's folder.

    Symlinks inside the folder that resolve inside it are followed; the file is then
    opened from the folder's descriptor along the resolved path, one component at a
    time with `O_NOFOLLOW`, so a symlink swapped in since the check fails the open.

    Raises:
        SkillPermissionError: the path is absolute, climbs out with `..` (also
            percent-encoded or with backslashes), holds a NUL, names a hidden
            file, is too long, or is (or becomes) a symlink resolving outside the
            skill folder; or the operating system refuses to read the file.
        SkillNotFoundError: no such regular file in the skill.
        SkillIOError: the file is over `max_bytes` or unreadable.
    """
    parts = confined_parts(skill, relpath)
    if skill.legacy_command:
        raise SkillNotFoundError(
            f"Skill '{skill.name}' is a command file ({skill.path}) and has no bundled "
            "files; move it to a skill folder to bundle files with it."
        )
    candidate = os.path.join(skill.dir, *parts)
    try:
        base = os.path.realpath(skill.dir)
        if _links_below(skill.dir, parts):
            real = os.path.realpath(candidate)
            if not _inside(real, base):
                raise refuse(
                    skill, relpath, "it is a symlink that resolves outside the skill folder"
                )
            if real == base:
                raise missing(skill, parts)  # a link to the folder itself: no file
            steps = os.path.relpath(real, base).split(os.sep)
        else:
            steps = list(parts)  # no link: inside by construction (`confined_parts`)
    except OSError as exc:  # a link that changed while it was resolved
        raise skill_file_error(skill, candidate, exc) from exc
    except ValueError as exc:  # a name the OS cannot take (embedded NUL, bad encoding)
        raise SkillIOError(f"Cannot resolve {candidate}: {exc}.") from exc
    try:
        data = (_read_stepwise if _STEPWISE else _read_verified)(base, steps, max_bytes)
    except _OverLimit as over:
        raise too_large(candidate, over.size, max_bytes) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise refuse(
                skill, relpath, "a part of it became a symlink while it was read"
            ) from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EINVAL, errno.EISDIR):
            raise missing(skill, parts) from None
        raise skill_file_error(skill, candidate, exc) from exc
    if data is None:
        raise missing(skill, parts)
    if len(data) > max_bytes:
        raise SkillIOError(f"{candidate} grew over the {max_bytes}-byte limit while read.")
    return data


def _read_open(fd: int, max_bytes: int) -> bytes | None:
    """The bytes of an open file: None when it is not a regular file (a folder, a
    FIFO); `max_bytes + 1` bytes at most (more means over the limit)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return None
    if st.st_size > max_bytes:
        raise _OverLimit(st.st_size)
    return read_fd(fd, max_bytes, st.st_size)


class _OverLimit(Exception):
    """A file larger than the read limit (not read)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def _read_stepwise(base: str, steps: list[str], max_bytes: int) -> bytes | None:
    """Open `base`, then each of `steps` relative to the previous descriptor, none of
    them a symlink (`O_NOFOLLOW`: ELOOP), and read the last one."""
    fd = os.open(base, _DIR_FLAGS)
    try:
        for step in steps[:-1]:
            next_fd = os.open(step, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        file_fd = os.open(steps[-1], _FILE_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        return _read_open(file_fd, max_bytes)
    finally:
        os.close(file_fd)


def _read_verified(base: str, steps: list[str], max_bytes: int) -> bytes | None:
    """Without `dir_fd`: open the resolved path, then check that the file opened is
    the one that resolved inside the folder (same device and inode)."""
    path = os.path.join(base, *steps)
    fd = os.open(path, _FILE_FLAGS)
    try:
        opened = os.fstat(fd)
        if os.path.realpath(path) != path or not os.path.samestat(opened, os.stat(path)):
            raise OSError(errno.ELOOP, "the file changed while it was opened", path)
        return _read_open(fd, max_bytes)
    finally:
        os.close(fd)


def read_skill_file(skill: Skill, relpath: str, *, max_bytes: int = MAX_READ_FILE_BYTES) -> str:
    """One bundled file of a skill as text, confined to the skill's folder.

    Raises:
        SkillPermissionError: the path is absolute, climbs out with `..` (also
            percent-encoded or with backslashes), holds a NUL, names a hidden
            file, or is a symlink resolving outside the skill folder.
        SkillNotFoundError: no such file in the skill.
        SkillIOError: the file is over `max_bytes`, not UTF-8 text, or unreadable.
    """
    data = read_skill_bytes(skill, relpath, max_bytes=max_bytes)
    where = os.path.join(skill.dir, relpath)
    if b"\x00" in data:
        raise SkillIOError(f"{where} is a binary file; only text files can be read.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillIOError(f"{where} is not UTF-8 text ({exc}).") from exc


class DigestCache:
    """SHA-256 digests of skill files, kept while a file's `stat` values stay the same.

    Keyed by (path, size, mtime_ns, inode, ctime_ns): a file changed in any way gets a
    new key, so a digest always describes the bytes a read returns now (a file changed
    during the read is hashed from what was read, and not kept). Thread-safe; holds at
    most `max_entries` digests (the oldest go first).
    """

    def __init__(self, *, max_entries: int = 100_000, store: DigestStore | None = None) -> None:
        """Args:
        max_entries: Digests held in memory at most.
        store: Where digests outlive the process (the index file); None: memory only.
        """
        self._digests: OrderedDict[tuple[str, int, int, int, int], str] = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()
        self.store = store

    def file(self, skill: Skill, tree_file: TreeFile, *, max_bytes: int) -> SkillFile:
        """`tree_file` with its digest; reads the file only when its `stat` is new.

        Raises:
            SkillIOError: the file is over `max_bytes` or cannot be read.
        """
        f = tree_file
        key = (f.full, f.size, f.mtime_ns, f.ino, f.ctime_ns)
        with self._lock:
            digest = self._digests.get(key)
            if digest is not None:
                self._digests.move_to_end(key)
                return SkillFile(path=f.path, size=f.size, digest=digest)
        stored = self.store.get(key) if self.store is not None else None
        if stored is not None:
            self._remember(key, stored)
            return SkillFile(path=f.path, size=f.size, digest=stored)
        data = read_skill_bytes(skill, f.path, max_bytes=max_bytes)
        digest = sha256_digest(data)
        if len(data) == f.size:
            self._remember(key, digest)
            if self.store is not None:
                self.store.put(key, digest)
        return SkillFile(path=f.path, size=len(data), digest=digest)

    def _remember(self, key: tuple[str, int, int, int, int], digest: str) -> None:
        with self._lock:
            self._digests[key] = digest
            while len(self._digests) > self._max:
                self._digests.popitem(last=False)
