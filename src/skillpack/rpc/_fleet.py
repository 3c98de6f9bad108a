"""`skillpack serve --transport http` as one replica of a fleet: its `/readyz` checks and
`--stateless`.

Ready once the server's own workspace is discovered (started on a thread of its own
when the server starts) and the index file is readable
(`runtime._readiness.index_problem`). Stateless, the server keeps no session between
requests: `session.open`, `session.close` and `turn.prepare` (which need one) answer
the `stateless` error; every other method takes its `cwd` per request.
"""

from __future__ import annotations

import threading
from typing import Any

from .._health import Health
from ..runtime._readiness import index_problem
from ._codes import RPC_CODES, RpcFailure
from ._live import Live
from ._methods import Methods

SESSION_METHODS = ("session.open", "session.close", "turn.prepare")
"""The methods that need a session kept between requests."""


def server_health(live: Live) -> Health:
    """The health answers of a server over `live`; starts discovering its own workspace."""
    failed: list[BaseException] = []

    def discover() -> None:
        try:
            live.workspace()
        except Exception as exc:  # noqa: BLE001 - told by /readyz; requests report it too
            failed.append(exc)

    building = threading.Thread(target=discover, name="skillpack-rpc-ready", daemon=True)
    building.start()

    def catalog() -> str | None:
        if building.is_alive():
            return "the catalog is being built"
        if failed:
            return f"the catalog cannot be built: {failed[-1]}"
        return None

    return Health({"catalog": catalog, "index": index_problem})


def make_stateless(methods: Methods) -> None:
    """Answer the session methods of `methods` with the `stateless` error."""

    def refuse(_params: Any) -> Any:
        raise RpcFailure(
            RPC_CODES["stateless"],
            "This server runs with --stateless: it keeps no session between requests, so "
            f"{', '.join(SESSION_METHODS)} are not served. Call skills.* and "
            "context.inspect with `cwd`, or start the server without --stateless.",
        )

    for name in SESSION_METHODS:
        methods.table[name] = refuse
