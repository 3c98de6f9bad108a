"""`skillpack mcp`: serve the catalog to any MCP client (the `mcp` extra)."""

from __future__ import annotations

import functools
import sys
from typing import Any, Literal

import click

from ._auth_opts import auth_options, checked_server_auth
from ._fleet_opts import (
    FromFlags,
    check_from,
    fleet_options,
    from_options,
    serve_from,
    server_allowed_hosts,
    server_config,
)
from ._options import CatalogOptions, catalog_options
from ._output import emit_json
from ._server_flags import ServerFlags, server_options


@click.command("mcp")
@server_options()
@click.option(
    "--check",
    is_flag=True,
    help="Build the server without listening: print what it serves and what it leaves "
    "out, why, and the fix; exit 1 when a root was cut short or a skill is invalid.",
)
@click.option(
    "--catalog-chars",
    type=click.IntRange(min=0),
    metavar="CHARS",
    default=None,
    help="Budget in characters of the skill list in skill_load's description "
    "(default: the catalog budget, [budget] chars; 0 lists none).",
)
@click.option(
    "--catalog-instructions",
    is_flag=True,
    help="Also put the skill list in the server's instructions.",
)
@click.option(
    "--catalog-mode",
    type=click.Choice(["auto", "full", "deferred"]),
    default=None,
    help="auto: a stub pointing at skill_search when not even every skill name fits; "
    "full: never the stub; deferred: always the stub (default: [catalog] mode in the "
    "config, else auto).",
)
@auth_options
@fleet_options
@from_options
@catalog_options
def mcp_command(
    server: ServerFlags,
    check: bool,
    catalog_chars: int | None,
    catalog_instructions: bool,
    catalog_mode: Literal["auto", "full", "deferred"] | None,
    auth_jwks: str | None,
    auth_issuer: str | None,
    auth_audience: str | None,
    allowed_hosts: tuple[str, ...],
    stateless: bool,
    skills_from: FromFlags,
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """Serve skills over MCP: tools, skill:// resources, prompts, the skills extension.

    The catalog is live: skills added, changed or removed under the roots reach
    clients as list_changed notifications. Tools: skill_search, skill_load,
    use_skill, skill_read_file (the library's envelopes); skill_load's description
    lists the skills, names and descriptions within --catalog-chars, so every
    client shows the model what it can load. Every file of every skill
    the model may see is a skill://<skill-path>/<file> resource; user-invocable
    skills are prompts; the io.modelcontextprotocol/skills extension adds
    skills/list, skills/get and resources/directory/read. Needs
    `pip install 'skillpack[mcp]'`.

    HTTP listens on 127.0.0.1:8765 unless --host/--port say otherwise, refuses a
    foreign Host or Origin (DNS rebinding), and with --token-file (a token read from
    a file) or --token-file-out (one generated and written there) a missing or wrong
    token. Anything but loopback needs a token or JWT auth.
    With --auth-jwks (or [auth] in config.toml) it is an OAuth 2.1 resource server:
    bearer JWTs checked against the issuer's keys, RFC 9728 metadata at
    /.well-known/oauth-protected-resource/mcp, [[auth.grant]] deciding which skills
    each token sees, and one JSON audit line per request on stderr.

    Behind a load balancer: GET /healthz (the process answers) and GET /readyz (the
    catalog is built and the index readable; 503 with a JSON reason until then) need
    no token; --allowed-host names the Host the balancer forwards; --stateless keeps
    no session, so any replica answers any request. --from oci://REGISTRY/REPO:TAG
    serves a published collection (pulled and verified as `install` does, then
    checked every --poll seconds and swapped whole when the tag moves; /readyz
    says "stale" while checks fail and the last good one is served).

    What is left out (a root cut short by --max-dirs/--max-depth, an invalid
    SKILL.md, a shadowed name, a prompt-only skill, one the skills extension cannot
    list) reaches clients: `_meta` of every skills/list page carries the catalog
    version and a count, the skillpack://problems resource lists each with its fix,
    and handshake-era clients get a log message when it changes.

    \b
    --json (HTTP) prints, once listening (token_file with a token):
      {"transport": "http", "url": "http://127.0.0.1:8765/mcp", "token_file": "..."}
    --check --json prints, and exits 1 when a root was truncated or a skill invalid:
      {"catalogVersion": "...", "served": 358, "skills": [{"name", "path", "uri"}],
       "leftOut": [{"kind", "code", "path", "name", "message"}], "counts": {kind: n}}
    """
    from ..mcp._extra import require_mcp
    from ._process import settle_for_a_long_run

    settle_for_a_long_run()  # the CLI's short-run settings must not stay on in a server
    if not check:
        from ._otel import configure_tracing

        configure_tracing()
    if check:
        if skills_from.reference is not None or skills_from.poll is not None:
            from .. import _errors

            raise _errors.UsageError(
                "--check builds the server from its folders and pulls nothing; run the "
                "server with --from and read GET /readyz (its `source`) instead."
            )
        require_mcp()
        _check(catalog, as_json=as_json)
        return
    transport, host, port = server.transport, server.host, server.port
    token = None
    auth: Any = None
    config = server_config(catalog)
    forwarded = server_allowed_hosts(
        allowed_hosts,
        config=config,
        transport=transport,
        stateless=stateless,
    )
    check_from(skills_from, transport=transport)
    bearer, grants = checked_server_auth(
        server,
        config,
        jwks=auth_jwks,
        issuer=auth_issuer,
        audience=auth_audience,
        endpoint=_auth_endpoint(transport),
    )
    if transport == "http":  # the HTTP modules stay out of a stdio start
        from .. import _errors
        from .._httpguard import is_loopback
        from ._server_flags import chosen_token

        if bearer is not None:
            from ..mcp._auth import McpAuth

            auth = McpAuth(bearer, grants)
        if auth is not None and auth.grants and catalog_instructions:
            raise _errors.UsageError(
                "--catalog-instructions cannot be used with [[auth.grant]]: the "
                "instructions are one text for every client, and each token sees its "
                "own skills (skill_load's description lists them)."
            )
        token = chosen_token(server, command="mcp", always=False)
        if token is None and auth is None and not is_loopback(host):
            raise _errors.UsageError(
                f"Listening on {host} reaches other machines; give --token-file (or "
                "--token-file-out) or --auth-jwks so only clients with a token get in "
                "(or keep --host 127.0.0.1)."
            )
    if transport == "stdio":
        from ..mcp._front import serve_stdio

        # The handshake and first pages before the SDK loads; the watcher after them.
        # Discovery starts before the SDK's version is checked (reading the installed
        # packages' metadata), and nothing is answered until the check has passed.
        front = functools.partial(catalog.session, refresh="manual")
        if serve_stdio(
            front,
            cwd=catalog.cwd,
            catalog_chars=catalog_chars,
            catalog_instructions=catalog_instructions,
            catalog_mode=catalog_mode,
            before_serving=require_mcp,
        ):
            return
    require_mcp()
    from ..mcp._server import SkillServer, run_stdio

    oci = serve_from(skills_from, config=config, transport=transport)
    try:
        session = catalog.session(
            refresh="watch", extra_roots_from=None if oci is None else oci.roots
        )
    except BaseException:
        if oci is not None:
            oci.close()
        raise
    if oci is not None:
        oci.subscribe(session.refresh)  # a new digest: the catalog moves now
    skills = None
    try:
        skills = SkillServer(
            session,
            cwd=catalog.cwd,
            catalog_chars=catalog_chars,
            catalog_instructions=catalog_instructions,
            catalog_mode=catalog_mode,
        )
        if transport == "stdio":
            run_stdio(skills)
            return
        from ..mcp._fleet import server_health
        from ..mcp._http import bind, build_app, serve

        sock = bind(host, port)
        health = server_health(skills, skills.prepare())
        if oci is not None:
            health = health.with_details({"source": oci.detail})

        def ready(url: str) -> None:
            if as_json:
                info = {"transport": "http", "url": url}
                if token is not None:
                    info["token_file"] = str(token.path)
                emit_json(info)
            else:
                sys.stderr.write(f"skillpack: serving MCP at {url}\n")
                if token is not None and token.written:
                    sys.stderr.write(f"skillpack: token file: {token.path}\n")

        value = None if token is None else token.value
        app = build_app(
            skills.server,
            host=host,
            token=value,
            port=sock.getsockname()[1],
            auth=auth,
            allowed_hosts=forwarded,
            health=health,
            stateless=stateless,
        )
        serve(app, sock, on_ready=ready)
    finally:
        if oci is not None:
            oci.close()
        if skills is not None:
            skills.close()
        session.close()


def _check(catalog: CatalogOptions, *, as_json: bool) -> None:
    """`mcp --check`: the server's view of the catalog, printed; exit 1 on a blocking kind."""
    from ..mcp._server import SkillServer
    from ..runtime._left_out import BLOCKING_KINDS

    session = catalog.session()
    try:
        report = SkillServer(session, cwd=catalog.cwd).problems_report(with_skills=True)
    finally:
        session.close()
    if as_json:
        emit_json(report)
    else:
        _print_check(report)
    if any(entry["kind"] in BLOCKING_KINDS for entry in report["leftOut"]):
        raise SystemExit(1)


def _print_check(report: dict[str, Any]) -> None:
    from ._output import echo, print_table

    left_out = report["leftOut"]
    echo(
        f"skillpack mcp would serve {report['served']} skill(s) (catalog version "
        f"{report['catalogVersion']}) and leaves out {len(left_out)}."
    )
    if not left_out:
        return
    print_table(
        "Left out",
        ["kind", "name", "why and the fix"],
        [[e["kind"], e["name"] or "-", e["message"]] for e in left_out],
    )
    kinds = ", ".join(f"{n} {kind}" for kind, n in report["counts"].items())
    echo(f"Left out: {kinds}.")


def _auth_endpoint(transport: str) -> str:
    """The path JWT auth guards (its RFC 9728 metadata names it); none over stdio,
    whose start never imports the HTTP modules."""
    if transport != "http":
        return ""
    from ..mcp._http import MCP_PATH

    return MCP_PATH
