"""The search index's tables in the SQLite file, and bringing them up to date.

The FTS rows live in the same SQLite file as the parse cache (tables `search_*`),
keyed by the skill's real path and versioned by `(mtime_ns, size)`. `sync` brings
them up to date with a catalog (`SkillSearch` calls it lazily, on the first search
against a catalog): only skills whose version is not indexed yet have their body
read, on a worker thread for a large build (`READ_AHEAD_MIN`). A later process over
an unchanged tree reads no body at all. The frontmatter and the bodies are two FTS5
tables over external content (`search_content`, `search_body`), so each text is
stored once; `_INDEX_VERSION` changes whenever the tables, the tokenizers or what is
extracted change, and old rows are then dropped. A damaged file (`damaged`) is a
cache to rebuild, never an error to show.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Callable, Mapping

from .._errors import SkillIOError
from .._model import Catalog, Skill
from ._query import HEAD_COLUMNS, TEXT_COLUMNS

READ_AHEAD_MIN = 256
"""A build with at least this many bodies to read reads them on a worker thread
while it indexes the frontmatter."""

TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The frontmatter is stemmed, so "drafts" finds "draft"."""

TEXT_TOKENIZER = "unicode61 remove_diacritics 2"
"""The body is not: Porter stemming is a quarter of what tokenizing bodies costs.
A query word is matched there as typed when some body holds it, else as every
body word sharing its stem (`_terms._body_forms`), so a body holding "drafted" still
matches "drafts"."""

_INDEX_VERSION = "7"
"""Bumped whenever tables, tokenizer or text extraction change: old rows are dropped."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # One row per indexed skill. `key` has no UNIQUE index: rows are only looked up
    # by id, `_sync` plans from a full snapshot under the write lock, and the index
    # would cost every insert.
    """CREATE TABLE IF NOT EXISTS search_doc (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        root TEXT NOT NULL,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL
    )""",
    # The text the FTS tables index (their external content), stored once: the FTS
    # tables keep only their index. Apart from search_doc so that the snapshot of
    # versions every sync takes does not read the text; the bodies apart from the
    # frontmatter so that a build indexes the frontmatter while it reads bodies.
    f"""CREATE TABLE IF NOT EXISTS search_content (
        id INTEGER PRIMARY KEY,
        {", ".join(f"{c} TEXT NOT NULL" for c in HEAD_COLUMNS)}
    )""",
    f"""CREATE TABLE IF NOT EXISTS search_body (
        id INTEGER PRIMARY KEY,
        {", ".join(f"{c} TEXT NOT NULL" for c in TEXT_COLUMNS)}
    )""",
    # Two FTS tables, not one: FTS5 reads a term's whole posting list whatever the
    # column filter, and a word common in bodies has long lists. Split, a query can
    # search every word in the short frontmatter and only the rarer ones in bodies.
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS search_head USING fts5(
        {", ".join(HEAD_COLUMNS)}, tokenize = '{TOKENIZER}',
        content = 'search_content', content_rowid = 'id'
    )""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5(
        {", ".join(TEXT_COLUMNS)}, tokenize = '{TEXT_TOKENIZER}',
        content = 'search_body', content_rowid = 'id'
    )""",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_head_vocab USING fts5vocab(search_head, row)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_text_vocab USING fts5vocab(search_text, row)",
)
_TABLES = frozenset(re.findall(r"CREATE (?:VIRTUAL )?TABLE IF NOT EXISTS (\w+)", " ".join(_SCHEMA)))
"""Every table `_SCHEMA` creates: one missing means the index is rebuilt."""
# Set once, when the tables are created (FTS5 keeps it in its config table). The
# pending-data hash FTS5 flushes to a new segment when full: 1 MiB by default,
# which splits a 10,000-skill build into several segments that later writes merge.
# At 16 MiB such a build fits in one, with no merge work (about 5-10% of it).
_CONFIG = tuple(
    f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', {16 * 1024 * 1024})"
    for table in ("search_head", "search_text")
)
_DROP = (
    "DROP TABLE IF EXISTS search_head_vocab",
    "DROP TABLE IF EXISTS search_text_vocab",
    "DROP TABLE IF EXISTS search_vocab",
    "DROP TABLE IF EXISTS search_head",
    "DROP TABLE IF EXISTS search_text",
    "DROP TABLE IF EXISTS search_fts",
    "DROP TABLE IF EXISTS search_df",
    "DROP TABLE IF EXISTS search_doc",
    "DROP TABLE IF EXISTS search_content",
    "DROP TABLE IF EXISTS search_body",
    "DROP TABLE IF EXISTS search_meta",
)

DocRow = tuple[int, int, int, str]
"""A `search_doc` row by skill key: (rowid, mtime_ns, size, root)."""


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the search tables, or drop and create them again when their version is
    not `_INDEX_VERSION` or one of them is gone.

    Raises:
        SkillIOError: the index cannot be written, or SQLite lacks FTS5.
    """
    try:
        with savepoint(conn, "search_schema"):
            version = None
            present = {
                name
                for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if "search_meta" in present:
                row = conn.execute("SELECT value FROM search_meta WHERE key = 'version'").fetchone()
                version = row[0] if row else None
            if not _TABLES.issubset(present):
                version = None  # a table is gone: its rows elsewhere are no index
            if version != _INDEX_VERSION:
                for statement in _DROP:
                    conn.execute(statement)
            for statement in _SCHEMA:
                conn.execute(statement)
            if version != _INDEX_VERSION:
                for statement in _CONFIG:
                    # Only speed: an FTS5 without the option builds as before.
                    with contextlib.suppress(sqlite3.OperationalError):
                        conn.execute(statement)
                # Written only here: a process that finds the index current
                # does not take the write lock to open it.
                conn.execute(
                    "INSERT OR REPLACE INTO search_meta(key, value) VALUES ('version', ?)",
                    (_INDEX_VERSION,),
                )
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc).lower():
            raise SkillIOError(
                f"Skill search needs SQLite's FTS5 extension, which this Python's "
                f"sqlite3 (SQLite {sqlite3.sqlite_version}) lacks. Use a Python build "
                "whose sqlite3 includes FTS5 (python.org and most Linux distributions "
                "ship it)."
            ) from exc
        raise _io_error(conn, "prepare", exc) from exc
    except sqlite3.Error as exc:
        raise _io_error(conn, "prepare", exc) from exc


def sync(
    conn: sqlite3.Connection, catalog: Catalog, read: Callable[[Skill], str | None]
) -> tuple[dict[int, Skill], int]:
    """Bring the FTS rows up to date with `catalog`; map row ids to its skills,
    and count the rows. `read` gives the text indexed of a skill's body (None: it
    cannot be read now, and is read again by the next sync).

    Stale rows are those under one of the catalog's roots whose skill the
    catalog no longer has; rows of other roots (another project sharing the
    cache file) are kept for that project's next search.
    """
    skills: dict[str, Skill] = {}
    for skill in catalog.skills:
        skills.setdefault(skill.key, skill)
    roots = {root.path for root in catalog.roots} | {s.root for s in skills.values()}

    def snapshot() -> dict[str, DocRow]:
        return {
            key: (rowid, mtime_ns, size, root)
            for rowid, key, mtime_ns, size, root in conn.execute(
                "SELECT id, key, mtime_ns, size, root FROM search_doc"
            )
        }

    def plan(rows: Mapping[str, DocRow]) -> tuple[list[Skill], list[int]]:
        fresh = [
            skill
            for key, skill in skills.items()
            if key not in rows or rows[key][1:3] != (skill.mtime_ns, skill.size)
        ]
        stale = [row[0] for key, row in rows.items() if key not in skills and row[3] in roots]
        return fresh, stale

    try:
        rows = snapshot()
        fresh, stale = plan(rows)
        if fresh or stale:
            with savepoint(conn, "search_sync"):
                # Take the write lock first, then re-plan: another process
                # may have indexed some of these skills meanwhile.
                conn.execute("UPDATE search_meta SET value = value WHERE key = 'version'")
                rows = snapshot()
                fresh, stale = plan(rows)
                rows = _write(conn, rows, fresh, stale, read)
    except sqlite3.Error as exc:
        raise _io_error(conn, "update", exc) from exc
    by_rowid = {rows[key][0]: skill for key, skill in skills.items() if key in rows}
    return by_rowid, len(rows)


def _write(
    conn: sqlite3.Connection,
    rows: Mapping[str, DocRow],
    fresh: list[Skill],
    stale: list[int],
    read: Callable[[Skill], str | None],
) -> dict[str, DocRow]:
    """Replace the rows of `fresh` and `stale`; return `rows` as they are now.

    The bodies of a large build are read on a worker thread while SQLite
    indexes the frontmatter (`_ReadAhead`).
    """
    replaced = [rows[skill.key][0] for skill in fresh if skill.key in rows]
    gone = [(rowid,) for rowid in stale + replaced]
    # External content: the FTS tables read the old text from search_content
    # and search_body to take it out of their index, so those rows go last.
    conn.executemany("DELETE FROM search_head WHERE rowid = ?", gone)
    conn.executemany("DELETE FROM search_text WHERE rowid = ?", gone)
    conn.executemany("DELETE FROM search_content WHERE id = ?", gone)
    conn.executemany("DELETE FROM search_body WHERE id = ?", gone)
    conn.executemany("DELETE FROM search_doc WHERE id = ?", gone)
    gone_ids = {rowid for (rowid,) in gone}
    now = {key: row for key, row in rows.items() if row[0] not in gone_ids}
    next_id = conn.execute("SELECT coalesce(max(id), 0) FROM search_doc").fetchone()[0] + 1
    ids = range(next_id, next_id + len(fresh))
    conn.executemany(
        f"INSERT INTO search_content(id, {', '.join(HEAD_COLUMNS)}) "
        f"VALUES (?, {', '.join('?' * len(HEAD_COLUMNS))})",
        [
            (rowid, skill.name, skill.description, skill.when_to_use or "")
            for rowid, skill in zip(ids, fresh, strict=True)
        ],
    )
    # Started only now: a statement per row (executemany) waits for the GIL
    # after each row, so the reads overlap one long statement instead.
    with _ReadAhead(fresh, read) as read_ahead:
        _index_rows(conn, "search_head", "search_content", HEAD_COLUMNS, next_id)
        bodies = read_ahead.result()
    docs = []
    texts = []
    for rowid, skill, body in zip(ids, fresh, bodies, strict=True):
        # An unread body is recorded with mtime -1: never equal to a real
        # version, so the next sync reads it again.
        mtime_ns = skill.mtime_ns if body is not None else -1
        docs.append((rowid, skill.key, skill.root, mtime_ns, skill.size))
        texts.append((rowid, body or ""))
        now[skill.key] = (rowid, mtime_ns, skill.size, skill.root)
    conn.executemany(
        "INSERT INTO search_doc(id, key, root, mtime_ns, size) VALUES (?, ?, ?, ?, ?)", docs
    )
    conn.executemany("INSERT INTO search_body(id, body) VALUES (?, ?)", texts)
    _index_rows(conn, "search_text", "search_body", TEXT_COLUMNS, next_id)
    return now


def _index_rows(
    conn: sqlite3.Connection, table: str, content: str, columns: tuple[str, ...], first_id: int
) -> None:
    """Index the rows of `content` from `first_id` on in the FTS table `table`: in
    SQL, so the text crosses from Python once, and in one statement, so FTS5
    writes one segment."""
    names = ", ".join(columns)
    conn.execute(
        f"INSERT INTO {table}(rowid, {names}) SELECT id, {names} FROM {content} WHERE id >= ?",
        (first_id,),
    )


class _ReadAhead:
    """The bodies of the skills a build writes, read on a worker thread.

    Reading is Python and holds the GIL; indexing the frontmatter meanwhile is one
    SQLite statement that releases it, so on two cores the reads cost a large
    build little. A small build reads on the calling thread, in `result`: a thread
    costs more than it saves there. `read` may run on the worker thread.
    """

    def __init__(self, skills: list[Skill], read: Callable[[Skill], str | None]) -> None:
        self._skills = skills
        self._read = read
        self._bodies: list[str | None] = []
        self._error: BaseException | None = None
        self._stop = False
        self._thread: threading.Thread | None = None
        if len(skills) >= READ_AHEAD_MIN:
            self._thread = threading.Thread(
                target=self._run, name="skillpack-search-read-ahead", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        try:
            for skill in self._skills:
                if self._stop:
                    return
                self._bodies.append(self._read(skill))
        except BaseException as exc:  # raised again on the calling thread by `result`
            self._error = exc

    def result(self) -> list[str | None]:
        """Each skill's body, in order; None where it could not be read."""
        if self._thread is None:
            return [self._read(skill) for skill in self._skills]
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._bodies

    def __enter__(self) -> _ReadAhead:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop = True  # the write failed before `result`: stop reading
        if self._thread is not None:
            self._thread.join()


class savepoint:  # noqa: N801 - used as a context manager, reads like `with`
    """A SAVEPOINT that works in autocommit and inside an open transaction alike."""

    def __init__(self, conn: sqlite3.Connection, name: str) -> None:
        self._conn = conn
        self._name = name

    def __enter__(self) -> None:
        self._conn.execute(f"SAVEPOINT {self._name}")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            try:
                self._conn.execute(f"ROLLBACK TO {self._name}")
            finally:
                self._conn.execute(f"RELEASE {self._name}")
            return
        self._conn.execute(f"RELEASE {self._name}")


def database_file(conn: sqlite3.Connection) -> str:
    """The file of the connection's main database; "" for memory (or when unknown)."""
    try:
        for _seq, name, filename in conn.execute("PRAGMA database_list"):
            if name == "main" and filename:
                return str(filename)
    except (sqlite3.Error, ValueError):
        pass
    return ""


_DAMAGE_WORDS = ("malformed", "corrupt", "no such table", "no such column", "not a database")


def damaged(exc: BaseException) -> bool:
    """Whether a failed search means a damaged index file (rebuild it) rather than a
    busy, read-only or full one (report it)."""
    cause = exc.__cause__ if isinstance(exc, SkillIOError) and exc.__cause__ else exc
    if isinstance(cause, UnicodeDecodeError) or type(cause) is sqlite3.DatabaseError:
        return True
    if isinstance(cause, sqlite3.Error):
        message = str(cause).lower()
        return any(word in message for word in _DAMAGE_WORDS)
    return False


def _io_error(conn: sqlite3.Connection, action: str, exc: sqlite3.Error) -> SkillIOError:
    where = database_file(conn) or "memory"
    return SkillIOError(
        f"Cannot {action} the skill search index in {where}: {exc}. If another skillpack "
        "process is writing it, retry; if the folder is read-only, set "
        "SKILLPACK_CACHE_DIR to a writable folder or search without the cache."
    )
