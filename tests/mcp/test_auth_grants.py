"""`SkillServer` serving each request through its caller's grant (in process), and the
HTTP hook that admits callers (`mcp._auth`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError
from skill_client import all_resources, get_skill, list_skills, open_session, run

from auth_support import AUDIENCE, ISSUER, SEES, Issuer, team_token, write_team
from skillpack._auth import AuthSettings, BearerAuth, Caller, JwtVerifier, Principal
from skillpack.mcp import _server
from skillpack.mcp._auth import CALLER_KEY, McpAuth, SdkTokenVerifier, caller_of
from skillpack.mcp._server import SkillServer
from skillpack.select._grants import Grant, SkillGrant

PATTERNS = {
    "finance": ("finance-*", "public-*"),
    "hr": ("hr-*", "public-*"),
    "eng": ("eng-*", "public-*"),
}


@pytest.fixture
def server(tmp_path: Path) -> SkillServer:
    return SkillServer(open_session(write_team(tmp_path / "skills")))


def as_group(monkeypatch: pytest.MonkeyPatch, group: str | None) -> None:
    """Serve every request as a member of `group` (None: no caller, every skill)."""
    caller = None
    if group is not None:
        principal = Principal(subject=group, client_id="agent", scopes=())
        caller = Caller(principal=principal, grant=SkillGrant(patterns=PATTERNS[group]))
    monkeypatch.setattr(_server, "caller_of", lambda request: caller)


async def catalog(client: Client) -> dict[str, Any]:
    tools = await client.list_tools()
    load = next(t for t in tools.tools if t.name == "skill_load")
    problems = await client.read_resource("skillpack://problems")
    return {
        "skills": sorted(e["frontmatter"]["name"] for e in await list_skills(client)),
        "prompts": sorted(p.name for p in (await client.list_prompts()).prompts),
        "resources": [str(r.uri) for r in await all_resources(client)],
        "load": load.description or "",
        "problems": json.loads(problems.contents[0].text),  # type: ignore[union-attr]
    }


def test_each_grant_gets_its_own_catalog_through_every_list(
    server: SkillServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = {"finance-report", "finance-audit", "hr-payroll", "eng-deploy", "public-help"}
    for group, names in SEES.items():
        as_group(monkeypatch, group)
        seen = run(server, catalog)
        assert seen["skills"] == seen["prompts"] == names
        for hidden in every - set(names):
            assert hidden not in seen["load"]
            assert not any(f"/{hidden}/" in uri for uri in seen["resources"])
            assert hidden not in json.dumps(seen["problems"])
    as_group(monkeypatch, None)
    assert run(server, catalog)["skills"] == sorted(every)
    assert len(server._granted) == 3


async def error_of(call: Any) -> tuple[int, str]:
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value.error.code, caught.value.error.message


def test_a_hidden_skill_answers_every_view_as_a_missing_one(
    server: SkillServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_group(monkeypatch, "finance")

    async def answers(client: Client, name: str) -> str:
        uri = f"skill://extra/{name}/SKILL.md"
        found = {
            "load": (await client.call_tool("skill_load", {"name": name})).structured_content,
            "use": (await client.call_tool("use_skill", {"skill": name})).structured_content,
            "read": (
                await client.call_tool(
                    "skill_read_file", {"skill": name, "path": "references/notes.md"}
                )
            ).structured_content,
            "resource": await error_of(client.read_resource(uri)),
            "get": await error_of(get_skill(client, uri)),
            "prompt": await error_of(client.get_prompt(name)),
        }
        return json.dumps(found, sort_keys=True).replace(name, "<NAME>")

    async def scenario(client: Client) -> tuple[str, str]:
        return await answers(client, "hr-payroll"), await answers(client, "no-such-skill")

    hidden, missing = run(server, scenario)
    assert hidden == missing
    assert '"ok": false' in hidden


def test_a_connection_whose_grant_changes_gets_a_new_conversation(
    server: SkillServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def load(client: Client) -> list[bool]:
        results = []
        for group in ("finance", "hr"):
            as_group(monkeypatch, group)
            reply = await client.call_tool("skill_load", {"name": "hr-payroll"})
            results.append(bool(reply.structured_content and reply.structured_content["ok"]))
        return results

    assert run(server, load) == [False, True]


def settings(issuer: Issuer, tmp_path: Path) -> BearerAuth:
    jwks = issuer.write_jwks(tmp_path / "jwks.json")
    verifier = JwtVerifier(AuthSettings(jwks=str(jwks), issuer=ISSUER, audience=AUDIENCE))
    verifier.keys.load()
    return BearerAuth(verifier, endpoint="/mcp")


def admit(auth: McpAuth, path: str, headers: dict[bytes, str], method: str = "POST") -> Any:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope: dict[str, Any] = {"type": "http", "path": path, "method": method}
    passed = anyio.run(auth.admit, scope, headers, send)
    return passed, scope, sent


def test_the_hook_serves_metadata_refuses_bad_tokens_and_admits_a_caller(
    tmp_path: Path,
) -> None:
    issuer = Issuer()
    auth = McpAuth(
        settings(issuer, tmp_path), [Grant(claim="groups", value="finance", skills=("finance-*",))]
    )
    passed, _scope, sent = admit(auth, "/.well-known/oauth-protected-resource/mcp", {}, "GET")
    assert not passed and sent[0]["status"] == 200
    assert json.loads(sent[1]["body"])["resource"] == AUDIENCE
    passed, _scope, sent = admit(auth, "/.well-known/oauth-protected-resource", {}, "POST")
    assert not passed and sent[0]["status"] == 405
    passed, _scope, sent = admit(auth, "/mcp", {b"host": "127.0.0.1:1"})
    assert not passed and sent[0]["status"] == 401
    challenge = dict(sent[0]["headers"])[b"www-authenticate"].decode()
    assert challenge.startswith("Bearer resource_metadata=") and "error=" not in challenge
    token = team_token(issuer, "finance")
    passed, scope, _sent = admit(auth, "/mcp", {b"authorization": f"Bearer {token}"})
    assert passed
    caller = scope[CALLER_KEY]
    assert caller.principal.subject == "fay"
    assert caller.grant == SkillGrant(patterns=("finance-*",))
    assert scope["user"].access_token.subject == "fay"
    assert scope["user"].access_token.token == ""  # the token is not kept

    class Request:
        pass

    request = Request()
    request.scope = scope  # type: ignore[attr-defined]
    assert caller_of(request) is caller
    assert caller_of(None) is None


def test_the_sdk_token_verifier_gives_an_access_token_or_none(tmp_path: Path) -> None:
    issuer = Issuer()
    verifier = SdkTokenVerifier(settings(issuer, tmp_path).verifier)
    token = anyio.run(verifier.verify_token, issuer.token(scope="skills.read"))
    assert token is not None
    assert (token.subject, token.scopes, token.resource) == ("alice", ["skills.read"], AUDIENCE)
    assert anyio.run(verifier.verify_token, "garbage") is None
