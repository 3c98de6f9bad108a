"""Shared by the render tests: skills to render and exact snapshot files.

After an intended change of wording or layout, rewrite the snapshots with

    SKILLPACK_UPDATE_SNAPSHOTS=1 python -m pytest tests/render

and review the diff of `tests/render/snapshots/` before committing.
"""

from __future__ import annotations

import os
from pathlib import Path

from skillpack._model import Skill

SNAPSHOTS = Path(__file__).parent / "snapshots"


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("SKILLPACK_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as file:
            file.write(text)
    assert path.exists(), f"No snapshot {path}; run with SKILLPACK_UPDATE_SNAPSHOTS=1 to create it."
    with path.open(encoding="utf-8", newline="") as file:
        assert text == file.read()


def make_skill(name: str, description: str, **fields: object) -> Skill:
    folder = f"/work/skills/{name}"
    return Skill(
        name=name,
        description=description,
        path=f"{folder}/SKILL.md",
        dir=folder,
        **fields,  # type: ignore[arg-type]
    )
