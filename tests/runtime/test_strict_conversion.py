"""Every tool schema survives strict conversion: the OpenAI Agents SDK's
`ensure_strict_json_schema` (what `convert_schemas_to_strict=True` runs over an MCP
server's tools) and OpenAI's strict-schema rules keep every optional argument
optional (nullable), and the tool checker takes those nulls as "the default"."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._session import Session
from skillpack.runtime._tool_args import SCHEMAS, check_args
from skillpack.runtime._tools import SkillTools

strict = pytest.importorskip(
    "agents.strict_schema", reason="the strict-conversion test needs `pip install openai-agents`"
)

FILES = {
    "/r/pdf/SKILL.md": "---\nname: pdf\ndescription: Fill PDF forms. Use for PDFs.\n---\nBody.\n",
    "/r/charts/SKILL.md": "---\nname: charts\ndescription: Draw charts. Use for plots.\n---\nB.\n",
}
SAMPLE = {"integer": 3, "string": "pdf", "object": {}}
"""A value of each type for the required arguments of a call."""


def tools() -> SkillTools:
    memory = MemorySkills(FILES)
    return SkillTools(Session(memory.catalog(), reader=memory, session_id="s"), create=True)


def published() -> dict[str, dict[str, Any]]:
    """Each tool's schema as MCP and Anthropic clients get it."""
    return {d["name"]: d["inputSchema"] for d in tools().definitions_for("mcp")}


def strict_problems(schema: dict[str, Any], optional: set[str]) -> list[str]:
    """Where `schema` breaks OpenAI's strict-schema rules: the root a plain object (no
    `anyOf`, not nullable); every object closed (`additionalProperties: false`) with
    every property in `required`; the formerly `optional` properties nullable, `null`
    in their enum too."""
    problems: list[str] = []
    if "anyOf" in schema or schema.get("type") != "object":
        problems.append("the root is not a plain object")
    for where, node in _objects(schema, "$"):
        if node.get("additionalProperties") is not False:
            problems.append(f"{where} is not closed")
        properties = node.get("properties", {})
        if sorted(node.get("required", [])) != sorted(properties):
            problems.append(f"{where} does not require every property")
    for name in optional:
        prop = schema["properties"][name]
        kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        if "null" not in kinds:
            problems.append(f"optional {name} is not nullable")
        if "enum" in prop and None not in prop["enum"]:
            problems.append(f"optional {name}'s enum has no null")
    return problems


def _objects(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        kinds = node.get("type")
        if kinds == "object" or (isinstance(kinds, list) and "object" in kinds):
            yield where, node
        for key, child in node.items():
            yield from _objects(child, f"{where}.{key}")
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from _objects(child, f"{where}[{i}]")


def optional_of(tool: str) -> set[str]:
    schema = SCHEMAS[tool]
    return set(schema["properties"]) - set(schema["required"])


def nulls_call(tool: str) -> dict[str, Any]:
    """A call a strict model makes when it leaves every optional argument out."""
    schema = SCHEMAS[tool]
    return {
        name: SAMPLE[prop["type"]] if name in schema["required"] else None
        for name, prop in schema["properties"].items()
    }


@pytest.mark.parametrize("tool", sorted(SCHEMAS))
def test_the_agents_sdk_strict_conversion_keeps_optional_arguments_optional(tool: str) -> None:
    converted = strict.ensure_strict_json_schema(copy.deepcopy(published()[tool]))
    assert strict_problems(converted, optional_of(tool)) == []
    call = nulls_call(tool)
    jsonschema.validate(call, converted)  # the model may send exactly this
    expected = {k: v for k, v in call.items() if v is not None}
    assert check_args(tool, call) == expected  # and the checker reads null as absent


@pytest.mark.parametrize("fmt", ["openai", "openai-responses"])
def test_skillpack_s_own_strict_formats_follow_the_same_rules(fmt: Any) -> None:
    for definition in tools().definitions_for(fmt):
        function = definition.get("function", definition)
        assert strict_problems(function["parameters"], optional_of(function["name"])) == []
        jsonschema.validate(nulls_call(function["name"]), function["parameters"])


def test_scope_and_limit_stay_optional_and_null_means_the_default() -> None:
    converted = strict.ensure_strict_json_schema(copy.deepcopy(published()["skill_search"]))
    assert converted["properties"]["scope"]["type"] == ["string", "null"]
    assert converted["properties"]["limit"]["type"] == ["integer", "null"]
    assert None in converted["properties"]["scope"]["enum"]
    found = tools().call("skill_search", {"query": "fill pdf forms", "scope": None, "limit": None})
    assert found["ok"], found
    assert [hit["name"] for hit in found["data"]["results"]][:1] == ["pdf"]


def test_skill_load_says_one_of_name_or_path_is_needed() -> None:
    converted = strict.ensure_strict_json_schema(copy.deepcopy(published()["skill_load"]))
    for field, other in (("name", "path"), ("path", "name")):
        assert f"Give this or `{other}`" in converted["properties"][field]["description"]
    call = tools().call("skill_load", {"name": "pdf", "path": None, "args": None})
    assert call["ok"], call
    neither = tools().call("skill_load", {"name": None, "path": None, "args": None})
    assert neither["error"]["message"] == "skill_load needs `name` or `path`."
