"""`GET /healthz` and `GET /readyz`: the health answers of both HTTP servers.

A load balancer asks `/healthz` whether the process answers (always 200 while it
does) and `/readyz` whether it can serve (200 when every readiness check passes, else
503 with each failing check's reason in the JSON `checks`). Details are what a
replica reports beside its checks without failing them (`source`: the OCI
collection served and whether its last check failed, `runtime._oci_source`). Both are answered after
the Host and Origin checks of `_httpguard.HostGuard` (a balancer's own `Host` is
accepted once named with `--allowed-host`) and before any bearer token or JWT check:
they reveal nothing about the skills.

A pure-stdlib base module, so the `mcp` and `rpc` layers share it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Final

HEALTH_PATH: Final = "/healthz"
READY_PATH: Final = "/readyz"
HEALTH_PATHS: Final = (HEALTH_PATH, READY_PATH)

Check = Callable[[], "str | None"]
"""A readiness check: None when it passes, else why not (one sentence)."""
Detail = Callable[[], object]
"""A readiness detail: a JSON value shown in `/readyz` that never fails it."""


def is_health_path(path: str) -> bool:
    """Whether a request path (query string allowed) is `/healthz` or `/readyz`."""
    return path.split("?", 1)[0] in HEALTH_PATHS


class Health:
    """The health answers of one server, over its named readiness checks."""

    def __init__(
        self, checks: Mapping[str, Check], *, details: Mapping[str, Detail] | None = None
    ) -> None:
        self.checks = dict(checks)
        self.details = dict(details or {})

    def with_details(self, details: Mapping[str, Detail]) -> Health:
        """The same checks, with `details` added to what `/readyz` shows."""
        return Health(self.checks, details={**self.details, **details})

    def readiness(self) -> dict[str, str]:
        """Each check's name and its result ("ok" or the reason it fails)."""
        results: dict[str, str] = {}
        for name, check in self.checks.items():
            try:
                problem = check()
            except Exception as exc:  # noqa: BLE001 - a failing check is a 503, not a crash
                problem = f"the check failed: {exc!r}"
            results[name] = "ok" if problem is None else problem
        return results

    def answer(self, path: str) -> tuple[int, bytes]:
        """The status and JSON body for a health path (`is_health_path`)."""
        if path.split("?", 1)[0] == HEALTH_PATH:
            return 200, json.dumps({"status": "ok"}).encode()
        checks = self.readiness()
        ready = all(result == "ok" for result in checks.values())
        body: dict[str, object] = {"status": "ready" if ready else "not ready", "checks": checks}
        for name, detail in self.details.items():
            try:
                body[name] = detail()
            except Exception as exc:  # noqa: BLE001 - a detail never fails readiness
                body[name] = {"error": f"the detail failed: {exc!r}"}
        return (200 if ready else 503), json.dumps(body).encode()
