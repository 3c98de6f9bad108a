"""What `skills/list` and the problems resource say, without the MCP SDK.

The half of the server that needs no protocol library: the served view of the live
catalog (`ServedCatalog`, rebuilt when the catalog or the config changes), the
`skills/list` pages with their `_meta` (catalog version and what is left out), the
log message naming what is left out, the problems report, the `instructions` text
and the page cursors. `_server.SkillServer` serves these through the SDK; the stdio
front (`_front`) answers the first pages with them before the SDK is even imported.
Both build the same dicts here, so both send the same messages.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
from typing import TYPE_CHECKING, Any, Final

from .. import _errors as errors
from .._model import Catalog

if TYPE_CHECKING:  # the runtime loads on the discovery thread, not before `initialize`
    from ..render._catalog import CatalogMode
    from ..runtime._left_out import LeftOut
    from ..runtime._readers import SkillContent
    from ..runtime._session import Session
    from ._served import ServedCatalog

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
CACHE_FIELDS: Final = {"ttlMs": 0, "cacheScope": "private"}
"""The listing is live (watched) and per machine: never cache it, never share it."""
PROBLEMS_URI: Final = "skillpack://problems"
"""The resource listing what is left out and why (JSON; see `problems_report`)."""
META_VERSION: Final = "io.skillpack/catalogVersion"
META_LEFT_OUT: Final = "io.skillpack/leftOut"
LOGGER_NAME: Final = "skillpack"
LOG_ENTRIES: Final = 50
"""Left-out entries one log notification carries (the rest: read `PROBLEMS_URI`)."""
FIRST_PAGE_SKILLS: Final = 25
PAGE_SKILLS: Final = 200
PAGE_SKILLS_BYTES: Final = 4 * 1024 * 1024
"""A `skills/list` page ends after this many entries (the first page after fewer: a
host sees skills at once, and a listing of 12,000 skills still fits in 64 pages, the
MCP Inspector's bound) or about this many bytes."""
INSTRUCTIONS: Final = (
    "skillpack serves Agent Skills (SKILL.md folders). The skill_load tool's description "
    "lists the skills; call skill_search to find one for the task when that list does "
    "not, then skill_load (or use_skill) to get its instructions before you follow "
    "them; skill_read_file reads a file the instructions mention. Every file is also a "
    "skill:// resource, and the skills extension lists them with digests."
)

Told = tuple[tuple[str, str], ...]
"""What a client was last told is left out: (code, path) of each entry."""


class Pages:
    """The served view of one session's live catalog and the pages read from it.

    Thread-safe: the view is built once per catalog and config (a second caller
    waits for the build under way).
    """

    def __init__(
        self,
        session: Session,
        *,
        catalog_chars: int | None = None,
        catalog_instructions: bool = False,
        catalog_mode: CatalogMode | None = None,
    ) -> None:
        """Args:
        session: The live session whose catalog is served.
        catalog_chars: The budget of the catalog in `instructions` (see `SkillServer`).
        catalog_instructions: Put the catalog in `instructions`.
        catalog_mode: The catalog's mode (see `SkillServer`).

        Raises:
            UsageError: the session's reader cannot serve bytes.
        """
        from ..runtime._readers import SkillContent
        from ._served import FrontmatterCache

        reader = session.reader
        if not isinstance(reader, SkillContent):
            raise errors.UsageError(
                f"The session's reader ({type(reader).__name__}) cannot serve skill files "
                "as bytes; give it a reader with `manifest` and `read_bytes`."
            )
        self.session = session
        self.reader: SkillContent = reader
        self.catalog_chars = catalog_chars
        self.catalog_instructions = catalog_instructions
        self.catalog_mode = catalog_mode
        store = getattr(reader, "frontmatter_store", None)
        self._frontmatter = FrontmatterCache(store=None if store is None else store())
        self._view: ServedCatalog | None = None
        self._view_config: object = None
        self._building = threading.Lock()
        self._lock = threading.Lock()

    def view(self) -> ServedCatalog:
        """The served view of the session's current catalog (rebuilt when it or the
        config, which decides what is enabled and permitted, changes)."""
        catalog, config = self.session.catalog, self.session.config
        with self._lock:
            view = self._view
            current = self._view_config is config
        if view is not None and view.catalog is catalog and current:
            return view
        with self._building:  # one build at a time: a second caller waits for it
            return self._build_view(catalog, config)

    def _build_view(self, catalog: Catalog, config: object) -> ServedCatalog:
        with self._lock:
            view = self._view
            if view is not None and view.catalog is catalog and self._view_config is config:
                return view
        from ..runtime._session import keep_value, kept_value
        from ._served import KEPT_VIEW, build_served, kept_view

        # A view of the session's own choices (enabled, permitted) is not kept: only one
        # of the catalog and the config alone is another process's to reuse.
        everyone = self.session.skills.sets_none_apart()
        kept = kept_value(self.session, KEPT_VIEW, catalog) if everyone else None
        view = build_served(
            catalog,
            model_skills=self.session.skills.model_skills,
            everyone=everyone,
            is_enabled=self.session.skills.is_enabled,
            is_visible=self.session.skills.is_visible,
            reader=self.reader,
            frontmatter=self._frontmatter,
            kept=kept,
        )
        if everyone and kept is None:
            keep_value(self.session, KEPT_VIEW, catalog, kept_view(view))
        with self._lock:
            if self.session.catalog is catalog and self.session.config is config:
                self._view, self._view_config = view, config
        return view

    def instructions(self) -> str:
        """The `instructions` a client gets when it connects: the fixed usage note,
        and the current catalog after it when `catalog_instructions` asks for it."""
        if not self.catalog_instructions:
            return INSTRUCTIONS
        listed = self.session.render_catalog(
            format="markdown",
            budget_chars=self.catalog_chars,
            include_location=False,
            mode=self.catalog_mode,
        ).text
        return f"{INSTRUCTIONS}\n\n{listed}" if listed else INSTRUCTIONS

    def skills_page(self, start: int) -> dict[str, Any]:
        """One `skills/list` page from the served skill at `start`: whole entries only;
        skills that cannot be listed are left out (`skills/get` says why)."""
        view = self.view()
        entries: list[dict[str, Any]] = []
        size = 0
        index = start
        most = FIRST_PAGE_SKILLS if start == 0 else PAGE_SKILLS
        while index < len(view.skills) and len(entries) < most:
            if size >= PAGE_SKILLS_BYTES:
                break
            listing = view.listing(view.skills[index])
            index += 1
            if listing.entry is not None:
                entries.append(listing.entry)
                size += listing.size
        result: dict[str, Any] = {"skills": entries, **CACHE_FIELDS, "_meta": meta(view)}
        if index < len(view.skills):
            result["nextCursor"] = encode_cursor(index)
        return result

    def prepare_first_page(self) -> None:
        """Build the entries of the first `skills/list` page ahead of the request (the
        page itself, with what it leaves out, is made when it is asked for)."""
        view = self.view()
        view.prepare(view.skills[:FIRST_PAGE_SKILLS])

    def problems_report(
        self, *, check_all: bool = True, with_skills: bool = False
    ) -> dict[str, Any]:
        """What the server serves and leaves out (the problems resource, `mcp --check`):
        `{catalogVersion, served, leftOut: [LeftOut...], counts: {kind: n}}`, and with
        `with_skills` the served skills as `skills: [{name, path, uri}]`. With
        `check_all`, every served skill's listing is built first (reads every tree)."""
        from ..runtime._left_out import counts

        view = self.view()
        entries = view.left_out_all() if check_all else view.left_out()
        unlisted = {e.path for e in entries if e.kind == "not-listable"}
        report: dict[str, Any] = {
            "catalogVersion": view.version,
            "served": len(view.skills) - len(unlisted),
            "leftOut": [e.to_dict() for e in entries],
            "counts": counts(entries),
        }
        if with_skills:
            report["skills"] = [
                {"name": s.name, "path": s.path, "uri": view.skill_uri(s)}
                for s in view.skills
                if s.path not in unlisted
            ]
        return report


def meta(view: ServedCatalog) -> dict[str, Any]:
    """`_meta` of a `skills/list` page: the catalog version (a host re-walks the pages
    only when it changed) and what is left out so far (the resource has every one)."""
    from ..runtime._left_out import counts

    entries = view.left_out()
    return {
        META_VERSION: view.version,
        META_LEFT_OUT: {
            "count": len(entries),
            "counts": counts(entries),
            "notListable": sum(e.kind == "not-listable" for e in entries),
            "uri": PROBLEMS_URI,
        },
    }


def left_out_news(view: ServedCatalog, told: Told | None) -> tuple[Told, dict[str, Any] | None]:
    """(what `view` leaves out, the log message's `data` when that is news to a client
    last told `told`; None when it is not, or when nothing is left out)."""
    entries = view.left_out()
    now = tuple((e.code, e.path) for e in entries)
    if told:
        # A new view finds the skills it cannot list only as its pages are made: one
        # the client was told of stays told until this view lists it, so a catalog
        # change does not take it back in one message and add it again in the next.
        now += tuple(
            entry
            for entry in told
            if entry[0] == "not-listable" and entry not in now and view.not_yet_listed(entry[1])
        )
    if set(now) == set(told or ()) or not entries:
        return now, None
    return now, log_data(view, entries)


def log_data(view: ServedCatalog, entries: tuple[LeftOut, ...]) -> dict[str, Any]:
    """The `data` of the log message (warning) naming what is left out."""
    from ..runtime._left_out import counts

    kinds = ", ".join(f"{n} {kind}" for kind, n in counts(entries).items())
    return {
        "message": f"skillpack leaves out {len(entries)} skill(s) or root(s) ({kinds}); "
        f"read {PROBLEMS_URI} for each with its fix.",
        "catalogVersion": view.version,
        "leftOut": [e.to_dict() for e in entries[:LOG_ENTRIES]],
        "more": max(0, len(entries) - LOG_ENTRIES),
        "uri": PROBLEMS_URI,
    }


def encode_cursor(offset: int) -> str:
    """The opaque `nextCursor` of the page starting at `offset`."""
    return base64.urlsafe_b64encode(json.dumps({"o": offset}).encode()).decode("ascii")


def decode_cursor(cursor: str | None) -> int:
    """The offset a cursor names (0 for none).

    Raises:
        UsageError: a cursor this server did not write.
    """
    if cursor is None:
        return 0
    try:
        offset = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))["o"]
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeEncodeError):
        offset = None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise errors.UsageError(
            f"Invalid cursor {cursor[:100]!r}; pass back the nextCursor of the previous page."
        )
    return offset
