"""The wire to an upstream (`runtime/_mcp_wire.py`): how a stdio server is stopped."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP client needs the mcp extra")

from skillpack._errors import SkillIOError  # noqa: E402
from skillpack.config._schema import McpServerConfig  # noqa: E402
from skillpack.runtime import _mcp_wire  # noqa: E402
from skillpack.runtime._mcp_skills import McpSkills  # noqa: E402

UPSTREAM = Path(__file__).parents[1] / "hostile" / "hostile_upstream.py"


def test_a_server_whose_too_large_answer_is_left_unread_is_stopped_without_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It sits blocked writing the rest of its 300 MB, so closing its stdin cannot end
    it: it is terminated at once, not after `STOP_SECONDS` (a minute here)."""
    monkeypatch.setattr(_mcp_wire, "STOP_SECONDS", 60.0)
    server = McpServerConfig(
        name="up", command=sys.executable, args=(str(UPSTREAM), "huge-read"), timeout=60
    )
    skills = McpSkills([server])
    try:
        (plain,) = [s for s in skills.catalog().skills if s.name == "plain"]
        began = time.monotonic()
        with pytest.raises(SkillIOError, match=f"over {_mcp_wire.MESSAGE_MAX_BYTES} bytes"):
            skills.read_file(plain, "notes.txt")
    finally:
        skills.close()
    assert time.monotonic() - began < 8  # waiting for it to exit took 20 s here


def test_a_server_that_exits_when_its_input_closes_is_never_signalled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Closed cleanly, a server gets its time to exit: no terminate, no kill."""
    signals: list[str] = []

    class Watched:
        def __init__(self, process: object) -> None:
            self._process = process

        def __getattr__(self, name: str) -> object:
            attribute = getattr(self._process, name)
            if name not in ("terminate", "kill"):
                return attribute

            def signal() -> object:
                signals.append(name)
                return attribute()

            return signal

    real_stop = _mcp_wire._stop

    async def stop(process: object, **kwargs: bool) -> None:
        await real_stop(Watched(process), **kwargs)

    monkeypatch.setattr(_mcp_wire, "_stop", stop)
    server = McpServerConfig(
        name="up", command=sys.executable, args=(str(UPSTREAM), "names"), timeout=60
    )
    skills = McpSkills([server])
    try:
        (plain,) = [s for s in skills.catalog().skills if s.name == "plain"]
        assert skills.read_file(plain, "notes.txt")
    finally:
        skills.close()
    assert signals == []
