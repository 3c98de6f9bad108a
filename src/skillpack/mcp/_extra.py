"""The `mcp` extra: checked before anything imports the SDK, with the command that fixes it."""

from __future__ import annotations

from typing import Final

from .._errors import UsageError

MIN_VERSION: Final = (2, 3)
INSTALL: Final = "pip install 'skillpack[mcp]'"


def require_mcp() -> None:
    """Raise a `UsageError` naming `pip install 'skillpack[mcp]'` unless the official MCP
    SDK (2.3 or later, before 3) and uvicorn are installed."""
    # Imported here: reading package metadata costs a stdio server's start some 30 ms,
    # which `skillpack mcp` spends while discovery already runs.
    from importlib import metadata

    try:
        found = metadata.version("mcp")
        metadata.version("uvicorn")
    except metadata.PackageNotFoundError:
        raise UsageError(
            f"The MCP server needs the official MCP SDK, which is not installed; run {INSTALL}."
        ) from None
    numbers = tuple(int(p) for p in found.split(".")[:2] if p.isdigit())
    if len(numbers) < 2 or not MIN_VERSION <= numbers < (3, 0):
        raise UsageError(
            f"The MCP server needs mcp>=2.3,<3 (installed: {found}); run {INSTALL} to fix it."
        )
