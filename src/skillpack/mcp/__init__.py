"""Surface: `skillpack mcp`, an MCP server over one live `Session` (the `mcp` extra).

The public names, for programs that embed the server or talk to it (each loads on
first use, so importing this package needs no MCP SDK):

- `SkillServer` (a server over a session you hold), `open_server` (one over a session
  it opens, as `skillpack mcp` does), `connect` (an SDK `mcp.Client` connected to a
  server in memory);
- the skills extension from the client side, typed: `list_skills`, `get_skill`,
  `read_directory`, `has_skills_extension`, and the values they return
  (`ListedSkill`, `ListedFile`, `DirectoryEntry`).

Inside: `_server` (tools, resources, prompts, the skills extension), `_pages` (its
SDK-free half: the served view, `skills/list` pages), `_front` (stdio answered before
the SDK loads, then handed to it), `_pipes`, `_served` (what
one catalog serves), `_uris` (the `skill://` scheme), `_errors` (JSON-RPC errors, one
place), `_http` (streamable HTTP behind Host/Origin/token checks), `_extra` (the
extra's check), `_embed` and `_client` (the public helpers). Imports runtime and below;
nothing imports it but the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import load_lazy

if TYPE_CHECKING:
    from ._client import (
        DirectoryEntry,
        ListedFile,
        ListedSkill,
        get_skill,
        has_skills_extension,
        list_skills,
        read_directory,
    )
    from ._embed import connect, open_server
    from ._server import SkillServer

# name -> module holding it; loaded on first attribute access (PEP 562).
_LAZY = {
    "DirectoryEntry": "._client",
    "ListedFile": "._client",
    "ListedSkill": "._client",
    "SkillServer": "._server",
    "connect": "._embed",
    "get_skill": "._client",
    "has_skills_extension": "._client",
    "list_skills": "._client",
    "open_server": "._embed",
    "read_directory": "._client",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from ._extra import require_mcp

        require_mcp()  # the SDK's absence as the install command, not an ImportError
    return load_lazy(name, _LAZY, package=__name__, anchor=__name__, namespace=globals())


__all__ = [
    "DirectoryEntry",
    "ListedFile",
    "ListedSkill",
    "SkillServer",
    "connect",
    "get_skill",
    "has_skills_extension",
    "list_skills",
    "open_server",
    "read_directory",
]


def __dir__() -> list[str]:
    return sorted(__all__)
