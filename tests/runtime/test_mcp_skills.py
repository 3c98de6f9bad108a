"""skillpack as a host of MCP skills: two `skillpack mcp` servers (stdio subprocesses)
publish same-named skills; both are reachable by namespace, fetched only when used,
verified against their digests, and a tampered file is refused."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from skillpack._errors import SkillIOError
from skillpack.config._schema import McpServerConfig
from skillpack.runtime import _mcp_skills
from skillpack.runtime._mcp_skills import McpSkills, Published, _check_frontmatter
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools

SERVE = [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def skill_md(name: str, description: str, body: str, **fields: str) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


def server_entry(label: str, root: Path) -> str:
    args = [*SERVE[1:], "--root", str(root), "--no-user", "--no-system", "--cwd", str(root)]
    return (
        f"[[mcp_servers]]\nname = {json.dumps(label)}\ncommand = {json.dumps(SERVE[0])}\n"
        f"args = {json.dumps(args)}\ntimeout = 60\n"
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose config names two skillpack servers, each with a `report` skill,
    and whose own repo holds a local `local-only` skill and a local `shared` skill."""
    one = write(
        tmp_path / "one",
        {
            "report/SKILL.md": skill_md(
                "report",
                "Weekly report, from server one.",
                "One's steps.",
                **{"allowed-tools": "Bash"},
            ),
            "report/references/style.md": "one's style\n",
            "shared/SKILL.md": skill_md("shared", "Also local.", "From one."),
        },
    )
    two = write(
        tmp_path / "two",
        {"report/SKILL.md": skill_md("report", "Weekly report, from server two.", "Two's steps.")},
    )
    work = tmp_path / "work"
    write(
        work,
        {
            ".skillpack/config.toml": server_entry("one", one) + server_entry("two", two),
            ".agents/skills/shared/SKILL.md": skill_md("shared", "The local one.", "Local."),
        },
    )
    return work


@pytest.fixture
def session(project: Path) -> Any:
    with Session.open(cwd=str(project), include_user=False, include_system=False) as opened:
        yield opened


def test_same_named_skills_of_two_servers_are_both_reachable_by_namespace(
    session: Session,
) -> None:
    catalog = session.catalog
    mcp = sorted(s.qualified_name for s in catalog.skills if s.scope == "mcp")
    assert mcp == ["one:report", "one:shared", "two:report"]
    # Never silently: the tie is reported, and the local skill shadows the MCP one.
    codes = {(p.code, p.path.split("/")[-2]) for p in catalog.problems}
    assert ("name-ambiguous", "report") in codes
    assert ("name-shadowed", "shared") in codes
    tools = SkillTools(session)
    assert tools.call("skill_load", {"name": "report"})["error"]["code"] == "AMBIGUOUS"
    one = tools.call("skill_load", {"name": "one:report"})["data"]
    two = tools.call("skill_load", {"name": "two:report"})["data"]
    assert "One's steps." in one["content"] and "Two's steps." in two["content"]
    assert 'path="mcp://one/extra/report/SKILL.md"' in one["content"]  # origin shown
    local = tools.call("skill_load", {"name": "shared"})["data"]
    assert "Local." in local["content"]


# A host whose `sys.stderr` had no file descriptor when the SDK was first imported (a
# notebook's, a test runner's capture): the SDK binds its default `errlog` then.
STDERR_WITHOUT_FD = """
import io, json, sys
real, sys.stderr = sys.stderr, io.StringIO()
import mcp.client.stdio  # noqa: F401 - binds stdio_client's default errlog now
sys.stderr = real
from skillpack.runtime._session import Session
with Session.open(cwd=sys.argv[1], include_user=False, include_system=False) as session:
    skills = session.catalog.skills
    problems = [p.message for p in session.catalog.problems if p.code.startswith("mcp")]
    print(json.dumps([sorted(s.qualified_name for s in skills if s.scope == "mcp"), problems]))
"""


def test_servers_start_whatever_stderr_the_host_had_when_the_sdk_loaded(
    project: Path, tmp_path: Path
) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", STDERR_WITHOUT_FD, str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=True,
    )
    listed, problems = json.loads(done.stdout)
    assert problems == []
    assert listed == ["one:report", "one:shared", "two:report"]


def test_a_stdio_server_writes_its_stderr_to_a_real_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with _mcp_skills._child_stderr() as stream:
        assert stream is sys.__stderr__
    monkeypatch.setattr(sys, "__stderr__", None)
    with _mcp_skills._child_stderr() as stream:
        assert stream.fileno() >= 0 and stream.name == os.devnull


def test_files_are_fetched_when_read_and_the_allowed_tools_grant_is_dropped(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetched: list[str] = []
    real = _mcp_skills._read_resource

    async def counting(client: Any, uri: str) -> bytes:
        fetched.append(uri)
        return await real(client, uri)

    monkeypatch.setattr(_mcp_skills, "_read_resource", counting)
    (report,) = session.catalog.qualified("one:report")
    assert report.allowed_tools is None and report.frontmatter["allowed-tools"] == "Bash"
    assert fetched == []  # listing fetched nothing
    tools = SkillTools(session)
    assert tools.call("skill_search", {"query": "weekly report"})["ok"]
    assert fetched == []  # nor does search
    read = tools.call("skill_read_file", {"skill": "one:report", "path": "references/style.md"})
    assert read["data"]["content"] == "one's style\n"
    assert fetched == ["skill://extra/report/references/style.md"]
    tools.call("skill_read_file", {"skill": "one:report", "path": "references/style.md"})
    assert len(fetched) == 1  # cached by (server, uri, digest)
    missing = tools.call("skill_read_file", {"skill": "one:report", "path": "references/x.md"})
    assert missing["error"]["code"] == "NOT_FOUND"


def test_a_file_changed_after_the_listing_is_refused(session: Session, tmp_path: Path) -> None:
    style = tmp_path / "one" / "report" / "references" / "style.md"
    style.write_text("tampered style\n", encoding="utf-8")
    tools = SkillTools(session)
    refused = tools.call("skill_read_file", {"skill": "one:report", "path": "references/style.md"})
    assert refused["ok"] is False
    assert refused["error"]["code"] == "IO_ERROR"
    assert "do not match the size" in refused["error"]["message"]
    session.refresh()  # a new listing carries the new digest
    again = tools.call("skill_read_file", {"skill": "one:report", "path": "references/style.md"})
    assert again["data"]["content"] == "tampered style\n"


def test_a_served_frontmatter_unlike_the_listed_one_is_refused() -> None:
    listed = Published(
        server="one", uri="skill://x/a/SKILL.md", frontmatter={"name": "a", "on": True}, files={}
    )
    with pytest.raises(SkillIOError, match="differs from the one the server listed"):
        _check_frontmatter(b"---\nname: a\non: yes\n---\n", listed, "a")
    _check_frontmatter(b"---\nname: a\non: true\n---\n", listed, "a")


def test_a_server_that_cannot_start_is_a_problem_not_a_failure(tmp_path: Path) -> None:
    broken = McpServerConfig(name="gone", command=str(tmp_path / "no-such-program"), timeout=10)
    source = McpSkills([broken])
    try:
        catalog = source.catalog()
    finally:
        source.close()
    assert catalog.skills == ()
    assert [p.code for p in catalog.problems] == ["mcp-server-unavailable"]
    assert "gone" in catalog.problems[0].message


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        (
            {
                "uri": "skill://a/b/SKILL.md",
                "frontmatter": {"name": "b", "description": "d"},
                "resources": "dynamic",
            },
            "mcp-skill-unverifiable",
        ),
        (
            {
                "uri": "skill://a/b/SKILL.md",
                "frontmatter": {"name": "c", "description": "d"},
                "resources": [],
            },
            "mcp-skill-invalid",
        ),
        (
            {
                "uri": "skill://a/b/SKILL.md",
                "frontmatter": {"name": "b", "description": "d"},
                "resources": [],
            },
            "mcp-skill-invalid",
        ),
        (
            {
                "uri": "skill://a/b/SKILL.md",
                "frontmatter": {"name": "b", "description": "d"},
                "resources": [{"uri": "skill://a/b/SKILL.md", "digest": "sha256:00", "size": 1}],
            },
            "mcp-skill-invalid",
        ),
        (
            {
                "uri": "skill://a/b/SKILL.md",
                "frontmatter": {"name": "b", "description": "d"},
                "resources": [
                    {"uri": "skill://a/b/../../x", "digest": "sha256:" + "0" * 64, "size": 1}
                ],
            },
            "mcp-skill-invalid",
        ),
        (
            {"uri": "skill://a/b/README.md", "frontmatter": {"name": "b"}, "resources": []},
            "mcp-skill-invalid",
        ),
    ],
)
def test_entries_that_cannot_be_verified_are_left_out_with_a_problem(
    entry: dict[str, Any], code: str
) -> None:
    skill, published, problems = _mcp_skills._skill_of("srv", entry)
    assert skill is None and published is None
    assert [p.code for p in problems] == [code]


def test_skillpack_mcp_serves_the_skills_it_hosts_under_the_server_label(
    session: Session,
) -> None:
    """Skills read from an upstream server are served on, as `skill://mcp/<server>/...`,
    with the upstream's digests (their bytes fetched, verified, passed on)."""
    import hashlib
    from typing import Literal

    import anyio
    import mcp.types as types
    from mcp.client.client import Client
    from pydantic import RootModel

    from skillpack.mcp._server import SkillServer

    class Raw(RootModel[dict[str, Any]]):
        """The answer as sent: the SDK's `send_request` types a result as a model."""

    class UriParams(types.RequestParams):
        uri: str

    class GetSkill(types.Request[UriParams, Literal["skills/get"]]):
        method: Literal["skills/get"] = "skills/get"

    uri = "skill://mcp/one/extra/report/SKILL.md"

    async def scenario() -> tuple[dict[str, Any], str]:
        async with Client(SkillServer(session).server, mode="legacy") as client:
            entry = (
                await client.session.send_request(GetSkill(params=UriParams(uri=uri)), Raw)
            ).root
            (content,) = (await client.read_resource(uri)).contents
            assert isinstance(content, types.TextResourceContents)
            return entry, content.text

    entry, text = anyio.run(scenario)
    skill = entry["skill"]
    assert skill["uri"] == uri and skill["frontmatter"]["name"] == "report"
    own = next(r for r in skill["resources"] if r["uri"] == uri)
    assert own["digest"] == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert "One's steps." in text


class CutUpstream:
    """An in-memory upstream (`McpSkills(connect=...)`) publishing `plain`, whose first
    connection a flood cuts while a listing is in flight on it, as `soak.py` saw:
    the flood's read (of `notes.txt`) waits until that listing is sent, then closes
    the connection under both, and fails as an answer over the bound does once a
    second connection is open (so its failure comes last). Later connections answer
    every request."""

    def __init__(self) -> None:
        self.connections = 0
        skill = b"---\nname: plain\ndescription: A plain skill.\n---\nBody\n"
        self.entry = {
            "uri": "skill://plain/SKILL.md",
            "frontmatter": {"name": "plain", "description": "A plain skill."},
            "resources": [
                {
                    "uri": "skill://plain/SKILL.md",
                    "digest": "sha256:" + hashlib.sha256(skill).hexdigest(),
                    "size": len(skill),
                },
                {
                    "uri": "skill://plain/notes.txt",
                    "digest": "sha256:" + hashlib.sha256(b"hello").hexdigest(),
                    "size": 5,
                },
            ],
        }

    @asynccontextmanager
    async def connect(self, server: McpServerConfig) -> AsyncIterator[Any]:
        import anyio
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED

        upstream = self
        self.connections += 1
        cut = self.connections == 1
        listing_sent, closed = anyio.Event(), anyio.Event()
        listings = 0
        entry = self.entry

        class Session:
            async def send_request(self, request: Any, result_type: Any) -> dict[str, Any]:
                nonlocal listings
                listings += 1
                if cut and listings > 1:  # the refresh's listing, in flight when cut
                    listing_sent.set()
                    await closed.wait()
                    raise MCPError(code=CONNECTION_CLOSED, message="Connection closed")
                return {"skills": [entry]}

        class Client:
            server_capabilities = SimpleNamespace(extensions={_mcp_skills.SKILLS_EXTENSION: {}})
            session = Session()

            async def read_resource(self, uri: str) -> Any:
                if cut and uri.endswith("/notes.txt"):  # the flood
                    await listing_sent.wait()
                    closed.set()
                    with anyio.move_on_after(10):
                        while upstream.connections < 2:
                            await anyio.sleep(0.01)
                    raise ValueError("The server sent a message over 23 bytes")
                text = "hello" if uri.endswith("/notes.txt") else ""
                return SimpleNamespace(contents=[SimpleNamespace(uri=uri, text=text)])

        yield Client()


def test_an_upstream_keeps_its_skills_when_a_flood_cuts_the_connection_a_listing_is_on() -> None:
    """`soak.py` (serve-http): while one read's huge answer cut the upstream's
    connection, a refresh's listing was in flight on it; the listing failed with the
    connection, the upstream's skills left the catalog and requests for `plain` got
    "No skill named 'plain'" until the next refresh. The upstream was answering: its
    listing is asked again on a new connection, which the flood's own failure,
    coming later, leaves open."""
    upstream = CutUpstream()
    server = McpServerConfig(name="up", command="unused", timeout=30)
    source = McpSkills([server], connect=upstream.connect)
    try:
        (plain,) = source.catalog().skills
        flood: list[BaseException] = []

        def read_notes() -> None:
            try:
                source.read_file(plain, "notes.txt")
            except SkillIOError as exc:
                flood.append(exc)

        reader = threading.Thread(target=read_notes)
        reader.start()
        catalog = source.catalog()  # its listing waits for the flood, then is cut
        reader.join(timeout=30)
        assert [str(e) for e in flood] == [
            "MCP server 'up' (unused) failed: The server sent a message over 23 bytes."
        ]
        assert [s.qualified_name for s in catalog.skills] == ["up:plain"], catalog.problems
        assert catalog.problems == ()
        assert source.read_file(catalog.skills[0], "notes.txt") == "hello"
        assert upstream.connections == 2  # the read went over the listing's connection
    finally:
        source.close()
