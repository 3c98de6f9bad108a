"""The rule of a full session table both servers keep: the least recently used idle
session makes room, a table of busy sessions refuses, one log line per episode."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from skillpack._httpguard import Episodes
from skillpack._room import SessionRoom


@dataclass
class Entry:
    used: float
    busy: bool = False


def room(cap: int, now: list[float]) -> SessionRoom:
    return SessionRoom(
        cap=cap,
        log=logging.getLogger("skillpack.test-room"),
        evicting="evicting to admit",
        refusing="refusing, all busy",
        episodes=Episodes(quiet=30.0, clock=lambda: now[0]),
    )


def choose(table_room: SessionRoom, table: dict[str, Entry]) -> str | None:
    return table_room.choose(table, last_used=lambda e: e.used, busy=lambda e: e.busy)


def test_a_table_with_room_closes_nothing() -> None:
    table_room = room(3, [0.0])
    table = {"a": Entry(1.0), "b": Entry(2.0)}
    assert choose(table_room, table) is None
    assert not table_room.full(table)


def test_a_full_table_gives_the_least_recently_used_session_not_busy() -> None:
    table_room = room(3, [0.0])
    table = {"busy": Entry(0.5, busy=True), "recent": Entry(9.0), "old": Entry(5.0)}
    assert choose(table_room, table) == "old"
    assert table_room.full(table)  # the caller removes it before admitting


def test_a_full_table_of_busy_sessions_gives_none_and_is_full() -> None:
    table_room = room(2, [0.0])
    table = {"a": Entry(1.0, busy=True), "b": Entry(2.0, busy=True)}
    assert choose(table_room, table) is None
    assert table_room.full(table)


def test_each_condition_is_one_log_line_per_episode(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    table_room = room(1, now)
    idle, busy = {"a": Entry(1.0)}, {"a": Entry(1.0, busy=True)}
    with caplog.at_level(logging.WARNING, logger="skillpack.test-room"):
        for second in [*range(0, 20), *range(100, 105)]:  # two episodes, 80 s apart
            now[0] = float(second)
            for _ in range(10):
                assert choose(table_room, idle) == "a"
                assert choose(table_room, busy) is None
    lines = [r.getMessage() for r in caplog.records]
    assert (
        lines
        == [
            "evicting to admit (Logged once per episode.)",
            "refusing, all busy (Logged once per episode.)",
        ]
        * 2
    )


def test_a_table_holds_at_least_one_session() -> None:
    with pytest.raises(ValueError, match="at least one session, not 0"):
        room(0, [0.0])
