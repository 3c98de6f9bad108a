"""The picker's speed (`skillpack ui`): first paint and filter keystrokes at 10,000 skills.

    python bench/bench_tui.py                  # 10,000 skills, warm index
    python bench/bench_tui.py --skills 1000 --json
    python bench/bench_tui.py --check          # exit 1 when a target fails

Targets: on a warm 10,000-skill index, the first paint under 0.5 s and a
filter keystroke under 50 ms. Beside them, in the same run on the same tree, the
wall time of `skillpack list --json` (spawn to exit), the peer a person would
otherwise run.

How it measures. The index is warmed first (`skillpack list --json` and a
`skillpack search`, untimed, so the parse cache and the search tables are built).
A child process then drives the app headless (`App.run_test`, 120x40): it opens the
session as `skillpack ui` does (config, every scope, `refresh="watch"`), mounts the
app, and records when the list draws its first row (`SkillList.render_line`):
*first paint* is that moment minus the start of `Session.open`, so discovery, the
app's mount and layout are in it; the imports (Python, Textual) are shown apart.
As `skillpack ui` does, the session turns live (`refresh="watch"`) once the list is
drawn and search is ready. Then it types queries one key at a time (names, words, a
folder, a typo, and clearing): each *keystroke* is the time from sending the key to
the list drawing its first row after the filter ran, which includes ranking 10,000
skills, swapping the rows and the next frame; the filter's own share (`rank` plus
the list update) and the UI thread's CPU time are shown too. Medians and p99 over
every keystroke. The first query is typed at once after the first paint, while
search syncs and the watcher starts, and reported on its own row; the others after
those have settled. The floor is Textual itself: an app whose input line updates
one label, typed the same keys the same way in a fresh process; a keystroke can
take no less than that on this machine at this moment, and `keystroke / floor`
moves much less with the machine's load than either number.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import (
    Stats,
    ensure_corpus,
    format_table,
    isolated_env,
    machine_info,
    ms,
    repeat_timed,
    skillpack_command,
    work_dir,
)

FIRST_PAINT_TARGET_S = 0.5
KEYSTROKE_TARGET_S = 0.050
SIZE = (120, 40)
SETTLE_S = 1.5
"""After the first query: time for the watcher's start (a recursive watch and one
catching-up refresh) to finish before the measured keystrokes."""


# -- the child: drive the app headless ----------------------------------------------------


def drive(roots: list[str], cwd: str, queries: list[str]) -> dict[str, Any]:
    """Run in a fresh interpreter: import, open, paint, then type `queries`."""
    started = time.perf_counter()
    from skillpack.cli._ui_cmds import settle_heap
    from skillpack.runtime._session import Session, refresh_mode
    from skillpack.tui import _app, _list

    imported = time.perf_counter()
    painted: list[float] = []  # when the list drew a line after a filter ran
    first_row: list[float] = []
    filtered = [False]
    real_render_line = _list.SkillList.render_line

    def render_line(self: Any, y: int) -> Any:
        now = time.perf_counter()
        if filtered[0]:  # lines drawn before the filter ran show the old rows
            painted.append(now)
        if self.hits and not first_row:
            first_row.append(now)
        return real_render_line(self, y)

    _list.SkillList.render_line = render_line  # type: ignore[method-assign]
    filter_times: list[float] = []
    real_apply = _app.PickerApp.apply_filter

    def apply_filter(self: Any, query: str, **kwargs: Any) -> None:
        begin = time.perf_counter()
        real_apply(self, query, **kwargs)
        filter_times.append(time.perf_counter() - begin)
        filtered[0] = True

    _app.PickerApp.apply_filter = apply_filter  # type: ignore[method-assign]

    async def run() -> dict[str, Any]:
        opening = time.perf_counter()
        session = Session.open(cwd=cwd, extra_roots=roots)  # as `skillpack ui`: live after paint
        settle_heap()  # as `skillpack ui`
        opened = time.perf_counter()
        app = _app.PickerApp(session, cwd=cwd, live=True, on_ready=settle_heap)

        cpu: list[float] = []

        async def typed(pilot: Any, query: str) -> list[float]:
            times = []
            for key in [*_keys(query), "ctrl+u"]:
                count = app.filter_count
                painted.clear()
                filtered[0] = False
                sent, sent_cpu = time.perf_counter(), time.thread_time()
                await pilot.press(key)
                deadline = sent + 10
                while app.filter_count == count or not painted:
                    if time.perf_counter() > deadline:
                        raise RuntimeError(f"no redraw after {key!r} (query {query!r})")
                    await asyncio.sleep(0.0005)
                times.append(painted[0] - sent)
                cpu.append(time.thread_time() - sent_cpu)
            return times

        async with app.run_test(size=SIZE) as pilot:
            while not first_row:
                if time.perf_counter() > opened + 30:
                    raise RuntimeError("the list never drew a row")
                await asyncio.sleep(0.001)
            first_paint = first_row[0] - opening
            skills = len(app.skill_list.hits)
            # Typed at once: search's sync and the watcher's start run meanwhile.
            early = await typed(pilot, queries[0])
            await app.workers.wait_for_complete()
            await asyncio.sleep(SETTLE_S)  # the watcher's catching-up refresh is done
            filter_times.clear()
            cpu.clear()
            keystrokes = [t for query in queries[1:] for t in await typed(pilot, query)]
            live = refresh_mode(session)
        session.close()
        return {
            "skills": skills,
            "import_s": imported - started,
            "open_s": opened - opening,
            "first_paint_s": first_paint,
            "early_keystroke_s": early,
            "keystroke_s": keystrokes,
            "keystroke_cpu_s": list(cpu),
            "filter_s": list(filter_times),
            "refresh_mode": live,
        }

    return asyncio.run(run())


def drive_floor(queries: list[str]) -> dict[str, Any]:
    """The floor, in a fresh interpreter: Textual's own cost of a keystroke.

    An app with an input line and one label that shows the typed text (no layout
    pass, like the picker's status line), typed the same keys the same way: what
    any Textual app pays from a key to the frame that shows it.
    """
    from textual.app import App, ComposeResult
    from textual.widgets import Input, Static

    painted: list[float] = []
    updated = [False]

    class Label(Static):
        def render_line(self, y: int) -> Any:
            if updated[0]:  # lines drawn before the update show the old text
                painted.append(time.perf_counter())
            return super().render_line(y)

    class Floor(App[None]):
        count = 0

        def compose(self) -> ComposeResult:
            yield Input(id="typed")
            yield Label("", id="shown")

        def on_input_changed(self, event: Input.Changed) -> None:
            self.query_one(Label).update(event.value or "-", layout=False)
            self.count += 1
            updated[0] = True

    async def run() -> dict[str, Any]:
        app = Floor()
        times: list[float] = []
        cpu: list[float] = []
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            for query in queries[1:]:
                for key in [*_keys(query), "ctrl+u"]:
                    count = app.count
                    painted.clear()
                    updated[0] = False
                    sent, sent_cpu = time.perf_counter(), time.thread_time()
                    await pilot.press(key)
                    while app.count == count or not painted:
                        await asyncio.sleep(0.0005)
                    times.append(painted[0] - sent)
                    cpu.append(time.thread_time() - sent_cpu)
        return {"keystroke_s": times, "keystroke_cpu_s": cpu}

    return asyncio.run(run())


def _keys(query: str) -> list[str]:
    names = {" ": "space", "/": "slash", "-": "minus", ":": "colon", "_": "underscore"}
    return [names.get(ch, ch) for ch in query]


# -- the parent: corpus, peers, report ------------------------------------------------------


def queries_for(corpus_roots: list[Path], seed: int) -> list[str]:
    """What a person types: parts of real names, description words, a folder, a typo."""
    from skillpack._model import Root
    from skillpack.discovery._discover import discover

    catalog = discover(
        roots=[Root(path=str(r), scope="extra") for r in corpus_roots], use_cache=True
    )
    rng = random.Random(seed)
    skills = rng.sample(list(catalog.skills), 6)
    words = [w for s in skills for w in s.description.split() if w.isalpha() and len(w) > 5]
    name = skills[3].name
    typo = name[1] + name[0] + name[2:] if len(name) > 2 else name + "x"
    return [
        skills[0].name[:10],
        skills[1].name[:6],
        " ".join(rng.sample(words, 2)),
        skills[2].name.split("-")[0] + " " + words[0],
        typo[:9],
        "cat-0",
    ]


def measure(work: Path, n_skills: int, repeat: int, seed: int) -> dict[str, Any]:
    env = isolated_env(work)
    os.environ.update(env)
    corpus = ensure_corpus(work / "corpora", n_skills)
    roots = [str(r) for r in corpus.roots]
    root_args = [arg for r in roots for arg in ("--root", r)]
    cwd = work / "cwd"
    cwd.mkdir(exist_ok=True)
    sp = skillpack_command()
    listing = [*sp, "list", "--json", *root_args]
    # Warm the index: the parse cache, then the search tables the filter queries.
    subprocess.run(listing, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(
        [*sp, "search", "deploy", *root_args],
        env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    queries = queries_for(corpus.roots, seed)
    peer = repeat_timed(repeat, listing, env=env, cwd=cwd)
    runs = []
    for _ in range(repeat):
        child = subprocess.run(
            [sys.executable, __file__, "--drive", json.dumps([roots, str(cwd), queries])],
            env=env, cwd=cwd, check=True, capture_output=True, text=True,
        )  # fmt: skip
        runs.append(json.loads(child.stdout))
    floors = []
    for _ in range(repeat):
        child = subprocess.run(
            [sys.executable, __file__, "--drive-floor", json.dumps(queries)],
            env=env, cwd=cwd, check=True, capture_output=True, text=True,
        )  # fmt: skip
        floors.append(json.loads(child.stdout))
    floor = Stats.of([s for run in floors for s in run["keystroke_s"]])
    floor_cpu = Stats.of([s for run in floors for s in run["keystroke_cpu_s"]])
    keystroke_cpu = Stats.of([s for run in runs for s in run["keystroke_cpu_s"]])
    keystrokes = Stats.of([s for run in runs for s in run["keystroke_s"]])
    early = Stats.of([s for run in runs for s in run["early_keystroke_s"]])
    filters = Stats.of([s for run in runs for s in run["filter_s"]])
    paint = Stats.of([run["first_paint_s"] for run in runs])
    return {
        "skills": runs[0]["skills"],
        "queries": queries,
        "list_json": peer.wall.to_dict(),
        "import": Stats.of([run["import_s"] for run in runs]).to_dict(),
        "session_open": Stats.of([run["open_s"] for run in runs]).to_dict(),
        "first_paint": paint.to_dict(),
        "keystroke": keystrokes.to_dict(),
        "keystroke_cpu": keystroke_cpu.to_dict(),
        "floor_keystroke": floor.to_dict(),
        "floor_keystroke_cpu": floor_cpu.to_dict(),
        "early_keystroke": early.to_dict(),
        "refresh_mode": runs[0]["refresh_mode"],
        "filter": filters.to_dict(),
        "targets": {
            "first_paint_s": FIRST_PAINT_TARGET_S,
            "keystroke_s": KEYSTROKE_TARGET_S,
            "first_paint_ok": paint.median < FIRST_PAINT_TARGET_S,
            "keystroke_ok": keystrokes.p99 < KEYSTROKE_TARGET_S,
        },
        "ratios": {
            "first_paint_vs_list_json": paint.median / peer.wall.median,
            "keystroke_p50_vs_list_json": keystrokes.median / peer.wall.median,
            "keystroke_p50_vs_floor": keystrokes.median / floor.median,
            "keystroke_cpu_p50_vs_floor": keystroke_cpu.median / floor_cpu.median,
        },
        "machine": machine_info(),
    }


def report(result: dict[str, Any]) -> str:
    def row(label: str, key: str, target: float | None) -> list[object]:
        data = result[key]
        median, p99 = data["median"] / 1000, data["p99"] / 1000
        judged = p99 if key == "keystroke" else median
        mark = "" if target is None else ("ok" if judged < target else "MISSED")
        return [label, ms(median), ms(p99), "-" if target is None else ms(target), mark]

    rows = [
        row("skillpack list --json (peer, wall)", "list_json", None),
        row("import skillpack.tui (Textual)", "import", None),
        row("Session.open (discovery)", "session_open", None),
        row("first paint (open + mount + draw)", "first_paint", FIRST_PAINT_TARGET_S),
        row("keystroke -> list redrawn", "keystroke", KEYSTROKE_TARGET_S),
        row("  of which the filter (rank + rows)", "filter", None),
        row("  UI thread CPU per keystroke cycle", "keystroke_cpu", None),
        row("keystroke right after first paint", "early_keystroke", None),
        row("floor: Textual input -> label redrawn", "floor_keystroke", None),
        row("  floor UI thread CPU per cycle", "floor_keystroke_cpu", None),
    ]
    ratios = result["ratios"]
    lines = [
        f"skillpack ui on {result['skills']:,} skills (warm index), "
        f"{len(result['keystroke']['samples'])} keystrokes, session {result['refresh_mode']}",
        format_table(["measure", "median", "p99", "target", ""], rows),
        f"first paint / list --json = {ratios['first_paint_vs_list_json']:.2f}x; "
        f"keystroke p50 / list --json = {ratios['keystroke_p50_vs_list_json']:.3f}x; "
        f"keystroke p50 / floor = {ratios['keystroke_p50_vs_floor']:.2f}x "
        f"(CPU {ratios['keystroke_cpu_p50_vs_floor']:.2f}x)",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="Print JSON.")
    parser.add_argument("--check", action="store_true", help="Exit 1 when a target fails.")
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    parser.add_argument("--drive-floor", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive_floor:
        print(json.dumps(drive_floor(json.loads(args.drive_floor))))
        return 0
    if args.drive:
        roots, cwd, queries = json.loads(args.drive)
        print(json.dumps(drive(roots, cwd, queries)))
        return 0
    with work_dir(args.work_dir) as work:
        result = measure(work, args.skills, args.repeat, args.seed)
    print(json.dumps(result, indent=2) if args.json else report(result))
    targets = result["targets"]
    if args.check and not (targets["first_paint_ok"] and targets["keystroke_ok"]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
