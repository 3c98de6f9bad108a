"""The `initialize` answer the stdio front sends is the SDK server's, recorded."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the mcp extra")

from mcp.types.version import (  # noqa: E402
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
)

from skillpack._version import __version__  # noqa: E402
from skillpack.mcp._handshake import RECORD, observe, recorded  # noqa: E402


def test_the_record_is_what_a_live_sdk_server_answers() -> None:
    live = observe()
    assert live == recorded(), (
        "skillpack mcp's initialize answer changed (its capabilities, or the SDK): "
        "run `python -m skillpack.mcp._handshake` to record it again"
    )
    assert RECORD.read_text(encoding="utf-8") == live.to_json()


def test_the_record_has_the_sdks_handshake_versions() -> None:
    assert recorded().versions == tuple(HANDSHAKE_PROTOCOL_VERSIONS)
    assert recorded().fallback == LATEST_HANDSHAKE_VERSION


@pytest.mark.parametrize(
    ("asked", "answered"),
    [(v, v) for v in HANDSHAKE_PROTOCOL_VERSIONS] + [("1999-01-01", LATEST_HANDSHAKE_VERSION)],
)
def test_a_client_gets_the_version_it_asks_for_or_the_latest(asked: str, answered: str) -> None:
    result = recorded().result(asked, "the instructions")
    assert result["protocolVersion"] == answered
    assert result["instructions"] == "the instructions"
    assert result["serverInfo"] == {"name": "skillpack", "version": __version__}
    assert result["capabilities"] is recorded().capabilities
