"""A damaged or shared index never breaks list or search.

Any failure to open, read or decode the index file means a rebuild (list and search
alike); a cached record whose checksum does not match is a miss; two catalogs
sharing one index file never see a document count below a term's frequency.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import WriteSkill
from skillpack import discover
from skillpack._model import Catalog, Root, Skill
from skillpack.cli._app import cli
from skillpack.index._cache import connect, index_path
from skillpack.index._search import SkillSearch


def make_tree(write_skill: WriteSkill, base: Path, count: int = 12) -> Path:
    for i in range(count):
        write_skill(
            f"deploy-{i}",
            base=base,
            description=f"Deploy service {i} to the cloud with care.",
            body=f"# Deploy {i}\n\nShip it carefully.\n",
        )
    return base


def cli_run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def catalog_args(root: Path) -> list[str]:
    return ["--root", str(root), "--no-user", "--no-system"]


def settle(path: Path) -> None:
    """Close connections earlier in-process runs left open and move the WAL into the
    file, so that damage done to the file's bytes is what the next run reads."""
    gc.collect()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    conn.close()


def assert_search_answers(root: Path) -> None:
    searched = cli_run("search", "deploy cloud", "--json", *catalog_args(root))
    assert searched.exit_code == 0, searched.output
    assert len(json.loads(searched.stdout)["results"]) == 8


def corrupt_schema_name(path: Path, table: str) -> None:
    """Overwrite the first bytes of `table`'s name in the file with invalid UTF-8."""
    settle(path)
    data = path.read_bytes()
    at = data.find(table.encode())
    assert at > 0
    path.write_bytes(data[:at] + b"\xff\xfe" + data[at + 2 :])


@pytest.mark.parametrize("table", ["skill_cache_meta", "search_meta"])
def test_an_undecodable_schema_name_is_rebuilt_for_list_and_search(
    tmp_path: Path, write_skill: WriteSkill, table: str
) -> None:
    root = make_tree(write_skill, tmp_path / "skills")
    assert cli_run("search", "deploy cloud", *catalog_args(root)).exit_code == 0
    corrupt_schema_name(index_path(), table)
    assert_search_answers(root)

    corrupt_schema_name(index_path(), table)
    listed = cli_run("list", "--json", *catalog_args(root))
    assert listed.exit_code == 0, listed.output
    data = json.loads(listed.stdout)
    assert len(data["skills"]) == 12
    assert "index-rebuilt" in [p["code"] for p in data["problems"]]


def test_connect_rebuilds_a_file_whose_schema_cannot_be_decoded(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    connect(path).close()
    corrupt_schema_name(path, "skill_cache_meta")
    problems: list[Any] = []
    conn = connect(path, problems=problems)
    assert conn.execute("SELECT count(*) FROM skill_cache_roots").fetchone() == (0,)
    assert [p.code for p in problems] == ["index-rebuilt"]


def overwrite_page(path: Path, table: str) -> None:
    settle(path)
    with sqlite3.connect(path) as conn:
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        (number,) = page.fetchone()
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    start = (number - 1) * size
    data[start + 100 : start + size] = os.urandom(size - 100)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("table", ["search_head_data", "search_doc", "search_body"])
def test_search_over_a_malformed_index_rebuilds_and_answers(
    tmp_path: Path, write_skill: WriteSkill, table: str
) -> None:
    root = make_tree(write_skill, tmp_path / "skills")
    assert cli_run("search", "deploy cloud", *catalog_args(root)).exit_code == 0
    overwrite_page(index_path(), table)
    assert_search_answers(root)


def test_search_with_its_tables_gone_rebuilds_them(tmp_path: Path, write_skill: WriteSkill) -> None:
    root = make_tree(write_skill, tmp_path / "skills")
    assert cli_run("search", "deploy cloud", *catalog_args(root)).exit_code == 0
    with sqlite3.connect(index_path()) as conn:
        conn.execute("DROP TABLE search_head")
    conn.close()
    assert_search_answers(root)


def flip_text(path: Path, old: bytes, new: bytes) -> None:
    settle(path)
    data = path.read_bytes()
    assert data.count(old) == 1, data.count(old)
    path.write_bytes(data.replace(old, new))


def discover_root(root: Path) -> Catalog:
    return discover(roots=[Root(path=str(root), scope="extra")], include_user=False,
                    include_system=False)  # fmt: skip


def test_a_flipped_byte_in_a_cached_record_is_a_miss_and_the_record_is_replaced(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    root = tmp_path / "skills"
    write_skill("alpha", base=root, description="Checks the Zebra records carefully.")
    write_skill("beta", base=root, description="Another one.")
    assert discover_root(root).named("alpha")[0].description.startswith("Checks the Zebra")
    flip_text(index_path(), b"Checks the Zebra", b"Checks the Zebrb")

    again = discover_root(root)
    assert again.named("alpha")[0].description == "Checks the Zebra records carefully."
    assert [p.code for p in again.problems] == ["index-rebuilt"]
    assert index_path().read_bytes().count(b"Checks the Zebra records") == 1
    third = discover_root(root)
    assert third.named("alpha")[0].description == "Checks the Zebra records carefully."
    assert third.problems == ()


def catalog_of(root: str, names: list[str], text: str) -> Catalog:
    skills = tuple(
        Skill(
            name=name,
            description=text,
            path=f"{root}/{name}/SKILL.md",
            dir=f"{root}/{name}",
            real_path=f"{root}/{name}/SKILL.md",
            scope="extra",
            root=root,
            mtime_ns=1,
            size=10,
        )  # fmt: skip
        for name in names
    )
    return Catalog(skills=skills, roots=(Root(path=root, scope="extra"),))


def test_two_catalogs_sharing_one_index_file_keep_valid_rankings(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"

    def body(skill: Skill) -> str:
        return f"Body of {skill.name}."

    small = catalog_of("/a", ["kettle-care", "lamp-repair"], "Repairs an old kettle or a lamp.")
    first = SkillSearch(connect(path), read_body=body)
    assert first.search(small, "kettle")[0].skill.name == "kettle-care"
    # Another session, over another root, adds many rows holding the next query's word.
    big = catalog_of("/b", [f"teapot-{i}" for i in range(40)], "Brews tea in a teapot.")
    SkillSearch(connect(path), read_body=body).search(big, "teapot brews")
    # The first session's document count predates those rows; its next query counts
    # "teapot" now, in more documents than that count.
    results = first.search(small, "teapot kettle")
    assert [r.skill.name for r in results][:1] == ["kettle-care"]
    assert all(r.score == r.score and 0 <= r.score < 4 for r in results)  # no NaN
