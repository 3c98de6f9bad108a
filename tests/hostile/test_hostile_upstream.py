"""Issue 21, points 2 and 5: an `[[mcp_servers]]` upstream that answers a 5-byte file
or its listing with 300 MB, and publishes names no folder could have or look-alike
names. skillpack runs in a child process here, so its peak memory is its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

UPSTREAM = Path(__file__).with_name("hostile_upstream.py")
PEAK_MB = 600
"""skillpack's peak RSS with a hostile upstream sending 300 MB (before the bound it took
936 MB for the read). Measured: about 90 MB when this file runs alone (its imports and a
few copies of one bounded message, `_mcp_wire.MESSAGE_MAX_BYTES`, 22.3 MiB), but 251 and
355 MB inside the whole suite; why the peak moves with the suite around it is not yet
known (issue 21 stays open for it), so the bound leaves room above what was seen."""


DRIVER = """
import json, resource, sys
from skillpack.config._schema import McpServerConfig
from skillpack.runtime._mcp_skills import McpSkills

server = McpServerConfig(name="up", command=sys.executable, args=(sys.argv[1], sys.argv[2]),
                         timeout=60)
skills = McpSkills([server])
try:
    catalog = skills.catalog()
    out = {"names": [s.name for s in catalog.skills],
           "problems": [[p.code, p.message] for p in catalog.problems]}
    plain = [s for s in catalog.skills if s.name == "plain"]
    if plain:
        try:
            skills.read_file(plain[0], "notes.txt")
            out["read"] = "read"
        except Exception as exc:
            out["read"] = f"{type(exc).__name__}: {exc}"
finally:
    skills.close()
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(json.dumps(out))
"""


def run(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(UPSTREAM), mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_huge_read_is_cut_while_it_streams() -> None:
    result = run("huge-read")
    assert result["read"].startswith("SkillIOError"), result
    assert "over" in result["read"] and "bytes" in result["read"]
    assert result["peak_mb"] < PEAK_MB, result


def test_a_huge_listing_is_cut_while_it_streams() -> None:
    result = run("huge-list")
    assert result["names"] == []
    codes = [code for code, _message in result["problems"]]
    assert codes == ["mcp-server-unavailable"], result
    assert "over" in result["problems"][0][1]
    assert result["peak_mb"] < PEAK_MB, result


def test_names_no_folder_could_have_are_refused_and_look_alikes_warned() -> None:
    result = run("names")
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
