"""What the picker knows about a workspace: ranking, flags, problems, costs, config writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import WriteSkill
from skillpack.cli._app import cli
from skillpack.runtime._picker import (
    CatalogCosts,
    SkillFilter,
    missing_dependencies,
    problems_by_skill,
    ref_for,
    skill_flags,
    toggle_scopes,
)
from skillpack.runtime._session import Session
from skillpack.runtime._workspace import write_enabled


@pytest.fixture
def project(tmp_path: Path, write_skill: WriteSkill) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    skills = root / ".agents" / "skills"
    write_skill("deploy-app", base=skills, description="Ship the service to Kubernetes clusters.")
    write_skill("deploy-docs", base=skills, description="Publish documentation sites.")
    write_skill("pdf-tools", base=skills, description="Fill and merge PDF forms.")
    write_skill(
        "release",
        base=skills,
        frontmatter="name: release\ndescription: Tag a release when the user asks.\n"
        "disable-model-invocation: true",
        body="# Release\n\nBump the changelog and tag the version.\n",
    )
    write_skill(
        "helper",
        base=skills,
        frontmatter="name: helper\ndescription: Background notes on the build.\n"
        "user-invocable: false",
    )
    write_skill("wrong-name", base=skills, name="other-name", description="A mismatched skill.")
    write_skill("broken", base=skills, frontmatter="name: broken\ndescription: [unclosed")
    write_skill(
        "sidecar",
        base=skills,
        description="Has a broken Codex file.",
        files={"agents/openai.yaml": "interface: [unclosed\n"},
    )
    home_skills = Path.home() / ".agents" / "skills"
    write_skill("pdf-tools", base=home_skills, description="The user's own PDF tools.")
    return root


def open_session(project: Path, **kwargs: Any) -> Session:
    return Session.open(cwd=str(project), include_system=False, **kwargs)


def ranked(session: Session, query: str) -> list[tuple[str, str]]:
    return [(h.skill.qualified_name, h.reason) for h in SkillFilter(session).rank(query)]


def test_blank_query_lists_every_skill_in_catalog_order(project: Path) -> None:
    session = open_session(project)
    assert [n for n, _ in ranked(session, "  ")] == [
        s.qualified_name for s in session.catalog.skills
    ]
    assert {reason for _, reason in ranked(session, "")} == {"all"}


def test_names_come_before_text_and_near_misses_only_when_nothing_matches(
    project: Path,
) -> None:
    session = open_session(project)
    assert ranked(session, "deploy") == [
        ("repo:deploy-app", "prefix"),
        ("repo:deploy-docs", "prefix"),
    ]
    assert ranked(session, "pdf-tools")[:2] == [
        ("repo:pdf-tools", "exact"),
        ("user:pdf-tools", "exact"),
    ]
    # words rank by search, over every skill: a user-only skill is found too
    assert ranked(session, "changelog version")[0] == ("repo:release", "text")
    assert ranked(session, "kubernetes")[0] == ("repo:deploy-app", "text")
    assert ranked(session, "relaese") == [("repo:release", "close")]
    assert ranked(session, "zzzzqqq") == []


def test_the_skills_a_turn_would_suggest_are_marked(project: Path) -> None:
    session = open_session(project)
    hits = SkillFilter(session).rank("fill and merge these PDF forms")
    assert [(h.skill.qualified_name, h.suggested) for h in hits if h.suggested] == [
        ("repo:pdf-tools", True)
    ]
    # the model may not invoke `release`: it is found, never suggested
    release = SkillFilter(session).rank("tag a release when the user asks")
    assert release[0].skill.name == "release" and not release[0].suggested
    assert not any(h.suggested for h in SkillFilter(session).rank("what is the capital of Peru"))


def test_a_path_finds_its_skill(project: Path) -> None:
    session = open_session(project)
    folder = project / ".agents" / "skills" / "pdf-tools"
    assert ranked(session, str(folder))[0] == ("repo:pdf-tools", "path")


def test_the_filter_follows_the_session_catalog(project: Path, write_skill: WriteSkill) -> None:
    session = open_session(project)
    skill_filter = SkillFilter(session)
    skill_filter.prepare()
    assert skill_filter.rank("zebra") == []
    write_skill("zebra-care", base=project / ".agents" / "skills", description="Zebras.")
    session.refresh()
    assert [h.skill.name for h in skill_filter.rank("zebra")] == ["zebra-care"]


def test_problems_belong_to_the_skill_they_are_about(project: Path) -> None:
    session = open_session(project)
    catalog = session.catalog
    owned = problems_by_skill(catalog)
    by_name = {s.name: s for s in catalog.skills if s.scope == "repo"}
    assert [p.code for p in owned[by_name["other-name"].key]] == ["name-mismatch"]
    assert [p.code for p in owned[by_name["sidecar"].key]] == ["codex-yaml-invalid"]
    assert by_name["pdf-tools"].key not in owned
    # the broken SKILL.md loaded as no skill: its problem belongs to none
    listed = {p.code for problems in owned.values() for p in problems}
    assert "yaml-invalid" in {p.code for p in catalog.problems}
    assert "yaml-invalid" not in listed


def test_flags_say_what_a_person_needs_to_know(project: Path) -> None:
    config = Path.home() / ".config" / "skillpack" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[skills]\ndisabled = ["deploy-docs"]\n[permissions]\ndeny = ["deploy-app"]\n',
        encoding="utf-8",
    )
    session = open_session(project)
    problems = problems_by_skill(session.catalog)
    flags = {s.qualified_name: skill_flags(session, s, problems) for s in session.catalog.skills}
    assert flags["repo:deploy-docs"] == ("disabled",)
    assert flags["repo:deploy-app"] == ("denied",)
    assert flags["user:pdf-tools"] == ("shadowed",)
    assert flags["repo:helper"] == ("model-only",)
    assert flags["repo:release"] == ("user-only",)
    assert flags["repo:other-name"] == ("problems",)
    assert flags["repo:pdf-tools"] == ()


def test_missing_dependencies_come_from_the_sessions_report(
    project: Path, write_skill: WriteSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(
        "needs-key",
        base=project / ".agents" / "skills",
        description="Calls the API.",
        files={
            "agents/openai.yaml": "dependencies:\n  tools:\n"
            "    - type: env_var\n      value: PICKER_TEST_KEY\n"
        },
    )
    monkeypatch.delenv("PICKER_TEST_KEY", raising=False)
    session = open_session(project)
    skill = session.catalog.winners("needs-key")[0]
    assert missing_dependencies(session, skill) == ({"type": "env_var", "name": "PICKER_TEST_KEY"},)
    assert skill_flags(session, skill, {}) == ("missing-deps",)
    monkeypatch.setenv("PICKER_TEST_KEY", "set")
    assert missing_dependencies(session, skill) == ()
    assert skill_flags(session, skill, {}) == ()


def test_costs_say_where_each_skill_stands_in_the_catalog(project: Path) -> None:
    session = open_session(project)
    by_id = {s.qualified_name: s for s in session.catalog.skills}
    costs = CatalogCosts(session)
    entry = costs.entry(by_id["repo:pdf-tools"])
    assert entry is not None and entry.shown == "full" and entry.chars > 0
    assert costs.describe(by_id["repo:pdf-tools"]).startswith(
        f"{entry.chars:,} chars (~{entry.tokens:,} tokens), listed whole; the whole catalog: "
    )
    assert costs.describe(by_id["repo:release"]) == (
        "not in the model's catalog: only the user invokes it"
    )
    assert costs.describe(by_id["user:pdf-tools"]) == "not in the model's catalog: it is shadowed"
    tight = CatalogCosts(open_session(project, env={"SKILLS_PROMPT_CHAR_BUDGET": "700"}))
    cut = [tight.entry(s) for s in session.catalog.skills if tight.entry(s) is not None]
    assert {e.shown for e in cut} & {"shortened", "name_only", "omitted"}  # type: ignore[union-attr]
    omitted = next((e for e in cut if e.shown == "omitted"), None)  # type: ignore[union-attr]
    if omitted is not None:
        assert "omitted" in tight.describe(by_id[omitted.qualified_name])


def test_scopes_are_where_the_deciding_entry_lives_else_user_and_project(
    tmp_path: Path, project: Path, write_skill: WriteSkill
) -> None:
    session = open_session(project)
    skill = session.catalog.winners("pdf-tools")[0]
    assert toggle_scopes(skill, str(project)) == ("user", "project")
    assert toggle_scopes(skill, str(project), user=False) == ("project",)
    ref = ref_for(session.catalog, skill)
    write_enabled(session.catalog, ref, False, scope="project", cwd=str(project))
    assert toggle_scopes(skill, str(project)) == ("project",)
    write_enabled(session.catalog, ref, True, scope="project", cwd=str(project))
    write_enabled(session.catalog, ref, False, scope="user", cwd=str(project))
    assert toggle_scopes(skill, str(project)) == ("user",)
    loose = tmp_path / "loose"
    write_skill("notes", base=loose / ".agents" / "skills", description="Notes.")
    notes = open_session(loose).catalog.winners("notes")[0]
    assert toggle_scopes(notes, str(loose)) == ("user",)


def test_the_ref_names_the_skill_alone(project: Path, write_skill: WriteSkill) -> None:
    write_skill("twin", base=project / ".agents" / "skills" / "a", description="One.")
    write_skill("twin", base=project / ".agents" / "skills" / "b", description="Two.")
    session = open_session(project)
    by_id = {s.qualified_name: s for s in session.catalog.skills}
    catalog = session.catalog
    assert ref_for(catalog, by_id["repo:deploy-app"]) == "deploy-app"
    assert ref_for(catalog, by_id["user:pdf-tools"]) == "user:pdf-tools"
    assert ref_for(catalog, by_id["repo:pdf-tools"]) == "repo:pdf-tools"
    twins = catalog.named("twin")
    assert [ref_for(catalog, s) for s in twins] == [s.dir for s in twins]


@pytest.mark.parametrize("scope", ["user", "project"])
def test_a_write_matches_what_skillpack_disable_writes(project: Path, scope: str) -> None:
    session = open_session(project)
    skill = session.catalog.winners("deploy-app")[0]
    ref = ref_for(session.catalog, skill)
    path = write_enabled(session.catalog, ref, False, scope=scope, cwd=str(project)).written  # type: ignore[arg-type]
    ours = path.read_text(encoding="utf-8")
    path.unlink()
    args = ["disable", "deploy-app", "--cwd", str(project)]
    args += ["--project"] if scope == "project" else []
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert path.read_text(encoding="utf-8") == ours
    assert 'disabled = ["deploy-app"]' in ours
    write_enabled(session.catalog, ref, True, scope=scope, cwd=str(project))  # type: ignore[arg-type]
    assert open_session(project).skills.is_enabled(skill)
