"""The params checker, rule by rule: each bad value is refused naming its field."""

from __future__ import annotations

from typing import Any

import pytest

from skillpack._errors import UsageError
from skillpack.rpc._codes import ParamError
from skillpack.rpc._params import check_params
from skillpack.rpc._schema import METHODS
from skillpack.runtime._tool_args import SCHEMAS, check_args

CASES: list[tuple[str, Any, str | None, str]] = [
    # method, params, the field named (None: accepted), words in the problem
    ("skills.list", None, None, ""),
    ("skills.list", {}, None, ""),
    ("skills.list", {"cwds": ["/a", "/b"], "force_reload": True}, None, ""),
    ("skills.list", [], "", "object"),
    ("skills.list", "cwd", "", "object"),
    ("skills.list", {"cwds": "/a"}, "cwds", "a list"),
    ("skills.list", {"cwds": ["/a", None]}, "cwds[1]", "a string"),
    ("skills.list", {"cwds": [""]}, "cwds[0]", "not be empty"),
    ("skills.list", {"cwds": ["/a"] * 65}, "cwds", "at most 64 items"),
    ("skills.list", {"force_reload": 1}, "force_reload", "a boolean"),
    ("skills.list", {"cwd": "/a"}, "cwd", "not a known param"),
    ("skills.search", {"query": "x", "session": 3}, "session", "a string"),
    ("skills.search", {"query": "x", "team": 3}, "team", "not a known param"),
    (
        "skills.config.write",
        {"ref": "a", "enabled": "yes", "target": "user"},
        "enabled",
        "a boolean",
    ),
    ("turn.prepare", {"session": "s", "text": "hi", "invoker": "robot"}, "invoker", "one of"),
    ("context.inspect", {"tools": ["Read", 3]}, "tools[1]", "a string"),
    ("context.inspect", {"context_window": 0}, "context_window", "at least 1"),
    ("context.inspect", {"context_window": None}, "context_window", "an integer"),
    ("rpc.discover", {"x": 1}, "x", "known: none"),
]


@pytest.mark.parametrize(("method", "params", "field", "words"), CASES)
def test_params_are_checked_against_the_methods_schema(
    method: str, params: Any, field: str | None, words: str
) -> None:
    schema = METHODS[method].checked
    if field is None:
        assert check_params(schema, params) == (params or {})
        return
    with pytest.raises(ParamError) as refused:
        check_params(schema, params)
    assert refused.value.field == field
    assert words in refused.value.problem


TOOL_ARGUMENTS: list[tuple[str, dict[str, Any]]] = [
    # a tool-like method's params as a client sends them: the tool's check answers
    ("skills.search", {"query": "x", "limit": 3.0}),
    ("skills.search", {"query": "x", "limit": None}),
    ("skills.search", {"query": "x", "limit": 2.5}),
    ("skills.search", {"query": "x", "limit": 51}),
    ("skills.search", {"query": "x", "scope": "team"}),
    ("skills.search", {"query": "x" * 4_097}),
    ("skills.search", {"limit": 3}),
    ("skills.load", {"name": "alpha", "args": "x" * (64 * 1024 + 1)}),
    ("skills.read_file", {"skill": "alpha", "path": ""}),
]


@pytest.mark.parametrize(("method", "params"), TOOL_ARGUMENTS)
def test_tool_like_methods_leave_the_tool_arguments_to_the_tools_own_check(
    method: str, params: dict[str, Any]
) -> None:
    spec = METHODS[method]
    assert spec.tool is not None
    assert check_params(spec.checked, params) == params  # the dispatcher lets them through
    try:
        check_args(spec.tool, params)  # the one checker: what the envelope answers
    except UsageError as refused:
        assert refused.code == "INVALID_PARAM"


def test_limit_three_point_zero_and_null_are_answered_as_the_tool_answers_them() -> None:
    assert check_args("skill_search", {"query": "x", "limit": 3.0}) == {"query": "x", "limit": 3}
    assert check_args("skill_search", {"query": "x", "limit": None}) == {"query": "x"}


@pytest.mark.parametrize("method", ["skills.search", "skills.load", "skills.read_file"])
def test_tool_like_methods_publish_the_tools_own_bounds(method: str) -> None:
    spec = METHODS[method]
    assert spec.tool is not None
    tool = SCHEMAS[spec.tool]
    published = spec.params["properties"]
    for name, schema in tool["properties"].items():
        assert published[name] == schema, name
    assert spec.params["required"] == tool["required"]
