"""Tool schemas strict providers accept, arguments held to them, and the data the
tools return (points 12 and 13)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from skillpack._errors import UsageError
from skillpack._model import Catalog, Skill
from skillpack.config._schema import Config
from skillpack.discovery._discover import discover
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._session import Session
from skillpack.runtime._tool_args import (
    SCHEMAS,
    check_args,
    clip_nesting,
    clip_request,
    parse_args,
    strict_schema,
)
from skillpack.runtime._tools import SkillTools


def skill_md(name: str, body: str = "Body.\n", extra: str = "") -> str:
    description = f"Does {name} work. Use when testing."
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"


FILES = {
    "/a/pdf/SKILL.md": skill_md("pdf", "Fill $ARGUMENTS.\n"),
    "/a/pdf/references/x.md": "reference\n",
    "/a/one/dup/SKILL.md": skill_md("dup"),
    "/a/two/dup/SKILL.md": skill_md("dup"),
    "/a/retired/SKILL.md": skill_md("retired"),
}


def tools_for(files: dict[str, str] = FILES, **kwargs: Any) -> SkillTools:
    memory = MemorySkills(files)
    return SkillTools(Session(memory.catalog(), reader=memory, session_id="s", **kwargs))


# -- arguments checked against the schema ----------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        pytest.param("skill_load", {"name": "pdf", "nmae": "x"}, "nmae", id="unknown-key"),
        pytest.param(
            "use_skill", {"skill": "pdf", "arguments": "x"}, "arguments", id="unknown-key-use"
        ),
        pytest.param("skill_load", {"name": ["pdf"]}, "name", id="list-for-string"),
        pytest.param("skill_load", {"name": "pdf", "args": 3}, "args", id="number-for-string"),
        pytest.param("use_skill", {"skill": {"name": "pdf"}}, "skill", id="object-for-string"),
        pytest.param(
            "skill_read_file", {"skill": "pdf", "path": True}, "path", id="bool-for-string"
        ),
        pytest.param("skill_search", {"query": "pdf", "limit": True}, "limit", id="bool-for-int"),
        pytest.param("skill_search", {"query": "pdf", "limit": 2.5}, "limit", id="float-for-int"),
        pytest.param("skill_search", {"query": "pdf", "limit": 99}, "limit", id="over-maximum"),
        pytest.param(
            "skill_search", {"query": "pdf", "scope": "galaxy"}, "scope", id="not-in-enum"
        ),
        pytest.param("skill_search", {"query": 7}, "query", id="query-number"),
        pytest.param("skill_read_file", {"skill": "pdf"}, "path", id="missing-required"),
    ],
)
def test_arguments_outside_the_schema_are_invalid_param_naming_the_field(
    tool: str, arguments: dict[str, Any], field: str
) -> None:
    result = tools_for().call(tool, arguments)
    assert result["ok"] is False, result
    assert result["error"]["code"] == "INVALID_PARAM"
    assert f"`{field}`" in result["error"]["message"]


@pytest.mark.parametrize("arguments", [[1, 2], "pdf", 3])
def test_arguments_that_are_not_an_object_are_invalid_param(arguments: Any) -> None:
    result = tools_for().call("skill_load", arguments)
    assert result["error"]["code"] == "INVALID_PARAM"
    assert "must be a JSON object" in result["error"]["message"]


def test_null_is_an_absent_optional_argument_as_strict_providers_send_it() -> None:
    tools = tools_for()
    result = tools.call("skill_load", {"name": "pdf", "path": None, "args": None})
    assert result["ok"], result
    search = tools.call("skill_search", {"query": "pdf", "limit": None, "scope": None})
    assert search["ok"], search
    assert check_args("skill_search", {"query": "q", "limit": 3.0}) == {"query": "q", "limit": 3}


# -- schemas strict providers accept --------------------------------------------------------


def _assert_strict(schema: dict[str, Any]) -> None:
    """OpenAI's strict function schema rules, checked by hand."""
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"])
    for prop in schema["properties"].values():
        assert not {"minimum", "maximum", "default", "minLength", "format"} & set(prop)
        if isinstance(prop["type"], list):
            assert prop["type"][1] == "null"
            if "enum" in prop:
                assert prop["enum"][-1] is None


@pytest.mark.parametrize("fmt", ["openai", "openai-responses"])
def test_openai_definitions_are_strict_function_schemas(fmt: str) -> None:
    for definition in tools_for().definitions_for(fmt):  # type: ignore[arg-type]
        function = definition.get("function", definition)
        assert function["strict"] is True
        _assert_strict(function["parameters"])


def test_strict_schemas_keep_required_fields_non_nullable() -> None:
    strict = strict_schema(SCHEMAS["skill_read_file"])
    assert strict["properties"]["skill"]["type"] == "string"
    assert strict["properties"]["path"]["type"] == "string"
    loose = strict_schema(SCHEMAS["skill_search"])
    assert loose["properties"]["limit"]["type"] == ["integer", "null"]
    assert loose["properties"]["query"]["type"] == "string"


def test_the_name_enum_holds_ids_that_each_pick_one_skill() -> None:
    tools = tools_for(config=Config(disabled=("retired",)))
    [_, load, use, read] = tools.definitions()
    *enum, absent = load.parameters["properties"]["name"]["enum"]
    assert enum == ["/a/one/dup/SKILL.md", "/a/two/dup/SKILL.md", "pdf"]
    assert absent is None  # `name` is optional: null is its absence
    assert use.parameters["properties"]["skill"]["enum"] == enum
    assert read.parameters["properties"]["skill"]["enum"] == enum
    for ref in enum:
        loaded = tools.skill_load(name=ref)
        assert loaded["ok"], loaded
        assert ref in (loaded["data"]["name"], loaded["data"]["path"])
        assert tools.use_skill(ref)["ok"]


def test_a_qualified_id_is_in_the_enum_where_the_bare_name_is_not_unique() -> None:
    def skill(name: str, plugin: str | None) -> Skill:
        folder = f"/p/{plugin or 'plain'}/{name}"
        return Skill(
            name=name,
            description="Does it.",
            path=f"{folder}/SKILL.md",
            dir=folder,
            scope="user",
            plugin=plugin,
        )

    catalog = Catalog(skills=(skill("lint", "p1"), skill("lint", "p2"), skill("fmt", None)))
    [_, load, _, _] = SkillTools(Session(catalog, session_id="s")).definitions()
    assert load.parameters["properties"]["name"]["enum"] == ["fmt", "p1:lint", "p2:lint", None]


# -- the data the tools return ------------------------------------------------------------


def test_skill_load_data_says_where_the_skill_is_and_which_version(tmp_path: Any) -> None:
    folder = tmp_path / "skills" / "pdf"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md("pdf"), encoding="utf-8")
    catalog = discover(roots=[str(tmp_path / "skills")], use_cache=False)
    tools = SkillTools(Session(catalog, session_id="s"))
    data = tools.skill_load(name="pdf")["data"]
    mtime_ns = (folder / "SKILL.md").stat().st_mtime_ns
    assert data["dir"] == str(folder) and data["scope"] == "extra"
    assert data["qualified_name"] == "extra:pdf" and data["path"] == str(folder / "SKILL.md")
    assert data["mtime_ns"] == mtime_ns and data["mtime_ms"] == mtime_ns // 1_000_000
    assert data["context"] == "inline"


def test_skill_search_data_counts_and_says_when_more_matched() -> None:
    files = {f"/m/pdf-{i}/SKILL.md": skill_md(f"pdf-{i}") for i in range(5)}
    tools = tools_for(files)
    some = tools.skill_search("pdf", limit=2)["data"]
    assert some["count"] == len(some["results"]) == 2 and some["truncated"] is True
    every = tools.skill_search("pdf", limit=5)["data"]
    assert every["count"] == 5 and every["truncated"] is False
    none = tools.skill_search("zebra", limit=3)["data"]
    assert none == {"results": [], "count": 0, "truncated": False}


# -- point 13: text for the model never tells it to run a command ------------------------------


_COMMAND = re.compile(r"`skillpack\b|\bskillpack (list|enable|disable|show|load|search)\b")


def test_no_model_facing_text_tells_the_model_to_run_skillpack() -> None:
    memory = MemorySkills({**FILES, "/a/gone/SKILL.md": skill_md("gone")})
    session = Session(
        memory.catalog(), reader=memory, session_id="s", config=Config(disabled=("retired",))
    )
    tools = SkillTools(session)
    memory.remove("/a/gone/SKILL.md")
    calls: list[tuple[str, dict[str, object]]] = [
        ("skill_load", {"name": "nope"}),
        ("skill_load", {"name": "pdff"}),
        ("skill_load", {"name": "dup"}),
        ("skill_load", {"name": "retired"}),
        ("skill_load", {"name": "gone"}),
        ("skill_load", {"path": "/nowhere/SKILL.md"}),
        ("use_skill", {"skill": "nope"}),
        ("skill_read_file", {"skill": "pdf", "path": "references/none.md"}),
        ("skill_read_file", {"skill": "pdf", "path": "../../etc/passwd"}),
        ("skill_search", {"query": ""}),
        ("skill_load", {"name": "pdf", "extra": 1}),
    ]
    texts = []
    for tool, arguments in calls:
        result = tools.call(tool, arguments)
        assert result["ok"] is False, (tool, arguments)
        texts.append(json.dumps(result))
    text = "$nope $retired $dup [$x](/nowhere/SKILL.md) $gone"
    turn = session.prepare_turn(text, invoker="model")
    texts += [d.message for d in turn.diagnostics]
    assert turn.diagnostics and all(
        d.hint is None or _COMMAND.search(d.hint) for d in turn.diagnostics
    )
    texts.append(session.catalog_prompt())
    loaded = tools.skill_load(name="pdf")
    texts += [loaded["data"]["content"], tools.skill_load(name="pdf")["data"]["content"]]
    for text in texts:
        assert not _COMMAND.search(text), text


def test_skill_create_is_strict_too_its_frontmatter_travels_as_json_text() -> None:
    memory = MemorySkills(FILES)
    tools = SkillTools(Session(memory.catalog(), reader=memory), create=True)
    [create] = [
        d["function"]
        for d in tools.definitions_for("openai")
        if d["function"]["name"] == "skill_create"
    ]
    _assert_strict(create["parameters"])
    frontmatter = create["parameters"]["properties"]["frontmatter"]
    assert frontmatter["type"] == ["string", "null"] and "JSON text" in frontmatter["description"]
    base = {"name": "n", "description": "d", "body": "b"}
    as_text = check_args("skill_create", {**base, "frontmatter": '{"user-invocable": false}'})
    as_object = check_args("skill_create", {**base, "frontmatter": {"user-invocable": False}})
    assert as_text["frontmatter"] == as_object["frontmatter"] == {"user-invocable": False}
    with pytest.raises(UsageError, match="`frontmatter` of skill_create must be a JSON object"):
        check_args("skill_create", {**base, "frontmatter": "[1, 2]"})


def test_loading_a_skill_that_stopped_parsing_is_an_invalid_skill_naming_the_file() -> None:
    memory = MemorySkills(FILES)
    tools = SkillTools(Session(memory.catalog(), reader=memory, session_id="s"))
    memory.write("/a/pdf/SKILL.md", "---\nname: pdf\ndescription: x\nThe closing line is gone.\n")
    for result in (tools.skill_load(name="pdf"), tools.use_skill("pdf")):
        assert result["error"]["code"] == "INVALID_SKILL"
        assert "/a/pdf/SKILL.md no longer parses" in result["error"]["message"]
        assert "name: pdf" not in result["error"]["message"].split("parses")[0]


def nested(depth: int, leaf: Any = 3) -> Any:
    """`leaf` inside `depth` lists, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [33, 1_000, 100_000])
def test_a_value_nested_past_the_bound_is_refused_by_every_tools_check(depth: int) -> None:
    """The library's `SkillTools` (and so every adapter over it): an INVALID_PARAM
    envelope naming the field, never a `RecursionError`."""
    memory = MemorySkills(FILES)
    tools = SkillTools(Session(memory.catalog(), reader=memory), create=True)
    for name, arguments in (
        ("skill_search", {"query": "pdf", "limit": nested(depth)}),
        ("skill_load", {"name": "pdf", "extra": {"deep": nested(depth)}}),
        (
            "skill_create",
            {"name": "n", "description": "d", "body": "b", "frontmatter": {"x": nested(depth)}},
        ),
    ):
        envelope = tools.call(name, arguments)
        assert envelope["ok"] is False and envelope["error"]["code"] == "INVALID_PARAM", name
        assert "levels deep" in envelope["error"]["message"], name


def test_nesting_up_to_the_bound_is_checked_as_before() -> None:
    assert check_args(
        "skill_create",
        {"name": "n", "description": "d", "body": "b", "frontmatter": {"x": nested(30)}},
    )
    with pytest.raises(UsageError, match="must be an integer, got an array"):
        check_args("skill_search", {"query": "pdf", "limit": nested(31)})


@pytest.mark.parametrize(
    ("text", "keep", "clipped"),
    [
        ("[[[1],[2]],[3]]", 2, "[[[],[]],[3]]"),
        ('{"a": {"b": {"c": 1}}, "d": 2}', 2, '{"a": {"b": []}, "d": 2}'),
        ('["[[[", {"k\\"[[": "]]"}]', 2, '["[[[", {"k\\"[[": "]]"}]'),  # strings skipped
        ("[[1]]", 2, "[[1]]"),
        ("[[[1", 2, "[["),  # not JSON stays not JSON
    ],
)
def test_clip_nesting_cuts_only_what_is_deeper_than_kept(
    text: str, keep: int, clipped: str
) -> None:
    assert clip_nesting(text, keep) == clipped
    assert clip_nesting(text.encode(), keep) == clipped.encode()


def test_parse_args_reads_any_depth_without_recursing() -> None:
    deep = '{"query": "pdf", "limit": ' + "[" * 100_000 + "3" + "]" * 100_000 + "}"
    parsed = parse_args("skill_search", deep)
    with pytest.raises(UsageError, match="`limit` of skill_search nests arrays or objects"):
        check_args("skill_search", parsed)
    assert parse_args("skill_search", "  ") == {}
    with pytest.raises(UsageError, match="The arguments of skill_search are not JSON"):
        parse_args("skill_search", "{nope")


def test_clip_request_cuts_only_a_deep_request_and_leaves_the_rest_to_the_protocol() -> None:
    deep = "[" * 1_000 + "]" * 1_000
    request = '{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"p": ' + deep + "}}"
    clipped = clip_request(request.encode())
    assert clipped != request.encode() and json.loads(clipped)["id"] == 1
    for other in (deep, '{"a": ' + deep + "}", '{"method": ' + deep + "}", "[[[" + deep):
        assert clip_request(other) is other  # not a request: the parse error answers
    shallow = '{"jsonrpc": "2.0", "id": 1, "method": "m"}'
    assert clip_request(shallow) is shallow
