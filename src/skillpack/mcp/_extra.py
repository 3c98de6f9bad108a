"""The `mcp` extra: checked before anything imports the SDK, with the command that fixes it."""

from __future__ import annotations

import os
import sys
from typing import Final

from .._errors import UsageError

MIN_VERSION: Final = (2, 3)
INSTALL: Final = "pip install 'skillpack[mcp]'"
_DIST_INFO: Final = ".dist-info"


def require_mcp() -> None:
    """Raise a `UsageError` naming `pip install 'skillpack[mcp]'` unless the official MCP
    SDK (2.3 or later, before 3) and uvicorn are installed."""
    found = installed_version("mcp")
    if found is None or installed_version("uvicorn") is None:
        raise UsageError(
            f"The MCP server needs the official MCP SDK, which is not installed; run {INSTALL}."
        )
    numbers = tuple(int(p) for p in found.split(".")[:2] if p.isdigit())
    if len(numbers) < 2 or not MIN_VERSION <= numbers < (3, 0):
        raise UsageError(
            f"The MCP server needs mcp>=2.3,<3 (installed: {found}); run {INSTALL} to fix it."
        )


def installed_version(name: str) -> str | None:
    """The installed version of distribution `name` (lowercase, no `-`), as
    `importlib.metadata.version` gives it; None when it is not installed.

    The first `<name>-<version>.dist-info` folder on `sys.path` names it, which is how
    pip and uv install; anything else (an egg, a zip) is asked of `importlib.metadata`,
    whose import alone costs a stdio server's start some 30 ms.
    """
    prefix = name + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in names:
            if folder.lower().startswith(prefix) and folder.endswith(_DIST_INFO):
                return folder[len(prefix) : -len(_DIST_INFO)]
        if any(n.lower().startswith(prefix) or n.lower() == name + ".egg-info" for n in names):
            break  # another layout of the same distribution: ask importlib.metadata
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
