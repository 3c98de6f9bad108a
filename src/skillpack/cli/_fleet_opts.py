"""`--allowed-host`, `--stateless` and `--from`: both HTTP servers as replicas behind a
balancer.

`--allowed-host HOST[:PORT]` (repeatable) adds to `[server] allowed_hosts` of the
config (read once at start, user file then project): the `Host` names a balancer or
proxy forwards, accepted by `_httpguard.HostGuard` beside loopback. `--stateless`
keeps nothing between requests, so any replica answers any request. `--from
oci://REGISTRY/REPO:TAG` (or `[server] from`) serves an OCI collection, re-checked
every `--poll` seconds (`[server] poll`), reached and verified as `install` does
(`--insecure`, `--verify-key`): `runtime._oci_source` decides the rest.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ._oci_opts import insecure_option, oci_options, verify_key_option
from ._options import CatalogOptions

if TYPE_CHECKING:
    from ..config._schema import Config
    from ..runtime._oci_source import OciSource

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
    config: Callable[[], Config],
    transport: str,
    stateless: bool = False,
) -> tuple[str, ...]:
    """The config's `[server] allowed_hosts` and then `given`, each checked; the one
    check of a server's fleet flags (`--allowed-host`, `--stateless`) against its
    transport. `config` is asked only over HTTP (`ServerConfig`).

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
    hosts = (*config().server_allowed_hosts, *given)
    for value in hosts:
        try:
            parse_allowed_host(value)
        except ValueError as exc:
            raise _errors.UsageError(str(exc)) from exc
    return hosts


def server_config(catalog: CatalogOptions) -> Callable[[], Config]:
    """The config a server's start checks its flags against, read once when first
    asked (only an HTTP server asks), the same for each check."""
    return functools.cache(catalog.config)


@dataclass(frozen=True, kw_only=True, slots=True)
class FromFlags:
    """What `--from/--poll/--insecure/--verify-key` ask for."""

    reference: str | None
    poll: float | None
    insecure: tuple[str, ...]
    verify_key: str | None


def from_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The `--from`, `--poll`, `--insecure` and `--verify-key` flags (HTTP only),
    given to the command as `skills_from: FromFlags`."""

    @functools.wraps(func)
    def wrapper(
        *args: Any,
        from_reference: str | None,
        poll: float | None,
        insecure: tuple[str, ...],
        verify_key: str | None,
        **kwargs: Any,
    ) -> Any:
        flags = FromFlags(
            reference=from_reference, poll=poll, insecure=insecure, verify_key=verify_key
        )
        return func(*args, skills_from=flags, **kwargs)

    options = [
        click.option(
            "--from",
            "from_reference",
            metavar="oci://REF",
            default=None,
            help="HTTP: also serve the skills of this OCI collection, oci://REGISTRY/REPO:TAG "
            "(or @sha256:DIGEST), pulled and verified at start ([server] from in "
            "config.toml).",
        ),
        click.option(
            "--poll",
            type=click.FloatRange(min=1),
            metavar="SECONDS",
            default=None,
            help="HTTP: check the --from tag every SECONDS (at least 1) and swap in a new "
            "digest whole; a failed check keeps the last good one ([server] poll).",
        ),
        insecure_option,
        verify_key_option,
    ]
    decorated: Callable[..., Any] = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated


def check_from(flags: FromFlags, *, transport: str) -> None:
    """Refuse `--from`/`--poll` on a server without HTTP (checked before it starts).

    Raises:
        UsageError: `--from` or `--poll` without `--transport http`.
    """
    from .. import _errors

    if transport != "http" and (flags.reference is not None or flags.poll is not None):
        raise _errors.UsageError(
            "--from and --poll serve a collection to a fleet over HTTP; add "
            "--transport http (or serve a folder with --root)."
        )


def serve_from(
    flags: FromFlags, *, config: Callable[[], Config], transport: str
) -> OciSource | None:
    """The OCI collection `flags` (else the config's `[server] from`/`poll`) ask the
    server to serve, pulled and polling; None when none is asked for. `config` is
    asked only over HTTP.

    Raises:
        UsageError: `--from` without HTTP, `--poll`/`--insecure`/`--verify-key`
            without a collection, a bad reference or poll.
        SkillIOError: the first pull failed.
    """
    from .. import _errors

    check_from(flags, transport=transport)
    if transport != "http":
        return None
    settings = config()
    reference = flags.reference or settings.server_from
    poll = flags.poll if flags.poll is not None else settings.server_poll
    if reference is None:
        if flags.poll is not None or flags.insecure or flags.verify_key is not None:
            raise _errors.UsageError(
                "--poll, --insecure and --verify-key go with --from (the tag checked, "
                "the registry reached, the signature demanded); add --from "
                "oci://REGISTRY/REPO:TAG (or [server] from in config.toml)."
            )
        return None
    if not reference.startswith("oci://"):
        raise _errors.UsageError(
            f"--from {reference!r} is not an OCI collection; write "
            "oci://REGISTRY/REPO:TAG or oci://REGISTRY/REPO@sha256:DIGEST (a folder is "
            "served with --root)."
        )
    from ..runtime._oci_source import open_oci_source

    return open_oci_source(
        reference, poll=poll, options=oci_options(flags.insecure, flags.verify_key)
    )
