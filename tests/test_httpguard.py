"""The one HTTP guard both servers use: loopback, Host, Origin, token, the waiting
connections, the head and body deadlines, one log line per episode."""

from __future__ import annotations

import errno
import logging

import pytest

from skillpack._httpguard import (
    BODY_SECONDS,
    DEADLINES_ENV,
    HEADER_SECONDS,
    Deadlines,
    EpisodeLog,
    Episodes,
    HostGuard,
    PendingConnections,
    deadline_seconds,
    is_loopback,
    out_of_handles,
    split_host,
)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("127.0.0.1", True),
        ("127.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("localhost.evil.example", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_one_loopback_answer(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("value", "parts"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", "8765")),
        ("LocalHost", ("localhost", "")),
        ("[::1]:80", ("::1", "80")),
        ("[::1", None),
        ("[::1]x", None),
        ("127.0.0.1:http", None),
        ("", None),
    ],
)
def test_split_host(value: str, parts: tuple[str, str] | None) -> None:
    assert split_host(value) == parts


def test_the_guard_answers_421_for_a_host_403_for_an_origin_401_for_a_token() -> None:
    guard = HostGuard("127.0.0.1", token="s3cret", port=8765)
    good = "Bearer s3cret"
    assert guard.check("127.0.0.1:8765", None, good) is None
    assert guard.check("localhost:8765", "http://localhost:8765", good) is None
    assert guard.check("[::1]:8765", "https://[::1]:8765", good) is None
    for host in ("evil.example:8765", "127.0.0.1.evil.example:8765", "127.0.0.1:9999", None):
        refused = guard.check(host, None, good)
        assert refused is not None and refused[0] == 421
    for origin in ("http://evil.example", "null", "http://127.0.0.1:1", "ftp://127.0.0.1:8765"):
        refused = guard.check("127.0.0.1:8765", origin, good)
        assert refused is not None and refused[0] == 403
    for token in (None, "", "Bearer wrong", "s3cret", "Basic s3cret"):
        refused = guard.check("127.0.0.1:8765", None, token)
        assert refused is not None and refused[0] == 401
    assert guard.check("127.0.0.1:8765", None, "bearer s3cret") is None


def test_allowed_origins_and_a_tokenless_guard() -> None:
    guard = HostGuard("127.0.0.1", token=None, port=80, allow_origins=["http://app.test/"])
    assert guard.check("127.0.0.1:80", "http://app.test", None) is None
    assert guard.check("127.0.0.1:80", None, None) is None


def test_waiting_connections_past_the_bound_close_the_oldest() -> None:
    closed: list[int] = []
    pending = PendingConnections(most=3)
    for n in range(5):
        pending.add(n, lambda n=n: closed.append(n))  # type: ignore[misc]
    pending.done(3)
    pending.add(5, lambda: closed.append(5))
    assert closed == [0, 1]
    assert len(pending) == 3


def test_a_connection_past_its_deadline_is_closed_once_and_a_cleared_one_never() -> None:
    now = [0.0]
    closed: list[str] = []
    deadlines = Deadlines(clock=lambda: now[0])
    deadlines.set("head", HEADER_SECONDS, lambda: closed.append("head"))
    deadlines.set("body", BODY_SECONDS, lambda: closed.append("body"))
    deadlines.set("done", 1.0, lambda: closed.append("done"))
    deadlines.clear("done")  # what it had to send arrived
    deadlines.set("head", HEADER_SECONDS, lambda: closed.append("head"))  # replaced, not added
    now[0] = min(HEADER_SECONDS, BODY_SECONDS) - 0.01
    assert deadlines.expire() == 0
    now[0] = max(HEADER_SECONDS, BODY_SECONDS)
    assert deadlines.expire() == 2
    assert sorted(closed) == ["body", "head"]
    assert deadlines.expire() == 0 and len(deadlines) == 0


@pytest.mark.parametrize(
    ("value", "deadlines"),
    [
        (None, (HEADER_SECONDS, BODY_SECONDS)),
        ("", (HEADER_SECONDS, BODY_SECONDS)),
        (" 2,0.5 ", (2.0, 0.5)),
        ("30, 60", (30.0, 60.0)),
    ],
)
def test_a_server_takes_its_deadlines_from_the_environment_or_the_defaults(
    value: str | None, deadlines: tuple[float, float]
) -> None:
    assert deadline_seconds({} if value is None else {DEADLINES_ENV: value}) == deadlines


@pytest.mark.parametrize("value", ["1", "1,2,3", "a,b", "0,1", "1,-1", "inf,1", "nan,1", "1,"])
def test_deadlines_that_are_not_two_positive_numbers_are_refused_by_name(value: str) -> None:
    with pytest.raises(ValueError, match=r"SKILLPACK_HTTP_DEADLINES=.*HEAD,BODY.*10,10"):
        deadline_seconds({DEADLINES_ENV: value})


def test_the_deadline_thread_closes_late_connections_by_itself() -> None:
    import threading

    closed = threading.Event()
    Deadlines(tick=0.01).set("slow", 0.0, closed.set)
    assert closed.wait(30)


def _record(message: str, exc: BaseException | None = None) -> logging.LogRecord:
    info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, (), info)


def test_one_line_per_episode_of_running_out_of_file_handles() -> None:
    now = [0.0]
    log = EpisodeLog({"no-handles": (out_of_handles, "out of file handles")}, clock=lambda: now[0])
    exhausted = OSError(errno.EMFILE, "Too many open files")
    kept = []
    for second in [*range(0, 20), *range(100, 110)]:  # two episodes, 80 s apart
        now[0] = float(second)
        for _ in range(50):
            record = _record("socket.accept() out of system resource", exhausted)
            if log.filter(record):
                kept.append(record)
    assert [r.getMessage() for r in kept] == ["out of file handles"] * 2
    assert all(r.exc_info is None for r in kept)
    other = _record("something else")
    assert log.filter(other) and other.getMessage() == "something else"


def test_an_episode_begins_at_the_first_sighting_and_after_a_quiet_spell() -> None:
    now = [0.0]
    episodes = Episodes(quiet=30.0, clock=lambda: now[0])
    seen = []
    for second in (0, 10, 39, 70, 71):
        now[0] = float(second)
        seen.append(episodes.begins("x"))
    assert seen == [True, False, False, True, False]
    assert episodes.begins("y")  # each condition its own episodes
