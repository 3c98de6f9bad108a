"""`skillpack mcp --transport http` as an OAuth 2.1 resource server, a real
subprocess on 127.0.0.1: bad tokens are 401 with the RFC 9728 pointer, the metadata is
served, the JWKS URL is fetched once, three groups see three catalogs, and a skill a
token may not see answers exactly like one that does not exist, on every view."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from skill_client import all_resources, get_skill, list_skills, read_directory

from auth_support import (
    AUDIENCE,
    SEES,
    Issuer,
    JwksServer,
    bad_tokens,
    serve_team,
    team_token,
)
from conftest import isolated_env

METADATA = "https://skills.example/.well-known/oauth-protected-resource/mcp"


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture(scope="module")
def team_server(
    issuer: Issuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, JwksServer, Path]]:
    base = tmp_path_factory.mktemp("team")
    jwks = JwksServer(issuer)
    with (
        jwks.running(),
        serve_team("mcp", base, jwks=jwks.url, env=isolated_env(base / "home")) as info,
    ):
        yield info["url"], jwks, info["errors"]


def post(url: str, token: str | None, *, method: str = "POST") -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        url, data=body if method == "POST" else None, method=method, headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status), dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return int(error.code), dict(error.headers), error.read()


def test_every_bad_token_is_401_pointing_at_the_metadata_which_is_served(
    team_server: tuple[str, JwksServer, Path], issuer: Issuer
) -> None:
    url, _jwks, errors = team_server
    for kind, token in bad_tokens(issuer).items():
        status, headers, _body = post(url, token)
        assert status == 401, kind
        challenge = headers["www-authenticate"]
        assert challenge.startswith("Bearer "), kind
        assert f'resource_metadata="{METADATA}"' in challenge, kind
        assert ('error="invalid_token"' in challenge) is (token is not None), kind
    base = url.removesuffix("/mcp")
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        status, headers, body = post(base + path, None, method="GET")
        assert status == 200
        assert json.loads(body) == {
            "resource": AUDIENCE,
            "authorization_servers": ["https://idp.example/realms/team"],
            "bearer_methods_supported": ["header"],
            "resource_name": "skillpack",
        }
    audit = [json.loads(line) for line in errors.read_text("utf-8").splitlines() if line]
    refused = [line for line in audit if line.get("event") == "refused"]
    assert {line["code"] for line in refused} >= {"token-missing", "token-invalid", "token-expired"}
    assert all("token" not in line for line in refused)


async def connected(url: str, token: str, scenario: Any) -> Any:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        return await scenario(client)


async def error_of(call: Any) -> tuple[int, str]:
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value.error.code, caught.value.error.message


async def views(client: Client, name: str, uri: str) -> dict[str, Any]:
    """What every view answers about the skill `name` (its SKILL.md at `uri`)."""
    loaded = await client.call_tool("skill_load", {"name": name})
    used = await client.call_tool("use_skill", {"skill": name})
    read = await client.call_tool("skill_read_file", {"skill": name, "path": "references/notes.md"})
    found = await client.call_tool("skill_search", {"query": name.replace("-", " ")})
    return {
        "skill_load": loaded.structured_content,
        "use_skill": used.structured_content,
        "skill_read_file": read.structured_content,
        "searched": name in {r["name"] for r in found.structured_content["data"]["results"]},
        "resources/read": await error_of(client.read_resource(uri)),
        "skills/get": await error_of(get_skill(client, uri)),
        "resources/directory/read": await error_of(read_directory(client, uri.rsplit("/", 1)[0])),
        "prompts/get": await error_of(client.get_prompt(name)),
    }


def same_shape(answer: Any, name: str) -> str:
    return json.dumps(answer, sort_keys=True).replace(name, "<NAME>")


def test_three_groups_see_three_catalogs_and_a_hidden_skill_answers_as_a_missing_one(
    team_server: tuple[str, JwksServer, Path], issuer: Issuer
) -> None:
    url, jwks, errors = team_server
    fetches_at_start = jwks.fetches
    assert fetches_at_start == 1

    async def catalog(client: Client) -> dict[str, Any]:
        tools = await client.list_tools()
        load = next(t for t in tools.tools if t.name == "skill_load")
        resources = await all_resources(client)
        prompts = await client.list_prompts()
        return {
            "skills/list": sorted(e["frontmatter"]["name"] for e in await list_skills(client)),
            "skill_load": load.description or "",
            "resources": {str(r.uri) for r in resources},
            "prompts": sorted(p.name for p in prompts.prompts),
        }

    seen = {g: anyio.run(connected, url, team_token(issuer, g), catalog) for g in SEES}
    every = {"finance-report", "finance-audit", "hr-payroll", "eng-deploy", "public-help"}
    for group, names in SEES.items():
        view = seen[group]
        assert view["skills/list"] == names
        assert view["prompts"] == names
        for other in every - set(names):
            assert other not in view["skill_load"]
            assert not any(f"/{other}/" in uri for uri in view["resources"])
        for name in names:
            assert name in view["skill_load"]
    hr_uri = next(u for u in seen["hr"]["resources"] if u.endswith("hr-payroll/SKILL.md"))
    missing_uri = hr_uri.replace("hr-payroll", "no-such-skill")

    async def compare(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        return (
            await views(client, "hr-payroll", hr_uri),
            await views(client, "no-such-skill", missing_uri),
        )

    hidden, missing = anyio.run(connected, url, team_token(issuer, "finance"), compare)
    assert hidden["skill_load"]["ok"] is False
    assert hidden["searched"] is False
    for view in hidden:
        assert same_shape(hidden[view], "hr-payroll") == same_shape(
            missing[view], "no-such-skill"
        ), view
    # The hr token does see it, through the same views.
    shown = anyio.run(
        connected,
        url,
        team_token(issuer, "hr"),
        lambda c: c.call_tool("skill_load", {"name": "hr-payroll"}),
    )
    assert shown.structured_content["ok"] is True
    assert jwks.fetches == fetches_at_start  # every token's kid was known
    audit = [json.loads(line) for line in errors.read_text("utf-8").splitlines() if line]
    loads = [a for a in audit if a.get("tool") == "skill_load" and a.get("skill") == "hr-payroll"]
    assert {a["sub"] for a in loads} == {"fay", "hal"}
    assert all(a["server"] == "mcp" and a["method"] == "tools/call" for a in loads)


def test_a_new_kid_fetches_the_key_set_again(
    team_server: tuple[str, JwksServer, Path], issuer: Issuer
) -> None:
    url, jwks, _errors = team_server
    before = jwks.fetches
    rotated = Issuer(rsa_kid="rsa-2", ec_kid="ec-2")
    jwks.rotated.append(rotated)
    status, _headers, _body = post(url, rotated.token(groups=["finance"]))
    assert status != 401
    assert jwks.fetches == before + 1
    for token in (rotated.token(), issuer.token(), rotated.token(algorithm="ES256")):
        assert post(url, token)[0] != 401
    assert jwks.fetches == before + 1
