"""From a SOURCE to verified, validated candidates (nothing is written to a target here).

Each kind of source has one resolver, reached through its `_kinds.SourceKind`; all of
them end in `make_candidate`:

- **site**: the index (tried at each well-known path), then per entry the artifact
  or the files, verified in the draft's order: artifact digest, unpack, per-file
  digests, skill digest. Only the entries asked for are downloaded, and an entry
  whose artifact digest equals `known[name]` is reported unchanged unfetched.
- **git**: a shallow clone in a temp folder, then discovery under the sub-path.
- **archive**: the bytes (a local file or a download), unpacked in memory; a
  SKILL.md at the root is one skill, otherwise the files go to a temp folder that
  discovery searches (wrapper folders, several skills).
- **folder**: discovery under the folder.
- **oci**: a registry artifact, by digest (`_oci_resolve`).

A problem with one skill is a `Refusal` naming it; a problem with the whole source
(unreachable site, missing ref) raises.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from .._errors import SkillIOError, UsageError
from .._httpguard import is_loopback
from ._archive import archive_kind, read_archive
from ._candidate import SKILL_FILE, make_candidate
from ._collect import FoundSkill, find_skill_dirs, nested_dirs, read_folder
from ._digest import file_digests, legacy_index_digest, sha256_digest, skill_digest
from ._http import Fetcher, FetchError
from ._source import Source
from ._values import (
    Candidate,
    Limits,
    Offer,
    Origin,
    Payload,
    Refusal,
    Refused,
    Request,
    Resolved,
)
from ._wellknown import IndexEntry, IndexUnusable, ParsedIndex, index_urls, parse_index

FETCH_WORKERS = 8
"""Index entries fetched and verified at once (from a server that is not on loopback)."""


def resolve_folder(source: Source, request: Request, *, limits: Limits, system: bool) -> Offer:
    """Every skill discovered under a local folder (or the bundled skills, `system`)."""
    origin = (
        Origin(source_type="system", source="skillpack")
        if system
        else Origin(source_type="local", source=source.location, source_url=source.location)
    )
    return _resolve_tree(source, source.location, request, limits=limits, origin=origin)


def fetch_index(site: str, fetcher: Fetcher, limits: Limits) -> tuple[str, ParsedIndex]:
    """The first index of `site` that lists at least one usable skill.

    Raises:
        SkillIOError: none of the well-known index URLs holds a usable index.
    """
    tried: list[str] = []
    for url in index_urls(site):
        fetched = fetcher.get(url, max_bytes=limits.max_index_bytes, cache=True, missing_ok=True)
        if fetched is None:
            tried.append(f"{url} (404)")
            continue
        try:
            parsed = parse_index(fetched.body, index_url=fetched.url)
        except IndexUnusable as error:
            tried.append(str(error))
            continue
        if parsed.entries:
            return fetched.url, parsed
        tried.append(f"{url} (no usable skills: {' '.join(parsed.warnings) or 'empty'})")
    raise SkillIOError(
        f"No skills index found for {site}. Tried: {'; '.join(tried)}. Give the site's root "
        "or base URL (the index lives at <base>/.well-known/agent-skills/index.json)."
    )


def resolve_site(source: Source, request: Request, *, limits: Limits, fetcher: Fetcher) -> Offer:
    index_url, parsed = fetch_index(source.location, fetcher, limits)
    request.check([entry.name for entry in parsed.entries], source.text)
    unchanged: list[str] = []
    selected: list[IndexEntry] = []
    host = (urlsplit(source.location).hostname or "").removeprefix("www.")
    for entry in parsed.entries:
        if request.wanted is not None and entry.name not in request.wanted:
            continue
        if entry.digest is not None and request.known.get(entry.name) == entry.digest:
            unchanged.append(entry.name)
        else:
            selected.append(entry)

    def fetch(entry: IndexEntry) -> tuple[Payload, str | None] | Refusal:
        try:
            return _fetch_entry(entry, fetcher, limits)
        except Refused as refused:
            return Refusal(name=entry.name, code=refused.code, message=refused.message)
        except FetchError as error:
            return Refusal(
                name=entry.name,
                code="fetch-failed",
                message=f"{entry.name}: {error} Nothing of it was installed.",
            )

    def take(
        entry: IndexEntry, fetched: tuple[Payload, str | None] | Refusal
    ) -> Candidate | Refusal:
        if isinstance(fetched, Refusal):
            return fetched
        payload, artifact_digest = fetched
        origin = Origin(
            source_type="well-known",
            source=host,
            source_url=source.location,
            index_url=index_url,
            artifact_url=entry.url,
            artifact_digest=artifact_digest,
            well_known_digest=entry.digest or legacy_index_digest(payload.files),
        )
        try:
            return make_candidate(payload, origin, name=entry.name)
        except Refused as refused:
            return Refusal(name=entry.name, code=refused.code, message=refused.message)

    # From a far server, downloads run on worker threads (their latency overlaps) while
    # this thread validates and audits what has arrived. A loopback server has no
    # latency to hide: threads would only contend for the GIL (measured slower).
    loopback = is_loopback(urlsplit(index_url).hostname or "")
    if loopback or len(selected) < 2:
        results = [take(entry, fetch(entry)) for entry in selected]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(FETCH_WORKERS, len(selected))) as pool:
            pending = [pool.submit(fetch, entry) for entry in selected]
            results = [
                take(entry, job.result()) for entry, job in zip(selected, pending, strict=True)
            ]
    candidates = [r for r in results if isinstance(r, Candidate)]
    refusals = [r for r in results if isinstance(r, Refusal)]
    return Offer(
        resolved=Resolved(
            candidates=tuple(candidates),
            refusals=tuple(refusals),
            warnings=parsed.warnings,
        ),
        offered=tuple(entry.name for entry in parsed.entries),
        unchanged=tuple(unchanged),
    )


def _fetch_entry(entry: IndexEntry, fetcher: Fetcher, limits: Limits) -> tuple[Payload, str | None]:
    """The verified files of one index entry and its artifact digest."""
    unsafe = entry.problem_path()
    if unsafe is not None:
        raise Refused(
            "unsafe-entry",
            f"{entry.name}: the index lists the file {unsafe!r}, which would leave the skill "
            "folder; nothing of it was fetched.",
        )
    artifact_digest: str | None = None
    if entry.kind == "files":
        files: dict[str, bytes] = {}
        for ref in entry.files:
            fetched = fetcher.get(ref.url, max_bytes=limits.max_download_bytes)
            assert fetched is not None
            files[ref.path] = fetched.body
            if len(files) > limits.max_files:
                raise Refused(
                    "too-large", f"{entry.name} lists more than {limits.max_files} files."
                )
        payload = Payload(files=files)
    else:
        assert entry.url is not None and entry.digest is not None
        fetched = fetcher.get(entry.url, max_bytes=limits.max_download_bytes)
        assert fetched is not None
        artifact_digest = sha256_digest(fetched.body)
        if artifact_digest != entry.digest:
            raise Refused(
                "digest-mismatch",
                f"{entry.name}: {entry.url} has the digest {artifact_digest}, but the index "
                f"says {entry.digest}. The file was altered or the index is stale; nothing "
                "of it was installed.",
            )
        if entry.kind == "skill-md":
            payload = Payload(files={SKILL_FILE: fetched.body})
        else:
            kind = archive_kind(entry.url, fetched.body, fetched.content_type)
            if kind is None:
                raise Refused(
                    "archive-invalid",
                    f"{entry.name}: {entry.url} is neither a .zip nor a .tar.gz archive.",
                )
            payload = read_archive(fetched.body, kind, limits=limits, label=entry.url)
            if SKILL_FILE not in payload.files:
                raise Refused(
                    "skill-md-missing",
                    f"{entry.name}: {entry.url} has no SKILL.md at its root (archives must "
                    "hold the skill folder's contents, not a folder).",
                )
    _verify_files(entry, payload)
    return payload, artifact_digest


def _verify_files(entry: IndexEntry, payload: Payload) -> None:
    """Per-file digests, then the skill digest, where the index gives them."""
    digests = file_digests(payload.files)
    listed = {ref.path: ref.digest for ref in entry.files if ref.digest is not None}
    for path, expected in listed.items():
        actual = digests.get(path)
        if actual is None:
            raise Refused(
                "file-missing",
                f"{entry.name}: the index lists {path}, which the download does not hold.",
            )
        if actual != expected:
            raise Refused(
                "file-digest-mismatch",
                f"{entry.name}: {path} has the digest {actual}, but the index says {expected}. "
                "The file was altered; nothing of the skill was installed.",
            )
    if listed:
        extra = sorted(set(digests) - set(listed))
        if extra:
            raise Refused(
                "file-unlisted",
                f"{entry.name}: the download holds files the index does not list "
                f"({', '.join(extra[:5])}); refusing unverified files.",
            )
    if entry.skill_digest is not None and skill_digest(digests) != entry.skill_digest:
        raise Refused(
            "skill-digest-mismatch",
            f"{entry.name}: its files give the skill digest {skill_digest(digests)}, but the "
            f"index says {entry.skill_digest}; nothing of it was installed.",
        )


# --- git, archives, folders --------------------------------------------------------


def resolve_git(source: Source, request: Request, *, limits: Limits) -> Offer:
    import tempfile

    from ._git import clone

    scratch = Path(tempfile.mkdtemp(prefix="skillpack-git-"))
    try:
        checkout = scratch / "repo"
        timeout = max(60.0, 4 * limits.timeout)
        commit = clone(source.location, ref=source.ref, dest=checkout, timeout=timeout)
        root = checkout
        if source.subpath:
            root = (checkout / source.subpath).resolve()
            if not root.is_relative_to(checkout.resolve()) or not root.is_dir():
                raise UsageError(
                    f"{source.text}: the repository has no folder {source.subpath!r} "
                    f"at {source.ref or 'its default branch'}."
                )
        origin = Origin(
            source_type="github" if source.github else "git",
            source=source.github or source.location,
            source_url=None if source.github else source.location,
            ref=source.ref,
            commit=commit,
        )
        return _resolve_tree(
            source, str(root), request, limits=limits, origin=origin, repo=str(checkout)
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def resolve_archive(
    source: Source, request: Request, *, limits: Limits, fetcher: Fetcher | None
) -> Offer:
    label = source.location
    if source.is_local:
        try:
            size = os.path.getsize(source.location)
            if size > limits.max_download_bytes:
                raise SkillIOError(
                    f"{label} is larger than the {limits.max_download_bytes}-byte limit."
                )
            data = Path(source.location).read_bytes()
        except OSError as error:
            raise SkillIOError(f"Cannot read {label} ({error.strerror or error}).") from None
        content_type = ""
    else:
        assert fetcher is not None
        fetched = fetcher.get(source.location, max_bytes=limits.max_download_bytes)
        assert fetched is not None
        data, content_type = fetched.body, fetched.content_type
    origin = Origin(
        source_type="archive",
        source=source.location,
        source_url=source.location,
        artifact_url=None if source.is_local else source.location,
        artifact_digest=sha256_digest(data),
    )
    kind = archive_kind(source.location, data, content_type)
    try:
        if kind is None:
            raise Refused("archive-invalid", f"{label} is neither a .zip nor a .tar.gz archive.")
        payload = read_archive(data, kind, limits=limits, label=label)
    except Refused as refused:
        refusal = Refusal(name=source.text, code=refused.code, message=refused.message)
        return Offer(resolved=Resolved(refusals=(refusal,)), offered=())
    if SKILL_FILE in payload.files:
        try:
            candidate = make_candidate(payload, replace(origin, skill_path=SKILL_FILE))
        except Refused as refused:
            refusal = Refusal(name=source.text, code=refused.code, message=refused.message)
            return Offer(resolved=Resolved(refusals=(refusal,)), offered=())
        taken = request.wanted is None or candidate.name in request.wanted
        return Offer(
            resolved=Resolved(candidates=(candidate,) if taken else ()),
            offered=(candidate.name,),
        )
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="skillpack-archive-"))
    try:
        for path, content in payload.files.items():
            target = scratch.joinpath(*path.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            if path in payload.executable:
                target.chmod(0o755)
        return _resolve_tree(source, str(scratch), request, limits=limits, origin=origin)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _resolve_tree(
    source: Source,
    root: str,
    request: Request,
    *,
    limits: Limits,
    origin: Origin,
    repo: str | None = None,
) -> Offer:
    """Every skill discovered under `root` (a checkout `repo`, or a folder)."""
    found, failed = find_skill_dirs(root)
    candidates: list[Candidate] = []
    refusals: list[Refusal] = []
    names = _unique([*(skill.name for skill in found), *(f.name for f in failed)])
    request.check(names, source.text)
    for failure in failed:
        if request.wanted is not None and failure.name not in request.wanted:
            continue
        details = "; ".join(f"{p.code}: {p.message}" for p in failure.problems)
        refusals.append(
            Refusal(
                name=failure.name,
                code="skill-invalid",
                message=f"{failure.relpath} fails strict validation, so it was not installed: "
                f"{details}",
            )
        )
    by_name: dict[str, list[FoundSkill]] = {}
    for skill in found:
        by_name.setdefault(skill.name, []).append(skill)
    for name, group in by_name.items():
        if request.wanted is not None and name not in request.wanted:
            continue
        if len(group) > 1:
            paths = ", ".join(skill.relpath for skill in group)
            refusals.append(
                Refusal(
                    name=name,
                    code="name-ambiguous",
                    message=f"The source holds several skills named '{name}' ({paths}); "
                    "point SOURCE at the folder of the one you want.",
                )
            )
            continue
        skill = group[0]
        anchor = repo or root
        skill_path = os.path.relpath(os.path.join(skill.dir, SKILL_FILE), anchor)
        try:
            payload = read_folder(
                skill.dir, limits=limits, exclude=nested_dirs(skill, found), label=skill.relpath
            )
            candidates.append(
                make_candidate(
                    payload,
                    replace(origin, skill_path=skill_path.replace(os.sep, "/")),
                    name=name,
                )
            )
        except Refused as refused:
            refusals.append(Refusal(name=name, code=refused.code, message=refused.message))
    return Offer(
        resolved=Resolved(candidates=tuple(candidates), refusals=tuple(refusals)),
        offered=tuple(names),
    )


def _unique(names: Iterable[str]) -> list[str]:
    return sorted(set(names))
