"""Streamable HTTP for `skillpack mcp --transport http`: `/mcp` behind three checks.

Every HTTP request passes, in this order:

1. **Host**: the `Host` header must name the address the server is bound to, or a
   loopback name (`127.0.0.1`, `localhost`, `[::1]`), with any port: a web page
   that rebinds its own DNS name to 127.0.0.1 sends its own name and gets 421.
2. **Origin**: when present (browsers send it), it must be `http(s)://` one of the
   same hosts: a page on another origin gets 403.
3. **Bearer token** (`--token-file`): when set, `Authorization: Bearer <token>`
   must match (compared in constant time), else 401.

The SDK's own transport security (the same host and origin lists) and its request
body limit stay on behind these.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import sys
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

from .._errors import UsageError

LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "::1")
MCP_PATH: Final = "/mcp"


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(path: str) -> str:
    """The bearer token in `path` (surrounding whitespace dropped).

    Raises:
        UsageError: the file cannot be read, or holds no token.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            token = handle.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"Cannot read the token file {path}: {exc}.") from exc
    if not token or any(c.isspace() for c in token):
        raise UsageError(
            f"The token file {path} must hold one token (no spaces); write e.g. "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE`."
        )
    return token


def allowed_hosts(bound: str) -> frozenset[str]:
    """Host names a request may name: the loopback names and the bound address."""
    names = {*LOOPBACK_NAMES, bound.strip("[]").lower()}
    names.discard("0.0.0.0")
    names.discard("::")
    return frozenset(names)


def _split_host(value: str) -> tuple[str, str] | None:
    """(host, port) of a `Host` header value; None when it is malformed."""
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[1:end], value[end + 1 :]
        port = rest[1:] if rest.startswith(":") else rest
    else:
        host, _, port = value.partition(":")
    if port and not port.isdigit():
        return None
    return host.lower(), port


class GuardedApp:
    """ASGI wrapper: Host, then Origin, then the bearer token (module docstring)."""

    def __init__(self, app: Any, *, hosts: frozenset[str], token: str | None) -> None:
        self.app = app
        self.hosts = hosts
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan
            return
        headers = {k.lower(): v for k, v in scope.get("headers", ())}
        host = _split_host(headers.get(b"host", b"").decode("latin-1"))
        if host is None or host[0] not in self.hosts:
            await _refuse(send, 421, "Invalid Host header")
            return
        origin = headers.get(b"origin")
        if origin is not None and not self._origin_ok(origin.decode("latin-1")):
            await _refuse(send, 403, "Invalid Origin header")
            return
        if self.expected is not None:
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await _refuse(send, 401, "Missing or wrong bearer token", bearer=True)
                return
        await self.app(scope, receive, send)

    def _origin_ok(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
            port = parts.port  # raises ValueError for a port that is not a number
        except ValueError:
            return False
        del port
        return parts.scheme in ("http", "https") and (parts.hostname or "") in self.hosts


async def _refuse(send: Any, status: int, message: str, *, bearer: bool = False) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    if bearer:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": message.encode()})


def build_app(sdk_server: Any, *, host: str, token: str | None) -> Any:
    """The ASGI app: the SDK's streamable HTTP at `/mcp`, wrapped in `GuardedApp`."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = allowed_hosts(host)
    bracketed = [f"[{h}]" if ":" in h else h for h in sorted(hosts)]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in bracketed],
        allowed_origins=[f"{s}://{h}:*" for h in bracketed for s in ("http", "https")],
    )
    app = sdk_server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host, transport_security=security
    )
    return GuardedApp(app, hosts=hosts, token=token)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free one.

    Raises:
        UsageError: the address cannot be bound (in use, not this machine's).
    """
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"Cannot listen on {host}:{port} ({exc.strerror or exc}); pick another --port "
            "(0 picks a free one) or --host."
        ) from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


def serve(app: Any, sock: socket.socket, *, on_ready: Callable[[str], None]) -> None:
    """Run uvicorn on `sock` until interrupted; `on_ready(url)` once it listens."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    on_ready(url_of(sock))
    sys.stdout.flush()
    server.run(sockets=[sock])
