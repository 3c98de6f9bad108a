"""The caller of the message being handled: set by `Dispatcher.handle`, read by the
methods (`Methods`) to serve the caller's grant. None without JWT auth."""

from __future__ import annotations

import contextvars

from .._auth import Caller

CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "skillpack_rpc_caller", default=None
)


def current_caller() -> Caller | None:
    """The caller of the message being handled (None: no JWT auth)."""
    return CALLER.get()
