"""`--auth-jwks/--auth-issuer/--auth-audience`: bearer JWTs on both HTTP servers.

The flags override `[auth]` of the config (read once, at start, from the server's
working directory: the user file, then the project's); `[[auth.grant]]` comes from
the config only. `server_auth` turns them into the server's `BearerAuth` and grants;
`checked_server_auth` also checks them against the transport and the token flags, the
same way for both servers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from .._auth import BearerAuth
    from ..config._schema import Config
    from ..select._grants import Grant
    from ._server_flags import ServerFlags

F = TypeVar("F", bound=Callable[..., Any])


def auth_options(func: F) -> F:
    """The three `--auth-*` flags (HTTP only)."""
    func = click.option(
        "--auth-audience",
        metavar="AUD",
        default=None,
        help="HTTP: the `aud` tokens must hold, this server's resource id ([auth] audience).",
    )(func)
    func = click.option(
        "--auth-issuer",
        metavar="ISS",
        default=None,
        help="HTTP: the `iss` tokens must carry, the authorization server ([auth] issuer).",
    )(func)
    func = click.option(
        "--auth-jwks",
        metavar="URL|FILE",
        default=None,
        help="HTTP: check bearer JWTs (RS256/ES256) against this JWKS, an https URL or a "
        "file ([auth] jwks; needs skillpack[auth]).",
    )(func)
    return func


def server_auth(
    *,
    config: Config,
    jwks: str | None,
    issuer: str | None,
    audience: str | None,
    endpoint: str,
) -> tuple[BearerAuth | None, tuple[Grant, ...]]:
    """The server's JWT check (None: `[auth]` sets no `jwks` and no flag does) and
    its grants. The keys are read (or fetched) now, so a bad setting stops the start.

    Raises:
        UsageError: a setting is missing or unusable, or the `auth` extra is absent.
    """
    from .. import _errors

    jwks = jwks or config.auth_jwks
    issuer = issuer or config.auth_issuer
    audience = audience or config.auth_audience
    if jwks is None:
        if issuer or audience:
            raise _errors.UsageError(
                "--auth-issuer and --auth-audience need the issuer's keys too: give "
                "--auth-jwks URL|FILE (or `jwks` under [auth] in config.toml)."
            )
        if config.auth_grants:
            raise _errors.UsageError(
                "[[auth.grant]] is set but [auth] has no `jwks`: grants need bearer JWTs "
                "to read claims from; set jwks, issuer and audience under [auth]."
            )
        return None, ()
    missing = [n for n, v in (("issuer", issuer), ("audience", audience)) if not v]
    if missing:
        raise _errors.UsageError(
            f"Checking JWTs needs the {' and '.join(missing)} too: give "
            + " and ".join(f"--auth-{n}" for n in missing)
            + " (or set them under [auth] in config.toml)."
        )
    from .._auth import AuthSettings, BearerAuth, JwtVerifier, log_audit_to_stderr

    settings = AuthSettings(
        jwks=jwks,
        issuer=str(issuer),
        audience=str(audience),
        required_scopes=config.auth_required_scopes,
    )
    verifier = JwtVerifier(settings)
    verifier.keys.load()
    log_audit_to_stderr()
    return BearerAuth(verifier, endpoint=endpoint), config.auth_grants


def checked_server_auth(
    server: ServerFlags,
    config: Callable[[], Config],
    *,
    jwks: str | None,
    issuer: str | None,
    audience: str | None,
    endpoint: str,
) -> tuple[BearerAuth | None, tuple[Grant, ...]]:
    """`server_auth` for a server's flags and `config` (asked only over HTTP): over
    stdio there is nothing to check tokens against (no JWT auth, no grants), and JWT
    auth does not go with a shared token.

    Raises:
        UsageError: an `--auth-*` flag over stdio, JWT auth beside `--token-file` or
            `--token-file-out`, or what `server_auth` raises.
    """
    from .. import _errors

    if server.transport != "http":
        if jwks or issuer or audience:
            raise _errors.UsageError(
                "--auth-jwks, --auth-issuer and --auth-audience check tokens over HTTP; "
                "add --transport http (a stdio server has one client, its parent)."
            )
        return None, ()
    bearer, grants = server_auth(
        config=config(),
        jwks=jwks,
        issuer=issuer,
        audience=audience,
        endpoint=endpoint,
    )
    if bearer is not None and (server.token_file or server.token_file_out):
        raise _errors.UsageError(
            "Give either --token-file/--token-file-out (one shared token) or JWT auth "
            "(--auth-jwks, [auth] in config.toml), not both."
        )
    return bearer, grants
