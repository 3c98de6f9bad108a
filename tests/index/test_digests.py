"""File digests kept in the index across restarts: once per file version, never stale."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillpack._model import Skill, sha256_digest
from skillpack.discovery import _skill_files
from skillpack.discovery._skill_files import DigestCache, skill_tree
from skillpack.index._digests import DigestStore, FrontmatterStore
from skillpack.runtime._readers import FileSystemReader

KEY = ("/s/a.md", 10, 1_000, 7, 2_000)


def test_a_digest_outlives_its_store_for_the_same_file_version_only(tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite3"
    first = DigestStore(index)
    first.put(KEY, "sha256:aa")
    first.close()
    again = DigestStore(index)
    assert again.get(KEY) == "sha256:aa"
    for changed in range(1, 5):  # size, mtime, inode, ctime: any difference misses
        other = list(KEY)
        other[changed] = int(other[changed]) + 1  # type: ignore[call-overload]
        assert again.get(tuple(other)) is None  # type: ignore[arg-type]
    assert again.get(("/s/b.md", *KEY[1:])) is None


def test_a_damaged_index_file_leaves_the_store_empty_and_working(tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite3"
    index.write_bytes(b"not a database at all" * 100)
    store = DigestStore(index)
    assert store.get(KEY) is None
    store.put(KEY, "sha256:bb")
    assert store.get(KEY) == "sha256:bb"
    store.close()


def skill_in(folder: Path) -> Skill:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text("---\nname: a\ndescription: d\n---\nbody\n", "utf-8")
    (folder / "notes.md").write_text("notes\n", "utf-8")
    return Skill(
        name="a",
        description="d",
        path=str(folder / "SKILL.md"),
        dir=str(folder),
        real_path=str(folder / "SKILL.md"),
    )


def test_a_restarted_reader_hashes_only_files_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill = skill_in(tmp_path / "skills" / "a")
    index = str(tmp_path / "index.sqlite3")
    hashed: list[int] = []

    def counting(data: bytes) -> str:
        hashed.append(len(data))
        return sha256_digest(data)

    monkeypatch.setattr(_skill_files, "sha256_digest", counting)
    first = FileSystemReader(index=index, persist=True)
    files, _ = first.manifest(skill, max_files=100, max_bytes=1 << 20)
    assert len(hashed) == 2
    first.close()

    hashed.clear()
    restarted = FileSystemReader(index=index, persist=True)
    assert restarted.manifest(skill, max_files=100, max_bytes=1 << 20)[0] == files
    assert hashed == []  # every digest came from the index
    notes = Path(skill.dir) / "notes.md"
    notes.write_text("notes, edited\n", "utf-8")
    st = notes.stat()
    os.utime(notes, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    changed, _ = restarted.manifest(skill, max_files=100, max_bytes=1 << 20)
    assert hashed == [len("notes, edited\n")]
    assert changed[1].digest == sha256_digest(notes.read_bytes())
    restarted.close()


def test_without_persist_nothing_is_written(tmp_path: Path) -> None:
    skill = skill_in(tmp_path / "skills" / "a")
    index = tmp_path / "index.sqlite3"
    reader = FileSystemReader(index=str(index))
    reader.manifest(skill, max_files=100, max_bytes=1 << 20)
    reader.close()
    assert not index.exists()


def test_a_digest_cache_with_a_store_reads_no_file_it_knows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill = skill_in(tmp_path / "skills" / "a")
    store = DigestStore(tmp_path / "index.sqlite3")
    tree, _ = skill_tree(skill, max_files=10)
    known = [DigestCache(store=store).file(skill, f, max_bytes=1 << 20) for f in tree]

    def unreadable(*_args: object, **_kwargs: object) -> bytes:
        raise AssertionError("read a file whose digest the store holds")

    monkeypatch.setattr(_skill_files, "read_skill_bytes", unreadable)
    assert [DigestCache(store=store).file(skill, f, max_bytes=1 << 20) for f in tree] == known


FRONTMATTER = {"name": "a", "description": "d é", "metadata": {"tags": ["x", 1, True, None]}}


def test_a_frontmatter_outlives_its_store_by_the_digest_of_its_file(tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite3"
    first = FrontmatterStore(index)
    first.put("sha256:aa", FRONTMATTER)
    first.put("sha256:bb", "its SKILL.md has no frontmatter block")
    assert first.get("sha256:aa") == FRONTMATTER  # pending, not yet written
    first.close()
    again = FrontmatterStore(index)
    assert again.get("sha256:aa") == FRONTMATTER
    assert again.get("sha256:bb") == "its SKILL.md has no frontmatter block"
    assert again.get("sha256:cc") is None
    again.close()


def test_a_frontmatter_parsed_by_other_code_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillpack.index import _cache

    index = tmp_path / "index.sqlite3"
    first = FrontmatterStore(index)
    first.put("sha256:aa", FRONTMATTER)
    first.close()
    monkeypatch.setattr(_cache, "_fingerprint", lambda: "a parser edited since")
    edited = FrontmatterStore(index)
    assert edited.get("sha256:aa") is None
    edited.put("sha256:aa", {"name": "a", "description": "read anew"})
    edited.close()
    assert FrontmatterStore(index).get("sha256:aa") == {"name": "a", "description": "read anew"}


def test_a_frontmatter_store_on_a_damaged_index_or_with_no_json_value_keeps_working(
    tmp_path: Path,
) -> None:
    index = tmp_path / "index.sqlite3"
    index.write_bytes(b"not a database at all" * 100)
    store = FrontmatterStore(index)
    assert store.get("sha256:aa") is None
    store.put("sha256:nan", {"version": float("nan")})  # no JSON for it: not kept
    store.put("sha256:aa", FRONTMATTER)
    store.close()
    again = FrontmatterStore(index)
    assert again.get("sha256:nan") is None and again.get("sha256:aa") == FRONTMATTER
    blocked = FrontmatterStore(tmp_path)  # a folder where the file should be
    blocked.put("sha256:aa", FRONTMATTER)
    blocked.close()
    assert blocked.get("sha256:aa") is None


def test_a_store_over_its_bound_starts_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillpack.index import _digests

    index = tmp_path / "index.sqlite3"
    digests, frontmatters = DigestStore(index), FrontmatterStore(index)
    for n in range(3):
        digests.put((f"/s/{n}.md", *KEY[1:]), f"sha256:{n}")
        frontmatters.put(f"sha256:{n}", FRONTMATTER)
    digests.close()
    frontmatters.close()
    monkeypatch.setattr(_digests, "MAX_ROWS", 2)
    assert DigestStore(index).get(("/s/0.md", *KEY[1:])) is None
    assert FrontmatterStore(index).get("sha256:0") is None
    monkeypatch.setattr(_digests, "MAX_ROWS", 500_000)
    assert FrontmatterStore(index).get("sha256:1") is None  # emptied, not hidden


def test_a_few_lookups_query_a_row_each_and_more_read_the_table_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillpack.index import _digests

    index = tmp_path / "index.sqlite3"
    first = DigestStore(index)
    for n in range(6):
        first.put((f"/s/{n}.md", *KEY[1:]), f"sha256:{n}")
    first.close()
    monkeypatch.setattr(_digests, "ROW_BY_ROW", 2)
    store = DigestStore(index)
    statements: list[str] = []
    conn = store._connection()
    assert conn is not None
    conn.set_trace_callback(statements.append)
    answers = [store.get((f"/s/{n}.md", *KEY[1:])) for n in (0, 1, 2, 3, 4, 5, 9)]
    assert answers == [*(f"sha256:{n}" for n in range(6)), None]
    selects = [s for s in statements if s.startswith("SELECT")]
    by_row = [s for s in selects if "WHERE path" in s]
    whole = [s for s in selects if s.startswith("SELECT path")]
    assert len(by_row) == 2  # the first two lookups
    assert len(whole) == 1  # then the table, read once for the rest
    store.close()
