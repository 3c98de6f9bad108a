"""10,000 skills in one root (bench/gen_corpus.py): every valid skill is served over MCP,
or the client is told which are not and why. The biggest test of the suite:
about 30 s of CPU (writing the tree, then parsing and hashing it once)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client
from skill_client import ListSkillsRequest, list_skills, open_session, run, send_raw

from skillpack.mcp._pages import META_LEFT_OUT, PROBLEMS_URI
from skillpack.mcp._server import SkillServer

BENCH = Path(__file__).resolve().parents[2] / "bench"
SKILLS = 10_000


def _gen_corpus() -> Any:
    spec = importlib.util.spec_from_file_location("bench_gen_corpus", BENCH / "gen_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def big_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("ten-thousand") / "corpus"
    summary = _gen_corpus().generate(out, SKILLS, seed=26, per_root=SKILLS)
    (root,) = summary["roots"]
    return out / root, summary


async def _told(client: Client) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    first = await send_raw(client, ListSkillsRequest(params=types.PaginatedRequestParams()))
    entries = await list_skills(client)
    result = await client.read_resource(PROBLEMS_URI)
    (content,) = result.contents
    assert isinstance(content, types.TextResourceContents)
    return first, entries, json.loads(content.text)


@pytest.mark.timeout(900)
def test_at_ten_thousand_skills_every_valid_skill_is_served_or_the_client_is_told(
    big_root: tuple[Path, dict[str, Any]],
) -> None:
    root, summary = big_root
    logs: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification):
            logs.append(message.params.data)

    async def start(client: Client) -> dict[str, Any]:
        return await send_raw(client, ListSkillsRequest(params=types.PaginatedRequestParams()))

    # The default bound cuts the root short: the client hears it at once, with the fix.
    page = run(SkillServer(open_session(root)), start, on_message=on_message)
    assert page["_meta"][META_LEFT_OUT]["counts"]["truncated"] == 1
    truncated = [e for log in logs for e in log["leftOut"] if e["kind"] == "truncated"]
    assert truncated and truncated[0]["path"] == str(root)
    assert "--max-dirs" in truncated[0]["message"]

    # Raised as the message says: every valid skill is listed; the rest are named.
    server = SkillServer(open_session(root, max_dirs=100_000))
    first, entries, report = run(server, _told)
    assert first["_meta"][META_LEFT_OUT]["counts"] == {"invalid": summary["broken_total"]}
    uris = [e["uri"] for e in entries]
    assert len(uris) == len(set(uris)) == summary["expected_listed"] == report["served"]
    assert report["counts"] == {"invalid": summary["broken_total"]}
    assert all(e["message"] for e in report["leftOut"])
    assert len(uris) + len(report["leftOut"]) == SKILLS
