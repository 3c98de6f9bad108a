"""Recording a root's walk as an index snapshot, and replaying it with `stat`s.

A fresh walk fills a `WalkRecord` (every folder's times, every plugin manifest's
signature, every file it loaded); the index stores it frozen (`_index.Snapshot`).
The next run serves the root from that snapshot when no folder changed, `stat`ing
each SKILL.md and loading only the ones that did.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

from ._load import load_skill_md
from ._model import Problem, Root, Skill
from ._walk import Found, codex_sidecar, file_sig

if TYPE_CHECKING:
    from ._index import SkillCache


class WalkRecord:
    """What a fresh walk of one root saw, so the next run can replay it with `stat`s.

    Not reusable when a symlink was involved (its target can change while no
    folder does), a folder could not be listed, or a file belonged to an earlier root.
    """

    __slots__ = ("dirs", "items", "manifests", "problems", "reusable")

    def __init__(self) -> None:
        self.dirs: list[tuple[str, int, int]] = []
        self.manifests: list[tuple[str, tuple[int, int, int] | None]] = []
        self.problems: list[Problem] = []
        self.items: list[tuple[Found, Skill | None, tuple[Problem, ...]]] = []
        self.reusable = True

    def freeze(self) -> tuple[Any, ...]:
        """The walk as an `_index.Snapshot`."""
        from ._index import problem_values, skill_values

        return (
            tuple(self.dirs),
            tuple(self.manifests),
            problem_values(self.problems),
            tuple(
                (
                    _item_values(item),
                    None if skill is None else skill_values(skill),
                    problem_values(file_problems) if file_problems else (),
                )
                for item, skill, file_problems in self.items
            ),
        )


def _item_values(item: Found) -> tuple[Any, ...]:
    """`item` without its root (the snapshot's key names it): `_index.Snapshot`'s item."""
    return item[:3] + item[4:]


def snapshot_key(root: Root, limits: tuple[int, int, int, bool]) -> str:
    """The index key of a root's snapshot: the root and every limit that shapes its walk."""
    parts = (root.path, root.scope, root.rank, root.plugin, root.follow_symlinks, *limits)
    return "\0".join(map(str, parts))


def replay_root(
    root: Root,
    limits: tuple[int, int, int, bool],
    *,
    cache: SkillCache,
    claimed: set[str],
    skills: list[Skill],
    problems: list[Problem],
) -> bool:
    """Serve one root from its snapshot when no folder in it changed; else False.

    A folder's (mtime, ctime) change whenever an entry is added, removed or
    renamed, so unchanged folders mean the walk would find the same SKILL.md
    files. Each file is still `stat`ed: a changed one is loaded (parsed if the
    parse cache misses too) and the snapshot rewritten.
    """
    key = snapshot_key(root, limits)
    snapshot = cache.snapshot(key)
    if snapshot is None:
        return False
    try:
        dirs, manifests, walk_problems, entries = snapshot
        stat_ = os.stat
        for path, mtime_ns, ctime_ns in dirs:
            st = stat_(path)
            if st.st_mtime_ns != mtime_ns or st.st_ctime_ns != ctime_ns:
                return False
        for path, sig in manifests:
            if file_sig(path) != sig:
                return False
    except (OSError, ValueError, TypeError):
        return False
    from ._index import problem_values, problems_from_values, skill_from_values, skill_values

    max_file_bytes, strict = limits[2], limits[3]
    out_skills: list[Skill] = []
    out_problems = list(problems_from_values(walk_problems))
    reals: list[str] = []
    kept: list[Any] = []
    changed = False
    is_regular = stat.S_ISREG
    # The loop below runs once per skill on every warm run: fields are read by
    # offset (`_index.Snapshot` documents the layout) and unpacked only for a file
    # that changed.
    for entry in entries:
        item_values, values, file_values = entry
        real = item_values[2]
        if real in claimed:
            return False  # an earlier root now holds this file: walk afresh
        try:
            st = stat_(item_values[0])
        except OSError:
            return False
        if not is_regular(st.st_mode):
            return False
        codex_path, new_sig = codex_sidecar(item_values[1]) if item_values[9] else (None, "")
        reals.append(real)
        if (
            st.st_mtime_ns == item_values[4]
            and st.st_size == item_values[5]
            and st.st_ino == item_values[6]
            and new_sig == item_values[8]
        ):
            if values is not None:
                out_skills.append(skill_from_values(values))
            if file_values:
                out_problems.extend(problems_from_values(file_values))
            kept.append(entry)
            continue
        path, folder, real, plugin, _mtime, _size, _ino, _codex_path, _sig, agents = item_values
        item = Found(
            path=path,
            dir=folder,
            real_path=real,
            root=root,
            plugin=plugin,
            mtime_ns=st.st_mtime_ns,
            size=st.st_size,
            ino=st.st_ino,
            codex_path=codex_path,
            codex_sig=new_sig,
            agents=agents,
        )
        loaded, skill, file_problems = load_skill_md(
            item, cache=cache, strict=strict, max_file_bytes=max_file_bytes
        )
        if loaded is None:
            return False  # gone since the `stat`: walk afresh
        item = loaded
        if skill is not None:
            out_skills.append(skill)
        out_problems.extend(file_problems)
        kept.append(
            (
                _item_values(item),
                None if skill is None else skill_values(skill),
                problem_values(file_problems),
            )
        )
        changed = True
    claimed.update(reals)
    skills.extend(out_skills)
    problems.extend(out_problems)
    if changed:
        cache.store_snapshot(key, root.path, (dirs, manifests, walk_problems, tuple(kept)))
    return True
