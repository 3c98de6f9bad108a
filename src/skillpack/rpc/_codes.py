"""The one place where errors become JSON-RPC error objects.

Protocol errors keep JSON-RPC 2.0's codes (-32700 … -32603). skillpack's own errors map
by their code (`SkillpackError.code`: `NOT_FOUND`, `AMBIGUOUS`, …) to -32000 … -32009;
the server's own to -32010 … -32019. `data` carries that code, the exception's class
name, `candidates` when there are some, and `field` for bad params.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import _errors as errors

PROTOCOL_CODES: Mapping[str, int] = {
    "parse-error": -32700,
    "invalid-request": -32600,
    "method-not-found": -32601,
    "invalid-params": -32602,
    "internal-error": -32603,
}

ERROR_CODES: Mapping[str, int] = {
    "INTERNAL_ERROR": -32000,
    "INVALID_SKILL": -32001,
    "INVALID_PARAM": -32003,
    "NOT_FOUND": -32004,
    "AMBIGUOUS": -32005,
    "DISABLED": -32006,
    "PERMISSION_DENIED": -32007,
    "IO_ERROR": -32008,
    "EXECUTION_ERROR": -32009,
}
"""Every error code (`_errors.ErrorCode`; a test checks each has its number). -32002,
once `SkillParseError`'s own, is left unused: it answers `INVALID_SKILL`, -32001."""

RPC_CODES: Mapping[str, int] = {
    "session-not-found": -32010,
    "session-limit": -32011,
    "message-too-large": -32012,
    "response-too-large": -32013,
    "server-busy": -32014,
    "stateless": -32015,
}
"""Errors of the server itself."""


class RpcFailure(Exception):
    """A request the server refuses with a given JSON-RPC code (never a skillpack error)."""

    def __init__(self, code: int, message: str, *, data: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.data: dict[str, Any] = dict(data or {})


class ParamError(Exception):
    """A param the schema allows but the request cannot use (a cwd that is no folder).

    The dispatcher turns it into -32602 naming the method and the field.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"`{field}` {problem}")
        self.field = field
        self.problem = problem


def invalid_params(method: str, field: str, problem: str) -> RpcFailure:
    """-32602 naming the field: `skills.list: cwds[1] must be a string.`"""
    where = f"`{field}` " if field else "params "
    return RpcFailure(
        PROTOCOL_CODES["invalid-params"],
        f"Invalid params for {method}: {where}{problem}. See docs/rpc.md for its params.",
        data={"field": field},
    )


def code_for(exc: errors.SkillpackError) -> int:
    """The JSON-RPC code of a skillpack error: its code's number."""
    return ERROR_CODES.get(exc.code, ERROR_CODES["INTERNAL_ERROR"])


def error_object(exc: BaseException) -> dict[str, Any]:
    """The JSON-RPC `error` member for any exception a handler raised."""
    if isinstance(exc, RpcFailure):
        error: dict[str, Any] = {"code": exc.code, "message": str(exc)}
        if exc.data:
            error["data"] = exc.data
        return error
    if isinstance(exc, errors.SkillpackError):
        data: dict[str, Any] = {"code": exc.code, "type": type(exc).__name__}
        if exc.candidates:
            data["candidates"] = list(exc.candidates)
        return {"code": code_for(exc), "message": str(exc), "data": data}
    return {
        "code": PROTOCOL_CODES["internal-error"],
        "message": f"Internal error: {type(exc).__name__}: {exc}. The server is still "
        "running; please report this with the request that caused it.",
        "data": {"type": type(exc).__name__},
    }
