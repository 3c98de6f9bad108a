"""Bearer JWTs on `skillpack mcp --transport http`: the hook `_http.GuardedApp` calls.

After the Host and Origin checks, a request to a metadata path gets the RFC 9728
document (`_auth.metadata_document`); any other request needs a valid token
(`_auth.BearerAuth`), else 401 (403 for a missing scope) with the challenge
pointing at that document. An admitted request carries its caller in the ASGI scope:
`CALLER_KEY` (the principal and the `SkillGrant` its claims open, which
`SkillServer` serves it through) and, for the SDK, `user`/`auth` as its own bearer
middleware sets them (`AuthenticatedUser` over an `AccessToken`), so the SDK binds
each stateful session to the principal that opened it.

`SdkTokenVerifier` is the same check as the SDK's `TokenVerifier`, for code that
builds the SDK's own auth stack.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

from .._auth import (
    AuthRefused,
    BearerAuth,
    Caller,
    JwtVerifier,
    Principal,
    audit,
)
from ..select._grants import Grant, grant_for

CALLER_KEY: Final = "skillpack.caller"
"""Where an admitted request's `Caller` is kept in its ASGI scope."""


def caller_of(request: Any) -> Caller | None:
    """The caller a request was admitted as (None: the server has no JWT auth, or the
    request came over stdio)."""
    scope = getattr(request, "scope", None)
    found = scope.get(CALLER_KEY) if isinstance(scope, dict) else None
    return found if isinstance(found, Caller) else None


class McpAuth:
    """The server's JWT check and grants, applied to each HTTP request."""

    def __init__(self, bearer: BearerAuth, grants: Sequence[Grant] = ()) -> None:
        self.bearer = bearer
        self.grants = tuple(grants)

    async def admit(self, scope: Any, headers: dict[bytes, str], send: Any) -> bool:
        """Whether the request goes on to the MCP app: False when it was answered here
        (the metadata document, or a refusal)."""
        host = headers.get(b"host")
        if scope.get("path") in self.bearer.paths:
            if scope.get("method") == "GET":
                await _reply(send, 200, self.bearer.metadata, "application/json")
            else:
                await _reply(send, 405, b"Read the metadata with GET.", "text/plain")
            return False
        try:
            principal = await self.bearer.principal_async(headers.get(b"authorization"))
        except AuthRefused as refused:
            audit("mcp", None, event="refused", status=refused.status, code=refused.code)
            body = f"{refused}".encode()
            extra = [(b"www-authenticate", self.bearer.challenge(refused, host).encode())]
            await _reply(send, refused.status, body, "text/plain; charset=utf-8", extra)
            return False
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from starlette.authentication import AuthCredentials

        token = access_token(principal, resource=self.bearer.settings.audience)
        scope["user"] = AuthenticatedUser(token)
        scope["auth"] = AuthCredentials(list(principal.scopes))
        scope[CALLER_KEY] = Caller(
            principal=principal, grant=grant_for(self.grants, principal.claims)
        )
        return True


class SdkTokenVerifier:
    """The MCP python SDK's `TokenVerifier` over a `JwtVerifier`: an `AccessToken`
    for a valid token, else None."""

    def __init__(self, verifier: JwtVerifier) -> None:
        self.verifier = verifier

    async def verify_token(self, token: str) -> Any:
        try:
            principal = await self.verifier.verify_async(token)
        except AuthRefused:
            return None
        return access_token(principal, resource=self.verifier.settings.audience)


def access_token(principal: Principal, *, resource: str) -> Any:
    """The SDK's `AccessToken` of a principal (the token itself is not kept)."""
    from mcp.server.auth.provider import AccessToken

    return AccessToken(
        token="",
        client_id=principal.client_id,
        scopes=list(principal.scopes),
        expires_at=principal.expires_at or int(time.time()) + 60,
        resource=resource,
        subject=principal.subject,
        claims=dict(principal.claims),
    )


async def _reply(
    send: Any,
    status: int,
    body: bytes,
    kind: str,
    extra: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    headers = [
        (b"content-type", kind.encode()),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    if status >= 400:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
