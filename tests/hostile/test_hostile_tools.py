"""What a model sends is bounded before any work.

Every argument has a size limit (`INVALID_PARAM` naming the field and the limit),
substitution adds at most `MAX_EXPANSION_CHARS`, arguments are split only when a
placeholder needs them and in linear time, and a message gets at most
`MAX_DIAGNOSTICS` diagnostics plus one that counts the rest.
"""

from __future__ import annotations

from typing import Any

import pytest
from hostile_inputs import run_isolated

from skillpack._errors import UsageError
from skillpack._limits import (
    MAX_ARGS_CHARS,
    MAX_DIAGNOSTICS,
    MAX_EXPANSION_CHARS,
    MAX_PATH_CHARS,
    MAX_QUERY_CHARS,
)
from skillpack.discovery._memory import MemorySkills
from skillpack.render import _substitute
from skillpack.render._substitute import substitute
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools
from skillpack.select._resolve import resolve_message


def skill_md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: Does {name}. Use when testing.\n---\n{body}"


FILES = {
    "/a/echo/SKILL.md": skill_md("echo", "$ARGUMENTS\n" * 1000),
    "/a/plain/SKILL.md": skill_md("plain", "No placeholder here.\n"),
    "/a/plain/references/x.md": "reference\n",
}


@pytest.fixture
def tools() -> SkillTools:
    memory = MemorySkills(FILES)
    return SkillTools(Session(memory.catalog(), reader=memory, session_id="s"))


def error_of(result: dict[str, Any]) -> dict[str, Any]:
    assert result["ok"] is False, str(result)[:200]
    return result["error"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("tool", "args", "field", "limit"),
    [
        ("skill_load", {"name": "echo", "args": "x" * 1_000_000}, "args", MAX_ARGS_CHARS),
        ("use_skill", {"skill": "plain", "args": "x" * 1_000_000}, "args", MAX_ARGS_CHARS),
        ("skill_read_file", {"skill": "plain", "path": "a/" * 500_000}, "path", MAX_PATH_CHARS),
        ("skill_search", {"query": "word " * 100_000}, "query", MAX_QUERY_CHARS),
        ("skill_load", {"path": "/" + "p" * 100_000}, "path", MAX_PATH_CHARS),
        ("use_skill", {"skill": "s" * 100_000}, "skill", MAX_PATH_CHARS),
    ],
)
def test_an_argument_over_its_limit_is_invalid_param_naming_field_and_limit(
    tools: SkillTools, tool: str, args: dict[str, Any], field: str, limit: int
) -> None:
    error = error_of(tools.call(tool, args))
    assert error["code"] == "INVALID_PARAM"
    assert f"`{field}`" in error["message"]
    assert str(limit) in error["message"]


def test_arguments_at_the_limit_repeated_by_placeholders_are_refused(tools: SkillTools) -> None:
    error = error_of(tools.skill_load(name="echo", args="y" * MAX_ARGS_CHARS))
    assert error["code"] == "INVALID_PARAM"
    assert str(MAX_EXPANSION_CHARS) in error["message"]


def test_arguments_within_every_limit_still_load(tools: SkillTools) -> None:
    result = tools.skill_load(name="echo", args="fine")
    assert result["ok"], result
    assert result["data"]["content"].count("fine") == 1000


def test_tool_definitions_state_the_limits(tools: SkillTools) -> None:
    by_name = {d.name: d.parameters["properties"] for d in tools.definitions()}
    assert by_name["skill_load"]["args"]["maxLength"] == MAX_ARGS_CHARS
    assert by_name["skill_read_file"]["path"]["maxLength"] == MAX_PATH_CHARS
    assert by_name["skill_search"]["query"]["maxLength"] == MAX_QUERY_CHARS


def test_substitution_adds_at_most_the_expansion_limit() -> None:
    with pytest.raises(UsageError, match=str(MAX_EXPANSION_CHARS)):
        substitute("$ARGUMENTS " * 1000, args="z" * 2000)
    assert len(substitute("$ARGUMENTS " * 100, args="z" * 2000)) == 100 * 2001


def test_arguments_are_not_split_when_no_placeholder_needs_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(args: str) -> tuple[str, ...]:
        raise AssertionError("split without a positional placeholder")

    monkeypatch.setattr(_substitute, "split_arguments", refuse)
    assert substitute("Body, no placeholder.", args="'a b' c").endswith("ARGUMENTS: 'a b' c")
    assert substitute("All: $ARGUMENTS", args="'a b' c") == "All: 'a b' c"


def test_splitting_a_megabyte_of_arguments_finishes() -> None:
    # shlex.split grows each word one character at a time: a 1 MB word took 20 s.
    done = run_isolated(
        """
        from skillpack.render._substitute import split_arguments
        print(len(split_arguments("x" * 1_000_000)), len(split_arguments('"a b" c ' * 100_000)))
        """,
        timeout=10,
    )
    assert done.returncode == 0, "timed out" if done.returncode is None else done.stderr
    assert done.stdout.split() == ["1", "200000"]


def test_thousands_of_unknown_mentions_give_a_bounded_list_of_diagnostics() -> None:
    memory = MemorySkills(FILES)
    text = " ".join(f"$nope-{i}" for i in range(150_000))
    resolution = resolve_message(text, memory.catalog())
    assert len(resolution.diagnostics) == MAX_DIAGNOSTICS + 1
    last = resolution.diagnostics[-1]
    assert last.kind == "too-many"
    assert f"{150_000 - MAX_DIAGNOSTICS} more" in last.message
