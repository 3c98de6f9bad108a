"""Config keys: the skills switch, search limits, the catalog cap, budgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillpack._errors import UsageError
from skillpack.cli._app import cli
from skillpack.config._schema import Config, merge_layers, parse_config
from skillpack.discovery._memory import MemorySkills
from skillpack.render._catalog import render_catalog
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools


def config_of(text: str) -> Config:
    layer, problems = parse_config(text, path="/p/config.toml", base="/p")
    assert problems == ()
    return merge_layers([layer])


def skills(count: int = 5) -> MemorySkills:
    return MemorySkills(
        {
            f"/s/skill-{i}/SKILL.md": (
                f"---\nname: skill-{i}\ndescription: Does task {i} with care. Use for {i}.\n"
                f"---\nBody {i}.\n"
            )
            for i in range(count)
        }
    )


def session(text: str, files: MemorySkills | None = None, **kwargs: Any) -> Session:
    files = files or skills()
    return Session(files.catalog(), config=config_of(text), reader=files, **kwargs)


# -- [skills] enabled = false -----------------------------------------------------------


def skills_off(write_skill: Any, tmp_path: Path, home: Path) -> None:
    """A root with one skill, and a user config that turns skills off."""
    write_skill("one", base=tmp_path / "root")
    user = home / ".config" / "skillpack" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[skills]\nenabled = false\n", encoding="utf-8")


def test_skills_enabled_false_turns_every_skill_off() -> None:
    off = session("[skills]\nenabled = false\n")
    assert off.catalog_prompt() == ""
    envelope = SkillTools(off).skill_load(name="skill-1")
    assert envelope["error"]["code"] == "DISABLED"
    assert "[skills] enabled = false" in envelope["error"]["message"]
    assert SkillTools(off).skill_search("task")["error"]["code"] == "DISABLED"
    turn = off.prepare_turn("$skill-1 now")
    assert turn.activations == ()
    [diagnostic] = turn.diagnostics
    assert diagnostic.kind == "disabled" and "turned off" in diagnostic.message


def test_skills_enabled_as_a_list_still_reenables_entries() -> None:
    config = config_of('[skills]\ndisabled = ["skill-1"]\nenabled = ["skill-1"]\n')
    assert config.skills_enabled and config.enabled == ("skill-1",)


def test_list_marks_every_skill_disabled_when_skills_are_off(
    write_skill: Any, tmp_path: Path, isolated_home: Path
) -> None:
    skills_off(write_skill, tmp_path, isolated_home)
    out = CliRunner().invoke(cli, ["list", "--root", str(tmp_path / "root"), "--json"])
    assert {s["name"]: s["enabled"] for s in json.loads(out.stdout)["skills"]}["one"] is False


# -- [search] default_limit / max_limit --------------------------------------------------


def test_search_limits_come_from_the_config() -> None:
    files = skills(12)
    tools = SkillTools(session("[search]\ndefault_limit = 2\nmax_limit = 3\n", files))
    results = tools.skill_search("task care")["data"]["results"]
    assert len(results) == 2
    assert len(tools.skill_search("task care", limit=3)["data"]["results"]) == 3
    too_many = tools.skill_search("task care", limit=4)
    assert too_many["error"]["code"] == "INVALID_PARAM"
    assert "max_limit" in too_many["error"]["message"]
    [search] = [d for d in tools.definitions() if d.name == "skill_search"]
    limit = search.parameters["properties"]["limit"]
    assert limit["maximum"] == 3 and "default 2" in limit["description"]


@pytest.mark.parametrize(
    "text",
    [
        "[search]\ndefault_limit = 0\n",
        "[search]\nmax_limit = 51\n",
        "[search]\nmax_limit = true\n",
        "[catalog]\nmax_entries = 0\n",
        '[catalog]\nmax_entries = "10"\n',
        '[catalog]\nmode = "lazy"\n',
    ],
)
def test_bad_limits_are_config_errors(text: str) -> None:
    _layer, problems = parse_config(text, path="/p/config.toml", base="/p")
    assert [p.code for p in problems] == ["config-value-invalid"]


# -- [catalog] max_entries -----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["xml", "markdown", "json"])
def test_max_entries_caps_the_catalog_and_says_so(fmt: str) -> None:
    listed = list(skills(5).catalog().skills)
    # The best-ranked two are listed: here the two used most recently.
    recent = {listed[3].key: 2, listed[1].key: 1}
    rendered = render_catalog(listed, format=fmt, max_entries=2, recent=recent)  # type: ignore[arg-type]
    report = rendered.report
    assert (report.shown, report.total, report.truncated) == (2, 5, True)
    assert report.omitted == ("skill-0", "skill-2", "skill-4")
    assert "skill-1" in rendered.text and "skill-3" in rendered.text
    assert "skill-2" not in rendered.text
    assert len(rendered.text) == report.used_chars
    if fmt == "xml":
        assert '<truncated shown="2" total="5">' in rendered.text
    elif fmt == "json":
        assert json.loads(rendered.text)["truncated"]["total"] == 5


def test_max_entries_and_a_tight_budget_stay_within_the_budget() -> None:
    listed = list(skills(50).catalog().skills)
    for budget in (0, 200, 400, 800, 1600):
        rendered = render_catalog(listed, budget_chars=budget, max_entries=10)
        assert len(rendered.text) <= budget
        assert rendered.report.total == 50


def test_max_entries_below_one_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="max_entries"):
        render_catalog([], max_entries=0)


def test_the_session_catalog_honours_catalog_max_entries() -> None:
    rendered = session("[catalog]\nmax_entries = 3\n").render_catalog()
    assert (rendered.report.shown, rendered.report.total) == (3, 5)


def test_the_config_chooses_the_catalog_mode_and_a_caller_overrides_it() -> None:
    configured = session('[catalog]\nmode = "deferred"\n')
    assert configured.config.catalog_mode == "deferred"
    assert configured.render_catalog().report.deferred
    assert not configured.render_catalog(mode="full").report.deferred
    assert not session("").render_catalog().report.deferred


# -- SLASH_COMMAND_TOOL_CHAR_BUDGET ----------------------------------------------------------


def test_claude_codes_budget_variable_is_honoured() -> None:
    rendered = session("", env={"SLASH_COMMAND_TOOL_CHAR_BUDGET": "300"}).render_catalog()
    assert rendered.report.budget_chars == 300


def test_skills_prompt_char_budget_wins_over_claude_codes_variable() -> None:
    env = {"SKILLS_PROMPT_CHAR_BUDGET": "500", "SLASH_COMMAND_TOOL_CHAR_BUDGET": "300"}
    assert session("", env=env).render_catalog().report.budget_chars == 500
    blank = {"SKILLS_PROMPT_CHAR_BUDGET": " ", "SLASH_COMMAND_TOOL_CHAR_BUDGET": "300"}
    assert session("", env=blank).render_catalog().report.budget_chars == 300


def test_a_bad_claude_code_budget_names_its_variable() -> None:
    with pytest.raises(UsageError, match="SLASH_COMMAND_TOOL_CHAR_BUDGET='lots'"):
        session("", env={"SLASH_COMMAND_TOOL_CHAR_BUDGET": "lots"}).render_catalog()


def test_cli_search_with_skills_off_is_a_disabled_error(
    write_skill: Any, tmp_path: Path, isolated_home: Path
) -> None:
    skills_off(write_skill, tmp_path, isolated_home)
    out = CliRunner().invoke(cli, ["search", "one", "--root", str(tmp_path / "root"), "--json"])
    assert out.exit_code == 1
    assert json.loads(out.stdout)["error"]["code"] == "DISABLED"
