"""Turns: each activated skill all or nothing, the load re-check, forks on every path,
the host's built-in slash names (points 2, 3, 5, 6, 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import WriteSkill
from skillpack._errors import SkillIOError, SkillPermissionError
from skillpack._model import Skill
from skillpack.config._schema import Config
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._session import Session, builtin_commands
from skillpack.select._rules import PermissionRules


def skill_md(name: str, body: str = "Body.\n", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: Does {name}. Use when testing.\n{extra}---\n{body}"


FILES = {
    "/s/alpha/SKILL.md": skill_md("alpha", "Alpha steps for $ARGUMENTS.\n"),
    "/s/beta/SKILL.md": skill_md("beta", "Beta steps.\n"),
    "/s/research/SKILL.md": skill_md(
        "research", "Research $ARGUMENTS deeply.\n", extra="context: fork\nagent: Explore\n"
    ),
}


class Runner:
    def __init__(self, fail: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    def run(self, *, skill: Skill, prompt: str, agent: str | None, model: str | None) -> Any:
        self.calls.append({"skill": skill.name, "prompt": prompt, "agent": agent})
        if self.fail:
            raise RuntimeError("subagent crashed")
        return {"task_id": "t-1"}


def open_session(memory: MemorySkills, **kwargs: Any) -> Session:
    config = Config(multi_mention="all")
    return Session(memory.catalog(), reader=memory, session_id="s", config=config, **kwargs)


# -- point 3: all or nothing per skill ------------------------------------------------


class GoneOnRead(MemorySkills):
    """A reader where some skills fail as the filesystem would."""

    def __init__(self, files: dict[str, str], failing: dict[str, Exception]) -> None:
        super().__init__(files)
        self.failing = failing

    def read_body(self, skill: Skill) -> str:
        if skill.name in self.failing:
            raise self.failing[skill.name]
        return super().read_body(skill)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param(
            SkillIOError("Cannot read /s/beta/SKILL.md: I/O error."), "load-failed", id="io"
        ),
        pytest.param(
            SkillPermissionError("Permission denied reading /s/beta/SKILL.md."),
            "permission-denied",
            id="permission",
        ),
    ],
)
def test_one_unreadable_skill_leaves_the_others_injected_and_is_a_diagnostic(
    error: Exception, kind: str
) -> None:
    memory = GoneOnRead(FILES, {"beta": error})
    session = open_session(memory)
    turn = session.prepare_turn("$alpha and $beta on the repo")
    assert [a.name for a in turn.activations] == ["alpha"]
    assert turn.lines == ("Using skill: alpha",)
    [injection] = turn.injections
    assert "Alpha steps" in injection
    [diagnostic] = turn.diagnostics
    assert (diagnostic.kind, diagnostic.token, diagnostic.message) == (kind, "$beta", str(error))
    loaded = [entry["name"] for entry in session.inspect()["loaded"]]
    assert loaded == ["alpha"]
    assert [s.name for s in session.leading] == ["alpha"]


def test_a_skill_is_recorded_as_loaded_only_when_its_text_was_returned() -> None:
    memory = GoneOnRead(FILES, {"alpha": SkillIOError("Cannot read /s/alpha/SKILL.md.")})
    session = open_session(memory)
    session.prepare_turn("$alpha please")
    assert session.inspect()["loaded"] == [] and session.leading == ()
    memory.failing.clear()
    again = session.prepare_turn("$alpha please")
    assert "Alpha steps" in again.injections[0]  # not a reminder of text never sent


def test_an_unexpected_error_records_nothing_for_the_turn() -> None:
    memory = GoneOnRead(FILES, {"beta": ZeroDivisionError("boom")})
    session = open_session(memory)
    with pytest.raises(ZeroDivisionError):
        session.prepare_turn("$alpha and $beta")
    assert session.inspect()["loaded"] == [] and session.leading == ()


# -- point 2: a load re-checks what it reads -------------------------------------------


def test_a_skill_that_stopped_parsing_is_a_diagnostic_never_raw_frontmatter() -> None:
    memory = MemorySkills(FILES)
    session = open_session(memory)
    memory.write("/s/beta/SKILL.md", "---\nname: beta\ndescription: x\nBeta, unclosed.\n")
    turn = session.prepare_turn("$alpha and $beta")
    assert [a.name for a in turn.activations] == ["alpha"]
    [diagnostic] = turn.diagnostics
    assert diagnostic.kind == "load-failed"
    assert "no longer parses" in diagnostic.message and "/s/beta/SKILL.md" in diagnostic.message
    assert all("name: beta" not in text for text in turn.injections)


# -- point 6: forked skills fork on every path -------------------------------------------


@pytest.mark.parametrize(
    ("text", "args"),
    [
        pytest.param("/research the auth module", "the auth module", id="slash"),
        pytest.param("$research the auth module", "the auth module", id="mention"),
    ],
)
def test_a_fork_skill_in_a_turn_goes_to_the_hosts_runner(text: str, args: str) -> None:
    runner = Runner()
    session = open_session(MemorySkills(FILES))
    turn = session.prepare_turn(text, runner=runner)
    assert turn.injections == () and turn.diagnostics == ()
    assert turn.lines == ("Using skill: research",)
    [fork] = turn.forks
    assert (fork.skill.name, fork.args, fork.result) == ("research", args, {"task_id": "t-1"})
    assert runner.calls == [
        {"skill": "research", "prompt": "Research the auth module deeply.", "agent": "Explore"}
    ]
    assert turn.to_dict()["forks"][0]["context"] == "fork"
    assert session.inspect()["loaded"] == []  # nothing was injected into this context


def test_a_fork_skill_without_a_runner_is_a_diagnostic_never_an_inline_injection() -> None:
    session = open_session(MemorySkills(FILES))
    turn = session.prepare_turn("/research the auth module")
    assert turn.activations == () and turn.injections == () and turn.forks == ()
    [diagnostic] = turn.diagnostics
    assert diagnostic.kind == "fork-unavailable"
    assert "no subagent runner" in diagnostic.message


def test_inline_and_fork_skills_of_one_turn_each_go_their_way() -> None:
    runner = Runner(fail=True)
    session = open_session(MemorySkills(FILES))
    turn = session.prepare_turn("$alpha then $research the logs", runner=runner)
    assert [a.name for a in turn.activations] == ["alpha"]
    assert len(turn.injections) == 1 and turn.forks == ()
    [diagnostic] = turn.diagnostics
    assert diagnostic.kind == "fork-failed" and "subagent crashed" in diagnostic.message


def test_a_fork_asks_the_permission_gate_with_action_fork() -> None:
    asked: list[str] = []

    def ask(skill: Skill, action: str) -> str:
        asked.append(action)
        return "no"

    memory = MemorySkills(FILES)
    session = Session(
        memory.catalog(),
        reader=memory,
        config=Config(permissions=PermissionRules(ask=("research",))),
        ask=ask,  # type: ignore[arg-type]
    )
    runner = Runner()
    turn = session.prepare_turn("/research x", runner=runner)
    assert asked == ["fork"] and runner.calls == []
    assert [d.kind for d in turn.diagnostics] == ["permission-denied"]


# -- point 5: the cycle rule is for real nesting only --------------------------------------


def test_a_model_turn_inside_a_forked_run_cannot_start_that_skill_again() -> None:
    memory = MemorySkills(FILES)
    session = open_session(memory)
    inner: list[Any] = []

    class Nested(Runner):
        def run(self, **kwargs: Any) -> Any:
            inner.append(session.prepare_turn("$research more", invoker="model", runner=self))
            inner.append(session.prepare_turn("$alpha then $alpha", invoker="model"))
            return "done"

    turn = session.prepare_turn("/research x", runner=Nested())
    assert [f.result for f in turn.forks] == ["done"]
    cycle, fine = inner
    assert [d.kind for d in cycle.diagnostics] == ["cycle"]
    assert "research -> research" in cycle.diagnostics[0].message
    assert [a.name for a in fine.activations] == ["alpha"] and fine.diagnostics == ()
    assert session.prepare_turn("/research again", runner=Runner()).forks  # chain popped


# -- point 7: slash names belong to the host -----------------------------------------------


def test_a_session_has_no_builtin_slash_names_unless_the_host_gives_them() -> None:
    memory = MemorySkills({"/s/review/SKILL.md": skill_md("review", "Review it.\n")})
    plain = Session(memory.catalog(), reader=memory)
    assert [a.name for a in plain.prepare_turn("/review the diff").activations] == ["review"]
    host = Session(memory.catalog(), reader=memory, builtin_commands=("/Review", "help"))
    assert builtin_commands(host) == frozenset({"review", "help"})
    turn = host.prepare_turn("/review the diff")
    assert turn.activations == () and turn.text == "/review the diff"
    [diagnostic] = turn.diagnostics
    assert diagnostic.kind == "shadowed-by-builtin" and "$review" in diagnostic.message
    assert [a.name for a in host.prepare_turn("$review the diff").activations] == ["review"]


def test_a_skill_the_project_config_disables_is_enabled_with_project(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    # `skillpack enable NAME` writes the user file, which cannot undo
    # the project's entry; the hint names `--project`.
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    write_skill("alpha", base=project / ".agents" / "skills")
    config = project / ".skillpack" / "config.toml"
    config.parent.mkdir()
    config.write_text('[skills]\ndisabled = ["alpha"]\n', encoding="utf-8")
    session = Session.open(cwd=str(project), include_user=False, include_system=False)
    (diagnostic,) = session.resolve("$alpha go").diagnostics
    assert diagnostic.hint == "Enable it with `skillpack enable --project alpha`."
    session.skills.set_enabled(session.catalog.skills[0], False)
    config.unlink()
    session.refresh()
    (diagnostic,) = session.resolve("$alpha go").diagnostics
    assert diagnostic.hint == "Enable it with `skillpack enable alpha`."
