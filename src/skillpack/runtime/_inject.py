"""Layer 2 for one session: skills rendered into context, and what was handed out.

`Injections` renders a skill's `<skill_content>` block (body read and re-checked by
the session's reader, embedded commands run under its shell policy, files listed),
or a short reminder when the same version went out earlier in the session, and
records what a caller handed to the model: the version injected per skill and the
skills leading since the last user turn. A reload is suppressed by version: any
difference the reader reports (`SkillReader.version`) sends the whole body again,
and so do arguments, or a host saying its context was compacted.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._model import Skill
from ..render._injection import render_injection, render_reminder
from ..render._substitute import substitute
from ._deps import DependencyResolver
from ._permissions import PermissionGate
from ._readers import SkillReader

if TYPE_CHECKING:
    from ._shell import ShellPolicy, ShellRun


@dataclass(frozen=True, kw_only=True, slots=True)
class Injection:
    """One skill loaded into context."""

    skill: Skill
    text: str
    """The rendered `<skill_content>` block, or a reminder when `reminder` is set."""
    reminder: bool
    """True when this version was already injected earlier in the session."""
    commands: tuple[ShellRun, ...] = ()
    """The skill's embedded shell commands and what became of each (with a policy)."""
    missing_dependencies: tuple[dict[str, str], ...] = ()
    """`{"type", "name"}` of each declared env var / MCP server still missing."""
    version: tuple[int, ...] = (0, 0)
    """The reader's version of the SKILL.md read for this injection, `(mtime_ns, size,
    ...)` (the filesystem adds `ctime_ns`)."""


class Injections:
    """Rendering skills for one session, and the record of what it handed out.

    Guarded by the session's lock (re-entrant), so that `Session.end_turn` and
    `Session.inspect` see the leading skills and the chain of forks at one moment.
    """

    def __init__(
        self,
        *,
        lock: threading.RLock,
        gate: PermissionGate,
        reader: SkillReader,
        deps: DependencyResolver,
        shell: ShellPolicy | None,
    ) -> None:
        self._lock = lock
        self._gate = gate
        self._reader = reader
        self._deps = deps
        self._shell = shell
        self._injected: dict[str, tuple[int, ...]] = {}
        self._leading: list[Skill] = []
        self._used: dict[str, int] = {}
        self._uses = 0

    # -- rendering -------------------------------------------------------------------

    def render(self, skill: Skill, *, args: str, action: str, session_id: str) -> Injection:
        """The injection (or reminder) of `skill`, recording nothing (see `record`)."""
        self._gate.require(skill, action)
        version = self._reader.version(skill)
        with self._lock:
            seen = self._injected.get(skill.key)
        if seen == version and not args:
            missing = self._deps.report(skill).missing
            return Injection(
                skill=skill,
                text=render_reminder(skill),
                reminder=True,
                missing_dependencies=missing,
                version=version,
            )
        missing = self._deps.resolve(skill).missing
        body = self._reader.read_body(skill)
        keep, commands = self._preprocess(skill, body)
        files, truncated = self._reader.list_files(skill)
        text = render_injection(
            skill,
            body,
            args=args,
            session_id=session_id,
            files=files,
            files_truncated=truncated,
            keep=keep,
        )
        return Injection(
            skill=skill,
            text=text,
            reminder=False,
            commands=commands,
            missing_dependencies=missing,
            version=version,
        )

    def body(self, skill: Skill, *, args: str, session_id: str) -> str:
        """The body as the model gets it: commands run, then arguments substituted
        around them; no envelope, no file listing."""
        body = self._reader.read_body(skill)
        keep, _ = self._preprocess(skill, body)
        return substitute(body, args=args, skill=skill, session_id=session_id, keep=keep)

    def _preprocess(
        self, skill: Skill, body: str
    ) -> tuple[tuple[tuple[int, int, str], ...], tuple[ShellRun, ...]]:
        if self._shell is None:
            return (), ()
        from ._shell import preprocess

        done = preprocess(skill, body, policy=self._shell, gate=self._gate)
        return done.keep, done.runs

    # -- the record ------------------------------------------------------------------

    def record(self, injections: Sequence[Injection]) -> None:
        """Remember injections whose text was handed out: loaded versions, leaders."""
        with self._lock:
            for injection in injections:
                key = injection.skill.key
                self._uses += 1
                self._used[key] = self._uses
                if all(s.key != key for s in self._leading):
                    self._leading.append(injection.skill)
                if not injection.reminder:
                    self._injected[key] = injection.version

    def recent(self) -> dict[str, int]:
        """When each skill was last handed out in the session, by `Skill.key`: a
        larger number is a more recent use (what ranks a catalog that must be cut)."""
        with self._lock:
            return dict(self._used)

    def forget(self, skill: Skill) -> None:
        with self._lock:
            self._injected.pop(skill.key, None)

    def compacted(self, kept: Sequence[str]) -> None:
        """Forget every injection but those of the SKILL.md paths in `kept`."""
        keep = set(kept)
        with self._lock:
            for key in list(self._injected):
                if key not in keep:
                    del self._injected[key]

    def snapshot(self) -> tuple[dict[str, tuple[int, ...]], tuple[Skill, ...]]:
        """The version injected per skill key and the leading skills, at one moment."""
        with self._lock:
            return dict(self._injected), tuple(self._leading)

    def leading(self) -> tuple[Skill, ...]:
        with self._lock:
            return tuple(self._leading)

    def clear_leading(self) -> None:
        with self._lock:
            self._leading.clear()
