"""A catalog that stays live: refresh modes, subscribers, the watcher and its thread."""

from __future__ import annotations

import gc
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import WriteSkill, rewrite_keeping_mtime_and_size
from skillpack._errors import SkillIOError, UsageError
from skillpack._model import Catalog
from skillpack.discovery import _discover
from skillpack.discovery._memory import MemorySkills
from skillpack.runtime._live import CatalogChange, diff_catalogs
from skillpack.runtime._session import Session, refresh_mode
from skillpack.runtime._tools import SkillTools

DEADLINE = 15.0
"""Generous: a loaded CI machine may be slow; the watcher normally answers in ~0.2 s."""


def watcher_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "skillpack-watch"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture(autouse=True)
def no_leaked_watchers() -> object:
    yield
    gc.collect()
    deadline = time.monotonic() + DEADLINE
    while watcher_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert watcher_threads() == []


def names(catalog: Catalog) -> set[str]:
    return {s.name for s in catalog.skills}


def wait_for(changes: queue.Queue[CatalogChange], predicate: object) -> CatalogChange:
    deadline = time.monotonic() + DEADLINE
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("no matching catalog change arrived")
        try:
            change = changes.get(timeout=left)
        except queue.Empty:
            continue
        if predicate(change):  # type: ignore[operator]
            return change


# -- auto (the default) ------------------------------------------------------------


def test_a_default_session_notices_added_edited_and_removed_skills_on_the_next_call(
    project: Path, write_skill: WriteSkill
) -> None:
    # A stale check on every call.
    base = project / ".agents" / "skills"
    write_skill("alpha", base=base)
    session = Session.open(
        cwd=str(project), include_user=False, include_system=False, refresh_interval=0
    )
    assert refresh_mode(session) == "auto"
    tools = SkillTools(session)
    write_skill("beta", base=base)
    assert tools.skill_load(name="beta")["ok"] is True
    write_skill("beta", base=base, description="Edited, and longer than before.")
    assert tools.skill_load(name="beta")["ok"] is True
    [beta] = [skill for skill in session.catalog.skills if skill.name == "beta"]
    assert beta.description == "Edited, and longer than before."
    shutil.rmtree(base / "beta")
    assert tools.skill_load(name="beta")["error"]["code"] == "NOT_FOUND"
    nested = write_skill("plugin/skills/gamma", base=base)
    assert session.prepare_turn("$gamma go").activations[0].skill.path == str(nested / "SKILL.md")


def test_auto_rediscovers_only_when_a_stat_shows_a_change(write_skill: WriteSkill) -> None:
    folder = write_skill("alpha")
    loads: list[int] = []

    def loader() -> Catalog:
        loads.append(1)
        return _discover.discover(roots=[str(folder.parent)], use_cache=False)

    session = Session(loader(), loader=loader, refresh_interval=0)
    assert refresh_mode(session) == "auto"
    tools = SkillTools(session)
    for _ in range(5):
        tools.skill_search("alpha")
    assert len(loads) == 1  # the first discovery only: nothing changed
    write_skill("alpha", description="Now edited, a longer description.")
    tools.skill_search("alpha")
    assert len(loads) == 2
    assert "Now edited" in session.catalog.skills[0].description


def test_a_session_without_a_way_to_rediscover_stays_manual() -> None:
    assert refresh_mode(Session(Catalog())) == "manual"


# -- on_call ---------------------------------------------------------------------


def test_on_call_finds_a_skill_created_mid_session_at_the_next_tool_call(
    project: Path, write_skill: WriteSkill
) -> None:
    write_skill("alpha", base=project / ".agents" / "skills")
    session = Session.open(cwd=str(project), refresh="on_call", refresh_interval=0)
    tools = SkillTools(session)
    assert tools.skill_load(name="beta")["ok"] is False
    write_skill("beta", base=project / ".agents" / "skills")
    result = tools.skill_load(name="beta")
    assert result["ok"] is True, result
    assert "beta" in names(session.catalog)


def test_on_call_finds_a_skill_root_created_mid_session(
    project: Path, write_skill: WriteSkill
) -> None:
    session = Session.open(cwd=str(project), refresh="on_call", refresh_interval=0)
    write_skill("fresh", base=project / ".claude" / "skills")
    turn = session.prepare_turn("$fresh now")
    assert [a.skill.name for a in turn.activations] == ["fresh"]


def test_manual_sessions_do_not_notice_new_skills_until_refresh(
    project: Path, write_skill: WriteSkill
) -> None:
    write_skill("alpha", base=project / ".agents" / "skills")
    session = Session.open(cwd=str(project), refresh="manual")
    tools = SkillTools(session)
    write_skill("beta", base=project / ".agents" / "skills")
    assert tools.skill_load(name="beta")["error"]["code"] == "NOT_FOUND"
    change = session.refresh()
    assert change is not None
    assert [s.name for s in change.added] == ["beta"]
    assert tools.skill_load(name="beta")["ok"] is True


def test_on_call_checks_at_most_once_per_interval(project: Path, write_skill: WriteSkill) -> None:
    write_skill("alpha", base=project / ".agents" / "skills")
    session = Session.open(cwd=str(project), refresh="on_call", refresh_interval=3600)
    tools = SkillTools(session)
    tools.skill_search("alpha")  # the first call checks; the next hour's calls do not
    write_skill("beta", base=project / ".agents" / "skills")
    assert tools.skill_load(name="beta")["ok"] is False
    session.refresh()
    assert tools.skill_load(name="beta")["ok"] is True


# -- refresh and subscribers ------------------------------------------------------


def test_refresh_reports_added_removed_and_changed_skills(
    project: Path, write_skill: WriteSkill
) -> None:
    base = project / ".agents" / "skills"
    write_skill("keep", base=base)
    write_skill("edit", base=base)
    gone = write_skill("gone", base=base)
    session = Session.open(cwd=str(project), include_user=False, include_system=False)
    seen: list[CatalogChange] = []
    session.subscribe(seen.append)
    assert session.refresh() is None
    write_skill("edit", base=base, description="Edited. Use when testing edits.")
    write_skill("new", base=base)
    (gone / "SKILL.md").unlink()
    gone.rmdir()
    change = session.refresh()
    assert change is not None
    assert [s.name for s in change.added] == ["new"]
    assert [s.name for s in change.removed] == ["gone"]
    assert [(s.name, s.description) for s in change.changed] == [
        ("edit", "Edited. Use when testing edits.")
    ]
    assert change.catalog is session.catalog
    assert seen == [change]


def test_a_raising_subscriber_is_logged_and_the_others_still_hear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    files = MemorySkills({"/s/a/SKILL.md": "---\nname: a\ndescription: A. Use for a.\n---\n"})
    session = Session(files.catalog(), reader=files)
    heard: list[CatalogChange] = []

    def broken(change: CatalogChange) -> None:
        raise RuntimeError("subscriber bug")

    session.subscribe(broken)
    session.subscribe(heard.append)
    files.write("/s/b/SKILL.md", "---\nname: b\ndescription: B. Use for b.\n---\n")
    session.refresh(files.catalog())
    assert [s.name for s in heard[0].added] == ["b"]
    assert "subscriber" in caplog.text


def test_unsubscribe_stops_the_callbacks() -> None:
    files = MemorySkills({"/s/a/SKILL.md": "---\nname: a\ndescription: A. Use for a.\n---\n"})
    session = Session(files.catalog(), reader=files, loader=files.catalog)
    heard: list[CatalogChange] = []
    unsubscribe = session.subscribe(heard.append)
    files.write("/s/b/SKILL.md", "---\nname: b\ndescription: B. Use for b.\n---\n")
    session.refresh()
    unsubscribe()
    unsubscribe()
    files.write("/s/c/SKILL.md", "---\nname: c\ndescription: C. Use for c.\n---\n")
    session.refresh()
    assert [[s.name for s in h.added] for h in heard] == [["b"]]


def test_diff_of_identical_catalogs_is_none_and_a_new_problem_is_a_change() -> None:
    files = MemorySkills({"/s/a/SKILL.md": "---\nname: a\ndescription: A. Use for a.\n---\n"})
    before = files.catalog()
    assert diff_catalogs(before, files.catalog()) is None
    files.write("/s/broken/SKILL.md", "no frontmatter")
    change = diff_catalogs(before, files.catalog())
    assert change is not None and not change.skills_changed


def test_a_config_edit_is_a_change_and_the_new_enable_state_applies(
    project: Path, write_skill: WriteSkill
) -> None:
    write_skill("alpha", base=project / ".agents" / "skills")
    session = Session.open(cwd=str(project), include_user=False, include_system=False)
    [alpha] = session.catalog.skills
    assert session.skills.is_enabled(alpha)
    config = project / ".skillpack" / "config.toml"
    config.parent.mkdir()
    config.write_text('[skills]\ndisabled = ["alpha"]\n', encoding="utf-8")
    change = session.refresh()
    assert change is not None and change.config_changed and not change.skills_changed
    assert not session.skills.is_enabled(session.catalog.skills[0])


# -- modes and errors ---------------------------------------------------------------


@pytest.mark.parametrize("mode", ["on_call", "watch"])
def test_live_modes_need_a_way_to_rediscover(mode: str) -> None:
    with pytest.raises(UsageError, match="loader"):
        Session(Catalog(), refresh=mode)  # type: ignore[arg-type]


def test_an_unknown_refresh_mode_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="manual, auto, on_call, watch"):
        Session(Catalog(), refresh="always", loader=Catalog)  # type: ignore[arg-type]


def test_refresh_without_a_loader_says_how_to_get_one() -> None:
    with pytest.raises(SkillIOError, match="Session.open"):
        Session(Catalog()).refresh()


def test_watch_without_watchfiles_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "watchfiles", None)
    with pytest.raises(UsageError, match=r"pip install 'skillpack\[watch\]'"):
        Session(Catalog(), refresh="watch", loader=Catalog)
    assert watcher_threads() == []


def test_a_session_that_does_not_watch_never_imports_watchfiles(tmp_path: Path) -> None:
    code = (
        "import sys, skillpack\n"
        f"s = skillpack.Session.open(cwd={str(tmp_path)!r}, refresh='on_call')\n"
        "s.prepare_turn('hello'); s.close()\n"
        "assert 'watchfiles' not in sys.modules, 'imported'\n"
        "assert 'skillpack.discovery._watch' not in sys.modules, 'imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())


# -- watch ----------------------------------------------------------------------------


def test_watch_finds_a_new_skill_without_a_tool_call(
    project: Path, write_skill: WriteSkill
) -> None:
    write_skill("alpha", base=project / ".agents" / "skills")
    changes: queue.Queue[CatalogChange] = queue.Queue()
    with Session.open(cwd=str(project), refresh="watch") as session:
        session.subscribe(changes.put)
        write_skill("beta", base=project / ".agents" / "skills" / "nested")
        change = wait_for(changes, lambda c: any(s.name == "beta" for s in c.added))
        assert "beta" in names(session.catalog)
        assert change.catalog is session.catalog or "beta" in names(session.catalog)
        assert SkillTools(session).skill_load(name="beta")["ok"] is True
    assert watcher_threads() == []


def test_watch_sees_an_edit_and_a_removal(project: Path, write_skill: WriteSkill) -> None:
    base = project / ".agents" / "skills"
    folder = write_skill("alpha", base=base)
    changes: queue.Queue[CatalogChange] = queue.Queue()
    with Session.open(cwd=str(project), refresh="watch") as session:
        session.subscribe(changes.put)
        write_skill("alpha", base=base, description="Changed. Use when changed.")
        wait_for(
            changes, lambda c: [s.description for s in c.changed] == ["Changed. Use when changed."]
        )
        (folder / "SKILL.md").unlink()
        wait_for(changes, lambda c: [s.name for s in c.removed] == ["alpha"])
        assert "alpha" not in names(session.catalog)


def test_watch_notices_a_skill_root_created_after_it_started(
    project: Path, write_skill: WriteSkill
) -> None:
    changes: queue.Queue[CatalogChange] = queue.Queue()
    with Session.open(cwd=str(project), refresh="watch") as session:
        session.subscribe(changes.put)
        write_skill("late", base=project / ".claude" / "skills")
        wait_for(changes, lambda c: any(s.name == "late" for s in c.added))
        # The new root is watched from now on.
        write_skill("later", base=project / ".claude" / "skills")
        wait_for(changes, lambda c: any(s.name == "later" for s in c.added))


def test_watch_notices_a_config_edit(project: Path, write_skill: WriteSkill) -> None:
    write_skill("alpha", base=project / ".agents" / "skills")
    changes: queue.Queue[CatalogChange] = queue.Queue()
    with Session.open(cwd=str(project), refresh="watch") as session:
        session.subscribe(changes.put)
        config = project / ".skillpack" / "config.toml"
        config.parent.mkdir()
        config.write_text('[skills]\ndisabled = ["alpha"]\n', encoding="utf-8")
        wait_for(changes, lambda c: c.config_changed)
        assert not session.skills.is_enabled(session.catalog.skills[0])


def test_close_stops_the_watcher_and_is_idempotent(project: Path) -> None:
    session = Session.open(cwd=str(project), refresh="watch")
    assert len(watcher_threads()) == 1
    session.close()
    session.close()
    assert watcher_threads() == []
    assert refresh_mode(session) == "manual"


def test_a_manual_session_can_start_and_stop_watching_later(
    project: Path, write_skill: WriteSkill
) -> None:
    changes: queue.Queue[CatalogChange] = queue.Queue()
    with Session.open(cwd=str(project)) as session:
        session.subscribe(changes.put)
        assert watcher_threads() == []
        session.set_refresh("watch")
        session.set_refresh("watch")  # already watching: still one watcher
        # One tuple, so mypy does not narrow `refresh_mode` past the next `set_refresh`.
        assert (refresh_mode(session), len(watcher_threads())) == ("watch", 1)
        write_skill("gamma", base=project / ".agents" / "skills")
        wait_for(changes, lambda c: any(s.name == "gamma" for s in c.added))
        session.set_refresh("on_call")
        assert refresh_mode(session) == "on_call" and watcher_threads() == []
    with pytest.raises(UsageError, match="closed"):
        session.set_refresh("watch")
    with pytest.raises(UsageError, match="Unknown refresh mode"):
        Session.open(cwd=str(project)).set_refresh("sometimes")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="needs a way to re-discover"):
        Session(Catalog()).set_refresh("watch")


def test_a_session_dropped_without_close_stops_its_watcher(project: Path) -> None:
    session = Session.open(cwd=str(project), refresh="watch")
    assert len(watcher_threads()) == 1
    del session
    # The fixture waits for the thread to end (it holds the session weakly).


def test_concurrent_refreshes_deliver_every_change_in_order(
    project: Path, write_skill: WriteSkill
) -> None:
    base = project / ".agents" / "skills"
    write_skill("s0", base=base)
    session = Session.open(cwd=str(project), include_user=False, include_system=False)
    heard: list[CatalogChange] = []
    session.subscribe(heard.append)

    def work(i: int) -> None:
        write_skill(f"t{i}", base=base)
        session.refresh()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    session.refresh()
    added = [s.name for change in heard for s in change.added]
    assert sorted(added) == [f"t{i}" for i in range(6)]
    assert heard[-1].catalog is session.catalog


def test_a_reload_after_an_edit_that_keeps_mtime_and_size_sends_the_new_body(
    project: Path, write_skill: WriteSkill
) -> None:
    folder = write_skill("same", base=project / ".agents" / "skills", body="Body one.\n")
    session = Session.open(cwd=str(project), include_user=False, include_system=False)
    [skill] = session.catalog.skills
    assert "Body one." in session.inject(skill).text
    rewrite_keeping_mtime_and_size(
        folder / "SKILL.md", (folder / "SKILL.md").read_text(encoding="utf-8").replace("one", "two")
    )
    again = session.inject(skill)
    assert not again.reminder
    assert "Body two." in again.text


# -- incremental refreshes -------------------------------------------------------------


class Runs:
    """Every discovery a session makes: (the paths it was told changed, roots scanned)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: list[tuple[Collection[str] | None, list[str]]] = []

    def caught_up(self) -> None:
        """Wait for a watcher's first, full refresh (after the session's own discovery):
        from then on, changes reach it as events."""
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            with self.lock:
                if sum(touched is None for touched, _scanned in self.runs) >= 2:
                    return
            time.sleep(0.01)
        raise AssertionError("the watcher never caught up")

    def after(self, folder: Path) -> list[list[str]]:
        """Roots scanned by each run told that `folder` or a path in it changed."""
        inside = (str(folder), str(folder) + os.sep)
        with self.lock:
            return [
                scanned
                for touched, scanned in self.runs
                if touched and any(p == inside[0] or p.startswith(inside[1]) for p in touched)
            ]


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Runs:
    seen = Runs()
    discover_roots = _discover.discover_roots

    def spy(*args: Any, **kwargs: Any) -> Any:
        run = discover_roots(*args, **kwargs)
        with seen.lock:
            seen.runs.append((kwargs.get("touched"), [r.path for r in run.rescanned]))
        return run

    monkeypatch.setattr(_discover, "discover_roots", spy)
    return seen


def fresh_catalog(project: Path) -> Catalog:
    return Session.open(cwd=str(project), include_user=False, include_system=False).catalog


@contextmanager
def project_watch(project: Path, changes: queue.Queue[CatalogChange]) -> Iterator[Session]:
    """A session watching the project's own roots, its changes going to `changes`."""
    with Session.open(
        cwd=str(project), include_user=False, include_system=False, refresh="watch"
    ) as session:
        session.subscribe(changes.put)
        yield session


def test_watch_rescans_only_the_root_an_event_is_in(
    project: Path, write_skill: WriteSkill, runs: Runs
) -> None:
    agents, claude = project / ".agents" / "skills", project / ".claude" / "skills"
    write_skill("alpha", base=agents)
    write_skill("beta", base=claude)
    changes: queue.Queue[CatalogChange] = queue.Queue()
    with project_watch(project, changes) as session:
        runs.caught_up()
        new = write_skill("gamma", base=agents)
        change = wait_for(changes, lambda c: any(s.name == "gamma" for s in c.added))
        assert [s.name for s in change.added] == ["gamma"]
        assert not change.removed and not change.changed
        assert session.catalog == fresh_catalog(project)
    scanned = runs.after(new)
    assert scanned and all(roots == [str(agents)] for roots in scanned)


def test_watch_sees_a_skill_moved_between_roots(project: Path, write_skill: WriteSkill) -> None:
    agents, claude = project / ".agents" / "skills", project / ".claude" / "skills"
    folder = write_skill("mover", base=agents)
    write_skill("stay", base=claude)
    changes: queue.Queue[CatalogChange] = queue.Queue()
    with project_watch(project, changes) as session:
        folder.rename(claude / "mover")
        wait_for(
            changes,
            lambda c: [s.root for s in session.catalog.named("mover")] == [str(claude)],
        )
        assert session.catalog == fresh_catalog(project)


def test_watch_drops_a_skill_root_that_is_removed(project: Path, write_skill: WriteSkill) -> None:
    write_skill("alpha", base=project / ".agents" / "skills")
    write_skill("beta", base=project / ".claude" / "skills")
    changes: queue.Queue[CatalogChange] = queue.Queue()
    with project_watch(project, changes) as session:
        shutil.rmtree(project / ".claude")
        wait_for(changes, lambda c: [s.name for s in c.removed] == ["beta"])
        assert names(session.catalog) == {"alpha"}
        assert session.catalog == fresh_catalog(project)


def test_watch_rescans_every_root_when_the_config_changes_the_walk(
    project: Path, write_skill: WriteSkill
) -> None:
    write_skill("top", base=project / ".agents" / "skills")
    write_skill("a/b/deep", base=project / ".claude" / "skills")
    changes: queue.Queue[CatalogChange] = queue.Queue()
    with project_watch(project, changes) as session:
        config = project / ".skillpack" / "config.toml"
        config.parent.mkdir()
        config.write_text("[discovery]\nmax_depth = 1\n", encoding="utf-8")
        change = wait_for(changes, lambda c: [s.name for s in c.removed] == ["deep"])
        assert change.config_changed
        assert session.catalog == fresh_catalog(project)


def test_a_refresh_after_events_equals_a_full_one_and_reports_nothing_more(
    project: Path, write_skill: WriteSkill
) -> None:
    base = project / ".agents" / "skills"
    write_skill("alpha", base=base)
    session = Session.open(cwd=str(project), include_user=False, include_system=False)
    new = write_skill("beta", base=base)
    change = session._parts.live.refresh(frozenset({str(new / "SKILL.md")}))
    assert change is not None and [s.name for s in change.added] == ["beta"]
    before = session.catalog
    assert session.refresh() is None
    assert session.catalog is before


def test_a_host_loader_is_reloaded_whole_after_events(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    from skillpack._model import Root
    from skillpack.discovery._discover import discover

    root = tmp_path / "skills"
    write_skill("alpha", base=root)

    def loader() -> Catalog:
        return discover(roots=[Root(path=str(root), scope="extra")], use_cache=False)

    changes: queue.Queue[CatalogChange] = queue.Queue()
    with Session(loader(), loader=loader, refresh="watch") as session:
        session.subscribe(changes.put)
        write_skill("beta", base=root)
        wait_for(changes, lambda c: [s.name for s in c.added] == ["beta"])
        assert names(session.catalog) == {"alpha", "beta"}
