"""`skillpack.mcp`, the public helpers: a server opened in process, an in-memory client,
and the skills extension from the client side, typed."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server import Server
from skill_client import digest, read_bytes, skill_md, write

import skillpack.mcp
from skillpack import DiscoveryOptions, UsageError
from skillpack._errors import SkillIOError
from skillpack.mcp import (
    DirectoryEntry,
    ListedFile,
    connect,
    get_skill,
    has_skills_extension,
    list_skills,
    open_server,
    read_directory,
)

TREE: dict[str, str | bytes] = {
    "pdf-forms/SKILL.md": skill_md("pdf-forms", "Fill PDF forms. Use for PDFs."),
    "pdf-forms/references/fields.md": "# Fields\n",
    "charts/SKILL.md": skill_md("charts", "Draw charts. Use for plots."),
}


def test_the_namespace_is_exactly_all_sorted_and_loads_nothing_until_used() -> None:
    assert list(skillpack.mcp.__all__) == sorted(set(skillpack.mcp.__all__))
    assert dir(skillpack.mcp) == sorted(skillpack.mcp.__all__)
    for name in skillpack.mcp.__all__:
        assert getattr(skillpack.mcp, name) is not None, name
    code = "import sys, skillpack.mcp; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_open_server_and_connect_give_the_extension_typed(tmp_path: Path) -> None:
    root = write(tmp_path / "skills", TREE)

    async def main() -> dict[str, Any]:
        with open_server(
            roots=[str(root)], cwd=str(tmp_path), include_user=False, include_system=False
        ) as server:
            async with connect(server) as client:
                listed = await list_skills(client)
                pdf = next(s for s in listed if s.name == "pdf-forms")
                assert not isinstance(pdf.resources, str)
                return {
                    "declared": has_skills_extension(client),
                    "names": sorted(s.name for s in listed),
                    "pdf": pdf,
                    "digests_match": [
                        f.digest == digest(await read_bytes(client, f.uri)) for f in pdf.resources
                    ],
                    "got": await get_skill(client, pdf.uri),
                    "children": await read_directory(client, pdf.uri.removesuffix("/SKILL.md")),
                    "tools": [t.name for t in (await client.list_tools()).tools],
                }

    seen = anyio.run(main)
    assert seen["declared"] is True
    assert seen["names"] == ["charts", "pdf-forms"]
    pdf = seen["pdf"]
    assert pdf.description == "Fill PDF forms. Use for PDFs."
    assert pdf.uri == "skill://extra/pdf-forms/SKILL.md"
    assert [f.uri for f in pdf.resources] == [
        "skill://extra/pdf-forms/SKILL.md",
        "skill://extra/pdf-forms/references/fields.md",
    ]
    assert all(isinstance(f, ListedFile) and f.size is not None for f in pdf.resources)
    assert seen["digests_match"] == [True, True]
    assert seen["got"] == pdf
    assert seen["children"] == (
        DirectoryEntry(
            uri="skill://extra/pdf-forms/SKILL.md",
            name="SKILL.md",
            mime_type="text/markdown",
            size=len(TREE["pdf-forms/SKILL.md"]),
        ),
        DirectoryEntry(
            uri="skill://extra/pdf-forms/references",
            name="references",
            mime_type="inode/directory",
            size=None,
        ),
    )
    assert seen["tools"] == [
        "skill_search",
        "skill_load",
        "use_skill",
        "skill_read_file",
        "skill_note_paths",
    ]


def test_open_server_discovers_with_one_options_value(tmp_path: Path) -> None:
    root = write(tmp_path / "skills", {**TREE, "group/deep/SKILL.md": skill_md("deep")})
    options = DiscoveryOptions(
        extra_roots=[root], include_user=False, include_system=False, use_cache=False
    )

    async def listed(**kwargs: Any) -> list[str]:
        with open_server(cwd=str(tmp_path), **kwargs) as server:
            async with connect(server) as client:
                return sorted(s.name for s in await list_skills(client))

    assert anyio.run(lambda: listed(options=options)) == ["charts", "deep", "pdf-forms"]
    shallow = replace(options, max_depth=1)
    assert anyio.run(lambda: listed(options=shallow)) == ["charts", "pdf-forms"]
    # The keywords open_server keeps fill what the options leave at their defaults.
    assert anyio.run(
        lambda: listed(roots=[str(root)], options=replace(options, extra_roots=()))
    ) == ["charts", "deep", "pdf-forms"]


def test_open_server_refuses_a_keyword_that_differs_from_its_options(tmp_path: Path) -> None:
    options = DiscoveryOptions(extra_roots=[str(tmp_path / "a")], use_cache=False)
    with (
        pytest.raises(
            UsageError, match=r"open_server\(\) got extra_roots=.* options\.extra_roots="
        ),
        open_server(cwd=str(tmp_path), extra_roots=[str(tmp_path)], options=options),
    ):
        pass


def broken_server() -> Server[Any]:
    """A server whose skills-extension answers break the extension's shape."""
    server: Server[Any] = Server("broken")

    async def get(_ctx: Any, _params: Any) -> dict[str, Any]:
        return {"skill": {"uri": "skill://x/a/SKILL.md", "frontmatter": {"name": "a"}}}

    async def directory(_ctx: Any, _params: Any) -> dict[str, Any]:
        return {"resources": [], "nextCursor": "again"}

    from skillpack.mcp._client import UriParams

    server.add_request_handler("skills/get", UriParams, get)
    server.add_request_handler("resources/directory/read", UriParams, directory)
    return server  # declaring no extension


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: list_skills(c), "does not declare the MCP skills extension"),
        (lambda c: get_skill(c, "skill://x/a/SKILL.md"), "has no `resources` list"),
        (lambda c: read_directory(c, "skill://x/a"), "gave a cursor twice"),
    ],
)
def test_answers_that_break_the_extension_are_skill_io_errors(call: Any, message: str) -> None:
    async def main() -> str:
        from mcp import Client

        async with Client(broken_server(), mode="legacy") as client:
            with pytest.raises(SkillIOError) as caught:
                await call(client)
            return str(caught.value)

    assert message in anyio.run(main)
