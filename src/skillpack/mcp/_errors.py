"""The one place where skillpack's exceptions become JSON-RPC errors.

MCP puts an unknown resource, skill or prompt under `-32602` (Invalid params), which
is also what a malformed argument is; the skills extension says so for `skills/get`,
`resources/directory/read` and `resources/read`. Failures of the server's own side
(a file that cannot be read, a broken skill) are `-32603` (Internal error). The
error's `data` carries skillpack's envelope code (`NOT_FOUND`, `PERMISSION_DENIED`,
...), the same code a tool call would give, and the candidates of an ambiguous name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .. import _errors as errors

INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

JSONRPC_CODES: Final[Mapping[str, int]] = {
    "INVALID_PARAM": INVALID_PARAMS,
    "NOT_FOUND": INVALID_PARAMS,
    "AMBIGUOUS": INVALID_PARAMS,
    "DISABLED": INVALID_PARAMS,
    "PERMISSION_DENIED": INVALID_PARAMS,
    "INVALID_SKILL": INTERNAL_ERROR,
    "IO_ERROR": INTERNAL_ERROR,
    "EXECUTION_ERROR": INTERNAL_ERROR,
    "INTERNAL_ERROR": INTERNAL_ERROR,
}
"""Error code (`SkillpackError.code`) -> JSON-RPC code; a test checks every code
lands here."""


def jsonrpc_code(exc: errors.SkillpackError) -> int:
    """The JSON-RPC error code for `exc`, through its code."""
    return JSONRPC_CODES.get(exc.code, INTERNAL_ERROR)


def to_mcp_error(exc: errors.SkillpackError) -> Exception:
    """`exc` as the SDK's `MCPError` (code, message, data with skillpack's code)."""
    from mcp.shared.exceptions import MCPError

    data: dict[str, Any] = {"code": exc.code}
    if exc.candidates:
        data["candidates"] = list(exc.candidates)
    return MCPError(code=jsonrpc_code(exc), message=str(exc), data=data)


def internal_error(exc: BaseException) -> Exception:
    """An unexpected exception as `-32603`, without internals beyond its type and text."""
    from mcp.shared.exceptions import MCPError

    return MCPError(
        code=INTERNAL_ERROR,
        message=f"skillpack could not answer: {type(exc).__name__}: {exc}",
        data={"code": "INTERNAL_ERROR"},
    )
