"""`skillpack serve --transport http` with bearer JWTs, a real subprocess on
127.0.0.1: bad tokens are 401 with the RFC 9728 pointer, the metadata is served, and
each group's token sees its own catalog through every method, a hidden skill answering
as a missing one and a session of one grant unknown to another."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from auth_support import (
    AUDIENCE,
    GRANTS,
    SEES,
    Issuer,
    bad_tokens,
    serve_team,
    team_token,
    write_team,
)
from conftest import isolated_env
from skillpack._auth import AuthSettings, BearerAuth, JwtVerifier
from skillpack.discovery._options import DiscoveryOptions
from skillpack.rpc._dispatch import Hub
from skillpack.rpc._http import RpcHTTPServer
from skillpack.rpc._live import Discovery
from skillpack.rpc._server import ServeOptions, running
from skillpack.select._grants import Grant, SkillGrant


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture(scope="module")
def served(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("serve-team")
    jwks = issuer.write_jwks(base / "jwks.json")
    with serve_team("serve", base, jwks=str(jwks), env=isolated_env(base / "home")) as info:
        yield info


def http(
    url: str, token: str | None, body: Any = None, *, method: str = "POST"
) -> tuple[int, dict[str, str], Any]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return int(error.code), dict(error.headers), json.loads(error.read() or b"null")


def call(info: dict[str, Any], token: str, method: str, **params: Any) -> Any:
    status, _headers, reply = http(
        info["rpc"], token, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    )
    assert status == 200, reply
    return reply.get("result", reply.get("error"))


def test_serve_refuses_every_bad_token_with_the_metadata_pointer_and_writes_no_token_file(
    served: dict[str, Any], issuer: Issuer
) -> None:
    assert served["token_file"] is None
    metadata = "https://skills.example/.well-known/oauth-protected-resource/mcp"
    assert served["metadata"] == metadata
    ping = {"jsonrpc": "2.0", "id": 1, "method": "rpc.discover"}
    for kind, token in bad_tokens(issuer).items():
        status, headers, _reply = http(served["rpc"], token, ping)
        assert status == 401, kind
        assert f'resource_metadata="{metadata}"' in headers["WWW-Authenticate"], kind
    for path in (
        "/.well-known/oauth-protected-resource/rpc",
        "/.well-known/oauth-protected-resource",
    ):
        status, _headers, document = http(served["url"] + path, None, method="GET")
        assert status == 200
        assert document["resource"] == AUDIENCE
        assert document["authorization_servers"] == ["https://idp.example/realms/team"]
    status, _headers, _reply = http(served["rpc"], team_token(issuer, "hr"), ping)
    assert status == 200


def test_each_group_sees_its_catalog_and_a_hidden_skill_answers_as_a_missing_one(
    served: dict[str, Any], issuer: Issuer
) -> None:
    for group, names in SEES.items():
        token = team_token(issuer, group)
        (listing,) = call(served, token, "skills.list")["data"]
        assert sorted(s["name"] for s in listing["skills"]) == names
        assert all(entry["name"] in names for entry in listing["left_out"] if entry["name"])
        found = call(served, token, "skills.search", query="skill of the team", limit=10)
        assert {r["name"] for r in found["data"]["results"]} <= set(names)
    finance = team_token(issuer, "finance")

    def answers(name: str) -> dict[str, Any]:
        session = call(served, finance, "session.open")["session"]
        turn = call(served, finance, "turn.prepare", session=session, text=f"${name} now")
        return {
            "skills.load": call(served, finance, "skills.load", name=name),
            "skills.read_file": call(
                served, finance, "skills.read_file", skill=name, path="references/notes.md"
            ),
            "session.skills.load": call(served, finance, "skills.load", name=name, session=session),
            "turn.prepare": {k: v for k, v in turn.items() if k not in ("session",)},
        }

    hidden, missing = answers("hr-payroll"), answers("no-such-skill")
    assert hidden["skills.load"]["ok"] is False
    for view in hidden:
        shown = json.dumps(hidden[view], sort_keys=True).replace("hr-payroll", "<N>")
        absent = json.dumps(missing[view], sort_keys=True).replace("no-such-skill", "<N>")
        assert shown == absent, view
    hr = team_token(issuer, "hr")
    assert call(served, hr, "skills.load", name="hr-payroll")["ok"] is True
    # A session opened by one grant is not found by another.
    session = call(served, hr, "session.open")["session"]
    not_found = call(served, finance, "turn.prepare", session=session, text="hi")
    assert not_found["data"]["field"] == "session"
    assert call(served, finance, "session.close", session=session) == {"closed": False}
    assert call(served, hr, "session.close", session=session) == {"closed": True}
    audit = [json.loads(line) for line in served["errors"].read_text("utf-8").splitlines() if line]
    loads = [a for a in audit if a.get("method") == "skills.load"]
    assert {(a["sub"], a["skill"]) for a in loads} >= {("fay", "hr-payroll"), ("hal", "hr-payroll")}


# -- in process: the same server object, its guard, views and notifications ----------


@pytest.fixture
def in_process(tmp_path: Path, issuer: Issuer) -> Iterator[tuple[RpcHTTPServer, Path]]:
    tree = write_team(tmp_path / "skills")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    settings = AuthSettings(
        jwks=str(issuer.write_jwks(tmp_path / "jwks.json")),
        issuer="https://idp.example/realms/team",
        audience=AUDIENCE,
    )
    bearer = BearerAuth(JwtVerifier(settings), endpoint="/rpc")
    bearer.verifier.keys.load()
    options = ServeOptions(
        discovery=Discovery(
            cwd=str(project),
            options=DiscoveryOptions(
                extra_roots=(str(tree),), include_user=False, include_system=False
            ),
            refresh="manual",
        )
    )
    grants = [Grant(claim=c, value=v, skills=tuple(s)) for c, v, s in GRANTS]
    with running(options) as (dispatcher, hub):
        server = RpcHTTPServer(
            ("127.0.0.1", 0), dispatcher=dispatcher, hub=hub, token=None, auth=bearer, grants=grants
        )
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        try:
            yield server, tree
        finally:
            server.stopping.set()
            server.shutdown()
            server.server_close()
            thread.join(timeout=10)


def test_in_process_the_guard_refuses_serves_metadata_and_answers_each_grant(
    in_process: tuple[RpcHTTPServer, Path], issuer: Issuer
) -> None:
    server, _tree = in_process
    info = {"rpc": f"{server.url}/rpc"}
    status, headers, reply = http(info["rpc"], "garbage", {"jsonrpc": "2.0", "id": 1})
    assert status == 401
    assert 'error="invalid_token"' in headers["WWW-Authenticate"]
    assert reply["error"]["message"] == "The bearer token is not a JWT."
    status, _headers, document = http(
        server.url + "/.well-known/oauth-protected-resource/rpc", None, method="GET"
    )
    assert (status, document["resource"]) == (200, AUDIENCE)
    status, _headers, _reply = http(
        server.url + "/.well-known/oauth-protected-resource",
        None,
        method="GET",
    )
    assert status == 200
    for group, names in SEES.items():
        (listing,) = call(info, team_token(issuer, group), "skills.list")["data"]
        assert sorted(s["name"] for s in listing["skills"]) == names
        context = call(info, team_token(issuer, group), "context.inspect", include_skills=True)
        assert sorted(s["name"] for s in context["skills"]) == names


def read_event(stream: Any, name: str) -> dict[str, Any]:
    """The data of the next `name` event on a server-sent event stream."""
    event = None
    for raw in stream:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == name:
            return dict(json.loads(line[6:]))
    raise AssertionError(f"the stream ended before a {name} event")


def test_a_change_reaches_each_listener_as_its_grant_sees_it(
    in_process: tuple[RpcHTTPServer, Path], issuer: Issuer
) -> None:
    server, tree = in_process
    info = {"rpc": f"{server.url}/rpc"}
    finance = team_token(issuer, "finance")
    call(info, finance, "skills.list")  # opens the workspace
    request = urllib.request.Request(
        f"{server.url}/events", headers={"Authorization": f"Bearer {finance}"}
    )
    with urllib.request.urlopen(request, timeout=30) as stream:
        read_event(stream, "ready")
        for name in ("finance-new", "hr-new"):
            (tree / name).mkdir()
            (tree / name / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: New. Use it.\n---\nBody.\n", "utf-8"
            )
        reloaded = call(info, team_token(issuer, "hr"), "skills.reload")
        assert [s["name"] for s in reloaded["data"][0]["added"]] == ["hr-new"]
        change = read_event(stream, "skills/changed")
    assert [s["name"] for s in change["params"]["added"]] == ["finance-new"]


def test_the_hub_encodes_a_scoped_notification_once_per_grant() -> None:
    hub = Hub()
    seen: list[tuple[str, bytes]] = []
    calls: list[object] = []
    grant = SkillGrant(patterns=("a-*",))
    hub.subscribe(lambda method, frame: seen.append(("all", frame)))
    hub.subscribe(lambda method, frame: seen.append(("a", frame)), grant=grant)
    hub.subscribe(lambda method, frame: seen.append(("a2", frame)), grant=grant)

    def scoped(for_grant: object) -> dict[str, Any]:
        calls.append(for_grant)
        return {"only": "a"}

    hub.publish("skills/changed", {"every": "one"}, scoped=scoped)
    assert calls == [grant]
    shown = {who: json.loads(frame)["params"] for who, frame in seen}
    assert shown == {"all": {"every": "one"}, "a": {"only": "a"}, "a2": {"only": "a"}}


def test_in_process_a_session_of_one_grant_is_missing_for_another(
    in_process: tuple[RpcHTTPServer, Path], issuer: Issuer
) -> None:
    server, _tree = in_process
    info = {"rpc": f"{server.url}/rpc"}
    hr, finance = team_token(issuer, "hr"), team_token(issuer, "finance")
    session = call(info, hr, "session.open")["session"]
    assert call(info, hr, "skills.load", name="hr-payroll", session=session)["ok"] is True
    hidden = call(info, finance, "skills.search", query="payroll", session=session)
    assert hidden["data"]["field"] == "session"
    # Noting paths works on the caller's own session only, like every session method.
    noted = call(info, hr, "session.note_paths", session=session, paths=["src/app.py"])
    assert "opened" in noted, noted
    refused = call(info, finance, "session.note_paths", session=session, paths=["src/app.py"])
    assert refused["data"]["field"] == "session"
    assert call(info, finance, "session.close", session=session) == {"closed": False}
    assert call(info, hr, "session.close", session=session) == {"closed": True}
