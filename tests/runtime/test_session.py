"""Session: turns, injections, reload suppression, enable state, budgets, threads."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_SKILLS, root_session
from skillpack._errors import SkillPermissionError, UsageError
from skillpack._model import Catalog, Skill
from skillpack.config._schema import Config
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime import _session
from skillpack.runtime._session import Session, push_invocation
from skillpack.select._rules import PermissionRules


def skill_md(
    name: str, description: str = "Does a thing. Use when testing.", body: str = "", extra: str = ""
) -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"


@pytest.fixture
def files() -> MemorySkills:
    return MemorySkills(
        {
            "/s/pdf-forms/SKILL.md": skill_md(
                "pdf-forms", body="# PDF forms\n\nFill $ARGUMENTS in ${SKILL_DIR}.\n"
            ),
            "/s/pdf-forms/references/fields.md": "# Fields\n",
            "/s/deploy/SKILL.md": skill_md(
                "deploy", body="Deploy now.\n", extra="disable-model-invocation: true\n"
            ),
            "/s/helper/SKILL.md": skill_md(
                "helper", body="Background.\n", extra="user-invocable: false\n"
            ),
            "/s/git-only/SKILL.md": skill_md(
                "git-only", body="Only git.\n", extra="allowed-tools: Bash(git:*) Read\n"
            ),
        }
    )


def session_for(files: MemorySkills, **kwargs: object) -> Session:
    return Session(files.catalog(), reader=files, session_id="sess-1", **kwargs)  # type: ignore[arg-type]


def test_prepare_turn_activates_and_injects_with_substitutions(files: MemorySkills) -> None:
    turn = session_for(files).prepare_turn("$pdf-forms invoice.pdf")
    assert turn.lines == ("Using skill: pdf-forms",)
    assert turn.text == "invoice.pdf"
    [injection] = turn.injections
    assert injection.startswith('<skill_content name="pdf-forms" path="/s/pdf-forms/SKILL.md">')
    assert "Fill invoice.pdf in /s/pdf-forms." in injection
    assert "- references/fields.md" in injection


def test_same_version_injected_twice_gives_a_reminder(files: MemorySkills) -> None:
    session = session_for(files)
    first = session.load(name="pdf-forms")
    second = session.load(name="pdf-forms")
    assert not first.reminder and second.reminder
    assert "already loaded" in second.text


def test_changed_file_is_injected_again(files: MemorySkills) -> None:
    session = session_for(files)
    session.load(name="pdf-forms")
    files.write("/s/pdf-forms/SKILL.md", skill_md("pdf-forms", body="New body.\n"))
    again = session.load(name="pdf-forms")
    assert not again.reminder
    assert "New body." in again.text


def test_slash_command_runs_a_user_only_skill_but_the_model_cannot(files: MemorySkills) -> None:
    session = session_for(files)
    turn = session.prepare_turn("/deploy staging")
    assert [a.name for a in turn.activations] == ["deploy"]
    assert "ARGUMENTS: staging" in turn.injections[0]
    model_turn = session.prepare_turn("$deploy now", invoker="model")
    assert model_turn.activations == ()
    assert [d.kind for d in model_turn.diagnostics] == ["not-model-invocable"]


def test_catalog_lists_only_model_invocable_enabled_permitted_skills(files: MemorySkills) -> None:
    config = Config(disabled=("git-only",), permissions=PermissionRules(deny=("help*",)))
    session = Session(files.catalog(), reader=files, config=config)
    names = [s.name for s in session.skills.model_skills()]
    assert names == ["pdf-forms"]
    text = session.catalog_prompt(budget_chars=10_000)
    assert "<name>pdf-forms</name>" in text
    assert "deploy" not in text and "helper" not in text and "git-only" not in text


@pytest.mark.parametrize(
    "config",
    [
        Config(disabled=("git-only",)),
        Config(skills_enabled=False),
        Config(permissions=PermissionRules(deny=("help*",))),
        Config(permissions=PermissionRules(ask=("nothing-matches",))),
        None,  # a session override
    ],
    ids=["disabled-entry", "skills-off", "deny-rule", "ask-rule", "session-override"],
)
def test_a_session_sets_skills_apart_only_through_config_rules_or_overrides(
    files: MemorySkills, config: Config | None
) -> None:
    plain = Session(files.catalog(), reader=files, config=Config())
    assert plain.skills.sets_none_apart()
    session = Session(files.catalog(), reader=files, config=config or Config())
    if config is None:
        session.skills.set_enabled(session.catalog.skills[0], True)  # even one that changes nothing
    assert not session.skills.sets_none_apart()
    # Either way the skills the model sees are the ones asked one by one.
    for each in (plain, session):
        assert each.skills.model_skills() == tuple(
            s
            for s in each.catalog.skills
            if s.model_invocable
            and s.shadowed_by is None
            and each.skills.is_enabled(s)
            and each.skills.is_visible(s)
        )


def test_denied_skill_cannot_be_loaded_and_is_absent_from_resolution(files: MemorySkills) -> None:
    session = Session(
        files.catalog(), reader=files, config=Config(permissions=PermissionRules(deny=("pdf-*",)))
    )
    turn = session.prepare_turn("$pdf-forms x")
    assert turn.activations == ()
    assert [d.kind for d in turn.diagnostics] == ["not-found"]
    skill = files.catalog().named("pdf-forms")[0]
    with pytest.raises(SkillPermissionError):
        session.inject(skill)


def test_ask_permission_always_is_remembered_for_the_session(files: MemorySkills) -> None:
    asked: list[str] = []

    def ask(skill: Skill, action: str) -> str:
        asked.append(skill.name)
        return "always"

    session = Session(
        files.catalog(),
        reader=files,
        config=Config(permissions=PermissionRules(ask=("pdf-*",))),
        ask=ask,  # type: ignore[arg-type]
    )
    session.load(name="pdf-forms")
    session.skills.forget(files.catalog().named("pdf-forms")[0])
    session.load(name="pdf-forms")
    assert asked == ["pdf-forms"]


def test_budget_comes_from_context_window_and_env(files: MemorySkills) -> None:
    session = Session(files.catalog(), reader=files, env={"SKILLS_PROMPT_CHAR_BUDGET": "0"})
    assert session.render_catalog(context_window=200_000).report.budget_chars == 0
    plain = Session(files.catalog(), reader=files, env={})
    assert plain.render_catalog(context_window=100_000).report.budget_chars == 8_000
    assert plain.render_catalog().report.budget_chars == 16_000
    configured = Session(files.catalog(), reader=files, env={}, config=Config(budget_fraction=0.01))
    assert configured.render_catalog(context_window=100_000).report.budget_chars == 4_000


def test_active_tools_narrow_while_a_tool_scoped_skill_leads(files: MemorySkills) -> None:
    session = session_for(files)
    tools = ["Bash", "Read", "Write", "WebFetch", "skill_read_file"]
    assert session.declared.active_tools(tools) == tools
    session.load(name="git-only")
    assert session.declared.active_tools(tools) == ["Bash", "Read", "skill_read_file"]
    session.prepare_turn("a new request with no skill")
    assert session.declared.active_tools(tools) == tools


def test_disallowed_tools_are_removed_and_dict_tools_are_named(files: MemorySkills) -> None:
    files.write(
        "/s/no-web/SKILL.md",
        skill_md("no-web", body="x\n", extra="disallowed-tools: WebFetch WebSearch\n"),
    )
    session = session_for(files)
    session.load(name="no-web")
    tools = [{"name": "WebFetch"}, {"type": "function", "function": {"name": "Read"}}]
    assert session.declared.active_tools(tools) == [tools[1]]


def test_session_enable_override_beats_config(files: MemorySkills) -> None:
    session = Session(files.catalog(), reader=files, config=Config(disabled=("pdf-forms",)))
    skill = files.catalog().named("pdf-forms")[0]
    assert not session.skills.is_enabled(skill)
    assert [d.kind for d in session.prepare_turn("$pdf-forms a").diagnostics] == ["disabled"]
    session.skills.set_enabled(skill, True)
    assert session.prepare_turn("$pdf-forms a").lines == ("Using skill: pdf-forms",)


def test_invocation_chain_rejects_a_cycle(files: MemorySkills) -> None:
    session = session_for(files)
    [a] = files.catalog().named("pdf-forms")
    [b] = files.catalog().named("git-only")
    push_invocation(session, a)
    push_invocation(session, b)
    with pytest.raises(UsageError, match="pdf-forms -> git-only -> pdf-forms"):
        push_invocation(session, a)
    session.end_turn()
    push_invocation(session, a)


def test_reload_without_loader_explains_what_to_do(files: MemorySkills) -> None:
    with pytest.raises(Exception, match="pass the new catalog"):
        session_for(files).refresh()


def test_many_threads_prepare_turns_while_the_catalog_reloads(files: MemorySkills) -> None:
    session = session_for(files)
    catalogs = [files.catalog(), Catalog(skills=files.catalog().skills)]
    errors: list[BaseException] = []
    results: list[tuple[str, ...]] = []
    stop = threading.Event()

    def reloader() -> None:
        i = 0
        while not stop.is_set():
            session.refresh(catalogs[i % 2])
            i += 1

    def worker() -> None:
        try:
            for _ in range(200):
                turn = session.prepare_turn("$pdf-forms a.pdf and $nope")
                results.append(turn.lines)
                assert [d.kind for d in turn.diagnostics] == ["not-found"]
                assert turn.injections and turn.text == "a.pdf and $nope"
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised below
            errors.append(exc)

    background = threading.Thread(target=reloader)
    background.start()
    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    background.join()
    assert errors == []
    assert set(results) == {("Using skill: pdf-forms",)}
    assert len(results) == 1600


@pytest.mark.corpus
def test_session_open_discovers_from_disk_and_loads_a_real_claude_skill_with_arguments(
    tmp_path: Path,
) -> None:
    # A real corpus skill that uses $ARGUMENTS, discovered through a root.
    candidates = sorted(
        p for p in REAL_SKILLS.rglob("SKILL.md") if "$ARGUMENTS" in p.read_text(encoding="utf-8")
    )
    assert candidates, "the corpus has Claude-style skills that use $ARGUMENTS"
    target = candidates[0]
    session = Session.open(cwd=str(tmp_path), roots=[str(target.parent)], include_user=False)
    skill = session.catalog.at_path(str(target))
    assert skill is not None
    injection = session.inject(skill, args="first-arg second")
    assert "$ARGUMENTS" not in injection.text.split("</skill_content>")[0]
    assert "first-arg second" in injection.text


def test_always_answer_is_persisted_to_user_config_when_asked(
    files: MemorySkills, isolated_home: Path
) -> None:
    from skillpack.config._files import load_config, user_config_path

    session = Session(
        files.catalog(),
        reader=files,
        config=Config(permissions=PermissionRules(ask=("pdf-*",))),
        ask=lambda skill, action: "always",
        remember_permissions=True,
    )
    session.load(name="pdf-forms")
    assert user_config_path().is_file()
    config, problems = load_config(cwd=str(isolated_home))
    assert problems == ()
    skill = files.catalog().named("pdf-forms")[0]
    assert config.permissions.decide(skill) == "allow"


def test_a_session_has_at_most_28_public_members() -> None:
    # what a host calls; the plumbing lives in `skillpack.runtime._session`'s
    # functions and the two views (`skills`, `declared`).
    session = Session(Catalog())
    public = sorted(name for name in dir(session) if not name.startswith("_"))
    assert len(public) <= 28, public
    assert {"skills", "declared", "open", "prepare_turn", "refresh"} <= set(public)


@pytest.mark.parametrize("name", sorted(_session._MOVED))
def test_each_moved_name_still_answers_with_a_deprecation_warning(name: str) -> None:
    session = Session(Catalog())
    with pytest.warns(DeprecationWarning, match=rf"Session\.{name} is deprecated; "):
        old = getattr(session, name)
    where, get = _session._MOVED[name]
    new = get(session)
    if callable(new):
        assert callable(old)
    else:
        assert old == new


def test_the_old_names_behave_as_the_new_ones(write_skill: Any, tmp_path: Path) -> None:
    write_skill("alpha", base=tmp_path)
    session = root_session(tmp_path)
    (skill,) = session.catalog.skills
    with pytest.warns(DeprecationWarning):
        session.set_enabled(skill, False)  # type: ignore[attr-defined]
    assert not session.skills.is_enabled(skill)
    with pytest.warns(DeprecationWarning):
        assert session.reload() is session.catalog  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        session.nope  # type: ignore[attr-defined]  # noqa: B018


def test_refresh_with_a_catalog_swaps_it_in_and_answers_the_change(
    write_skill: Any, tmp_path: Path
) -> None:
    write_skill("alpha", base=tmp_path)
    session = root_session(tmp_path)
    heard: list[object] = []
    session.subscribe(heard.append)
    change = session.refresh(Catalog())
    assert change is not None and [s.name for s in change.removed] == ["alpha"]
    assert session.catalog == Catalog() and heard == [change]
    assert session.refresh(Catalog()) is None, "nothing changed"
