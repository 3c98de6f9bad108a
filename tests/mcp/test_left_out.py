"""Nothing is left out silently: what `skillpack mcp` does not serve reaches the client
(a log message, `_meta` of `skills/list`, the problems resource), with the catalog
version a host re-lists by, and `skillpack mcp --check` prints the same."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from click.testing import CliRunner
from mcp import Client
from skill_client import (
    ListSkillsRequest,
    list_skills,
    open_session,
    run,
    send_raw,
    skill_md,
    write,
)

from conftest import REAL_SKILLS
from skillpack.cli._app import cli
from skillpack.index._digests import FrontmatterStore
from skillpack.mcp._pages import (
    META_LEFT_OUT,
    META_VERSION,
    PROBLEMS_URI,
    Pages,
    left_out_news,
)
from skillpack.mcp._served import FrontmatterCache, build_served
from skillpack.mcp._server import SkillServer
from skillpack.runtime._session import Session

TREE: dict[str, str | bytes] = {
    "alpha/SKILL.md": skill_md("alpha"),
    "alpha/references/guide.md": "# Guide\n",
    "beta/SKILL.md": skill_md("beta"),
    "broken/SKILL.md": "# no frontmatter here\n",
    "only-user/SKILL.md": skill_md("only-user", **{"disable-model-invocation": "true"}),
    "Bad_Name/SKILL.md": skill_md("Bad_Name"),
    "gone/SKILL.md": skill_md("gone"),
    "secretive/SKILL.md": skill_md("secretive"),
}
CONFIG = '[skills]\ndisabled = ["gone"]\n[permissions]\ndeny = ["secretive"]\n'
LEFT_OUT = {
    "broken": ("invalid", "frontmatter-missing"),
    "only-user": ("prompt-only", "prompt-only"),
    "Bad_Name": ("not-listable", "not-listable"),
    "gone": ("disabled", "disabled"),
    "secretive": ("denied", "denied"),
}
"""Folder -> (kind, code) of each skill left out of the tree."""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write(tmp_path, {".skillpack/config.toml": CONFIG})
    return write(tmp_path / "skills", TREE)


def _folder(path: str) -> str:
    return Path(path).parent.name


async def first_page(client: Client) -> dict[str, Any]:
    return await send_raw(client, ListSkillsRequest(params=types.PaginatedRequestParams()))


async def problems(client: Client) -> dict[str, Any]:
    result = await client.read_resource(PROBLEMS_URI)
    (content,) = result.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.mime_type == "application/json"
    report: dict[str, Any] = json.loads(content.text)
    return report


def log_data() -> tuple[list[Any], Callable[[Any], Awaitable[None]]]:
    """(the `data` of every log message a client gets, the client's message handler)."""
    logs: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification):
            logs.append(message.params.data)

    return logs, on_message


def test_every_skill_is_served_or_the_client_is_told_why_not(tree: Path) -> None:
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification):
            logs.append(message.params)

    async def scenario(client: Client) -> tuple[dict[str, Any], list[dict[str, Any]], Any]:
        page = await first_page(client)
        entries = await list_skills(client)
        return page, entries, await problems(client)

    page, entries, report = run(SkillServer(open_session(tree)), scenario, on_message=on_message)
    served = {_folder(e["uri"]) for e in entries}
    assert served == {"alpha", "beta"}
    told = {_folder(e["path"]): (e["kind"], e["code"]) for e in report["leftOut"]}
    assert told == LEFT_OUT
    assert served | set(told) == {_folder(p) for p in TREE if p.endswith("/SKILL.md")}
    assert report["served"] == 2
    assert report["counts"] == {
        "denied": 1,
        "disabled": 1,
        "invalid": 1,
        "not-listable": 1,
        "prompt-only": 1,
    }
    fixes = {_folder(e["path"]): e["message"] for e in report["leftOut"]}
    assert "add `---`" in fixes["broken"]
    assert "rename it" in fixes["Bad_Name"]
    assert "skillpack enable gone" in fixes["gone"]
    assert "Remove that line" in fixes["only-user"]
    # The first page already counts what discovery left out, and points at the rest.
    meta = page["_meta"][META_LEFT_OUT]
    assert meta["uri"] == PROBLEMS_URI
    assert meta["count"] >= 4 and meta["counts"]["invalid"] == 1
    # Handshake-era clients hear of it as log messages: at start, then as listing
    # found the skill the extension cannot list.
    assert logs and all(log.level == "warning" and log.logger == "skillpack" for log in logs)
    last = logs[-1].data
    assert {(_folder(e["path"]), e["kind"]) for e in last["leftOut"]} == {
        (folder, kind) for folder, (kind, _code) in LEFT_OUT.items()
    }
    assert last["uri"] == PROBLEMS_URI and last["catalogVersion"] == report["catalogVersion"]


def test_a_client_is_logged_to_only_when_what_is_left_out_changes(tree: Path) -> None:
    session = open_session(tree)
    server = SkillServer(session)
    logs, on_message = log_data()

    async def scenario(client: Client) -> None:
        await list_skills(client)
        told = len(logs)
        await list_skills(client)  # nothing new: no message
        assert len(logs) == told
        write(tree, {"late/SKILL.md": "no frontmatter\n"})
        session.refresh()
        await list_skills(client)
        assert len(logs) == told + 1
        assert any(e["path"].endswith("late/SKILL.md") for e in logs[-1]["leftOut"])

    run(server, scenario, on_message=on_message)


@pytest.mark.parametrize(("level", "logged"), [("warning", True), ("error", False)])
def test_a_client_gets_the_warning_only_at_the_log_level_it_set(
    tree: Path, level: str, logged: bool
) -> None:
    session = open_session(tree)
    logs, on_message = log_data()

    async def scenario(client: Client) -> None:
        # As a handshake-era host sends it (the client's own method warns: the 2026
        # protocol drops `logging/setLevel`).
        request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=level))  # type: ignore[arg-type]
        await send_raw(client, request)
        write(tree, {"late/SKILL.md": "no frontmatter\n"})
        session.refresh()
        await list_skills(client)

    run(SkillServer(session), scenario, on_message=on_message)
    # What `initialized` told may come before or after the level is set; the change
    # made after it is told only at a level that lets warnings through.
    told_late = [log for log in logs if any("late" in e["path"] for e in log["leftOut"])]
    assert bool(told_late) is logged


def test_a_level_set_while_the_view_builds_is_the_one_a_warning_obeys(tree: Path) -> None:
    import anyio

    from skillpack.mcp import _server

    server = SkillServer(open_session(tree))
    sent: list[Any] = []

    class Notifier:
        async def send_notification(self, notification: Any) -> None:
            sent.append(notification)

    class Connection:
        protocol_version = "2025-06-18"
        state: dict[str, Any] = {_server._NOTIFIER: Notifier()}

    connection = Connection()
    real_view = server.view

    def view_while_the_level_is_set(grant: Any = None) -> Any:
        connection.state[_server._LOG_LEVEL] = "error"  # `logging/setLevel` meanwhile
        return real_view(grant)

    server.view = view_while_the_level_is_set  # type: ignore[method-assign]
    anyio.run(server._log_left_out, connection)
    assert sent == []
    server.view = real_view  # type: ignore[method-assign]
    connection.state[_server._LOG_LEVEL] = "warning"
    anyio.run(server._log_left_out, connection)
    assert len(sent) == 1  # what is left out (Bad_Name and the broken file), told once


def test_a_catalog_change_told_before_the_next_page_is_one_message_not_two(tree: Path) -> None:
    # The order the notifier and a page may take after a change: the notifier asks the
    # new view first, before any page found again the skill it cannot list.
    session = open_session(tree)
    pages = Pages(session)
    pages.skills_page(0)
    told, first = left_out_news(pages.view(), None)
    assert first is not None and ("not-listable", str(tree / "Bad_Name" / "SKILL.md")) in told
    write(tree, {"late/SKILL.md": "no frontmatter\n"})
    session.refresh()
    told, change = left_out_news(pages.view(), told)
    assert change is not None
    told_paths = {e["path"] for e in change["leftOut"]}
    assert str(tree / "late" / "SKILL.md") in told_paths
    pages.skills_page(0)  # finds Bad_Name unlistable again: nothing new to say
    told, again = left_out_news(pages.view(), told)
    assert again is None
    # A skill that becomes listable is news once its new view has listed it.
    write(tree, {"Bad_Name/SKILL.md": skill_md("bad-name")})
    (tree / "Bad_Name").rename(tree / "bad-name")
    session.refresh()
    pages.skills_page(0)
    told, fixed = left_out_news(pages.view(), told)
    assert fixed is not None
    assert not any(e["code"] == "not-listable" for e in fixed["leftOut"])


def test_a_view_of_a_session_that_sets_none_apart_is_the_view_asked_skill_by_skill(
    tmp_path: Path,
) -> None:
    session = open_session(write(tmp_path / "skills", TREE))
    assert session.skills.sets_none_apart()
    pages = Pages(session)
    views = [
        build_served(
            session.catalog,
            model_skills=session.skills.model_skills,
            is_enabled=session.skills.is_enabled,
            is_visible=session.skills.is_visible,
            reader=pages.reader,
            frontmatter=FrontmatterCache(),
            everyone=everyone,
        )
        for everyone in (True, False)
    ]
    fast, slow = views
    assert fast.version == slow.version
    assert fast.skills == slow.skills and fast.path_of == slow.path_of
    assert fast.left_out_all() == slow.left_out_all()
    assert fast.prompts == slow.prompts


def test_the_catalog_version_changes_on_an_edit_and_not_otherwise(tree: Path) -> None:
    session = open_session(tree)
    server = SkillServer(session)

    async def versions(client: Client) -> set[str]:
        seen = set()
        cursor = None
        while True:
            page = await send_raw(
                client, ListSkillsRequest(params=types.PaginatedRequestParams(cursor=cursor))
            )
            seen.add(page["_meta"][META_VERSION])
            cursor = page.get("nextCursor")
            if cursor is None:
                return seen

    (first,) = run(server, versions)
    session.refresh()  # nothing changed on disk
    assert run(server, versions) == {first}
    # Another server over the same files (a restart) gives the same version.
    assert run(SkillServer(open_session(tree)), versions) == {first}
    # A supporting file does not change the catalog (its digest in the entry does).
    write(tree, {"alpha/references/guide.md": "# Guide, longer now\n"})
    session.refresh()
    assert run(server, versions) == {first}
    # An edit of a SKILL.md does.
    skill = tree / "alpha" / "SKILL.md"
    skill.write_text(skill_md("alpha", "Edited. Use it in tests."), encoding="utf-8")
    stat = skill.stat()
    os.utime(skill, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    session.refresh()
    (edited,) = run(server, versions)
    assert edited != first
    session.refresh()
    assert run(server, versions) == {edited}
    # So does a skill turned off in the config.
    write(tree.parent, {".skillpack/config.toml": CONFIG.replace('"gone"', '"gone", "beta"')})
    session.refresh()
    (disabled,) = run(server, versions)
    assert disabled not in (first, edited)


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["mcp", "--check", "--no-user", "--no-system", *args])
    return result.exit_code, result.stdout


def test_check_prints_what_is_served_and_left_out_and_fails_on_an_invalid_skill(
    tree: Path,
) -> None:
    code, output = invoke("--json", "--root", str(tree), "--cwd", str(tree.parent))
    assert code == 1  # an invalid SKILL.md
    report = json.loads(output)
    assert {s["name"] for s in report["skills"]} == {"alpha", "beta"}
    assert {_folder(e["path"]): (e["kind"], e["code"]) for e in report["leftOut"]} == LEFT_OUT
    code, text = invoke("--root", str(tree), "--cwd", str(tree.parent))
    assert code == 1
    assert "would serve 2 skill(s)" in text and "frontmatter-missing" not in text
    assert "invalid" in text and "prompt-only" in text
    (tree / "broken" / "SKILL.md").unlink()
    code, output = invoke("--json", "--root", str(tree), "--cwd", str(tree.parent))
    assert code == 0  # left out by design only
    assert json.loads(output)["counts"].get("invalid") is None


def test_check_fails_when_a_root_is_cut_short_and_names_the_option(tree: Path) -> None:
    code, output = invoke("--json", "--max-dirs", "2", "--root", str(tree), "--cwd", str(tree))
    assert code == 1
    (truncated,) = [e for e in json.loads(output)["leftOut"] if e["kind"] == "truncated"]
    assert truncated["code"] == "walk-truncated" and "--max-dirs" in truncated["message"]
    assert truncated["path"] == str(tree)


@pytest.mark.corpus
def test_check_on_the_real_corpus_names_the_29_left_out() -> None:
    # With the bundled skills: the corpus's writing-skills shadows skillpack's own.
    result = CliRunner().invoke(
        cli, ["mcp", "--check", "--json", "--no-user", "--root", str(REAL_SKILLS)]
    )
    report = json.loads(result.stdout)
    assert result.exit_code == 1  # one SKILL.md has no frontmatter
    assert report["counts"] == {
        "invalid": 1,
        "not-listable": 3,
        "prompt-only": 24,
        "shadowed": 1,
    }
    codes = sorted(e["code"] for e in report["leftOut"] if e["kind"] != "prompt-only")
    assert codes == ["frontmatter-missing", "name-shadowed", *["not-listable"] * 3]
    reasons = " ".join(e["message"] for e in report["leftOut"] if e["kind"] == "not-listable")
    assert reasons.count("naming rule") == 2 and reasons.count("1024-character limit") == 1
    assert report["served"] == len(report["skills"])


def test_a_restarted_server_parses_no_frontmatter_it_has_parsed_before(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillpack.mcp import _served

    parsed: list[bytes] = []
    parse = _served._frontmatter_of

    def counting(data: bytes) -> dict[str, Any] | str:
        parsed.append(data)
        return parse(data)

    monkeypatch.setattr(_served, "_frontmatter_of", counting)

    def first_pages() -> list[dict[str, Any]]:
        session = Session.open(  # with the index, in the test's SKILLPACK_CACHE_DIR
            cwd=str(tree), roots=[str(tree)], include_user=False, include_system=False
        )
        try:
            pages = Pages(session)
            return [pages.skills_page(0), pages.problems_report()]
        finally:
            session.close()

    asked: list[str] = []
    store_get = FrontmatterStore.get

    def counting_get(store: FrontmatterStore, digest: str) -> dict[str, Any] | str | None:
        asked.append(digest)
        return store_get(store, digest)

    monkeypatch.setattr(FrontmatterStore, "get", counting_get)
    before = first_pages()
    assert len(parsed) >= 3  # every served and every unlistable SKILL.md
    assert len(asked) == len(set(asked))  # a miss is not asked of the index twice
    parsed.clear()
    assert first_pages() == before
    assert parsed == []
    # An edit is a new version of the file: parsed again, alone.
    skill = tree / "alpha" / "SKILL.md"
    skill.write_text(skill_md("alpha", "Edited. Use it in tests."), encoding="utf-8")
    after = first_pages()
    assert len(parsed) == 1 and b"Edited." in parsed[0]
    assert after[0]["skills"] != before[0]["skills"]
