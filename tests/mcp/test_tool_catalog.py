"""The catalog every MCP-connected model sees: skill names and descriptions in
`skill_load`'s description (budgeted, visibly cut), optionally in the server's
`instructions`, and a `tools/list_changed` when it changes; driven by the official
SDK client, in memory and through `skillpack mcp` as a subprocess."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from skill_client import open_session, run, skill_md, write

from conftest import REAL_SKILLS
from skillpack._errors import UsageError
from skillpack.mcp._pages import INSTRUCTIONS
from skillpack.mcp._server import SkillServer
from skillpack.render._formats import deferred_text
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools

PDF = "Fill and merge PDF forms. Use when the user hands you a PDF to fill."
MCP_BUILD = "Build an MCP server in Python with the official SDK. Use for new MCP servers."


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write(tmp_path, {".skillpack/config.toml": '[skills]\ndisabled = ["off"]\n'})
    return write(
        tmp_path / "skills",
        {
            "pdf-forms/SKILL.md": skill_md("pdf-forms", PDF),
            "mcp-builder/SKILL.md": skill_md("mcp-builder", MCP_BUILD),
            "off/SKILL.md": skill_md("off", "Disabled in the config. Never listed."),
            "hidden/SKILL.md": skill_md(
                "hidden", "Only for people.", **{"disable-model-invocation": "true"}
            ),
        },
    )


def load_description(server: SkillServer) -> str:
    async def scenario(client: Client) -> str:
        tools = (await client.list_tools()).tools
        return next(t.description or "" for t in tools if t.name == "skill_load")

    return run(server, scenario)


def bare_description(tree: Path) -> str:
    (tool,) = [d for d in SkillTools(open_session(tree)).definitions() if d.name == "skill_load"]
    return tool.description


def test_skill_load_lists_the_model_s_skills_with_their_descriptions(tree: Path) -> None:
    server = SkillServer(open_session(tree), cwd=str(tree))
    description = load_description(server)
    bare = bare_description(tree)
    assert description.startswith(bare + "\n\n")
    assert f"- **mcp-builder**: {MCP_BUILD}" in description
    assert f"- **pdf-forms**: {PDF}" in description
    assert "**off**" not in description and "**hidden**" not in description
    # The project's one catalog renderer wrote it, not a second one.
    rendered = server.session.render_catalog(format="markdown", include_location=False)
    assert description == f"{bare}\n\n{rendered.text}"
    assert not rendered.report.truncated


def test_past_its_budget_the_list_is_cut_and_says_so(tree: Path) -> None:
    session = open_session(tree)
    full = session.render_catalog(format="markdown", include_location=False).text
    budget = len(full) - 40
    description = load_description(SkillServer(session, catalog_chars=budget))
    listed = description.removeprefix(bare_description(tree) + "\n\n")
    assert len(listed) <= budget
    assert "[truncated:" in listed and "skill_search" in listed
    # Too small for the usage note: what fits (here no entry) and the notice.
    small = load_description(SkillServer(open_session(tree), catalog_chars=120))
    listed = small.removeprefix(bare_description(tree) + "\n\n")
    assert 0 < len(listed) <= 120 and "[truncated:" in listed


def test_a_zero_budget_lists_nothing(tree: Path) -> None:
    server = SkillServer(open_session(tree), catalog_chars=0)
    assert load_description(server) == bare_description(tree)


def test_a_new_skill_reaches_the_description_after_tools_list_changed(tree: Path) -> None:
    session = open_session(tree)
    server = SkillServer(session)
    received: list[str] = []

    async def on_message(message: Any) -> None:
        received.append(type(message).__name__)

    async def scenario(client: Client) -> tuple[str, str]:
        before = await client.list_tools()
        write(tree, {"delta/SKILL.md": skill_md("delta", "Plot deltas. Use for charts.")})
        refresher = threading.Thread(target=session.refresh)  # as the watcher would
        refresher.start()
        refresher.join()
        with anyio.fail_after(5):
            while "ToolListChangedNotification" not in received:
                await anyio.sleep(0.01)
        after = await client.list_tools()
        (old,) = [t.description or "" for t in before.tools if t.name == "skill_load"]
        (new,) = [t.description or "" for t in after.tools if t.name == "skill_load"]
        return old, new

    old, new = run(server, scenario, on_message=on_message)
    assert "**delta**" not in old
    assert "- **delta**: Plot deltas. Use for charts." in new


def test_instructions_carry_the_catalog_only_when_asked(tree: Path) -> None:
    async def instructions(client: Client) -> str | None:
        return client.instructions

    assert run(SkillServer(open_session(tree)), instructions) == INSTRUCTIONS
    session = open_session(tree)
    server = SkillServer(session, catalog_instructions=True, catalog_chars=4000)
    text = run(server, instructions)
    assert text is not None and text.startswith(INSTRUCTIONS + "\n\n")
    assert f"- **pdf-forms**: {PDF}" in text
    # A client that connects after a change gets the catalog as it is then.
    write(tree, {"delta/SKILL.md": skill_md("delta", "Plot deltas. Use for charts.")})
    session.refresh()
    assert "**delta**" in (run(server, instructions) or "")


def test_the_command_line_options_reach_a_stdio_client(tree: Path) -> None:
    serve = [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]
    common = ["--root", str(tree), "--no-user", "--no-system", "--no-cache", "--cwd", str(tree)]

    async def connect(*options: str) -> tuple[str | None, str]:
        params = StdioServerParameters(
            command=serve[0], args=[*serve[1:], *common, *options], env=dict(os.environ)
        )
        async with Client(params, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            load = next(t.description or "" for t in tools if t.name == "skill_load")
            return client.instructions, load

    async def main() -> list[tuple[str | None, str]]:
        return [
            await connect(),
            await connect("--catalog-chars", "0", "--catalog-instructions"),
            await connect("--catalog-mode", "deferred", "--catalog-instructions"),
        ]

    (plain_instructions, listed), (instructions, bare), (stub_note, stub) = anyio.run(main)
    assert plain_instructions == INSTRUCTIONS
    assert f"- **mcp-builder**: {MCP_BUILD}" in listed
    assert bare == bare_description(tree)
    assert instructions == INSTRUCTIONS  # a zero budget lists nothing there either
    deferred = deferred_text("markdown", 2)
    assert stub == f"{bare_description(tree)}\n\n{deferred}"
    assert stub_note == f"{INSTRUCTIONS}\n\n{deferred}"


def test_the_host_chooses_the_catalog_mode_of_skill_load(tree: Path) -> None:
    bare = bare_description(tree)
    deferred = load_description(SkillServer(open_session(tree), catalog_mode="deferred"))
    assert deferred == f"{bare}\n\n{deferred_text('markdown', 2)}"
    full = load_description(SkillServer(open_session(tree), catalog_mode="full"))
    assert f"- **pdf-forms**: {PDF}" in full


def test_a_skill_the_config_disables_leaves_the_description_after_list_changed(
    tree: Path,
) -> None:
    session = open_session(tree)
    server = SkillServer(session)
    received: list[str] = []

    async def on_message(message: Any) -> None:
        received.append(type(message).__name__)

    async def scenario(client: Client) -> str:
        await client.list_tools()
        config = tree.parent / ".skillpack" / "config.toml"
        config.write_text('[skills]\ndisabled = ["off", "pdf-forms"]\n', encoding="utf-8")
        refresher = threading.Thread(target=session.refresh)
        refresher.start()
        refresher.join()
        with anyio.fail_after(5):
            while "ToolListChangedNotification" not in received:
                await anyio.sleep(0.01)
        tools = (await client.list_tools()).tools
        return next(t.description or "" for t in tools if t.name == "skill_load")

    description = run(server, scenario, on_message=on_message)
    assert "**pdf-forms**" not in description
    assert "**mcp-builder**" in description


def test_a_budget_that_is_no_number_of_characters_is_refused_before_serving(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageError, match="must be 0 or more characters"):
        SkillServer(open_session(tree), catalog_chars=-1)
    monkeypatch.setenv("SKILLS_PROMPT_CHAR_BUDGET", "lots")
    with pytest.raises(UsageError, match="SKILLS_PROMPT_CHAR_BUDGET='lots'"):
        SkillServer(open_session(tree))


@pytest.mark.corpus
def test_on_the_real_corpus_skill_load_names_every_skill_as_the_one_allocator_does(
    tmp_path: Path,
) -> None:
    session = Session.open(
        cwd=str(tmp_path), roots=[str(REAL_SKILLS)], include_user=False, use_cache=False
    )
    expected = session.render_catalog(format="markdown", include_location=False)
    (bare,) = [d for d in SkillTools(session).definitions() if d.name == "skill_load"]
    description = load_description(SkillServer(session))
    assert description == f"{bare.description}\n\n{expected.text}"
    report = expected.report
    assert report.shown == report.total == len(session.skills.model_skills())
    assert report.omitted == ()
    # Descriptions are cut evenly, not given to the first skills by the alphabet.
    assert report.description_chars is not None
    assert len(report.shortened) > 100
