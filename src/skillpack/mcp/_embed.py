"""`skillpack mcp` inside another program: the server opened in this process, and an
in-memory client connected to it (for tests, and for hosts that embed the server)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from ..discovery._options import DiscoveryOptions, IncludeScope
from ..runtime._live import RefreshMode
from ..runtime._session import Session

if TYPE_CHECKING:  # the SDK loads when a server is made, not when this module is
    from ..render._catalog import CatalogMode
    from ._server import SkillServer


@contextmanager
def open_server(
    *,
    roots: Sequence[str | os.PathLike[str]] | None = None,
    extra_roots: Sequence[str | os.PathLike[str]] = (),
    include: Sequence[IncludeScope] | None = None,
    cwd: str | None = None,
    include_user: bool = True,
    include_system: bool = True,
    use_cache: bool = True,
    refresh: RefreshMode = "watch",
    catalog_chars: int | None = None,
    catalog_instructions: bool = False,
    catalog_mode: CatalogMode | None = None,
    options: DiscoveryOptions | None = None,
) -> Iterator[SkillServer]:
    """The server `skillpack mcp` runs, over a session it opens and closes.

    Discovery is the CLI's (`Session.open`: config and every scope unless turned
    off); the catalog is live (`refresh="watch"`) and a change reaches connected
    clients as `list_changed` notifications. Serve `server.server` (the SDK's
    `Server`) on any transport, or `connect` to it in memory. To serve a session you
    already hold, use `SkillServer(session)` instead.

    Args:
        roots: Serve exactly these folders; a default scope joins them only when
            `include` names it (as `Session.open(roots=)`). Each must be a folder.
        extra_roots: Folders of scope `extra` added to what is served (what `roots`
            meant up to 0.1.0; the CLI's `--root`).
        include: The default scopes searched (`"repo"`, `"user"`, `"admin"`,
            `"system"`); with `roots`, none unless named.
        cwd: The project folder (repo skills, config, relative links).
        include_user: Discover the user's skills (`~/.claude/skills`, ...).
        include_system: Include the skills bundled with skillpack.
        use_cache: Read and write the index file.
        refresh: How the catalog follows the files (see `Session`).
        catalog_chars: Budget of the catalog in `skill_load`'s description (None:
            the session's budget; 0: none).
        catalog_instructions: Also put the catalog in the server's `instructions`.
        catalog_mode: `auto`, `full` or `deferred`; None is the config's
            `[catalog] mode`.
        options: All of discovery as one value (`skillpack.DiscoveryOptions`), as
            `Session.open` takes it: a keyword left at its default defers to it.

    Raises:
        UsageError: a discovery keyword given differs from what `options` sets, a
            folder in `roots` or `extra_roots` does not exist, or an unknown scope.
    """
    from ..discovery._options import chosen_options
    from ._server import SkillServer

    chosen = chosen_options(
        "open_server",
        options,
        roots=roots,
        extra_roots=extra_roots,
        include=include,
        include_user=include_user,
        include_system=include_system,
        use_cache=use_cache,
    )
    with Session.open(cwd=cwd, options=chosen, refresh=refresh) as session:
        yield SkillServer(
            session,
            cwd=cwd,
            catalog_chars=catalog_chars,
            catalog_instructions=catalog_instructions,
            catalog_mode=catalog_mode,
        )


@asynccontextmanager
async def connect(server: SkillServer, **client_options: Any) -> AsyncIterator[Any]:
    """An SDK `mcp.Client` connected to `server` in memory (no process, no socket).

    `client_options` go to `mcp.Client` (e.g. `message_handler=` to see
    notifications); the protocol era defaults to the handshake one (`initialize`),
    which every client of today speaks.
    """
    from mcp import Client

    client_options.setdefault("mode", "legacy")
    async with Client(server.server, **client_options) as client:
        yield client
