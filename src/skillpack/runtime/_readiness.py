"""What a server's `/readyz` checks (`_health.Health`): the catalog is built and the
index file can be read.

The index is a cache: a file not written yet is fine (the first search creates it);
one that exists must open read-only and carry skillpack's schema version.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def index_problem(path: Path | None = None) -> str | None:
    """None when the index file at `path` (default: `index._cache.index_path()`) is
    readable or not written yet; else why it cannot be read."""
    from ..index._cache import SCHEMA_VERSION, index_path

    path = path if path is not None else index_path()
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=1.0)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"the index {path} cannot be read ({exc}); check its permissions or delete it"
    if version not in (0, SCHEMA_VERSION):
        return f"the index {path} has schema version {version}, not {SCHEMA_VERSION}"
    return None
