"""Properties of the tool argument checks (hypothesis): any JSON a model sends gives
an envelope, never an exception, and a value over a limit is `INVALID_PARAM`."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from skillpack._errors import ERROR_CODES, UsageError
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._session import Session
from skillpack.runtime._tool_args import SCHEMAS, check_args
from skillpack.runtime._tools import TOOL_NAMES, SkillTools
from strategies import JSON_VALUES, TEXT

CODES = set(ERROR_CODES)


def skill_md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: Does {name}.\n---\n{body}"


MEMORY = MemorySkills(
    {
        "/a/pdf/SKILL.md": skill_md("pdf", "Use $ARGUMENTS and $0.\n"),
        "/a/pdf/references/x.md": "reference\n",
        "/a/one/dup/SKILL.md": skill_md("dup", "One.\n"),
        "/a/two/dup/SKILL.md": skill_md("dup", "Two.\n"),
    }
)

ARGUMENTS = st.dictionaries(
    st.one_of(st.sampled_from(["query", "limit", "scope", "name", "path", "args", "skill"]), TEXT),
    JSON_VALUES,
    max_size=4,
)


@given(st.sampled_from([*TOOL_NAMES, "nope"]), st.one_of(ARGUMENTS, JSON_VALUES))
def test_any_call_returns_an_envelope(tool: str, args: Any) -> None:
    tools = SkillTools(Session(MEMORY.catalog(), reader=MEMORY, session_id="s"))
    result = tools.call(tool, args)
    if result["ok"]:
        assert set(result) == {"ok", "data"}
    else:
        assert result["error"]["code"] in CODES
        assert result["error"]["code"] != "INTERNAL_ERROR", result
        assert isinstance(result["error"]["message"], str)


BOUNDED = sorted(
    (tool, name)
    for tool, schema in SCHEMAS.items()
    for name, prop in schema["properties"].items()
    if "maxLength" in prop or "maximum" in prop
)


@given(st.sampled_from(BOUNDED), st.data())
def test_a_value_over_its_limit_is_refused_naming_the_field(
    field_of: tuple[str, str], data: st.DataObject
) -> None:
    tool, field = field_of
    schema = SCHEMAS[tool]
    prop = schema["properties"][field]
    if "maxLength" in prop:
        value: Any = "x" * (prop["maxLength"] + data.draw(st.integers(1, 1000)))
    else:
        value = data.draw(
            st.one_of(st.integers(max_value=prop["minimum"] - 1), st.integers(prop["maximum"] + 1))
        )
    valid = {name: "pdf" for name in schema["required"]}
    try:
        check_args(tool, {**valid, field: value})
    except UsageError as exc:
        assert f"`{field}`" in str(exc)
    else:
        raise AssertionError(f"{tool}.{field} accepted {str(value)[:40]}")


def test_every_string_argument_has_a_length_limit() -> None:
    strings = [
        (tool, name)
        for tool, schema in SCHEMAS.items()
        for name, prop in schema["properties"].items()
        if prop["type"] == "string"
    ]
    assert strings
    assert all("maxLength" in SCHEMAS[tool]["properties"][name] for tool, name in strings)
