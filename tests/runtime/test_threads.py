"""Session and SkillTools called from several threads at once, as a server's workers do."""

from __future__ import annotations

import random
import threading
from pathlib import Path

from conftest import WriteSkill
from skillpack.runtime._session import Session
from skillpack.runtime._tools import SkillTools

THREADS = 8
CALLS = 40


def test_eight_threads_search_load_read_and_reload_at_once(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    root = tmp_path / "skills"
    for i in range(24):
        write_skill(
            f"topic-{i:02d}",
            description=f"Handle topic {i}: deploy, review and test workflow number {i}.",
            body=f"# Topic {i}\n\nSteps for topic {i}.\n",
            files={"references/notes.md": f"notes {i}\n"},
            base=root,
        )
    session = Session.open(cwd=str(tmp_path), roots=[str(root)], include_user=False)
    tools = SkillTools(session)
    failures: list[str] = []
    start = threading.Barrier(THREADS)

    def work(seed: int) -> None:
        rng = random.Random(seed)
        start.wait()
        for _ in range(CALLS):
            i = rng.randrange(24)
            action = rng.choice(["search", "load", "read", "reload", "turn"])
            try:
                if action == "search":
                    result = tools.call("skill_search", {"query": f"topic {i} deploy"})
                elif action == "load":
                    result = tools.call("skill_load", {"name": f"topic-{i:02d}"})
                elif action == "read":
                    result = tools.call(
                        "skill_read_file",
                        {"skill": f"topic-{i:02d}", "path": "references/notes.md"},
                    )
                elif action == "reload":
                    session.refresh()
                    continue
                else:
                    session.prepare_turn(f"${'topic'}-{i:02d} please")
                    continue
            except Exception as exc:  # noqa: BLE001 - collected and reported below
                failures.append(f"{action}: {type(exc).__name__}: {exc}")
                continue
            if not result["ok"]:
                failures.append(f"{action}: {result['error']}")

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
