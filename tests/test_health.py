"""`/healthz` and `/readyz` answers, and the `--allowed-host` names of the one guard."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from skillpack._health import Health, is_health_path
from skillpack._httpguard import HostGuard, parse_allowed_host
from skillpack.config._schema import merge_layers, parse_config
from skillpack.runtime._readiness import index_problem


def test_healthz_is_ok_whatever_the_checks_say() -> None:
    health = Health({"catalog": lambda: "the catalog is being built"})
    assert health.answer("/healthz") == (200, b'{"status": "ok"}')


def test_readyz_is_503_with_each_failing_reason_until_every_check_passes() -> None:
    state = {"built": False}

    def catalog() -> str | None:
        return None if state["built"] else "the catalog is being built"

    def broken() -> str | None:
        raise OSError("disk gone")

    health = Health({"catalog": catalog, "index": lambda: None})
    status, body = health.answer("/readyz")
    assert status == 503
    assert json.loads(body) == {
        "status": "not ready",
        "checks": {"catalog": "the catalog is being built", "index": "ok"},
    }
    state["built"] = True
    assert health.answer("/readyz?x=1")[0] == 200
    status, body = Health({"index": broken}).answer("/readyz")
    assert status == 503
    assert "disk gone" in json.loads(body)["checks"]["index"]


def test_only_the_two_health_paths_are_health_paths() -> None:
    assert is_health_path("/healthz") and is_health_path("/readyz?full")
    assert not is_health_path("/healthz/x") and not is_health_path("/mcp")


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("lb.internal", ("lb.internal", "")),
        ("LB:8080", ("lb", "8080")),
        ("[::2]:80", ("::2", "80")),
    ],
)
def test_allowed_host_values_are_host_and_optional_port(
    value: str, parsed: tuple[str, str]
) -> None:
    assert parse_allowed_host(value) == parsed


@pytest.mark.parametrize("value", ["", "lb:http", "lb/x", "user@lb", "[::1"])
def test_a_malformed_allowed_host_says_what_it_wants(value: str) -> None:
    with pytest.raises(ValueError, match="is not HOST or HOST:PORT"):
        parse_allowed_host(value)


def test_an_allowed_host_passes_beside_loopback_and_nothing_else_does() -> None:
    guard = HostGuard("127.0.0.1", token="t", port=8765, forwarded=["lb.internal", "proxy:8080"])
    assert guard.host_ok("127.0.0.1:8765")
    assert guard.host_ok("lb.internal") and guard.host_ok("LB.internal:1234")
    assert guard.host_ok("proxy:8080") and not guard.host_ok("proxy:8081")
    assert not guard.host_ok("proxy") and not guard.host_ok("evil.example:8765")
    assert guard.origin_ok("https://lb.internal") and guard.origin_ok("http://proxy:8080")
    assert not guard.origin_ok("http://proxy:9") and not guard.origin_ok("http://evil")
    # The token is still required of a forwarded name; the place check alone is not.
    assert guard.check("lb.internal", None, None) is not None
    assert guard.check("lb.internal", None, "Bearer t") is None
    assert guard.place_check("lb.internal", None) is None
    refused = guard.place_check("evil.example", None)
    assert refused is not None and refused[0] == 421 and "--allowed-host" in refused[1]


def test_server_allowed_hosts_are_read_from_the_config() -> None:
    layer, problems = parse_config(
        '[server]\nallowed_hosts = ["lb.internal:8080"]\n', path="/p/c.toml", base="/p"
    )
    assert problems == ()
    config = merge_layers([layer])
    assert config.server_allowed_hosts == ("lb.internal:8080",)
    assert config.to_dict()["server"] == {
        "allowed_hosts": ["lb.internal:8080"],
        "from": None,
        "poll": None,
    }
    _layer, problems = parse_config('[server]\nallowed_hosts = "lb"\n', path="/p/c", base="/p")
    assert problems


def test_the_oci_collection_a_server_serves_is_read_from_the_config() -> None:
    text = '[server]\nfrom = "oci://ghcr.io/org/skills:stable"\npoll = 30\n'
    layer, problems = parse_config(text, path="/p/c.toml", base="/p")
    assert problems == ()
    config = merge_layers([layer])
    assert (config.server_from, config.server_poll) == ("oci://ghcr.io/org/skills:stable", 30)
    _layer, problems = parse_config("[server]\npoll = 0\n", path="/p/c", base="/p")
    assert [p.code for p in problems] and "at least 1" in problems[0].message


def test_readyz_shows_its_details_beside_the_checks_and_they_never_fail_it() -> None:
    def source() -> object:
        return {"state": "stale", "error": "the registry cannot be reached"}

    def broken() -> object:
        raise OSError("gone")

    health = Health({"catalog": lambda: None}).with_details({"source": source})
    status, body = health.answer("/readyz")
    assert status == 200
    assert json.loads(body) == {
        "status": "ready",
        "checks": {"catalog": "ok"},
        "source": {"state": "stale", "error": "the registry cannot be reached"},
    }
    status, body = health.with_details({"source": broken}).answer("/readyz")
    assert status == 200 and "the detail failed" in json.loads(body)["source"]["error"]


def test_the_index_is_ready_when_absent_or_readable_and_not_when_foreign(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    assert index_problem(path) is None
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    problem = index_problem(path)
    assert problem is not None and "schema version 999" in problem
    path.unlink()
    path.write_bytes(b"not a database at all" * 100)
    problem = index_problem(path)
    assert problem is not None and "cannot be read" in problem
