"""Two stateless replicas behind a real HAProxy (`docs/fleet/haproxy.cfg`),
health-checked on `/healthz` with the balancer's own Host (`--allowed-host`)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from fleet_support import LIST_TOOLS, call, fleet, haproxy_missing, initialize, listed
from skill_client import skill_md, write

pytestmark = pytest.mark.skipif(haproxy_missing() is not None, reason=str(haproxy_missing()))

CLIENTS = 4
SESSIONS = 20


def test_four_clients_run_twenty_sessions_each_through_the_balancer_without_an_error(
    tmp_path: Path,
) -> None:
    shared = write(tmp_path / "shared", {"alpha/SKILL.md": skill_md("alpha")})
    errors: list[str] = []
    replicas: Counter[str] = Counter()
    lock = threading.Lock()
    with fleet(shared, tmp_path) as served:

        def client(number: int) -> None:
            for session in range(SESSIONS):
                for message in (
                    initialize(f"client-{number}"),
                    LIST_TOOLS,
                    call("skill_load", {"name": "alpha"}),
                ):
                    try:
                        status, replica, payload = served.post(message)
                    except Exception as exc:  # noqa: BLE001 - counted, then asserted
                        status, replica, payload = 0, "", repr(exc)
                    ok = status == 200 and isinstance(payload, dict) and "result" in payload
                    if ok and message["method"] == "tools/call":
                        ok = payload["result"].get("isError") is not True
                    with lock:
                        replicas[replica] += 1
                        if not ok:
                            errors.append(f"client {number} session {session}: {status} {payload}")

        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    assert sum(replicas.values()) == CLIENTS * SESSIONS * 3
    assert set(replicas) == {"a", "b"}  # both replicas answered


def test_a_skill_added_to_the_shared_folder_is_listed_by_both_replicas_within_ten_seconds(
    tmp_path: Path,
) -> None:
    shared = write(tmp_path / "shared", {"alpha/SKILL.md": skill_md("alpha")})
    with fleet(shared, tmp_path) as served:
        status, _replica, payload = served.post(LIST_TOOLS)
        assert status == 200 and "beta" not in listed(payload)
        write(shared, {"beta/SKILL.md": skill_md("beta", "Beta things. Use it for beta.")})
        added = time.monotonic()
        listing: set[str] = set()
        while time.monotonic() - added < 10 and listing != {"a", "b"}:
            status, replica, payload = served.post(LIST_TOOLS)
            if status == 200 and "beta" in listed(payload):
                listing.add(replica)
            time.sleep(0.05)
        assert listing == {"a", "b"}, f"listed beta: {sorted(listing)}"
