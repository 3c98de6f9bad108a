"""The search index a session's tools, turns and picker search: the persistent
index file, else memory. Below `_session` and `_tools`, so each of them opens one."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..index._search import SkillSearch
    from ._readers import SkillReader


def new_search(reader: SkillReader, connection: Any = None) -> SkillSearch:
    """A `SkillSearch` over `connection` (default: the persistent index, else memory)
    that reads bodies through `reader`."""
    from ..index._search import SkillSearch

    conn = connection if connection is not None else _open_search_connection()
    # Readers that can read just the head of a body make index builds cheaper.
    read_head = getattr(reader, "read_body_head", None)
    return SkillSearch(conn, read_body=reader.read_body, read_head=read_head)


def _open_search_connection() -> Any:
    import sqlite3

    from ..index._cache import connect, index_path

    try:
        conn = connect(index_path())
    except Exception:  # noqa: BLE001 - fall back to memory rather than fail a search
        conn = sqlite3.connect(":memory:", check_same_thread=False)
    return conn


class TurnSearch:
    """The search a session's turns suggest from, opened on first use. Thread-safe."""

    def __init__(self, reader: SkillReader) -> None:
        self._reader = reader
        self._search: SkillSearch | None = None
        self._lock = threading.Lock()

    def get(self) -> SkillSearch:
        """The search, opened now if it is not yet (the persistent index, else memory)."""
        with self._lock:
            if self._search is None:
                self._search = new_search(self._reader)
            return self._search

    def close(self) -> None:
        """Close the index connection; a later turn opens a new one."""
        with self._lock:
            search, self._search = self._search, None
        if search is not None:
            search.close()
