"""Model-facing tools: envelopes, every error code, path escapes, permissions, fork, cycles."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from skillpack import _errors as errors
from skillpack._limits import NAME_ENUM_MAX
from skillpack._model import Catalog, Root, Skill
from skillpack.config._schema import Config
from skillpack.discovery._discover import discover
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools, error_code_for
from skillpack.select._rules import PermissionRules


def skill_md(name: str, body: str = "Body.\n", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: Does {name}. Use when testing.\n{extra}---\n{body}"


def memory_tools(files: dict[str, str], **session_kwargs: Any) -> tuple[SkillTools, MemorySkills]:
    memory = MemorySkills(files)
    session = Session(memory.catalog(), reader=memory, session_id="s", **session_kwargs)
    return SkillTools(session), memory


BASIC = {
    "/a/pdf/SKILL.md": skill_md("pdf", "Use ${SKILL_DIR}/references/x.md for $ARGUMENTS.\n"),
    "/a/pdf/references/x.md": "reference text\n",
    "/a/user-only/SKILL.md": skill_md("user-only", extra="disable-model-invocation: true\n"),
    "/a/one/dup/SKILL.md": skill_md("dup"),
    "/a/two/dup/SKILL.md": skill_md("dup"),
}


def test_every_public_exception_carries_an_error_code() -> None:
    public = [
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type) and issubclass(obj, errors.SkillpackError)
    ]
    for cls in public:
        assert cls.code in errors.ERROR_CODES, cls


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        pytest.param("skill_load", {}, "INVALID_PARAM", id="load-needs-name-or-path"),
        pytest.param("skill_load", {"name": 5}, "INVALID_PARAM", id="load-name-not-string"),
        pytest.param("skill_load", {"name": "nope"}, "NOT_FOUND", id="load-unknown"),
        pytest.param("skill_load", {"name": "dup"}, "AMBIGUOUS", id="load-ambiguous"),
        pytest.param(
            "skill_load", {"name": "user-only"}, "DISABLED", id="load-not-model-invocable"
        ),
        pytest.param("skill_load", {"path": "/a/none/SKILL.md"}, "NOT_FOUND", id="load-bad-path"),
        pytest.param("use_skill", {}, "INVALID_PARAM", id="use-needs-skill"),
        pytest.param("use_skill", {"skill": "  "}, "INVALID_PARAM", id="use-blank-skill"),
        pytest.param("skill_read_file", {"skill": "pdf"}, "INVALID_PARAM", id="read-needs-path"),
        pytest.param(
            "skill_read_file",
            {"skill": "pdf", "path": "../one/dup/SKILL.md"},
            "PERMISSION_DENIED",
            id="read-dotdot",
        ),
        pytest.param(
            "skill_read_file",
            {"skill": "pdf", "path": "/etc/passwd"},
            "PERMISSION_DENIED",
            id="read-absolute",
        ),
        pytest.param(
            "skill_read_file",
            {"skill": "pdf", "path": "references/none.md"},
            "NOT_FOUND",
            id="read-missing",
        ),
        pytest.param("skill_search", {"query": "pdf", "limit": 0}, "INVALID_PARAM", id="limit-0"),
        pytest.param("skill_search", {"query": "pdf", "limit": 51}, "INVALID_PARAM", id="limit-51"),
        pytest.param(
            "skill_search", {"query": "pdf", "limit": "3"}, "INVALID_PARAM", id="limit-str"
        ),
        pytest.param(
            "skill_search", {"query": "pdf", "scope": "galaxy"}, "INVALID_PARAM", id="bad-scope"
        ),
        pytest.param("skill_search", {"query": ""}, "INVALID_PARAM", id="empty-query"),
        pytest.param("no_such_tool", {}, "INVALID_PARAM", id="unknown-tool"),
    ],
)
def test_error_envelopes(tool: str, arguments: dict[str, Any], code: str) -> None:
    tools, _ = memory_tools(BASIC)
    result = tools.call(tool, arguments)
    assert result["ok"] is False, result
    assert result["error"]["code"] == code, result
    assert result["error"]["message"]


def test_ambiguous_error_lists_candidates() -> None:
    tools, _ = memory_tools(BASIC)
    result = tools.skill_load(name="dup")
    assert sorted(result["error"]["candidates"]) == ["/a/one/dup/SKILL.md", "/a/two/dup/SKILL.md"]


def test_load_by_path_wins_over_name_and_substitutes_args() -> None:
    tools, _ = memory_tools(BASIC)
    result = tools.skill_load(name="nope", path="/a/pdf/SKILL.md", args="invoice.pdf")
    assert result["ok"], result
    data = result["data"]
    assert data["name"] == "pdf"
    assert "Use /a/pdf/references/x.md for invoice.pdf." in data["content"]
    assert data["already_loaded"] is False
    assert tools.skill_load(path="/a/pdf/SKILL.md")["data"]["already_loaded"] is True


def test_disabled_skill_is_a_disabled_error() -> None:
    tools, _ = memory_tools(BASIC, config=Config(disabled=("pdf",)))
    assert tools.skill_load(name="pdf")["error"]["code"] == "DISABLED"


def test_read_file_returns_bundled_file() -> None:
    tools, _ = memory_tools(BASIC)
    result = tools.skill_read_file("pdf", "references/x.md")
    assert result == {
        "ok": True,
        "data": {"skill": "pdf", "path": "references/x.md", "content": "reference text\n"},
    }


@pytest.mark.parametrize(
    ("rules", "answer", "expected"),
    [
        # A denied skill is absent (design rules: safety): the model cannot even learn it exists.
        pytest.param(
            PermissionRules(deny=("pdf",), allow=("pdf",)), None, "NOT_FOUND", id="deny-beats-allow"
        ),
        pytest.param(PermissionRules(deny=("p*",)), None, "NOT_FOUND", id="deny-glob"),
        pytest.param(PermissionRules(allow=("pdf",), ask=("*",)), None, None, id="allow-beats-ask"),
        pytest.param(
            PermissionRules(ask=("pdf",)),
            None,
            "PERMISSION_DENIED",
            id="ask-without-callback-refused",
        ),
        pytest.param(PermissionRules(ask=("pdf",)), "deny", "PERMISSION_DENIED", id="ask-deny"),
        pytest.param(PermissionRules(ask=("pdf",)), "allow", None, id="ask-allow"),
        pytest.param(PermissionRules(ask=("p?f",)), "always", None, id="ask-always"),
    ],
)
def test_permission_combinations(
    rules: PermissionRules, answer: str | None, expected: str | None
) -> None:
    ask = (lambda skill, action: answer) if answer else None
    tools, _ = memory_tools(BASIC, config=Config(permissions=rules), ask=ask)
    result = tools.skill_load(name="pdf")
    if expected is None:
        assert result["ok"], result
    else:
        assert result["error"]["code"] == expected


def test_denied_skill_is_absent_from_definitions_enum() -> None:
    tools, _ = memory_tools(BASIC, config=Config(permissions=PermissionRules(deny=("pdf",))))
    [_, load, _, _] = tools.definitions()
    # Two skills share the name `dup` in one root: only their paths pick one.
    assert load.parameters["properties"]["name"]["enum"] == [
        "/a/one/dup/SKILL.md",
        "/a/two/dup/SKILL.md",
        None,
    ]


def test_ask_always_is_asked_once() -> None:
    asked: list[str] = []

    def ask(skill: Skill, action: str) -> str:
        asked.append(action)
        return "always"

    tools, _ = memory_tools(
        BASIC, config=Config(permissions=PermissionRules(ask=("pdf",))), ask=ask
    )
    assert tools.skill_load(name="pdf")["ok"]
    assert tools.skill_read_file("pdf", "references/x.md")["ok"]
    assert tools.use_skill("pdf")["ok"]
    assert asked == ["load"]


class FakeRunner:
    def __init__(self, tools_ref: list[SkillTools], nested: str | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.tools_ref = tools_ref
        self.nested = nested
        self.nested_result: dict[str, Any] | None = None

    def run(self, *, skill: Skill, prompt: str, agent: str | None, model: str | None) -> Any:
        self.calls.append({"skill": skill.name, "prompt": prompt, "agent": agent, "model": model})
        if self.nested:
            self.nested_result = self.tools_ref[0].use_skill(self.nested)
        return {"task_id": "t-1", "status": "done"}


FORK = {
    "/f/research/SKILL.md": skill_md(
        "research", "Research $ARGUMENTS deeply.\n", extra="context: fork\nagent: Explore\n"
    ),
    "/f/review/SKILL.md": skill_md("review", "Review, then use $research.\n"),
}


def test_fork_hands_the_rendered_body_to_the_runner() -> None:
    memory = MemorySkills(FORK)
    holder: list[SkillTools] = []
    runner = FakeRunner(holder)
    tools = SkillTools(Session(memory.catalog(), reader=memory), runner=runner)
    holder.append(tools)
    result = tools.use_skill("research", "the auth module")
    assert result["ok"], result
    assert result["data"]["result"] == {"task_id": "t-1", "status": "done"}
    assert result["data"]["context"] == "fork"
    assert runner.calls == [
        {
            "skill": "research",
            "prompt": "Research the auth module deeply.",
            "agent": "Explore",
            "model": None,
        }
    ]


def test_fork_runner_failure_is_an_execution_error() -> None:
    class Broken:
        def run(self, **kwargs: Any) -> Any:
            raise RuntimeError("subagent crashed")

    memory = MemorySkills(FORK)
    tools = SkillTools(Session(memory.catalog(), reader=memory), runner=Broken())
    result = tools.use_skill("research")
    assert result["error"]["code"] == "EXECUTION_ERROR"
    assert "subagent crashed" in result["error"]["message"]


def test_a_skill_invoking_itself_through_a_fork_is_a_cycle() -> None:
    memory = MemorySkills(FORK)
    holder: list[SkillTools] = []
    runner = FakeRunner(holder, nested="research")
    tools = SkillTools(Session(memory.catalog(), reader=memory), runner=runner)
    holder.append(tools)
    assert tools.use_skill("research")["ok"]
    assert runner.nested_result is not None
    assert runner.nested_result["error"]["code"] == "INVALID_PARAM"
    assert "research -> research" in runner.nested_result["error"]["message"]


def test_inline_use_is_no_call_stack_a_skill_may_be_used_again_in_the_turn() -> None:
    memory = MemorySkills({**FORK, "/f/notes/SKILL.md": skill_md("notes")})
    tools = SkillTools(Session(memory.catalog(), reader=memory))
    assert tools.use_skill("review")["ok"]
    assert tools.use_skill("notes")["ok"]
    again = tools.use_skill("review")
    assert again["ok"], again
    assert again["data"]["already_loaded"] is True


def test_a_fork_skill_without_a_runner_is_an_error_never_an_inline_injection() -> None:
    memory = MemorySkills(FORK)
    tools = SkillTools(Session(memory.catalog(), reader=memory))
    result = tools.use_skill("research", "the auth module")
    assert result["error"]["code"] == "EXECUTION_ERROR"
    assert result["error"]["message"] == (
        "Skill 'research' runs in a subagent (context: fork), but no subagent runner is "
        "available here, so it was not run. Its instructions were not loaded inline."
    )
    assert tools.session.inspect()["loaded"] == [] and tools.session.leading == ()


def test_internal_errors_never_escape() -> None:
    class Exploding(MemorySkills):
        def read_body(self, skill: Skill) -> str:
            raise ZeroDivisionError("boom")

    memory = Exploding(BASIC)
    tools = SkillTools(Session(memory.catalog(), reader=memory))
    result = tools.skill_load(name="pdf")
    assert result["error"]["code"] == "INTERNAL_ERROR"
    assert error_code_for(errors.SkillIOError("x")) == "IO_ERROR"


@pytest.mark.parametrize("fmt", ["openai", "openai-responses", "anthropic", "mcp"])
def test_definitions_export_each_format(fmt: str) -> None:
    tools, _ = memory_tools(BASIC)
    definitions = tools.definitions_for(fmt)  # type: ignore[arg-type]
    names = [d.get("name") or d["function"]["name"] for d in definitions]
    assert names == ["skill_search", "skill_load", "use_skill", "skill_read_file"]
    schema_key = {
        "openai": None,
        "openai-responses": "parameters",
        "anthropic": "input_schema",
        "mcp": "inputSchema",
    }[fmt]
    first = definitions[1]
    schema = first["function"]["parameters"] if schema_key is None else first[schema_key]
    # user-only skills are not offered to the model; the enum holds an id per skill
    ids = ["/a/one/dup/SKILL.md", "/a/two/dup/SKILL.md", "pdf"]
    # `name` is optional: null (its absence) is in the enum of every format.
    assert schema["properties"]["name"]["enum"] == [*ids, None]
    assert schema["properties"]["name"]["type"] == ["string", "null"]
    if fmt.startswith("openai"):
        assert (first.get("strict") or first["function"]["strict"]) is True
        assert schema["required"] == ["name", "path", "args"]
    else:
        assert schema["required"] == []


@pytest.mark.parametrize(("count", "listed"), [(NAME_ENUM_MAX, True), (NAME_ENUM_MAX + 1, False)])
def test_name_enum_is_dropped_when_the_list_is_large(count: int, listed: bool) -> None:
    files = {f"/m/s{i:03d}/SKILL.md": skill_md(f"s{i:03d}") for i in range(count)}
    tools, _ = memory_tools(files)
    name = tools.definitions()[1].parameters["properties"]["name"]
    assert ("enum" in name) is listed
    if listed:
        assert name["enum"] == [*(f"s{i:03d}" for i in range(count)), None]


# -- filesystem path escapes --------------------------------------------------------


@pytest.fixture
def disk_tools(tmp_path: Path) -> SkillTools:
    root = tmp_path / "skills"
    skill = root / "pdf"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(skill_md("pdf"), encoding="utf-8")
    (skill / "references" / "ok.md").write_text("fine\n", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n", encoding="utf-8")
    os.symlink(secret, skill / "references" / "link.md")
    os.symlink(tmp_path, skill / "escape-dir")
    catalog = discover(roots=[Root(path=str(root), scope="extra")], use_cache=False)
    return SkillTools(Session(catalog))


@pytest.mark.parametrize(
    "relpath",
    [
        "../../secret.txt",
        "references/../../../secret.txt",
        "%2e%2e/%2e%2e/secret.txt",
        "..%2F..%2Fsecret.txt",
        "references/link.md",
        "escape-dir/secret.txt",
        "/etc/passwd",
        "..\\..\\secret.txt",
        "references/ok.md\x00.txt",
    ],
)
def test_path_escape_attempts_are_refused(disk_tools: SkillTools, relpath: str) -> None:
    result = disk_tools.skill_read_file("pdf", relpath)
    assert result["ok"] is False
    assert result["error"]["code"] in {"PERMISSION_DENIED", "INVALID_PARAM"}
    assert "top secret" not in str(result)


def test_bundled_file_reads_from_disk(disk_tools: SkillTools) -> None:
    assert disk_tools.skill_read_file("pdf", "references/ok.md")["data"]["content"] == "fine\n"


def test_a_failing_freshness_check_is_an_envelope_never_an_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = Session(Catalog())
    tools = SkillTools(session)

    def broken() -> None:
        raise RuntimeError("disk went away")

    monkeypatch.setattr(session._parts.live, "ensure_fresh", broken)
    result = tools.call("skill_search", {"query": "anything"})
    assert result["ok"] is False
    assert result["error"]["code"] == "INTERNAL_ERROR"


@pytest.mark.parametrize("fmt", ["openai", "openai-responses", "anthropic", "mcp"])
def test_the_catalog_joins_skill_load_s_description_only_when_asked(fmt: Any) -> None:
    tools, _ = memory_tools(BASIC)

    def descriptions(**options: Any) -> dict[str, str]:
        found = {}
        for definition in tools.definitions_for(fmt, **options):
            function = definition.get("function", definition)
            found[function["name"]] = function["description"]
        return found

    plain, listed = descriptions(), descriptions(catalog=True, catalog_chars=4_000)
    rendered = tools.session.render_catalog(
        format="markdown", budget_chars=4_000, include_location=False
    ).text
    assert listed["skill_load"] == f"{plain['skill_load']}\n\n{rendered}"
    assert "**pdf**" in rendered and "user-only" not in rendered
    assert {k: v for k, v in listed.items() if k != "skill_load"} == {
        k: v for k, v in plain.items() if k != "skill_load"
    }
    assert descriptions(catalog=True, catalog_chars=0) == plain
