"""`skillpack serve` (the JSON-RPC app server) and `skillpack context` (what skills cost
the model's context)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Literal

import click

from ._auth_opts import auth_options, checked_server_auth
from ._fleet_opts import (
    FromFlags,
    fleet_options,
    from_options,
    serve_from,
    server_allowed_hosts,
    server_config,
)
from ._options import CatalogOptions, catalog_options
from ._output import emit_json, print_table, visible, warn
from ._server_flags import ServerFlags, server_options

if TYPE_CHECKING:
    from .._auth import BearerAuth
    from ..runtime._oci_source import OciSource
    from ..select._grants import Grant

    ServeAuth = tuple[BearerAuth | None, tuple[Grant, ...]]


@click.command("serve")
@server_options(legacy_serve=True)
@click.option(
    "--allow-origin",
    "allow_origins",
    multiple=True,
    help="A web page origin allowed to call the server (HTTP); repeatable.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=256,
    show_default=True,
    help=(
        "Sessions open at once; past it, session.open takes the place of the least "
        "recently used session with no request in flight."
    ),
)
@click.option(
    "--session-idle",
    type=click.FloatRange(min=1),
    default=3600.0,
    show_default=True,
    help="Seconds after which an unused session may be closed.",
)
@auth_options
@fleet_options
@from_options
@catalog_options
def serve_command(
    server: ServerFlags,
    allow_origins: tuple[str, ...],
    max_sessions: int,
    session_idle: float,
    auth_jwks: str | None,
    auth_issuer: str | None,
    auth_audience: str | None,
    allowed_hosts: tuple[str, ...],
    stateless: bool,
    skills_from: FromFlags,
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """Serve the catalog to editors and agent UIs over JSON-RPC 2.0 (see docs/rpc.md).

    With --transport http, the address and the token file's path are printed at start
    (as one JSON line on stdout with --json); send the token as 'Authorization: Bearer
    ...'. The token is read from --token-file, or generated and written to
    --token-file-out (default: a private file under the user config folder).
    With --auth-jwks (or [auth] in config.toml) clients send access tokens (JWTs)
    instead, [[auth.grant]] decides which skills each sees, RFC 9728 metadata is at
    /.well-known/oauth-protected-resource/rpc, no token file is written (its field
    is null) and each request is one JSON audit line on stderr.

    Behind a load balancer: GET /healthz and GET /readyz need no token;
    --allowed-host names the Host the balancer forwards; --stateless keeps no
    session (session.open, session.close and turn.prepare answer -32015);
    --from oci://REGISTRY/REPO:TAG serves a published collection, checked every
    --poll seconds and swapped whole when the tag moves (/readyz shows it).
    """
    from ._process import settle_for_a_long_run

    settle_for_a_long_run()
    from ._otel import configure_tracing

    configure_tracing()
    transport = server.transport
    config = server_config(catalog)
    forwarded = server_allowed_hosts(
        allowed_hosts,
        config=config,
        transport=transport,
        stateless=stateless,
    )
    # Every flag is checked before the first pull, which may take a while.
    auth = checked_server_auth(
        server,
        config,
        jwks=auth_jwks,
        issuer=auth_issuer,
        audience=auth_audience,
        endpoint="/rpc",
    )
    oci = serve_from(skills_from, config=config, transport=transport)
    try:
        _serve(
            server,
            oci,
            allow_origins=allow_origins,
            max_sessions=max_sessions,
            session_idle=session_idle,
            auth=auth,
            forwarded=forwarded,
            stateless=stateless,
            catalog=catalog,
            as_json=as_json,
        )
    finally:
        if oci is not None:
            oci.close()


def _serve(
    server: ServerFlags,
    oci: OciSource | None,
    *,
    allow_origins: tuple[str, ...],
    max_sessions: int,
    session_idle: float,
    auth: ServeAuth,
    forwarded: tuple[str, ...],
    stateless: bool,
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """`serve` once its flags are checked and its OCI collection (if any) pulled;
    `auth` is what `checked_server_auth` made of the auth flags."""
    from .._httpguard import is_loopback
    from ..rpc._live import Discovery, default_refresh
    from ..rpc._server import ServeOptions, serve_http, serve_stdio
    from ._server_flags import chosen_token

    bearer, grants = auth
    transport = server.transport
    options = ServeOptions(
        discovery=Discovery(
            cwd=os.path.abspath(catalog.cwd or os.getcwd()),
            options=catalog.discovery(),
            refresh=default_refresh(),
            extra_roots_from=None if oci is None else oci.roots,
        ),
        max_sessions=max_sessions,
        session_idle=session_idle,
        details={} if oci is None else {"source": oci.detail},
    )
    if options.discovery.refresh != "watch":
        warn(
            "watchfiles is not installed, so skills created or edited on disk are noticed "
            "only at the next call, and skills/changed comes late; "
            "pip install 'skillpack[rpc]' to watch the roots."
        )
    if transport == "stdio":
        serve_stdio(options, stdin=sys.stdin.buffer, stdout=sys.stdout.buffer)
        return
    host = server.host
    if not is_loopback(host):
        warn(
            f"serving on {host}, which is not a loopback address: other machines can "
            "reach this server (the token still guards it)."
        )

    def announce(info: dict[str, Any]) -> None:
        if as_json:
            emit_json(info)
        else:
            click.echo(f"skillpack serve: {info['rpc']} (events: {info['events']})")
            if info["token_file"] is not None:
                click.echo(f"token file: {info['token_file']}")
            elif bearer is not None:
                click.echo(f"access tokens of {bearer.settings.issuer} (see {info['metadata']})")
        sys.stdout.flush()

    token = None if bearer is not None else chosen_token(server, command="serve", always=True)
    serve_http(
        options,
        host=host,
        port=server.port,
        token=None if token is None else token.value,
        token_file=None if token is None else token.path,
        remove_token_file=token is not None and token.written,
        allow_origins=allow_origins,
        announce=announce,
        auth=bearer,
        grants=grants,
        allowed_hosts=forwarded,
        stateless=stateless,
    )


@click.command("context")
@click.option(
    "--context-window",
    type=click.IntRange(min=1),
    default=None,
    help="Model context window in tokens (the budget is 2% of it).",
)
@click.option(
    "--budget-chars",
    type=click.IntRange(min=0),
    default=None,
    help="Explicit catalog budget in characters.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["xml", "markdown", "json"]),
    default="xml",
    show_default=True,
    help="Catalog format measured.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Show only the most expensive N skills.",
)
@catalog_options
def context_command(
    context_window: int | None,
    budget_chars: int | None,
    fmt: Literal["xml", "markdown", "json"],
    limit: int | None,
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """What the skill catalog costs the model's context, most expensive skills first.

    Each skill's cost is its catalog entry with the whole description; the last column
    says whether the budget kept it whole, shortened it, kept only its name or left it
    out. --json gives the same report as the app server's context.inspect.
    """
    from rich.markup import escape

    from ..runtime._context import context_report

    if context_window is not None and budget_chars is not None:
        raise click.UsageError("Give --context-window or --budget-chars, not both.")
    report = context_report(
        catalog.session(),
        context_window=context_window,
        budget_chars=budget_chars,
        format=fmt,
        include_skills=True,
    )
    if as_json:
        emit_json(report.to_dict())
        return
    budget = report.budget
    share = report.share(report.catalog_tokens)
    window = f" of a {context_window:,}-token window" if context_window else ""
    percent = f" ({share:.1%}{window})" if share is not None else ""
    click.echo(
        f"Skill catalog: {budget.used_chars:,} of {budget.budget_chars:,} chars, "
        f"~{report.catalog_tokens:,} tokens{percent}; {budget.shown} of {budget.total} "
        "skills shown."
    )
    if budget.truncated:
        click.echo(
            f"Over budget: {len(budget.shortened)} shortened, {len(budget.names_only)} "
            f"names only, {len(budget.omitted)} omitted (skill_search still finds them)."
        )
    entries = sorted(report.entries, key=lambda e: (-e.chars, e.qualified_name))
    if limit is not None:
        entries = entries[:limit]
    print_table(
        None,
        ("skill", "chars", "~tokens", "in catalog"),
        [
            (
                escape(visible(e.qualified_name)),
                f"{e.chars:,}",
                f"{e.tokens:,}",
                e.shown.replace("_", " "),
            )
            for e in entries
        ],
    )
