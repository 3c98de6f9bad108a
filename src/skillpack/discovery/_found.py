"""What the walk hands to loading: a found SKILL.md, a discovery problem, a walk record.

Shared by `_walk.py` (which finds), `_load.py` (which loads) and `_replay.py` (which
replays a recorded walk), so none of them imports another for these.
"""

from __future__ import annotations

import dataclasses
import operator
import os
from collections.abc import Callable
from typing import Any, NamedTuple

from .._model import Problem, Root, Severity, Skill
from ..index._snapshot import FileVersion, problem_values, skill_values

_ROOT_FIELDS = tuple(field.name for field in dataclasses.fields(Root))

root_values: Callable[[Root], tuple[Any, ...]] = operator.attrgetter(*_ROOT_FIELDS)
"""A root's fields as plain values, in `Root`'s order (marshal holds them)."""


def root_from_values(values: Any) -> Root:
    """The root `root_values` gave; ValueError or TypeError for values of another shape."""
    return Root(**dict(zip(_ROOT_FIELDS, values, strict=True)))


def problem(path: str, severity: Severity, code: str, message: str) -> Problem:
    """A discovery problem (no field, no line: it is about a file or folder)."""
    return Problem(path=path, severity=severity, code=code, message=message)


class Found(NamedTuple):
    """A SKILL.md located by the walk, with everything needed to load it.

    A NamedTuple rather than a dataclass: one is built per skill per run.
    """

    path: str
    dir: str
    real_path: str
    root: Root
    plugin: str | None
    mtime_ns: int
    """With `size`, `ino` and `ctime_ns`: the file's stat, -1 until `load_skill_md` takes it."""
    size: int
    ino: int
    ctime_ns: int
    """Changes on every write, even one that restores mtime and keeps the size."""
    codex_path: str | None
    codex_sig: str
    agents: bool
    """The folder has an `agents/` subfolder (where the Codex sidecar lives)."""


class WalkRecord:
    """What a fresh walk of one root saw, so the next run can replay it with `stat`s.

    Not reusable when a symlink was involved (its target can change while no
    folder does), a folder could not be listed, or a file belonged to an earlier root.
    `timed=False` records no folder times (no `stat` per folder): for a walk whose
    record is never stored, only read for what it found and whether it is reusable.
    """

    __slots__ = ("dirs", "items", "manifests", "problems", "reusable", "timed")

    def __init__(self, *, timed: bool = True) -> None:
        self.timed = timed
        self.dirs: list[tuple[str, int, int]] = []
        self.manifests: list[tuple[str, FileVersion | None]] = []
        self.problems: list[Problem] = []
        self.items: list[tuple[Found, Skill | None, tuple[Problem, ...]]] = []
        self.reusable = True

    def note_dir(self, folder: str) -> os.stat_result | None:
        """Keep `folder`'s (mtime, ctime) when timed, and return the `stat` taken for
        them (None when not timed), so the caller need not take it again. Called before
        listing it: a change during the listing makes the stored times stale, so the
        next run lists it again."""
        if not self.timed:
            return None
        st = os.stat(folder)
        self.dirs.append((folder, st.st_mtime_ns, st.st_ctime_ns))
        return st

    def freeze(self) -> tuple[Any, ...]:
        """The walk as an index snapshot (laid out as `index._snapshot.Snapshot`)."""
        return (
            tuple(self.dirs),
            tuple(self.manifests),
            problem_values(self.problems),
            tuple(
                (
                    snapshot_item(item),
                    None if skill is None else skill_values(skill),
                    problem_values(file_problems) if file_problems else (),
                )
                for item, skill, file_problems in self.items
            ),
        )


def snapshot_item(item: Found) -> tuple[Any, ...]:
    """`item` without its root (the snapshot's key names it): an `index._snapshot.SnapshotItem`."""
    return item[:3] + item[4:]
