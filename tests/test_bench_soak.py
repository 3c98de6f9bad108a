"""bench/soak.py keeps working: each server until it answered a few well-formed requests
and got every kind of hostile traffic (not timed), the report's shape, and no error for a
well-formed request."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SERVERS = ["mcp-http", "mcp-stdio", "serve-http", "serve-stdio"]


@pytest.mark.timeout(600)  # four servers started and stopped, each quiet twice
def test_soak_runs_every_server_and_reports_requests_latency_memory_and_files(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "soak.py"), "--requests", "20", "--seconds", "120"]
        + ["--warmup", "0", "--settle", "0.5"]
        + ["--skills", "30", "--clients", "2", "--sessions", "10", "--json"]
        + ["--servers", ",".join(SERVERS), "--work-dir", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    # The exit code also says whether RSS grew by 10% in a second, which is noise here.
    data = json.loads(done.stdout)
    assert [r["server"] for r in data["results"]] == SERVERS, done.stderr[-3000:]
    for result in data["results"]:
        assert result["errors"] == 0, result["first_errors"]
        assert result["requests"] >= 20 and 0 < result["p50_ms"] <= result["p99_ms"]
        assert result["seconds"] < 120, "--requests ended the run, not --seconds"
        assert result["rss_start_kib"] > 0 and result["rss_end_kib"] > 0
        assert result["files_start"] > 0 and result["files_end"] > 0
        assert isinstance(result["ok"], bool) and result["tracebacks"] == 0
        kinds = set(result["hostile"])
        assert {"upstream-flood", "bad-body"} <= kinds, result
        if result["server"].endswith("http"):
            assert {"session-never-closed", "slow-drip", "slow-idle", "slow-no-body"} <= kinds
    assert done.returncode == (0 if all(r["ok"] for r in data["results"]) else 1)
