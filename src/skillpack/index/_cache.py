"""The persistent index: one SQLite file that caches parsed skills.

It holds one snapshot per walked root (`SkillCache`): the folders seen with their
times, and each SKILL.md with its stat and its parse. A root whose folders are
unchanged is replayed from it without a walk, and a SKILL.md whose `(real path,
mtime_ns, size, inode, ctime_ns)` is unchanged is served from it: no read, no YAML, not even
`import yaml`. It also keeps a few whole-catalog documents rendered from unchanged
catalogs (`runtime/_kept.py`). The search layer (`_fts.py`) keeps its FTS5 tables in
the same file (tables prefixed `search_`); `PRAGMA user_version` is the schema version
of the whole file, so a change to either module's tables bumps `SCHEMA_VERSION`.

The cache is never the source of truth: any failure (corrupt file, foreign
database, newer schema, text that does not decode, a lock held too long, a
read-only disk) degrades to re-parsing, with at most one warning problem, and never
changes what discovery returns. SQLite does not check its pages, so each root's
snapshot is stored with a CRC-32 of its blob: a record whose bytes changed since
(a flipped bit on disk, a stray write) is a miss, parsed again and replaced.
"""

from __future__ import annotations

import contextlib
import errno
import marshal
import os
import sqlite3
import sys
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, NamedTuple

from .._model import Problem, Skill
from .._paths import cache_dir as paths_cache_dir
from ._snapshot import (
    ITEM_CODEX_SIG,
    ITEM_PATH,
    ITEM_REAL,
    ITEM_STAT,
    SKILL_FIELDS,
    marshal_safe,
    problems_from_values,
    skill_from_values,
)

SCHEMA_VERSION = 7
"""`PRAGMA user_version` of an index this code can use; any other value is rebuilt."""

BUSY_TIMEOUT_MS = 2000
"""How long a writer waits for another process's write lock before skipping."""

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS skill_cache_roots (
    key TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    strict INTEGER NOT NULL,
    replay INTEGER NOT NULL,
    snapshot BLOB NOT NULL,
    checksum INTEGER NOT NULL,
    generation TEXT NOT NULL
)""",
    """
CREATE TABLE IF NOT EXISTS skill_cache_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
)""",
    """
CREATE TABLE IF NOT EXISTS skill_cache_outputs (
    scope TEXT PRIMARY KEY,
    recorded BLOB NOT NULL,
    output BLOB NOT NULL,
    checksum INTEGER NOT NULL
)""",
)

KEPT_OUTPUTS = 4
"""Rendered outputs the index keeps (`SkillCache.keep_output`), the latest first."""


def index_path(cache_dir: str | None = None) -> Path:
    """Where the index file lives: in `cache_dir` when given, else `_paths.cache_dir()`."""
    return (Path(cache_dir) if cache_dir else paths_cache_dir()) / "index.sqlite3"


def _warning(path: Path | str, code: str, message: str) -> Problem:
    return Problem(path=str(path), severity="warning", code=code, message=message)


# The file is a cache that can always be rebuilt, so it is never synced: a crash
# of the process cannot damage a WAL database; a crash of the whole machine can,
# and a damaged file is then found (at open or at use) and rebuilt. Syncing cost a
# cold run more than encoding its rows.
_SYNCHRONOUS = "OFF"
_PAGE_SIZE = 16384


def _open(path: Path) -> sqlite3.Connection:
    """Open and migrate; raises sqlite3.DatabaseError when the file is unusable."""
    conn = _connection(path)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.execute(f"PRAGMA synchronous = {_SYNCHRONOUS}")
        if version == SCHEMA_VERSION:
            return conn
        if version != 0:
            raise _Unusable(f"schema version {version}, expected {SCHEMA_VERSION}")
        tables = [
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        if any(not name.startswith(("skill_cache", "search_")) for name in tables):
            raise _Unusable("it holds tables skillpack did not create")
        # A fresh file (or one being created by another process right now): set
        # it up in one write transaction so two creators serialize on the lock.
        # WAL lets readers run while another process writes; it is stored in the
        # file, so only its creator sets it. So is the page size, which must come
        # first: a root's snapshot is one blob of about 1 KB per skill, and 16 KiB
        # pages store it in a quarter of the pages (half the time to write).
        conn.execute(f"PRAGMA page_size = {_PAGE_SIZE}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return conn
    except BaseException:
        conn.close()
        raise


def _connection(path: Path) -> sqlite3.Connection:
    """A connection to the index file as every user opens it: autocommit (callers
    open their own transactions), any thread, the busy timeout."""
    return sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )


class _Unusable(Exception):
    """The file is a valid SQLite database this version cannot use."""


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def connect(path: Path | str, *, problems: list[Problem] | None = None) -> sqlite3.Connection:
    """Open the index at `path`, creating or rebuilding it as needed. Never raises.

    A corrupt file, a foreign database or another schema version is deleted and
    rebuilt (an `index-rebuilt` warning is appended to `problems`). When even that
    fails (read-only disk, a directory in the way), an in-memory database with the
    same schema is returned and a warning says the cache is off for this run.

    The connection is in autocommit mode (`isolation_level=None`): callers open
    their own transactions with `BEGIN`. It may be used from any thread, one at a
    time (its user serializes: `SkillSearch` holds a lock).
    """
    path = Path(path)
    sink = problems if problems is not None else []
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return _open(path)
    except sqlite3.OperationalError as exc:
        if _is_busy(exc):
            # Another process holds the lock (creating or rebuilding the file):
            # its file is fine, so leave it alone and parse without the cache.
            return _memory()
        if _cannot_open(exc) and path.is_file():
            # Out of file handles, or no access: nothing says the file is damaged,
            # and other connections may be using it. It is never deleted for that.
            sink.append(_unavailable(path, str(exc)))
            return _memory()
        reason = str(exc)
    except OSError as exc:
        if exc.errno in _NO_HANDLES:
            sink.append(_unavailable(path, f"{exc.strerror or exc}"))
            return _memory()
        reason = f"{exc.strerror or exc}"
    except Exception as exc:  # noqa: BLE001 - any failure to open or decode: rebuild
        # A damaged schema can fail in ways SQLite's own errors do not cover: a
        # table name that is not UTF-8 makes even its error message undecodable.
        reason = f"{type(exc).__name__}: {exc}"
    try:
        _remove(path)
        conn = _open(path)
    except Exception as exc:  # noqa: BLE001 - then without a persistent cache
        sink.append(
            _warning(
                path,
                "index-rebuilt",
                f"The skill index at {path} could not be used ({reason}) nor recreated "
                f"({exc}); running without a persistent cache. Check that the folder is "
                "writable, or set SKILLPACK_CACHE_DIR to another folder.",
            )
        )
        return _memory()
    sink.append(
        _warning(
            path,
            "index-rebuilt",
            f"The skill index at {path} was unusable ({reason}) and has been rebuilt; "
            "skills are re-parsed once. Nothing to fix unless this repeats.",
        )
    )
    return conn


def replace_damaged(path: Path | str) -> sqlite3.Connection:
    """Delete a damaged index file and open a fresh one (memory when that fails too).

    For a reader that found the file damaged after `connect` opened it (a page that
    does not decode, a table gone): the file is a cache, so a new one is correct.
    """
    with contextlib.suppress(OSError):
        _remove(Path(path))
    return connect(path)


_NO_HANDLES: Final = (errno.EMFILE, errno.ENFILE)
_SQLITE_CANTOPEN: Final = 14


def _cannot_open(exc: sqlite3.OperationalError) -> bool:
    """SQLite could not open the file (or its journal): out of file handles, or no
    access. A state of the process or the folder, not of the file's content."""
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == _SQLITE_CANTOPEN


def _unavailable(path: Path, reason: str) -> Problem:
    return _warning(
        path,
        "index-unavailable",
        f"The skill index at {path} could not be opened ({reason}); this run works "
        "without it and leaves the file as it is. If this repeats, raise the open-file "
        "limit (`ulimit -n`) or check the folder's permissions.",
    )


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def _memory() -> sqlite3.Connection:
    """A throwaway index with the real schema: callers need no special case."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return conn


_FINGERPRINTED: tuple[str, ...] = (
    # The parser, every module of it: what a cached parse result is.
    "parse",
    "_model.py",
    # How results are stored: rows, snapshots, JSON-safe values.
    "index/_cache.py",
    "index/_snapshot.py",
    # What a walk snapshot holds: found files, walk and load problems.
    "discovery/_found.py",
    "discovery/_walk.py",
    "discovery/_commands.py",
    "discovery/_load.py",
    "discovery/_parallel.py",
    "discovery/_replay.py",
    "discovery/_scan.py",
)
"""Package-relative files (a folder: each of its modules) whose code shapes cached
values; editing one invalidates the index. A path that does not exist is an error."""


def _fingerprinted_files() -> list[Path]:
    package = Path(__file__).parent.parent
    files: list[Path] = []
    for name in _FINGERPRINTED:
        path = package / name
        files.extend(sorted(path.glob("*.py")) if path.is_dir() else [path])
    return files


def _fingerprint() -> str:
    """Identity of the code and layout behind cached rows; other rows are discarded.

    The package version alone would keep stale rows across edits of an editable
    install, so the (mtime, size) of the `_FINGERPRINTED` modules are part of it, as
    are the Python version (marshal's format) and the Skill field names (the row layout).
    """
    from .._version import __version__

    parts = [__version__, str(SCHEMA_VERSION), sys.version.split()[0], ",".join(SKILL_FIELDS)]
    parts.extend(_file_marks(_fingerprinted_files()))
    return "|".join(parts)


def _file_marks(paths: list[str] | list[Path]) -> list[str]:
    """`name:mtime_ns:size` of each file (`name:-` when it cannot be `stat`ed)."""
    marks = []
    for path in paths:
        name = os.path.basename(path)
        try:
            st = os.stat(path)
        except OSError:
            marks.append(f"{name}:-")
            continue
        marks.append(f"{name}:{st.st_mtime_ns}:{st.st_size}")
    return marks


def package_fingerprint() -> str:
    """`_fingerprint` and the marks (`_file_marks`) of every module of the package, in
    a fixed order: the identity of the code behind a kept output
    (`SkillCache.keep_output`), which any module may shape."""
    modules: list[str] = []
    folders = [str(Path(__file__).parent.parent)]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    if entry.name.endswith(".py"):
                        modules.append(entry.path)
                    elif entry.name != "__pycache__" and entry.is_dir():
                        folders.append(entry.path)
        except OSError:
            modules.append(folder)  # marked as one that cannot be `stat`ed, or as a folder
    return "|".join([_fingerprint(), *_file_marks(modules)])


def _encoded(snapshot: tuple[Any, ...]) -> bytes | None:
    """A snapshot as its blob; a skill marshal cannot hold is stored in its JSON-safe
    form (`marshal_safe`); None when even that fails (the root is not stored)."""
    try:
        return marshal.dumps(snapshot)
    except ValueError:
        try:
            return marshal.dumps(marshal_safe(snapshot))
        except (ValueError, TypeError):
            return None


_HELD = threading.local()
"""`caches`: the caches whose writes a `HeldWrites` on this thread holds back."""


class HeldWrites:
    """Index writes held back until `flush`: inside `with HeldWrites() as held:` on one
    thread, each `SkillCache.commit` (and its encoding of snapshots, and its `close`)
    waits for `held.flush()`. For a server whose first answer needs the catalog, not
    the index written for the next start: at 10,000 skills a cold discovery spends
    ~100-160 ms encoding and writing. Other threads write as usual."""

    def __init__(self) -> None:
        self._caches: list[SkillCache] = []

    def __enter__(self) -> HeldWrites:
        _HELD.caches = self._caches
        return self

    def __exit__(self, *exc_info: object) -> None:
        _HELD.caches = None

    def flush(self) -> None:
        """Commit and close every cache held back, in order; a failure is the cache's
        own (it is rebuilt or written by a later run), never raised here."""
        caches, self._caches = self._caches, []
        for cache in caches:
            cache._held = False
            try:
                cache.commit()
            except Exception:  # noqa: BLE001, S110 - a cache write must not end a server
                pass
            finally:
                cache.close()


class CachedParse(NamedTuple):
    """A parse result as stored: location fields are those of the run that stored it.

    A NamedTuple rather than a dataclass: one is built per skill per warm run.
    """

    skill: Skill | None
    problems: tuple[Problem, ...]


_BAD_ROW = (ValueError, TypeError, EOFError, IndexError)

_UNREADABLE = (sqlite3.Error, ValueError)
"""A query that failed, or whose text did not decode (`UnicodeDecodeError`)."""


def checksum(blob: bytes) -> int:
    """The CRC-32 stored beside each snapshot blob (about 1 GB/s: a few ms warm)."""
    return zlib.crc32(blob)


class SkillCache:
    """One snapshot per walked root: the replay of its walk and the parse cache.

    - `snapshot(key)` returns a root's stored walk so that discovery can serve an
      unchanged root with `stat` calls only (the caller checks the folder times).
      Keys name the root, its scope, rank, plugin, symlink policy and the walk
      limits; a root whose walk cannot be replayed (it holds symlinks, a folder
      could not be listed, a file belonged to an earlier root) is stored anyway,
      marked not replayable, because its parses are still good.
    - `lookup(key)` serves the stored parse of one file version. Entries of every
      snapshot of the same strictness are the parse cache, found by real path and
      valid while the path, mtime_ns, size, inode, ctime_ns and Codex sidecar match. Scope,
      rank, root and plugin are not part of the match: the caller re-applies them,
      because reaching the same file from another root changes them but not the parse.

    One blob per root is the whole layout: a cold run encodes each skill once and
    writes a handful of rows. The snapshot of the root being walked is searched
    first; the others are loaded only when a file is not in it. Writes are
    buffered and committed in one transaction by `commit()`.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        strict: bool,
        path: Path | None = None,
        problems: list[Problem] | None = None,
    ) -> None:
        self._conn = conn
        self._strict = int(strict)
        self._path = path
        self._problems = problems
        self._damaged = False
        self._checked: bool | None = None
        self._stale = False
        self._decoded: set[str] = set()
        """Keys of the snapshots decoded in this run."""
        self._pending: list[Any] = []
        """Entries of decoded snapshots not yet added to `_parses`."""
        self._parses: dict[str, Any] = {}
        """real path -> snapshot entry."""
        self._all_loaded = False
        self.search_others = True
        """Whether a file missing from the snapshots decoded so far is looked for in
        every other snapshot (decoding them all). False: it is parsed instead, which
        suits a run that scans a few roots out of many (a watcher's refresh)."""
        self._writes: list[tuple[str, str, int, int, tuple[Any, ...], str]] = []
        self._held = False
        """`commit` was held back (`HeldWrites`): `close` waits for it too."""
        self._generations: dict[str, str] = {}
        """Key -> generation of each replayable snapshot read (and not replaced) this run."""
        self._damaged_keys: set[str] = set()
        """Keys of records whose checksum did not match: deleted unless rewritten."""
        self.hits = 0
        """Number of parses served from the index in this run."""

    @classmethod
    def open(
        cls,
        cache_dir: str | None = None,
        *,
        strict: bool = False,
        problems: list[Problem] | None = None,
    ) -> SkillCache:
        """Open the index file under `cache_dir` (see `index_path`).

        Warnings go to `problems`: the file could not be used, or it turned out
        damaged while in use (it is then deleted when the cache is closed, so the
        next run rebuilds it).
        """
        path = index_path(cache_dir)
        conn = connect(path, problems=problems)
        return cls(conn, strict=strict, path=path, problems=problems)

    @classmethod
    def open_existing(cls, cache_dir: str | None = None) -> SkillCache | None:
        """The index file under `cache_dir` as it is, for reading: None when there is
        none or it cannot be used as is. Nothing is created, rebuilt or deleted, and
        nothing reported: a run that goes on to `open` it does that, once."""
        path = index_path(cache_dir)
        if not path.is_file():
            return None
        try:
            conn = _connection(path)
        except sqlite3.Error:
            return None
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
                return cls(conn, strict=False)
        except sqlite3.Error:
            pass
        conn.close()
        return None

    def _failed(self, exc: Exception) -> None:
        """Note a failed query; a damaged file is reported once and removed on `close`.

        Busy, locked, read-only and I/O errors are `OperationalError`s and pass:
        the next run may well succeed. A plain `DatabaseError` is SQLite saying
        the file is malformed, and text that does not decode is damage too: no
        later run would fix either.
        """
        damaged = type(exc) is sqlite3.DatabaseError or isinstance(exc, ValueError)
        if not damaged or self._damaged:
            return
        self._damaged = True
        if self._problems is not None and self._path is not None:
            self._problems.append(
                _warning(
                    self._path,
                    "index-rebuilt",
                    f"The skill index at {self._path} is damaged ({exc}); it was deleted "
                    "and is rebuilt on the next run, which re-parses skills once. Nothing "
                    "to fix unless this repeats.",
                )
            )

    def _mismatch(self, key: str) -> None:
        """A record whose checksum does not match: a miss, deleted at `commit` unless
        this run stores the root again; reported once (`index-rebuilt`)."""
        first = not self._damaged_keys
        self._damaged_keys.add(key)
        if first and self._problems is not None and self._path is not None:
            self._problems.append(
                _warning(
                    self._path,
                    "index-rebuilt",
                    f"A record of the skill index at {self._path} does not match its "
                    "checksum (the file was changed or damaged on disk); its skills are "
                    "parsed again and the record replaced. Nothing to fix unless this "
                    "repeats.",
                )
            )

    def _current(self) -> bool:
        """Whether the rows come from this code (checked once); stale rows are ignored."""
        if self._checked is None:
            try:
                row = self._conn.execute(
                    "SELECT value FROM skill_cache_meta WHERE key = 'parser'"
                ).fetchone()
                self._checked = row is not None and row[0] == _fingerprint()
            except _UNREADABLE as exc:
                self._failed(exc)
                self._checked = False
            # Rows from other code are treated as absent; the next commit clears them.
            self._stale = not self._checked
        return self._checked

    def snapshot(self, key: str) -> tuple[Any, ...] | None:
        """The stored walk of one root (`_snapshot.Snapshot`) if it can be replayed, else None.

        Read with its own query, so a fully unchanged run decodes each root once and
        never touches the other rows. Its entries also serve `lookup`.
        """
        if not self._current():
            return None
        try:
            row = self._conn.execute(
                "SELECT replay, snapshot, checksum, generation FROM skill_cache_roots"
                " WHERE key = ?",
                (key,),
            ).fetchone()
            if row is None:
                return None
            if checksum(row[1]) != row[2]:
                self._mismatch(key)
                return None
            snapshot = marshal.loads(row[1])
            entries = snapshot[3]
        except _UNREADABLE as exc:
            self._failed(exc)
            return None
        except _BAD_ROW:
            return None
        self._decoded.add(key)
        self._pending.append(entries)
        if not row[0]:
            return None
        self._generations[key] = row[3]
        replayable: tuple[Any, ...] = snapshot
        return replayable

    def generation(self, key: str) -> str | None:
        """Which write of a root's replayable snapshot this run read (None: none, or
        this run replaced it): a token new with every write, so equal generations are
        the same stored walk and parses."""
        return self._generations.get(key)

    def store_snapshot(
        self, key: str, root: str, snapshot: tuple[Any, ...], *, replay: bool = True
    ) -> None:
        """Buffer one root's walk for `commit()` (which encodes it); `replay=False` keeps
        only its parses."""
        generation = os.urandom(8).hex()
        self._writes.append((key, root, self._strict, int(replay), snapshot, generation))
        self._generations.pop(key, None)  # what this run read of the root is gone

    def _index_pending(self) -> None:
        parses = self._parses
        for entries in self._pending:
            try:
                for entry in entries:
                    # The first snapshot decoded (the root being walked) wins.
                    parses.setdefault(entry[0][ITEM_REAL], entry)
            except _BAD_ROW:
                continue
        self._pending.clear()

    def _load_all(self) -> None:
        """Add the entries of every other snapshot of this strictness."""
        self._all_loaded = True
        if not self._current():
            return
        try:
            rows = self._conn.execute(
                "SELECT key, snapshot, checksum FROM skill_cache_roots WHERE strict = ?",
                (self._strict,),
            ).fetchall()
        except _UNREADABLE as exc:
            self._failed(exc)
            return
        for key, blob, stored in rows:
            if key in self._decoded:
                continue
            if checksum(blob) != stored:
                self._mismatch(key)
                continue
            try:
                self._pending.append(marshal.loads(blob)[3])
            except _BAD_ROW:
                continue
            self._decoded.add(key)
        self._index_pending()

    def knows(self, real_path: str) -> bool:
        """Whether some version of this file has a stored parse (so a `stat` may pay off)."""
        if self._pending:
            self._index_pending()
        if real_path in self._parses:
            return True
        if self._all_loaded or not self.search_others:
            return False
        self._load_all()
        return real_path in self._parses

    def lookup(self, key: tuple[str, str, int, int, int, int, str]) -> CachedParse | None:
        """The stored parse of this exact file version, or None to parse it.

        `key` is `(real_path, path, mtime_ns, size, ino, ctime_ns, codex_sig)` of the file
        as found.
        """
        if self._pending:
            self._index_pending()
        entry = self._parses.get(key[0])
        if entry is None and not self._all_loaded and self.search_others:
            self._load_all()
            entry = self._parses.get(key[0])
        if entry is None:
            return None
        try:
            item, values, file_problems = entry
            if (
                item[ITEM_PATH] != key[1]
                or item[ITEM_STAT] != key[2:6]
                or item[ITEM_CODEX_SIG] != key[6]
            ):
                return None
            skill = skill_from_values(values) if values is not None else None
            problems = problems_from_values(file_problems)
        except _BAD_ROW:
            return None  # a damaged entry: parse again, the next snapshot replaces it
        self.hits += 1
        return CachedParse(skill, problems)

    def stored_files(self) -> frozenset[str]:
        """Real paths of every SKILL.md with a stored parse at this strictness."""
        if not self._all_loaded:
            self._load_all()
        self._index_pending()
        return frozenset(self._parses)

    def commit(self) -> None:
        """Write buffered snapshots in one transaction; skip quietly if the lock is busy.

        Skipping is correct: the rows are a cache, and this run's result was built
        from the files themselves. Inside `HeldWrites` on this thread, the write (and
        this cache's `close`) waits for its `flush`.
        """
        held = getattr(_HELD, "caches", None)
        if held is not None:
            if not self._held:
                self._held = True
                held.append(self)
            return
        self._current()
        if self._damaged or not (self._stale or self._writes or self._damaged_keys):
            return
        rows = []
        for key, root, strict, replay, snapshot, generation in self._writes:
            blob = _encoded(snapshot)
            if blob is not None:
                rows.append((key, root, strict, replay, blob, checksum(blob), generation))
        stale, damaged = self._stale, [(key,) for key in self._damaged_keys]

        def write(conn: sqlite3.Connection) -> None:
            if stale:
                conn.execute("DELETE FROM skill_cache_roots")
                conn.execute("DELETE FROM skill_cache_outputs")
                conn.execute(
                    "INSERT OR REPLACE INTO skill_cache_meta (key, value) VALUES ('parser', ?)",
                    (_fingerprint(),),
                )
            conn.executemany("DELETE FROM skill_cache_roots WHERE key = ?", damaged)
            conn.executemany(
                "INSERT OR REPLACE INTO skill_cache_roots (key, root, strict, replay,"
                " snapshot, checksum, generation) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

        self._write(write)
        self._writes.clear()
        self._damaged_keys.clear()
        self._stale = False

    def kept_output(self, scope: str, still_holds: Callable[[Any], bool]) -> bytes | None:
        """The output kept under `scope` if `still_holds(recorded)` says the catalog it was
        rendered from is unchanged; None otherwise (none kept, stale, damaged).

        The output (megabytes at 10,000 skills) is read only once `still_holds` agreed;
        an output that no longer holds is dropped, so the runs while its catalog is being
        edited do not check it again.
        """
        if not self._current():
            return None
        conn = self._conn
        holds = False
        try:
            # One read transaction: both reads see the same row, even while another
            # process replaces it.
            conn.execute("BEGIN")
            try:
                row = conn.execute(
                    "SELECT recorded FROM skill_cache_outputs WHERE scope = ?", (scope,)
                ).fetchone()
                if row is None:
                    return None
                holds = still_holds(marshal.loads(row[0]))
                if holds:
                    output, stored = conn.execute(
                        "SELECT output, checksum FROM skill_cache_outputs WHERE scope = ?",
                        (scope,),
                    ).fetchone()
            finally:
                conn.execute("COMMIT")
            if not holds:
                self._drop_output(scope)
                return None
        except _UNREADABLE as exc:
            self._failed(exc)
            return None
        except _BAD_ROW:
            return None
        if zlib.crc32(output, checksum(row[0])) != stored:
            return None  # damaged on disk: render again (and keep that)
        kept: bytes = output
        return kept

    def _drop_output(self, scope: str) -> None:
        self._write(
            lambda conn: conn.execute("DELETE FROM skill_cache_outputs WHERE scope = ?", (scope,))
        )

    def _write(self, work: Callable[[sqlite3.Connection], object]) -> None:
        """`work` in one write transaction (`BEGIN IMMEDIATE` to `COMMIT`, rolled back
        when it fails); an SQLite failure is noted (`_failed`: a busy lock skips the
        write, a damaged file is removed at `close`), never raised: the rows are a cache."""
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                work(conn)
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            self._failed(exc)

    def keep_output(self, scope: str, recorded: Any, output: bytes) -> None:
        """Keep `output` under `scope` with what proves it still holds (`recorded`, plain
        values); the oldest beyond `KEPT_OUTPUTS` are dropped. A busy lock skips it."""
        if not self._current() or self._damaged:
            return
        try:
            blob = marshal.dumps(recorded)
        except ValueError:
            return
        row = (scope, blob, output, zlib.crc32(output, checksum(blob)))

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO skill_cache_outputs (scope, recorded, output,"
                " checksum) VALUES (?, ?, ?, ?)",
                row,
            )
            conn.execute(
                "DELETE FROM skill_cache_outputs WHERE rowid NOT IN (SELECT rowid FROM"
                " skill_cache_outputs ORDER BY rowid DESC LIMIT ?)",
                (KEPT_OUTPUTS,),
            )

        self._write(write)

    def close(self) -> None:
        """Close the connection (pending writes are dropped; call `commit` first).

        A file found damaged is deleted here, once this run no longer needs it.
        """
        if self._held:
            return  # `HeldWrites.flush` commits and closes
        self._conn.close()
        if self._damaged and self._path is not None:
            with contextlib.suppress(OSError):
                _remove(self._path)
