"""An `oci://` SOURCE to verified candidates: resolve, verify, recognise, unpack.

1. the reference (tag or digest) resolves to a manifest or index digest; with a
   `verify_key`, a cosign signature over that digest must verify first;
2. an index is followed by digest: an agentskills collection gives one skill per
   entry, any other index its first entry (ToolHive's per-platform form); an entry
   naming an index already on the path is refused (`index-cycle`), and one nested
   past `MAX_INDEX_DEPTH` (`index-too-deep`);
3. each manifest is recognised (`_oci_formats.recognise`), its one layer fetched by
   digest within the size cap and unpacked with the archive rules, links refused;
4. every skill becomes a candidate through `make_candidate`, its origin pinned to
   the digest (`OciPin`).

A problem with the artifact as a whole (unreachable, 401, digest mismatch, not a
skill, bad signature) is one refusal naming the reference: nothing is written. When
every wanted name is known at the resolved digest (`Request.known`, from the lock),
nothing past the manifest is fetched and the names are reported unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ._candidate import make_candidate
from ._oci import OciClient, OciError, OciRef, parse_reference
from ._oci_formats import (
    AGENTSKILLS_COLLECTION,
    SKILL_NAME_ANNOTATION,
    SkillManifest,
    descriptors,
    is_index,
    parse_json,
    recognise,
    unpack,
)
from ._values import Candidate, Limits, OciPin, Origin, Payload, Refusal, Refused, Resolved

if TYPE_CHECKING:
    from ._source import Source
    from ._values import Offer, Request

MAX_INDEX_DEPTH = 2
"""An index inside an index is followed once (a collection of per-platform indexes)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class OciOptions:
    """How to reach registries and what to demand of what they send."""

    insecure: frozenset[str] = frozenset()
    """Registries (`host[:port]`) reached over plain http or unchecked TLS."""
    verify_key: bytes | None = None
    """A cosign public key (PEM): refuse an artifact without a valid signature by it."""


def resolve_oci(
    source: Source, request: Request, *, limits: Limits, options: OciOptions | None
) -> Offer:
    from ._values import Offer

    options = options or OciOptions()
    ref = parse_reference(source.location)
    try:
        with OciClient(
            ref.registry, limits=limits, insecure=ref.registry in options.insecure
        ) as client:
            return _resolve(client, ref, source, request, limits=limits, options=options)
    except (OciError, Refused) as error:
        code = error.reason if isinstance(error, OciError) else error.code
        message = str(error) if isinstance(error, OciError) else error.message
        if not message.startswith(source.text) and ref.name not in message:
            message = f"{source.text}: {message}"
        refusal = Refusal(name=source.text, code=code, message=message)
        return Offer(resolved=Resolved(refusals=(refusal,)), offered=())


def _resolve(
    client: OciClient,
    ref: OciRef,
    source: Source,
    request: Request,
    *,
    limits: Limits,
    options: OciOptions,
) -> Offer:
    from ._values import Offer

    top = client.manifest(ref)
    top_digest = top.checked_digest
    signature: str | None = None
    if options.verify_key is not None:
        from ._oci_sign import verify_signature

        signature = verify_signature(client, ref, top_digest, options.verify_key)
    wanted = request.wanted
    if wanted and all(request.known.get(name) == top_digest for name in wanted):
        return Offer(
            resolved=Resolved(), offered=tuple(sorted(wanted)), unchanged=tuple(sorted(wanted))
        )
    label = f"{ref.name}@{top_digest}"
    document = parse_json(top.body, label=label)
    manifests: list[SkillManifest] = []
    if is_index(document, top.content_type):
        seen = {top_digest}
        entries = descriptors(document, "manifests", label=label)
        if not entries:
            raise Refused("not-a-skill", f"{label} is an empty index.")
        collection = document.get("artifactType") == AGENTSKILLS_COLLECTION
        announced = [entry.annotations.get(SKILL_NAME_ANNOTATION) for entry in entries]
        if collection and all(announced):
            request.check([name for name in announced if name], source.text)  # before any fetch
        chosen = entries if collection else entries[:1]
        for entry in chosen:
            name = entry.annotations.get(SKILL_NAME_ANNOTATION) if collection else None
            if collection and wanted is not None and name is not None and name not in wanted:
                continue
            manifests.append(_follow(client, ref, entry.digest, seen, depth=1))
    else:
        manifests.append(recognise(document, label=label))
    formats = {manifest.format for manifest in manifests}
    pin = OciPin(
        reference=source.text,
        registry=ref.registry,
        repository=ref.repository,
        tag=ref.tag,
        digest=top_digest,
        format=formats.pop() if len(formats) == 1 else "agentskills",
        insecure=ref.registry in options.insecure,
        signature=signature,
    )
    unpacked: list[tuple[str, str, SkillManifest, Payload]] = []
    for manifest in manifests:
        layer = manifest.layer
        data = client.blob(ref, layer.digest, size=layer.size, max_bytes=limits.max_download_bytes)
        layer_label = f"{ref.name}@{layer.digest}"
        for name, sub_path, payload in unpack(
            manifest, data, repository=ref.repository, limits=limits, label=layer_label
        ):
            unpacked.append((name, sub_path, manifest, payload))
    offered = [name for name, _sub, _manifest, _payload in unpacked if name]
    request.check(offered, source.text)
    candidates: list[Candidate] = []
    refusals: list[Refusal] = []
    for name, sub_path, manifest, payload in unpacked:
        if wanted is not None and name and name not in wanted:
            continue
        origin = Origin(
            source_type="oci",
            source=ref.name,
            source_url=f"oci://{ref.name}",
            ref=ref.tag,
            skill_path=f"{sub_path}/SKILL.md" if sub_path else "SKILL.md",
            artifact_digest=manifest.layer.digest,
            oci=replace(pin, format=manifest.format, sub_path=sub_path),
        )
        try:
            candidate = make_candidate(payload, origin, name=name or None)
        except Refused as refused:
            refusals.append(
                Refusal(name=name or source.text, code=refused.code, message=refused.message)
            )
            continue
        if not name:
            offered.append(candidate.name)
            if wanted is not None and candidate.name not in wanted:
                continue
        candidates.append(candidate)
    return Offer(
        resolved=Resolved(candidates=tuple(candidates), refusals=tuple(refusals)),
        offered=tuple(sorted(set(offered))),
    )


def _follow(
    client: OciClient, ref: OciRef, digest: str, seen: set[str], *, depth: int
) -> SkillManifest:
    label = f"{ref.name}@{digest}"
    if digest in seen:
        raise Refused(
            "index-cycle",
            f"{label}: an index lists itself (or an index above it); refusing to follow it.",
        )
    seen.add(digest)
    fetched = client.manifest(ref, digest)
    document = parse_json(fetched.body, label=label)
    if is_index(document, fetched.content_type):
        if depth >= MAX_INDEX_DEPTH:
            raise Refused(
                "index-too-deep",
                f"{label}: this index is nested {depth + 1} levels deep, past the "
                f"{MAX_INDEX_DEPTH} skillpack follows (a collection index listing skill "
                "manifests, or one index of platforms above them). Publish the skill "
                "manifests in a flat index, or install by the inner index's digest "
                f"(oci://{ref.registry}/{ref.name}@<digest>).",
            )
        entries = descriptors(document, "manifests", label=label)
        if not entries:
            raise Refused("not-a-skill", f"{label} is an empty index.")
        return _follow(client, ref, entries[0].digest, seen, depth=depth + 1)
    return recognise(document, label=label)
