"""Turn-time suggestions: `prepare_turn` names the skills that may
fit a request as hints, and stays quiet for a request no skill fits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillpack._errors import SkillIOError
from skillpack._model import Root
from skillpack.config._schema import Config
from skillpack.discovery._discover import discover
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._index_search import TurnSearch
from skillpack.runtime._session import Session
from skillpack.select._rules import PermissionRules


def skill_md(name: str, description: str, body: str = "Steps.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


FILES = {
    "/s/pdf-forms/SKILL.md": skill_md(
        "pdf-forms", "Fill in PDF forms and extract their fields. Use for fillable PDF forms."
    ),
    "/s/django-perf/SKILL.md": skill_md(
        "django-perf", "Find N+1 queries and slow ORM code in Django views."
    ),
    "/s/changelog/SKILL.md": skill_md(
        "changelog", "Write the changelog entry for a release from merged pull requests."
    ),
}


def open_session(config: Config | None = None, **kwargs: Any) -> Session:
    memory = MemorySkills(FILES)
    return Session(memory.catalog(), reader=memory, session_id="s", config=config, **kwargs)


def test_a_request_a_skill_fits_gets_it_as_a_suggestion_with_a_note() -> None:
    with open_session() as session:
        turn = session.prepare_turn("fill in the fields of this PDF form for me")
    assert [s.id for s in turn.suggestions] == ["pdf-forms"]
    (suggestion,) = turn.suggestions
    assert suggestion.path == "/s/pdf-forms/SKILL.md"
    assert suggestion.description.startswith("Fill in PDF forms")
    assert suggestion.score > 0
    assert turn.injections == () and turn.activations == ()
    assert turn.suggestion_note.startswith("Skills that may fit this request")
    assert "- pdf-forms: Fill in PDF forms" in turn.suggestion_note
    data = turn.to_dict()
    assert list(data["suggestions"][0]) == ["id", "name", "path", "description", "score"]
    assert data["suggestion_note"] == turn.suggestion_note


def test_a_request_no_skill_fits_gets_no_suggestion() -> None:
    with open_session() as session:
        for text in ("rename the variable tmp to count", "which port does PostgreSQL use"):
            turn = session.prepare_turn(text)
            assert turn.suggestions == () and turn.suggestion_note == "", text
            assert turn.to_dict()["suggestions"] == []


def test_a_message_that_activates_a_skill_gets_no_suggestion() -> None:
    with open_session() as session:
        turn = session.prepare_turn("$changelog fill in this PDF form")
    assert [a.skill.name for a in turn.activations] == ["changelog"]
    assert turn.suggestions == ()


def test_suggestions_follow_the_config_limit_enable_state_and_permissions() -> None:
    text = "the Django view is slow with N+1 queries"
    with open_session(Config(search_suggestions=0)) as session:
        assert session.prepare_turn(text).suggestions == ()
    with open_session(Config(disabled=("django-perf",))) as session:
        assert session.prepare_turn(text).suggestions == ()
    rules = PermissionRules(deny=("django-perf",))
    with open_session(Config(permissions=rules)) as session:
        assert session.prepare_turn(text).suggestions == ()
    with open_session() as session:
        assert [s.id for s in session.prepare_turn(text).suggestions] == ["django-perf"]


def test_a_skill_the_model_may_not_invoke_is_never_suggested() -> None:
    files = dict(FILES)
    files["/s/pdf-forms/SKILL.md"] = skill_md(
        "pdf-forms",
        "Fill in PDF forms and extract their fields.\ndisable-model-invocation: true",
    )
    memory = MemorySkills(files)
    with Session(memory.catalog(), reader=memory) as session:
        turn = session.prepare_turn("fill in the fields of this PDF form")
    assert turn.suggestions == ()


def test_turn_search_reopens_after_close() -> None:
    session = open_session()
    session.close()
    turn = session.prepare_turn("write the changelog for the release")
    assert [s.id for s in turn.suggestions] == ["changelog"]
    session.close()


def test_a_plugin_skill_is_suggested_under_its_plugin_id(tmp_path: Path) -> None:
    plugin = tmp_path / "geo"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "geo"}', encoding="utf-8")
    (plugin / "skills" / "near").mkdir(parents=True)
    (plugin / "skills" / "near" / "SKILL.md").write_text(
        skill_md("near", "Find the nearest coffee shops on a map."), encoding="utf-8"
    )
    (tmp_path / "near").mkdir()
    (tmp_path / "near" / "SKILL.md").write_text(
        skill_md("near", "Spell-check nearby words."), encoding="utf-8"
    )
    catalog = discover(roots=[Root(path=str(tmp_path), scope="repo")], use_cache=False)
    with Session(catalog, config=Config(search_suggestions=1)) as session:
        turn = session.prepare_turn("find the nearest coffee shops on a map")
    assert [s.id for s in turn.suggestions] == ["geo:near"]
    assert "- geo:near: Find the nearest" in turn.suggestion_note


def test_a_search_that_cannot_run_leaves_the_turn_without_suggestions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Broken:
        def search(self, *args: Any, **kwargs: Any) -> Any:
            raise SkillIOError("SQLite lacks FTS5")

    with open_session() as session:
        monkeypatch.setattr(TurnSearch, "get", lambda self: Broken())
        turn = session.prepare_turn("fill in the fields of this PDF form")
    assert turn.suggestions == () and turn.suggestion_note == ""


def test_only_a_users_message_and_only_its_opening_is_searched_for_suggestions() -> None:
    text = "fill in the fields of this PDF form"
    with open_session() as session:
        assert session.prepare_turn(text, invoker="model").suggestions == ()
        # past the opening, a request's words are not searched
        assert [s.id for s in session.prepare_turn("hello " * 10 + text).suggestions] == [
            "pdf-forms"
        ]
        assert session.prepare_turn("hello " * 90 + text).suggestions == ()
