"""Nested project folders: paths a host reports bring their skill roots into the repo scope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import WriteSkill
from skillpack._model import Catalog
from skillpack.discovery._options import DiscoveryOptions
from skillpack.discovery._roots import default_roots
from skillpack.runtime._live import CatalogChange
from skillpack.runtime._session import Session


@pytest.fixture
def monorepo(tmp_path: Path, write_skill: WriteSkill) -> Path:
    root = tmp_path / "mono"
    (root / ".git").mkdir(parents=True)
    write_skill("top", base=root / ".claude" / "skills")
    write_skill("web-build", base=root / "packages" / "web" / ".claude" / "skills")
    write_skill("api-build", base=root / "packages" / "api" / ".agents" / "skills")
    (root / "packages" / "web" / "src").mkdir(parents=True)
    (root / "packages" / "web" / "src" / "app.ts").write_text("", encoding="utf-8")
    return root


def names(catalog: Catalog) -> list[str]:
    return sorted(s.name for s in catalog.skills)


def test_a_noted_file_brings_in_the_skill_roots_of_its_folders(monorepo: Path) -> None:
    session = Session.open(cwd=str(monorepo), include_user=False, include_system=False)
    assert names(session.catalog) == ["top"]
    heard: list[CatalogChange] = []
    session.subscribe(heard.append)

    change = session.note_paths(monorepo / "packages" / "web" / "src" / "app.ts")

    assert change is not None and [s.name for s in change.added] == ["web-build"]
    assert heard == [change]
    assert names(session.catalog) == ["top", "web-build"]
    [web] = session.catalog.named("web-build")
    assert web.scope == "repo"
    turn = session.prepare_turn("$web-build please")
    assert [a.skill.name for a in turn.activations] == ["web-build"]


def test_noting_a_path_in_a_known_folder_again_changes_nothing(monorepo: Path) -> None:
    session = Session.open(cwd=str(monorepo), include_user=False, include_system=False)
    assert session.note_paths(monorepo / "packages" / "web" / "src" / "app.ts") is not None
    assert session.note_paths(monorepo / "packages" / "web" / "src" / "other.ts") is None
    assert session.note_paths(monorepo / "packages" / "web") is None


def test_paths_outside_the_project_are_ignored(monorepo: Path, tmp_path: Path) -> None:
    session = Session.open(cwd=str(monorepo), include_user=False, include_system=False)
    assert session.note_paths(tmp_path / "elsewhere" / "file.txt") is None
    assert names(session.catalog) == ["top"]


def test_cwds_own_folders_win_a_name_over_noted_folders(
    monorepo: Path, write_skill: WriteSkill
) -> None:
    write_skill("web-build", base=monorepo / ".agents" / "skills")
    session = Session.open(cwd=str(monorepo), include_user=False, include_system=False)
    session.note_paths(monorepo / "packages" / "web" / "src")

    winner, shadowed = sorted(session.catalog.named("web-build"), key=lambda s: s.rank)
    assert winner.path == str(monorepo / ".agents" / "skills" / "web-build" / "SKILL.md")
    assert shadowed.shadowed_by == winner.path


def test_deeper_noted_folders_rank_first_and_siblings_tie(monorepo: Path) -> None:
    noted = [
        str(monorepo / "packages" / "web" / "src" / "app.ts"),
        str(monorepo / "packages" / "api"),
    ]
    (monorepo / "packages" / "web" / "src" / ".codex" / "skills").mkdir(parents=True)

    roots = default_roots(
        DiscoveryOptions(
            include_user=False, include_system=False, include_admin=False, note_paths=noted
        ),
        cwd=str(monorepo),
    )

    by_path = {r.path: r.rank for r in roots}
    src = by_path[str(monorepo / "packages" / "web" / "src" / ".codex" / "skills")]
    web = by_path[str(monorepo / "packages" / "web" / ".claude" / "skills")]
    api = by_path[str(monorepo / "packages" / "api" / ".agents" / "skills")]
    top = by_path[str(monorepo / ".claude" / "skills")]
    assert top < src < web
    assert web - 1 == api  # same depth: the same level, `.agents` before `.claude`


def test_a_session_without_a_discovering_source_ignores_noted_paths(monorepo: Path) -> None:
    session = Session(Catalog())
    assert session.note_paths(monorepo / "packages" / "web") is None


def test_sibling_packages_shipping_one_name_are_ambiguous_not_shadowed(
    monorepo: Path, write_skill: WriteSkill
) -> None:
    write_skill("build", base=monorepo / "packages" / "web" / ".agents" / "skills")
    write_skill("build", base=monorepo / "packages" / "api" / ".agents" / "skills")
    session = Session.open(cwd=str(monorepo), include_user=False, include_system=False)
    session.note_paths(monorepo / "packages" / "web", monorepo / "packages" / "api")

    assert all(s.shadowed_by is None for s in session.catalog.named("build"))
    assert any(p.code == "name-ambiguous" for p in session.catalog.problems)


# -- `paths:` gates a skill until a noted path matches ---------------------------------


@pytest.fixture
def gated(tmp_path: Path, write_skill: WriteSkill) -> Path:
    root = tmp_path / "gated"
    (root / ".git").mkdir(parents=True)
    write_skill("always", base=root / ".agents" / "skills")
    write_skill(
        "sql-review",
        base=root / ".agents" / "skills",
        frontmatter="name: sql-review\ndescription: Review SQL migrations.\n"
        'paths: ["db/migrations/*.sql", "**/*.sql"]',
    )
    return root


def model_names(session: Session) -> list[str]:
    return sorted(s.name for s in session.skills.model_skills())


def test_a_paths_skill_joins_the_catalog_only_once_a_matching_file_is_noted(gated: Path) -> None:
    session = Session.open(cwd=str(gated), include_user=False, include_system=False)
    heard: list[CatalogChange] = []
    session.subscribe(heard.append)
    assert names(session.catalog) == ["always", "sql-review"]
    assert model_names(session) == ["always"]
    assert "sql-review" not in session.catalog_prompt()

    assert session.note_paths(gated / "README.md") is None
    assert model_names(session) == ["always"]

    change = session.note_paths(gated / "db" / "migrations" / "001.sql")

    assert change is not None and [s.name for s in change.changed] == ["sql-review"]
    assert heard == [change]
    assert model_names(session) == ["always", "sql-review"]
    assert "sql-review" in session.catalog_prompt()
    assert session.note_paths(gated / "db" / "migrations" / "001.sql") is None


def test_a_gated_skill_still_loads_by_name_before_any_path_is_noted(gated: Path) -> None:
    session = Session.open(cwd=str(gated), include_user=False, include_system=False)
    turn = session.prepare_turn("$sql-review these changes")
    assert [a.skill.name for a in turn.activations] == ["sql-review"]


def test_a_session_without_a_source_gates_too_and_a_new_catalog_keeps_the_opening(
    gated: Path, write_skill: WriteSkill
) -> None:
    from skillpack.discovery._discover import discover

    catalog = discover(cwd=str(gated), include_user=False, include_system=False, use_cache=False)
    session = Session(catalog, cwd=str(gated))
    assert model_names(session) == ["always"]
    assert session.note_paths(gated / "q.sql") is not None
    assert model_names(session) == ["always", "sql-review"]

    write_skill("later", base=gated / ".agents" / "skills")
    session.refresh(
        discover(cwd=str(gated), include_user=False, include_system=False, use_cache=False)
    )
    assert model_names(session) == ["always", "later", "sql-review"]


def test_the_servers_note_paths_answer_what_opened_and_refuse_bad_arguments(gated: Path) -> None:
    from skillpack.runtime._noted import call_note_paths, note_paths_definition

    workspace = Session.open(cwd=str(gated), include_user=False, include_system=False)
    conversation = workspace.conversation()
    sql = str(gated / "db" / "001.sql")

    answer = call_note_paths(conversation, {"paths": [sql]}, opened_from=workspace)

    assert answer == {
        "ok": True,
        "data": {
            "opened": [
                {
                    "name": "sql-review",
                    "qualified_name": "repo:sql-review",
                    "description": "Review SQL migrations.",
                }
            ],
            "skills": 2,
        },
    }
    bad_arguments: list[dict[str, Any] | None] = [
        {"paths": []},
        {"paths": "x.sql"},
        {"paths": [""]},
        {"paths": [sql], "x": 1},
        None,
    ]
    for bad in bad_arguments:
        refused = call_note_paths(conversation, bad, opened_from=workspace)
        assert refused["ok"] is False and refused["error"]["code"] == "INVALID_PARAM", bad
    assert note_paths_definition()["inputSchema"]["required"] == ["paths"]


def test_a_paths_skill_is_suggested_only_once_a_matching_file_is_noted(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    root = tmp_path / "suggest"
    (root / ".git").mkdir(parents=True)
    write_skill(
        "format-python",
        base=root / ".agents" / "skills",
        description="Format Python files. Use when asked to format code.",
    )
    write_skill(
        "migration-review",
        base=root / ".agents" / "skills",
        frontmatter="name: migration-review\ndescription: Review SQL migrations for locking "
        "and data loss. Use when a change adds or edits a database migration.\n"
        'paths: ["**/*.sql"]',
    )
    session = Session.open(cwd=str(root), include_user=False, include_system=False, use_cache=False)
    request = "please review the SQL migrations of this change"
    before = [s.name for s in session.prepare_turn(request).suggestions]
    session.note_paths(root / "db" / "002.sql")
    after = [s.name for s in session.prepare_turn(request).suggestions]
    assert "migration-review" not in before
    assert after == ["migration-review"]
