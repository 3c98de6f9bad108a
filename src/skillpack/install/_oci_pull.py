"""An OCI collection as a server's skills: a tag resolved to a digest, and the skills
at a digest pulled, verified and written into one folder of their own.

The same client, checks and signature policy as `skillpack install oci://…`
(`_oci_resolve.resolve_oci`): every manifest and layer checked against its digest,
with `OciOptions.verify_key` a cosign signature over the digest demanded first, the
archive rules on every layer. What differs is where the skills go: not into a skills
folder through the lock file, but into `<folder>/<digest dir>/<name>/…`, written
under a temporary name and renamed into place whole, so the folder of a digest is
either absent or complete.

A refusal of any skill refuses the digest: a server serves a collection as it was
published, or keeps what it served before.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from ._oci import OciClient, OciError, parse_reference
from ._oci_resolve import OciOptions, resolve_oci
from ._source import Source
from ._txn import stage
from ._values import Limits, Request


def tag_digest(reference: str, *, options: OciOptions, limits: Limits) -> str:
    """The digest `reference` (`[oci://]REGISTRY/REPO:TAG`, or `@DIGEST`) names now.

    Raises:
        UsageError: not an OCI reference.
        OciError: the registry cannot be reached, refuses, or sent a manifest that
            does not match its digest.
    """
    ref = parse_reference(reference)
    if ref.digest is not None:
        return ref.digest
    with OciClient(ref.registry, limits=limits, insecure=ref.registry in options.insecure) as c:
        return c.manifest(ref).checked_digest


def digest_folder(base: Path, digest: str) -> Path:
    """Where the skills of `digest` live under `base` (`sha256-<hex>`)."""
    algorithm, _, hexdigest = digest.partition(":")
    return base / f"{algorithm}-{hexdigest}"


def pull_digest(
    reference: str, digest: str, *, target: Path, options: OciOptions, limits: Limits
) -> tuple[str, ...]:
    """Pull the skills of `reference` at `digest` into the folder `target` (one
    `<name>/` per skill; kept as it is when a pull made it before); their names.

    Raises:
        OciError: the artifact, a layer or a skill was refused (`reason` is the code;
            the message names the reference and the fix); nothing is left behind.
    """
    if target.is_dir():
        return tuple(sorted(p.name for p in target.iterdir() if p.is_dir()))
    ref = parse_reference(reference)
    pinned = ref.pinned(digest)
    source = Source(
        kind="oci",
        text=f"oci://{pinned.text()}",
        location=pinned.text(),
        insecure=ref.registry in options.insecure,
    )
    offer = resolve_oci(source, Request(), limits=limits, options=options)
    refusals = offer.resolved.refusals
    if refusals:
        first = refusals[0]
        more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
        raise OciError(f"{first.message}{more}", reason=first.code)
    candidates = offer.resolved.candidates
    if not candidates:
        raise OciError(
            f"oci://{pinned.text()} holds no skill; publish one with `skillpack publish "
            f"DIR --oci {ref.name}`.",
            reason="not-a-skill",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".pull-{secrets.token_hex(6)}")
    try:
        os.mkdir(temporary)
        for candidate in candidates:
            stage(temporary / candidate.name, candidate)
        try:
            os.rename(temporary, target)
        except OSError:
            if not target.is_dir():  # another process renamed the same digest first
                raise
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return tuple(sorted(candidate.name for candidate in candidates))
