"""Key-based cosign signatures over a manifest digest: write one, verify one.

The form is cosign's "simple signing" (sigstore/cosign `specs/SIGNATURE_SPEC.md`):
a payload JSON naming the signed digest in `critical.image.docker-manifest-digest`,
stored as a layer of media type `application/vnd.dev.cosign.simplesigning.v1+json`
whose annotation `dev.cosignproject.cosign/signature` is the base64 ECDSA P-256
(SHA-256) signature of the payload bytes. Verification looks in three places, in
order: the OCI 1.1 referrers API, its `sha256-<hex>` fallback tag (an index of
referrers), and the classic `sha256-<hex>.sig` tag. Signing writes the classic tag
(what `cosign verify --key` reads) and a referrer listed under the fallback tag.

Keyless Sigstore signatures (certificates, a transparency log) are not verified:
they need network services skillpack does not call. `cryptography` (the `sign`
extra) does the ECDSA check; without it a key option says how to install it.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from .._errors import UsageError
from ._oci import OCI_INDEX, OCI_MANIFEST, OciClient, OciError, OciRef, digest_of
from ._oci_formats import IMAGE_CONFIG, descriptors, parse_json
from ._values import Refused

SIMPLESIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
SIG_ARTIFACT_TYPE = "application/vnd.dev.cosign.artifact.sig.v1+json"
MAX_SIGNATURES = 20
"""Signature manifests examined per artifact (a registry could list thousands)."""


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
    except ImportError:
        raise UsageError(
            "Signing and verifying OCI artifacts needs the `cryptography` package. Run "
            "`pip install 'skillpack[sign]'` and retry."
        ) from None
    return hashes, serialization, ec


def load_public_key(pem: bytes, *, label: str) -> Any:
    """An ECDSA P-256 public key from PEM (cosign.pub).

    Raises:
        UsageError: not a PEM EC P-256 public key.
    """
    _hashes, serialization, ec = _crypto()
    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        raise UsageError(
            f"{label} is not a PEM ECDSA P-256 public key (the form `cosign generate-key-pair` "
            "writes to cosign.pub)."
        )
    return key


def load_private_key(pem: bytes, *, label: str, password: bytes | None) -> Any:
    """An ECDSA P-256 private key from PEM (PKCS#8 or SEC1, optionally encrypted).

    Raises:
        UsageError: not such a key, or the password is wrong or missing.
    """
    _hashes, serialization, ec = _crypto()
    try:
        key = serialization.load_pem_private_key(pem, password=password)
    except (ValueError, TypeError) as error:
        raise UsageError(
            f"{label} cannot be read as a PEM ECDSA P-256 private key ({error}). cosign's "
            "own encrypted cosign.key is not read: export the key as PEM (PKCS#8), and "
            "give its password in COSIGN_PASSWORD when it is encrypted."
        ) from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise UsageError(f"{label} is not an ECDSA P-256 private key.")
    return key


def payload_for(ref: OciRef, digest: str) -> bytes:
    """The simple-signing payload for `digest` (compact JSON, as cosign writes it)."""
    document = {
        "critical": {
            "identity": {"docker-reference": ref.name},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature",
        },
        "optional": None,
    }
    return json.dumps(document, separators=(",", ":")).encode("utf-8")


def sign(
    client: OciClient,
    ref: OciRef,
    digest: str,
    private_key: Any,
    *,
    places: tuple[str, ...] = ("tag", "referrer"),
) -> tuple[str, ...]:
    """Write a signature of `digest` in `places`: the classic `.sig` tag (`tag`) and a
    referrer listed under the fallback tag (`referrer`). Returns the refs written."""
    hashes, _serialization, ec = _crypto()
    payload = payload_for(ref, digest)
    signature = base64.b64encode(private_key.sign(payload, ec.ECDSA(hashes.SHA256()))).decode()
    payload_digest = client.push_blob(ref, payload)
    config = json.dumps(
        {
            "architecture": "",
            "os": "",
            "config": {},
            "rootfs": {"type": "layers", "diff_ids": [payload_digest]},
        },
        separators=(",", ":"),
    ).encode()
    config_digest = client.push_blob(ref, config)
    layer = {
        "mediaType": SIMPLESIGNING,
        "digest": payload_digest,
        "size": len(payload),
        "annotations": {SIGNATURE_ANNOTATION: signature},
    }
    config_descriptor = {"mediaType": IMAGE_CONFIG, "digest": config_digest, "size": len(config)}
    hex_part = digest.replace(":", "-")
    written: list[str] = []
    classic = _canonical(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": config_descriptor,
            "layers": [layer],
        }
    )
    if "tag" in places:
        client.push_manifest(ref, classic, OCI_MANIFEST, f"{hex_part}.sig")
        written.append(f"{ref.name}:{hex_part}.sig")
    if "referrer" not in places:
        return tuple(written)
    subject = client.manifest(ref, digest)
    referrer = _canonical(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "artifactType": SIG_ARTIFACT_TYPE,
            "config": config_descriptor,
            "layers": [layer],
            "subject": {
                "mediaType": subject.content_type,
                "digest": digest,
                "size": len(subject.body),
            },
        }
    )
    referrer_digest = digest_of(referrer)
    client.push_manifest(ref, referrer, OCI_MANIFEST, referrer_digest)
    _add_to_fallback(client, ref, hex_part, referrer_digest, len(referrer))
    written.append(f"{ref.name}@{referrer_digest}")
    return tuple(written)


def _add_to_fallback(client: OciClient, ref: OciRef, tag: str, digest: str, size: int) -> None:
    """Add the referrer to the `sha256-<hex>` index (the referrers tag schema)."""
    entries: list[Any] = []
    if client.exists(ref, tag):
        current = parse_json(client.manifest(ref, tag).body, label=f"{ref.name}:{tag}")
        listed = current.get("manifests")
        entries = [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
    entries = [e for e in entries if e.get("digest") != digest]
    entries.append(
        {
            "mediaType": OCI_MANIFEST,
            "digest": digest,
            "size": size,
            "artifactType": SIG_ARTIFACT_TYPE,
        }
    )
    index = _canonical({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries})
    client.push_manifest(ref, index, OCI_INDEX, tag)


def _canonical(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode("utf-8")


def verify_signature(client: OciClient, ref: OciRef, digest: str, public_pem: bytes) -> str:
    """Where a valid signature of `digest` by the key was found.

    Raises:
        Refused: `signature-missing` (none in any of the three places) or
            `signature-invalid` (signatures exist but none verifies for this digest).
    """
    key = load_public_key(public_pem, label="The --verify-key file")
    label = f"{ref.name}@{digest}"
    problems: list[str] = []
    examined = 0
    for place, manifest_refs in _signature_manifests(client, ref, digest):
        for reference in manifest_refs:
            examined += 1
            if examined > MAX_SIGNATURES:
                break
            try:
                found = _check_manifest(client, ref, reference, digest, key)
            except (OciError, Refused) as error:
                problems.append(f"{place}: {getattr(error, 'message', None) or error}")
                continue
            if found is None:
                return place
            problems.append(f"{place}: {found}")
    if not problems:
        raise Refused(
            "signature-missing",
            f"{label} has no cosign signature (looked in the referrers API, the "
            f"{digest.replace(':', '-')} tag and the .sig tag); it was not installed "
            "because --verify-key demands one.",
        )
    raise Refused(
        "signature-invalid",
        f"{label}: no signature verifies with the --verify-key key for this digest "
        f"({'; '.join(problems[:3])}); nothing was installed.",
    )


def _signature_manifests(
    client: OciClient, ref: OciRef, digest: str
) -> list[tuple[str, list[str]]]:
    places: list[tuple[str, list[str]]] = []
    referrers = client.referrers(ref, digest)
    if referrers is not None:
        listed = descriptors(referrers, "manifests", label=f"{ref.name} referrers")
        places.append(("referrers API", [d.digest for d in listed]))
    fallback = digest.replace(":", "-")
    if client.exists(ref, fallback):
        index = parse_json(client.manifest(ref, fallback).body, label=f"{ref.name}:{fallback}")
        listed = descriptors(index, "manifests", label=f"{ref.name}:{fallback}")
        places.append((f"tag {fallback}", [d.digest for d in listed]))
    if client.exists(ref, f"{fallback}.sig"):
        places.append((f"tag {fallback}.sig", [f"{fallback}.sig"]))
    return places


def _check_manifest(
    client: OciClient, ref: OciRef, reference: str, digest: str, key: Any
) -> str | None:
    """None when a layer of the manifest is a valid signature of `digest`; else why not."""
    hashes, _serialization, ec = _crypto()
    from cryptography.exceptions import InvalidSignature

    label = f"{ref.name}:{reference}"
    document = parse_json(client.manifest(ref, reference).body, label=label)
    reasons: list[str] = []
    for layer in descriptors(document, "layers", label=label):
        if layer.media_type != SIMPLESIGNING:
            continue
        encoded = layer.annotations.get(SIGNATURE_ANNOTATION, "")
        payload = client.blob(ref, layer.digest, size=layer.size, max_bytes=64 * 1024)
        try:
            key.verify(base64.b64decode(encoded), payload, ec.ECDSA(hashes.SHA256()))
        except (InvalidSignature, ValueError):
            reasons.append("a signature does not verify with the key")
            continue
        try:
            signed = json.loads(payload)["critical"]["image"]["docker-manifest-digest"]
        except (ValueError, KeyError, TypeError):
            reasons.append("a signed payload is not cosign's simple-signing form")
            continue
        if signed != digest:
            reasons.append(f"a valid signature is for another digest, {signed}")
            continue
        return None
    return "; ".join(reasons) or "no simple-signing layer"
