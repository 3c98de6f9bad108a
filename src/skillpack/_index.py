"""The persistent index: one SQLite file that caches parsed skills.

Discovery walks the roots every time, but a SKILL.md whose `(real path, mtime_ns,
size, inode)` is unchanged is served from here: no read, no YAML, not even
`import yaml`. The search layer (`_search.py`) keeps its FTS5 tables in the same
file (tables prefixed `search_`); `PRAGMA user_version` is the schema version of
the whole file, so a change to either module's tables bumps `SCHEMA_VERSION`.

The cache is never the source of truth: any failure (corrupt file, foreign
database, newer schema, a lock held too long, a read-only disk) degrades to
re-parsing, with at most one warning problem, and never changes what discovery
returns.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
import sys
from collections.abc import Iterable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, NamedTuple

from ._model import CodexMetadata, Problem, Skill

SCHEMA_VERSION = 3
"""`PRAGMA user_version` of an index this code can use; any other value is rebuilt."""

BUSY_TIMEOUT_MS = 2000
"""How long a writer waits for another process's write lock before skipping."""

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS skill_cache (
    real_path TEXT NOT NULL,
    strict INTEGER NOT NULL,
    path TEXT NOT NULL,
    root TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    codex TEXT NOT NULL,
    skill BLOB,
    problems BLOB NOT NULL,
    PRIMARY KEY (real_path, strict)
)""",
    """
CREATE TABLE IF NOT EXISTS skill_cache_dirs (
    path TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    listing BLOB NOT NULL
)""",
    """
CREATE TABLE IF NOT EXISTS skill_cache_roots (
    key TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    snapshot BLOB NOT NULL
)""",
    """
CREATE TABLE IF NOT EXISTS skill_cache_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
)""",
)


def _user_home() -> Path:
    home = os.environ.get("SKILLPACK_HOME")
    return Path(home) if home else Path.home()


def _user_cache_dir() -> Path:
    if sys.platform == "darwin":
        return _user_home() / "Library" / "Caches" / "skillpack"
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        base = Path(local) if local else _user_home() / "AppData" / "Local"
        return base / "skillpack" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else _user_home() / ".cache") / "skillpack"


def index_path(cache_dir: str | None = None) -> Path:
    """Where the index file lives.

    `cache_dir` when given, else `$SKILLPACK_CACHE_DIR`, else the platform's user
    cache dir (`$XDG_CACHE_HOME/skillpack` or `~/.cache/skillpack` on Linux,
    `~/Library/Caches/skillpack` on macOS, `%LOCALAPPDATA%\\skillpack\\Cache` on
    Windows).
    """
    if cache_dir:
        base = Path(cache_dir)
    elif os.environ.get("SKILLPACK_CACHE_DIR"):
        base = Path(os.environ["SKILLPACK_CACHE_DIR"])
    else:
        base = _user_cache_dir()
    return base / "index.sqlite3"


def _warning(path: Path | str, code: str, message: str) -> Problem:
    return Problem(path=str(path), severity="warning", code=code, message=message)


def _open(path: Path) -> sqlite3.Connection:
    """Open and migrate; raises sqlite3.DatabaseError when the file is unusable."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            # WAL + NORMAL syncs only at checkpoints: cheap, and crash-safe.
            conn.execute("PRAGMA synchronous = NORMAL")
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
        # file, so only its creator sets it.
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
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn
    except BaseException:
        conn.close()
        raise


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
    their own transactions with `BEGIN`.
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
        reason = str(exc)
    except (sqlite3.DatabaseError, _Unusable) as exc:
        reason = str(exc)
    except OSError as exc:
        reason = f"{exc.strerror or exc}"
    try:
        _remove(path)
        conn = _open(path)
    except (sqlite3.Error, _Unusable, OSError) as exc:
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


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def _memory() -> sqlite3.Connection:
    """A throwaway index with the real schema: callers need no special case."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return conn


def _fingerprint() -> str:
    """Identity of the code and layout behind cached rows; other rows are discarded.

    The package version alone would keep stale rows across edits of an editable
    install, so the parser modules' own (mtime, size) are part of it, as are the
    Python version (marshal's format) and the Skill field names (the row layout).
    """
    from . import __version__

    here = Path(__file__).parent
    parts = [__version__, str(SCHEMA_VERSION), sys.version.split()[0], ",".join(_SKILL_FIELDS)]
    for name in ("_frontmatter.py", "_fastyaml.py", "_validate.py", "_model.py", "_index.py"):
        try:
            st = os.stat(here / name)
        except OSError:
            parts.append(f"{name}:-")
            continue
        parts.append(f"{name}:{st.st_mtime_ns}:{st.st_size}")
    return "|".join(parts)


# Rows hold a Skill as a marshal-encoded tuple in field order: decoding is about
# five times faster than JSON plus `Skill(**kwargs)`, which is most of a warm run.
_SKILL_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Skill))
_CODEX = _SKILL_FIELDS.index("codex")
_TUPLE_FIELDS = frozenset({"allowed_tools", "disallowed_tools", "arguments", "paths"})
# Slot descriptors set fields of a frozen instance directly, as pickle does; only
# valid while Skill has no __post_init__ (checked, with a fallback).
_SETTERS: tuple[Any, ...] = tuple(vars(Skill)[name].__set__ for name in _SKILL_FIELDS)
_FAST_BUILD = not hasattr(Skill, "__post_init__")


def skill_values(skill: Skill) -> tuple[Any, ...]:
    """A skill as a marshal-friendly tuple in field order (`skill_from_values` inverts)."""
    values: list[Any] = [getattr(skill, name) for name in _SKILL_FIELDS]
    codex = skill.codex
    if codex is not None:
        values[_CODEX] = (
            dict(codex.interface),
            tuple(codex.tool_dependencies),
            codex.allow_implicit_invocation,
        )
    return tuple(values)


def _json_safe_values(skill: Skill) -> tuple[Any, ...]:
    """`skill_values` built from the JSON-safe form, for values marshal cannot hold."""
    from ._frontmatter import skill_to_dict

    data = skill_to_dict(skill)
    values = [
        tuple(data[name]) if name in _TUPLE_FIELDS and data[name] is not None else data[name]
        for name in _SKILL_FIELDS
    ]
    codex_data = data["codex"]
    if codex_data is not None:
        values[_CODEX] = (
            codex_data.get("interface") or {},
            tuple(codex_data.get("tool_dependencies") or ()),
            codex_data.get("allow_implicit_invocation"),
        )
    return tuple(values)


def _encode_skill(skill: Skill) -> bytes:
    try:
        return marshal.dumps(skill_values(skill))
    except ValueError:
        # A value marshal cannot hold (a date, a Mapping subclass): store the
        # JSON-safe form the rest of skillpack uses for the same skill.
        return marshal.dumps(_json_safe_values(skill))


def _decode_skill(blob: bytes) -> Skill:
    return skill_from_values(marshal.loads(blob))


def skill_from_values(values: Any) -> Skill:
    """The Skill that `skill_values` described (after a marshal round trip)."""
    if type(values) is not tuple or len(values) != len(_SKILL_FIELDS):
        raise ValueError("cached skill row has the wrong shape")
    codex = values[_CODEX]
    if codex is not None:
        metadata = CodexMetadata(
            interface=codex[0], tool_dependencies=codex[1], allow_implicit_invocation=codex[2]
        )
        values = values[:_CODEX] + (metadata,) + values[_CODEX + 1 :]
    if not _FAST_BUILD:
        return Skill(**dict(zip(_SKILL_FIELDS, values, strict=True)))
    skill = object.__new__(Skill)
    for setter, value in zip(_SETTERS, values, strict=True):
        setter(skill, value)
    return skill


def problem_values(problems: Sequence[Problem]) -> tuple[tuple[Any, ...], ...]:
    """Problems as marshal-friendly tuples (`problems_from_values` inverts)."""
    return tuple((p.path, p.severity, p.code, p.message, p.field, p.line) for p in problems)


def problems_from_values(values: Any) -> tuple[Problem, ...]:
    """The problems `problem_values` described."""
    return tuple(
        Problem(path=path, severity=severity, code=code, message=message, field=field, line=line)
        for path, severity, code, message, field, line in values
    )


def _encode_problems(problems: Sequence[Problem]) -> bytes:
    return marshal.dumps(problem_values(problems))


def _decode_problems(blob: bytes) -> tuple[Problem, ...]:
    return problems_from_values(marshal.loads(blob))


_NO_PROBLEMS = _encode_problems(())


class FileKey(NamedTuple):
    """What identifies one version of one SKILL.md and its parse inputs.

    A NamedTuple rather than a dataclass: one is built per skill per run, on the
    warm path, where a frozen dataclass's construction cost shows.
    """

    real_path: str
    path: str
    """The path it was discovered at (it appears in the skill and its problems)."""
    mtime_ns: int
    size: int
    ino: int
    codex: str
    """`path|mtime_ns|size` of the `agents/openai.yaml` sidecar, or empty."""


class CachedParse(NamedTuple):
    """A parse result as stored: location fields are those of the run that stored it.

    A NamedTuple for the same reason as `FileKey`: one per skill per warm run.
    """

    skill: Skill | None
    problems: tuple[Problem, ...]


Listing = tuple[int, tuple[tuple[str, bool], ...], tuple[str, ...], bool]
"""One folder as the walk needs it: (SKILL.md entry: 0 none, 1 plain, 2 symlink;
sorted `(name, is_symlink)` of candidate subfolders; plugin marker names; whether
it is a virtualenv)."""


class SkillCache:
    """Parse results and folder listings, valid while the files they came from are.

    - Parses are keyed by `(real path, strict)` and valid while the `FileKey`
      matches. Scope, rank, root and plugin are not part of the key: the caller
      re-applies them with `dataclasses.replace`, because reaching the same file
      from another root changes them but not the parse.
    - Listings are keyed by folder path and valid while the folder's
      `(mtime_ns, ctime_ns)` match: adding, removing or renaming an entry changes
      both, so an unchanged tree is walked with `stat` calls only.

    All rows are loaded with one query per table on first use; writes are buffered
    and committed in one transaction by `commit()`.
    """

    def __init__(self, conn: sqlite3.Connection, *, strict: bool) -> None:
        self._conn = conn
        self._strict = int(strict)
        self._loaded = False
        self._stale = False
        # real_path -> (strict, path, root, mtime_ns, size, ino, codex, skill, problems)
        self._files: dict[tuple[str, int], tuple[Any, ...]] = {}
        # folder -> (root, mtime_ns, ctime_ns, listing blob)
        self._dirs: dict[str, tuple[Any, ...]] = {}
        self._file_writes: list[tuple[Any, ...]] = []
        self._dir_writes: list[tuple[Any, ...]] = []
        self._file_deletes: list[tuple[str, int]] = []
        self._dir_deletes: list[tuple[str]] = []
        self._root_writes: list[tuple[str, str, bytes]] = []
        self._checked: bool | None = None
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
        """Open the index file under `cache_dir` (see `index_path`)."""
        return cls(connect(index_path(cache_dir), problems=problems), strict=strict)

    def _current(self) -> bool:
        """Whether the rows come from this code (checked once); stale rows are ignored."""
        if self._checked is None:
            try:
                row = self._conn.execute(
                    "SELECT value FROM skill_cache_meta WHERE key = 'parser'"
                ).fetchone()
                self._checked = row is not None and row[0] == _fingerprint()
            except sqlite3.Error:
                self._checked = False
            # Rows from other code are treated as absent; the next commit clears them.
            self._stale = not self._checked
        return self._checked

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if not self._current():
            return
        try:
            for row in self._conn.execute(
                "SELECT real_path, strict, path, root, mtime_ns, size, ino, codex, skill,"
                " problems FROM skill_cache"
            ):
                self._files[(row[0], row[1])] = row[2:]
            for row in self._conn.execute(
                "SELECT path, root, mtime_ns, ctime_ns, listing FROM skill_cache_dirs"
            ):
                self._dirs[row[0]] = row[1:]
        except sqlite3.Error:
            self._files.clear()
            self._dirs.clear()
            self._stale = True

    def snapshot(self, key: str) -> Any | None:
        """The stored replay of one root's walk (see `_discover._replay_root`), if any.

        Read with its own query, so a fully unchanged run never loads the per-file
        and per-folder rows at all.
        """
        if not self._current():
            return None
        try:
            row = self._conn.execute(
                "SELECT snapshot FROM skill_cache_roots WHERE key = ?", (key,)
            ).fetchone()
            return None if row is None else marshal.loads(row[0])
        except (sqlite3.Error, ValueError, TypeError, EOFError):
            return None

    def store_snapshot(self, key: str, root: str, snapshot: tuple[Any, ...]) -> None:
        """Buffer one root's replay for `commit()` (skipped if marshal cannot hold it)."""
        try:
            blob = marshal.dumps(snapshot)
        except ValueError:
            return
        self._root_writes.append((key, root, blob))

    def lookup(self, key: FileKey | tuple[str, str, int, int, int, str]) -> CachedParse | None:
        """The stored parse of this exact file version, or None to parse it."""
        self._load()
        row = self._files.get((key[0], self._strict))
        # Row and key share the layout (path, mtime_ns, size, ino, codex) at these
        # offsets: one tuple comparison instead of five.
        if row is None or row[0] != key[1] or row[2:6] != key[2:6]:
            return None
        skill_blob, problems_blob = row[6], row[7]
        try:
            skill = _decode_skill(skill_blob) if skill_blob is not None else None
            problems = _decode_problems(problems_blob) if problems_blob != _NO_PROBLEMS else ()
        except (ValueError, TypeError, EOFError, IndexError):
            return None  # a damaged row: parse again, the commit overwrites it
        self.hits += 1
        return CachedParse(skill, problems)

    def store(
        self,
        key: FileKey | tuple[str, str, int, int, int, str],
        *,
        root: str,
        skill: Skill | None,
        problems: Sequence[Problem],
    ) -> None:
        """Buffer one parse result for `commit()`."""
        self._file_writes.append(
            (
                key[0],
                self._strict,
                key[1],
                root,
                *key[2:6],
                None if skill is None else _encode_skill(skill),
                _encode_problems(problems),
            )
        )

    def listing(self, folder: str, mtime_ns: int, ctime_ns: int) -> Listing | None:
        """The stored listing of `folder` if it has not changed since, else None."""
        self._load()
        row = self._dirs.get(folder)
        if row is None or row[1] != mtime_ns or row[2] != ctime_ns:
            return None
        try:
            listing: Listing = marshal.loads(row[3])
        except (ValueError, TypeError, EOFError):
            return None
        return listing

    def store_listing(
        self, folder: str, *, root: str, mtime_ns: int, ctime_ns: int, listing: Listing
    ) -> None:
        """Buffer one folder listing for `commit()`."""
        self._dir_writes.append((folder, root, mtime_ns, ctime_ns, marshal.dumps(listing)))

    def forget_missing(
        self, roots: Iterable[str], files: Iterable[str], folders: Iterable[str]
    ) -> None:
        """Buffer deletion of rows under `roots` whose file or folder was not seen now."""
        self._load()
        scanned = set(roots)
        present = set(files)
        self._file_deletes.extend(
            key for key, row in self._files.items() if row[1] in scanned and key[0] not in present
        )
        listed = set(folders)
        self._dir_deletes.extend(
            (path,) for path, row in self._dirs.items() if row[0] in scanned and path not in listed
        )

    def commit(self) -> None:
        """Write buffered rows in one transaction; skip quietly if the lock is busy.

        Skipping is correct: the rows are a cache, and this run's result was built
        from the files themselves.
        """
        self._current()
        pending = (
            self._file_writes,
            self._dir_writes,
            self._file_deletes,
            self._dir_deletes,
            self._root_writes,
        )
        if not (self._stale or any(pending)):
            return
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self._stale:
                    conn.execute("DELETE FROM skill_cache")
                    conn.execute("DELETE FROM skill_cache_dirs")
                    conn.execute("DELETE FROM skill_cache_roots")
                    conn.execute(
                        "INSERT OR REPLACE INTO skill_cache_meta (key, value) VALUES ('parser', ?)",
                        (_fingerprint(),),
                    )
                conn.executemany(
                    "DELETE FROM skill_cache WHERE real_path = ? AND strict = ?",
                    self._file_deletes,
                )
                conn.executemany("DELETE FROM skill_cache_dirs WHERE path = ?", self._dir_deletes)
                conn.executemany(
                    "INSERT OR REPLACE INTO skill_cache (real_path, strict, path, root,"
                    " mtime_ns, size, ino, codex, skill, problems)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    self._file_writes,
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO skill_cache_dirs (path, root, mtime_ns, ctime_ns,"
                    " listing) VALUES (?, ?, ?, ?, ?)",
                    self._dir_writes,
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO skill_cache_roots (key, root, snapshot)"
                    " VALUES (?, ?, ?)",
                    self._root_writes,
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error:
            pass
        for buffer in pending:
            buffer.clear()
        self._stale = False

    def close(self) -> None:
        """Close the connection (pending writes are dropped; call `commit` first)."""
        self._conn.close()
