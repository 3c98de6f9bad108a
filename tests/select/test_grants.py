"""Grants: claims (dotted, strings, lists, scope strings) into the skills a token sees."""

from __future__ import annotations

from skillpack._model import Catalog, Problem, Skill
from skillpack.select._grants import Grant, SkillGrant, claim_values, grant_for


def skill(name: str, *, scope: str = "user", plugin: str | None = None) -> Skill:
    folder = f"/skills/{scope}/{name}"
    return Skill(
        name=name,
        description="A skill.",
        path=f"{folder}/SKILL.md",
        dir=folder,
        scope=scope,  # type: ignore[arg-type]
        plugin=plugin,
    )


KEYCLOAK = {"realm_access": {"roles": ["finance", "offline_access"]}, "groups": ["/eng/web"]}
ENTRA = {"roles": ["Skills.Finance"], "groups": ["5f1c-guid"], "scp": "skills.read openid"}


def test_claim_values_follow_dotted_paths_lists_and_scope_strings() -> None:
    assert claim_values(KEYCLOAK, "realm_access.roles") == {"finance", "offline_access"}
    assert claim_values(KEYCLOAK, "groups") == {"/eng/web"}
    assert claim_values(ENTRA, "scp") == {"skills.read openid", "skills.read", "openid"}
    assert claim_values(ENTRA, "realm_access.roles") == frozenset()
    assert claim_values({"https://x.example/roles": ["a"]}, "https://x.example/roles") == {"a"}
    assert claim_values({"n": 3, "l": [1, "b"]}, "n") == frozenset()
    assert claim_values({"n": 3, "l": [1, "b"]}, "l") == {"b"}


def test_no_grant_opens_everything_and_grants_open_the_union_of_their_matches() -> None:
    grants = (
        Grant(claim="realm_access.roles", value="finance", skills=("finance-*",)),
        Grant(claim="groups", value="/eng/web", skills=("web-*", "public-*")),
        Grant(claim="roles", value="Skills.Finance", skills=("finance-*",)),
    )
    assert grant_for((), KEYCLOAK) is None
    assert grant_for(grants, KEYCLOAK) == SkillGrant(patterns=("finance-*", "public-*", "web-*"))
    assert grant_for(grants, ENTRA) == SkillGrant(patterns=("finance-*",))
    assert grant_for(grants, {"sub": "x"}) == SkillGrant(patterns=())


def test_patterns_match_names_and_qualified_ids_with_wildcards() -> None:
    grant = SkillGrant(patterns=("finance-*", "acme:*", "repo:review"))
    assert grant.allows(skill("finance-report"))
    assert grant.allows(skill("deploy", scope="plugin", plugin="acme"))
    assert grant.allows(skill("review", scope="repo"))
    assert not grant.allows(skill("review", scope="user"))
    assert not grant.allows(skill("hr-payroll"))


def test_restrict_keeps_the_skills_it_opens_and_drops_file_problems() -> None:
    catalog = Catalog(
        skills=(skill("finance-a"), skill("hr-b")),
        problems=(
            Problem(
                path="/skills/user/x/SKILL.md", severity="error", code="yaml-invalid", message="bad"
            ),
            Problem(path="/skills/user", severity="warning", code="walk-truncated", message="cut"),
        ),
    )
    restricted = SkillGrant(patterns=("finance-*",)).restrict(catalog)
    assert [s.name for s in restricted.skills] == ["finance-a"]
    assert [p.code for p in restricted.problems] == ["walk-truncated"]
    assert SkillGrant(patterns=("*",)).restrict(catalog) is catalog
