"""The install-source interface: every kind of SOURCE is one `SourceKind`, registered in
`SOURCE_KINDS`; `parse_source`, `resolve`, `update` and the lock file only ask the
registry.

A kind does four things, in the order an install and a later `update` need them:

1. **classify**: claim what the user typed (`oci://…`, `owner/repo`, a URL) as a
   `Source`, or leave it to the kinds after it (`SOURCE_KINDS` is tried in order);
2. **resolve**: turn the `Source` into verified candidates (each ends in
   `make_candidate`), fetching through the one transport (`Context.fetcher`, or its own
   client over `_transport`);
3. **pin**: each candidate's `Origin` records what the lock file keeps
   (`lock_types` are the `sourceType`s it writes); `known_digest` says which recorded
   digest, unchanged at the source, means the skill is current;
4. **re-resolve**: `source_of` turns a lock entry's `Origin` back into a `Source`.

Adding a kind is one module with a class like the ones below and one line in
`SOURCE_KINDS` (docs/design.md, "Install sources").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .._errors import SkillIOError, UsageError
from .._paths import system_skills_dir
from ._source import SOURCE_FORMS, Source, classify_git, classify_local, classify_site
from ._values import Refusal

if TYPE_CHECKING:
    from ._http import Fetcher
    from ._oci_resolve import OciOptions
    from ._values import Limits, Offer, Origin, Request


@dataclass(frozen=True, kw_only=True, slots=True)
class Context:
    """What a resolver is given besides the source and the request."""

    limits: Limits
    fetcher: Fetcher | None = None
    """The install's HTTP fetcher (ETag cache, progress), for kinds with `uses_fetcher`."""
    system: bool = False
    """The bundled skills are being resolved (origin `system`)."""
    options: Mapping[str, object] = field(default_factory=dict)
    """Per-kind options by kind name (`"oci"`: `OciOptions`)."""


@runtime_checkable
class SourceKind(Protocol):
    """One kind of install source: classify → resolve → pin → re-resolve."""

    @property
    def name(self) -> str:
        """`Source.kind` of the sources it classifies."""
        ...

    @property
    def lock_types(self) -> tuple[str, ...]:
        """The lock file `sourceType`s its candidates record (and `source_of` reads)."""
        ...

    @property
    def uses_fetcher(self) -> bool:
        """Whether `resolve` needs `Context.fetcher` (for a source that is not local)."""
        ...

    def classify(self, text: str, *, cwd: str) -> Source | None:
        """The `Source` for `text` when this kind claims it (raise `UsageError` for a
        text it claims but cannot use), else None."""
        ...

    def resolve(self, source: Source, request: Request, context: Context) -> Offer:
        """Verified candidates and refusals (a problem with the whole source raises)."""
        ...

    def known_digest(self, origin: Origin) -> str:
        """The recorded digest that, unchanged at the source, means current ("" if none)."""
        ...

    def source_of(self, origin: Origin) -> Source:
        """The source to re-resolve a lock entry from."""
        ...


class OciKind:
    """`oci://REGISTRY/REPO[:TAG][@DIGEST]`: a registry artifact, pinned by digest."""

    name = "oci"
    lock_types = ("oci",)
    uses_fetcher = False

    def classify(self, text: str, *, cwd: str) -> Source | None:
        if not text.startswith("oci://"):
            return None
        from ._oci import parse_reference

        return Source(kind="oci", text=text, location=parse_reference(text).text())

    def resolve(self, source: Source, request: Request, context: Context) -> Offer:
        from ._oci_resolve import OciOptions, resolve_oci

        given = context.options.get("oci")
        options = given if isinstance(given, OciOptions) else OciOptions()
        if source.insecure:  # recorded when it was installed with --insecure
            from ._oci import parse_reference

            registry = parse_reference(source.location).registry
            options = replace(options, insecure=options.insecure | {registry})
        return resolve_oci(source, request, limits=context.limits, options=options)

    def known_digest(self, origin: Origin) -> str:
        return origin.oci.digest if origin.oci is not None else ""

    def source_of(self, origin: Origin) -> Source:
        pin = origin.oci
        if pin is None:
            raise SkillIOError(f"its lock entry for {origin.source} has no OCI pin")
        text = f"oci://{origin.source}:{pin.tag}" if pin.tag else pin.pinned()
        return Source(
            kind="oci", text=text, location=text.removeprefix("oci://"), insecure=pin.insecure
        )


class FolderKind:
    """A folder on this machine (a path; a `SKILL.md` means its folder), and the
    bundled skills. A local archive file is classified here too, as an `archive`."""

    name = "folder"
    lock_types = ("local", "system")
    uses_fetcher = False

    def classify(self, text: str, *, cwd: str) -> Source | None:
        return classify_local(text, cwd)

    def resolve(self, source: Source, request: Request, context: Context) -> Offer:
        from ._resolve import resolve_folder

        return resolve_folder(source, request, limits=context.limits, system=context.system)

    def known_digest(self, origin: Origin) -> str:
        return ""

    def source_of(self, origin: Origin) -> Source:
        if origin.source_type == "system":
            return Source(kind="folder", text="skillpack (bundled)", location=system_skills_dir())
        if not os.path.isdir(origin.source):
            raise SkillIOError(f"its source folder {origin.source} no longer exists")
        return Source(kind="folder", text=origin.source, location=origin.source)


class GitKind:
    """A git repository: `owner/repo[/sub/path][#ref]`, forge URLs, `….git`, ssh."""

    name = "git"
    lock_types = ("github", "git")
    uses_fetcher = False

    def classify(self, text: str, *, cwd: str) -> Source | None:
        return classify_git(text)

    def resolve(self, source: Source, request: Request, context: Context) -> Offer:
        from ._resolve import resolve_git

        return resolve_git(source, request, limits=context.limits)

    def known_digest(self, origin: Origin) -> str:
        return ""

    def source_of(self, origin: Origin) -> Source:
        if origin.source_type == "github":
            return Source(
                kind="git",
                text=origin.source,
                location=f"https://github.com/{origin.source}.git",
                ref=origin.ref,
                github=origin.source,
            )
        url = origin.source_url or origin.source
        return Source(kind="git", text=url, location=url, ref=origin.ref)


class ArchiveKind:
    """A `.zip`, `.tar.gz` or `.tgz` at an https URL (a local one is classified by
    `FolderKind`)."""

    name = "archive"
    lock_types = ("archive",)
    uses_fetcher = True

    def classify(self, text: str, *, cwd: str) -> Source | None:
        found = classify_site(text)
        return found if found is not None and found.kind == "archive" else None

    def resolve(self, source: Source, request: Request, context: Context) -> Offer:
        from ._resolve import resolve_archive

        return resolve_archive(source, request, limits=context.limits, fetcher=context.fetcher)

    def known_digest(self, origin: Origin) -> str:
        return ""

    def source_of(self, origin: Origin) -> Source:
        location = origin.source_url or origin.source
        return Source(kind="archive", text=location, location=location)


class SiteKind:
    """Any other `https://host[/base]`: a site read at its well-known index."""

    name = "site"
    lock_types = ("well-known",)
    uses_fetcher = True

    def classify(self, text: str, *, cwd: str) -> Source | None:
        found = classify_site(text)
        return found if found is not None and found.kind == "site" else None

    def resolve(self, source: Source, request: Request, context: Context) -> Offer:
        from ._resolve import resolve_site

        if context.fetcher is None:
            raise UsageError(f"{source.text}: a site is read over HTTP; no fetcher was given.")
        return resolve_site(source, request, limits=context.limits, fetcher=context.fetcher)

    def known_digest(self, origin: Origin) -> str:
        return origin.well_known_digest or ""

    def source_of(self, origin: Origin) -> Source:
        site = origin.source_url or f"https://{origin.source}"
        return Source(kind="site", text=site, location=site)


SOURCE_KINDS: tuple[SourceKind, ...] = (
    OciKind(),
    FolderKind(),
    GitKind(),
    ArchiveKind(),
    SiteKind(),
)
"""Every kind, in the order `classify` is tried (the first that claims a text wins)."""


def kind_named(name: str) -> SourceKind:
    """The registered kind whose `Source.kind` is `name`."""
    for kind in SOURCE_KINDS:
        if kind.name == name:
            return kind
    raise UsageError(f"No install source kind is named {name!r}.")


def kind_recorded(origin: Origin) -> SourceKind:
    """The registered kind that re-resolves a lock entry of `origin.source_type`."""
    for kind in SOURCE_KINDS:
        if origin.source_type in kind.lock_types:
            return kind
    raise SkillIOError(f"its source type {origin.source_type!r} is not one skillpack installs")


def lock_types() -> frozenset[str]:
    """Every `sourceType` a registered kind records."""
    return frozenset(t for kind in SOURCE_KINDS for t in kind.lock_types)


def parse_source(text: str, *, cwd: str) -> Source:
    """Classify SOURCE by the forms `_source` documents: the first registered kind
    that claims it.

    Raises:
        UsageError: an empty SOURCE, a local path that does not exist, or text that
            is none of the forms above (the message lists them).
    """
    given = text.strip()
    if not given:
        raise UsageError("SOURCE is empty. " + SOURCE_FORMS)
    for kind in SOURCE_KINDS:
        found = kind.classify(given, cwd=cwd)
        if found is not None:
            return found
    raise UsageError(f"Cannot tell what SOURCE {given!r} is. " + SOURCE_FORMS)


def resolve(
    source: Source,
    request: Request,
    *,
    limits: Limits,
    fetcher: Fetcher | None,
    system: bool = False,
    oci: OciOptions | None = None,
) -> Offer:
    """Candidates and refusals for `source` from its registered kind.

    `fetcher` is needed for sites and archive URLs. `system` marks the bundled
    skills (origin `system`). `oci` says how to reach registries (`_oci_resolve`).
    """
    context = Context(
        limits=limits, fetcher=fetcher, system=system, options={"oci": oci} if oci else {}
    )
    offer = kind_named(source.kind).resolve(source, request, context)
    return _with_missing(offer, request, source)


def _with_missing(offer: Offer, request: Request, source: Source) -> Offer:
    if request.wanted is None:
        return offer
    present = set(offer.offered)
    missing = [name for name in request.wanted if name not in present]
    if not missing:
        return offer
    listing = ", ".join(offer.offered) or "none"
    refusals = tuple(
        Refusal(
            name=name,
            code="not-found",
            message=f"{source.text} has no skill named '{name}' (it offers: {listing}).",
        )
        for name in missing
    )
    resolved = replace(offer.resolved, refusals=offer.resolved.refusals + refusals)
    return replace(offer, resolved=resolved)


# --- sites ------------------------------------------------------------------------
