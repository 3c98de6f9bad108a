"""Replaying a root's recorded walk from the index with `stat` calls only.

A fresh walk fills a `_found.WalkRecord` (every folder's times, every plugin
manifest's signature, every file it loaded); the index stores it frozen, laid out
as `index._snapshot.Snapshot`. The next run serves the root from that snapshot when
no folder changed, `stat`ing each SKILL.md and loading only the ones that did. The
same checks, without loading anything (`unchanged`), tell a kept output still holds.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any, NamedTuple

from .._model import Problem, Root, Skill
from ..index._snapshot import (
    ITEM_AGENTS,
    ITEM_CODEX_SIG,
    ITEM_DIR,
    ITEM_PATH,
    ITEM_REAL,
    ITEM_STAT,
    SnapshotItem,
    file_version,
    problem_values,
    problems_from_values,
    skill_from_values,
    skill_values,
)
from ._found import Found, snapshot_item
from ._load import load_skill_md
from ._walk import codex_sidecar, file_sig

if TYPE_CHECKING:
    from ..index._cache import SkillCache

Limits = tuple[int, int, int, bool]
"""(max_depth, max_dirs, max_file_bytes, strict): everything that shapes a root's walk."""


def snapshot_key(root: Root, limits: Limits) -> str:
    """The index key of a root's snapshot: the root and every limit that shapes its walk."""
    root_parts = (root.path, root.scope, root.rank, root.plugin, root.follow_symlinks, root.kind)
    parts = (*root_parts, *limits)
    return "\0".join(map(str, parts))


def _folders_unchanged(dirs: Any, manifests: Any) -> bool:
    """Whether every folder and plugin manifest of a snapshot is as recorded.

    A folder's (mtime, ctime) change whenever an entry is added, removed or
    renamed, so unchanged folders mean the walk would find the same SKILL.md files.
    """
    try:
        stat_ = os.stat
        for path, mtime_ns, ctime_ns in dirs:
            st = stat_(path)
            if st.st_mtime_ns != mtime_ns or st.st_ctime_ns != ctime_ns:
                return False
        return all(file_sig(path) == sig for path, sig in manifests)
    except (OSError, ValueError, TypeError):
        return False


def _reload(
    root: Root, item_values: tuple[Any, ...], st: os.stat_result, codex: tuple[str | None, str]
) -> Found:
    """The `Found` of a snapshot item whose file changed, with its new stat."""
    item = SnapshotItem._make(item_values)
    return Found(
        path=item.path,
        dir=item.dir,
        real_path=item.real_path,
        root=root,
        plugin=item.plugin,
        mtime_ns=st.st_mtime_ns,
        size=st.st_size,
        ino=st.st_ino,
        ctime_ns=st.st_ctime_ns,
        codex_path=codex[0],
        codex_sig=codex[1],
        agents=item.agents,
    )


def _changed_files(items: Any) -> dict[int, tuple[os.stat_result, tuple[str | None, str]]] | None:
    """`stat` each recorded SKILL.md: by position, the ones whose version moved (with
    their new stat and sidecar); None when one is gone or no longer a regular file.

    Once per skill on every warm run, so the loop body is kept to one `stat` and two
    comparisons: fields are read by the offsets `index._snapshot` names, and the file's
    version is `file_version`, as for the sidecar and the plugin manifests.
    """
    changed: dict[int, tuple[os.stat_result, tuple[str | None, str]]] = {}
    stat_ = os.stat
    is_regular = stat.S_ISREG
    no_codex = (None, "")
    try:
        for index, item_values in enumerate(items):
            st = stat_(item_values[ITEM_PATH])
            if not is_regular(st.st_mode):
                return None
            codex = codex_sidecar(item_values[ITEM_DIR]) if item_values[ITEM_AGENTS] else no_codex
            if (
                file_version(st) != item_values[ITEM_STAT]
                or codex[1] != item_values[ITEM_CODEX_SIG]
            ):
                changed[index] = (st, codex)
    except (OSError, ValueError, TypeError, IndexError):
        return None
    return changed


def unchanged(recorded: Any) -> bool:
    """Whether every folder, plugin manifest and SKILL.md of a root is as `recorded`
    (`Replayed.recorded`): then a scan would find exactly what it found then."""
    try:
        dirs, manifests, items = recorded
    except (ValueError, TypeError):
        return False
    return _folders_unchanged(dirs, manifests) and _changed_files(items) == {}


class Replayed(NamedTuple):
    """A root served from its snapshot."""

    reals: list[str]
    """The real paths of its files (added to `claimed`)."""
    recorded: tuple[Any, ...]
    """`(dirs, manifests, items)` of the snapshot now stored: what `unchanged` checks."""
    reloaded: int
    """Files loaded again because their version moved (the snapshot was rewritten)."""
    generation: str | None
    """The index's generation of the snapshot read (`SkillCache.generation`)."""


def replay_root(
    root: Root,
    limits: Limits,
    *,
    cache: SkillCache,
    claimed: set[str],
    skills: list[Skill],
    problems: list[Problem],
) -> Replayed | None:
    """Serve one root from its snapshot when no folder in it changed; None when it
    must be walked.

    Each file is still `stat`ed: a changed one is loaded (parsed if the parse cache
    misses too) and the snapshot rewritten. Nothing is added to `skills`,
    `problems` or `claimed` unless the whole root replays.
    """
    key = snapshot_key(root, limits)
    snapshot = cache.snapshot(key)
    if snapshot is None:
        return None
    try:
        dirs, manifests, walk_problems, entries = snapshot
        items = [entry[0] for entry in entries]
    except (ValueError, TypeError, IndexError):
        return None
    if not _folders_unchanged(dirs, manifests):
        return None
    reals = [item[ITEM_REAL] for item in items]
    if not claimed.isdisjoint(reals):
        return None  # an earlier root now holds one of its files: walk afresh
    changed = _changed_files(items)
    if changed is None:
        return None
    max_file_bytes, strict = limits[2], limits[3]
    out_skills: list[Skill] = []
    out_problems = list(problems_from_values(walk_problems))
    build = skill_from_values
    kept = list(entries)
    for index, (item_values, values, file_values) in enumerate(entries):
        moved = changed.get(index)
        if moved is None:
            if values is not None:
                out_skills.append(build(values))
            if file_values:
                out_problems.extend(problems_from_values(file_values))
            continue
        loaded, skill, file_problems = load_skill_md(
            _reload(root, item_values, *moved),
            cache=cache,
            strict=strict,
            max_file_bytes=max_file_bytes,
        )
        if loaded is None:
            return None  # gone since the `stat`: walk afresh
        if skill is not None:
            out_skills.append(skill)
        out_problems.extend(file_problems)
        kept[index] = (
            snapshot_item(loaded),
            None if skill is None else skill_values(skill),
            problem_values(file_problems),
        )
        items[index] = kept[index][0]
    if changed:
        cache.store_snapshot(key, root.path, (dirs, manifests, walk_problems, tuple(kept)))
    claimed.update(reals)
    skills.extend(out_skills)
    problems.extend(out_problems)
    generation = cache.generation(key)
    return Replayed(reals, (dirs, manifests, tuple(items)), len(changed), generation)
