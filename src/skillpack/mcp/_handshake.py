"""The SDK server's `initialize` answer, recorded for the stdio front (`_front`).

The SDK server (`_server.SkillServer`) is the one place that states what `skillpack
mcp` can do: the handlers it registers, its change notifications and its extensions,
from which the SDK builds the `initialize` result. The front answers `initialize`
before the SDK is imported (importing it costs more than discovering the catalog), so
it cannot ask. Instead, what that result holds apart from what each request decides
(the protocol version asked for, the instructions, the package version) is recorded
from a live SDK server into `_handshake.json`, beside the SDK's handshake-era protocol
versions; the front builds its answer from the record (`Handshake.result`).

`python -m skillpack.mcp._handshake` writes the record again (after a change to the
server's capabilities or an SDK upgrade); `tests/mcp/test_handshake.py` fails while
the record and a live server disagree.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .._version import __version__

RECORD: Final = Path(__file__).with_name("_handshake.json")
_UNKNOWN_VERSION: Final = "1999-01-01"
"""A protocol version no SDK speaks: the server answers it with its latest."""


@dataclass(frozen=True, kw_only=True)
class Handshake:
    """What the SDK server answers every handshake-era `initialize` with."""

    versions: tuple[str, ...]
    """The SDK's handshake-era protocol versions (`HANDSHAKE_PROTOCOL_VERSIONS`)."""
    fallback: str
    """The version a client asking for another one gets (the SDK's latest)."""
    capabilities: dict[str, Any]
    """`result.capabilities`, as the SDK server writes them."""
    server_info: dict[str, Any]
    """`result.serverInfo` without its `version` (this package's, added on answering)."""

    def result(self, asked: str, instructions: str) -> dict[str, Any]:
        """The `initialize` result for a client asking for protocol version `asked`."""
        return {
            "capabilities": self.capabilities,
            "instructions": instructions,
            "protocolVersion": asked if asked in self.versions else self.fallback,
            "serverInfo": {**self.server_info, "version": __version__},
        }

    def to_json(self) -> str:
        """The record's text (`_handshake.json`)."""
        data = {
            "handshakeVersions": list(self.versions),
            "fallbackVersion": self.fallback,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@functools.cache
def recorded() -> Handshake:
    """The record the front answers from (read once per process)."""
    data = json.loads(RECORD.read_text(encoding="utf-8"))
    return Handshake(
        versions=tuple(data["handshakeVersions"]),
        fallback=data["fallbackVersion"],
        capabilities=data["capabilities"],
        server_info=data["serverInfo"],
    )


def observe() -> Handshake:
    """What a live SDK server answers now: `skillpack mcp` with the front off, over an
    empty root in a scratch home, asked for a version no SDK speaks.

    Raises:
        RuntimeError: the server did not answer `initialize` with a result.
    """
    import os
    import subprocess
    import sys
    import tempfile

    from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

    params = {"protocolVersion": _UNKNOWN_VERSION, "capabilities": {}}
    params["clientInfo"] = {"name": "skillpack-handshake", "version": "1"}
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    with tempfile.TemporaryDirectory() as scratch:
        env = {k: v for k, v in os.environ.items() if k != "SKILLPACK_CACHE_DIR"}
        env.update(SKILLPACK_HOME=scratch, SKILLPACK_MCP_FAST_START="0")
        command = [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]
        command += ["--no-user", "--no-system", "--root", scratch, "--cwd", scratch]
        done = subprocess.run(
            command, input=line + "\n", capture_output=True, text=True, env=env, timeout=120
        )
    answers = [json.loads(text) for text in done.stdout.splitlines() if text.strip()]
    if not answers or "result" not in answers[0]:
        raise RuntimeError(f"`skillpack mcp` did not answer initialize: {done.stderr.strip()}")
    result = answers[0]["result"]
    server_info = dict(result["serverInfo"])
    if server_info.pop("version", None) != __version__:
        raise RuntimeError(f"the server said version {result['serverInfo']}, not {__version__}")
    return Handshake(
        versions=tuple(HANDSHAKE_PROTOCOL_VERSIONS),
        fallback=result["protocolVersion"],
        capabilities=result["capabilities"],
        server_info=server_info,
    )


if __name__ == "__main__":
    RECORD.write_text(observe().to_json(), encoding="utf-8")
    print(f"wrote {RECORD}")
