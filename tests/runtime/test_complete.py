"""`complete_mention`: what a host's `$`/`/` popup shows."""

from __future__ import annotations

from typing import Any

import pytest

import skillpack
from skillpack import Catalog, Completion, Session, Skill, complete_mention
from skillpack._errors import UsageError
from skillpack._model import Scope
from skillpack.config._schema import Config
from skillpack.select._rules import PermissionRules

REPO = "/proj/.agents/skills"
USER = "/home/me/.agents/skills"


def make(name: str, *, scope: Scope = "repo", plugin: str | None = None, **fields: Any) -> Skill:
    base = {"repo": REPO, "user": USER}[scope]
    if plugin:
        base = f"{base}/{plugin}/skills"
    fields.setdefault("description", f"The {name}\n\tskill.")
    return Skill(
        name=name,
        path=f"{base}/{name}/SKILL.md",
        dir=f"{base}/{name}",
        scope=scope,
        plugin=plugin,
        **fields,
    )


SKILLS = (
    make("deploy", argument_hint="[env]"),
    make("deploy-docs"),
    make("redeploy"),
    make("docs"),
    make("gh-fix-ci", scope="user", plugin="github"),
    make("helper", user_invocable=False),
    make("help"),
    make("secret"),
)


def session(**options: Any) -> Session:
    return Session(Catalog(skills=SKILLS), **options)


def test_rows_are_ids_scope_and_one_line_descriptions_in_rank_order() -> None:
    rows = complete_mention(session(), "$dep")
    assert [(r.mention, r.match) for r in rows] == [
        ("$deploy", "prefix"),
        ("$deploy-docs", "prefix"),
        ("$redeploy", "substring"),
    ]
    first = rows[0]
    assert isinstance(first, Completion)
    assert (first.id, first.scope, first.description) == ("deploy", "repo", "The deploy skill.")
    assert first.argument_hint == "[env]"
    assert first.path == f"{REPO}/deploy/SKILL.md"


def test_exact_name_first_and_plugin_skills_by_their_qualified_id() -> None:
    assert complete_mention(session(), "$deploy")[0].match == "exact"
    [row] = complete_mention(session(), "$github:")
    assert (row.mention, row.qualified_name, row.scope) == (
        "$github:gh-fix-ci",
        "github:gh-fix-ci",
        "user",
    )


def test_slash_uses_the_slash_and_leaves_host_commands_to_the_host() -> None:
    plain = session()
    assert [r.mention for r in complete_mention(plain, "/hel")] == ["/help"]
    host = session(builtin_commands=["help"])
    assert complete_mention(host, "/hel") == ()
    assert [r.mention for r in complete_mention(host, "$hel")] == ["$help"]


def test_only_skills_a_person_may_invoke_are_offered() -> None:
    s = session(config=Config(permissions=PermissionRules(deny=("secret",))))
    s.skills.set_enabled(SKILLS[1], False)  # deploy-docs
    offered = {r.name for r in complete_mention(s, "$", limit=50)}
    assert offered == {"deploy", "redeploy", "docs", "gh-fix-ci", "help"}


def test_blank_lists_every_offered_skill_in_catalog_order_up_to_the_limit() -> None:
    s = session()
    everything = complete_mention(s, "$", limit=50)
    assert [r.name for r in everything] == [
        skill.name for skill in s.catalog.skills if skill.name not in ("helper",)
    ]
    assert {r.match for r in everything} == {"all"}
    assert len(complete_mention(s, "", limit=2)) == 2


def test_a_typo_gets_near_misses() -> None:
    rows = complete_mention(session(), "$deplyo")
    assert [(r.name, r.match) for r in rows][:1] == [("deploy", "close")]


def test_skills_turned_off_offer_nothing_and_bad_limits_are_refused() -> None:
    off = session(config=Config(skills_enabled=False))
    assert complete_mention(off, "$dep") == ()
    with pytest.raises(UsageError, match="limit"):
        complete_mention(session(), "$", limit=0)


def test_it_is_the_public_helper() -> None:
    assert skillpack.complete_mention is complete_mention
