"""`skillpack serve` as a real subprocess, over stdio and over HTTP, with the typed client.

Every result is checked against the schema (`CheckedClient`); the same scenarios run on
both transports.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rpc_support import SERVER_ARGS, CheckedClient, validate_notification, write_project
from rpc_support import write_skill_md as write_skill

from skillpack.rpc import RpcError
from skillpack.rpc._types import Notification, WorkspaceListing

TRANSPORTS = ("stdio", "http")
NOTIFY_TIMEOUT = 20.0
UPSTREAM = Path(__file__).parents[1] / "hostile" / "hostile_upstream.py"
"""An `[[mcp_servers]]` upstream; mode `names` publishes `plain` (with a `notes.txt`)."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


def spawn(transport: str, project: Path) -> CheckedClient:
    """`skillpack serve` over `transport` for `project`."""
    args = ("--cwd", str(project), *SERVER_ARGS)
    if transport == "stdio":
        return CheckedClient.stdio(*args, timeout=30)
    return CheckedClient.spawn_http(*args, timeout=30)


@pytest.fixture(params=TRANSPORTS)
def client(request: pytest.FixtureRequest, project: Path) -> Iterator[CheckedClient]:
    with spawn(request.param, project) as spawned:
        yield spawned


def names(listing: WorkspaceListing) -> list[str]:
    return [s["name"] for s in listing["skills"]]


def test_skills_list_answers_one_entry_per_cwd_each_with_its_own_repo_chain(
    client: CheckedClient, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    write_skill(other / ".claude" / "skills" / "gamma", "gamma")
    broken = other / ".claude" / "skills" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("# No frontmatter\n", encoding="utf-8")

    data = client.skills_list([str(project), str(other)])["data"]

    assert [entry["cwd"] for entry in data] == [str(project), str(other)]
    assert names(data[0]) == ["alpha", "beta"]
    assert names(data[1]) == ["gamma"]
    assert [p["code"] for p in data[1]["errors"]] == ["frontmatter-missing"]
    assert [(e["kind"], e["code"]) for e in data[1]["left_out"]] == [
        ("invalid", "frontmatter-missing")
    ]
    assert data[0]["left_out"] == [] and data[0]["version"] != data[1]["version"]
    assert client.skills_list()["data"][0]["cwd"] == str(project)


def test_tool_methods_answer_the_tools_envelopes(client: CheckedClient, project: Path) -> None:
    found = client.skills_search("beta work")
    assert found["ok"] and found["data"]["results"][0]["name"] == "beta"

    loaded = client.skills_load(name="alpha")
    assert loaded["ok"] and "Steps for alpha." in loaded["data"]["content"]
    again = client.skills_load(name="alpha")
    assert again["data"]["already_loaded"] is False  # without a session nothing is remembered

    read = client.skills_read_file("alpha", "references/notes.md")
    assert read["ok"] and read["data"]["content"] == "notes for alpha\n"

    missing = client.skills_load(name="nope")
    assert missing == {"ok": False, "error": missing["error"]}
    assert missing["error"]["code"] == "NOT_FOUND"
    outside = client.skills_read_file("alpha", "../beta/SKILL.md")
    assert not outside["ok"] and outside["error"]["code"] in ("PERMISSION_DENIED", "INVALID_PARAM")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_read_file_takes_every_name_the_other_methods_take(transport: str, project: Path) -> None:
    """`<plugin or scope>:<name>` as `skills.list` gives it (an `[[mcp_servers]]`
    upstream's skills included), and a name that picks no single skill answers the
    same envelope as `skills.load`, with a session or without."""
    (project / ".skillpack").mkdir()
    (project / ".skillpack" / "config.toml").write_text(
        f'[[mcp_servers]]\nname = "up"\ncommand = {json.dumps(sys.executable)}\n'
        f"args = {json.dumps([str(UPSTREAM), 'names'])}\ntimeout = 30\n",
        encoding="utf-8",
    )
    for twin in ("one", "two"):
        write_skill(project / ".agents" / "skills" / twin / "twin", "twin")
    with spawn(transport, project) as client:
        listed = {s["name"]: s["qualified_name"] for s in client.skills_list()["data"][0]["skills"]}
        assert (listed["plain"], listed["alpha"]) == ("up:plain", "repo:alpha")
        session = client.session_open()["session"]
        for where in ({}, {"session": session}):
            read = client.skills_read_file("up:plain", "notes.txt", **where)
            assert read["ok"] and read["data"]["content"] == "hello", read
            read = client.skills_read_file("repo:alpha", "references/notes.md", **where)
            assert read["ok"] and read["data"]["content"] == "notes for alpha\n", read
            for ref, code in (
                ("up:nope", "NOT_FOUND"),
                ("nope:plain", "NOT_FOUND"),
                ("twin", "AMBIGUOUS"),
            ):
                refused = client.skills_read_file(ref, "notes.txt", **where)
                assert refused == client.skills_load(name=ref, **where)
                assert refused["ok"] is False and refused["error"]["code"] == code, refused


def test_sessions_keep_their_own_loaded_versions_and_leading_skills(
    client: CheckedClient,
) -> None:
    first = client.session_open()["session"]
    second = client.session_open()["session"]
    assert first != second

    turn = client.turn_prepare(first, "$alpha please tidy up")
    assert [a["name"] for a in turn["activations"]] == ["alpha"]
    assert turn["lines"] == ["Using skill: alpha"]
    assert "Steps for alpha." in turn["injections"][0]

    repeat = client.skills_load(name="alpha", session=first)
    assert repeat["data"]["already_loaded"] is True
    assert client.context_inspect(session=second)["leading"] is None
    fresh = client.skills_load(name="alpha", session=second)
    assert fresh["data"]["already_loaded"] is False

    report = client.context_inspect(session=first, context_window=100_000)
    assert report["leading"] == "repo:alpha"
    assert [item["name"] for item in report["loaded"]] == ["alpha"]
    assert report["loaded"][0]["body_tokens"] > 0

    unknown = client.turn_prepare(first, "$nope")
    assert [d["kind"] for d in unknown["diagnostics"]] == ["not-found"]
    assert turn["suggestions"] == [] and turn["suggestion_note"] == ""

    hinted = client.turn_prepare(second, "I need some beta work done")
    assert hinted["activations"] == [] and hinted["injections"] == []
    assert [s["id"] for s in hinted["suggestions"]] == ["beta"]
    assert hinted["suggestion_note"].startswith("Skills that may fit this request")

    assert client.session_close(first) == {"closed": True}
    assert client.session_close(first) == {"closed": False}
    with pytest.raises(RpcError) as closed:
        client.turn_prepare(first, "$alpha")
    assert closed.value.code == -32010


def test_context_inspect_reports_the_budget_each_entry_and_the_active_tools(
    client: CheckedClient, project: Path
) -> None:
    write_skill(
        project / ".agents" / "skills" / "scoped",
        "scoped",
        extra="allowed-tools: Read Grep\n",
        body="Only read.\n",
    )
    client.skills_list(force_reload=True)
    session = client.session_open()["session"]
    client.turn_prepare(session, "$scoped look around")

    report = client.context_inspect(
        session=session, include_skills=True, budget_chars=300, tools=["Read", "Bash", "Grep"]
    )

    catalog = report["catalog"]
    assert catalog["budget_chars"] == 300 and catalog["truncated"] is True
    assert catalog["used_chars"] <= 300
    entries = {e["name"]: e for e in catalog["entries"]}
    assert set(entries) == {"alpha", "beta", "scoped"}
    assert all(e["tokens"] == (e["chars"] + 3) // 4 for e in entries.values())
    assert {e["shown"] for e in entries.values()} <= {"full", "shortened", "name_only"}
    assert report["active_tools"]["tools"] == ["Read", "Grep"]
    assert report["active_tools"]["declarations"][0]["allowed_tools"] == ["Read", "Grep"]
    assert {s["name"] for s in report["skills"]} == {"alpha", "beta", "scoped"}
    # The skill the session used ranks first: it keeps its description.
    assert entries["scoped"]["shown"] in ("full", "shortened")
    deferred = client.context_inspect(session=session, catalog_mode="deferred")["catalog"]
    assert deferred["deferred"] is True and deferred["shown"] == 0


def test_config_write_disables_a_skill_for_listings_and_open_sessions(
    client: CheckedClient, project: Path, isolated_home: Path
) -> None:
    session = client.session_open()["session"]
    before = client.skills_list()["data"][0]["version"]
    assert client.skills_list()["data"][0]["version"] == before  # nothing changed

    written = client.skills_config_write("beta", enabled=False, target="project")

    assert written["config"] == str(project / ".skillpack" / "config.toml")
    assert "beta" in Path(written["config"]).read_text(encoding="utf-8")
    listing = client.skills_list()["data"][0]
    listed = {s["name"]: s["enabled"] for s in listing["skills"]}
    assert listed == {"alpha": True, "beta": False}
    assert [(e["name"], e["kind"]) for e in listing["left_out"]] == [("beta", "disabled")]
    assert listing["version"] != before
    turn = client.turn_prepare(session, "$beta now")
    assert [d["kind"] for d in turn["diagnostics"]] == ["disabled"]

    with pytest.raises(RpcError) as missing:
        client.skills_config_write("nope", enabled=True, target="user")
    assert missing.value.code == -32004
    assert missing.value.data["code"] == "NOT_FOUND"


def test_config_write_decided_by_another_file_reports_and_applies_the_resulting_state(
    client: CheckedClient, project: Path
) -> None:
    project_file = project / ".skillpack" / "config.toml"
    project_file.parent.mkdir(parents=True)
    project_file.write_text('[skills]\nenabled = ["beta"]\n', encoding="utf-8")
    client.skills_reload()
    session = client.session_open()["session"]

    written = client.skills_config_write("beta", enabled=False, target="user")

    assert written["enabled"] is True
    assert written["decided_by"] == str(project_file)
    listed = {s["name"]: s["enabled"] for s in client.skills_list()["data"][0]["skills"]}
    assert listed["beta"] is True
    turn = client.turn_prepare(session, "$beta now")
    assert [d["kind"] for d in turn["diagnostics"]] != ["disabled"]
    assert [a["name"] for a in turn["activations"]] == ["beta"]


def test_a_skill_created_on_disk_is_announced_as_skills_changed(
    client: CheckedClient, project: Path
) -> None:
    assert names(client.skills_list()["data"][0]) == ["alpha", "beta"]
    session = client.session_open()["session"]
    heard: list[Notification] = []
    client.on_notification(heard.append)

    write_skill(project / ".agents" / "skills" / "delta", "delta")

    note = client.wait_for(
        lambda n: any(s["name"] == "delta" for s in n["params"]["added"]),
        timeout=NOTIFY_TIMEOUT,
    )
    assert note is not None, "no skills/changed notification for the new skill"
    assert note["method"] == "skills/changed"
    validate_notification("skills/changed", note["params"])
    assert note["params"]["cwd"] == str(project)
    assert note in heard  # the callback heard it too
    assert names(client.skills_list()["data"][0]) == ["alpha", "beta", "delta"]
    assert client.turn_prepare(session, "$delta go")["lines"] == ["Using skill: delta"]


def test_skills_reload_reports_what_changed(client: CheckedClient, project: Path) -> None:
    client.skills_list()
    os.remove(project / ".agents" / "skills" / "beta" / "SKILL.md")

    changes = client.skills_reload(cwd=str(project))["data"]
    removed = [s["name"] for change in changes for s in change["removed"]]
    # The watcher may have seen the removal first; then the reload finds nothing new.
    if removed:
        assert removed == ["beta"]
    assert names(client.skills_list()["data"][0]) == ["alpha"]


def test_bad_params_name_the_field_and_unknown_methods_are_refused(
    client: CheckedClient, tmp_path: Path
) -> None:
    cases: list[tuple[str, dict[str, object], str]] = [
        ("skills.list", {"cwds": ["ok", 3]}, "cwds[1]"),
        ("skills.search", {"query": "x", "colour": "red"}, "colour"),
        ("skills.config.write", {"ref": "a", "enabled": True, "target": "team"}, "target"),
        ("skills.list", {"cwds": [str(tmp_path / "missing")]}, "cwds[0]"),
        ("turn.prepare", {"session": "s", "text": 5}, "text"),
    ]
    for method, params, field in cases:
        with pytest.raises(RpcError) as bad:
            client.call(method, params)
        assert bad.value.code == -32602, (method, params)
        assert bad.value.data == {"field": field}
        assert f"`{field}`" in bad.value.message
    # A tool's own arguments are the tool's to check: its envelope answers, as in-process.
    for params, field in (({}, "query"), ({"query": "x", "limit": 0}, "limit")):
        refused = client.call("skills.search", params)
        assert refused["ok"] is False and refused["error"]["code"] == "INVALID_PARAM"
        assert f"`{field}`" in refused["error"]["message"]
    assert client.call("skills.search", {"query": "alpha", "limit": 3.0})["ok"] is True
    assert client.call("skills.search", {"query": "alpha", "limit": None})["ok"] is True
    with pytest.raises(RpcError) as unknown:
        client.call("skills.explode")
    assert unknown.value.code == -32601
    assert client.discover()["methods"]["skills.list"]["params"]["type"] == "object"


def test_requests_from_many_threads_are_answered_each_with_its_own_reply(
    client: CheckedClient,
) -> None:
    failures: list[str] = []

    def work(i: int) -> None:
        try:
            session = client.session_open()["session"]
            for _ in range(5):
                name = "alpha" if i % 2 else "beta"
                loaded = client.skills_load(name=name, session=session)
                if loaded["data"]["name"] != name:
                    failures.append(f"{i}: asked {name}, got {loaded['data']['name']}")
                if client.skills_search(name)["data"]["results"][0]["name"] != name:
                    failures.append(f"{i}: search {name}")
            client.session_close(session)
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(f"{i}: {exc!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_a_paths_skill_joins_a_session_once_it_notes_a_matching_file(
    client: CheckedClient, project: Path
) -> None:
    write_skill(
        project / ".agents" / "skills" / "sql-review",
        "sql-review",
        extra='paths: ["**/*.sql"]\n',
    )
    client.skills_reload(cwd=str(project))
    session = client.session_open()["session"]
    before = client.context_inspect(session=session, include_skills=True)
    assert "sql-review" not in json.dumps(before["catalog"])

    assert client.session_note_paths(session, [str(project / "README.md")]) == {
        "opened": [],
        "skills": 2,
    }
    noted = client.session_note_paths(session, [str(project / "db" / "001.sql")])

    assert [s["name"] for s in noted["opened"]] == ["sql-review"] and noted["skills"] == 3
    after = client.context_inspect(session=session, include_skills=True)
    assert "sql-review" in json.dumps(after["catalog"])
    other = client.session_open()["session"]
    loaded = client.turn_prepare(other, "$sql-review now")
    assert [a["name"] for a in loaded["activations"]] == ["sql-review"]
