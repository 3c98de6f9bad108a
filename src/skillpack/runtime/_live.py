"""A catalog that stays live: what changed between two catalogs, and where a new one comes from.

`Session(refresh=...)` (its `_refresh.LiveCatalog`) re-discovers its catalog through a
`CatalogSource` — on demand (`refresh()`), before tool calls (`"on_call"`; `"auto"`,
the default with a source, when a `stat_fingerprint` of its files differs) or when
a `discovery._watch.RootWatcher` sees files change (`"watch"`) — swaps it in
atomically and tells subscribers with a `CatalogChange`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from .._model import Catalog, Skill
from ..config._schema import Config

if TYPE_CHECKING:
    from ..discovery._discover import SkillDelta

RefreshMode = Literal["manual", "auto", "on_call", "watch"]
"""How a session keeps its catalog current (see `Session`)."""

REFRESH_MODES: tuple[str, ...] = ("manual", "auto", "on_call", "watch")

ON_CALL_INTERVAL = 0.25
"""Seconds: `"on_call"` re-discovers at most this often (the catalog is at most this stale)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogChange:
    """What a refresh changed; the new catalog is already in place when subscribers see it."""

    catalog: Catalog
    """The new catalog (already swapped in)."""
    added: tuple[Skill, ...]
    """Skills whose SKILL.md (by real path) was not in the old catalog."""
    removed: tuple[Skill, ...]
    """Skills of the old catalog that are gone (as they were)."""
    changed: tuple[Skill, ...]
    """Skills with the same real path and a new version, content or standing
    (e.g. newly shadowed), as they are now."""
    config_changed: bool = False
    """The config files changed (enable state, permissions, budgets may differ)."""

    @property
    def skills_changed(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def diff_catalogs(
    old: Catalog,
    new: Catalog,
    *,
    config_changed: bool = False,
    known: SkillDelta | None = None,
) -> CatalogChange | None:
    """The change from `old` to `new`, None when nothing a caller can see differs.

    Skills are matched by `Skill.key` (the real path of the SKILL.md). Problems and
    roots count too: a file that broke, or a root that appeared, is a change with
    no skill in it. `known` is the skills' change when the caller already worked it
    out (`discovery.discover_roots` does, from the roots it scanned): then the
    catalogs' skills are not compared.
    """
    if old is new and not config_changed:
        return None
    if known is not None:
        added, removed, changed = known
    else:
        before = {s.key: s for s in old.skills}
        after = {s.key: s for s in new.skills}
        added = tuple(s for s in new.skills if s.key not in before)
        removed = tuple(s for s in old.skills if s.key not in after)
        changed = tuple(
            s
            for s in new.skills
            if (was := before.get(s.key)) is not None and was is not s and was != s
        )
    if not (
        added
        or removed
        or changed
        or config_changed
        or old.problems != new.problems
        or old.roots != new.roots
    ):
        return None
    return CatalogChange(
        catalog=new, added=added, removed=removed, changed=changed, config_changed=config_changed
    )


class CatalogSource(Protocol):
    """Where a live session gets a fresh catalog, and what its watcher should watch."""

    def load(self) -> tuple[Catalog, Config | None]:
        """Discover again: the catalog, and the config when the source reads one."""
        ...

    def watch_paths(self, catalog: Catalog) -> tuple[str, ...]:
        """Folders to watch recursively for `catalog` (existing ones only)."""
        ...

    def probe(self, catalog: Catalog) -> Hashable:
        """A cheap fingerprint of what folder events miss (roots appearing, config edits)."""
        ...

    def note_paths(self, paths: Sequence[str]) -> bool:
        """Remember paths the host works on; True when the roots may have changed."""
        ...


@runtime_checkable
class IncrementalSource(CatalogSource, Protocol):
    """A source that can rediscover only what file events touched, and say what changed.

    A session uses these methods when its source has them (`WorkspaceSource` does);
    any other `CatalogSource` is reloaded whole and its catalogs compared.
    """

    def load_changed(self, touched: Collection[str]) -> tuple[Catalog, Config | None]:
        """`load()` after file events named `touched` (a watcher's paths since the last
        load): only what they touch (and what a probe would notice) is scanned again."""
        ...

    def known_change(self, old: Catalog, new: Catalog) -> SkillDelta | None:
        """The skills' change from `old` to `new` when the load that returned `new`
        worked it out (`old` is the catalog the source returned before); None: unknown."""
        ...


def fingerprint_paths(catalog: Catalog) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What `"auto"` stats before a tool call (`stat_fingerprint`): every SKILL.md,
    and every folder from a root down to each skill's folder.

    A skill added, removed or renamed in a root or in a folder on the way to a skill
    changes one of those folders' mtimes; an edit changes its SKILL.md (or, written
    by rename, its folder). Computed once per catalog; the `"watch"` mode or
    `refresh()` also see a skill added deep inside a folder that held none.
    """
    folders: set[str] = {root.path for root in catalog.roots if root.scope != "system"}
    files: list[str] = []
    for skill in catalog.skills:
        if skill.scope == "system":
            continue
        folder = os.path.dirname(skill.path)
        stop = skill.root or folder
        while folder not in folders:
            folders.add(folder)
            if folder == stop or len(folder) <= len(stop):
                break
            folder = os.path.dirname(folder)
        files.append(skill.path)
    return tuple(files), tuple(sorted(folders))


def stat_fingerprint(paths: tuple[tuple[str, ...], tuple[str, ...]]) -> list[object]:
    """`(mtime, size)` of each file and the mtime of each folder of `fingerprint_paths`
    (None for what is gone): about two `stat`s per skill, no walk, no parse."""
    stat = os.stat
    files, folders = paths
    out: list[object] = []
    for path in files:
        try:
            st = stat(path)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_mtime_ns, st.st_size))
    for path in folders:
        try:
            out.append(stat(path).st_mtime_ns)
        except OSError:
            out.append(None)
    return out


def existing_roots(catalog: Catalog) -> tuple[str, ...]:
    """The catalog's root folders that exist now, but the bundled (read-only) ones."""
    return tuple(
        root.path for root in catalog.roots if root.scope != "system" and os.path.isdir(root.path)
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class LoaderSource:
    """A `CatalogSource` over a host's `loader` callable: the catalog's own roots."""

    loader: Callable[[], Catalog]

    def load(self) -> tuple[Catalog, Config | None]:
        return self.loader(), None

    def watch_paths(self, catalog: Catalog) -> tuple[str, ...]:
        return existing_roots(catalog)

    def probe(self, catalog: Catalog) -> Hashable:
        return existing_roots(catalog)

    def note_paths(self, paths: Sequence[str]) -> bool:
        return False  # a host's loader decides its roots itself
