"""The OCI source's poller over a fake registry: a new digest swaps the catalog whole, a
failed check keeps the last good one and says so, a check that answers again clears it,
and folders go once no server holds them."""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

import pytest

from skillpack._errors import SkillIOError, UsageError
from skillpack.runtime._oci_source import (
    ABANDONED_PULL,
    OciSource,
    SourceState,
    check_poll,
    open_oci_source,
)
from skillpack.runtime._session import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "install"))
from install_support import write_skill  # noqa: E402
from oci_support import needs_registry, run_registry  # noqa: E402

REFERENCE = "oci://registry.example/team/skills:stable"
ONE = "sha256:" + "1" * 64
TWO = "sha256:" + "2" * 64
THREE = "sha256:" + "3" * 64


def skill_md(name: str) -> str:
    description = f"{name.title()} things. Use it for {name}."
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n"


class FakeRegistry:
    """A `Fetcher` whose tag points where the test says, and which fails on demand."""

    def __init__(self, collections: dict[str, tuple[str, ...]], tag: str) -> None:
        self.collections = collections
        self.tag = tag
        self.down: Exception | None = None
        self.refuse: set[str] = set()
        self.pulls: list[str] = []

    def digest(self, reference: str) -> str:
        assert reference == REFERENCE
        if self.down is not None:
            raise self.down
        return self.tag

    def pull(self, reference: str, digest: str, target: Path) -> None:
        self.pulls.append(digest)
        if digest in self.refuse:
            raise SkillIOError(f"{reference}@{digest}: the signature does not verify")
        target.mkdir(parents=True)
        for name in self.collections[digest]:
            (target / name).mkdir()
            (target / name / "SKILL.md").write_text(skill_md(name), encoding="utf-8")


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def registry() -> FakeRegistry:
    return FakeRegistry({ONE: ("alpha", "beta"), TWO: ("alpha", "beta", "gamma")}, ONE)


def started(registry: FakeRegistry, base: Path, clock: Clock | None = None) -> OciSource:
    source = OciSource(REFERENCE, fetcher=registry, base=base, poll=30, clock=clock or Clock())
    source.start()
    return source


def names(session: Session) -> list[str]:
    return sorted(skill.name for skill in session.catalog.skills)


def served_folders(session: Session) -> set[str]:
    return {Path(skill.path).parents[1].name for skill in session.catalog.skills}


def test_the_first_pull_is_served_from_a_folder_named_by_its_digest(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    source = started(registry, tmp_path / "oci")
    assert source.roots() == (str(tmp_path / "oci" / f"sha256-{'1' * 64}"),)
    with Session.open(roots=[], extra_roots_from=source.roots, refresh="manual") as session:
        assert names(session) == ["alpha", "beta"]
    state = source.state()
    assert state.digest == ONE and not state.stale
    assert state.to_dict()["state"] == "fresh"
    assert source.detail() == state.to_dict()  # what /readyz shows under `source`
    source.close()


def test_a_new_digest_is_swapped_in_whole_and_subscribers_hear_of_it(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    source = started(registry, tmp_path / "oci")
    with Session.open(roots=[], extra_roots_from=source.roots, refresh="manual") as session:
        heard: list[str] = []
        source.subscribe(lambda: heard.append(names(session)[-1]))
        source.subscribe(session.refresh)
        assert source.check() == "unchanged"
        registry.tag = TWO
        assert source.check() == "swapped"
        assert names(session) == ["alpha", "beta", "gamma"]
        assert served_folders(session) == {f"sha256-{'2' * 64}"}  # never a mix of two
        assert heard == ["beta"]  # told before the session moved: the order subscribed
        assert source.state().digest == TWO
    source.close()


def test_readers_during_swaps_see_one_digest_whole_never_a_mix(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    import threading

    source = started(registry, tmp_path / "oci")
    with Session.open(roots=[], extra_roots_from=source.roots, refresh="manual") as session:
        source.subscribe(session.refresh)
        seen: list[frozenset[str]] = []
        done = threading.Event()

        def read() -> None:
            while not done.is_set():
                catalog = session.catalog
                seen.append(frozenset(Path(s.path).parents[1].name for s in catalog.skills))

        reader = threading.Thread(target=read)
        reader.start()
        try:
            for turn in range(10):
                registry.tag = TWO if turn % 2 == 0 else ONE
                assert source.check() == "swapped"
        finally:
            done.set()
            reader.join()
    assert seen and all(len(folders) == 1 for folders in seen)
    assert {next(iter(f)) for f in seen} <= {f"sha256-{'1' * 64}", f"sha256-{'2' * 64}"}
    source.close()


def test_the_folder_a_swap_replaced_is_removed_at_the_next_check(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    base = tmp_path / "oci"
    source = started(registry, base)
    old = base / f"sha256-{'1' * 64}"
    registry.tag = TWO
    assert source.check() == "swapped"
    assert old.is_dir()  # a request may still read the catalog it replaced
    assert source.check() == "unchanged"
    assert not old.exists()
    assert (base / f"sha256-{'2' * 64}").is_dir()  # the one served stays
    source.close()


def test_a_pull_folder_a_crash_left_is_removed_at_a_check_and_a_fresh_one_kept(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    base = tmp_path / "oci"
    source = started(registry, base)
    abandoned, running = base / ".pull-0123456789ab", base / ".pull-ba9876543210"
    for folder in (abandoned, running):
        (folder / "alpha").mkdir(parents=True)
    long_ago = time.time() - ABANDONED_PULL - 60
    for path in (abandoned / "alpha", abandoned):
        os.utime(path, (long_ago, long_ago))
    assert source.check() == "unchanged"
    assert not abandoned.exists()
    assert running.is_dir()  # another server may be pulling into it now
    source.close()


@pytest.mark.skipif(sys.platform == "win32", reason="folders are shared with flock on POSIX")
def test_a_folder_another_server_serves_is_kept(registry: FakeRegistry, tmp_path: Path) -> None:
    base = tmp_path / "oci"
    first, second = started(registry, base), started(registry, base)
    assert registry.pulls == [ONE]  # the second server found the folder complete
    registry.tag = TWO
    assert first.check() == "swapped"
    assert first.check() == "unchanged"
    assert (base / f"sha256-{'1' * 64}").is_dir()  # `second` still serves it
    assert (base / f"sha256-{'1' * 64}.lock").is_file()  # and holds its lock there
    second.close()
    registry.tag = THREE
    registry.collections[THREE] = ("delta",)
    assert first.check() == "swapped"
    assert first.check() == "unchanged"
    three = f"sha256-{'3' * 64}"
    assert sorted(p.name for p in base.iterdir()) == [three, f"{three}.lock"]
    first.close()


def test_a_failed_check_keeps_the_last_good_catalog_and_says_it_is_stale(
    registry: FakeRegistry, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    source = started(registry, tmp_path / "oci", clock)
    with Session.open(roots=[], extra_roots_from=source.roots, refresh="manual") as session:
        registry.down = SkillIOError("the registry registry.example cannot be reached")
        with caplog.at_level(logging.WARNING, logger="skillpack.oci"):
            clock.now += 30
            assert source.check() == "failed"
            clock.now += 30
            assert source.check() == "failed"
        session.refresh()
        assert names(session) == ["alpha", "beta"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # one per failure episode
    assert REFERENCE in warnings[0] and "cannot be reached" in warnings[0]
    state = source.state()
    assert state.stale and state.digest == ONE and state.failures == 2
    assert state.failing_since == 1_800_000_030.0 and state.failed_at == 1_800_000_060.0
    detail = state.to_dict()
    assert detail == {
        "reference": REFERENCE,
        "digest": ONE,
        "state": "stale",
        "poll": 30,
        "checked": "2027-01-15T08:00:00Z",
        "error": "the registry registry.example cannot be reached",
        "failing_since": "2027-01-15T08:00:30Z",
        "failed": "2027-01-15T08:01:00Z",
        "failures": 2,
    }
    source.close()


def test_a_digest_that_fails_to_pull_keeps_the_last_good_one_and_leaves_no_folder(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    base = tmp_path / "oci"
    source = started(registry, base)
    registry.tag, registry.refuse = TWO, {TWO}
    assert source.check() == "failed"
    assert source.roots() == (str(base / f"sha256-{'1' * 64}"),)
    assert "signature does not verify" in (source.state().error or "")
    assert not (base / f"sha256-{'2' * 64}").exists()
    source.close()


def test_a_check_that_answers_again_clears_the_stale_state(
    registry: FakeRegistry, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = started(registry, tmp_path / "oci")
    registry.down = SkillIOError("down")
    assert source.check() == "failed"
    registry.down = None
    with caplog.at_level(logging.WARNING, logger="skillpack.oci"):
        assert source.check() == "unchanged"
    state = source.state()
    assert not state.stale and state.failures == 0 and state.error is None
    assert "stale" not in str(state.to_dict()) and state.to_dict()["state"] == "fresh"
    assert any("answers again" in r.getMessage() for r in caplog.records)
    registry.down = SkillIOError("down again")
    assert source.check() == "failed"
    assert source.state().failures == 1  # a new episode
    source.close()


def test_a_first_pull_that_fails_stops_the_start_with_what_where_and_the_fix(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    registry.down = SkillIOError("the registry registry.example cannot be reached")
    source = OciSource(REFERENCE, fetcher=registry, base=tmp_path / "oci", poll=30)
    with pytest.raises(SkillIOError) as caught:
        source.start()
    message = str(caught.value)
    assert REFERENCE in message and "cannot be reached" in message and "start it again" in message
    with pytest.raises(UsageError, match="start"):
        source.state()


def test_polling_runs_on_its_own_thread_until_closed(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    source = OciSource(REFERENCE, fetcher=registry, base=tmp_path / "oci", poll=1)
    source.start()
    swapped: list[bool] = []
    source.subscribe(lambda: swapped.append(True))
    registry.tag = TWO
    import threading

    heard = threading.Event()
    source.subscribe(heard.set)
    source.start_polling()
    assert heard.wait(10)
    source.close()
    assert swapped == [True] and source.state().digest == TWO


@pytest.mark.parametrize(
    ("reference", "poll", "words"),
    [
        (f"oci://registry.example/team/skills@{ONE}", 30.0, "pinned by digest"),
        (REFERENCE, 0.2, "below 1 second"),
    ],
)
def test_a_poll_that_cannot_work_is_refused(reference: str, poll: float, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        check_poll(reference, poll)


def test_a_pinned_reference_without_a_poll_is_fine() -> None:
    check_poll(f"oci://registry.example/team/skills@{ONE}", None)
    assert (
        SourceState(reference=REFERENCE, digest=ONE, poll=None, checked_at=None).to_dict()[
            "checked"
        ]
        is None
    )


@needs_registry
def test_a_source_over_a_real_registry_pulls_into_the_cache_and_follows_the_tag(
    tmp_path: Path, isolated_home: Path
) -> None:
    from skillpack._paths import oci_skills_dir
    from skillpack.install._oci_publish import publish_oci
    from skillpack.install._oci_resolve import OciOptions

    source = tmp_path / "src"
    write_skill(source, "alpha")
    write_skill(source, "beta")
    with run_registry(tmp_path / "registry") as registry:
        repo = f"{registry.host}/team/skills"
        first = publish_oci(str(source), repo, tags=["stable"]).artifacts[-1].digest
        served = open_oci_source(f"{repo}:stable", poll=None, options=OciOptions())
        try:
            assert served.reference == f"oci://{repo}:stable"
            assert served.state().digest == first and served.poll is None
            (root,) = served.roots()
            assert Path(root).parent == oci_skills_dir()
            assert sorted(p.name for p in Path(root).iterdir()) == ["alpha", "beta"]
            write_skill(source, "gamma")
            second = publish_oci(str(source), repo, tags=["stable"]).artifacts[-1].digest
            assert served.check() == "swapped" and served.state().digest == second
            assert sorted(p.name for p in Path(served.roots()[0]).iterdir()) == [
                "alpha",
                "beta",
                "gamma",
            ]
        finally:
            served.close()


@pytest.mark.skipif(sys.platform == "win32", reason="folders are shared with flock on POSIX")
def test_a_removed_folder_takes_its_lock_file_along_and_an_orphan_lock_goes_too(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    base = tmp_path / "oci"
    source = started(registry, base)
    orphan = base / f"sha256-{'9' * 64}.lock"  # a pull that never finished left it
    orphan.touch()
    registry.tag = TWO
    assert source.check() == "swapped"
    assert source.check() == "unchanged"
    assert sorted(p.name for p in base.iterdir()) == [
        f"sha256-{'2' * 64}",
        f"sha256-{'2' * 64}.lock",
    ]
    source.close()


@pytest.mark.skipif(sys.platform == "win32", reason="folders are shared with flock on POSIX")
def test_a_server_waiting_while_a_folder_is_removed_locks_the_lock_file_there_now(
    tmp_path: Path,
) -> None:
    import fcntl
    import threading

    from skillpack.runtime import _oci_source

    folder = tmp_path / f"sha256-{'1' * 64}"
    folder.mkdir()
    lock = tmp_path / f"{folder.name}.lock"
    remover = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(remover, fcntl.LOCK_EX)  # another server is removing the folder
    held: list[int | None] = []
    waiter = threading.Thread(target=lambda: held.append(_oci_source._hold(folder)))
    waiter.start()
    time.sleep(0.2)  # the waiter has opened the old lock file and waits on it
    assert not held
    folder.rmdir()
    lock.unlink()
    os.close(remover)
    waiter.join(timeout=10)
    (fd,) = held
    assert fd is not None
    try:
        # Its lock is on the file at the path now, which the next remover opens.
        assert os.fstat(fd).st_ino == lock.stat().st_ino
        assert not _oci_source._remove_unused(folder)
        assert lock.exists()
    finally:
        _oci_source._release(fd)
    assert _oci_source._remove_unused(folder)
    assert not lock.exists()
