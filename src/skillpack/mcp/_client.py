"""The client side of the MCP skills extension, typed: `skills/list`, `skills/get` and
`resources/directory/read` over the official SDK's `Client`, whose own methods do not
cover them (they go out as custom requests, as any extension-aware client sends them).

The listing walk is the one skillpack uses as a host (`runtime._mcp_skills`): every
page, a cursor never taken twice, at most `MAX_PAGES`. Answers that break the
extension's shape raise `SkillIOError` naming what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import mcp.types as types
from pydantic import TypeAdapter

from .._errors import SkillIOError
from ..runtime._mcp_skills import MAX_PAGES, SKILLS_EXTENSION, _list_skills

_RAW = TypeAdapter(dict[str, Any])


@dataclass(frozen=True, kw_only=True, slots=True)
class ListedFile:
    """One file of a listed skill, as its manifest names it."""

    uri: str
    """The file's `skill://` URI (read it with `resources/read`)."""
    digest: str | None
    """`sha256:<hex>` of the bytes a read returns, when the server gives one."""
    size: int | None
    """Size in bytes, when the server gives it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ListedSkill:
    """One `skills/list` (or `skills/get`) entry."""

    uri: str
    """The URI of the skill's SKILL.md."""
    frontmatter: Mapping[str, Any]
    """The SKILL.md frontmatter as the server read it (YAML 1.2)."""
    resources: tuple[ListedFile, ...] | Literal["dynamic"]
    """Every file of the skill (SKILL.md first), or `"dynamic"` for a generated one."""
    entry: Mapping[str, Any]
    """The entry as received, fields this type does not name included."""

    @property
    def name(self) -> str:
        """The frontmatter `name`."""
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        """The frontmatter `description` ("" when there is none)."""
        description = self.frontmatter.get("description")
        return description if isinstance(description, str) else ""


@dataclass(frozen=True, kw_only=True, slots=True)
class DirectoryEntry:
    """One child of a `resources/directory/read` answer."""

    uri: str
    name: str
    mime_type: str | None
    """`inode/directory` for a folder, else the file's type."""
    size: int | None


class UriParams(types.PaginatedRequestParams):
    """Params of `skills/get` and `resources/directory/read`: a URI (and a cursor)."""

    uri: str


class GetSkillRequest(types.Request[UriParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


class ReadDirectoryRequest(types.Request[UriParams, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"


def has_skills_extension(client: Any) -> bool:
    """True when the connected server declares the skills extension."""
    extensions = getattr(client.server_capabilities, "extensions", None) or {}
    return SKILLS_EXTENSION in extensions


async def list_skills(client: Any) -> tuple[ListedSkill, ...]:
    """Every skill the server lists, all pages walked.

    Args:
        client: A connected `mcp.Client`.

    Raises:
        SkillIOError: the server does not declare the skills extension, repeats a
            cursor, has more than `MAX_PAGES` pages, or sends a malformed entry.
    """
    return tuple(_skill(entry) for entry in await _list_skills(client))


async def get_skill(client: Any, uri: str) -> ListedSkill:
    """The entry of the skill whose SKILL.md is `uri` (`skills/get`).

    Raises:
        mcp.shared.exceptions.MCPError: the server refuses (not a served skill).
        SkillIOError: the answer has no well-formed `skill`.
    """
    answer = await client.session.send_request(GetSkillRequest(params=UriParams(uri=uri)), _RAW)
    return _skill(answer.get("skill"))


async def read_directory(client: Any, uri: str) -> tuple[DirectoryEntry, ...]:
    """The children of the `skill://` folder `uri`, all pages walked.

    Raises:
        mcp.shared.exceptions.MCPError: the server refuses the URI.
        SkillIOError: a repeated cursor, more than `MAX_PAGES` pages, or a malformed
            answer.
    """
    children: list[DirectoryEntry] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        request = ReadDirectoryRequest(params=UriParams(uri=uri, cursor=cursor))
        page = await client.session.send_request(request, _RAW)
        resources = page.get("resources")
        if not isinstance(resources, list):
            raise SkillIOError(f"The resources/directory/read answer for {uri} has no list.")
        children.extend(_child(item) for item in resources)
        cursor = page.get("nextCursor")
        if cursor is None:
            return tuple(children)
        if not isinstance(cursor, str) or cursor in seen:
            raise SkillIOError(f"resources/directory/read of {uri} gave a cursor twice.")
        seen.add(cursor)
    raise SkillIOError(f"resources/directory/read of {uri} has more than {MAX_PAGES} pages.")


def _skill(entry: object) -> ListedSkill:
    if not isinstance(entry, dict):
        raise SkillIOError("A skills extension answer holds an entry that is not an object.")
    uri, frontmatter, resources = entry.get("uri"), entry.get("frontmatter"), entry.get("resources")
    if not isinstance(uri, str) or not isinstance(frontmatter, dict):
        raise SkillIOError("A skills extension entry has no `uri` or no `frontmatter` object.")
    files: tuple[ListedFile, ...] | Literal["dynamic"]
    if resources == "dynamic":
        files = "dynamic"
    elif isinstance(resources, list) and all(isinstance(r, dict) for r in resources):
        files = tuple(
            ListedFile(uri=str(r.get("uri", "")), digest=_str(r, "digest"), size=_int(r, "size"))
            for r in resources
        )
    else:
        raise SkillIOError(f"The entry of {uri[:200]} has no `resources` list.")
    return ListedSkill(uri=uri, frontmatter=frontmatter, resources=files, entry=entry)


def _child(item: object) -> DirectoryEntry:
    if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
        raise SkillIOError("A resources/directory/read child has no `uri`.")
    return DirectoryEntry(
        uri=item["uri"],
        name=str(item.get("name", "")),
        mime_type=_str(item, "mimeType"),
        size=_int(item, "size"),
    )


def _str(item: Mapping[str, Any], key: str) -> str | None:
    value = item.get(key)
    return value if isinstance(value, str) else None


def _int(item: Mapping[str, Any], key: str) -> int | None:
    value = item.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
