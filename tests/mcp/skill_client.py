"""Helpers for driving `skillpack mcp` with the official SDK's client (not a test file).

The skills extension's methods are not in the SDK's client, so they go out as custom
requests with a raw-dict result, as any extension-aware client would send them.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import mcp.types as types
from mcp import Client
from pydantic import ConfigDict, RootModel

from skillpack.mcp._client import GetSkillRequest, ReadDirectoryRequest, UriParams
from skillpack.mcp._server import SkillServer
from skillpack.runtime._session import Session

T = TypeVar("T")


class Raw(RootModel[dict[str, Any]]):
    """A result kept as the JSON object the server sent: the SDK's `send_request` types
    its result as a pydantic model, and the extension's methods have none."""


async def send_raw(client: Client, request: types.Request[Any, Any]) -> dict[str, Any]:
    """The result of a request the SDK's client has no method for."""
    return (await client.session.send_request(request, Raw)).root


class ListSkillsRequest(types.Request[types.PaginatedRequestParams, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: types.PaginatedRequestParams = types.PaginatedRequestParams()


class LooseParams(types.RequestParams):
    """Params with any fields, of any type (for malformed-request tests)."""

    model_config = ConfigDict(extra="allow")


class AnyRequest(types.Request[LooseParams, str]):
    """A request with any method and any params."""


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write `files` (relative path -> text or bytes) under `root`; return `root`."""
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_bytes(content.encode("utf-8"))
    return root


def skill_md(name: str, description: str = "A skill. Use it in tests.", **fields: str) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nDo it.\n"


def open_session(*roots: Path, **kwargs: Any) -> Session:
    """A session over `roots` only (no user, system or repo skills, no index file)."""
    return Session.open(
        cwd=str(roots[0]),
        roots=[str(r) for r in roots],
        include_user=False,
        include_system=False,
        use_cache=False,
        **kwargs,
    )


def run(
    server: SkillServer,
    scenario: Callable[[Client], Awaitable[T]],
    *,
    mode: Literal["legacy", "auto"] = "legacy",
    on_message: Callable[[Any], Awaitable[None]] | None = None,
) -> T:
    """Connect an in-memory SDK client to `server` and run `scenario(client)`."""

    async def main() -> T:
        kwargs: dict[str, Any] = {"mode": mode}
        if on_message is not None:
            kwargs["message_handler"] = on_message
        async with Client(server.server, **kwargs) as client:
            return await scenario(client)

    return anyio.run(main)


async def list_skills(client: Client) -> list[dict[str, Any]]:
    """Every `skills/list` entry, all pages walked; checks each page's shape."""
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        page = await send_raw(
            client, ListSkillsRequest(params=types.PaginatedRequestParams(cursor=cursor))
        )
        assert page["cacheScope"] in ("public", "private") and page["ttlMs"] >= 0
        entries.extend(page["skills"])
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries
        assert cursor not in seen, "a cursor came back twice"
        seen.add(cursor)


async def get_skill(client: Client, uri: str) -> dict[str, Any]:
    return await send_raw(client, GetSkillRequest(params=UriParams(uri=uri)))


async def read_directory(client: Client, uri: str) -> list[dict[str, Any]]:
    children: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await send_raw(
            client, ReadDirectoryRequest(params=UriParams(uri=uri, cursor=cursor))
        )
        children.extend(page["resources"])
        cursor = page.get("nextCursor")
        if cursor is None:
            return children


async def all_resources(client: Client) -> list[types.Resource]:
    found: list[types.Resource] = []
    result = await client.list_resources()
    found.extend(result.resources)
    while result.next_cursor is not None:
        result = await client.list_resources(cursor=result.next_cursor)
        found.extend(result.resources)
    return found


async def read_bytes(client: Client, uri: str) -> bytes:
    """What a host hashes: the UTF-8 of `text`, or the decoded `blob`."""
    result = await client.read_resource(uri)
    (content,) = result.contents
    if isinstance(content, types.TextResourceContents):
        return content.text.encode("utf-8")
    assert isinstance(content, types.BlobResourceContents)
    return base64.b64decode(content.blob)


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
