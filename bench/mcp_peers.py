"""The first listing of `skillpack mcp` beside the other Python MCP servers of SKILL.md
folders, each driven over stdio by the official SDK client in one run.

    python bench/bench_mcp.py --peers --real DIR       # DIR: a folder of real skills
    python bench/bench_mcp.py --peers --sizes 10000 --peers-dir ~/.cache/x

Peers, each in a virtualenv of its own under `--peers-dir` (default
`$XDG_CACHE_HOME/skillpack-bench/peers`), made with `--install-peers` (pip, from
PyPI) and skipped when absent:

- fastmcp: `fastmcp.skills.provider.SkillsDirectoryProvider` in a four-line server;
- agentskills-mcp-server: its CLI over a config with one `fs` provider;
- skillz: its CLI on the root.

Per server and corpus: start-up (spawn to the `initialize` result), the first
`skills/list` page (sent right after `initialized`, as a host does), and the skills
a walk of every page lists; a server that fails or times out is reported with why.
skillpack runs twice: with an empty index (cold) and again on the index the first
run left (warm).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

PEERS: dict[str, dict[str, Any]] = {
    "fastmcp": {"packages": ["fastmcp"], "python": "3.11"},
    # Its `fs` provider (serving a folder) is a package of its own.
    "agentskills-mcp-server": {
        "packages": ["agentskills-mcp-server", "agentskills-fs"],
        "python": "3.12",
    },
    "skillz": {"packages": ["skillz"], "python": "3.12"},
}
"""Peer -> the PyPI packages it runs with and the least Python it needs."""
FASTMCP_SERVER = """\
import sys
from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider
FastMCP("bench", providers=[SkillsDirectoryProvider(sys.argv[1:])]).run(show_banner=False)
"""


def default_peers_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "skillpack-bench" / "peers"


def _python_for(version: str) -> str | None:
    """An interpreter of at least `version` on PATH (this one when it is new enough)."""
    major, minor = (int(x) for x in version.split("."))
    if sys.version_info >= (major, minor):
        return sys.executable
    for candidate in (f"python{major}.{m}" for m in range(minor, minor + 4)):
        found = shutil.which(candidate)
        if found:
            return found
    return None


def install_peers(peers_dir: Path) -> dict[str, str]:
    """Create each peer's virtualenv and pip-install it; peer -> "ok" or why not."""
    peers_dir.mkdir(parents=True, exist_ok=True)
    report = {}
    for name, peer in PEERS.items():
        python = _python_for(peer["python"])
        if python is None:
            report[name] = f"no Python {peer['python']}+ on PATH"
            continue
        venv = peers_dir / name
        done = subprocess.run(
            [python, "-m", "venv", str(venv)], capture_output=True, text=True, check=False
        )
        if done.returncode == 0:
            pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
            done = subprocess.run(
                [*pip, *peer["packages"]],
                capture_output=True,
                text=True,
                check=False,
            )
        report[name] = "ok" if done.returncode == 0 else (done.stderr.strip()[-300:] or "failed")
    return report


def peer_command(name: str, peers_dir: Path, roots: list[str], work: Path) -> list[str] | None:
    """The stdio command of a peer serving `roots`, or None when it is not installed."""
    venv = peers_dir / name
    if name == "fastmcp":
        python = venv / "bin" / "python"
        if not python.exists():
            return None
        script = work / "fastmcp_server.py"
        script.write_text(FASTMCP_SERVER, encoding="utf-8")
        return [str(python), str(script), *roots]
    if name == "agentskills-mcp-server":
        cli = venv / "bin" / "agentskills-mcp-server"
        if not cli.exists():
            return None
        config = work / "agentskills.json"
        # One entry per skill: its id is the folder's name, under the folder holding it.
        skills = [
            {"id": folder.name, "provider": "fs", "options": {"root": str(folder.parent)}}
            for root in roots
            for folder in sorted(p.parent for p in Path(root).rglob("SKILL.md"))
            if not any(part.startswith(".") for part in folder.relative_to(root).parts)
        ]
        config.write_text(json.dumps({"name": "bench", "skills": skills}), encoding="utf-8")
        return [str(cli), "--config", str(config)]
    if name == "skillz":
        cli = venv / "bin" / "skillz"
        if not cli.exists() or len(roots) != 1:
            return None
        return [str(cli), roots[0]]
    raise ValueError(f"unknown peer {name!r}")


@dataclass
class FirstListing:
    """What one server did on one corpus."""

    start_s: float | None = None
    first_page_s: float | None = None
    served: int | None = None
    walk_s: float | None = None
    pages: int = 0
    left_out: int | None = None
    """What the server's `_meta` says it leaves out (skillpack), when it says."""
    failed: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "start_ms": _ms(self.start_s),
            "first_page_ms": _ms(self.first_page_s),
            "served": self.served,
            "walk_ms": _ms(self.walk_s),
            "pages": self.pages,
            "left_out": self.left_out,
            "failed": self.failed,
        }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


async def first_listing(command: list[str], env: dict[str, str], timeout: float) -> FirstListing:
    """Spawn `command`, initialize, ask the first `skills/list` page, walk the rest."""
    import anyio
    import mcp.types as types
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters
    from pydantic import TypeAdapter

    raw = TypeAdapter(dict[str, Any])

    class ListSkills(types.Request[types.PaginatedRequestParams, Literal["skills/list"]]):
        method: Literal["skills/list"] = "skills/list"

    result = FirstListing()
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    started = time.perf_counter()
    try:
        with anyio.fail_after(timeout):
            async with Client(params, mode="legacy") as client:
                result.start_s = time.perf_counter() - started

                async def page(cursor: str | None) -> dict[str, Any]:
                    request = ListSkills(params=types.PaginatedRequestParams(cursor=cursor))
                    return await client.session.send_request(request, raw)

                asked = time.perf_counter()
                first = await page(None)
                result.first_page_s = time.perf_counter() - asked
                meta = first.get("_meta") or {}
                told = meta.get("io.skillpack/leftOut")
                if isinstance(told, dict):
                    result.left_out = told.get("count")
                served, cursor, result.pages = len(first.get("skills", [])), None, 1
                cursor = first.get("nextCursor")
                while cursor is not None:
                    more = await page(cursor)
                    served += len(more.get("skills", []))
                    result.pages += 1
                    cursor = more.get("nextCursor")
                result.served = served
                result.walk_s = time.perf_counter() - asked
    except Exception as exc:  # noqa: BLE001 - a peer that fails is a result, not a crash
        leaf: BaseException = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, TimeoutError):
            result.failed = f"no answer within {timeout:.0f} s"
        else:
            text = str(leaf).strip().splitlines()
            where = "start-up" if result.start_s is None else "skills/list"
            result.failed = f"{where}: {type(leaf).__name__}: {text[0][:100] if text else ''}"
    return result


def quiet(command: list[str], log: Path) -> list[str]:
    """`command` with its stderr appended to `log` (banners and logs off the screen)."""
    return ["sh", "-c", f'exec "$@" 2>>"{log}"', "sh", *command]
