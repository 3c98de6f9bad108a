"""`skillpack mcp --transport http` as one replica of a fleet: its `/readyz` checks.

Ready once the served view of the catalog is built (the thread `SkillServer.prepare`
started has finished and the view answers) and the index file is readable
(`runtime._readiness.index_problem`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from .._health import Health
from ..runtime._readiness import index_problem

if TYPE_CHECKING:
    from ._server import SkillServer


def server_health(server: SkillServer, building: threading.Thread) -> Health:
    """The health answers of `server`, whose view `building` builds."""

    def catalog() -> str | None:
        if building.is_alive():
            return "the catalog is being built"
        try:
            version = server.view().version
        except Exception as exc:  # noqa: BLE001 - told in the detail, the server lives on
            return f"the catalog cannot be built: {exc}"
        return None if version else "the catalog has no version yet"

    return Health({"catalog": catalog, "index": index_problem})
