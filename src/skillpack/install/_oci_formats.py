"""Skill artifacts in OCI registries: the four layouts in use, recognised and unpacked.

| format | recognised by | the one layer |
|---|---|---|
| agentskills | `artifactType`/config `application/vnd.agentskills.skill…` | `<name>/` |
| flux | config `application/vnd.cncf.flux.config.v1+json` | many `<name>/` |
| toolhive | `artifactType: dev.toolhive.skills.v1` | files at the root |
| ramalama | any `application/vnd.cncf.skill.*` type | the folder (or its files) |

Anything else is refused naming the media types found (a container image says so).
Layers are read with the archive rules of `_archive.read_archive`, with links refused
outright (an OCI skill layer has no reason to hold one). Pure: bytes in, values out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._archive import read_archive
from ._oci import OCI_INDEX
from ._values import Limits, Payload, Refused

OciFormat = Literal["agentskills", "flux", "toolhive", "ramalama"]

AGENTSKILLS_ARTIFACT = "application/vnd.agentskills.skill.v1"
AGENTSKILLS_CONFIG = "application/vnd.agentskills.skill.config.v1+json"
AGENTSKILLS_LAYER = "application/vnd.agentskills.skill.content.v1.tar+gzip"
AGENTSKILLS_COLLECTION = "application/vnd.agentskills.collection.v1"
FLUX_CONFIG = "application/vnd.cncf.flux.config.v1+json"
FLUX_LAYER = "application/vnd.cncf.flux.content.v1.tar+gzip"
TOOLHIVE_ARTIFACT = "dev.toolhive.skills.v1"
IMAGE_CONFIG = "application/vnd.oci.image.config.v1+json"
DOCKER_CONFIG_TYPE = "application/vnd.docker.container.image.v1+json"
IMAGE_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
RAMALAMA_MANIFEST = "application/vnd.cncf.skill.manifest.v1+json"
RAMALAMA_CONFIG = "application/vnd.cncf.skill.config.v1+json"
RAMALAMA_LAYER = "application/vnd.cncf.skill.bundle.v1.tar+gzip"
SKILL_NAME_ANNOTATION = "io.agentskills.skill.name"
COLLECTION_NAME_ANNOTATION = "io.agentskills.collection.name"

_LAYER_OF: Mapping[OciFormat, frozenset[str]] = {
    "agentskills": frozenset({AGENTSKILLS_LAYER}),
    "flux": frozenset({FLUX_LAYER}),
    "toolhive": frozenset({IMAGE_LAYER}),
    "ramalama": frozenset({RAMALAMA_LAYER}),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Descriptor:
    media_type: str
    digest: str
    size: int
    annotations: Mapping[str, str]
    artifact_type: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillManifest:
    """A manifest recognised as one of the layouts, with its one skill layer."""

    format: OciFormat
    layer: Descriptor
    config: Descriptor
    annotations: Mapping[str, str]


def parse_json(body: bytes, *, label: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise Refused("manifest-invalid", f"{label} is not a JSON manifest object.")
    return data


def is_index(document: Mapping[str, Any], media_type: str) -> bool:
    kind = document.get("mediaType") or media_type
    return kind in (OCI_INDEX, "application/vnd.docker.distribution.manifest.list.v2+json") or (
        "manifests" in document and "layers" not in document
    )


def descriptors(document: Mapping[str, Any], key: str, *, label: str) -> list[Descriptor]:
    """The descriptors under `key` (`layers` or `manifests`), checked for form."""
    raw = document.get(key)
    if not isinstance(raw, list):
        raise Refused("manifest-invalid", f"{label} has no `{key}` list.")
    return [descriptor(item, label=label) for item in raw]


def descriptor(item: Any, *, label: str) -> Descriptor:
    if not isinstance(item, dict):
        raise Refused("manifest-invalid", f"{label} holds a descriptor that is not an object.")
    media_type, digest, size = item.get("mediaType"), item.get("digest"), item.get("size")
    if (
        not isinstance(media_type, str)
        or not isinstance(digest, str)
        or not isinstance(size, int)
        or isinstance(size, bool)
        or size < 0
    ):
        raise Refused(
            "manifest-invalid",
            f"{label} holds a descriptor without a mediaType, digest and size.",
        )
    annotations = item.get("annotations")
    artifact_type = item.get("artifactType")
    return Descriptor(
        media_type=media_type,
        digest=digest,
        size=size,
        annotations=_strings(annotations),
        artifact_type=artifact_type if isinstance(artifact_type, str) else None,
    )


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(v, str)}


def recognise(document: Mapping[str, Any], *, label: str) -> SkillManifest:
    """The layout of an image manifest and its single skill layer.

    Raises:
        Refused: `not-a-skill` (naming the media types found, and saying when it is a
            container image) or `layers-invalid` (zero or several skill layers).
    """
    config = descriptor(document.get("config"), label=label)
    layers = descriptors(document, "layers", label=label)
    artifact = document.get("artifactType")
    artifact = artifact if isinstance(artifact, str) else ""
    fmt = _format(artifact, config.media_type, [layer.media_type for layer in layers])
    if fmt is None:
        found = ", ".join(
            [
                f"artifactType {artifact or '(none)'}",
                f"config {config.media_type}",
                "layers " + (", ".join(sorted({x.media_type for x in layers})) or "(none)"),
            ]
        )
        image = config.media_type in (IMAGE_CONFIG, DOCKER_CONFIG_TYPE) and not artifact
        what = "a container image, not a skill" if image else "not a skill artifact"
        raise Refused(
            "not-a-skill",
            f"{label} is {what} ({found}). skillpack reads the agentskills, Flux, ToolHive "
            "and ramalama skill layouts.",
        )
    skill_layers = [layer for layer in layers if layer.media_type in _LAYER_OF[fmt]]
    if len(skill_layers) != 1:
        raise Refused(
            "layers-invalid",
            f"{label} is a {fmt} skill artifact with {len(skill_layers)} skill layers "
            f"({', '.join(sorted(_LAYER_OF[fmt]))}); it must have exactly one.",
        )
    return SkillManifest(
        format=fmt,
        layer=skill_layers[0],
        config=config,
        annotations=_strings(document.get("annotations")),
    )


def _format(artifact: str, config: str, layers: list[str]) -> OciFormat | None:
    if artifact == AGENTSKILLS_ARTIFACT or config == AGENTSKILLS_CONFIG:
        return "agentskills"
    if artifact == TOOLHIVE_ARTIFACT:
        return "toolhive"
    if config == FLUX_CONFIG:
        return "flux"
    if artifact == RAMALAMA_MANIFEST or config == RAMALAMA_CONFIG or RAMALAMA_LAYER in layers:
        return "ramalama"
    return None


def unpack(
    manifest: SkillManifest,
    data: bytes,
    *,
    repository: str,
    limits: Limits,
    label: str,
) -> list[tuple[str, str, Payload]]:
    """`(name, sub-path, payload)` for every skill in the layer `data`.

    Raises:
        Refused: an unsafe or unreadable layer, a skill not where its layout puts it.
    """
    payload = read_archive(data, "tar.gz", limits=limits, label=label, links=False)
    files = payload.files
    if manifest.format == "toolhive":
        name = repository.rsplit("/", 1)[-1]
        return [(name, "", payload)]
    if manifest.format == "flux":
        return _folders(payload, label=label)
    if "SKILL.md" in files and manifest.format == "ramalama":
        return [("", "", payload)]
    tops = {path.split("/", 1)[0] for path in files}
    if len(tops) != 1 or not all("/" in path for path in files):
        raise Refused(
            "layout-invalid",
            f"{label}: a {manifest.format} layer holds one folder, <name>/, at its root; this "
            f"one holds {', '.join(sorted(tops)[:5]) or 'nothing'}.",
        )
    (name,) = tops
    return [(name, name, _strip(payload, name))]


def _folders(payload: Payload, *, label: str) -> list[tuple[str, str, Payload]]:
    found = sorted(
        {path.split("/", 1)[0] for path in payload.files if path.count("/") == 1}
        & {path[: -len("/SKILL.md")] for path in payload.files if path.endswith("/SKILL.md")}
    )
    if not found:
        raise Refused("layout-invalid", f"{label}: the bundle has no <name>/SKILL.md at its root.")
    return [(top, top, _strip(payload, top)) for top in found]


def _strip(payload: Payload, folder: str) -> Payload:
    prefix = folder + "/"
    return Payload(
        files={p[len(prefix) :]: d for p, d in payload.files.items() if p.startswith(prefix)},
        executable=frozenset(p[len(prefix) :] for p in payload.executable if p.startswith(prefix)),
    )
