"""Discovery: roots in, a `Catalog` out. The filesystem seam, composed.

`discover()` orders the roots (`_roots.py`), then per root either replays the
index's snapshot when no folder in it changed (`_replay.py`, one `stat` per folder
and per SKILL.md) or walks it afresh (`_walk.py`: one `os.scandir` per folder) and
loads each SKILL.md found (`_load.py`: a read and parse only when the persistent
index, `index/_cache.py`, has no result for that exact file version). Collisions
between names are resolved last (`select/_collisions.py`). Bad input never aborts
discovery: every failure becomes a `Problem` and the rest still loads.

Later layers read skill content through `read_body`, `list_skill_files` and
`read_skill_file` (`_skill_files.py`, re-exported here with `default_roots`, as
the seam's public-ish surface), which keep every access inside the skill's folder.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .._errors import UsageError
from .._limits import MAX_DEPTH, MAX_DIRS, MAX_SKILL_FILE_BYTES
from .._model import SCOPE_RANK, Catalog, Problem, Root, Skill
from ..select._collisions import resolve_collisions
from ._commands import walk_commands
from ._found import Found, WalkRecord, problem
from ._load import load_skill_md
from ._replay import replay_root, snapshot_key
from ._roots import default_roots as default_roots
from ._skill_files import list_skill_files as list_skill_files
from ._skill_files import read_body as read_body
from ._skill_files import read_skill_file as read_skill_file
from ._walk import walk_root

if TYPE_CHECKING:
    from ..index._cache import SkillCache


def _ordered_roots(roots: Sequence[Root]) -> tuple[Root, ...]:
    """Roots by precedence (stable), each path once: the first reach of a skill wins."""
    unique: dict[str, Root] = {}
    for root in sorted(roots, key=lambda r: (SCOPE_RANK[r.scope], r.rank)):
        path = os.path.abspath(os.path.expanduser(root.path))
        if path not in unique:
            unique[path] = root if root.path == path else replace(root, path=path)
    return tuple(unique.values())


def _as_roots(roots: Sequence[Root | str | os.PathLike[str]]) -> tuple[Root, ...]:
    """`Root` values as given; a folder given as a `str` or path is an `extra` root."""
    if isinstance(roots, str | os.PathLike):
        raise UsageError(
            f"discover(roots=...) takes a list of folders or Root values, not one "
            f"folder; write roots=[{os.fspath(roots)!r}]."
        )
    result: list[Root] = []
    for rank, root in enumerate(roots):
        if isinstance(root, Root):
            result.append(root)
        elif isinstance(root, str | os.PathLike):
            path = os.path.abspath(os.path.expanduser(os.fspath(root)))
            result.append(Root(path=path, scope="extra", rank=rank))
        else:
            raise UsageError(
                f"discover(roots=...) got {type(root).__name__} {root!r}; give folders "
                "(str or pathlib.Path) or skillpack.Root values."
            )
    return tuple(result)


def discover(
    *,
    cwd: str | None = None,
    roots: Sequence[Root | str | os.PathLike[str]] | None = None,
    extra_roots: Sequence[str] = (),
    include_user: bool = True,
    include_system: bool = True,
    include_repo: bool = True,
    include_admin: bool = True,
    repo_skills_dir: bool = False,
    strict: bool = False,
    use_cache: bool = True,
    cache_dir: str | None = None,
    max_depth: int = MAX_DEPTH,
    max_dirs: int = MAX_DIRS,
    max_file_bytes: int = MAX_SKILL_FILE_BYTES,
    note_paths: Sequence[str] = (),
) -> Catalog:
    """Find every skill under the roots and return them with every problem.

    Args:
        cwd: Where repo discovery starts (default: the current directory).
        roots: Use exactly these roots instead of `default_roots(...)`: `Root`
            values, or folders (a `str` or path) taken as `extra` roots in the
            order given; `extra_roots` are still added after them.
        extra_roots: Folders of scope `extra`, in precedence order.
        include_user: Walk the user roots.
        include_system: Walk the skills bundled with skillpack.
        include_repo: Walk the repo roots from cwd up to the project root.
        include_admin: Walk the admin root.
        repo_skills_dir: Also treat `skills/` in each repo folder as a root.
        strict: Validate strictly (spec warnings become errors).
        use_cache: Read and write the persistent index; False touches no cache file.
        cache_dir: Folder of the index file (default: `_paths.cache_dir()`).
        max_depth: Deepest folder level searched below a root.
        max_dirs: Most folders listed per root.
        max_file_bytes: Larger SKILL.md files are reported, not read.
        note_paths: Paths a host works on: the repo roots of the folders between
            each and the project root join the repo scope (`default_roots`).

    Returns:
        A `Catalog` of the loaded skills (shadowed ones included, with
        `shadowed_by` set), the problems of every file, root and the index, and the
        roots searched in precedence order.
    """
    if roots is None:
        chosen = default_roots(
            cwd=cwd,
            extra_roots=extra_roots,
            include_user=include_user,
            include_system=include_system,
            include_repo=include_repo,
            include_admin=include_admin,
            repo_skills_dir=repo_skills_dir,
            note_paths=note_paths,
        )
    else:
        given = _as_roots(roots)
        base = max((r.rank + 1 for r in given if r.scope == "extra"), default=0)
        chosen = given + tuple(
            Root(path=os.path.abspath(os.path.expanduser(p)), scope="extra", rank=base + i)
            for i, p in enumerate(extra_roots)
        )
    return _discover(
        _ordered_roots(chosen),
        strict=strict,
        use_cache=use_cache,
        cache_dir=cache_dir,
        max_depth=max_depth,
        max_dirs=max_dirs,
        max_file_bytes=max_file_bytes,
    )


def _discover(
    ordered: tuple[Root, ...],
    *,
    strict: bool,
    use_cache: bool,
    cache_dir: str | None,
    max_depth: int,
    max_dirs: int,
    max_file_bytes: int,
) -> Catalog:
    problems: list[Problem] = []
    cache: SkillCache | None = None
    if use_cache:
        from ..index._cache import SkillCache

        cache = SkillCache.open(cache_dir, strict=strict, problems=problems)
    claimed: set[str] = set()
    skills: list[Skill] = []
    try:
        for root in ordered:
            try:
                is_dir = os.path.isdir(root.path)
                exists = is_dir or os.path.lexists(root.path)
            except OSError:
                is_dir = exists = False
            if not is_dir:
                what = "is not a folder" if exists else "does not exist"
                problems.append(
                    problem(
                        root.path,
                        "warning",
                        "root-missing",
                        f"Skill root {root.path} ({root.scope} scope) {what}; nothing was "
                        "loaded from it. Check the path given with --root or `roots`, or "
                        "create the folder.",
                    )
                )
                continue
            limits = (max_depth, max_dirs, max_file_bytes, strict)
            if cache is not None and replay_root(
                root,
                limits,
                cache=cache,
                claimed=claimed,
                skills=skills,
                problems=problems,
            ):
                continue
            found: list[Found] = []
            record = WalkRecord() if cache is not None else None
            walk_start = len(problems)
            (walk_commands if root.kind == "commands" else walk_root)(
                root,
                max_depth=max_depth,
                max_dirs=max_dirs,
                found=found,
                problems=problems,
                record=record,
            )
            if record is not None:
                record.problems.extend(problems[walk_start:])
            for item in found:
                if item.real_path in claimed:
                    if record is not None:
                        record.reusable = False  # its parse belongs to an earlier root
                    continue
                claimed.add(item.real_path)
                loaded, skill, file_problems = load_skill_md(
                    item, cache=cache, strict=strict, max_file_bytes=max_file_bytes
                )
                if loaded is None:
                    if record is not None:
                        record.reusable = False  # it changed while we walked
                    continue
                item = loaded
                if skill is not None:
                    skills.append(skill)
                problems.extend(file_problems)
                if record is not None:
                    record.items.append((item, skill, file_problems))
            if cache is not None and record is not None:
                # Stored even when it cannot be replayed: its parses still serve.
                cache.store_snapshot(
                    snapshot_key(root, limits),
                    root.path,
                    record.freeze(),
                    replay=record.reusable,
                )
        if cache is not None:
            cache.commit()
    finally:
        if cache is not None:
            cache.close()
    skills = resolve_collisions(skills, problems)
    return Catalog(skills=tuple(skills), problems=tuple(problems), roots=ordered)
