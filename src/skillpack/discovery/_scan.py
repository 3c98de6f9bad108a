"""One root scanned: replayed from the index, or walked and loaded; the unit discovery composes.

`scan_root` serves a root from its index snapshot when no folder in it changed
(`_replay.py`) or walks it afresh (`_walk.py`, `_commands.py`) and loads each file
found (`_load.py`), storing the new snapshot. Its `RootScan` says what the root
holds and everything a later run needs to know whether the scan still stands
without looking again (`RootScan.still_valid`): the files it claimed and those it
left to an earlier root, the identity of the root folder, and whether a change
could come without a file event under the root (a symbolic link, a folder that
could not be listed).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._model import Problem, Root, Skill
from ._commands import walk_commands
from ._found import WalkRecord, problem, root_from_values, root_values
from ._replay import Limits, replay_root, snapshot_key, unchanged
from ._walk import walk_root

if TYPE_CHECKING:
    from ..index._cache import SkillCache
    from ._parallel import LoadHelper

Identity = tuple[int, int]
"""(st_dev, st_ino) of a root folder, links followed."""

RootRecord = tuple[Any, ...]
"""`(root, identity, missing, checked)` as plain values (marshal holds them): the
root's fields (`root_values`), its folder's `Identity` (None when it is missing), its
`root-missing` message (else empty), and `_replay.unchanged`'s `(dirs, manifests,
items)` (empty when missing)."""


def root_identity(path: str) -> Identity | None:
    """Which folder `path` is now, None when it is not a folder (gone, a file, dangling)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


@dataclass(frozen=True, kw_only=True, slots=True)
class RootScan:
    """What one root held when it was scanned, before name collisions are resolved."""

    root: Root
    skills: tuple[Skill, ...]
    """Loaded skills in walk order (collisions not yet applied)."""
    problems: tuple[Problem, ...]
    """The root's own problems: `root-missing`, walk problems, then each file's."""
    claimed: frozenset[str]
    """Real paths of the files this root holds (loaded or not): no later root takes them."""
    skipped: frozenset[str]
    """Real paths the walk found that an earlier root had claimed."""
    identity: Identity | None
    """`root_identity` when scanned: the folder replaced, retargeted or gone is a change."""
    volatile: bool
    """A symbolic link or an unlistable folder was met: a change may come without any
    file event under the root, so the scan is never reused."""
    names: frozenset[str]
    """Names of `skills` (which collision groups the root takes part in)."""
    stamp: str | None = None
    """Names what the scan found among every scan of this root with these limits: the
    generation of the index snapshot it was served from as stored (no folder walked, no
    file read again), or the `root-missing` message of a missing root; None otherwise."""
    recorded: RootRecord | None = None
    """What a later run `stat`s to know, without scanning, that a scan would find the
    same (`still_recorded`); None when no stat can tell (see `volatile`) or the scan
    kept no times (no index)."""

    def still_valid(self, identity: Identity | None, claimed: set[str] | frozenset[str]) -> bool:
        """Whether scanning again, with no file event under the root since, gives this scan.

        `claimed` holds the files earlier roots claim now: the walk's result depends
        on them only through the files it found, so they must split as before.
        """
        return (
            not self.volatile
            and identity == self.identity
            and claimed.isdisjoint(self.claimed)
            and self.skipped <= claimed
        )


def _missing(root: Root) -> Problem:
    try:
        exists = os.path.lexists(root.path)
    except (OSError, ValueError):
        exists = False
    what = "is not a folder" if exists else "does not exist"
    return problem(
        root.path,
        "warning",
        "root-missing",
        f"Skill root {root.path} ({root.scope} scope) {what}; nothing was "
        "loaded from it. Check the path given with --root or `roots`, or "
        "create the folder.",
    )


def scan_root(
    root: Root,
    limits: Limits,
    *,
    cache: SkillCache | None,
    claimed: set[str],
    helper: LoadHelper | None = None,
) -> RootScan:
    """Scan one root: replay its snapshot, else walk it and load what it holds.

    `claimed` holds the real paths earlier roots claimed; this root's are added.
    With a `cache`, a walked root's snapshot is stored (the caller commits). The
    run's `helper` may load some of the files the index has never seen (`_parallel`).
    """
    identity = root_identity(root.path)
    if identity is None:
        missing = _missing(root)
        return RootScan(
            root=root,
            skills=(),
            problems=(missing,),
            claimed=frozenset(),
            skipped=frozenset(),
            identity=None,
            volatile=False,
            names=frozenset(),
            stamp=f"missing\0{missing.message}",
            recorded=(root_values(root), None, missing.message, ()),
        )
    skills: list[Skill] = []
    problems: list[Problem] = []
    if cache is not None:
        replayed = replay_root(
            root, limits, cache=cache, claimed=claimed, skills=skills, problems=problems
        )
        if replayed is not None:
            return _scan(
                root,
                skills,
                problems,
                replayed.reals,
                (),
                identity,
                volatile=False,
                stamp=None if replayed.reloaded else replayed.generation,
                recorded=(root_values(root), identity, "", replayed.recorded),
            )
    # Imported here: a kept output's check (`still_recorded`) needs none of the loading.
    from ._parallel import RootLoads

    max_depth, max_dirs, max_file_bytes, strict = limits
    loads = RootLoads(
        claimed, cache=cache, strict=strict, max_file_bytes=max_file_bytes, helper=helper
    )
    record = WalkRecord(timed=cache is not None)
    (walk_commands if root.kind == "commands" else walk_root)(
        root,
        max_depth=max_depth,
        max_dirs=max_dirs,
        found=loads.found,
        problems=problems,
        record=record,
        on_found=loads.walked,
    )
    # The walk clears `reusable` only for links, unlistable folders and special SKILL.md files.
    volatile = not record.reusable
    record.problems.extend(problems)
    for loaded, skill, file_problems in loads.finish():
        if loaded is None:
            record.reusable = False  # it changed while we walked
            continue
        if skill is not None:
            skills.append(skill)
        problems.extend(file_problems)
        record.items.append((loaded, skill, file_problems))
    if loads.skipped:
        record.reusable = False  # their parses belong to an earlier root
    recorded: RootRecord | None = None
    if cache is not None:
        # Stored even when it cannot be replayed: its parses still serve.
        frozen = record.freeze()
        cache.store_snapshot(snapshot_key(root, limits), root.path, frozen, replay=record.reusable)
        if record.reusable:
            dirs, manifests, _walk_problems, entries = frozen
            checked = (dirs, manifests, tuple(entry[0] for entry in entries))
            recorded = (root_values(root), identity, "", checked)
    reals = [item.real_path for item in loads.mine]
    return _scan(
        root,
        skills,
        problems,
        reals,
        loads.skipped,
        identity,
        volatile=volatile,
        recorded=recorded,
    )


def _scan(
    root: Root,
    skills: list[Skill],
    problems: list[Problem],
    mine: list[str],
    skipped: list[str] | tuple[str, ...],
    identity: Identity,
    *,
    volatile: bool,
    stamp: str | None = None,
    recorded: RootRecord | None,
) -> RootScan:
    claimed = frozenset(mine)
    return RootScan(
        root=root,
        skills=tuple(skills),
        problems=tuple(problems),
        claimed=claimed,
        skipped=frozenset(skipped) - claimed,
        identity=identity,
        volatile=volatile,
        names=frozenset(skill.name for skill in skills),
        stamp=stamp,
        recorded=recorded,
    )


def still_recorded(recorded: RootRecord) -> bool:
    """Whether scanning the root now would find what the scan that `recorded` it found:
    the same folder (or the same `root-missing` problem) and every folder, manifest
    and SKILL.md under it as it was. `stat` calls only."""
    try:
        values, identity, missing, checked = recorded
        root = root_from_values(values)
    except (ValueError, TypeError):
        return False
    now = root_identity(root.path)
    if identity is None:
        return now is None and _missing(root).message == missing
    return now is not None and now == tuple(identity) and unchanged(checked)
