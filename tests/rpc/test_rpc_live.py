"""The server's state in process: workspaces per cwd, sessions and their bounds, changes
reaching sessions and subscribers; and the `/events` heartbeat."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from rpc_support import validate_notification, write_project, write_skill_md

from skillpack.discovery import DiscoveryOptions
from skillpack.rpc._codes import ParamError, RpcFailure
from skillpack.rpc._dispatch import Dispatcher, Hub
from skillpack.rpc._http import RpcHTTPServer
from skillpack.rpc._live import Discovery, Live, OpenSession
from skillpack.rpc._methods import Methods


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


def make_live(project: Path, notes: list[tuple[str, dict[str, Any]]], **kwargs: Any) -> Live:
    discovery = Discovery(
        cwd=str(project),
        options=DiscoveryOptions(include_user=False, include_system=False),
        refresh="manual",
    )

    def notify(method: str, params: dict[str, Any], **_scoped: Any) -> None:
        notes.append((method, params))

    return Live(discovery, notify=notify, **kwargs)


def test_a_change_found_by_a_refresh_reaches_sessions_and_subscribers(project: Path) -> None:
    notes: list[tuple[str, dict[str, Any]]] = []
    live = make_live(project, notes)
    entry = live.open_session(None)
    write_skill_md(project / ".agents" / "skills" / "gamma", "gamma")

    change = live.refresh(entry.workspace)

    assert [s["name"] for s in change["added"]] == ["gamma"]
    assert [(m, [s["name"] for s in p["added"]]) for m, p in notes] == [
        ("skills/changed", ["gamma"])
    ]
    validate_notification("skills/changed", notes[0][1])
    assert entry.session.catalog.at_path(change["added"][0]["path"]) is not None
    assert live.refresh(entry.workspace)["added"] == []  # nothing new: no notification
    assert len(notes) == 1
    live.close()


def test_skills_list_applies_per_cwd_extra_roots_to_that_cwd_only(
    project: Path, tmp_path: Path
) -> None:
    # `extra_roots` apply to every cwd; `per_cwd_extra_roots` to one.
    live = make_live(project, [])
    methods = Methods(live)
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    extra = tmp_path / "extra"
    write_skill_md(extra / "omega", "omega")
    params = {
        "cwds": [str(project), str(other)],
        "per_cwd_extra_roots": [{"cwd": str(other) + "/", "extra_roots": [str(extra)]}],
    }
    data = json.loads(bytes(methods.skills_list(params)))["data"]
    names = [{s["name"] for s in entry["skills"]} for entry in data]
    assert "omega" not in names[0] and "omega" in names[1]
    with pytest.raises(ParamError) as stray:
        methods.skills_list(
            {
                "cwds": [str(project)],
                "per_cwd_extra_roots": [{"cwd": str(other), "extra_roots": []}],
            }
        )
    assert stray.value.field == "per_cwd_extra_roots[0].cwd"
    live.close()


def test_each_cwd_and_extra_roots_is_its_own_workspace_reused_after(
    project: Path, tmp_path: Path
) -> None:
    live = make_live(project, [])
    extra = tmp_path / "extra"
    write_skill_md(extra / "omega", "omega")
    plain = live.workspace()
    with_extra = live.workspace(str(project), [str(extra)])
    assert plain is live.workspace(str(project)) and with_extra is not plain
    assert "omega" in with_extra.live.catalog.names
    assert "omega" not in plain.live.catalog.names
    with pytest.raises(ParamError) as relative:
        live.workspace(str(project), ["relative/root"])
    assert relative.value.field == "extra_roots[0]"
    with pytest.raises(ParamError) as missing:
        live.workspace(str(tmp_path / "nope"))
    assert missing.value.field == "cwd"
    live.close()


def test_least_recently_used_workspaces_without_sessions_are_closed_past_the_cap(
    project: Path, tmp_path: Path
) -> None:
    clock = Clock()
    live = make_live(project, [], max_workspaces=2, clock=clock)
    folders = [tmp_path / f"w{i}" for i in range(3)]
    for folder in folders:
        folder.mkdir()
    held = live.open_session(str(folders[0])).workspace
    for folder in folders[1:]:
        clock.now += 1
        live.workspace(str(folder))
    kept = {w.cwd for w in live.workspaces()}
    assert kept == {str(folders[0]), str(folders[2])}  # the one with a session stays
    assert held in live.workspaces()
    live.close()


def full_table(project: Path, clock: Clock) -> tuple[Live, OpenSession, OpenSession]:
    """A server keeping 2 sessions (closed after 60 s idle), holding two opened 30 s
    apart."""
    live = make_live(project, [], max_sessions=2, session_idle=60, clock=clock)
    first = live.open_session(None)
    clock.now += 30
    second = live.open_session(None)
    clock.now += 1
    return live, first, second


def test_idle_sessions_expire_and_a_full_table_admits_in_the_least_recently_used_place(
    project: Path,
) -> None:
    clock = Clock()
    live, first, second = full_table(project, clock)
    live.session(first.id)  # used: now `second` is the least recently used

    third = live.open_session(None)

    with pytest.raises(RpcFailure) as gone:
        live.session(second.id)
    assert gone.value.code == -32010
    assert live.session(first.id) is first and live.session(third.id) is third
    clock.now += 61  # both idle past `session_idle`: closed, whatever the cap
    fourth = live.open_session(None)
    assert [e.id for e in live.all_sessions()] == [fourth.id]
    live.close()


def test_a_session_with_a_request_in_flight_keeps_its_place(project: Path) -> None:
    clock = Clock()
    live, old, recent = full_table(project, clock)
    with live.busy(old.id):
        newcomer = live.open_session(None)  # `recent` goes: `old` is busy
        with live.busy(newcomer.id), pytest.raises(RpcFailure) as full:
            live.open_session(None)
        clock.now += 100  # past `session_idle`: `newcomer` expires, `old` is in flight
        live.open_session(None)
    assert full.value.code == -32011
    assert "each has a request in flight" in str(full.value)
    assert old in live.all_sessions() and newcomer not in live.all_sessions()
    assert recent not in live.all_sessions()
    with live.busy("no-such-session"):  # nothing to hold: the request finds none
        pass
    live.close()


def test_two_clients_arriving_at_once_do_not_both_take_the_one_place_made(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One place can be made (an idle session; the other is busy): both openers build
    their sessions together, then exactly one is admitted, the other refused, and the
    table never holds more than its cap."""
    live = make_live(project, [], max_sessions=2)
    idle = live.open_session(None)
    busy = live.open_session(None)
    together = threading.Barrier(2, timeout=30)
    workspace = live.workspace()
    conversation = workspace.live.conversation

    def arrive_together(**kwargs: Any) -> Any:
        together.wait()  # both openers past any early check before either is admitted
        return conversation(**kwargs)

    monkeypatch.setattr(workspace.live, "conversation", arrive_together)
    admitted: list[str] = []
    refused: list[int] = []

    def open_one() -> None:
        try:
            admitted.append(live.open_session(None, held=True).id)  # answering: in flight
        except RpcFailure as failure:
            refused.append(failure.code)

    with live.busy(busy.id):
        openers = [threading.Thread(target=open_one) for _ in range(2)]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join(30)

    assert len(admitted) == 1 and refused == [-32011]
    assert {e.id for e in live.all_sessions()} == {busy.id, admitted[0]}
    assert idle not in live.all_sessions()
    live.close()


def test_events_send_a_heartbeat_while_nothing_changes(project: Path) -> None:
    hub = Hub()
    live = make_live(project, [])
    server = RpcHTTPServer(
        ("127.0.0.1", 0),
        dispatcher=Dispatcher(Methods(live)),
        hub=hub,
        token="secret",
        heartbeat=0.05,
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        port = server.server_address[1]
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/events", headers={"Authorization": "Bearer secret"})
        response = connection.getresponse()
        assert response.status == 200
        assert response.getheader("Content-Type") == "text/event-stream"
        lines = [response.readline() for _ in range(6)]
        assert lines[:3] == [b"event: ready\n", b"data: {}\n", b"\n"]
        assert b": ping\n" in lines[3:]
        hub.publish("skills/changed", {"cwd": "/x"})
        line = response.readline()
        while not line.startswith(b"data: "):  # pings may come first
            line = response.readline()
        assert json.loads(line[len(b"data: ") :]) == {
            "jsonrpc": "2.0",
            "method": "skills/changed",
            "params": {"cwd": "/x"},
        }
        connection.close()
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join()
        live.close()
