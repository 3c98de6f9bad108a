"""Declared dependencies: env vars (cache, environment, host prompt; secrets stay in
memory), MCP servers (host, install callback), the permissions profile; loads go on."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import WriteSkill
from skillpack._errors import UsageError
from skillpack._model import CodexMetadata, CodexPermissions, Skill
from skillpack.config._schema import Config
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._deps import (
    EnvVarRequest,
    McpDependency,
    check_dependencies,
    declared_dependencies,
)
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools

SECRET = "s3cr3t-value-never-shown"

SIDE = (
    "dependencies:\n  tools:\n"
    "    - {type: env_var, value: API_TOKEN, description: Token for the API}\n"
    "    - {type: env_var, value: REGION}\n"
    "    - {type: mcp, value: github, transport: streamable_http, url: 'https://x.example/mcp'}\n"
    "    - {type: cli, value: gh, description: GitHub CLI}\n"
    "permissions:\n  network: {enabled: true}\n"
)


def skill_with(
    tools: list[dict[str, object]], permissions: CodexPermissions | None = None
) -> Skill:
    return Skill(
        name="deps",
        description="d",
        path="/s/deps/SKILL.md",
        dir="/s/deps",
        codex=CodexMetadata(tool_dependencies=tuple(tools), permissions=permissions),
    )


@pytest.fixture
def files() -> MemorySkills:
    return MemorySkills(
        {
            "/s/deps/SKILL.md": "---\nname: deps\ndescription: Needs things. Use in tests.\n"
            "---\nUse the API.\n",
            "/s/deps/agents/openai.yaml": SIDE,
            "/s/plain/SKILL.md": "---\nname: plain\ndescription: Needs nothing.\n---\nBody\n",
        }
    )


def session_for(files: MemorySkills, **kwargs: Any) -> Session:
    return Session(files.catalog(), reader=files, session_id="s1", **kwargs)


def test_declared_dependencies_are_sorted_by_type_and_deduplicated() -> None:
    skill = skill_with(
        [
            {"type": "env_var", "value": "A"},
            {"type": "env_var", "value": "A", "description": "again"},
            {"type": "mcp", "value": "srv", "command": "srv-mcp"},
            {"type": "cli", "value": "gh"},
            {"type": "env_var"},
            {"type": "env_var", "value": "not a name"},
            {"type": "mcp", "value": "  "},
        ]
    )
    declared = declared_dependencies(skill)
    assert [d.name for d in declared.env_vars] == ["A"]
    assert [(d.name, d.command) for d in declared.mcp_servers] == [("srv", "srv-mcp")]
    assert declared.other == ({"type": "cli", "value": "gh"},)
    assert len(declared.invalid) == 3
    assert "`not a name` is not an environment variable name" in declared.invalid[1]


@pytest.mark.parametrize(
    ("cached", "environment", "state", "source"),
    [
        (False, {}, "missing", None),
        (False, {"A": ""}, "missing", None),
        (False, {"A": "v"}, "present", "environment"),
        (True, {"A": "v"}, "present", "session"),
        (True, {}, "present", "session"),
    ],
)
def test_env_var_state_comes_from_the_cache_then_the_environment(
    cached: bool, environment: dict[str, str], state: str, source: str | None
) -> None:
    skill = skill_with([{"type": "env_var", "value": "A"}])
    report = check_dependencies(skill, cached=lambda _: cached, environment=environment)
    [dependency] = report.env_vars
    assert (dependency.state, dependency.source) == (state, source)


def test_mcp_state_names_where_the_server_came_from() -> None:
    skill = skill_with([{"type": "mcp", "value": n} for n in ("a", "b", "c", "d")])
    report = check_dependencies(
        skill,
        cached=lambda _: False,
        environment={},
        host_servers=["a"],
        config_servers=["b", "a"],
        installed_servers=["c"],
    )
    assert [(d.name, d.state, d.source) for d in report.mcp_servers] == [
        ("a", "present", "host"),
        ("b", "present", "config"),
        ("c", "present", "installed"),
        ("d", "missing", None),
    ]
    assert report.missing == ({"type": "mcp", "name": "d"},)


def test_a_missing_mcp_server_says_what_to_add() -> None:
    server = McpDependency(name="github", url="https://x.example/mcp")
    assert server.config_snippet() == (
        '[[mcp_servers]]\nname = "github"\nurl = "https://x.example/mcp"'
    )
    assert "MCP server 'github' (https://x.example/mcp) is not available" in server.hint()
    assert server.to_dict()["add"] == server.config_snippet()


def test_a_skill_with_missing_dependencies_still_loads_and_says_so(files: MemorySkills) -> None:
    session = session_for(files, env={}, mcp_servers=["other"])
    injection = session.load(name="deps", invoker="user")
    assert "Use the API." in injection.text
    assert injection.missing_dependencies == (
        {"type": "env_var", "name": "API_TOKEN"},
        {"type": "env_var", "name": "REGION"},
        {"type": "mcp", "name": "github"},
    )
    data = SkillTools(session).skill_load(name="deps")["data"]
    assert data["missing_dependencies"][0] == {"type": "env_var", "name": "API_TOKEN"}


def test_the_environment_and_the_hosts_servers_satisfy_dependencies(files: MemorySkills) -> None:
    session = session_for(files, env={"API_TOKEN": "t", "REGION": "eu"}, mcp_servers=["github"])
    report = session.declared.dependencies(session.find(name="deps"))
    assert report.satisfied
    assert session.load(name="deps").missing_dependencies == ()
    assert report.permissions == CodexPermissions(network=True)
    assert report.other == ({"type": "cli", "value": "gh", "description": "GitHub CLI"},)


def test_the_host_prompt_is_asked_once_and_the_answer_stays_in_memory(
    files: MemorySkills,
) -> None:
    asked: list[EnvVarRequest] = []

    def prompt(request: EnvVarRequest) -> str | None:
        asked.append(request)
        return SECRET if request.name == "API_TOKEN" else None

    session = session_for(files, env={}, env_prompt=prompt)
    skill = session.find(name="deps")
    first = session.load(name="deps")
    session.skills.forget(skill)
    second = session.load(name="deps")
    assert [(r.name, r.secret, r.description) for r in asked] == [
        ("API_TOKEN", True, "Token for the API"),
        ("REGION", True, None),
    ]  # REGION was declined: not asked again in this session
    assert (
        first.missing_dependencies
        == second.missing_dependencies
        == (
            {"type": "env_var", "name": "REGION"},
            {"type": "mcp", "name": "github"},
        )
    )
    [token, _] = session.declared.dependencies(skill).env_vars
    assert (token.state, token.source) == ("present", "session")
    assert session.declared.dependency_env(skill) == {"API_TOKEN": SECRET}


def test_a_secret_never_appears_in_any_output(
    tmp_path: Path,
    isolated_home: Path,
    write_skill: WriteSkill,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    write_skill("skills/deps", name="deps", files={"agents/openai.yaml": SIDE})
    session = Session.open(
        cwd=str(tmp_path),
        roots=[str(tmp_path / "skills")],
        include_user=False,
        include_system=False,
        env={},
        env_prompt=lambda request: SECRET,
    )
    tools = SkillTools(session)
    skill = session.find(name="deps")
    outputs = [
        json.dumps(tools.skill_load(name="deps")),
        json.dumps(tools.skill_search("deps")),
        json.dumps(session.inspect(include_skills=True)),
        json.dumps(session.declared.dependencies(skill).to_dict()),
        repr(session.declared.dependencies(skill)),
        repr(vars(session)),
        session.load(name="deps", args="again").text,
        json.dumps(tools.definitions_for("openai")),
        caplog.text,
    ]
    for output in outputs:
        assert SECRET not in output
    written = [p for base in (tmp_path, isolated_home) for p in base.rglob("*") if p.is_file()]
    assert written  # the index was written, the skill is on disk
    assert not any(SECRET.encode() in p.read_bytes() for p in written)
    assert (
        session.declared.dependency_env(skill)["API_TOKEN"] == SECRET
    )  # the host can still get it


def test_a_prompt_that_returns_a_non_string_is_refused_without_echoing_it(
    files: MemorySkills,
) -> None:
    session = session_for(files, env={}, env_prompt=lambda request: 12345)
    with pytest.raises(UsageError, match="returned a int for API_TOKEN") as raised:
        session.load(name="deps")
    assert "12345" not in str(raised.value)


def test_the_install_callback_may_add_a_missing_server(files: MemorySkills) -> None:
    offered: list[tuple[str, str | None]] = []

    def install(skill: Skill, server: McpDependency) -> bool:
        offered.append((server.name, server.url))
        return True

    session = session_for(files, env={"API_TOKEN": "t", "REGION": "r"}, mcp_install=install)
    assert session.load(name="deps").missing_dependencies == ()
    assert offered == [("github", "https://x.example/mcp")]
    [server] = session.declared.dependencies(session.find(name="deps")).mcp_servers
    assert (server.state, server.source) == ("present", "installed")


def test_a_declined_install_leaves_the_server_missing(files: MemorySkills) -> None:
    session = session_for(
        files, env={"API_TOKEN": "t", "REGION": "r"}, mcp_install=lambda skill, server: False
    )
    assert session.load(name="deps").missing_dependencies == ({"type": "mcp", "name": "github"},)


def test_a_declined_install_is_not_offered_again_in_the_session(files: MemorySkills) -> None:
    # (remember for the session) as a declined variable is.
    offered: list[str] = []

    def decline(skill: Skill, server: McpDependency) -> bool:
        offered.append(server.name)
        return False

    session = session_for(files, env={"API_TOKEN": "t", "REGION": "r"}, mcp_install=decline)
    for _ in range(3):
        session.skills.forget(session.find(name="deps"))
        assert session.load(name="deps").missing_dependencies == (
            {"type": "mcp", "name": "github"},
        )
    assert offered == ["github"]
    again = session_for(files, env={"API_TOKEN": "t", "REGION": "r"}, mcp_install=decline)
    again.load(name="deps")
    assert offered == ["github", "github"]  # a new session asks again


def test_a_skill_without_a_sidecar_has_an_empty_report(files: MemorySkills) -> None:
    session = session_for(files)
    report = session.declared.dependencies(session.find(name="plain"))
    assert report.satisfied and report.permissions is None
    assert report.to_dict()["env_vars"] == [] and report.to_dict()["missing"] == []


def test_prompts_from_several_threads_ask_once(files: MemorySkills) -> None:
    calls: list[str] = []
    gate = threading.Event()

    def prompt(request: EnvVarRequest) -> str:
        calls.append(request.name)
        gate.wait(1)
        return "value"

    session = session_for(files, env={}, env_prompt=prompt)
    skill = session.find(name="deps")
    threads = [
        threading.Thread(target=session.declared.resolve_dependencies, args=(skill,))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join()
    assert sorted(calls) == ["API_TOKEN", "REGION"]


def test_the_configs_mcp_servers_count_as_present(files: MemorySkills) -> None:
    config = Config(mcp_servers=({"name": "github", "url": "https://x.example/mcp"},))
    session = session_for(files, env={"API_TOKEN": "t", "REGION": "r"}, config=config)
    [server] = session.declared.dependencies(session.find(name="deps")).mcp_servers
    assert (server.state, server.source) == ("present", "config")


def test_leading_skills_offer_their_permission_profiles(files: MemorySkills) -> None:
    session = session_for(files, env={})
    assert session.declared.requested_permissions() == {}
    session.prepare_turn("$deps go")
    assert session.declared.requested_permissions() == {
        "extra:deps": CodexPermissions(network=True)
    }
    session.prepare_turn("$plain next")
    assert session.declared.requested_permissions() == {}
