"""What the MCP server serves from one catalog: skill paths, entries, files, directories.

Synchronous and protocol-free: the server (`_server.py`) calls these from worker
threads and turns their values into MCP results. A `ServedCatalog` is built once per
catalog (the live catalog swaps in a new one when skills change) and holds:

- the skills the model may see (enabled, permitted, model-invocable, not shadowed;
  legacy command files, which have no folder, only as tools and prompts), in catalog
  order, each with its `skill://` path (`_uris.assign_paths`);
- per served skill, the folders of nested skills that are disabled or denied: their
  files are withheld from the enclosing skill too ("absent everywhere");
- the prompts: every user-invocable skill under a unique name.

Files are never cached here: every listing walks the folder and every read reads the
file, so a digest always describes the bytes a read returns now (digests themselves
are cached by the reader, keyed on `stat`). What is kept is each skill's finished
entry, keyed on the whole manifest that walk returned (every file's path, size and
digest): a tree whose walk returns the same manifest gets the same entry without
filtering, parsing or encoding it again.
"""

from __future__ import annotations

import contextlib
import functools
import json
import mimetypes
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .._errors import SkillIOError, SkillNotFoundError, UsageError
from .._limits import MCP_SKILL_MAX_BYTES, MCP_SKILL_MAX_FILES
from .._model import SKILL_FILE, Catalog, Skill, SkillFile, sha256_digest
from ..runtime._left_out import LeftOut, catalog_version, left_out, left_out_entry
from ..runtime._readers import SkillContent
from . import _uris
from ._uris import Segments

if TYPE_CHECKING:
    from ..index._digests import FrontmatterStore

DIRECTORY_MIME: Final = "inode/directory"
MARKDOWN_MIME: Final = "text/markdown"
NAME_PATTERN: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
NAME_MAX: Final = 64
DESCRIPTION_MAX: Final = 1024
Manifest = tuple[tuple[SkillFile, ...], bool]
"""A skill's files (path, size, digest) and whether the walk stopped at the limit."""
_FRONTMATTER_CACHE: Final = 20_000
"""Parsed frontmatter kept per SKILL.md digest (a few hundred bytes each)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Listing:
    """One skill's entry for `skills/list`/`skills/get`, or why it has none."""

    entry: dict[str, Any] | None
    """`{uri, frontmatter, resources}`; None when the skill cannot be listed."""
    reason: str = ""
    """Why not (a sentence naming the fix), when `entry` is None."""
    size: int = 0
    """Bytes of `entry` as JSON (what a `skills/list` page's size bound counts)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FileRead:
    """The bytes `resources/read` returns for one URI."""

    uri: str
    mime_type: str
    data: bytes


@dataclass(frozen=True, kw_only=True, slots=True)
class Child:
    """One direct child of a directory resource."""

    uri: str
    name: str
    mime_type: str
    size: int | None = None


@dataclass(kw_only=True)
class FrontmatterCache:
    """SKILL.md digest -> its frontmatter as YAML 1.2 JSON (or the reason it has none).
    Shared by every `ServedCatalog` of one server; thread-safe and bounded. With a
    `store`, what is parsed is kept in the index file too, so a restarted server parses
    no file version it has parsed before."""

    entries: OrderedDict[str, dict[str, Any] | str] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    store: FrontmatterStore | None = None

    def lookup(self, digest: str) -> dict[str, Any] | str | None:
        """The parsed frontmatter of the SKILL.md version with this digest, if known."""
        with self.lock:
            found = self.entries.get(digest)
        if found is None and self.store is not None:
            found = self.store.get(digest)
            if found is not None:
                self._keep(digest, found)
        return found

    def parse(self, digest: str, data: bytes) -> dict[str, Any] | str:
        """The frontmatter of `data` (whose digest is `digest`), parsed now and kept
        (after `lookup` did not know it: a store is not asked twice)."""
        value = _frontmatter_of(data)
        self._keep(digest, value)
        if self.store is not None:
            self.store.put(digest, value)
        return value

    def _keep(self, digest: str, value: dict[str, Any] | str) -> None:
        with self.lock:
            self.entries[digest] = value
            while len(self.entries) > _FRONTMATTER_CACHE:
                self.entries.popitem(last=False)


def _frontmatter_of(data: bytes) -> dict[str, Any] | str:
    from ..parse._frontmatter import split_frontmatter
    from ..parse._yaml12 import Yaml12Error, frontmatter_json

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "its SKILL.md is not UTF-8"
    split = split_frontmatter(text)
    if split.frontmatter is None:
        return "its SKILL.md has no frontmatter block"
    try:
        return frontmatter_json(split.frontmatter)
    except Yaml12Error as exc:
        return str(exc)


def mime_type(relpath: str) -> str:
    """`text/markdown` for Markdown, else the extension's type, else octet-stream."""
    if relpath.endswith((".md", ".markdown")):
        return MARKDOWN_MIME
    guessed, _encoding = mimetypes.guess_type(relpath, strict=False)
    return guessed or "application/octet-stream"


class ServedCatalog:
    """One catalog as the MCP server shows it (see the module docstring)."""

    def __init__(
        self,
        catalog: Catalog,
        *,
        served: Sequence[Skill],
        withheld: Sequence[Skill],
        user_invocable: Sequence[Skill],
        reader: SkillContent,
        frontmatter: FrontmatterCache,
        version: str = "",
        left_out: Sequence[LeftOut] = (),
        paths: Mapping[str, Segments] | None = None,
    ) -> None:
        """Args:
        catalog: The catalog this view is of.
        served: The skills the model may see, in catalog order.
        withheld: Disabled or denied skills: nested inside a served one, their
            folders are left out of it.
        user_invocable: The skills offered as prompts.
        reader: Where files and digests come from.
        frontmatter: The server's cache of parsed frontmatter.
        version: The catalog's version (`runtime._left_out.catalog_version`).
        left_out: What discovery and the session leave out (`runtime._left_out`).
        paths: Each served skill's path (`_uris.assign_paths` of `served`), when known.
        """
        self.catalog = catalog
        self.version = version
        self.discovery_left_out = tuple(left_out)
        self.skills = tuple(served)
        self._reader = reader
        self._frontmatter = frontmatter
        self._by_key = {s.key: s for s in self.skills}
        self._key_of_path = {s.path: s.key for s in self.skills}
        self._order = {key: index for index, key in enumerate(self._by_key)}
        self.path_of = _uris.assign_paths(self.skills) if paths is None else paths
        self._key_at = {path: key for key, path in self.path_of.items()}
        self._withheld = _nested_folders(self.skills, withheld)
        self._user_invocable = tuple(user_invocable)
        self._listings: dict[str, tuple[Manifest, Listing]] = {}
        self._listings_lock = threading.Lock()
        self._not_listable: dict[str, LeftOut] = {}
        """Served skills whose listing came out empty, by key (found as pages are made)."""

    @functools.cached_property
    def prompts(self) -> dict[str, Skill]:
        """Prompt name -> skill, for every user-invocable skill (made when first asked:
        a first `skills/list` page does not wait for it)."""
        return _prompt_names(self._user_invocable)

    # -- lookups ----------------------------------------------------------------

    def skill_uri(self, skill: Skill) -> str:
        return _uris.file_uri(self.path_of[skill.key], SKILL_FILE)

    def resolve(self, uri: str) -> tuple[Skill, Segments]:
        """(served skill, file segments) a URI names; raises `SkillNotFoundError`."""
        found = _uris.split(_uris.parse(uri), self._key_at)
        if found is None:
            raise SkillNotFoundError(
                f"No skill is served at {uri[:300]}; list them with skills/list or resources/list."
            )
        key, rest = found
        return self._by_key[key], rest

    def skill_at(self, uri: str) -> Skill:
        """The served skill whose SKILL.md `uri` is (`skills/get`)."""
        skill, rest = self.resolve(uri)
        if rest != (SKILL_FILE,):
            raise SkillNotFoundError(
                f"{uri[:300]} is not a skill's SKILL.md URI; a skill is named by "
                "skill://<skill-path>/SKILL.md."
            )
        return skill

    # -- files ------------------------------------------------------------------

    def _serves(self, skill: Skill, parts: Segments) -> bool:
        from ..discovery._confine import in_tree

        if not parts or not in_tree(parts):
            return False
        rel = "/".join(parts)
        return not any(rel.startswith(folder) for folder in self._withheld.get(skill.key, ()))

    def files(self, skill: Skill, *, digests: bool) -> Manifest:
        """The files the skill serves (at most `MCP_SKILL_MAX_FILES`) and whether there
        were more. Digests are computed within `MCP_SKILL_MAX_BYTES` when asked."""
        return self._served_files(skill, self._manifest(skill, digests=digests))

    def _manifest(self, skill: Skill, *, digests: bool) -> Manifest:
        """Every file of the skill's tree, as the reader walks it now."""
        return self._reader.manifest(
            skill,
            max_files=MCP_SKILL_MAX_FILES,
            max_bytes=MCP_SKILL_MAX_BYTES if digests else 0,
        )

    def _served_files(self, skill: Skill, manifest: Manifest) -> Manifest:
        """The files of `manifest` the skill serves (withheld and shadowed ones left out)."""
        found, truncated = manifest
        path = self.path_of[skill.key]
        kept = []
        for item in found:
            parts = tuple(item.path.split("/"))
            if not self._serves(skill, parts):
                continue
            # A file inside a served nested skill must be the one its URI reads.
            resolved = _uris.split((*path, *parts), self._key_at)
            if resolved is not None and resolved[0] != skill.key:
                nested = self._by_key[resolved[0]]
                if not _same_file(skill, item.path, nested, "/".join(resolved[1])):
                    continue
            kept.append(item)
        return tuple(kept), truncated

    def own_files(self, skill: Skill) -> list[tuple[str, SkillFile]]:
        """(URI, file) of the files whose URI names this skill (`resources/list`): a
        served nested skill's files are listed under that skill, once."""
        path = self.path_of[skill.key]
        files, _truncated = self.files(skill, digests=False)
        owned = []
        for item in files:
            parts = tuple(item.path.split("/"))
            found = _uris.split((*path, *parts), self._key_at)
            if found is not None and found[0] == skill.key:
                owned.append((_uris.file_uri(path, item.path), item))
        return owned

    def read(self, uri: str) -> FileRead:
        """The bytes of one served file.

        Raises:
            SkillNotFoundError: no served skill or file at `uri` (also a file that
                vanished since it was listed).
            UsageError: the URI is malformed (traversal, encoding, length).
            SkillPermissionError, SkillIOError: from the reader.
        """
        skill, rest = self.resolve(uri)
        if not self._serves(skill, rest):
            raise SkillNotFoundError(
                f"{uri[:300]} is not a file skill '{skill.name}' serves; see its entry in "
                "skills/list or resources/directory/read."
            )
        relpath = "/".join(rest)
        data = self._reader.read_bytes(skill, relpath, max_bytes=MCP_SKILL_MAX_BYTES)
        canonical = _uris.file_uri(self.path_of[skill.key], relpath)
        return FileRead(uri=canonical, mime_type=mime_type(relpath), data=data)

    # -- skills/list and skills/get ---------------------------------------------

    def listing(self, skill: Skill) -> Listing:
        """The skill's extension entry: frontmatter as YAML 1.2 reads it, every file
        with its size and digest; or why it cannot be listed (not a conforming Agent
        Skill, or over the extension's limits).

        The tree is walked on every call; the entry is built again only when the walk
        returns a different manifest (a file added, removed, resized or rewritten).
        """
        try:
            listing = self._built_listing(skill)
        except SkillIOError as exc:
            # One skill whose files cannot be read now (an upstream that fails or sends
            # too much) is left out of the page; it is tried again on the next listing.
            listing = Listing(
                entry=None, reason=f"its files cannot be read now: {str(exc).rstrip('.')}"
            )
            with self._listings_lock:
                self._not_listable[skill.key] = left_out_entry(
                    skill, code="not-listable", reason=listing.reason
                )
            return listing
        with self._listings_lock:
            if listing.entry is None:
                self._not_listable[skill.key] = left_out_entry(
                    skill, code="not-listable", reason=listing.reason
                )
            else:
                self._not_listable.pop(skill.key, None)
        return listing

    def _built_listing(self, skill: Skill) -> Listing:
        """The skill's entry for its tree as walked now, built when the walk differs
        from the one it was last built for (kept, but not yet counted as left out)."""
        manifest = self._manifest(skill, digests=True)
        with self._listings_lock:
            kept = self._listings.get(skill.key)
        if kept is not None and kept[0] == manifest:
            return kept[1]
        listing = self._listing(skill, self._served_files(skill, manifest))
        with self._listings_lock:
            self._listings[skill.key] = (manifest, listing)
        return listing

    def prepare(self, skills: Sequence[Skill]) -> None:
        """Build the entries of `skills` ahead of the page that lists them. What cannot
        be listed is left for that page to find and report: until then no client is
        told of it, as if nothing had been built."""
        for skill in skills:
            with contextlib.suppress(SkillIOError):
                self._built_listing(skill)

    # -- what is left out ---------------------------------------------------------

    def left_out(self) -> tuple[LeftOut, ...]:
        """What is not offered: discovery's omissions, then the served skills whose
        entries the listings made so far could not build (`left_out_all` checks all)."""
        with self._listings_lock:
            found = sorted(self._not_listable.items(), key=lambda item: self._order[item[0]])
        return (*self.discovery_left_out, *(entry for _key, entry in found))

    def not_yet_listed(self, path: str) -> bool:
        """Whether `path` is the SKILL.md of a served skill this view has not yet found
        listable or not (an entry built ahead of its page that came out empty is not
        found yet: no page has reported it)."""
        key = self._key_of_path.get(path)
        if key is None:
            return False
        with self._listings_lock:
            if key in self._not_listable:
                return False
            kept = self._listings.get(key)
        return kept is None or kept[1].entry is None

    def left_out_all(self) -> tuple[LeftOut, ...]:
        """`left_out()` after building every served skill's listing (reads every tree)."""
        for skill in self.skills:
            self.listing(skill)
        return self.left_out()

    def _listing(self, skill: Skill, served: Manifest) -> Listing:
        files, truncated = served
        if truncated or len(files) > MCP_SKILL_MAX_FILES:
            return Listing(
                entry=None,
                reason=f"it has more than {MCP_SKILL_MAX_FILES} files, the extension's limit; "
                "move what the skill does not need out of its folder",
            )
        total = sum(f.size for f in files)
        if total > MCP_SKILL_MAX_BYTES:
            return Listing(
                entry=None,
                reason=f"its files add up to {total} bytes, over the extension's "
                f"{MCP_SKILL_MAX_BYTES}-byte limit; move large files out of its folder",
            )
        own = files[0] if files and files[0].path == SKILL_FILE else None
        if own is None:
            return Listing(entry=None, reason="its SKILL.md is gone")
        frontmatter = self._frontmatter.lookup(own.digest)
        if frontmatter is None:
            # Parsed once per version: the bytes read must be the ones the digest is of.
            try:
                data = self._reader.read_bytes(skill, SKILL_FILE, max_bytes=MCP_SKILL_MAX_BYTES)
            except SkillNotFoundError:
                return Listing(entry=None, reason="its SKILL.md is gone")
            digest = sha256_digest(data)
            if digest != own.digest:  # rewritten since the walk: maybe a version known
                frontmatter = self._frontmatter.lookup(digest)
            own = SkillFile(path=SKILL_FILE, size=len(data), digest=digest)
            if frontmatter is None:
                frontmatter = self._frontmatter.parse(digest, data)
        if isinstance(frontmatter, str):
            return Listing(entry=None, reason=frontmatter)
        problem = _conformance(frontmatter, skill.name)
        if problem:
            return Listing(entry=None, reason=problem)
        base = _uris.encode(self.path_of[skill.key])
        resources = [
            {"uri": _uris.file_uri(base, f.path), "digest": f.digest, "size": f.size}
            for f in (own, *(f for f in files if f.path != SKILL_FILE))
        ]
        entry = {
            "uri": _uris.file_uri(base, SKILL_FILE),
            "frontmatter": frontmatter,
            "resources": resources,
        }
        return Listing(entry=entry, size=len(json.dumps(entry)))

    # -- directories ------------------------------------------------------------

    def directory(self, uri: str) -> list[Child]:
        """The direct children of a directory resource: a skill's root or one of its
        folders, or a prefix of served skill paths (`skill://extra`).

        Raises:
            UsageError: `uri` is not a directory served here (-32602).
        """
        segments = _uris.parse(uri)
        found = _uris.split(segments, self._key_at)
        if found is None:
            return self._prefix_children(segments, uri)
        skill, rest = self._by_key[found[0]], found[1]
        files, _truncated = self.files(skill, digests=False)
        path = self.path_of[skill.key]
        folder = "/".join(rest) + "/" if rest else ""
        children: dict[str, Child] = {}
        for item in files:
            if not item.path.startswith(folder):
                continue
            head, sep, _tail = item.path[len(folder) :].partition("/")
            uri_of = _uris.file_uri(path, folder + head)
            if sep:
                children.setdefault(head, Child(uri=uri_of, name=head, mime_type=DIRECTORY_MIME))
            else:
                children[head] = Child(
                    uri=uri_of, name=head, mime_type=mime_type(head), size=item.size
                )
        if rest and not children:
            raise UsageError(f"{uri[:300]} is not a directory of skill '{skill.name}'.")
        return [children[name] for name in sorted(children)]

    def _prefix_children(self, segments: Segments, uri: str) -> list[Child]:
        depth = len(segments)
        names = sorted({p[depth] for p in self._key_at if len(p) > depth and p[:depth] == segments})
        if not names:
            raise UsageError(f"{uri[:300]} is not a directory served here.")
        return [
            Child(uri=_uris.encode((*segments, n)), name=n, mime_type=DIRECTORY_MIME) for n in names
        ]


def _conformance(frontmatter: dict[str, Any], name: str) -> str:
    """Why a frontmatter cannot be listed by the extension ("" when it can)."""
    declared = frontmatter.get("name")
    if not isinstance(declared, str) or not declared.strip():
        return "its frontmatter has no `name` (the extension requires one); add `name:`"
    if len(declared) > NAME_MAX or not NAME_PATTERN.fullmatch(declared):
        return (
            f"its name {declared!r} breaks the Agent Skills naming rule (1-64 lowercase "
            "letters, digits and single hyphens); rename it (`name:` and its folder)"
        )
    if declared != name:
        return (
            f"its name reads {declared!r} in YAML 1.2 but {name!r} in skillpack; quote "
            "the `name:` value"
        )
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        return "its frontmatter has no text `description`; add `description:` as text"
    if len(description) > DESCRIPTION_MAX:
        return (
            f"its description is {len(description)} characters, over the "
            f"{DESCRIPTION_MAX}-character limit; shorten it and move the detail into the body"
        )
    return ""


def _same_file(outer: Skill, outer_rel: str, nested: Skill, nested_rel: str) -> bool:
    outer_path = outer.dir.rstrip("/\\") + "/" + outer_rel
    nested_path = nested.dir.rstrip("/\\") + "/" + nested_rel
    return outer_path.replace("\\", "/") == nested_path.replace("\\", "/")


def _nested_folders(served: Sequence[Skill], withheld: Sequence[Skill]) -> dict[str, list[str]]:
    """Served skill key -> folders (relative, `/`-terminated) of withheld skills inside it."""
    by_dir = {s.dir.replace("\\", "/").rstrip("/"): s for s in served}
    inside: dict[str, list[str]] = {}
    for hidden in withheld:
        folder = hidden.dir.replace("\\", "/").rstrip("/")
        parent = folder.rpartition("/")[0]
        while parent:
            outer = by_dir.get(parent)
            if outer is not None:
                inside.setdefault(outer.key, []).append(folder[len(parent) + 1 :] + "/")
            parent = parent.rpartition("/")[0]
    return inside


def _prompt_names(skills: Sequence[Skill]) -> dict[str, Skill]:
    """Prompt name -> skill: the bare name when unique, else the qualified name, else
    the SKILL.md path."""
    count: dict[str, int] = {}
    for skill in skills:
        for option in (skill.name, skill.qualified_name):
            count[option] = count.get(option, 0) + 1
    names: dict[str, Skill] = {}
    for skill in skills:
        chosen = next((o for o in (skill.name, skill.qualified_name) if count[o] == 1), skill.path)
        names[chosen] = skill
    return names


def _everyone(_skill: Skill) -> bool:
    """The standing of every skill when the session sets none apart."""
    return True


def _once(predicate: Callable[[Skill], bool]) -> Callable[[Skill], bool]:
    """`predicate`, answered once per skill (for one view's build, while the catalog
    holds every skill: identity is the key)."""
    answers: dict[int, bool] = {}

    def cached(skill: Skill) -> bool:
        found = answers.get(id(skill))
        if found is None:
            found = answers[id(skill)] = predicate(skill)
        return found

    return cached


def build_served(
    catalog: Catalog,
    *,
    model_skills: Callable[[Catalog], tuple[Skill, ...]],
    is_enabled: Callable[[Skill], bool],
    is_visible: Callable[[Skill], bool],
    reader: SkillContent,
    frontmatter: FrontmatterCache,
    everyone: bool = False,
    kept: Any = None,
) -> ServedCatalog:
    """The served view of `catalog` under a session's enable state and permissions;
    `everyone`: the session sets no skill apart (`Session.sets_none_apart`); `kept`:
    what `kept_view` gave of an earlier process's view of this very catalog (then
    neither its version nor its paths are worked out again), or None."""
    if everyone:
        is_enabled = is_visible = _everyone
    else:
        # Each skill's standing is asked once (five passes below would ask 50,000 times
        # at 10,000 skills, each through the config and the permission rules).
        is_enabled = _once(is_enabled)
        is_visible = _once(is_visible)
    # A legacy command file has no folder of its own: it is a tool and a prompt, not
    # a tree of resources.
    served = [s for s in model_skills(catalog) if not s.legacy_command]
    withheld = (
        [] if everyone else [s for s in catalog.skills if not (is_enabled(s) and is_visible(s))]
    )
    user_invocable = [
        s
        for s in catalog.skills
        if s.user_invocable and s.shadowed_by is None and is_enabled(s) and is_visible(s)
    ]
    version, paths = _kept_parts(kept, served) if everyone else (None, None)
    return ServedCatalog(
        catalog,
        served=served,
        withheld=withheld,
        user_invocable=user_invocable,
        reader=reader,
        frontmatter=frontmatter,
        version=version or catalog_version(catalog, is_enabled=is_enabled, is_visible=is_visible),
        left_out=left_out(catalog, is_enabled=is_enabled, is_visible=is_visible),
        paths=paths,
    )


KEPT_VIEW = "mcp served view"
"""What the server keeps in the index for a catalog it served (`runtime._kept`): the
view's version and paths, the two parts worth keeping (at 10,000 skills ~40 ms and
~60 ms of a first page's ~450)."""


def kept_view(view: ServedCatalog) -> tuple[str, tuple[tuple[str, Segments], ...]]:
    """What `build_served(kept=...)` takes back, as plain values (marshal holds them)."""
    return (view.version, tuple(view.path_of.items()))


def _kept_parts(
    kept: Any, served: Sequence[Skill]
) -> tuple[str | None, dict[str, Segments] | None]:
    """(version, paths) of a kept view that fits `served` (every key, text segments),
    else (None, None): anything else is worked out again."""
    try:
        version, pairs = kept
        paths = dict(pairs)
    except (TypeError, ValueError):
        return None, None
    if not isinstance(version, str) or not version or paths.keys() != {s.key for s in served}:
        return None, None
    for segments in paths.values():
        if type(segments) is not tuple or not all(type(part) is str for part in segments):
            return None, None
    return version, paths
