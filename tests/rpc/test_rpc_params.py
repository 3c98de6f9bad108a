"""The params checker, rule by rule: each bad value is refused naming its field."""

from __future__ import annotations

from typing import Any

import pytest

from skillpack.rpc._codes import ParamError
from skillpack.rpc._params import check_params
from skillpack.rpc._schema import METHODS

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
    ("skills.search", {"query": "x", "limit": 50}, None, ""),
    ("skills.search", {"query": "x", "limit": 51}, "limit", "at most 50"),
    ("skills.search", {"query": "x", "limit": 0}, "limit", "at least 1"),
    ("skills.search", {"query": "x", "limit": 2.5}, "limit", "an integer"),
    ("skills.search", {"query": "x", "limit": True}, "limit", "an integer"),
    ("skills.search", {"query": "x", "scope": "team"}, "scope", "one of"),
    ("skills.search", {"query": ""}, "query", "not be empty"),
    ("skills.search", {"query": "x" * 10_001}, "query", "at most 10000"),
    ("skills.search", {"limit": 3}, "query", "required"),
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
    schema = METHODS[method].params
    if field is None:
        assert check_params(schema, params) == (params or {})
        return
    with pytest.raises(ParamError) as refused:
        check_params(schema, params)
    assert refused.value.field == field
    assert words in refused.value.problem
