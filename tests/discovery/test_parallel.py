"""Loading on two cores (`discovery._parallel`): whichever process reads a file, it
loads to the same Skill and problems, and a helper that breaks costs nothing but time."""

from __future__ import annotations

import datetime
import marshal
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_SKILLS, WriteSkill
from skillpack._errors import UsageError
from skillpack._model import Root
from skillpack.discovery import _parallel
from skillpack.discovery._discover import discover_roots
from skillpack.discovery._found import Found, WalkRecord, root_values
from skillpack.discovery._load import load_skill_md
from skillpack.discovery._options import DiscoveryOptions
from skillpack.discovery._parallel import (
    Loaded,
    LoadHelper,
    RootLoads,
    _frame,
    _read_frame,
    _result,
    serve_loads,
)
from skillpack.discovery._walk import walk_root

LIMIT = 8 * 1024 * 1024
needs_helper = pytest.mark.skipif(
    not _parallel._usable(), reason="the helper needs POSIX pipes and a second core"
)


@pytest.fixture
def eager(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper for any run, in small chunks, so a small tree is shared."""
    monkeypatch.setattr(_parallel, "HELPER_START_FILES", 0)
    monkeypatch.setattr(_parallel, "CHUNK", 3)
    monkeypatch.delenv(_parallel.LOAD_HELPER_ENV, raising=False)


def varied_tree(base: Path, write_skill: WriteSkill, copies: int = 12) -> Path:
    """Skills of every kind a load can end in: valid ones, with a Codex sidecar,
    invalid YAML, no frontmatter, a bad name, bytes that are not UTF-8 or not text."""
    for n in range(copies):
        write_skill(f"root/plain-{n}", base=base)
        write_skill(
            f"root/fields-{n}",
            base=base,
            frontmatter=(
                f"name: fields-{n}\ndescription: >-\n  Folded text. Use when testing.\n"
                "allowed-tools: [Read, Grep]\nmetadata:\n  version: 1.5\n  tags: [a, b]\n"
                "created: !!timestamp 2024-01-02"
            ),
            files={"agents/openai.yaml": "interface:\n  display_name: Fields\n"},
        )
        write_skill(f"root/yaml-{n}", base=base, frontmatter="name: [unclosed\ndescription: x")
        write_skill(f"root/bare-{n}", base=base, text="# No frontmatter\n")
        write_skill(f"root/Bad_Name-{n}", base=base)
        folder = base / "root" / f"binary-{n}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_bytes(b"---\nname: x\x00\n---\n")
        folder = base / "root" / f"latin-{n}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_bytes(b"---\nname: caf\xe9\ndescription: d\n---\n")
    return base / "root"


def walked(root_path: Path, loads: RootLoads | None = None) -> list[Found]:
    """The files a walk of `root_path` finds; into `loads` (told of each) when given."""
    found: list[Found] = [] if loads is None else loads.found
    walk_root(
        Root(path=str(root_path), scope="extra"),
        max_depth=6,
        max_dirs=2000,
        found=found,
        problems=[],
        record=WalkRecord(timed=False),
        on_found=None if loads is None else loads.walked,
    )
    return found


def loaded_by(
    helper: LoadHelper, items: list[Found], claimed: set[str] | None = None
) -> list[Loaded]:
    """A root's loads of `items`, found all at once, shared with `helper`."""
    loads = RootLoads(
        set() if claimed is None else claimed,
        cache=None,
        strict=False,
        max_file_bytes=LIMIT,
        helper=helper,
    )
    loads.found.extend(items)
    return loads.finish()


def alone(items: list[Found]) -> list[Loaded]:
    return [load_skill_md(item, cache=None, strict=False, max_file_bytes=LIMIT) for item in items]


def ready_helper(new_files: int) -> LoadHelper:
    helper = LoadHelper()
    assert helper.started(new_files)
    deadline = time.monotonic() + 60
    while not helper.ready():
        assert time.monotonic() < deadline, "the helper never said it was ready"
        time.sleep(0.01)
    return helper


def shared_loads(items: list[Found], monkeypatch: pytest.MonkeyPatch) -> list[Loaded]:
    """A root's loads with a ready helper, which must have loaded some of the files."""
    counts = answered(monkeypatch)
    helper = ready_helper(len(items))
    try:
        shared = loaded_by(helper, items)
    finally:
        helper.close()
    assert sum(counts) > 0, "the helper loaded nothing"
    return shared


def answered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Files the helper loaded, per reply, as the sharing takes them."""
    counts: list[int] = []
    real = _parallel._Share._take

    def counting(self: Any, *, wait: bool) -> bool:
        before = len(self.results)
        took = real(self, wait=wait)
        counts.append(len(self.results) - before)
        return took

    monkeypatch.setattr(_parallel._Share, "_take", counting)
    return counts


@needs_helper
def test_the_helper_loads_each_file_as_this_process_does(
    tmp_path: Path, write_skill: WriteSkill, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = walked(varied_tree(tmp_path, write_skill))
    shared = shared_loads(items, monkeypatch)
    assert shared == alone(items)
    codes = {p.code for _, _, problems in shared for p in problems}
    assert {"yaml-invalid", "frontmatter-missing", "file-binary", "encoding-invalid"} <= codes


@needs_helper
def test_a_helper_that_dies_leaves_its_files_to_this_process(
    tmp_path: Path, write_skill: WriteSkill, eager: None
) -> None:
    items = walked(varied_tree(tmp_path, write_skill))
    helper = ready_helper(len(items))
    process = helper._process
    assert process is not None
    process.kill()
    process.wait()
    shared = loaded_by(helper, items)
    assert shared == alone(items)
    assert not helper.started(len(items)), "a helper that broke is not started again"


@needs_helper
def test_a_helper_that_breaks_the_protocol_is_stopped(
    tmp_path: Path, write_skill: WriteSkill, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = walked(varied_tree(tmp_path, write_skill))
    real = LoadHelper.reply

    def wrong_first(self: LoadHelper, *, wait: bool) -> tuple[int, tuple[Any, ...]] | None:
        reply = real(self, wait=wait)
        return None if reply is None else (reply[0] + 1, reply[1])

    monkeypatch.setattr(LoadHelper, "reply", wrong_first)
    helper = ready_helper(len(items))
    process = helper._process
    shared = loaded_by(helper, items)
    assert shared == alone(items)
    assert helper._process is None and process is not None and process.poll() is not None


@needs_helper
def test_discovery_gives_the_same_run_with_or_without_the_helper(
    tmp_path: Path, write_skill: WriteSkill, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root_path = varied_tree(tmp_path, write_skill, copies=40)
    roots = [Root(path=str(root_path), scope="extra")]
    started: list[bool] = []
    real = LoadHelper.started

    def started_and_ready(self: LoadHelper, new_files: int) -> bool:
        started.append(real(self, new_files))
        while started[-1] and not self.ready():
            time.sleep(0.01)
        return started[-1]

    monkeypatch.setattr(LoadHelper, "started", started_and_ready)
    counts = answered(monkeypatch)
    shared = discover_roots(roots, options=DiscoveryOptions(cache_dir=tmp_path / "a"))
    monkeypatch.setenv(_parallel.LOAD_HELPER_ENV, "0")
    single = discover_roots(roots, options=DiscoveryOptions(cache_dir=tmp_path / "b"))
    assert started[0] and not any(started[1:]), "started once, then turned off"
    assert sum(counts) > 0
    assert shared.catalog == single.catalog
    assert [scan.problems for scan in shared.scans] == [scan.problems for scan in single.scans]
    # The index written from the helper's loads serves a warm run like any other.
    warm = discover_roots(roots, options=DiscoveryOptions(cache_dir=tmp_path / "a"))
    assert warm.catalog == single.catalog


@needs_helper
@pytest.mark.corpus
def test_the_real_corpus_loads_the_same_on_two_cores(
    eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = walked(REAL_SKILLS)
    assert shared_loads(items, monkeypatch) == alone(items)


def test_no_helper_below_the_threshold_or_when_turned_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(_parallel.LOAD_HELPER_ENV, raising=False)
    helper = LoadHelper()
    assert not helper.started(_parallel.HELPER_START_FILES - 1)
    assert helper._process is None
    monkeypatch.setenv(_parallel.LOAD_HELPER_ENV, "0")
    off = LoadHelper()
    assert not off.started(10 * _parallel.HELPER_START_FILES)
    assert off._process is None


def test_the_load_helper_option_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(_parallel.LOAD_HELPER_ENV, raising=False)
    off = LoadHelper(enabled=False)
    assert not off.started(10 * _parallel.HELPER_START_FILES)
    assert off._process is None
    assert _parallel.helper_wanted(None)
    monkeypatch.setenv(_parallel.LOAD_HELPER_ENV, "0")
    assert not _parallel.helper_wanted(None), "the environment is the default's source"
    assert _parallel.helper_wanted(True)
    assert not _parallel.helper_wanted(False)


def test_a_run_with_load_helper_false_starts_no_helper(
    tmp_path: Path, write_skill: WriteSkill, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_parallel.LOAD_HELPER_ENV, raising=False)
    root_path = varied_tree(tmp_path, write_skill, copies=40)
    wanted: list[bool | None] = []
    real = LoadHelper.__init__

    def recording(self: LoadHelper, *, enabled: bool | None = None) -> None:
        wanted.append(enabled)
        real(self, enabled=enabled)

    monkeypatch.setattr(LoadHelper, "__init__", recording)
    options = DiscoveryOptions(cache_dir=tmp_path / "a", load_helper=False)
    run = discover_roots([Root(path=str(root_path), scope="extra")], options=options)
    assert wanted == [False]
    assert run.catalog.skills


def test_load_helper_takes_a_bool_or_none() -> None:
    with pytest.raises(UsageError, match=r"load_helper=\.\.\.\) takes True, False or None"):
        DiscoveryOptions(load_helper="no")  # type: ignore[arg-type]


def test_serve_loads_answers_each_request_and_sends_back_what_marshal_cannot_hold_as_none(
    tmp_path: Path, write_skill: WriteSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = walked(varied_tree(tmp_path, write_skill, copies=1))
    root = items[0].root
    rows = tuple((*item[:3], *item[4:], 0) for item in items)
    request = marshal.dumps((5, (root_values(root),), False, LIMIT, rows))
    odd = items[1].path
    real = _parallel._result

    def with_a_date(loaded: Loaded) -> tuple[Any, ...]:
        result = real(loaded)
        found = loaded[0]
        return (*result, datetime.date(2024, 1, 2)) if found and found.path == odd else result

    monkeypatch.setattr(_parallel, "_result", with_a_date)
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    os.write(requests_w, _frame(request))
    os.close(requests_w)
    with open(replies_r, "rb", closefd=True) as replies:
        serve_loads(requests_r, replies_w)
        os.close(requests_r)
        os.close(replies_w)
        fd = replies.fileno()
        assert _read_frame(fd) == _parallel._READY
        frame = _read_frame(fd)
        assert frame is not None
        first, results = marshal.loads(frame)
        assert _read_frame(fd) is None
    assert first == 5
    expected = tuple(
        None if item.path == odd else _result(loaded)
        for item, loaded in zip(items, alone(items), strict=True)
    )
    assert results == marshal.loads(marshal.dumps(expected))
    assert results[1] is None and results[0] is not None


@pytest.mark.parametrize(
    ("executable", "frozen", "usable"),
    [
        ("/usr/bin/uwsgi", False, False),  # a host program embedding Python
        ("", False, False),
        ("/opt/app/python3", True, False),  # a frozen app
        ("/opt/venv/bin/python3.11", False, True),
        ("/opt/pypy/bin/pypy3", False, True),
    ],
)
def test_a_helper_runs_only_a_python_interpreter(
    monkeypatch: pytest.MonkeyPatch, executable: str, frozen: bool, usable: bool
) -> None:
    monkeypatch.setattr(sys, "executable", executable)
    monkeypatch.setattr(sys, "frozen", frozen, raising=False)
    monkeypatch.setattr(_parallel, "_spare_core", lambda: True)
    monkeypatch.setattr(os, "name", "posix")
    assert _parallel._usable() is usable
    monkeypatch.setattr(_parallel, "_spare_core", lambda: False)
    assert _parallel._usable() is False


def test_a_helper_that_cannot_start_leaves_the_run_to_this_process(
    tmp_path: Path, write_skill: WriteSkill, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "gone" / "python3"))
    monkeypatch.setattr(_parallel, "_spare_core", lambda: True)
    items = walked(varied_tree(tmp_path, write_skill, copies=2))
    helper = LoadHelper()
    assert loaded_by(helper, items) == alone(items)
    assert helper._process is None and not helper.started(len(items))


@needs_helper
def test_a_helper_starts_whatever_else_sys_path_holds(
    tmp_path: Path, write_skill: WriteSkill, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", [*sys.path, Path("/nowhere"), 42])
    items = walked(varied_tree(tmp_path, write_skill))
    assert shared_loads(items, monkeypatch) == alone(items)


def walked_with(
    helper: LoadHelper, root_path: Path, claimed: set[str]
) -> tuple[RootLoads, list[Loaded]]:
    """Walk a root as `scan_root` does, the helper taking files while the walk goes on."""
    loads = RootLoads(claimed, cache=None, strict=False, max_file_bytes=LIMIT, helper=helper)
    walked(root_path, loads)
    return loads, loads.finish()


@needs_helper
def test_the_helper_loads_while_the_walk_goes_on(
    tmp_path: Path, write_skill: WriteSkill, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root_path = varied_tree(tmp_path, write_skill)
    items = walked(root_path)
    earlier = {items[1].real_path, items[-2].real_path}  # claimed by an earlier root
    during: list[int] = []
    real = _parallel._Share.feed

    def feeding(self: Any) -> None:
        before = len(self.asked)
        real(self)
        during.append(max(0, len(self.asked) - before))

    monkeypatch.setattr(_parallel._Share, "feed", feeding)
    helper = ready_helper(len(items))
    try:
        loads, shared = walked_with(helper, root_path, set(earlier))
    finally:
        helper.close()
    assert sum(during) > 0, "the walk handed the helper nothing"
    mine = [item for item in items if item.real_path not in earlier]
    assert loads.mine == mine
    assert loads.skipped == [item.real_path for item in items if item.real_path in earlier]
    assert shared == alone(mine)


@needs_helper
def test_a_helper_that_dies_during_the_walk_leaves_its_files_to_this_process(
    tmp_path: Path, write_skill: WriteSkill, eager: None
) -> None:
    root_path = varied_tree(tmp_path, write_skill)
    helper = ready_helper(1)
    process = helper._process
    assert process is not None
    process.kill()
    process.wait()
    claimed: set[str] = set()
    _, shared = walked_with(helper, root_path, claimed)
    assert shared == alone(walked(root_path))
    assert helper._process is None and not helper.started(1)


ISOLATED_RUN = """
import json, sys, time
sys.path.insert(0, sys.argv[1])  # this checkout: -I leaves PYTHONPATH out
from skillpack._model import Root
from skillpack.discovery import _parallel
from skillpack.discovery._discover import discover_roots
from skillpack.discovery._options import DiscoveryOptions
_parallel.HELPER_START_FILES, _parallel.CHUNK = 0, 3
_parallel._spare_core = lambda: True
real, seen = _parallel.LoadHelper.started, []
def ready(helper):
    try:
        return helper.ready()
    except _parallel.HelperLost:
        return False
def started(self, new_files):
    on = real(self, new_files)
    deadline = time.monotonic() + 30
    while on and not ready(self) and self._process.poll() is None:
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    seen.append([on, on and ready(self)])
    return on
_parallel.LoadHelper.started = started
options = DiscoveryOptions(use_cache=False)
run = discover_roots([Root(path=sys.argv[2], scope="extra")], options=options)
print(json.dumps({"skills": len(run.catalog.skills), "helper": seen[0]}))
"""


@needs_helper
def test_the_helper_starts_with_this_interpreters_isolation(
    tmp_path: Path, write_skill: WriteSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under `python -I` (which ignores PYTHONPATH) an `encodings` package planted on
    PYTHONPATH runs in no process of a cold scan, the load helper's included."""
    import json
    import subprocess

    import skillpack

    planted = tmp_path / "planted" / "encodings"
    planted.mkdir(parents=True)
    marker = tmp_path / "planted-code-ran"
    (planted / "__init__.py").write_text(  # `posix`: built in, usable before `encodings`
        f"__import__('posix').mkdir({str(marker)!r})\nraise ImportError('planted')\n",
        encoding="utf-8",
    )
    root = tmp_path / "skills"
    for n in range(12):
        write_skill(f"s{n}", base=root)
    monkeypatch.setenv("PYTHONPATH", str(planted.parent))
    monkeypatch.delenv(_parallel.LOAD_HELPER_ENV, raising=False)
    src = str(Path(skillpack.__file__).parent.parent)

    done = subprocess.run(
        [sys.executable, "-I", "-c", ISOLATED_RUN, src, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    assert json.loads(done.stdout) == {"skills": 12, "helper": [True, True]}
    assert not marker.exists(), "the helper ran code from PYTHONPATH"
