"""Search answers under the ids a model uses: scope words are not
name prefixes, a shadowed copy is found only by its qualified id or path, and a
plugin's skill is named `plugin:name`."""

from __future__ import annotations

import dataclasses
import sqlite3

from test_search import Bodies, make_skill

from skillpack._model import Catalog, Root, Skill
from skillpack.index._search import SkillSearch


def _search(catalog: Catalog, query: str) -> list[tuple[str, str]]:
    search = SkillSearch(sqlite3.connect(":memory:"), read_body=Bodies())
    return [(r.skill.scope, r.skill.name) for r in search.search(catalog, query, limit=20)]


def _catalog(*skills: Skill) -> Catalog:
    return Catalog(skills=skills, roots=(Root(path="/skills", scope="extra"),))


def test_a_scope_word_is_not_a_name_prefix_of_every_skill_of_that_scope() -> None:
    catalog = _catalog(
        make_skill("lint", "Check style.", scope="repo", root="/r"),
        make_skill("deploy", "Ship it.", scope="user", root="/u"),
        make_skill("tidy", "Sort imports.", scope="system", root="/s"),
        make_skill("reporter", "Write a report.", scope="user", root="/u"),
    )
    for word in ("repo", "user", "system", "sys", "use"):
        found = SkillSearch(sqlite3.connect(":memory:"), read_body=Bodies()).search(catalog, word)
        assert all("name_prefix" not in r.reasons or r.skill.name.startswith(word) for r in found)
    assert _search(catalog, "repo") == [("user", "reporter")]
    assert _search(catalog, "sys") == []
    # A query with the separator still completes a qualified id.
    assert _search(catalog, "user:dep") == [("user", "deploy")]


def test_a_shadowed_copy_is_found_only_by_its_qualified_id_or_path() -> None:
    mine = make_skill("writing-skills", "Write skills well.", scope="user", root="/u")
    bundled = make_skill(
        "writing-skills",
        "Writing skills: write, test and ship skills, writing skills the right way.",
        scope="system",
        root="/s",
        shadowed_by=mine.path,
    )
    catalog = _catalog(mine, bundled)
    for query in ("writing-skills", "writing", "write skills", "writing skills right way"):
        assert _search(catalog, query) == [("user", "writing-skills")], query
    assert _search(catalog, "system:writing-skills")[0] == ("system", "writing-skills")
    assert _search(catalog, bundled.path)[0] == ("system", "writing-skills")


def test_a_shadowed_copy_with_the_same_qualified_id_ranks_below_its_winner() -> None:
    near = make_skill("fmt", "Format code.", scope="repo", root="/r", folder="/r/a/fmt")
    far = dataclasses.replace(
        make_skill("fmt", "Format code, format code.", scope="repo", root="/r", folder="/r/0/fmt"),
        rank=3,
        shadowed_by=near.path,
    )
    search = SkillSearch(sqlite3.connect(":memory:"), read_body=Bodies())
    found = search.search(_catalog(near, far), "repo:fmt")
    assert [r.skill.path for r in found] == [near.path, far.path]


def test_a_plugin_skill_is_found_under_its_plugin_id_and_a_bare_name_prefers_the_plain_one() -> (
    None
):
    plain = make_skill("near", "Find nearby places.", scope="repo", root="/r")
    plugin = make_skill(
        "near", "Nearest neighbours.", scope="repo", root="/r", folder="/r/p/near", plugin="geo"
    )
    catalog = _catalog(plain, plugin)
    search = SkillSearch(sqlite3.connect(":memory:"), read_body=Bodies())
    assert [r.skill.path for r in search.search(catalog, "near")][:1] == [plain.path]
    first = search.search(catalog, "geo:near")[0]
    assert (first.skill.plugin, first.reasons[0]) == ("geo", "exact_name")
