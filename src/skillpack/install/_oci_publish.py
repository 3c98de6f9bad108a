"""`publish --oci`: skills pushed to an OCI registry, reproducibly, optionally signed.

- **agentskills** (the default): one artifact per skill at `REPO/<name>`: an OCI 1.1
  image manifest with `artifactType: application/vnd.agentskills.skill.v1`, the
  skill config JSON and one layer, a tar rooted at `<name>/`; with several skills,
  also a collection at `REPO` (an index, `artifactType: …collection.v1`, whose
  entries are the skills' manifests, copied into `REPO` so one pull gets them all).
- **flux**: one bundle at `REPO`: config `application/vnd.cncf.flux.config.v1+json`
  and one layer holding every skill as `<name>/…` at its root.

The layer is reproducible (sorted, PAX, mtime 0, owner 0/0, modes 0644/0755, regular
files and folders only, gzip without name or time) and `created` comes from
`SOURCE_DATE_EPOCH`, else the folder's last git commit, else the epoch: the same tree
gives the same manifest digest. Tags: `--tag`, else the skill's `metadata.version`,
else `latest`. Every skill passes strict validation before anything is pushed.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from .._errors import SkillError, UsageError
from ._archive import make_targz
from ._candidate import validate_payload
from ._oci import OCI_INDEX, OCI_MANIFEST, OciClient, OciRef, digest_of, parse_reference
from ._oci_formats import (
    AGENTSKILLS_ARTIFACT,
    AGENTSKILLS_COLLECTION,
    AGENTSKILLS_CONFIG,
    AGENTSKILLS_LAYER,
    COLLECTION_NAME_ANNOTATION,
    FLUX_CONFIG,
    FLUX_LAYER,
    SKILL_NAME_ANNOTATION,
)
from ._publish import gather
from ._values import Limits, Payload

PublishFormat = Literal["agentskills", "flux"]
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_EMPTY_CONFIG = b"{}"


@dataclass(frozen=True, kw_only=True, slots=True)
class PushedArtifact:
    """One artifact pushed: where, under which tags, with which digest."""

    names: tuple[str, ...]
    """The skills it holds."""
    repository: str
    """`registry/repository`."""
    digest: str
    tags: tuple[str, ...]
    signatures: tuple[str, ...] = ()
    size: int = 0
    """Bytes of the manifest (or index)."""
    kind: str = "skill"
    """`skill`, `bundle` (flux) or `collection` (the agentskills index over the skills)."""

    def refs(self) -> list[str]:
        """`registry/repository:tag@digest` for each tag."""
        return [f"{self.repository}:{tag}@{self.digest}" for tag in self.tags]

    def to_dict(self) -> dict[str, Any]:
        return {
            "skills": list(self.names),
            "repository": self.repository,
            "digest": self.digest,
            "tags": list(self.tags),
            "refs": self.refs(),
            "signatures": list(self.signatures),
            "kind": self.kind,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class OciPublishReport:
    format: str
    artifacts: tuple[PushedArtifact, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "artifacts": [a.to_dict() for a in self.artifacts]}


def publish_oci(
    source_dir: str,
    target: str,
    *,
    tags: Sequence[str] = (),
    format: PublishFormat = "agentskills",
    insecure: bool = False,
    sign_key: bytes | None = None,
    limits: Limits | None = None,
) -> OciPublishReport:
    """Push the skills under `source_dir` to `target` (`REGISTRY/REPO`).

    Raises:
        UsageError: a bad target or tag, no skills, a bad key.
        SkillError: a skill fails strict validation (nothing is pushed).
        OciError: the registry refused or could not be reached.
    """
    limits = limits or Limits()
    ref = parse_reference(target)
    if ref.tag or ref.digest:
        raise UsageError(
            f"{target}: give the repository without a tag or digest; tags come from --tag."
        )
    for tag in tags:
        if not _TAG.fullmatch(tag):
            raise UsageError(f"--tag {tag!r} is not 1-128 of A-Z a-z 0-9 _ . - (no leading . -).")
    built = gather(source_dir, limits=limits, what="a registry repository")
    folder = os.path.abspath(source_dir)
    common = _git_annotations(folder)
    private = None
    if sign_key is not None:
        from ._oci_sign import load_private_key

        password = os.environ.get("COSIGN_PASSWORD")
        private = load_private_key(
            sign_key, label="The --sign-key file", password=password.encode() if password else None
        )
    artifacts: list[PushedArtifact] = []
    with OciClient(ref.registry, limits=limits, insecure=insecure) as client:
        if format == "flux":
            artifacts.append(_push_flux(client, ref, built, tags, common, private))
        else:
            # With several skills, each is also copied into REPO by digest: a
            # collection's entries must live in its own repository.
            also = ref if len(built) > 1 else None
            for name, description, payload in built:
                child = ref.child(name)
                artifacts.append(
                    _push_skill(
                        client, child, name, description, payload, tags, common, private, also
                    )
                )
            if len(built) > 1:
                artifacts.append(_push_collection(client, ref, artifacts, tags, common, private))
    return OciPublishReport(format=format, artifacts=tuple(artifacts))


def _push_skill(
    client: OciClient,
    ref: OciRef,
    name: str,
    description: str,
    payload: Payload,
    tags: Sequence[str],
    common: Mapping[str, str],
    private: Any,
    also: OciRef | None,
) -> PushedArtifact:
    skill = validate_payload(payload, name=name, label=name)
    version = _version(skill.metadata)
    config = {
        "schemaVersion": "1",
        "name": name,
        "version": version or "",
        "description": description,
        "license": skill.license or "",
        "compatibility": skill.compatibility or "",
        "allowedTools": list(skill.allowed_tools or ()),
        "metadata": {str(k): v for k, v in skill.metadata.items()},
    }
    layer = _layer(payload.files, payload.executable, root=name, label=name)
    annotations = {
        **common,
        "org.opencontainers.image.title": name,
        "org.opencontainers.image.description": description,
        SKILL_NAME_ANNOTATION: name,
    }
    if version:
        annotations["org.opencontainers.image.version"] = version
    if skill.license:
        annotations["org.opencontainers.image.licenses"] = skill.license
    if skill.compatibility:
        annotations["io.agentskills.skill.compatibility"] = skill.compatibility
    chosen = tuple(tags) or ((version,) if version and _TAG.fullmatch(version) else ("latest",))
    return _push(
        client,
        ref,
        names=(name,),
        artifact_type=AGENTSKILLS_ARTIFACT,
        config=(AGENTSKILLS_CONFIG, _json(config)),
        layer=(AGENTSKILLS_LAYER, layer, name),
        annotations=annotations,
        tags=chosen,
        private=private,
        also=also,
    )


def _push_flux(
    client: OciClient,
    ref: OciRef,
    built: list[tuple[str, str, Payload]],
    tags: Sequence[str],
    common: Mapping[str, str],
    private: Any,
) -> PushedArtifact:
    files: dict[str, bytes] = {}
    executable: set[str] = set()
    for name, _description, payload in built:
        files.update({f"{name}/{path}": data for path, data in payload.files.items()})
        executable.update(f"{name}/{path}" for path in payload.executable)
    layer = _layer(files, frozenset(executable), root="", label=ref.name)
    names = tuple(name for name, _d, _p in built)
    return _push(
        client,
        ref,
        names=names,
        artifact_type=None,
        config=(FLUX_CONFIG, _EMPTY_CONFIG),
        layer=(FLUX_LAYER, layer, "skills.tar.gz"),
        annotations={**common, "org.opencontainers.image.title": ref.repository},
        tags=tuple(tags) or ("latest",),
        private=private,
    )


def _push(
    client: OciClient,
    ref: OciRef,
    *,
    names: tuple[str, ...],
    artifact_type: str | None,
    config: tuple[str, bytes],
    layer: tuple[str, bytes, str],
    annotations: Mapping[str, str],
    tags: tuple[str, ...],
    private: Any,
    also: OciRef | None = None,
) -> PushedArtifact:
    """Push one manifest under `tags` (and by digest into `also`, blobs included)."""
    config_type, config_body = config
    layer_type, layer_body, title = layer
    config_digest = client.push_blob(ref, config_body)
    layer_digest = client.push_blob(ref, layer_body)
    if also is not None:
        client.push_blob(also, config_body, config_digest)
        client.push_blob(also, layer_body, layer_digest)
    manifest: dict[str, Any] = {"schemaVersion": 2, "mediaType": OCI_MANIFEST}
    if artifact_type:
        manifest["artifactType"] = artifact_type
    manifest["config"] = {
        "mediaType": config_type,
        "digest": config_digest,
        "size": len(config_body),
    }
    manifest["layers"] = [
        {
            "mediaType": layer_type,
            "digest": layer_digest,
            "size": len(layer_body),
            "annotations": {"org.opencontainers.image.title": title},
        }
    ]
    manifest["annotations"] = {k: v for k, v in sorted(annotations.items()) if v}
    body = _json(manifest)
    digest = digest_of(body)
    for tag in tags:
        client.push_manifest(ref, body, OCI_MANIFEST, tag)
    if also is not None:
        client.push_manifest(also, body, OCI_MANIFEST, digest)
    signatures: tuple[str, ...] = ()
    if private is not None:
        from ._oci_sign import sign

        signatures = sign(client, ref, digest, private)
    return PushedArtifact(
        names=names,
        repository=ref.name,
        digest=digest,
        tags=tags,
        signatures=signatures,
        size=len(body),
        kind="skill" if artifact_type else "bundle",
    )


def _push_collection(
    client: OciClient,
    ref: OciRef,
    skills: list[PushedArtifact],
    tags: Sequence[str],
    common: Mapping[str, str],
    private: Any,
) -> PushedArtifact:
    """The agentskills collection at `REPO`: an index over every skill's manifest."""
    index = {
        "schemaVersion": 2,
        "mediaType": OCI_INDEX,
        "artifactType": AGENTSKILLS_COLLECTION,
        "manifests": [
            {
                "mediaType": OCI_MANIFEST,
                "digest": skill.digest,
                "size": skill.size,
                "artifactType": AGENTSKILLS_ARTIFACT,
                "annotations": {SKILL_NAME_ANNOTATION: skill.names[0]},
            }
            for skill in skills
        ],
        "annotations": {
            **{k: v for k, v in sorted(common.items()) if v},
            COLLECTION_NAME_ANNOTATION: ref.repository.rsplit("/", 1)[-1],
        },
    }
    body = _json(index)
    digest = digest_of(body)
    chosen = tuple(tags) or ("latest",)
    for tag in chosen:
        client.push_manifest(ref, body, OCI_INDEX, tag)
    signatures: tuple[str, ...] = ()
    if private is not None:
        from ._oci_sign import sign

        signatures = sign(client, ref, digest, private)
    return PushedArtifact(
        names=tuple(name for skill in skills for name in skill.names),
        repository=ref.name,
        digest=digest,
        tags=chosen,
        signatures=signatures,
        size=len(body),
        kind="collection",
    )


def _layer(
    files: Mapping[str, bytes], executable: frozenset[str], *, root: str, label: str
) -> bytes:
    try:
        return make_targz(files, executable, root=root, pax=True)
    except ValueError as error:
        raise SkillError(f"Cannot publish {label}: {error}.") from None


def _json(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _version(metadata: Mapping[str, Any]) -> str | None:
    value = metadata.get("version")
    return str(value) if isinstance(value, str | int | float) and str(value) else None


def _git_annotations(folder: str) -> dict[str, str]:
    """`created` (SOURCE_DATE_EPOCH, else the last commit, else the epoch), and the
    `source` and `revision` of the folder's git checkout when it is one."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    commit_time = _git(folder, "log", "-1", "--format=%ct")
    seconds = int(epoch) if epoch.isdigit() else int(commit_time) if commit_time.isdigit() else 0
    created = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    annotations = {"org.opencontainers.image.created": created.strftime("%Y-%m-%dT%H:%M:%SZ")}
    revision = _git(folder, "rev-parse", "HEAD")
    if re.fullmatch(r"[0-9a-f]{40,64}", revision):
        branch = _git(folder, "rev-parse", "--abbrev-ref", "HEAD")
        ref = branch if branch and branch != "HEAD" else "HEAD"
        annotations["org.opencontainers.image.revision"] = f"{ref}@sha1:{revision}"
    source = _public_url(_git(folder, "remote", "get-url", "origin"))
    if source:
        annotations["org.opencontainers.image.source"] = source
    return annotations


def _public_url(url: str) -> str:
    """An https URL without user info or `.git` (never a token in an annotation)."""
    if url.startswith("git@") and ":" in url:
        host, _, path = url[4:].partition(":")
        url = f"https://{host}/{path}"
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme not in ("https", "http", "ssh") or not parts.hostname:
        return ""
    host = parts.hostname + (f":{parts.port}" if parts.port and parts.scheme != "ssh" else "")
    return urlunsplit(("https", host, parts.path.removesuffix(".git"), "", ""))


def _git(folder: str, *args: str) -> str:
    try:
        result = subprocess.run(
            ["git", "-C", folder, *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""
