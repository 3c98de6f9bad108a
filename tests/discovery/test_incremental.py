"""discover_roots from an earlier run: only touched roots are scanned, and the result
equals a fresh discovery (also on random edit sequences)."""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import WriteSkill
from skillpack._model import Catalog, Root
from skillpack.discovery import _discover, _replay, _scan, _walk
from skillpack.discovery._discover import Discovered, SkillDelta, discover_roots
from skillpack.discovery._options import DiscoveryOptions
from skillpack.index._cache import SkillCache


def extra_roots(*paths: Path) -> list[Root]:
    return [Root(path=str(p), scope="extra", rank=i) for i, p in enumerate(paths)]


class Scans:
    """Counts what each run scans, walks and replays, by root folder name (but the
    fresh runs the results are checked against)."""

    paused = False

    def __init__(self) -> None:
        self.scanned: Counter[str] = Counter()
        self.walked: Counter[str] = Counter()
        self.replayed: Counter[str] = Counter()

    def clear(self) -> None:
        self.scanned.clear()
        self.walked.clear()
        self.replayed.clear()


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> Scans:
    seen = Scans()
    # The originals from their home modules; the spies replace the names their callers use.
    scan_root, walk_root, replay_root = _scan.scan_root, _walk.walk_root, _replay.replay_root

    def spy_scan(root: Root, *args: Any, **kwargs: Any) -> Any:
        if not Scans.paused:
            seen.scanned[Path(root.path).name] += 1
        return scan_root(root, *args, **kwargs)

    def spy_walk(root: Root, *args: Any, **kwargs: Any) -> Any:
        if not Scans.paused:
            seen.walked[Path(root.path).name] += 1
        return walk_root(root, *args, **kwargs)

    def spy_replay(root: Root, *args: Any, **kwargs: Any) -> Any:
        if not Scans.paused:
            seen.replayed[Path(root.path).name] += 1
        return replay_root(root, *args, **kwargs)

    monkeypatch.setattr(_discover, "scan_root", spy_scan)
    monkeypatch.setattr(_scan, "walk_root", spy_walk)
    monkeypatch.setattr(_scan, "replay_root", spy_replay)
    return seen


def fresh(roots: Sequence[Root], options: DiscoveryOptions | None = None) -> Catalog:
    """What a discovery from nothing finds: no earlier run, no index."""
    Scans.paused = True
    try:
        without_index = replace(options or DiscoveryOptions(), use_cache=False)
        return discover_roots(roots, options=without_index).catalog
    finally:
        Scans.paused = False


def compared(old: Catalog, new: Catalog) -> SkillDelta:
    """The change from `old` to `new` found by comparing every skill."""
    before = {s.key: s for s in old.skills}
    after = {s.key: s for s in new.skills}
    return SkillDelta(
        tuple(s for s in new.skills if s.key not in before),
        tuple(s for s in old.skills if s.key not in after),
        tuple(s for s in new.skills if s.key in before and before[s.key] != s),
    )


def checked(
    run: Discovered,
    previous: Discovered,
    roots: Sequence[Root],
    options: DiscoveryOptions | None = None,
) -> None:
    """The run's catalog is a fresh run's, and its delta what comparing catalogs gives."""
    assert run.catalog == fresh(roots, options)
    assert run.delta == compared(previous.catalog, run.catalog)


def again(
    previous: Discovered,
    roots: Sequence[Root],
    *touched: Path,
    options: DiscoveryOptions | None = None,
) -> Discovered:
    """The incremental run, checked."""
    paths = [str(p) for p in touched]
    run = discover_roots(roots, previous=previous, touched=paths, options=options)
    checked(run, previous, roots, options)
    return run


def names(skills: Sequence[Any]) -> list[str]:
    return [s.name for s in skills]


def two_roots(
    tmp_path: Path, write_skill: WriteSkill, in_a: str | None, in_b: str | None
) -> tuple[Path, Path, list[Root], Discovered]:
    """Roots `a` then `b`, each holding the skill folder named (None: empty), discovered."""
    a, b = tmp_path / "a", tmp_path / "b"
    for root, skill in ((a, in_a), (b, in_b)):
        if skill is None:
            root.mkdir()
        else:
            write_skill(skill, base=root)
    roots = extra_roots(a, b)
    return a, b, roots, discover_roots(roots)


def test_an_event_in_one_root_scans_that_root_only(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for root in (a, b, c):
        write_skill("one", base=root, name=f"{root.name}-one")
    roots = extra_roots(a, b, c)
    first = discover_roots(roots)
    assert scans.scanned == {"a": 1, "b": 1, "c": 1}
    scans.clear()
    new = write_skill("two", base=b, name="b-two")
    run = again(first, roots, new / "SKILL.md")
    assert scans.scanned == {"b": 1}
    assert scans.walked == {"b": 1}  # its folder changed: the index cannot replay it
    assert [r.path for r in run.rescanned] == [str(b)]
    assert run.delta is not None and names(run.delta.added) == ["b-two"]
    assert not run.delta.removed and not run.delta.changed


def test_an_edit_and_a_removal_are_the_change(tmp_path: Path, write_skill: WriteSkill) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    edit = write_skill("edit", base=a)
    gone = write_skill("gone", base=a)
    write_skill("other", base=b)
    roots = extra_roots(a, b)
    first = discover_roots(roots)
    write_skill("edit", base=a, description="Edited. Use when editing.")
    shutil.rmtree(gone)
    run = again(first, roots, edit / "SKILL.md", gone)
    assert run.delta is not None
    assert [(s.name, s.description) for s in run.delta.changed] == [
        ("edit", "Edited. Use when editing.")
    ]
    assert names(run.delta.removed) == ["gone"]
    assert [r.path for r in run.rescanned] == [str(a)]


def test_nothing_changed_keeps_the_catalog_object(tmp_path: Path, write_skill: WriteSkill) -> None:
    a = tmp_path / "a"
    folder = write_skill("alpha", base=a)
    roots = extra_roots(a)
    first = discover_roots(roots)
    run = discover_roots(roots, previous=first, touched=[str(folder / "notes.txt")])
    assert run.catalog is first.catalog
    assert run.delta == ((), (), ())


def test_a_new_skill_shadowing_another_root_changes_that_skill_without_scanning_it(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    a, b, roots, first = two_roots(tmp_path, write_skill, None, "shared")
    scans.clear()
    new = write_skill("shared", base=a)
    run = again(first, roots, new)
    assert scans.scanned == {"a": 1}
    assert run.delta is not None
    assert [s.path for s in run.delta.added] == [str(new / "SKILL.md")]
    [shadowed] = run.delta.changed
    assert shadowed.root == str(b) and shadowed.shadowed_by == str(new / "SKILL.md")
    # ...and back: removing the winner un-shadows it, still without scanning b.
    scans.clear()
    shutil.rmtree(new)
    run = again(run, roots, new)
    assert scans.scanned == {"a": 1}
    assert run.delta is not None
    assert [s.shadowed_by for s in run.delta.changed] == [None]


def test_a_skill_moved_between_roots_is_removed_from_one_and_added_to_the_other(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    moving = write_skill("moving", base=a)
    write_skill("still", base=c)
    b.mkdir()
    roots = extra_roots(a, b, c)
    first = discover_roots(roots)
    scans.clear()
    moved = b / "moving"
    moving.rename(moved)
    run = again(first, roots, moving, moved)
    assert scans.scanned == {"a": 1, "b": 1}
    assert run.delta is not None
    assert [s.root for s in run.delta.removed] == [str(a)]
    assert [s.root for s in run.delta.added] == [str(b)]


def test_nested_skills_codex_sidecars_and_plugin_manifests_are_seen(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    a = tmp_path / "a"
    outer = write_skill("outer", base=a)
    roots = extra_roots(a)
    run = discover_roots(roots)
    nested = write_skill("inner", base=outer)
    run = again(run, roots, nested / "SKILL.md")
    assert run.delta is not None and names(run.delta.added) == ["inner"]
    sidecar = outer / "agents" / "openai.yaml"
    sidecar.parent.mkdir()
    sidecar.write_text("interface:\n  display_name: Outer Skill\n", encoding="utf-8")
    run = again(run, roots, sidecar)
    assert run.delta is not None
    [changed] = run.delta.changed
    assert changed.codex is not None
    assert changed.codex.interface["display_name"] == "Outer Skill"
    manifest = a / ".claude-plugin" / "plugin.json"
    manifest.parent.mkdir()
    manifest.write_text(json.dumps({"name": "kit"}), encoding="utf-8")
    run = again(run, roots, manifest)
    assert run.delta is not None
    assert sorted(s.qualified_name for s in run.delta.changed) == ["kit:inner", "kit:outer"]


def test_a_root_holding_a_symlink_is_scanned_on_every_run(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    a, b, elsewhere = tmp_path / "a", tmp_path / "b", tmp_path / "elsewhere"
    write_skill("plain", base=a)
    target = write_skill("target", base=elsewhere)
    b.mkdir()
    (b / "linked").symlink_to(target)
    roots = extra_roots(a, b)
    first = discover_roots(roots)
    scans.clear()
    # The linked file changes where no root is, and no event says so.
    write_skill("target", base=elsewhere, description="Changed behind a link. Use when linked.")
    run = again(first, roots)
    assert scans.scanned == {"b": 1}
    assert run.delta is not None
    assert [s.description for s in run.delta.changed] == ["Changed behind a link. Use when linked."]


def test_a_new_root_is_scanned_and_a_gone_one_dropped(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    write_skill("in-a", base=a)
    write_skill("in-c", base=c)
    first = discover_roots(extra_roots(a, c))
    scans.clear()
    write_skill("in-b", base=b)
    roots = extra_roots(a, b, c)  # c's rank moves: a root of another rank is another root
    run = again(first, roots)
    assert scans.scanned == {"b": 1, "c": 1}
    assert run.delta is not None
    assert names(run.delta.added) == ["in-b"] and names(run.delta.changed) == ["in-c"]
    scans.clear()
    later = [roots[0], roots[2]]
    run = again(run, later)
    assert scans.scanned == {}
    assert run.delta is not None and names(run.delta.removed) == ["in-b"]


def test_a_root_that_vanished_or_was_replaced_is_scanned_without_an_event(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    _a, b, roots, first = two_roots(tmp_path, write_skill, "in-a", "old")
    scans.clear()
    shutil.rmtree(b)
    run = again(first, roots)
    assert scans.scanned == {"b": 1}
    assert [p.code for p in run.catalog.problems] == ["root-missing"]
    scans.clear()
    write_skill("new", base=b)  # another folder at the same path
    run = again(run, roots)
    assert scans.scanned == {"b": 1}
    assert run.delta is not None and names(run.delta.added) == ["new"]


def test_a_root_gives_up_a_file_an_overlapping_root_then_claims(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    outer = tmp_path / "outer"
    inner = outer / "inner"
    shared = write_skill("shared", base=inner)
    both = extra_roots(inner, outer)  # inner ranks first and claims the skill
    first = discover_roots(both)
    assert [s.root for s in first.catalog.skills] == [str(inner)]
    scans.clear()
    only_outer = [Root(path=str(outer), scope="extra", rank=1)]
    run = again(first, only_outer)
    # No event under outer, but the file it left to inner is its own now.
    assert scans.scanned == {"outer": 1}
    assert run.delta is not None
    assert [(s.path, s.root) for s in run.delta.changed] == [(str(shared / "SKILL.md"), str(outer))]
    # And back: inner comes again and takes the file from outer, which is rescanned.
    scans.clear()
    run = again(run, both)
    assert scans.scanned == {"inner": 1, "outer": 1}
    assert run.delta is not None
    assert [(s.path, s.root) for s in run.delta.changed] == [(str(shared / "SKILL.md"), str(inner))]


def test_other_limits_rescan_every_root(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    _a, _b, roots, first = two_roots(tmp_path, write_skill, "x/y/deep", "flat")
    scans.clear()
    run = again(first, roots, options=DiscoveryOptions(max_depth=1))
    assert scans.scanned == {"a": 1, "b": 1}
    assert run.delta is not None and names(run.delta.removed) == ["deep"]


def test_touched_none_scans_every_root(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    _a, _b, roots, first = two_roots(tmp_path, write_skill, "in-a", "in-b")
    scans.clear()
    run = discover_roots(roots, previous=first)
    assert scans.scanned == {"a": 1, "b": 1}
    assert scans.replayed == {"a": 1, "b": 1} and not scans.walked
    assert run.catalog is first.catalog


def test_the_index_stays_consistent_for_the_next_process(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    a, _b, roots, run = two_roots(tmp_path, write_skill, "in-a", "in-b")
    new = write_skill("new", base=a)
    run = again(run, roots, new)
    scans.clear()
    # A fresh run with the index replays both roots: a's snapshot was rewritten,
    # b's is still the one stored before and still valid.
    assert discover_roots(roots).catalog == run.catalog
    assert scans.replayed == {"a": 1, "b": 1} and not scans.walked


# ---------------------------------------------------------------- random sequences


def _tick(probe: Path) -> None:
    """Wait until the file-system clock has moved on, so an edit is never stamped
    with the time a scan just recorded (the index compares folder times)."""
    probe.write_text("0", encoding="utf-8")
    start = probe.stat().st_mtime_ns
    for i in range(100_000):
        probe.write_text(str(i), encoding="utf-8")
        if probe.stat().st_mtime_ns != start:
            return


class World:
    """Random create/edit/delete/rename steps over a few roots; each returns what
    a watcher would report (the paths created, changed, removed)."""

    def __init__(self, base: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.roots = [base / f"r{i}" for i in range(4)]
        for root in self.roots:
            root.mkdir(parents=True)
        self.count = 0

    def skills(self) -> list[Path]:
        return sorted(p.parent for r in self.roots for p in r.rglob("SKILL.md"))

    def write(self, folder: Path, name: str | None = None) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        name = name or self.rng.choice(["alpha", "beta", "gamma", folder.name])
        description = self.rng.choice(["Does a. Use when a.", "Does b. Use when b.", ""])
        text = f"---\nname: {name}\ndescription: {description}\n---\nBody {self.count}.\n"
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
        return folder / "SKILL.md"

    def step(self) -> list[Path]:
        self.count += 1
        rng = self.rng
        existing = self.skills()
        kinds = ["create", "create", "nested", "edit", "delete", "rename", "sidecar", "plugin"]
        kind = rng.choice(kinds)
        if kind in ("edit", "delete", "rename", "sidecar", "nested") and not existing:
            kind = "create"
        if kind == "plugin":
            manifest = rng.choice(self.roots) / "group" / ".claude-plugin" / "plugin.json"
            if manifest.exists():
                manifest.unlink()
            else:
                manifest.parent.mkdir(parents=True, exist_ok=True)
                manifest.write_text(json.dumps({"name": f"kit{self.count}"}), encoding="utf-8")
            return [manifest]
        if kind == "create":
            root = rng.choice(self.roots)
            folder = root / rng.choice(["", "group/"]) / f"s{self.count}"
            return [self.write(folder)]
        folder = rng.choice(existing)
        if kind == "nested":
            return [self.write(folder / f"n{self.count}")]
        if kind == "edit":
            return [self.write(folder)]
        if kind == "sidecar":
            sidecar = folder / "agents" / "openai.yaml"
            sidecar.parent.mkdir(exist_ok=True)
            sidecar.write_text(f"interface:\n  display_name: D{self.count}\n", encoding="utf-8")
            return [sidecar]
        if kind == "delete":
            shutil.rmtree(folder)
            return [folder]
        target = rng.choice(self.roots) / f"moved{self.count}"
        folder.rename(target)
        return [folder, target]


def _runs(seed: int, steps: int, base: Path) -> Iterator[tuple[Discovered, Discovered]]:
    """(the incremental run, the one before it) after each random step."""
    world = World(base / "world", seed)
    roots = extra_roots(*world.roots)
    probe = base / "clock"
    run = discover_roots(roots)
    for _ in range(steps):
        _tick(probe)
        touched = world.step()
        previous, run = run, discover_roots(roots, previous=run, touched=[str(p) for p in touched])
        yield run, previous


def _view(catalog: Catalog) -> list[tuple[Any, ...]]:
    return [(s.key, s.name, s.description, s.shadowed_by) for s in catalog.skills]


@pytest.mark.parametrize("seed", range(6))
def test_random_edit_sequences_end_where_a_fresh_discovery_does(tmp_path: Path, seed: int) -> None:
    world_roots = extra_roots(*(tmp_path / "world" / f"r{i}" for i in range(4)))
    for run, previous in _runs(seed, 25, tmp_path):
        expected = fresh(world_roots)
        assert _view(run.catalog) == _view(expected)
        assert run.catalog.problems == expected.problems
        assert run.catalog == expected
        assert run.delta == compared(previous.catalog, run.catalog)


def test_random_sequences_scan_only_the_roots_they_touch(tmp_path: Path, scans: Scans) -> None:
    for run, _previous in _runs(99, 20, tmp_path):
        assert len(run.rescanned) <= 2  # a rename touches two roots, anything else one
    assert sum(scans.scanned.values()) <= 4 + 20 * 2  # the first run, then the steps


def test_incremental_runs_without_the_index_agree_too(tmp_path: Path) -> None:
    world = World(tmp_path / "world", 7)
    roots = extra_roots(*world.roots)
    without_index = DiscoveryOptions(use_cache=False)
    run = discover_roots(roots, options=without_index)
    for _ in range(25):
        touched = world.step()
        previous, run = (
            run,
            discover_roots(
                roots, previous=run, touched=[str(p) for p in touched], options=without_index
            ),
        )
        checked(run, previous, roots)


def test_event_paths_touch_the_roots_they_are_in_or_above(tmp_path: Path) -> None:
    a, inner, ab = tmp_path / "a", tmp_path / "a" / "inner", tmp_path / "ab"
    roots = extra_roots(a, inner, ab)
    touched = _discover._touched_roots
    assert touched(roots, [str(a / "x" / "SKILL.md")]) == {roots[0]}
    assert touched(roots, [str(inner / "x")]) == {roots[0], roots[1]}  # nested: both
    assert touched(roots, [str(tmp_path)]) == set(roots)  # a folder holding them all
    assert touched(roots, [str(ab), str(a)]) == {roots[0], roots[1], roots[2]}
    assert touched(roots, []) == set()
    # A path in no root: the caller cannot tell which roots it touched.
    assert touched(roots, [str(a) + "-sibling"]) is None
    assert touched(roots, ["a/x"]) is None


def test_an_event_path_in_no_root_rescans_every_root(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    a, _b, roots, first = two_roots(tmp_path, write_skill, "in-a", "in-b")
    scans.clear()
    new = write_skill("new", base=a)
    spelled_otherwise = str(tmp_path / "elsewhere" / "new")
    run = again(first, roots, Path(spelled_otherwise))
    assert scans.scanned == {"a": 1, "b": 1}
    assert run.delta is not None and [s.path for s in run.delta.added] == [str(new / "SKILL.md")]


def test_an_event_in_a_root_that_is_gone_is_no_mystery(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    a, b, roots, first = two_roots(tmp_path, write_skill, "in-a", "in-b")
    scans.clear()
    shutil.rmtree(b)
    run = again(first, roots[:1], b)
    assert scans.scanned == {}
    assert run.delta is not None and names(run.delta.removed) == ["in-b"]


def test_a_root_reached_through_a_link_is_touched_by_its_real_paths_too(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    real = tmp_path / "real"
    write_skill("first", base=real)
    link = tmp_path / "link"
    link.symlink_to(real)
    roots = extra_roots(link)
    first = discover_roots(roots)
    scans.clear()
    new = write_skill("second", base=real)
    run = again(first, roots, new / "SKILL.md")  # a watcher may report the real path
    assert scans.scanned == {"link": 1}
    assert run.delta is not None and names(run.delta.added) == ["second"]


def test_a_skill_whose_rival_comes_in_a_scanned_root_is_changed_though_it_is_not(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    a, b, roots, first = two_roots(tmp_path, write_skill, None, "shared")
    rival = write_skill("shared", base=a)
    unrelated = write_skill("unrelated", base=b)
    run = again(first, roots, rival, unrelated)  # both roots scanned, b's "shared" as it was
    assert run.delta is not None
    assert [(s.root, s.shadowed_by) for s in run.delta.changed] == [
        (str(b), str(rival / "SKILL.md"))
    ]


def test_a_command_root_is_rescanned_for_a_new_command_alone(
    tmp_path: Path, write_skill: WriteSkill, scans: Scans
) -> None:
    skills, commands = tmp_path / "skills", tmp_path / "commands"
    write_skill("deploy", base=skills)
    commands.mkdir()
    (commands / "review.md").write_text("Review the diff.\n", encoding="utf-8")
    roots = [
        Root(path=str(skills), scope="repo", rank=0),
        Root(path=str(commands), scope="repo", rank=1, kind="commands"),
    ]
    first = discover_roots(roots)
    scans.clear()
    new = commands / "sub" / "deploy.md"
    new.parent.mkdir()
    new.write_text("Deploy it.\n", encoding="utf-8")
    run = again(first, roots, new)
    assert scans.scanned == {"commands": 1}
    assert run.delta is not None
    assert [(s.name, s.shadowed_by) for s in run.delta.added] == [
        ("deploy", str(skills / "deploy" / "SKILL.md"))
    ]


def test_a_root_scanned_again_looks_its_new_file_up_in_its_own_snapshot_only(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _b, roots, first = two_roots(tmp_path, write_skill, "in-a", "in-b")
    everywhere: list[bool] = []
    monkeypatch.setattr(SkillCache, "_load_all", lambda cache: everywhere.append(True))
    parses.clear()
    new = write_skill("new", base=a)
    run = discover_roots(roots, previous=first, touched=[str(new)])
    assert parses == [str(new / "SKILL.md")]
    assert everywhere == []  # b's snapshot was not decoded for it
    checked(run, first, roots)


def test_a_root_whose_rank_moved_still_finds_its_parses_in_the_index(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    a, b, roots, first = two_roots(tmp_path, write_skill, "in-a", "in-b")
    moved = [roots[0], Root(path=str(b), scope="extra", rank=7)]
    parses.clear()
    run = discover_roots(moved, previous=first, touched=[])
    assert [r.path for r in run.rescanned] == [str(b)]
    assert parses == []  # served from the snapshot stored under its old rank
    checked(run, first, moved)
