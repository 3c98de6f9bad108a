"""The same answer from every surface: one test body per scenario over a surface matrix.

Each scenario runs through the library (`Session.open` + `SkillTools`), the command
line (`skillpack ... --json`), the app server's typed `rpc.Client` over stdio and over
HTTP, and an MCP client of `skillpack mcp` (the SDK's client, in memory), and must give
the same outcome and the same error code (the model: the MCP SDK's
`tests/interaction/`). One server per transport serves the whole module.

The project: a `[[mcp_servers]]` entry (another `skillpack mcp`, publishing `report`),
`[skills] enabled = ["demo"]` and `[permissions] deny = ["secret"]` in the project
config, two `twin` skills of equal precedence, and a file beside the skills.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import HOME_UNSET, home_env
from skillpack.cli._app import cli
from skillpack.rpc import Client, RpcError
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools
from skillpack.runtime._workspace import write_enabled

MCP_SERVE = [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]
SURFACES = ("library", "cli", "rpc-stdio", "rpc-http", "mcp")
NOT_THERE = object()
"""A surface without the operation (the CLI has no read-file command, MCP no toggle)."""


def _skill(folder: Path, name: str, description: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def parity_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("parity-home")


@pytest.fixture(autouse=True)
def isolated_home(parity_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The module's one home (its servers live across tests), set in this process too."""
    for key, value in home_env(parity_home).items():
        monkeypatch.setenv(key, value)
    for key in HOME_UNSET:
        monkeypatch.delenv(key, raising=False)
    return parity_home


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("parity")
    remote = base / "remote"
    _skill(remote / "report", "report", "Weekly report, from the remote server.", "Report steps.")
    (remote / "report" / "template.md").write_text("remote template\n", encoding="utf-8")
    work = base / "work"
    (work / ".git").mkdir(parents=True)
    skills = work / ".agents" / "skills"
    _skill(skills / "alpha", "alpha", "Alpha helps with alpha work.", "Alpha steps.")
    _skill(skills / "demo", "demo", "Demo of enable state.", "Demo steps.")
    _skill(skills / "secret", "secret", "A skill a rule denies.", "Secret steps.")
    _skill(skills / "a" / "twin", "twin", "First twin.", "One.")
    _skill(skills / "b" / "twin", "twin", "Second twin.", "Two.")
    (work / "outside.txt").write_text("not a skill's file\n", encoding="utf-8")
    args = [*MCP_SERVE[1:], "--root", str(remote), "--no-user", "--no-system", "--cwd"]
    args.append(str(remote))
    config = (
        '[skills]\nenabled = ["demo"]\n\n[permissions]\ndeny = ["secret"]\n\n'
        f'[[mcp_servers]]\nname = "remote"\ncommand = {json.dumps(MCP_SERVE[0])}\n'
        f"args = {json.dumps(args)}\ntimeout = 60\n"
    )
    (work / ".skillpack").mkdir()
    (work / ".skillpack" / "config.toml").write_text(config, encoding="utf-8")
    return work


# -- the surfaces ----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """What a surface answered, in one shape: ok with a text, or an error code."""

    ok: bool
    code: str | None = None
    text: str = ""


def _envelope(result: dict[str, Any]) -> Outcome:
    if result["ok"]:
        return Outcome(ok=True, text=json.dumps(result["data"]))
    return Outcome(ok=False, code=result["error"]["code"])


class Surface:
    """One way in: each operation answers an `Outcome` (or `NOT_THERE`)."""

    def load(self, name: str) -> Outcome | object:
        raise NotImplementedError

    def read_file(self, skill: str, path: str) -> Outcome | object:
        raise NotImplementedError

    def search(self, query: str) -> Outcome | object:
        raise NotImplementedError

    def suggest(self, text: str) -> list[dict[str, Any]] | object:
        """The suggestions a user turn of `text` gets (`Suggestion.to_dict` each)."""
        raise NotImplementedError

    def disable_for_user(self, ref: str) -> tuple[bool, str | None] | object:
        """Disable `ref` in the user config: (the resulting state, the deciding file)."""
        raise NotImplementedError

    def listed_enabled(self, name: str) -> bool:
        raise NotImplementedError


class Library(Surface):
    def __init__(self, session: Session) -> None:
        self.session = session
        self.tools = SkillTools(session.conversation())

    def load(self, name: str) -> Outcome:
        return _envelope(self.tools.call("skill_load", {"name": name}))

    def read_file(self, skill: str, path: str) -> Outcome:
        return _envelope(self.tools.call("skill_read_file", {"skill": skill, "path": path}))

    def search(self, query: str) -> Outcome:
        return _envelope(self.tools.call("skill_search", {"query": query}))

    def suggest(self, text: str) -> list[dict[str, Any]]:
        turn = self.session.conversation().prepare_turn(text)
        return [suggestion.to_dict() for suggestion in turn.suggestions]

    def disable_for_user(self, ref: str) -> tuple[bool, str | None]:
        toggled = write_enabled(
            self.session.catalog, ref, False, scope="user", cwd=str(self.session.cwd)
        )
        return toggled.enabled, None if toggled.decided_by is None else str(toggled.decided_by)

    def listed_enabled(self, name: str) -> bool:
        self.session.refresh()
        (skill,) = self.session.catalog.winners(name)
        return self.session.skills.is_enabled(skill)


class Cli(Surface):
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def run(self, *args: str) -> tuple[int, Any]:
        result = CliRunner().invoke(cli, [*args, "--cwd", str(self.cwd), "--no-system", "--json"])
        return result.exit_code, json.loads(result.stdout)

    def outcome(self, *args: str) -> Outcome:
        code, data = self.run(*args)
        if code == 0:
            return Outcome(ok=True, text=json.dumps(data))
        return Outcome(ok=False, code=data["error"]["code"])

    def load(self, name: str) -> Outcome:
        loaded = self.outcome("load", name)
        if loaded.ok:  # show reads through the same reader (it also shows denied skills)
            shown = self.outcome("show", name)
            assert shown.ok, shown
        return loaded

    def read_file(self, skill: str, path: str) -> object:
        return NOT_THERE

    def search(self, query: str) -> Outcome:
        return self.outcome("search", query)

    def suggest(self, text: str) -> list[dict[str, Any]]:
        code, data = self.run("resolve", text)
        assert code == 0, data
        return list(data["suggestions"])

    def disable_for_user(self, ref: str) -> tuple[bool, str | None]:
        code, data = self.run("disable", ref)
        state = data if code == 0 else data["error"]
        return state["enabled"], state["decided_by"]

    def listed_enabled(self, name: str) -> bool:
        _code, data = self.run("list")
        (entry,) = [s for s in data["skills"] if s["name"] == name]
        return bool(entry["enabled"])


class Rpc(Surface):
    def __init__(self, client: Client) -> None:
        self.client = client
        self.session = client.session_open()["session"]

    def load(self, name: str) -> Outcome:
        outcome = _envelope(dict(self.client.skills_load(name=name)))
        in_session = _envelope(dict(self.client.skills_load(name=name, session=self.session)))
        assert (outcome.ok, outcome.code) == (in_session.ok, in_session.code)
        return outcome

    def read_file(self, skill: str, path: str) -> Outcome:
        return _envelope(dict(self.client.skills_read_file(skill, path)))

    def search(self, query: str) -> Outcome:
        return _envelope(dict(self.client.skills_search(query)))

    def suggest(self, text: str) -> list[dict[str, Any]]:
        return [dict(s) for s in self.client.turn_prepare(self.session, text)["suggestions"]]

    def disable_for_user(self, ref: str) -> tuple[bool, str | None]:
        written = self.client.skills_config_write(ref, enabled=False, target="user")
        # The open session follows the resulting state too.
        turn = self.client.turn_prepare(self.session, f"${ref} now")
        activated = [a["name"] for a in turn["activations"]]
        assert (ref in activated) is written["enabled"], turn
        return written["enabled"], written["decided_by"]

    def listed_enabled(self, name: str) -> bool:
        (workspace,) = self.client.skills_list()["data"]
        (entry,) = [s for s in workspace["skills"] if s["name"] == name]
        return bool(entry["enabled"])


class Mcp(Surface):
    def __init__(self, session: Session) -> None:
        from skillpack.mcp._server import SkillServer

        self.server = SkillServer(session)

    def call(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        import anyio
        from mcp import Client as McpClient

        async def main() -> Any:
            async with McpClient(self.server.server, mode="legacy") as client:
                return await client.call_tool(tool, arguments)

        result = anyio.run(main)
        envelope = result.structured_content
        assert envelope is not None, result
        assert result.is_error is (not envelope["ok"])
        return _envelope(envelope)

    def load(self, name: str) -> Outcome:
        return self.call("skill_load", {"name": name})

    def read_file(self, skill: str, path: str) -> Outcome:
        return self.call("skill_read_file", {"skill": skill, "path": path})

    def search(self, query: str) -> Outcome:
        return self.call("skill_search", {"query": query})

    def suggest(self, text: str) -> object:
        return NOT_THERE  # MCP has no turn: the host's model searches with skill_search

    def disable_for_user(self, ref: str) -> object:
        return NOT_THERE

    def listed_enabled(self, name: str) -> bool:
        return name in {s.name for s in self.server.session.skills.model_skills()}


def _open_live(project: Path, home: Path) -> Iterator[Session]:
    """A live session as a host opens it, in the module's home (servers outlive tests)."""
    saved = dict(os.environ)
    os.environ.update(home_env(home))
    try:
        with Session.open(cwd=str(project), include_system=False) as session:
            yield session
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="module")
def live_session(project: Path, parity_home: Path) -> Iterator[Session]:
    yield from _open_live(project, parity_home)


@pytest.fixture(scope="module")
def rpc_clients(project: Path, parity_home: Path) -> Iterator[dict[str, Client]]:
    env = {**os.environ, **home_env(parity_home)}
    args = ("--cwd", str(project), "--no-system")
    with (
        Client.stdio(*args, env=env, timeout=60) as stdio,
        Client.spawn_http(*args, env=env, timeout=60) as http,
    ):
        yield {"rpc-stdio": stdio, "rpc-http": http}


@pytest.fixture(scope="module")
def mcp_session(project: Path, parity_home: Path) -> Iterator[Session]:
    pytest.importorskip("mcp", reason="the MCP surface needs the mcp extra")
    yield from _open_live(project, parity_home)


@pytest.fixture(params=SURFACES)
def surface(request: pytest.FixtureRequest, project: Path) -> Surface:
    name: str = request.param
    if name == "library":
        return Library(request.getfixturevalue("live_session"))
    if name == "cli":
        return Cli(project)
    if name == "mcp":
        return Mcp(request.getfixturevalue("mcp_session"))
    client = request.getfixturevalue("rpc_clients")[name]
    try:
        return Rpc(client)
    except RpcError as exc:  # pragma: no cover - a server that cannot open a session
        pytest.fail(f"{name}: session.open failed: {exc}")


def answer(result: Outcome | object) -> Outcome:
    if result is NOT_THERE:
        pytest.skip("this surface has no such operation")
    assert isinstance(result, Outcome)
    return result


# -- the scenarios -------------------------------------------------------------------


def test_a_skill_of_an_mcp_server_loads(surface: Surface) -> None:
    loaded = answer(surface.load("remote:report"))
    assert loaded.ok, loaded
    assert "Report steps." in loaded.text


NO_SINGLE_SKILL = pytest.mark.parametrize(
    ("name", "code"),
    [
        ("no-such-skill", "NOT_FOUND"),
        ("remote:no-such-skill", "NOT_FOUND"),
        ("twin", "AMBIGUOUS"),
        ("secret", "NOT_FOUND"),
    ],
    ids=["missing", "missing-qualified", "ambiguous", "denied"],
)


@NO_SINGLE_SKILL
def test_a_name_that_names_no_single_visible_skill(surface: Surface, name: str, code: str) -> None:
    refused = answer(surface.load(name))
    assert (refused.ok, refused.code) == (False, code)


def test_a_file_is_read_by_the_qualified_name_of_its_skill(surface: Surface) -> None:
    read = answer(surface.read_file("remote:report", "template.md"))
    assert read.ok, read
    assert "remote template" in read.text


@NO_SINGLE_SKILL
def test_a_read_from_a_name_that_names_no_single_visible_skill(
    surface: Surface, name: str, code: str
) -> None:
    refused = answer(surface.read_file(name, "SKILL.md"))
    assert (refused.ok, refused.code) == (False, code)


def test_a_read_outside_the_skill_is_refused(surface: Surface) -> None:
    refused = answer(surface.read_file("alpha", "../../../outside.txt"))
    assert (refused.ok, refused.code) == (False, "PERMISSION_DENIED")


def test_an_over_long_query_is_an_invalid_param(surface: Surface) -> None:
    refused = answer(surface.search("word " * 1000))
    assert (refused.ok, refused.code) == (False, "INVALID_PARAM")
    found = answer(surface.search("alpha work"))
    assert found.ok, found


def test_a_turn_gets_the_same_suggestions_and_a_no_fit_one_none(
    surface: Surface, request: pytest.FixtureRequest
) -> None:
    text = "help me with the alpha work for this week"
    suggested = surface.suggest(text)
    if suggested is NOT_THERE:
        pytest.skip("this surface has no turn")
    assert isinstance(suggested, list)
    assert [s["id"] for s in suggested] == ["alpha"]
    assert suggested == Library(request.getfixturevalue("live_session")).suggest(text)
    assert surface.suggest("which port does ssh use by default") == []


def test_a_toggle_decided_elsewhere_keeps_the_resulting_state(
    surface: Surface, project: Path
) -> None:
    toggled = surface.disable_for_user("demo")
    if toggled is NOT_THERE:
        pytest.skip("this surface has no toggle")
    assert toggled == (True, str(project / ".skillpack" / "config.toml"))
    assert surface.listed_enabled("demo") is True
