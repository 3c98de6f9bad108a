"""File digests and parsed frontmatters kept in the index file across restarts
(`skill_cache_digests`, `skill_cache_frontmatter`).

A server publishes a `sha256:` digest for every file of every skill; computing them
means reading every byte, and a restarted server would read them all again. This
table keeps each file's digest with the `stat` values it was computed under: `(path,
size, mtime_ns, inode, ctime_ns)`. A lookup answers only when all five match, so a
file changed in any way (even rewritten with the same size within one mtime tick: the
ctime moves) misses and is hashed again; each file version is hashed once, ever.

Like the rest of the index, this is a cache and never the source of truth: the
table is created on first use in the index file (its name starts with `skill_cache`,
so other versions' checks accept the file); rows are read one at a time until
`ROW_BY_ROW` were asked for (a server's first page needs a few dozen), then all at
once into memory (a walk of every page needs them all); new ones are written in
batches, and any SQLite failure turns the store off for the process (digests are then
computed as if it were empty). At most `MAX_ROWS` rows are kept.

A server also publishes each SKILL.md's frontmatter as a YAML 1.2 parser reads it, and
parsing costs more than looking up: `FrontmatterStore` keeps it by the digest of the
file's bytes, so each file version is parsed once too (see its docstring).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Final

from ._cache import _is_busy, connect, index_path

DigestKey = tuple[str, int, int, int, int]
"""(absolute path, size, mtime_ns, inode, ctime_ns) of a file when it was hashed."""

MAX_ROWS: Final = 500_000
"""More rows than this and the table is cleared (about 60 MB; rebuilt as files are read)."""
ROW_BY_ROW: Final = 256
"""Digest lookups answered by one indexed query each before the whole table is read."""
FLUSH_ROWS: Final = 500
FLUSH_SECONDS: Final = 1.0
"""New digests are written when this many are pending or the oldest is this old."""
_DIGESTS: Final = """
CREATE TABLE IF NOT EXISTS skill_cache_digests (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    digest TEXT NOT NULL
)"""
_FRONTMATTERS: Final = """
CREATE TABLE IF NOT EXISTS skill_cache_frontmatter (
    digest TEXT PRIMARY KEY,
    code TEXT NOT NULL,
    value TEXT NOT NULL
)"""
_UNUSABLE = (sqlite3.Error, ValueError, TypeError, OverflowError, UnicodeError)


class _BatchedTable:
    """One table of the index file at `path` (default: the user's index), written in
    batches; any SQLite failure turns it off for the process. Thread-safe."""

    _NAME: str = ""
    """The table's name."""
    _TABLE: str = ""
    """Its `CREATE TABLE IF NOT EXISTS` statement."""
    _INSERT: str = ""
    """The statement that writes one row: the key, then the row's values."""

    def __init__(self, path: Path | str | None = None) -> None:
        self._path = Path(path) if path is not None else index_path()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pending: dict[str, tuple[Any, ...]] = {}
        self._since = 0.0
        self._off = False
        self._bounded = False

    def _add(self, key: str, row: tuple[Any, ...]) -> None:
        """Keep `row` under `key` for the next batch (written when one is due)."""
        with self._lock:
            if self._off:
                return
            if not self._pending:
                self._since = time.monotonic()
            self._pending[key] = row
            age = time.monotonic() - self._since
            due = len(self._pending) >= FLUSH_ROWS or age >= FLUSH_SECONDS
        if due:
            self.flush()

    def flush(self) -> None:
        """Write the pending rows now (one transaction)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            if not pending or self._off:
                return
            conn = self._connection()
            if conn is None:
                return
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(self._INSERT, [(key, *row) for key, row in pending.items()])
                conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                _rollback(conn)
                if not _is_busy(exc):  # another writer's lock: this batch is dropped
                    self._turn_off()
                return
            except _UNUSABLE:
                _rollback(conn)
                self._turn_off()
                return
            self._written(pending)

    def close(self) -> None:
        """Write what is pending and close the file; the store may be used again."""
        self.flush()
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    # -- under the lock ---------------------------------------------------------------

    def _written(self, rows: dict[str, tuple[Any, ...]]) -> None:
        """Rows just committed (a store that keeps the table in memory adds them)."""

    def _trimmed(self, conn: sqlite3.Connection) -> bool:
        """Empty the table when it holds more than `MAX_ROWS` rows (it fills again as
        files are read), once per store; whether it did."""
        if self._bounded:
            return False
        self._bounded = True
        (count,) = conn.execute(f"SELECT count(*) FROM {self._NAME}").fetchone()
        if count <= MAX_ROWS:
            return False
        conn.execute(f"DELETE FROM {self._NAME}")
        return True

    def _select(self, query: str, key: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """One row of the table (`query` with `key`), None when absent or unusable."""
        conn = self._connection()
        if conn is None:
            return None
        try:
            self._trimmed(conn)
            row: tuple[Any, ...] | None = conn.execute(query, key).fetchone()
        except _UNUSABLE:
            self._turn_off()
            return None
        return row

    def _connection(self) -> sqlite3.Connection | None:
        if self._conn is None and not self._off:
            try:
                conn = connect(self._path)
                conn.execute(self._TABLE)
            except _UNUSABLE:
                self._turn_off()
                return None
            self._conn = conn
        return self._conn

    def _turn_off(self) -> None:
        self._off = True
        self._pending.clear()
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None


class DigestStore(_BatchedTable):
    """The digests of the index file at `path` (default: the user's index); thread-safe."""

    _NAME = "skill_cache_digests"
    _TABLE = _DIGESTS
    _INSERT = "INSERT OR REPLACE INTO skill_cache_digests VALUES (?, ?, ?, ?, ?, ?)"

    def __init__(self, path: Path | str | None = None) -> None:
        super().__init__(path)
        self._rows: dict[str, tuple[Any, ...]] | None = None
        self._asked = 0

    def get(self, key: DigestKey) -> str | None:
        """The digest stored for this exact file version, if any."""
        path = key[0]
        with self._lock:
            found = self._pending.get(path)
            if found is None:
                found = self._stored(path)
        if found is None or found[:4] != key[1:] or not isinstance(found[4], str):
            return None
        digest: str = found[4]
        return digest

    def _stored(self, path: str) -> tuple[Any, ...] | None:
        if self._rows is None and self._asked < ROW_BY_ROW:
            self._asked += 1
            return self._select(
                "SELECT size, mtime_ns, ino, ctime_ns, digest FROM skill_cache_digests "
                "WHERE path = ?",
                (path,),
            )
        return self._loaded().get(path)

    def put(self, key: DigestKey, digest: str) -> None:
        """Remember `digest` for this file version (written with the next batch)."""
        self._add(key[0], (*key[1:], digest))

    def _written(self, rows: dict[str, tuple[Any, ...]]) -> None:
        if self._rows is not None:
            self._rows.update(rows)

    def _loaded(self) -> dict[str, tuple[Any, ...]]:
        if self._rows is not None:
            return self._rows
        self._rows = {}
        conn = self._connection()
        if conn is None:
            return self._rows
        try:
            if self._trimmed(conn):
                return self._rows
            for path, size, mtime_ns, ino, ctime_ns, digest in conn.execute(
                "SELECT path, size, mtime_ns, ino, ctime_ns, digest FROM skill_cache_digests"
            ):
                if isinstance(path, str) and isinstance(digest, str):
                    self._rows[path] = (size, mtime_ns, ino, ctime_ns, digest)
        except _UNUSABLE:
            self._turn_off()
        return self._rows


class FrontmatterStore(_BatchedTable):
    """SKILL.md frontmatters as a YAML 1.2 parser reads them (`parse._yaml12.
    frontmatter_json`), by the `sha256:` digest of the file's bytes, kept in the index
    file at `path` (default: the user's index); thread-safe.

    A value is the frontmatter as JSON, or the reason the file has none to list (a
    text). Content-addressed, so a row can only go stale with the code that made it:
    each row names that code (`_cache` fingerprint: the parser's modules and the
    Python version), and a row of other code is a miss, replaced when it is parsed
    again. Read one row at a time: a server's first page asks for a few dozen."""

    _NAME = "skill_cache_frontmatter"
    _TABLE = _FRONTMATTERS
    _INSERT = "INSERT OR REPLACE INTO skill_cache_frontmatter VALUES (?, ?, ?)"

    def __init__(self, path: Path | str | None = None) -> None:
        super().__init__(path)
        self._code: str | None = None

    def get(self, digest: str) -> dict[str, Any] | str | None:
        """The frontmatter stored for the file whose bytes have `digest`, if any."""
        with self._lock:
            pending = self._pending.get(digest)
            if pending is not None:
                text: Any = pending[1]
            else:
                row = self._select(
                    "SELECT value FROM skill_cache_frontmatter WHERE digest = ? AND code = ?",
                    (digest, self._fingerprint()),
                )
                text = None if row is None else row[0]
        if not isinstance(text, str):
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict | str) else None

    def put(self, digest: str, value: dict[str, Any] | str) -> None:
        """Keep the frontmatter of the file whose bytes have `digest`."""
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return  # not JSON (the server writes it another way): parsed again next time
        self._add(digest, (self._fingerprint(), text))

    def _fingerprint(self) -> str:
        if self._code is None:
            from ._cache import _fingerprint

            self._code = _fingerprint()
        return self._code


def _rollback(conn: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):
        if conn.in_transaction:
            conn.execute("ROLLBACK")
