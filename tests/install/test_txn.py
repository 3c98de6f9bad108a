"""Staging writes exactly the verified files, with or without directory descriptors."""

from __future__ import annotations

from pathlib import Path

import pytest
from install_support import tree_files

from skillpack.install import _txn
from skillpack.install._candidate import make_candidate
from skillpack.install._values import Origin, Payload

FILES = {
    "SKILL.md": b"---\nname: demo\ndescription: Demo. Use when testing.\n---\nbody\n",
    "scripts/run.sh": b"#!/bin/sh\n",
    "references/deep/er/notes.md": b"notes",
    "references/a.md": b"a",
}


@pytest.mark.parametrize("dir_fd", [True, False])
def test_stage_writes_every_file_with_its_mode_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dir_fd: bool
) -> None:
    monkeypatch.setattr(_txn, "_DIR_FD", dir_fd and _txn._DIR_FD)
    payload = Payload(files=FILES, executable=frozenset({"scripts/run.sh"}))
    candidate = make_candidate(payload, Origin(source_type="local", source="x"), name="demo")
    _txn.stage(tmp_path / "demo", candidate)
    assert tree_files(tmp_path / "demo") == FILES
    assert (tmp_path / "demo" / "scripts" / "run.sh").stat().st_mode & 0o100
    assert (tmp_path / "demo" / "references" / "a.md").stat().st_mode & 0o111 == 0


def test_stage_never_writes_into_an_existing_folder(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    candidate = make_candidate(
        Payload(files={"SKILL.md": FILES["SKILL.md"]}),
        Origin(source_type="local", source="x"),
        name="demo",
    )
    with pytest.raises(FileExistsError):
        _txn.stage(tmp_path / "demo", candidate)
