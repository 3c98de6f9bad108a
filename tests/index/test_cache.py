"""The persistent index: what a warm run re-parses, and how a bad index file recovers."""

from __future__ import annotations

import datetime
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REAL_SKILLS, WriteSkill, rewrite_keeping_mtime_and_size, stored_snapshots
from skillpack._model import Catalog, Root, Skill
from skillpack.discovery._discover import discover
from skillpack.index import _cache as _index
from skillpack.index._cache import SCHEMA_VERSION, SkillCache, connect, index_path
from skillpack.index._snapshot import skill_values


def run(root: Path, cache: Path, **kwargs: object) -> Catalog:
    roots = [Root(path=str(root), scope="extra")]
    return discover(roots=roots, cache_dir=str(cache), **kwargs)  # type: ignore[arg-type]


def make_tree(write_skill: WriteSkill, base: Path, count: int = 4) -> None:
    for index in range(count):
        write_skill(f"group-{index % 2}/skill-{index}", base=base)
    write_skill("broken", base=base, text="no frontmatter here\n")


def bump(path: Path, text: str | None = None) -> None:
    """Change a file so its (mtime_ns, size) differ even on a coarse clock."""
    if text is not None:
        path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


# --------------------------------------------------------------------------- location


def test_index_path_prefers_the_argument_then_the_environment(
    tmp_path: Path, isolated_home: Path
) -> None:
    assert index_path(str(tmp_path)) == tmp_path / "index.sqlite3"
    assert index_path() == isolated_home / "cache" / "index.sqlite3"


@pytest.mark.skipif(sys.platform != "linux", reason="XDG layout is the Linux default")
def test_index_path_falls_back_to_the_xdg_cache_dir(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLPACK_CACHE_DIR")
    assert index_path() == isolated_home / ".cache" / "skillpack" / "index.sqlite3"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert index_path() == isolated_home / ".cache" / "skillpack" / "index.sqlite3"


def test_discovery_uses_the_cache_dir_from_the_environment(
    tmp_path: Path, isolated_home: Path, write_skill: WriteSkill
) -> None:
    write_skill("one")

    discover(roots=[Root(path=str(tmp_path), scope="extra")])

    assert (isolated_home / "cache" / "index.sqlite3").is_file()


def test_use_cache_false_writes_no_file(
    tmp_path: Path, isolated_home: Path, write_skill: WriteSkill
) -> None:
    write_skill("one", base=tmp_path / "tree")

    catalog = run(tmp_path / "tree", tmp_path / "cache", use_cache=False)

    assert len(catalog) == 1
    assert not (tmp_path / "cache").exists()
    assert not (isolated_home / "cache").exists()


# --------------------------------------------------------------------------- reuse


def test_a_second_run_over_an_unchanged_tree_parses_nothing(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    make_tree(write_skill, tmp_path / "tree")

    cold = run(tmp_path / "tree", tmp_path / "cache")
    assert len(parses) == 5
    parses.clear()
    warm = run(tmp_path / "tree", tmp_path / "cache")

    assert parses == []
    assert warm.skills == cold.skills
    assert warm.problems == cold.problems  # the broken file's error is served too
    assert [p.code for p in warm.problems] == ["frontmatter-missing"]


def test_a_warm_run_never_imports_yaml(tmp_path: Path, write_skill: WriteSkill) -> None:
    make_tree(write_skill, tmp_path / "tree")
    script = textwrap.dedent(
        f"""
        import sys
        from skillpack.discovery._discover import discover
        from skillpack._model import Root
        catalog = discover(roots=[Root(path={str(tmp_path / "tree")!r}, scope="extra")],
                           cache_dir={str(tmp_path / "cache")!r})
        print(len(catalog.skills), "yaml" in sys.modules)
        """
    )

    def once() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert once().startswith("4 ")  # cold: parses (PyYAML only if the fast reader declines)
    assert once() == "4 False"


def test_a_touched_file_is_the_only_one_parsed_again(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    run(tmp_path / "tree", tmp_path / "cache")
    target = tmp_path / "tree" / "group-1" / "skill-3" / "SKILL.md"
    bump(target, "---\nname: skill-3\ndescription: Changed words.\n---\nnew body\n")
    parses.clear()

    catalog = run(tmp_path / "tree", tmp_path / "cache")

    assert parses == [str(target)]
    assert catalog.named("skill-3")[0].description == "Changed words."


def test_a_new_skill_in_a_cached_folder_is_found(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    run(tmp_path / "tree", tmp_path / "cache")
    parses.clear()
    added = write_skill("group-0/fresh", base=tmp_path / "tree")

    catalog = run(tmp_path / "tree", tmp_path / "cache")

    assert parses == [str(added / "SKILL.md")]
    assert len(catalog.named("fresh")) == 1


def test_deleted_files_disappear_from_the_catalog_and_the_index(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    run(tmp_path / "tree", tmp_path / "cache")
    gone = tmp_path / "tree" / "group-0" / "skill-2" / "SKILL.md"
    gone.unlink()

    catalog = run(tmp_path / "tree", tmp_path / "cache")

    assert catalog.named("skill-2") == ()
    cache = SkillCache.open(str(tmp_path / "cache"))
    stored = cache.stored_files()
    cache.close()
    assert str(gone) not in stored
    assert len(stored) == 4


def test_strict_mode_is_cached_separately(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    write_skill("Bad_Name", base=tmp_path / "tree")

    lenient = run(tmp_path / "tree", tmp_path / "cache")
    strict = run(tmp_path / "tree", tmp_path / "cache", strict=True)
    again = run(tmp_path / "tree", tmp_path / "cache", strict=True)

    assert len(parses) == 2
    assert len(lenient) == 1 and len(strict) == 0 and len(again) == 0
    assert strict.problems == again.problems


def test_the_same_file_under_another_root_keeps_its_parse_but_not_its_location(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    write_skill("moved", base=tmp_path / "tree")
    run(tmp_path / "tree", tmp_path / "cache")
    parses.clear()

    catalog = discover(
        roots=[Root(path=str(tmp_path / "tree"), scope="user", rank=2)],
        cache_dir=str(tmp_path / "cache"),
    )

    assert parses == []
    assert [(s.scope, s.rank) for s in catalog.skills] == [("user", 2)]


def test_a_changed_codex_sidecar_is_parsed_again(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    folder = write_skill(
        "quiet",
        base=tmp_path / "tree",
        files={"agents/openai.yaml": "policy:\n  allow_implicit_invocation: true\n"},
    )
    assert run(tmp_path / "tree", tmp_path / "cache").skills[0].model_invocable
    bump(folder / "agents" / "openai.yaml", "policy:\n  allow_implicit_invocation: false\n")
    parses.clear()

    catalog = run(tmp_path / "tree", tmp_path / "cache")

    assert len(parses) == 1
    assert catalog.skills[0].model_invocable is False


@pytest.mark.parametrize(
    ("rel", "before", "after"),
    [
        ("SKILL.md", "description: One. Use it.", "description: Two. Use it."),
        (
            "agents/openai.yaml",
            "allow_implicit_invocation: true ",
            "allow_implicit_invocation: false",
        ),
        (".claude-plugin/plugin.json", '{"name": "kit-a"}', '{"name": "kit-b"}'),
    ],
    ids=["SKILL.md", "Codex sidecar", "plugin manifest"],
)
@pytest.mark.parametrize("replayed", [True, False], ids=["replayed root", "walked root"])
def test_every_file_that_decides_a_skill_is_checked_alike_by_a_warm_run(
    tmp_path: Path, write_skill: WriteSkill, rel: str, before: str, after: str, replayed: bool
) -> None:
    """An edit that keeps the size and restores the mtime (only ctime moves) is seen
    whether it touched the SKILL.md, the Codex sidecar or the plugin manifest."""
    tree = tmp_path / "tree"
    folder = write_skill(
        "same",
        base=tree,
        description="One. Use it.",
        files={"agents/openai.yaml": "policy:\n  allow_implicit_invocation: true \n"},
    )
    (tree / ".claude-plugin").mkdir()
    (tree / ".claude-plugin" / "plugin.json").write_text('{"name": "kit-a"}', encoding="utf-8")
    if not replayed:
        # A symlink in the root: never replayed, so the parse cache alone decides.
        (tree / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    path = tree / rel if rel.startswith(".") else folder / rel
    first = run(tree, tmp_path / "cache")
    run(tree, tmp_path / "cache")
    rewrite_keeping_mtime_and_size(path, path.read_text(encoding="utf-8").replace(before, after))

    warm = run(tree, tmp_path / "cache")
    fresh = run(tree, tmp_path / "cache", use_cache=False)

    assert fresh.skills != first.skills
    assert (warm.skills, warm.problems) == (fresh.skills, fresh.problems)


def test_a_codex_permissions_profile_survives_the_cache(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    write_skill(
        "netty",
        base=tmp_path / "tree",
        files={
            "agents/openai.yaml": "permissions:\n  network:\n    enabled: true\n"
            "    allowed_domains: [api.example.com]\n  macos: {preferences: read}\n"
        },
    )
    cold = run(tmp_path / "tree", tmp_path / "cache")
    parses.clear()

    warm = run(tmp_path / "tree", tmp_path / "cache")

    assert parses == []
    assert warm.skills == cold.skills
    codex = warm.skills[0].codex
    assert codex is not None and codex.permissions is not None
    assert codex.permissions.allowed_domains == ("api.example.com",)
    assert codex.permissions.other == {"macos": {"preferences": "read"}}


def test_rows_from_other_parser_code_are_discarded(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    run(tmp_path / "tree", tmp_path / "cache")
    parses.clear()
    monkeypatch.setattr(_index, "_fingerprint", lambda: "another parser")

    run(tmp_path / "tree", tmp_path / "cache")
    run(tmp_path / "tree", tmp_path / "cache")

    assert len(parses) == 5


@pytest.mark.corpus
def test_cached_skills_equal_fresh_parses_on_the_real_corpus(tmp_path: Path) -> None:
    roots = [Root(path=str(REAL_SKILLS), scope="extra")]

    fresh = discover(roots=roots, use_cache=False, max_depth=12)
    run(REAL_SKILLS, tmp_path / "cache", max_depth=12)
    warm = run(REAL_SKILLS, tmp_path / "cache", max_depth=12)

    assert len(fresh) > 300
    assert warm.skills == fresh.skills
    assert warm.problems == fresh.problems


# --------------------------------------------------------------------------- recovery


def index_file(cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    return cache / "index.sqlite3"


def test_a_corrupt_index_is_rebuilt_with_a_warning(tmp_path: Path, write_skill: WriteSkill) -> None:
    make_tree(write_skill, tmp_path / "tree")
    index_file(tmp_path / "cache").write_bytes(b"\x00garbage, not sqlite\xff" * 400)

    first = run(tmp_path / "tree", tmp_path / "cache")
    second = run(tmp_path / "tree", tmp_path / "cache")

    assert len(first) == 4 and len(second) == 4
    assert [p.code for p in first.problems] == ["index-rebuilt", "frontmatter-missing"]
    assert "rebuilt" in first.problems[0].message
    assert [p.code for p in second.problems] == ["frontmatter-missing"]


@pytest.mark.parametrize(
    "setup",
    [
        f"PRAGMA user_version = {SCHEMA_VERSION + 1}",
        "CREATE TABLE notes (body TEXT)",
        f"PRAGMA user_version = {SCHEMA_VERSION - 1}",
    ],
    ids=["newer-schema", "foreign-database", "older-schema"],
)
def test_an_unusable_database_is_rebuilt_with_a_warning(
    tmp_path: Path, write_skill: WriteSkill, setup: str
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    with sqlite3.connect(index_file(tmp_path / "cache")) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS skill_cache (x)")
        conn.execute(setup)
    conn.close()

    catalog = run(tmp_path / "tree", tmp_path / "cache")

    assert len(catalog) == 4
    assert catalog.problems[0].code == "index-rebuilt"
    with sqlite3.connect(tmp_path / "cache" / "index.sqlite3") as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    check.close()


def test_an_unwritable_cache_location_runs_without_cache(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("x", encoding="utf-8")

    catalog = run(tmp_path / "tree", blocker)

    assert len(catalog) == 4
    assert catalog.problems[0].code == "index-rebuilt"
    assert "without a persistent cache" in catalog.problems[0].message


def test_connect_reports_problems_to_the_caller_and_serves_a_usable_schema(
    tmp_path: Path,
) -> None:
    path = index_file(tmp_path / "cache")
    path.write_bytes(b"not a database at all" * 100)
    problems: list[object] = []

    conn = connect(path, problems=problems)  # type: ignore[arg-type]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()

    assert [p.code for p in problems] == ["index-rebuilt"]  # type: ignore[attr-defined]
    assert {"skill_cache_roots", "skill_cache_meta"} <= tables


def test_a_write_lock_held_elsewhere_skips_writing_but_not_discovery(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    run(tmp_path / "tree", tmp_path / "cache")
    write_skill("late", base=tmp_path / "tree")
    monkeypatch.setattr(_index, "BUSY_TIMEOUT_MS", 50)
    holder = sqlite3.connect(tmp_path / "cache" / "index.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        locked = run(tmp_path / "tree", tmp_path / "cache")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    parses.clear()
    after = run(tmp_path / "tree", tmp_path / "cache")

    assert len(locked) == 5 and len(after) == 5
    assert [p.code for p in locked.problems] == ["frontmatter-missing"]
    assert parses == [str(tmp_path / "tree" / "late" / "SKILL.md")]  # not written while locked


def test_two_processes_discovering_at_once_both_get_the_right_catalog(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    for index in range(60):
        write_skill(f"g{index % 6}/s{index}", base=tmp_path / "tree")
    script = textwrap.dedent(
        f"""
        import json
        from skillpack.discovery._discover import discover
        from skillpack._model import Root
        for _ in range(5):
            catalog = discover(roots=[Root(path={str(tmp_path / "tree")!r}, scope="extra")],
                               cache_dir={str(tmp_path / "cache")!r})
            print(json.dumps([sorted(s.name for s in catalog.skills),
                              [p.code for p in catalog.problems]]))
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=60) for proc in procs]

    expected = sorted(f"s{index}" for index in range(60))
    for (stdout, stderr), proc in zip(outputs, procs, strict=True):
        assert proc.returncode == 0, stderr
        lines = [json.loads(line) for line in stdout.splitlines()]
        assert len(lines) == 5
        for names, problem_codes in lines:
            assert names == expected
            assert problem_codes == []


# --------------------------------------------------------------------------- replay


def stored_snapshot_roots(cache: Path) -> list[str]:
    with sqlite3.connect(cache / "index.sqlite3") as conn:
        rows = conn.execute("SELECT root FROM skill_cache_roots WHERE replay = 1")
        roots = sorted(row[0] for row in rows)
    conn.close()
    return roots


def test_an_edited_plugin_manifest_renames_the_namespace_on_a_warm_run(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    manifest = tmp_path / "tree" / "plug" / ".claude-plugin" / "plugin.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"name": "before"}), encoding="utf-8")
    write_skill("plug/skills/foo", base=tmp_path / "tree")
    assert run(tmp_path / "tree", tmp_path / "cache").skills[0].qualified_name == "before:foo"

    bump(manifest, json.dumps({"name": "after!"}))
    catalog = run(tmp_path / "tree", tmp_path / "cache")

    assert catalog.skills[0].qualified_name == "after!:foo"


def test_a_root_holding_symlinks_is_walked_every_time(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    real = write_skill("store/linked")
    write_skill("plain", base=tmp_path / "tree")
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "linked").symlink_to(real)
    roots = [
        Root(path=str(tmp_path / "tree"), scope="extra", rank=0),
        Root(path=str(tmp_path / "links"), scope="extra", rank=1),
    ]

    discover(roots=roots, cache_dir=str(tmp_path / "cache"))

    assert stored_snapshot_roots(tmp_path / "cache") == [str(tmp_path / "tree")]


def test_a_replayed_root_yields_to_an_earlier_root_claiming_its_files(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    outer = Root(path=str(tmp_path / "tree"), scope="extra", rank=1)
    inner = Root(path=str(tmp_path / "tree" / "group-0"), scope="extra", rank=0)
    cache = str(tmp_path / "cache")
    discover(roots=[outer], cache_dir=cache)

    warm = discover(roots=[inner, outer], cache_dir=cache)
    fresh = discover(roots=[inner, outer], use_cache=False)

    assert warm.skills == fresh.skills and warm.problems == fresh.problems
    assert {s.root for s in warm.named("skill-0")} == {inner.path}


def test_a_replay_after_a_change_equals_a_fresh_discovery(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    run(tmp_path / "tree", tmp_path / "cache")
    bump(tmp_path / "tree" / "group-0" / "skill-0" / "SKILL.md", "---\nname: renamed\n---\n")
    run(tmp_path / "tree", tmp_path / "cache")  # rewrites the snapshot

    warm = run(tmp_path / "tree", tmp_path / "cache")
    fresh = run(tmp_path / "tree", tmp_path / "cache", use_cache=False)

    assert warm.skills == fresh.skills and warm.problems == fresh.problems
    assert "description-missing" in [p.code for p in warm.problems]


def test_an_index_found_damaged_while_in_use_is_reported_and_rebuilt_next_run(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    run(tmp_path / "tree", tmp_path / "cache")
    path = tmp_path / "cache" / "index.sqlite3"
    data = path.read_bytes()
    page = int.from_bytes(data[16:18], "big")  # the page size, from the file header
    assert len(data) > 2 * page  # the first page stays readable: the damage is found later
    path.write_bytes(data[:page] + b"\xa5" * (len(data) - page))
    parses.clear()

    damaged = run(tmp_path / "tree", tmp_path / "cache")
    rebuilt = run(tmp_path / "tree", tmp_path / "cache")
    parses.clear()
    warm = run(tmp_path / "tree", tmp_path / "cache")

    assert len(damaged) == len(rebuilt) == len(warm) == 4
    assert [p.code for p in damaged.problems] == ["index-rebuilt", "frontmatter-missing"]
    assert "damaged" in damaged.problems[0].message
    assert [p.code for p in rebuilt.problems] == ["frontmatter-missing"]
    assert parses == []


def test_a_root_holding_symlinks_is_walked_again_but_not_parsed_again(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    real = write_skill("store/linked")
    write_skill("plain", base=tmp_path / "links")
    (tmp_path / "links" / "linked").symlink_to(real)
    run(tmp_path / "links", tmp_path / "cache")
    parses.clear()

    again = run(tmp_path / "links", tmp_path / "cache")

    assert sorted(s.name for s in again.skills) == ["linked", "plain"]
    assert parses == []
    assert stored_snapshot_roots(tmp_path / "cache") == []  # never replayed


def test_other_walk_limits_reuse_the_parses_of_an_earlier_walk(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    make_tree(write_skill, tmp_path / "tree")
    first = run(tmp_path / "tree", tmp_path / "cache")
    parses.clear()

    deeper = run(tmp_path / "tree", tmp_path / "cache", max_depth=9)

    assert parses == []
    assert deeper.skills == first.skills and deeper.problems == first.problems


def test_a_skill_marshal_cannot_hold_is_stored_in_its_json_safe_form(tmp_path: Path) -> None:
    path = "/skills/dated/SKILL.md"
    skill = Skill(
        name="dated",
        description="Has a date.",
        path=path,
        dir="/skills/dated",
        real_path=path,
        metadata={"released": datetime.date(2024, 1, 2)},
    )
    item = (path, "/skills/dated", path, None, 10, 20, 30, 40, None, "", False)
    cache = SkillCache.open(str(tmp_path / "cache"))
    cache.store_snapshot("key", "/skills", ((), (), (), ((item, skill_values(skill), ()),)))
    cache.commit()
    cache.close()

    reopened = SkillCache.open(str(tmp_path / "cache"))
    hit = reopened.lookup((path, path, 10, 20, 30, 40, ""))
    miss = reopened.lookup((path, path, 11, 20, 30, 40, ""))
    reopened.close()

    assert hit is not None and hit.skill is not None
    assert hit.skill.metadata == {"released": "2024-01-02"}
    assert hit.skill.name == "dated"
    assert miss is None


@pytest.mark.parametrize("replayed", [True, False], ids=["replayed root", "walked root"])
def test_an_edit_that_keeps_mtime_and_size_is_noticed(
    tmp_path: Path, write_skill: WriteSkill, replayed: bool
) -> None:
    folder = write_skill("same", base=tmp_path / "tree", description="Version one. Use it.")
    if not replayed:
        # A symlink in the root: never replayed, so the parse cache alone decides.
        (tmp_path / "tree" / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    first = run(tmp_path / "tree", tmp_path / "cache")
    assert [s.description for s in first.skills] == ["Version one. Use it."]
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    rewrite_keeping_mtime_and_size(folder / "SKILL.md", text.replace("one", "two"))

    second = run(tmp_path / "tree", tmp_path / "cache")

    assert [s.description for s in second.skills] == ["Version two. Use it."]


def test_each_change_is_seen_on_the_next_warm_run_and_then_replayed(
    tmp_path: Path, write_skill: WriteSkill, parses: list[str]
) -> None:
    """One `stat` per SKILL.md and per listed folder is all a warm run does: an edit
    in place, a skill added inside another skill's folder (only that folder's mtime
    moves) and a removal are each seen on the very next run, and the rewritten
    snapshot then replays with nothing parsed."""
    tree = tmp_path / "tree"
    make_tree(write_skill, tree)
    run(tree, tmp_path / "cache")
    edited = tree / "group-1" / "skill-1" / "SKILL.md"

    def edit() -> None:
        bump(edited, "---\nname: skill-1\ndescription: Edited in place.\n---\nbody\n")

    def add() -> None:
        write_skill("group-0/skill-0/nested", base=tree)

    def remove() -> None:
        (tree / "group-1" / "skill-3" / "SKILL.md").unlink()

    for change in (edit, add, remove):
        change()
        warm = run(tree, tmp_path / "cache")
        fresh = run(tree, tmp_path / "cache", use_cache=False)
        assert (warm.skills, warm.problems) == (fresh.skills, fresh.problems), change.__name__
        parses.clear()
        again = run(tree, tmp_path / "cache")
        assert parses == [], change.__name__
        assert again.skills == fresh.skills, change.__name__
    names = {s.name for s in again.skills}
    assert names == {"skill-0", "skill-1", "skill-2", "nested"}
    assert again.named("skill-1")[0].description == "Edited in place."


def test_held_writes_wait_for_their_flush_and_then_land(
    write_skill: WriteSkill, tmp_path: Path
) -> None:
    import threading

    from skillpack.discovery._discover import discover_roots

    make_tree(write_skill, tmp_path / "skills")
    write_skill("elsewhere", base=tmp_path / "other")
    roots = [Root(path=str(tmp_path / "skills"), scope="extra")]
    others = [Root(path=str(tmp_path / "other"), scope="extra")]

    discover_roots(others)  # the index exists, current
    held = _index.HeldWrites()
    with held:
        cold = discover_roots(roots)
        write_skill("second", base=tmp_path / "other")
        # Another thread writes at once: the hold is this thread's.
        other = threading.Thread(target=discover_roots, args=(others,))
        other.start()
        other.join()
    assert stored_snapshots() == 1, "only the other thread's root is written"
    assert discover_roots(others).stamp is not None, "its new walk was written at once"
    assert cold.stamp is None
    held.flush()
    assert stored_snapshots() == 2
    warm = discover_roots(roots)
    assert warm.stamp is not None, "the held snapshot was written: a replay as stored"
    assert warm.catalog == cold.catalog
    held.flush()  # nothing left: a second flush does nothing
