"""Where a scope installs, and the transaction that changes it: stage, swap, commit, recover.

A change to a scope (installs, updates, removals of several skills at once) runs
under the scope's cross-process lock (`config._lock.file_lock` on
`<skills dir>/.skillpack`), in a hidden transaction folder inside the skills folder
(same filesystem, so every move is a `rename`; hidden, so discovery never lists it):

1. `journal.json` names every skill changed and the skill digest it will have;
2. the new versions (verified in memory) are written under `new/`;
3. each live folder moves to `old/` and its new version moves in (a rename each);
4. the lock file is rewritten (one atomic rename): **this is the commit**;
5. the transaction folder is deleted, and the old versions with it.

A process killed at any step leaves a transaction folder behind; `recover` (run at
the start of every change and by `doctor`) finishes it: a skill whose lock entry
already has the new digest stays, any other gets its old folder back. Before step 3
nothing visible changed at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import SkillIOError, UsageError
from .._paths import home_dir, project_root
from ._lockfile import OURS, PROJECT_LOCK_NAME, USER_LOCK_NAME, read_lock, write_lock
from ._values import Candidate, InstallScope

TXN_PREFIX = ".skillpack-txn-"
_GUARD = ".skillpack"
LOCK_WAIT_SECONDS = 120.0
"""How long a change waits for another one to the same scope before giving up."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Target:
    """A scope's folders and files."""

    scope: InstallScope
    base: Path
    """The home folder (user) or the project root (project)."""
    skills_dir: Path
    """`<base>/.agents/skills`: where skills are installed."""
    lock_path: Path
    """`<project root>/skills-lock.json`, or `~/.agents/.skillpack-lock.json`."""

    @property
    def lock_dir(self) -> Path | None:
        """The folder local sources are recorded relative to (project scope only)."""
        return self.base if self.scope == "project" else None

    @property
    def claude_skills(self) -> Path:
        """Claude Code's skills folder in this scope (it does not read `.agents`)."""
        return self.base / ".claude" / "skills"

    @contextlib.contextmanager
    def locked(self, waiting: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold the scope's lock: one change to a scope at a time, across processes.

        Another install holding it is waited for, `LOCK_WAIT_SECONDS` at most;
        `waiting(message)` is called once when that wait starts.
        """
        from ..config._lock import file_lock

        def say() -> None:
            if waiting is not None:
                waiting(
                    f"Waiting for another skillpack install, update or remove in "
                    f"{self.skills_dir} to finish (up to {LOCK_WAIT_SECONDS:g} s)..."
                )

        with file_lock(self.skills_dir / _GUARD, timeout=LOCK_WAIT_SECONDS, on_wait=say):
            yield


def target_for(scope: InstallScope, *, cwd: str | None = None) -> Target:
    """The folders of `scope`: the user's home, or the project root of `cwd`."""
    if scope == "user":
        base = home_dir()
        return Target(
            scope="user",
            base=base,
            skills_dir=base / ".agents" / "skills",
            lock_path=base / ".agents" / USER_LOCK_NAME,
        )
    root = project_root(cwd)
    if root == home_dir().resolve():
        raise UsageError(
            f"--project needs a project, but the project root of {cwd or os.getcwd()} is your "
            "home folder (no .git, .jj or .skillpack above it). Run it inside a project, or "
            "install into the user scope without --project."
        )
    return Target(
        scope="project",
        base=root,
        skills_dir=root / ".agents" / "skills",
        lock_path=root / PROJECT_LOCK_NAME,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Change:
    """One skill to write (candidate) or to delete (None)."""

    name: str
    candidate: Candidate | None


def commit(target: Target, changes: Sequence[Change], lock: Mapping[str, Any]) -> None:
    """Apply `changes` and write `lock` as one transaction (hold `target.locked()`).

    Raises:
        SkillIOError: a file could not be written or moved; the scope is as it was.
    """
    txn = target.skills_dir / f"{TXN_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
    try:
        (txn / "new").mkdir(parents=True)
        (txn / "old").mkdir()
        journal = {c.name: c.candidate.skill_digest if c.candidate else None for c in changes}
        _write_journal(txn, journal)
        for change in changes:
            if change.candidate is not None:
                stage(txn / "new" / change.name, change.candidate)
    except OSError as error:
        shutil.rmtree(txn, ignore_errors=True)
        raise SkillIOError(
            f"Cannot write into {target.skills_dir} ({error.strerror or error}); nothing was "
            "changed. Check the disk space and the folder's permissions."
        ) from None
    except BaseException:
        shutil.rmtree(txn, ignore_errors=True)
        raise
    try:
        for change in changes:
            live = target.skills_dir / change.name
            if os.path.lexists(live):
                os.rename(live, txn / "old" / change.name)
            if change.candidate is not None:
                os.rename(txn / "new" / change.name, live)
        write_lock(target.lock_path, lock)
    except (OSError, SkillIOError) as error:
        _recover_one(txn, read_lock(target.lock_path), target.skills_dir)
        raise SkillIOError(
            f"Cannot swap the new skills into {target.skills_dir} ({error}); the previous "
            "versions were put back."
        ) from None
    finish(txn)


def finish(txn: Path) -> None:
    """Delete a transaction folder (and the old versions in it) once it is settled."""
    shutil.rmtree(txn, ignore_errors=True)


def stage(folder: Path, candidate: Candidate) -> None:
    """Write the candidate's files (verified in memory) into the new folder `folder`.

    Files are created exclusively (`O_EXCL`, never through a symlink), executable
    ones 0755, relative to a descriptor of `folder` where the OS allows it (shorter
    path walks). They are not fsynced one by one: the commit is the lock file's
    atomic, fsynced rename, and a skill whose files did not reach the disk before a
    power loss shows up in `doctor` as modified.
    """
    payload = candidate.payload
    os.mkdir(folder)
    top = os.open(folder, _DIRECTORY) if _DIR_FD else None
    made = {""}
    try:
        for path, data in payload.files.items():
            parent = path.rpartition("/")[0]
            if parent not in made:
                _make_folders(folder, parent, made, top)
            name = path if top is not None else os.path.join(folder, *path.split("/"))
            _write_new(name, data, path in payload.executable, top)
    finally:
        if top is not None:
            os.close(top)


def _make_folders(folder: Path, parent: str, made: set[str], top: int | None) -> None:
    """Create `parent` and the folders above it (relative to the staged folder)."""
    above = parent.rpartition("/")[0]
    if above not in made:
        _make_folders(folder, above, made, top)
    if top is not None:
        os.mkdir(parent, dir_fd=top)
    else:
        os.mkdir(os.path.join(folder, *parent.split("/")))
    made.add(parent)


def _write_new(name: str, data: bytes, executable: bool, dir_fd: int | None) -> None:
    fd = os.open(name, _CREATE, 0o755 if executable else 0o644, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0)
_DIR_FD = os.open in os.supports_dir_fd and os.mkdir in os.supports_dir_fd


def _write_journal(txn: Path, journal: Mapping[str, str | None]) -> None:
    # A plain write: a journal cut short by a kill means the kill came before any swap,
    # which is what recovery assumes of a journal it cannot read.
    (txn / "journal.json").write_text(json.dumps({"skills": dict(journal)}), encoding="utf-8")


def pending(target: Target) -> list[Path]:
    """Transaction folders left behind by processes that were stopped."""
    try:
        return sorted(
            target.skills_dir / entry.name
            for entry in os.scandir(target.skills_dir)
            if entry.name.startswith(TXN_PREFIX) and entry.is_dir(follow_symlinks=False)
        )
    except OSError:
        return []


def recover(target: Target) -> list[str]:
    """Finish every interrupted transaction of the scope (hold `target.locked()`).

    Returns:
        The names whose previous version was put back.
    """
    restored: list[str] = []
    folders = pending(target)
    if not folders:
        return restored
    lock = read_lock(target.lock_path)
    for txn in folders:
        restored.extend(_recover_one(txn, lock, target.skills_dir))
    return restored


def _recover_one(txn: Path, lock: Mapping[str, Any], skills_dir: Path) -> list[str]:
    try:
        journal = json.loads((txn / "journal.json").read_text(encoding="utf-8"))["skills"]
    except (OSError, ValueError, KeyError, TypeError):
        journal = {}  # killed before the journal: nothing was swapped
    restored: list[str] = []
    entries = lock.get("skills", {})
    for name, digest in journal.items() if isinstance(journal, dict) else ():
        entry = entries.get(name)
        ours = entry.get(OURS) if isinstance(entry, dict) else None
        recorded = ours.get("skillDigest") if isinstance(ours, dict) else None
        if (digest is None and entry is None) or (digest is not None and recorded == digest):
            continue  # committed
        live, old, new = skills_dir / name, txn / "old" / name, txn / "new" / name
        if digest is not None and not os.path.lexists(new) and os.path.lexists(live):
            discard = txn / "discard"
            discard.mkdir(exist_ok=True)
            os.rename(live, discard / name)  # the new version was swapped in: take it out
        if os.path.lexists(old) and not os.path.lexists(live):
            os.rename(old, live)
            restored.append(name)
    finish(txn)
    return restored
