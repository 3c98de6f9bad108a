"""`--allowed-host` and `--stateless`: both HTTP servers as replicas behind a balancer.

`--allowed-host HOST[:PORT]` (repeatable) adds to `[server] allowed_hosts` of the
config (read once at start, user file then project): the `Host` names a balancer or
proxy forwards, accepted by `_httpguard.HostGuard` beside loopback. `--stateless`
keeps nothing between requests, so any replica answers any request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])


def fleet_options(func: F) -> F:
    """The `--allowed-host` and `--stateless` flags (HTTP only)."""
    func = click.option(
        "--stateless",
        is_flag=True,
        help="HTTP: keep no client state between requests, so any replica behind a "
        "balancer answers any request.",
    )(func)
    func = click.option(
        "--allowed-host",
        "allowed_hosts",
        multiple=True,
        metavar="HOST[:PORT]",
        help="HTTP: a Host name a balancer or proxy forwards, accepted beside loopback "
        "(repeatable; [server] allowed_hosts in config.toml). Other names stay refused.",
    )(func)
    return func


def server_allowed_hosts(
    given: tuple[str, ...],
    *,
    cwd: str | None,
    user: bool,
    transport: str,
    stateless: bool = False,
) -> tuple[str, ...]:
    """The config's `[server] allowed_hosts` and then `given`, each checked; the one
    check of a server's fleet flags (`--allowed-host`, `--stateless`) against its
    transport.

    Raises:
        UsageError: a value is not HOST[:PORT], or `given` or `stateless` on a server
            without HTTP.
    """
    from .. import _errors
    from .._httpguard import parse_allowed_host

    if stateless and transport != "http":
        raise _errors.UsageError(
            "--stateless is for replicas over HTTP; add --transport http (over stdio the "
            "one client is the parent process)."
        )
    if transport != "http":
        if given:
            raise _errors.UsageError(
                "--allowed-host names what a balancer forwards over HTTP; add the HTTP "
                "transport (a stdio server has one client, its parent)."
            )
        return ()
    from ..config._files import load_config

    config, _problems = load_config(cwd=cwd, user=user)
    hosts = (*config.server_allowed_hosts, *given)
    for value in hosts:
        try:
            parse_allowed_host(value)
        except ValueError as exc:
            raise _errors.UsageError(str(exc)) from exc
    return hosts
