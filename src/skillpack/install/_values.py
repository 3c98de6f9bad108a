"""The values installs pass around: limits, payloads, origins, candidates, refusals.

A *payload* is a skill's files held in memory (path -> bytes): everything fetched is
verified and validated as a payload before a byte is written. A *candidate* is a
payload that passed, with where it came from (`Origin`) and what it is
(`SkillSummary`, audit findings). A *refusal* says which skill was refused and why,
with a stable code (listed in docs/design.md).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .._errors import UsageError
from ._audit import Finding

SourceType = str
"""A lock file `sourceType`: one of a registered kind's `lock_types` (`_kinds`):
`well-known`, `github`, `git`, `local`, `archive`, `system`, `oci`."""
"""Kinds of source. The first four are the `skills` npm CLI's own `sourceType`s, so
that CLI can update and restore what skillpack installed; `archive`, `system` and
`oci` are skillpack's (that CLI keeps such entries but cannot update them)."""

InstallScope = Literal["user", "project"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Limits:
    """Bounds on what one install fetches and unpacks."""

    max_files: int = 1000
    """Most files in one skill (an archive with more is refused)."""
    max_unpacked_bytes: int = 50 * 1024 * 1024
    """Most bytes of one skill's files, unpacked."""
    max_download_bytes: int = 50 * 1024 * 1024
    """Largest single download (artifact or file)."""
    max_index_bytes: int = 5 * 1024 * 1024
    """Largest index.json."""
    timeout: float = 30.0
    """Seconds to wait for a connection or for the next bytes of a response."""
    retries: int = 2
    """Extra attempts after a connection error, a timeout, a 429 or a 5xx."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Payload:
    """A skill's files in memory."""

    files: Mapping[str, bytes]
    """POSIX path relative to the skill folder -> content; `SKILL.md` among them."""
    executable: frozenset[str] = frozenset()
    """Paths that carry an executable bit in the source."""


@dataclass(frozen=True, kw_only=True, slots=True)
class OciPin:
    """What an OCI reference resolved to (the lock entry's `skillpack.oci`)."""

    reference: str
    """As the user gave it (`oci://…`)."""
    registry: str
    repository: str
    tag: str | None
    digest: str
    """The manifest (or index) digest the reference resolved to."""
    format: str
    """`agentskills`, `flux`, `toolhive` or `ramalama`."""
    sub_path: str = ""
    """The skill's folder inside the layer (bundles and rooted layouts)."""
    insecure: bool = False
    """The registry was named with `--insecure` (plain http or unchecked TLS)."""
    signature: str | None = None
    """Where the cosign signature that verified with `--verify-key` was found (`tag
    sha256-….sig`, `referrers API`, …); None when no key was asked for."""

    def pinned(self) -> str:
        """`oci://registry/repository@digest`: what reinstalls and checks use."""
        return f"oci://{self.registry}/{self.repository}@{self.digest}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "reference": self.reference,
            "registry": self.registry,
            "repository": self.repository,
            "tag": self.tag,
            "manifestDigest": self.digest,
            "format": self.format,
            "subPath": self.sub_path,
        }
        if self.insecure:
            data["insecure"] = True
        if self.signature:
            data["signature"] = self.signature
        return data


@dataclass(frozen=True, kw_only=True, slots=True)
class Origin:
    """Where a skill came from: the lock entry's provenance fields."""

    source_type: SourceType
    source: str
    """As the `skills` npm CLI records it: host name (well-known), `owner/repo`
    (github), the clone URL (git), a path (local, archive), `skillpack` (system)."""
    source_url: str | None = None
    """The URL or path as the user gave it (site, clone URL, archive)."""
    ref: str | None = None
    """The git ref asked for (`#ref`), if any."""
    skill_path: str | None = None
    """Path of the SKILL.md inside the repository, archive or folder."""
    commit: str | None = None
    """The commit a git source resolved to."""
    index_url: str | None = None
    """The index.json a site source resolved to."""
    artifact_url: str | None = None
    """The SKILL.md or archive URL an index entry pointed at."""
    artifact_digest: str | None = None
    """`sha256:` of the downloaded artifact (site entry or archive source)."""
    well_known_digest: str | None = None
    """What the `skills` npm CLI records as `wellKnownDigest` for this entry."""
    oci: OciPin | None = None
    """For an OCI source: the registry, repository, tag and digest it resolved to."""

    def same_source(self, other: Origin) -> bool:
        """True when both name one source (a different ref or commit is an update)."""
        return (self.source_type, self.source_url or self.source) == (
            other.source_type,
            other.source_url or other.source,
        )

    def label(self) -> str:
        """The source as a person reads it."""
        if self.oci is not None:
            tag = f":{self.oci.tag}" if self.oci.tag else ""
            return f"oci://{self.oci.registry}/{self.oci.repository}{tag}@{self.oci.digest}"
        text = self.source_url or self.source
        return f"{text}#{self.ref}" if self.ref else text


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillSummary:
    """What a skill is, shown before approval."""

    name: str
    description: str
    files: tuple[str, ...]
    """Every file, sorted."""
    scripts: tuple[str, ...]
    """Files an agent could run: under `scripts/`, executable, or with a `#!` line."""
    allowed_tools: tuple[str, ...] | None
    hooks: Mapping[str, Any] | None
    dependencies: tuple[str, ...]
    """Codex `dependencies.tools[]` entries as `type:value` text."""
    size: int
    """Total bytes."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "files": list(self.files),
            "scripts": list(self.scripts),
            "allowed_tools": None if self.allowed_tools is None else list(self.allowed_tools),
            "hooks": None if self.hooks is None else dict(self.hooks),
            "dependencies": list(self.dependencies),
            "size": self.size,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Candidate:
    """A skill fetched, verified and validated, ready to be approved and written."""

    name: str
    payload: Payload
    origin: Origin
    summary: SkillSummary
    file_digests: Mapping[str, str]
    """Path -> `sha256:` digest of each file."""
    skill_digest: str
    """The draft's skill digest over `file_digests`."""
    findings: tuple[Finding, ...] = ()
    """The audit of its files."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Refusal:
    """A skill (or a whole source) that will not be installed, and why."""

    name: str
    """The skill's name, or the source when no skill could be named."""
    code: str
    """Stable kebab-case reason, e.g. `digest-mismatch`, `unsafe-entry`."""
    message: str
    """What is wrong, where, and how to fix it."""

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "code": self.code, "message": self.message}


class Refused(Exception):
    """Raised inside a resolver to refuse one skill; becomes a `Refusal`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, kw_only=True, slots=True)
class Resolved:
    """What a source offers: candidates and refusals, plus warnings about the source."""

    candidates: tuple[Candidate, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    warnings: tuple[str, ...] = field(default_factory=tuple)


@dataclass(kw_only=True)
class Request:
    """What to take from a source."""

    wanted: Collection[str] | None = None
    """Skill names to take; None takes every skill."""
    known: Mapping[str, str] = field(default_factory=dict)
    """name -> artifact digest already installed: such site entries are not fetched."""
    single: bool = False
    """With `wanted` None: take the only skill; a source offering several is an error."""

    def check(self, offered: Collection[str], source_text: str) -> None:
        """Raise when the request needs one skill and the source offers several.

        Raises:
            UsageError: listing the names to choose from.
        """
        if self.wanted is None and self.single and len(offered) > 1:
            names = ", ".join(sorted(offered))
            raise UsageError(
                f"{source_text} offers {len(offered)} skills: {names}. Choose with "
                "--skill NAME (repeatable) or take them all with --all."
            )


@dataclass(frozen=True, kw_only=True, slots=True)
class Offer:
    """What a source resolved to, before selection errors are added."""

    resolved: Resolved
    offered: tuple[str, ...]
    """Every skill name the source offers (for "no skill named X" messages)."""
    unchanged: tuple[str, ...] = ()
    """Names skipped because their artifact digest equals the known one."""
