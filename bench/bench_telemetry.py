"""What the OpenTelemetry hooks cost a tool call when tracing is off.

    python bench/bench_telemetry.py            # 200,000 calls of each, best of 7
    python bench/bench_telemetry.py --check    # exit 1 past 2 us per call

`SkillTools.call` asks `_telemetry.tracer()` first; off, it returns None and the call
goes straight to the tool. Measured in one run, each in a child process of its own
(the state is process-wide):

- **not imported**: no module imported `opentelemetry` (a host that does not trace);
- **API, no provider**: `opentelemetry.trace` imported (the MCP SDK imports it), the
  global provider still the API's proxy;
- **floor**: an empty Python call, the cost of any function call on this machine.

Each row prints the nanoseconds per `tracer()` call, best of the repeats, and its ratio
to the floor. For scale, one `skill_read_file` call (the tool's own work, tracing off)
is shown too. Target: at most 2 us per call (2,000 ns) in both off states.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

TARGET_NS = 2000.0

CHILD = textwrap.dedent(
    """
    import json, sys, tempfile, timeit
    from pathlib import Path
    mode, calls, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if mode == "api":
        import opentelemetry.trace  # noqa: F401 - the proxy provider, no SDK
    from skillpack import _telemetry

    def empty():
        return None

    if mode == "tool":
        from skillpack import Session
        from skillpack.runtime._tools import SkillTools
        root = Path(tempfile.mkdtemp())
        (root / "alpha").mkdir()
        (root / "alpha" / "SKILL.md").write_text(
            "---\\nname: alpha\\ndescription: A. Use it.\\n---\\n# a\\n", encoding="utf-8")
        session = Session.open(cwd=str(root), roots=[str(root)], include_user=False,
                               include_system=False, use_cache=False)
        tools = SkillTools(session)
        args = {"skill": "alpha", "path": "SKILL.md"}
        target = lambda: tools.call("skill_read_file", args)
        calls = max(1, calls // 100)
    else:
        target = empty if mode == "floor" else _telemetry.tracer
    assert mode in ("floor", "tool") or target() is None, "tracing must be off"
    best = min(timeit.repeat(target, number=calls, repeat=repeats)) / calls
    print(json.dumps({"mode": mode, "ns": best * 1e9,
                      "otel_imported": "opentelemetry" in sys.modules}))
    """
)


def measure(mode: str, calls: int, repeats: int) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(calls), str(repeats)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    rows = {m: measure(m, args.calls, args.repeats) for m in ("floor", "off", "api", "tool")}
    floor = float(rows["floor"]["ns"])  # type: ignore[arg-type]
    labels = {
        "floor": "floor: an empty call",
        "off": "off, opentelemetry not imported",
        "api": "off, API imported, no provider",
        "tool": "one skill_read_file call (tracing off)",
    }
    if args.json:
        print(json.dumps({"rows": rows, "floor_ns": floor, "target_ns": TARGET_NS}))
    else:
        print(f"{'what':42} {'ns/call':>10} {'x floor':>8}")
        for mode, row in rows.items():
            ns = float(row["ns"])  # type: ignore[arg-type]
            print(f"{labels[mode]:42} {ns:10.0f} {ns / floor:8.1f}")
        print(f"target: the hook costs at most {TARGET_NS:.0f} ns per call when tracing is off")
    worst = max(float(rows[m]["ns"]) for m in ("off", "api"))  # type: ignore[arg-type]
    if args.check and worst > TARGET_NS:
        print(f"FAIL: {worst:.0f} ns per call > {TARGET_NS:.0f} ns", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
