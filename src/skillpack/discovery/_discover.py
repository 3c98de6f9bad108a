"""Discovery: roots in, a `Catalog` out. The filesystem seam, composed.

`discover()` orders the roots (`_roots.py`) and scans each one (`_scan.py`): it
replays the index's snapshot when no folder in it changed (`_replay.py`, one `stat`
per folder and per SKILL.md) or walks it afresh (`_walk.py`: one `os.scandir` per
folder) and loads each SKILL.md found (`_load.py`: a read and parse only when the
persistent index, `index/_cache.py`, has no result for that exact file version).
Collisions between names are resolved last, over every root
(`select/_collisions.py`). Bad input never aborts discovery: every failure becomes
a `Problem` and the rest still loads.

`discover_roots()` is the same run over given roots, and can start from an earlier
run (`Discovered`): told which paths changed (a watcher's file events), it scans only
the roots those paths are in, plus any root that is new, moved, or whose files an
earlier root now claims or gives up, and reuses every other root's scan as it was. The
result equals a fresh run's (`tests/discovery/test_incremental.py` checks it on random
edits); what changed comes with it, worked out from the scanned roots alone.

Later layers read skill content through `read_body`, `list_skill_files` and
`read_skill_file` (`_skill_files.py`, re-exported here with `default_roots`, as
the seam's public-ish surface), which keep every access inside the skill's folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from .._limits import MAX_DEPTH, MAX_DIRS, MAX_SKILL_FILE_BYTES
from .._model import SCOPE_RANK, Catalog, Problem, Root, Skill
from ..select._collisions import resolve_collisions
from ._options import DEFAULT_OPTIONS, DiscoveryOptions, merge_keywords, require_folders
from ._parallel import LoadHelper
from ._replay import Limits
from ._roots import chosen_roots
from ._roots import default_roots as default_roots
from ._scan import RootRecord, RootScan, root_identity, scan_root
from ._skill_files import list_skill_files as list_skill_files
from ._skill_files import read_body as read_body
from ._skill_files import read_skill_file as read_skill_file

if TYPE_CHECKING:
    from ..index._cache import SkillCache

T = TypeVar("T")


def _ordered_roots(roots: Sequence[Root]) -> tuple[Root, ...]:
    """Roots by precedence (stable), each path once: the first reach of a skill wins."""
    unique: dict[str, Root] = {}
    for root in sorted(roots, key=lambda r: (SCOPE_RANK[r.scope], r.rank)):
        path = os.path.abspath(os.path.expanduser(root.path))
        if path not in unique:
            unique[path] = root if root.path == path else replace(root, path=path)
    return tuple(unique.values())


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
    load_helper: bool | None = None,
    folders_off: Sequence[str] = (),
    options: DiscoveryOptions | None = None,
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
        load_helper: Load many new SKILL.md files on a second core (a helper
            process): False never, True when the machine has a spare core; None
            unless `SKILLPACK_LOAD_HELPER=0` is in the environment.
        folders_off: Families of default folders not searched (`copilot`,
            `gemini`, `cursor`, ...: `_paths.FAMILIES`).
        options: All of the above but `cwd` as one value (`DiscoveryOptions`); a
            keyword left at its default defers to it, a keyword given fills a field
            it leaves at its default.

    Returns:
        A `Catalog` of the loaded skills (shadowed ones included, with
        `shadowed_by` set), the problems of every file, root and the index, and the
        roots searched in precedence order.

    Raises:
        UsageError: a keyword given differs from what `options` sets, a value
            cannot work (one folder where a list belongs, a bound below its least),
            or a folder given in `roots` or `extra_roots` does not exist (one in
            `options` is reported as a `root-missing` problem instead).
    """
    require_folders("discover", keywords={"roots": roots or (), "extra_roots": extra_roots})
    options = merge_keywords(
        options,
        where="discover",
        keywords={
            "roots": roots,
            "extra_roots": extra_roots,
            "include_user": include_user,
            "include_system": include_system,
            "include_repo": include_repo,
            "include_admin": include_admin,
            "repo_skills_dir": repo_skills_dir,
            "strict": strict,
            "use_cache": use_cache,
            "cache_dir": cache_dir,
            "max_depth": max_depth,
            "max_dirs": max_dirs,
            "max_file_bytes": max_file_bytes,
            "note_paths": note_paths,
            "load_helper": load_helper,
            "folders_off": folders_off,
        },
        defaults=_KEYWORD_DEFAULTS,
    )
    return discover_roots(chosen_roots(options, cwd=cwd), options=options).catalog


_KEYWORD_DEFAULTS: dict[str, Any] = {
    "roots": None,
    "extra_roots": (),
    "include_user": True,
    "include_system": True,
    "include_repo": True,
    "include_admin": True,
    "repo_skills_dir": False,
    "strict": False,
    "use_cache": True,
    "cache_dir": None,
    "max_depth": MAX_DEPTH,
    "max_dirs": MAX_DIRS,
    "max_file_bytes": MAX_SKILL_FILE_BYTES,
    "note_paths": (),
    "load_helper": None,
    "folders_off": (),
}
"""`discover`'s keyword defaults: a keyword left at one defers to `options=`."""


class SkillDelta(NamedTuple):
    """What changed between two runs' catalogs, each in catalog order."""

    added: tuple[Skill, ...]
    """Skills whose SKILL.md (by real path) the earlier catalog did not have."""
    removed: tuple[Skill, ...]
    """Skills of the earlier catalog that are gone (as they were)."""
    changed: tuple[Skill, ...]
    """Skills with the same real path and another value (version, content, shadowing)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Discovered:
    """One discovery run: the catalog, and per root the scan it was built from.

    Pass it as `previous` to `discover_roots` to reuse the scans no change touched.
    """

    catalog: Catalog
    scans: tuple[RootScan, ...]
    """One per root of `catalog.roots`, in that order."""
    resolved: tuple[tuple[Skill, ...], ...]
    """Per scan, its skills with collisions applied (`shadowed_by` set): as in `catalog`."""
    limits: Limits
    """(max_depth, max_dirs, max_file_bytes, strict) of the run."""
    rescanned: tuple[Root, ...]
    """The roots scanned in this run; the others' scans came from `previous`."""
    delta: SkillDelta | None
    """What changed since `previous` (None without one). When nothing did, `catalog`
    is `previous.catalog` itself."""
    stamp: str | None = None
    """Names this catalog among every run over these roots with these options, when
    every root was served from the index as it was stored (`RootScan.stamp`): a later
    run with the same stamp found the same catalog. None when a root was walked or a
    file read again (the catalog is new to the index), or the run reported a problem of
    its own."""
    recorded: tuple[RootRecord, ...] | None = None
    """Per root, what proves its scan still stands (`RootScan.recorded`): while
    `still_recorded` holds for each, discovering these roots again with these options
    gives this catalog. None when some root cannot be told by `stat`s alone, or the run
    reported a problem of its own (the index could not be used)."""


def _touched_roots(roots: Iterable[Root], paths: Iterable[str]) -> set[Root] | None:
    """The roots a changed path is in (or above: a removed folder holding a root); None
    when a path is in none of them, so the caller cannot tell what it touched.

    A root is matched by its path and by its real path (a watcher may report either).
    A watcher reports only paths under the folders it watches, so a path in no root
    means it spells them another way (letter case, a link): then every root counts.
    Each path costs a dictionary look-up per folder level.
    """
    sep = os.sep
    at: dict[str, set[Root]] = {}
    above: dict[str, set[Root]] = {}
    for root in roots:
        for base in {root.path, os.path.realpath(root.path)}:
            at.setdefault(base, set()).add(root)
            folder = base.rpartition(sep)[0]
            while folder:
                above.setdefault(folder, set()).add(root)
                folder = folder.rpartition(sep)[0]
    hit: set[Root] = set()
    for path in paths:
        below = above.get(path)
        matched = below is not None
        if below is not None:
            hit.update(below)
        folder = path
        while folder:
            held = at.get(folder)
            if held is not None:
                hit.update(held)  # nested roots: every one holding the path
                matched = True
            folder = folder.rpartition(sep)[0]
        if not matched:
            return None
    return hit


def discover_roots(
    roots: Sequence[Root],
    *,
    previous: Discovered | None = None,
    touched: Iterable[str] | None = None,
    options: DiscoveryOptions | None = None,
) -> Discovered:
    """Discover `roots` (as `discover` does), reusing what `previous` found where it stands.

    Args:
        roots: The roots to search (`default_roots` gives the usual ones), in any order.
        previous: An earlier run over these roots (or some of them).
        touched: Paths that changed since `previous` (files or folders, e.g. a
            watcher's events); None: anything may have changed, scan every root.
            A root of `previous` is reused when no touched path is in it, its
            folder is the same one, it holds no symbolic link or unlistable folder,
            the walk limits are the same, and the files earlier roots claim split
            its files as before. Every other root is scanned (the index replays an
            unchanged one), and every root when a path is in no root, old or new.
        options: How to walk and load (`strict`, `use_cache`, `cache_dir` and the
            bounds; the fields that choose roots do not apply here); default:
            `DiscoveryOptions()`.

    Returns:
        The run, whose catalog equals what a fresh `discover` over `roots` returns.
    """
    o = DEFAULT_OPTIONS if options is None else options
    ordered = _ordered_roots(roots)
    limits: Limits = o.limits
    strict, use_cache = o.strict, o.use_cache
    earlier: dict[Root, RootScan] = {}
    hit: set[Root] = set()
    if previous is not None and touched is not None and previous.limits == limits:
        # Roots of the last run count: a path in a root that is gone is no mystery.
        known = {scan.root: scan for scan in previous.scans}
        found = _touched_roots((*ordered, *known), touched)
        if found is not None:
            earlier, hit = known, found
    problems: list[Problem] = []
    cache: SkillCache | None = None
    claimed: set[str] = set()
    scans: list[RootScan] = []
    rescanned: list[Root] = []
    helper = LoadHelper(enabled=o.load_helper)
    try:
        for root in ordered:
            scan = earlier.get(root)
            if (
                scan is not None
                and root not in hit
                and scan.still_valid(root_identity(root.path), claimed)
            ):
                claimed.update(scan.claimed)
                scans.append(scan)
                continue
            if cache is None and use_cache:
                from ..index._cache import SkillCache

                cache = SkillCache.open(
                    None if o.cache_dir is None else os.fspath(o.cache_dir),
                    strict=strict,
                    problems=problems,
                )
            if cache is not None:
                # A root scanned last run has its own snapshot: a file new to it is
                # parsed rather than looked for in every other root's (all decoded
                # for it). A new root (or one whose rank moved) may find its files there.
                cache.search_others = scan is None
            scans.append(scan_root(root, limits, cache=cache, claimed=claimed, helper=helper))
            rescanned.append(root)
        helper.release()  # it exits while the index commits
        if cache is not None:
            cache.commit()
    finally:
        helper.close()
        if cache is not None:
            cache.close()
    return _compose(previous, ordered, scans, problems, limits, tuple(rescanned))


def _compose(
    previous: Discovered | None,
    ordered: tuple[Root, ...],
    scans: list[RootScan],
    problems: list[Problem],
    limits: Limits,
    rescanned: tuple[Root, ...],
) -> Discovered:
    """The catalog of `scans`: collisions resolved over every root, and the delta."""
    # The run's own problems (the index could not be used) are no file's: neither the
    # record of the files nor the stamp of the index can vouch for a run that had one.
    recorded = None if problems else _each([scan.recorded for scan in scans])
    stamps = None if problems else _each([scan.stamp for scan in scans])
    stamp = None if stamps is None else "\n".join(stamps)
    problems.extend(chain.from_iterable(scan.problems for scan in scans))
    skills = list(chain.from_iterable(scan.skills for scan in scans))
    resolved = resolve_collisions(skills, problems)
    per_root: list[tuple[Skill, ...]] = []
    start = 0
    for scan in scans:
        end = start + len(scan.skills)
        per_root.append(tuple(resolved[start:end]))
        start = end
    delta = None
    catalog: Catalog | None = None
    if previous is not None:
        delta = _delta(previous, scans, per_root, rescanned)
        old = previous.catalog
        if not any(delta) and old.roots == ordered and old.problems == tuple(problems):
            catalog = old  # nothing differs: keep the object (caches keyed on it stay)
    if catalog is None:
        catalog = Catalog(skills=tuple(resolved), problems=tuple(problems), roots=ordered)
    return Discovered(
        catalog=catalog,
        scans=tuple(scans),
        resolved=tuple(per_root),
        limits=limits,
        rescanned=rescanned,
        delta=delta,
        stamp=stamp,
        recorded=recorded,
    )


def _each(values: list[T | None]) -> tuple[T, ...] | None:
    """`values` when every root has one, else None."""
    known = [value for value in values if value is not None]
    return tuple(known) if len(known) == len(values) else None


def _catalog_order(skills: Iterable[Skill]) -> tuple[Skill, ...]:
    return tuple(sorted(skills, key=lambda s: (SCOPE_RANK[s.scope], s.name, s.path)))


def _delta(
    previous: Discovered,
    scans: list[RootScan],
    resolved: list[tuple[Skill, ...]],
    rescanned: tuple[Root, ...],
) -> SkillDelta:
    """What changed since `previous`, looking only at the rescanned roots (and the
    roots they no longer hold) and at skills sharing a name with a skill that changed.

    A reused root holds the same files as before, so a skill of it can change only
    through collisions: when a skill of its name came, went or changed elsewhere.
    """
    current = {scan.root for scan in scans}
    fresh = set(rescanned)
    old_before: dict[str, Skill] = {}
    old_after: dict[str, Skill] = {}
    for scan, after in zip(previous.scans, previous.resolved, strict=True):
        if scan.root in fresh or scan.root not in current:
            for skill, shown in zip(scan.skills, after, strict=True):
                old_before[skill.key] = skill
                old_after[skill.key] = shown
    new_before: dict[str, Skill] = {}
    new_after: dict[str, Skill] = {}
    for scan, after in zip(scans, resolved, strict=True):
        if scan.root in fresh:
            for skill, shown in zip(scan.skills, after, strict=True):
                new_before[skill.key] = skill
                new_after[skill.key] = shown
    added: list[Skill] = []
    removed: list[Skill] = []
    changed: list[Skill] = []
    # Names whose group of candidates differs: only their collisions can have moved.
    names: set[str] = set()
    # Keys whose skill is as it was before collisions: it changed only if its name did.
    settled: list[str] = []
    for key, skill in new_before.items():
        old = old_before.get(key)
        if old is None:
            added.append(new_after[key])
            names.add(skill.name)
        elif old is skill or old == skill:
            settled.append(key)
        else:
            names.update((skill.name, old.name))
            if old_after[key] != new_after[key]:
                changed.append(new_after[key])
    for key, old in old_before.items():
        if key not in new_before:
            removed.append(old_after[key])
            names.add(old.name)
    for key in settled:
        now = new_after[key]
        if now.name in names and old_after[key] != now:
            changed.append(now)
    if names:
        kept = dict(zip((s.root for s in previous.scans), previous.resolved, strict=True))
        for scan, after in zip(scans, resolved, strict=True):
            if scan.root in fresh or scan.names.isdisjoint(names):
                continue
            for before, now in zip(kept[scan.root], after, strict=True):
                if before is not now and before.name in names and before != now:
                    changed.append(now)
    return SkillDelta(_catalog_order(added), _catalog_order(removed), _catalog_order(changed))
