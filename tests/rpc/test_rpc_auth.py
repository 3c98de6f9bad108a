"""`skillpack serve --http` with bearer JWTs (issue 42), a real subprocess on
127.0.0.1: bad tokens are 401 with the RFC 9728 pointer, the metadata is served, and
each group's token sees its own catalog through every method, a hidden skill answering
as a missing one and a session of one grant unknown to another."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from auth_support import (
    AUDIENCE,
    GRANTS,
    SEES,
    Issuer,
    bad_tokens,
    isolated_env,
    server_process,
    team_token,
    write_auth_config,
    write_team,
)

SERVE = [sys.executable, "-c", "from skillpack.cli import main; main()", "serve"]


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture(scope="module")
def served(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("serve-team")
    tree = write_team(base / "skills")
    jwks = issuer.write_jwks(base / "jwks.json")
    project = base / "project"
    write_auth_config(project, jwks=str(jwks), grants=GRANTS)
    argv = [
        *SERVE,
        "--http",
        "--port",
        "0",
        "--json",
        "--root",
        str(tree),
        "--no-system",
        "--cwd",
        str(project),
    ]
    errors = base / "server.err"
    with server_process(argv, env=isolated_env(base / "home"), stderr_path=errors) as info:
        yield {**info, "errors": errors}


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
