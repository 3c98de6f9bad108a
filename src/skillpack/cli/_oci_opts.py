"""`--insecure REGISTRY` and `--verify-key PATH`: how an `oci://` artifact is reached and
what it must prove, one definition for `install`, `update` and the servers' `--from`."""

from __future__ import annotations

from typing import Any

import click

from .. import _errors as errors

insecure_option = click.option(
    "--insecure",
    "insecure",
    multiple=True,
    metavar="REGISTRY",
    help="Reach this OCI registry (host[:port]) over plain http or unchecked TLS; repeatable. "
    "Loopback registries may use http without it.",
)
verify_key_option = click.option(
    "--verify-key",
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    default=None,
    help="A cosign public key (PEM): refuse an oci:// artifact without a valid signature by it.",
)


def read_key(path: str | None) -> bytes | None:
    """The key file's bytes (at most 64 KiB), None without one.

    Raises:
        UsageError: the file cannot be read.
    """
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read(64 * 1024)
    except OSError as error:
        raise errors.UsageError(f"Cannot read the key file {path} ({error.strerror}).") from None


def oci_options(insecure: tuple[str, ...], verify_key: str | None) -> Any:
    """The `OciOptions` the two flags ask for."""
    from ..install._oci_resolve import OciOptions

    return OciOptions(
        insecure=frozenset(r.lower() for r in insecure), verify_key=read_key(verify_key)
    )
