"""An `[[mcp_servers]]` upstream that answers a 5-byte file
or its listing with 300 MB, and publishes names no folder could have or look-alike
names; over stdio, and over streamable HTTP answering with JSON bodies or with
server-sent events. skillpack runs in a child process here, which reports its own
peak memory."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

UPSTREAM = Path(__file__).with_name("hostile_upstream.py")
PEAK_MB = 160
"""skillpack's peak memory (`VmHWM`, read by the child itself) with an upstream sending
300 MB (before the bound it took 936 MB for the read): its imports and a few copies of
one bounded message (`_mcp_wire.MESSAGE_MAX_BYTES`, 22.3 MiB). Measured 89-103 MB.
`VmHWM` belongs to the process's own address space, made new by exec; `ru_maxrss` is
not (it keeps the peak of the process before exec, a fork of the test runner, whose
size moves with the suite around it)."""
TRANSPORTS = ("stdio", "json", "sse")


DRIVER = """
import json, sys
from skillpack.config._schema import McpServerConfig
from skillpack.runtime._mcp_skills import McpSkills

target, mode = sys.argv[1], sys.argv[2]
if target.startswith("http"):
    server = McpServerConfig(name="up", url=target, timeout=60)
else:
    server = McpServerConfig(name="up", command=sys.executable, args=(target, mode), timeout=60)
skills = McpSkills([server])
try:
    catalog = skills.catalog()
    out = {"names": [s.name for s in catalog.skills],
           "problems": [[p.code, p.message] for p in catalog.problems]}
    plain = [s for s in catalog.skills if s.name == "plain"]
    if plain:
        try:
            out["read_bytes"] = len(skills.read_file(plain[0], "notes.txt"))
            out["read"] = "read"
        except Exception as exc:
            out["read"] = f"{type(exc).__name__}: {exc}"
finally:
    skills.close()
with open("/proc/self/status", encoding="ascii") as status:
    out["peak_mb"] = next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) // 1024
print(json.dumps(out))
"""


@contextmanager
def upstream(mode: str, transport: str) -> Iterator[str]:
    """What the driver connects to: the script (stdio) or the URL of it serving HTTP."""
    if transport == "stdio":
        yield str(UPSTREAM)
        return
    with subprocess.Popen(
        [sys.executable, str(UPSTREAM), mode, "--http", transport],
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            yield process.stdout.readline().strip()
        finally:
            process.kill()


def run(mode: str, transport: str = "stdio") -> dict[str, Any]:
    with upstream(mode, transport) as target:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, target, mode],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_huge_read_is_cut_while_it_streams(transport: str) -> None:
    from skillpack.runtime._mcp_wire import MESSAGE_MAX_BYTES

    result = run("huge-read", transport)
    assert result["read"].startswith("SkillIOError"), result
    assert f"over {MESSAGE_MAX_BYTES} bytes" in result["read"], result
    assert result["peak_mb"] < PEAK_MB, result


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_huge_listing_is_cut_while_it_streams(transport: str) -> None:
    from skillpack.runtime._mcp_wire import MESSAGE_MAX_BYTES

    result = run("huge-list", transport)
    assert result["names"] == []
    codes = [code for code, _message in result["problems"]]
    assert codes == ["mcp-server-unavailable"], result
    assert f"over {MESSAGE_MAX_BYTES} bytes" in result["problems"][0][1], result
    assert result["peak_mb"] < PEAK_MB, result


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_names_no_folder_could_have_are_refused_and_look_alikes_warned(transport: str) -> None:
    result = run("names", transport)
    assert sorted(result["names"]) == ["pdf-t\u043e\u043els", "plain"]
    problems = result["problems"]
    refused = [m for code, m in problems if code == "mcp-skill-invalid"]
    assert len(refused) == 2
    assert any("'../../evil'" in m and "path rather than a name" in m for m in refused)
    assert any("bell\\x07name" in m and "control" in m for m in refused)
    assert all("\x07" not in m for _code, m in problems)
    codes = sorted(code for code, _m in problems)
    assert codes == ["mcp-skill-invalid", "mcp-skill-invalid", "name-invalid", "name-mixed-script"]
    mixed = next(m for code, m in problems if code == "name-mixed-script")
    assert "CYRILLIC and LATIN" in mixed
    assert result["read"] == "read"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_file_over_one_mib_is_read_whole_over_every_transport(transport: str) -> None:
    """The SDK's default limit on one server-sent event (1 MiB) refused it over SSE."""
    result = run("big-file", transport)
    assert result["names"] == ["plain"], result
    assert (result["read"], result["read_bytes"]) == ("read", 2 * 1024 * 1024), result


def test_skills_an_upstream_floods_are_left_out_of_the_listing_not_the_whole_of_it(
    tmp_path: Path,
) -> None:
    """`skillpack mcp` lists its own skills beside an upstream whose reads are huge:
    each skill it cannot read is left out with the reason (the page once failed)."""
    skills = tmp_path / "skills" / "alpha"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: Alpha does things.\n---\nBody\n", encoding="utf-8"
    )
    project = tmp_path / "project"
    (project / ".skillpack").mkdir(parents=True)
    (project / ".skillpack" / "config.toml").write_text(
        f'[[mcp_servers]]\nname = "up"\ncommand = {json.dumps(sys.executable)}\n'
        f"args = [{json.dumps(str(UPSTREAM))}, 'huge-read']\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp", "--check"]
        + ["--json", "--cwd", str(project), "--root", str(skills.parent)]
        + ["--no-user", "--no-system"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    report = json.loads(done.stdout)
    assert [s["name"] for s in report["skills"]] == ["alpha"], report
    left_out = {e["name"]: e for e in report["leftOut"]}
    assert left_out["plain"]["kind"] == "not-listable"
    assert "cannot be read now" in left_out["plain"]["message"]
    assert "over" in left_out["plain"]["message"] and ".." not in left_out["plain"]["message"]


def test_serve_keeps_an_upstreams_skills_when_a_flood_cuts_the_listing_of_a_refresh(
    tmp_path: Path,
) -> None:
    """`bench/soak.py`, serve-http: requests for the upstream's `plain` got "No skill
    named 'plain'" for the rest of the run. A refresh had listed the upstream while a
    flood's answer was cutting the connection; the listing failed with it and the
    upstream's skills left the catalog until some later refresh. Here the upstream
    holds the flood's answer until the refresh's listing is in flight (mode
    `huge-file-late`): the listing is asked again on a new connection, nothing leaves."""
    from skillpack.rpc import Client
    from skillpack.rpc._types import Notification

    mark = tmp_path / "flood-arrived"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".skillpack").mkdir()
    (project / ".skillpack" / "config.toml").write_text(
        f'[[mcp_servers]]\nname = "up"\ncommand = {json.dumps(sys.executable)}\n'
        f"args = {json.dumps([str(UPSTREAM), 'huge-file-late', str(mark)])}\ntimeout = 60\n",
        encoding="utf-8",
    )
    args = ("--cwd", str(project), "--no-user", "--no-system")
    with Client.stdio(*args, timeout=120) as client:
        listed = client.skills_list()["data"][0]["skills"]
        assert "up:plain" in [s["qualified_name"] for s in listed]
        heard: list[Notification] = []
        client.on_notification(heard.append)
        flood: dict[str, Any] = {}
        reader = threading.Thread(
            target=lambda: flood.update(client.skills_read_file("up:plain", "notes.txt"))
        )
        reader.start()
        deadline = time.monotonic() + 60
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert mark.exists(), "the flood never reached the upstream"
        client.skills_reload()
        reader.join(timeout=120)

        assert flood["ok"] is False and " over " in flood["error"]["message"], flood
        removed = [s["name"] for n in heard for s in n["params"]["removed"]]
        assert "plain" not in removed, heard
        listing = client.skills_list()["data"][0]
        assert "up:plain" in [s["qualified_name"] for s in listing["skills"]]
        assert "mcp-server-unavailable" not in [p["code"] for p in listing["errors"]]
        read = client.skills_read_file("up:plain", "SKILL.md")
        assert read["ok"] is True, read
