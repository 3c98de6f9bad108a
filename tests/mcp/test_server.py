"""`skillpack mcp` driven in memory by the official SDK client: tools, resources, prompts,
the skills extension, errors, and list_changed notifications."""

from __future__ import annotations

import inspect
import json
import threading
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from skill_client import (
    AnyRequest,
    LooseParams,
    all_resources,
    digest,
    get_skill,
    list_skills,
    open_session,
    read_bytes,
    read_directory,
    run,
    send_raw,
    skill_md,
    write,
)

from skillpack import _errors
from skillpack.mcp import _pages, _server
from skillpack.mcp._errors import INTERNAL_ERROR, INVALID_PARAMS, JSONRPC_CODES, to_mcp_error
from skillpack.mcp._server import SkillServer
from skillpack.runtime._noted import note_paths_definition
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools, ToolCallError, error_code_for

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"
TREE: dict[str, str | bytes] = {
    "alpha/SKILL.md": skill_md("alpha", enabled="yes", released="2024-01-02", code="017"),
    "alpha/references/guide.md": "# Guide\n",
    "alpha/assets/logo.png": PNG,
    "alpha/notes-crlf.md": "line one\r\nline two\r\n",
    "alpha/.secret": "hidden\n",
    "alpha/node_modules/pkg/index.js": "x\n",
    "beta/SKILL.md": (
        "---\nname: beta\ndescription: Greets someone. Use in tests.\n"
        "arguments: [who, what]\nargument-hint: <who> <what>\n---\n"
        "Hello $who about $what.\n"
    ),
    "outer/SKILL.md": skill_md("outer"),
    "outer/tools/ocr/SKILL.md": skill_md("ocr"),
    "outer/tools/ocr/run.py": "print('ocr')\n",
    "outer/tools/secretive/SKILL.md": skill_md("secretive"),
    "outer/tools/secretive/data.txt": "withheld\n",
    "gone/SKILL.md": skill_md("gone"),
    "only-user/SKILL.md": skill_md("only-user", **{"disable-model-invocation": "true"}),
    "Bad_Name/SKILL.md": skill_md("Bad_Name"),
}
CONFIG = '[skills]\ndisabled = ["gone"]\n[permissions]\ndeny = ["secretive"]\n'
SERVED_FILES = {
    "skill://extra/alpha/SKILL.md",
    "skill://extra/alpha/notes-crlf.md",
    "skill://extra/alpha/assets/logo.png",
    "skill://extra/alpha/references/guide.md",
    "skill://extra/beta/SKILL.md",
    "skill://extra/outer/SKILL.md",
    "skill://extra/outer/tools/ocr/SKILL.md",
    "skill://extra/outer/tools/ocr/run.py",
    "skill://extra/Bad_Name/SKILL.md",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write(tmp_path, {".skillpack/config.toml": CONFIG})
    return write(tmp_path / "skills", TREE)


@pytest.fixture
def server(tree: Path) -> SkillServer:
    return SkillServer(open_session(tree), cwd=str(tree))


def on_disk(tree: Path, uri: str) -> bytes:
    return (tree / uri.removeprefix("skill://extra/")).read_bytes()


async def error_of(call: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_initialize_declares_the_skills_extension_with_directory_read(
    server: SkillServer, mode: Any
) -> None:
    async def scenario(client: Client) -> None:
        capabilities = client.server_capabilities
        assert capabilities.extensions == {
            "io.modelcontextprotocol/skills": {"directoryRead": True}
        }
        assert capabilities.resources is not None and capabilities.prompts is not None
        if mode == "legacy":
            assert capabilities.tools is not None and capabilities.tools.list_changed is True
            assert capabilities.resources.list_changed is True

    run(server, scenario, mode=mode)


def test_tools_are_the_library_definitions_annotated_read_only(
    server: SkillServer, tree: Path
) -> None:
    async def scenario(client: Client) -> list[types.Tool]:
        return (await client.list_tools()).tools

    tools = run(server, scenario)
    library = [*SkillTools(open_session(tree)).definitions_for("mcp"), note_paths_definition()]
    assert [t.name for t in tools] == [d["name"] for d in library]
    assert [t.input_schema for t in tools] == [d["inputSchema"] for d in library]
    for tool in tools:
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is False


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("skill_search", {"query": "greets someone"}),
        ("skill_load", {"name": "alpha"}),
        ("skill_load", {"name": "nope"}),
        ("use_skill", {"skill": "beta", "args": "ann tea"}),
        ("skill_read_file", {"skill": "alpha", "path": "references/guide.md"}),
        ("skill_read_file", {"skill": "alpha", "path": "../beta/SKILL.md"}),
        ("skill_search", {"query": 3}),
        ("no_such_tool", {}),
    ],
)
def test_tool_calls_return_the_library_envelope(
    server: SkillServer, tree: Path, name: str, arguments: dict[str, Any]
) -> None:
    async def scenario(client: Client) -> types.CallToolResult:
        return await client.call_tool(name, arguments)

    result = run(server, scenario)
    expected = SkillTools(open_session(tree)).call(name, arguments)
    if name == "skill_search" and expected["ok"]:
        for hit in expected["data"]["results"]:
            hit.pop("score")
        for hit in (result.structured_content or {})["data"]["results"]:
            hit.pop("score")
    assert result.structured_content == expected
    assert result.is_error is (not expected["ok"])


def test_every_served_file_is_a_resource_once_with_the_bytes_on_disk(
    server: SkillServer, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_server, "PAGE_RESOURCES", 2)

    async def scenario(client: Client) -> tuple[list[types.Resource], dict[str, bytes]]:
        resources = await all_resources(client)
        return resources, {str(r.uri): await read_bytes(client, str(r.uri)) for r in resources}

    resources, contents = run(server, scenario)
    assert str(resources[0].uri) == _pages.PROBLEMS_URI  # first, and once
    resources = resources[1:]
    uris = [str(r.uri) for r in resources]
    assert sorted(uris) == sorted(SERVED_FILES)  # once each; hidden, noise, withheld out
    for resource in resources:
        data = contents[str(resource.uri)]
        assert data == on_disk(tree, str(resource.uri))
        assert resource.size == len(data)
    alpha = next(r for r in resources if str(r.uri) == "skill://extra/alpha/SKILL.md")
    assert (alpha.name, alpha.mime_type) == ("alpha", "text/markdown")
    assert alpha.description == "A skill. Use it in tests."


def test_binary_files_are_blobs_and_text_is_served_unchanged(server: SkillServer) -> None:
    async def scenario(client: Client) -> list[Any]:
        logo = await client.read_resource("skill://extra/alpha/assets/logo.png")
        crlf = await client.read_resource("skill://extra/alpha/notes-crlf.md")
        return [logo.contents[0], crlf.contents[0]]

    logo, crlf = run(server, scenario)
    assert isinstance(logo, types.BlobResourceContents) and logo.mime_type == "image/png"
    assert isinstance(crlf, types.TextResourceContents)
    assert crlf.text == "line one\r\nline two\r\n"


def test_skills_list_pages_whole_entries_whose_digests_match_the_reads(
    server: SkillServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pages, "FIRST_PAGE_SKILLS", 1)
    monkeypatch.setattr(_pages, "PAGE_SKILLS", 2)

    async def scenario(client: Client) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
        entries = await list_skills(client)
        reads = {}
        for entry in entries:
            for resource in entry["resources"]:
                reads[resource["uri"]] = await read_bytes(client, resource["uri"])
        return entries, reads

    entries, reads = run(server, scenario)
    by_name = {e["frontmatter"]["name"]: e for e in entries}
    assert sorted(by_name) == ["alpha", "beta", "ocr", "outer"]
    for entry in entries:
        assert entry["uri"].endswith(f"/{entry['frontmatter']['name']}/SKILL.md")
        assert entry["resources"][0]["uri"] == entry["uri"]
        for resource in entry["resources"]:
            assert resource["size"] == len(reads[resource["uri"]])
            assert resource["digest"] == digest(reads[resource["uri"]])
    # Frontmatter as YAML 1.2 reads it, every field the author wrote.
    assert by_name["alpha"]["frontmatter"] == {
        "name": "alpha",
        "description": "A skill. Use it in tests.",
        "enabled": "yes",
        "released": "2024-01-02",
        "code": 17,
    }
    # The enclosing skill lists its nested skill's files; a withheld nested skill's
    # files are absent.
    outer = {r["uri"] for r in by_name["outer"]["resources"]}
    assert outer == {
        "skill://extra/outer/SKILL.md",
        "skill://extra/outer/tools/ocr/SKILL.md",
        "skill://extra/outer/tools/ocr/run.py",
    }


def test_skills_get_answers_for_any_served_skill_and_refuses_others(server: SkillServer) -> None:
    async def scenario(client: Client) -> tuple[dict[str, Any], list[MCPError]]:
        got = await get_skill(client, "skill://extra/outer/tools/ocr/SKILL.md")
        failures = [
            await error_of(get_skill(client, uri))
            for uri in (
                "skill://extra/nope/SKILL.md",
                "skill://extra/Bad_Name/SKILL.md",
                "skill://extra/alpha/references/guide.md",
                "skill://extra/outer/tools/secretive/SKILL.md",
                "https://example.com/SKILL.md",
            )
        ]
        return got, failures

    got, failures = run(server, scenario)
    assert got["skill"]["frontmatter"]["name"] == "ocr"
    assert got["cacheScope"] == "private" and got["ttlMs"] == 0
    assert [f.code for f in failures] == [INVALID_PARAMS] * 5
    assert "naming rule" in failures[1].message


def test_directory_read_lists_direct_children(server: SkillServer) -> None:
    async def scenario(client: Client) -> tuple[list[list[dict[str, Any]]], MCPError, MCPError]:
        listings = [
            await read_directory(client, uri)
            for uri in (
                "skill://extra/alpha",
                "skill://extra/alpha/references",
                "skill://extra/outer/tools",
                "skill://extra",
            )
        ]
        not_dir = await error_of(read_directory(client, "skill://extra/alpha/SKILL.md"))
        missing = await error_of(read_directory(client, "skill://extra/alpha/nope"))
        return listings, not_dir, missing

    (root, references, tools, namespace), not_dir, missing = run(server, scenario)
    assert [(c["name"], c["mimeType"]) for c in root] == [
        ("SKILL.md", "text/markdown"),
        ("assets", "inode/directory"),
        ("notes-crlf.md", "text/markdown"),
        ("references", "inode/directory"),
    ]
    assert [c["uri"] for c in references] == ["skill://extra/alpha/references/guide.md"]
    assert [c["uri"] for c in tools] == ["skill://extra/outer/tools/ocr"]
    assert [c["name"] for c in namespace] == ["Bad_Name", "alpha", "beta", "outer"]
    assert not_dir.code == missing.code == INVALID_PARAMS


def test_prompts_are_user_invocable_skills_with_arguments_applied(server: SkillServer) -> None:
    async def scenario(client: Client) -> Any:
        prompts = (await client.list_prompts()).prompts
        beta = await client.get_prompt("beta", {"who": "Ann", "what": "the plan"})
        only_user = await client.get_prompt("only-user", {"arguments": "x y"})
        unknown = await error_of(client.get_prompt("nope", {}))
        bad_arg = await error_of(client.get_prompt("beta", {"whom": "x"}))
        return prompts, beta, only_user, unknown, bad_arg

    prompts, beta, only_user, unknown, bad_arg = run(server, scenario)
    by_name = {p.name: p for p in prompts}
    assert sorted(by_name) == ["Bad_Name", "alpha", "beta", "ocr", "only-user", "outer"]
    assert [a.name for a in by_name["beta"].arguments or []] == ["who", "what"]
    assert [a.name for a in by_name["alpha"].arguments or []] == ["arguments"]
    assert "Hello Ann about the plan." in beta.messages[0].content.text
    assert 'name="only-user"' in only_user.messages[0].content.text
    assert "ARGUMENTS: x y" in only_user.messages[0].content.text
    assert unknown.code == bad_arg.code == INVALID_PARAMS


def test_denied_and_disabled_skills_are_absent_everywhere(server: SkillServer) -> None:
    hidden = ("secretive", "gone")

    async def scenario(client: Client) -> Any:
        entries = await list_skills(client)
        resources = await all_resources(client)
        prompts = (await client.list_prompts()).prompts
        searches = [await client.call_tool("skill_search", {"query": n}) for n in hidden]
        loads = [await client.call_tool("skill_load", {"name": n}) for n in hidden]
        reads = [
            await error_of(client.read_resource(uri))
            for uri in (
                "skill://extra/outer/tools/secretive/SKILL.md",
                "skill://extra/outer/tools/secretive/data.txt",
                "skill://extra/gone/SKILL.md",
            )
        ]
        return entries, resources, prompts, searches, loads, reads

    entries, resources, prompts, searches, loads, reads = run(server, scenario)
    text = repr((entries, resources, prompts))
    assert not any(name in text for name in hidden)
    for search in searches:
        assert all(r["name"] not in hidden for r in search.structured_content["data"]["results"])
    assert [load.structured_content["error"]["code"] for load in loads] == [
        "NOT_FOUND",
        "DISABLED",
    ]
    assert [r.code for r in reads] == [INVALID_PARAMS] * 3


@pytest.mark.parametrize(
    "uri",
    [
        "skill://extra/alpha/../beta/SKILL.md",
        "skill://extra/alpha/%2e%2e/beta/SKILL.md",
        "skill://extra/alpha/%252e%252e/%252e%252e/etc/passwd",
        "skill://extra/alpha/references%2F..%2F..%2Fbeta/SKILL.md",
        "skill://extra/alpha/..%5C..%5Cbeta/SKILL.md",
        "skill:///etc/passwd",
        "skill://extra//alpha/SKILL.md",
        "file:///etc/passwd",
        "/etc/passwd",
        "skill://extra/alpha/.secret",
        "skill://extra/alpha/node_modules/pkg/index.js",
        "skill://extra/alpha/SKILL.md?x=1",
        "skill://extra/alpha/" + "a/" * 3000 + "SKILL.md",
        "skill://extra/alpha/%ff%fe",
        "skill://extra/alpha",
    ],
)
def test_bad_uris_get_json_rpc_errors_and_the_server_keeps_serving(
    server: SkillServer, uri: str
) -> None:
    async def scenario(client: Client) -> tuple[MCPError, bytes]:
        failure = await error_of(client.read_resource(uri))
        return failure, await read_bytes(client, "skill://extra/alpha/references/guide.md")

    failure, still = run(server, scenario)
    assert failure.code == INVALID_PARAMS
    assert still == b"# Guide\n"


def test_unknown_methods_and_malformed_params_get_errors(server: SkillServer) -> None:
    async def scenario(client: Client) -> list[int]:
        codes = []
        for method, params in (
            ("skills/nope", {}),
            ("skills/get", {}),
            ("skills/get", {"uri": 7}),
            ("skills/list", {"cursor": "not-a-cursor"}),
            ("resources/directory/read", {"uri": "skill://extra/alpha", "cursor": "e30="}),
        ):
            request = AnyRequest(method=method, params=LooseParams(**params))
            codes.append((await error_of(send_raw(client, request))).code)
        await list_skills(client)  # still serving
        return codes

    assert run(server, scenario) == [-32601] + [INVALID_PARAMS] * 4


def test_a_file_that_vanishes_after_listing_fails_only_its_read(
    server: SkillServer, tree: Path
) -> None:
    async def scenario(client: Client) -> tuple[MCPError, bytes]:
        entries = await list_skills(client)
        assert any(
            r["uri"].endswith("references/guide.md") for e in entries for r in e["resources"]
        )
        (tree / "alpha" / "references" / "guide.md").unlink()
        failure = await error_of(client.read_resource("skill://extra/alpha/references/guide.md"))
        return failure, await read_bytes(client, "skill://extra/beta/SKILL.md")

    failure, other = run(server, scenario)
    assert failure.code == INVALID_PARAMS
    assert other.startswith(b"---\nname: beta")


def test_digests_follow_a_file_that_changed_in_place(server: SkillServer, tree: Path) -> None:
    guide = tree / "alpha" / "references" / "guide.md"

    async def scenario(client: Client) -> tuple[str, str, bytes]:
        before = await get_skill(client, "skill://extra/alpha/SKILL.md")
        guide.write_bytes(b"# Gyde\n")  # same size
        after = await get_skill(client, "skill://extra/alpha/SKILL.md")

        def guide_digest(entry: dict[str, Any]) -> str:
            found: str = next(
                r["digest"] for r in entry["skill"]["resources"] if r["uri"].endswith("guide.md")
            )
            return found

        data = await read_bytes(client, "skill://extra/alpha/references/guide.md")
        return guide_digest(before), guide_digest(after), data

    before, after, data = run(server, scenario)
    assert before != after == digest(data)


def test_a_catalog_change_sends_list_changed_notifications(tree: Path) -> None:
    session = open_session(tree)
    server = SkillServer(session)
    received: list[str] = []

    async def on_message(message: Any) -> None:
        if type(message).__name__ != "LoggingMessageNotification":  # what is left out
            received.append(type(message).__name__)

    async def scenario(client: Client) -> list[str]:
        import anyio

        await client.list_tools()
        write(tree, {"delta/SKILL.md": skill_md("delta")})
        refresher = threading.Thread(target=session.refresh)  # as a watcher thread would
        refresher.start()
        refresher.join()
        with anyio.fail_after(5):
            while len(received) < 3:
                await anyio.sleep(0.01)
        return [str(r.uri) for r in await all_resources(client)]

    uris = run(server, scenario, on_message=on_message)
    assert sorted(received) == [
        "PromptListChangedNotification",
        "ResourceListChangedNotification",
        "ToolListChangedNotification",
    ]
    assert "skill://extra/delta/SKILL.md" in uris


def test_each_connection_is_its_own_conversation(server: SkillServer) -> None:
    async def load(client: Client) -> list[bool]:
        first = await client.call_tool("skill_load", {"name": "alpha"})
        second = await client.call_tool("skill_load", {"name": "alpha"})
        return [r.structured_content["data"]["already_loaded"] for r in (first, second)]

    assert run(server, load) == [False, True]
    assert run(server, load) == [False, True]  # a new client starts afresh


def test_every_public_exception_maps_to_a_json_rpc_error() -> None:
    public = [
        cls
        for _, cls in inspect.getmembers(_errors, inspect.isclass)
        if issubclass(cls, _errors.SkillpackError)
    ]
    assert {cls.code for cls in public} <= set(_errors.ERROR_CODES)
    for cls in [*public, ToolCallError]:
        exc = cls("INVALID_PARAM", "x") if cls is ToolCallError else cls("boom")
        error = to_mcp_error(exc)
        assert isinstance(error, MCPError)
        assert error.code == JSONRPC_CODES[error_code_for(exc)]
        assert error.code in (INVALID_PARAMS, INTERNAL_ERROR)
        assert error.data["code"] == error_code_for(exc)
    assert set(JSONRPC_CODES) == set(_errors.ERROR_CODES)


def test_a_session_whose_reader_cannot_give_bytes_is_refused(tree: Path) -> None:
    class TextOnly:
        def read_body(self, skill: Any) -> str:
            return ""

        def version(self, skill: Any) -> tuple[int, int]:
            return (0, 0)

        def list_files(self, skill: Any) -> tuple[tuple[str, ...], bool]:
            return (), False

        def read_file(self, skill: Any, relpath: str) -> str:
            return ""

    session = Session(open_session(tree).catalog, reader=TextOnly())
    with pytest.raises(_errors.UsageError, match="manifest"):
        SkillServer(session)


def test_a_listing_is_rebuilt_exactly_when_its_tree_changes(
    server: SkillServer, tree: Path
) -> None:
    view = server.view()
    alpha = next(s for s in view.skills if s.name == "alpha")
    first = view.listing(alpha)
    assert view.listing(alpha) is first  # same walk, same manifest: the kept entry

    (tree / "alpha" / "references" / "extra.md").write_text("# More\n")
    added = view.listing(alpha)
    assert added is not first and added.entry is not None
    uris = [r["uri"] for r in added.entry["resources"]]
    assert "skill://extra/alpha/references/extra.md" in uris
    assert added.size == len(json.dumps(added.entry))

    skill_file = tree / "alpha" / "SKILL.md"
    skill_file.write_text(skill_file.read_text().replace("enabled: yes", "enabled: no"))
    edited = view.listing(alpha)
    assert edited.entry is not None and edited.entry["frontmatter"]["enabled"] == "no"
