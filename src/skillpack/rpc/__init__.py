"""Surface: the `skillpack serve` JSON-RPC app server and its typed client.
Imports runtime and below; nothing imports it but the CLI.

`Client` (stdio or HTTP) is the public name here; it loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._client import Client, RpcConnectionError, RpcError

_LAZY = {"Client", "RpcConnectionError", "RpcError"}

__all__ = ["Client", "RpcConnectionError", "RpcError"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'skillpack.rpc' has no attribute {name!r}")
    from . import _client

    value = getattr(_client, name)
    globals()[name] = value
    return value
