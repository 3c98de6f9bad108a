"""Reading a well-known skills index in the three forms sites serve (pure).

1. **Discovery 0.2.0** (`"$schema": SCHEMA_V2`, what the `skills` npm CLI reads):
   entries `{name, description, type: "skill-md" | "archive", url, digest}`, where
   `digest` is the sha256 of the artifact's bytes and `url` resolves against the
   index URL. skillpack's `publish` adds `files: [{path, digest}]` and
   `skillDigest`, which clients that do not know them ignore.
2. **Legacy** (no `$schema`, no `version`): `{name, description, files: [paths]}`,
   fetched file by file from `<index folder>/<name>/<path>`. Nothing to verify: a
   warning says so.
3. **Cloudflare draft** (`"version": "0.2.0"`): `{name, description, digest,
   files: [{path, digest}], package?: {url, digest}}`, `digest` being the skill
   digest over the per-file manifest (`_digest.skill_digest`).

Entries that break the rules are skipped with a warning naming them; a `$schema` or
major `version` skillpack does not know makes the whole index unusable.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from ._archive import normalize_member
from ._digest import is_digest
from ._values import Refused

SCHEMA_V2 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
WELL_KNOWN_PATHS = (".well-known/agent-skills", ".well-known/skills")
"""Index folders, newest first; `index.json` inside each."""
INDEX_FILE = "index.json"

IndexForm = Literal["v2", "legacy", "cloudflare"]
EntryKind = Literal["skill-md", "archive", "files"]

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_MAX_DESCRIPTION = 1024


class IndexUnusable(Exception):
    """The document is not an index skillpack can read at all."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FileRef:
    """One file of an index entry."""

    path: str
    digest: str | None
    url: str
    """Where the file is served, for clients that fetch file by file."""


@dataclass(frozen=True, kw_only=True, slots=True)
class IndexEntry:
    """One skill of an index, normalized across the forms."""

    name: str
    description: str
    form: IndexForm
    kind: EntryKind
    """`skill-md` / `archive`: one artifact at `url`; `files`: fetch `files` one by one."""
    url: str | None
    """The artifact's absolute URL (an archive for a Cloudflare `package`)."""
    digest: str | None
    """The artifact's `sha256:` digest."""
    files: tuple[FileRef, ...]
    skill_digest: str | None
    """The draft's skill digest, when the index gives one."""

    def problem_path(self) -> str | None:
        """The first listed path that could leave the skill folder, if any."""
        for ref in self.files:
            try:
                normalize_member(ref.path, label=self.name)
            except Refused:
                return ref.path
        return None


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedIndex:
    form: IndexForm
    entries: tuple[IndexEntry, ...]
    warnings: tuple[str, ...]


def index_urls(site: str) -> tuple[str, ...]:
    """The index URLs of a site or base URL, in probing order (never the root's
    when a base path was given, as the `skills` npm CLI does)."""
    parts = urlsplit(site)
    base = parts.path.rstrip("/")
    return tuple(
        urlunsplit((parts.scheme, parts.netloc, f"{base}/{folder}/{INDEX_FILE}", "", ""))
        for folder in WELL_KNOWN_PATHS
    )


def parse_index(data: bytes, *, index_url: str) -> ParsedIndex:
    """The entries of an index document, with warnings for what was skipped.

    Raises:
        IndexUnusable: not JSON, not an object with a `skills` list, or a
            `$schema`/`version` of another format.
    """
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise IndexUnusable(f"{index_url} is not valid JSON ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("skills"), list):
        raise IndexUnusable(f"{index_url} is not a skills index (no `skills` list)")
    schema = document.get("$schema")
    if schema is not None:
        if schema != SCHEMA_V2:
            raise IndexUnusable(
                f"{index_url} declares the schema {schema!r}, which skillpack does not know "
                f"(it reads {SCHEMA_V2})"
            )
        return _parse(document["skills"], "v2", index_url, _v2_entry)
    version = document.get("version")
    if version is not None:
        if not isinstance(version, str) or not version.startswith("0."):
            raise IndexUnusable(f"{index_url} has index version {version!r}; skillpack reads 0.x")
        return _parse(document["skills"], "cloudflare", index_url, _cloudflare_entry)
    return _parse(document["skills"], "legacy", index_url, _legacy_entry)


def _parse(items: list[Any], form: IndexForm, index_url: str, build: Any) -> ParsedIndex:
    entries: list[IndexEntry] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for position, item in enumerate(items):
        label = _label(item, position)
        try:
            entry = _common(item, label)
            if entry[0] in seen:
                raise _Skip("appears twice in the index")
            built: IndexEntry = build(item, entry[0], entry[1], index_url)
        except _Skip as skip:
            warnings.append(f"Skipped {label} in {index_url}: {skip}.")
            continue
        seen.add(built.name)
        entries.append(built)
        if form == "legacy" or (form == "cloudflare" and built.skill_digest is None):
            warnings.append(
                f"{built.name}: {index_url} gives no digests for it, so its files cannot be "
                "verified; prefer a site that publishes the 0.2.0 index with digests."
            )
    return ParsedIndex(form=form, entries=tuple(entries), warnings=tuple(warnings))


class _Skip(Exception):
    pass


def _label(item: Any, position: int) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return f"skill {name!r}" if isinstance(name, str) else f"entry #{position + 1}"


def _common(item: Any, label: str) -> tuple[str, str]:
    if not isinstance(item, dict):
        raise _Skip("it is not an object")
    name, description = item.get("name"), item.get("description")
    if not isinstance(name, str) or len(name) > 64 or not _NAME.fullmatch(name):
        raise _Skip("its name is not 1-64 lowercase letters, digits and single hyphens")
    if not isinstance(description, str) or not description.strip():
        raise _Skip("it has no description")
    if len(description) > _MAX_DESCRIPTION:
        raise _Skip(f"its description is over {_MAX_DESCRIPTION} characters")
    return name, description


def _file_url(index_url: str, name: str, path: str) -> str:
    return urljoin(index_url, quote(f"{name}/{path}"))


def _file_refs(raw: Any, name: str, index_url: str, *, digests: bool) -> tuple[FileRef, ...]:
    if not isinstance(raw, list) or not raw:
        raise _Skip("its `files` is not a non-empty list")
    refs: list[FileRef] = []
    for item in raw:
        if isinstance(item, str):
            path, digest = item, None
        elif isinstance(item, dict) and isinstance(item.get("path"), str):
            path, digest = item["path"], item.get("digest")
            if digests and not is_digest(digest):
                raise _Skip(f"file {path!r} has no valid sha256 digest")
        else:
            raise _Skip("a `files` item is neither a path nor {path, digest}")
        refs.append(FileRef(path=path, digest=digest, url=_file_url(index_url, name, path)))
    if not any(ref.path == "SKILL.md" for ref in refs):
        raise _Skip("its `files` do not include SKILL.md")
    return tuple(refs)


def _v2_entry(item: dict[str, Any], name: str, description: str, index_url: str) -> IndexEntry:
    kind, url, digest = item.get("type"), item.get("url"), item.get("digest")
    if kind not in ("skill-md", "archive"):
        raise _Skip(f"its type {kind!r} is not skill-md or archive")
    if not isinstance(url, str) or not url:
        raise _Skip("it has no url")
    if not is_digest(digest):
        raise _Skip("its digest is not sha256: followed by 64 lowercase hex digits")
    files: tuple[FileRef, ...] = ()
    raw_files = item.get("files")
    if isinstance(raw_files, list) and raw_files and all(isinstance(f, dict) for f in raw_files):
        files = _file_refs(raw_files, name, index_url, digests=True)
    skill_digest = item.get("skillDigest")
    return IndexEntry(
        name=name,
        description=description,
        form="v2",
        kind=kind,
        url=urljoin(index_url, url),
        digest=digest,
        files=files,
        skill_digest=skill_digest if is_digest(skill_digest) else None,
    )


def _legacy_entry(item: dict[str, Any], name: str, description: str, index_url: str) -> IndexEntry:
    return IndexEntry(
        name=name,
        description=description,
        form="legacy",
        kind="files",
        url=None,
        digest=None,
        files=_file_refs(item.get("files"), name, index_url, digests=False),
        skill_digest=None,
    )


def _cloudflare_entry(
    item: dict[str, Any], name: str, description: str, index_url: str
) -> IndexEntry:
    raw_files = item.get("files")
    with_digests = isinstance(raw_files, list) and any(isinstance(f, dict) for f in raw_files)
    files = _file_refs(raw_files, name, index_url, digests=with_digests)
    digest = item.get("digest")
    if with_digests and not is_digest(digest):
        raise _Skip("its skill digest is not sha256: followed by 64 lowercase hex digits")
    package = item.get("package")
    url = package_digest = None
    if isinstance(package, dict):
        url, package_digest = package.get("url"), package.get("digest")
        if not isinstance(url, str) or not is_digest(package_digest):
            raise _Skip("its package has no url or no valid digest")
        url = urljoin(index_url, url)
    return IndexEntry(
        name=name,
        description=description,
        form="cloudflare",
        kind="archive" if url else "files",
        url=url,
        digest=package_digest,
        files=files,
        skill_digest=digest if with_digests else None,
    )
