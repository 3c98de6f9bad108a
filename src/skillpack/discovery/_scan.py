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
from typing import TYPE_CHECKING

from .._model import Problem, Root, Skill
from ._commands import walk_commands
from ._found import Found, WalkRecord, problem
from ._load import load_skill_md
from ._replay import Limits, replay_root, snapshot_key
from ._walk import walk_root

if TYPE_CHECKING:
    from ..index._cache import SkillCache

Identity = tuple[int, int]
"""(st_dev, st_ino) of a root folder, links followed."""


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
    root: Root, limits: Limits, *, cache: SkillCache | None, claimed: set[str]
) -> RootScan:
    """Scan one root: replay its snapshot, else walk it and load what it holds.

    `claimed` holds the real paths earlier roots claimed; this root's are added.
    With a `cache`, a walked root's snapshot is stored (the caller commits).
    """
    identity = root_identity(root.path)
    if identity is None:
        return RootScan(
            root=root,
            skills=(),
            problems=(_missing(root),),
            claimed=frozenset(),
            skipped=frozenset(),
            identity=None,
            volatile=False,
            names=frozenset(),
        )
    skills: list[Skill] = []
    problems: list[Problem] = []
    if cache is not None:
        replayed = replay_root(
            root, limits, cache=cache, claimed=claimed, skills=skills, problems=problems
        )
        if replayed is not None:
            return _scan(root, skills, problems, replayed, (), identity, volatile=False)
    max_depth, max_dirs, max_file_bytes, strict = limits
    found: list[Found] = []
    record = WalkRecord(timed=cache is not None)
    (walk_commands if root.kind == "commands" else walk_root)(
        root,
        max_depth=max_depth,
        max_dirs=max_dirs,
        found=found,
        problems=problems,
        record=record,
    )
    # The walk clears `reusable` only for links, unlistable folders and special SKILL.md files.
    volatile = not record.reusable
    record.problems.extend(problems)
    mine: list[str] = []
    skipped: list[str] = []
    for item in found:
        if item.real_path in claimed:
            record.reusable = False  # its parse belongs to an earlier root
            skipped.append(item.real_path)
            continue
        claimed.add(item.real_path)
        mine.append(item.real_path)
        loaded, skill, file_problems = load_skill_md(
            item, cache=cache, strict=strict, max_file_bytes=max_file_bytes
        )
        if loaded is None:
            record.reusable = False  # it changed while we walked
            continue
        if skill is not None:
            skills.append(skill)
        problems.extend(file_problems)
        record.items.append((loaded, skill, file_problems))
    if cache is not None:
        # Stored even when it cannot be replayed: its parses still serve.
        cache.store_snapshot(
            snapshot_key(root, limits), root.path, record.freeze(), replay=record.reusable
        )
    return _scan(root, skills, problems, mine, skipped, identity, volatile=volatile)


def _scan(
    root: Root,
    skills: list[Skill],
    problems: list[Problem],
    mine: list[str],
    skipped: list[str] | tuple[str, ...],
    identity: Identity,
    *,
    volatile: bool,
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
    )
