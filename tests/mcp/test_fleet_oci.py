"""Two stateless replicas behind HAProxy serving one OCI tag (`--from oci://… --poll`):
a collection pushed under the tag reaches both within two poll periods, and with the
registry gone both keep serving while `/readyz` says the source is stale."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fleet_support import LIST_TOOLS, Fleet, fleet, haproxy_missing, listed
from skill_client import skill_md, write

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "install"))
from oci_support import needs_registry, run_registry  # noqa: E402

from skillpack.install._oci_publish import publish_oci  # noqa: E402

pytestmark = [
    pytest.mark.skipif(haproxy_missing() is not None, reason=str(haproxy_missing())),
    needs_registry,
]

POLL = 1.0


def readiness(served: Fleet) -> dict[str, dict[str, Any]]:
    """Each replica's `/readyz` answer (status 200 asserted), by replica."""
    seen: dict[str, dict[str, Any]] = {}
    for _ in range(20):
        status, replica, body = served.get("/readyz")
        assert status == 200, body
        seen[replica] = body
        if len(seen) == 2:
            break
    return seen


def test_a_new_tag_reaches_both_replicas_within_two_polls_and_a_registry_down_is_stale(
    tmp_path: Path,
) -> None:
    source = write(
        tmp_path / "src", {"alpha/SKILL.md": skill_md("alpha"), "beta/SKILL.md": skill_md("beta")}
    )
    empty = tmp_path / "no-folder-skills"
    empty.mkdir()
    with contextlib.ExitStack() as registry_up:
        registry = registry_up.enter_context(run_registry(tmp_path / "registry"))
        repo = f"{registry.host}/team/skills"
        first = publish_oci(str(source), repo, tags=["stable"]).artifacts[-1].digest
        reference = f"oci://{repo}:stable"
        with fleet(empty, tmp_path, extra=("--from", reference, "--poll", f"{POLL:g}")) as served:
            status, _replica, payload = served.post(LIST_TOOLS)
            assert status == 200 and "alpha" in listed(payload) and "gamma" not in listed(payload)
            fresh = readiness(served)
            assert {body["source"]["digest"] for body in fresh.values()} == {first}
            assert {body["source"]["state"] for body in fresh.values()} == {"fresh"}

            write(source, {"gamma/SKILL.md": skill_md("gamma", "Gamma things. Use it for gamma.")})
            second = publish_oci(str(source), repo, tags=["stable"]).artifacts[-1].digest
            pushed = time.monotonic()
            reached: dict[str, float] = {}
            while time.monotonic() - pushed < 10 and len(reached) < 2:
                status, replica, payload = served.post(LIST_TOOLS)
                if status == 200 and "gamma" in listed(payload):
                    reached.setdefault(replica, time.monotonic() - pushed)
                time.sleep(0.02)
            print(f"\nthe new tag reached the replicas after {reached} s (--poll {POLL:g})")
            assert set(reached) == {"a", "b"}, f"listed gamma: {reached}"
            assert max(reached.values()) <= 2 * POLL

            registry_up.close()  # the registry stops; the replicas keep what they serve
            stopped = time.monotonic()
            stale: dict[str, dict[str, Any]] = {}
            while time.monotonic() - stopped < 10 and len(stale) < 2:
                stale |= {
                    replica: body
                    for replica, body in readiness(served).items()
                    if body["source"]["state"] == "stale"
                }
                time.sleep(0.1)
            assert set(stale) == {"a", "b"}
            for body in stale.values():
                assert body["status"] == "ready"
                detail = body["source"]
                assert detail["reference"] == reference and detail["digest"] == second
                assert registry.host in detail["error"] and detail["failing_since"]
            print(f"/readyz fresh: {fresh['a']}\n/readyz stale: {stale['a']}")
            for _ in range(4):
                status, _replica, payload = served.post(LIST_TOOLS)
                assert status == 200 and "gamma" in listed(payload)
