"""install, update and remove: resolve, plan, approve, then one transaction per scope.

The flow of every change:

1. resolve the source (network, git, archives) into verified candidates, with the
   scope untouched and unlocked;
2. plan against the lock file and the disk, and ask the `approve` callback (the CLI
   shows each skill, its files, scripts, tools, hooks, dependencies and audit);
3. take the scope's lock, finish any interrupted transaction, plan again and keep
   only what was approved and is still the same (anything that changed meanwhile is
   refused as `changed-concurrently`), and commit (`_txn.commit`).

Skills installed into a scope whose base holds a `.claude` folder also get a
relative symlink in `.claude/skills/<name>` (Claude Code reads only its own folder),
as the `skills` npm CLI does; a folder already there is left alone, with a warning.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._errors import SkillIOError, UsageError
from .._paths import cache_dir, system_skills_dir
from .._version import __version__
from ._http import Fetcher
from ._kinds import parse_source, resolve
from ._lockfile import LockedSkill, locked_skills, make_entry, read_lock
from ._plan import Plan, PlanItem, make_plan
from ._source import Source
from ._transport import ProgressHook
from ._txn import Change, Target, commit, recover, target_for
from ._values import Candidate, InstallScope, Limits, Origin, Refusal, Request, Resolved

if TYPE_CHECKING:
    from ._oci_resolve import OciOptions

Approve = Callable[[Plan], bool]
"""Shown the plan before anything is written; True goes ahead."""


def approve_all(plan: Plan) -> bool:
    """An `Approve` that accepts every plan (the CLI's `--yes`)."""
    return True


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """What an install, update or remove did."""

    plan: Plan
    approved: bool
    """False when the approval callback declined (nothing was written)."""
    written: tuple[PlanItem, ...] = ()
    removed: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    """Every refusal: the plan's and any found under the lock."""
    recovered: tuple[str, ...] = ()
    """Skills whose previous version an interrupted transaction had to put back."""
    warnings: tuple[str, ...] = ()
    lock_path: str = ""

    @property
    def ok(self) -> bool:
        """Nothing refused and nothing declined."""
        return self.approved and not self.refusals

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "approved": self.approved,
            "scope": self.plan.scope,
            "skills_dir": self.plan.skills_dir,
            "lock": self.lock_path,
            "installed": [item.to_dict() for item in self.written],
            "unchanged": list(self.plan.unchanged),
            "removed": list(self.removed),
            "refused": [refusal.to_dict() for refusal in self.refusals],
            "recovered": list(self.recovered),
            "warnings": list(self.warnings),
        }


def install(
    source: str,
    *,
    skills: Sequence[str] = (),
    all_skills: bool = False,
    scope: InstallScope = "user",
    cwd: str | None = None,
    approve: Approve,
    limits: Limits | None = None,
    progress: ProgressHook | None = None,
    oci: OciOptions | None = None,
    waiting: Callable[[str], None] | None = None,
) -> Outcome:
    """Install skills from SOURCE (a site, git repository, archive, folder or OCI artifact).

    Args:
        source: What the user typed (see `_kinds.parse_source`).
        skills: Names to take; empty takes the only skill, or every skill with
            `all_skills` (a source offering several needs one or the other).
        all_skills: Take every skill the source offers.
        scope: `user` (`~/.agents/skills`) or `project` (`<root>/.agents/skills`).
        cwd: Where relative paths and the project root are taken from.
        approve: Called with the plan before anything is written.
        limits: Download and unpack bounds.
        progress: Called as bytes arrive (the CLI's progress bar).
        oci: Registries to reach insecurely and a signature key to demand (`oci://`).
        waiting: Called with a message once, if another install holds the scope's
            lock and this one waits for it (the CLI's progress line).

    Raises:
        UsageError: SOURCE cannot be understood, or several skills and no choice.
        SkillIOError: the source as a whole cannot be read (no index, clone failed).
    """
    limits = limits or Limits()
    target = target_for(scope, cwd=cwd)
    parsed = parse_source(source, cwd=cwd or os.getcwd())
    request = Request(wanted=set(skills) if skills else None, single=not skills and not all_skills)
    with _fetcher(parsed, limits, progress) as fetcher:
        offer = resolve(parsed, request, limits=limits, fetcher=fetcher, oci=oci)
    return _apply(target, offer.resolved, (), approve=approve, limits=limits, waiting=waiting)


def install_system(
    *, approve: Approve, limits: Limits | None = None, skills: Sequence[str] = ()
) -> Outcome:
    """Copy the skills bundled with skillpack into the user scope, so that other agents
    (Claude Code, Codex, OpenCode) see them. Recorded with skillpack's version: a
    later `update` brings a newer skillpack's copies, and a copy the user edited is
    never overwritten (`locally-modified`)."""
    limits = limits or Limits()
    source = Source(kind="folder", text="skillpack (bundled)", location=system_skills_dir())
    offer = resolve(
        source,
        Request(wanted=set(skills) if skills else None),
        limits=limits,
        fetcher=None,
        system=True,
    )
    return _apply(target_for("user"), offer.resolved, (), approve=approve, limits=limits)


def update(
    names: Sequence[str] = (),
    *,
    scope: InstallScope = "user",
    cwd: str | None = None,
    approve: Approve,
    limits: Limits | None = None,
    progress: ProgressHook | None = None,
    oci: OciOptions | None = None,
    waiting: Callable[[str], None] | None = None,
) -> Outcome:
    """Re-resolve installed skills (all, or `names`) from their recorded sources and
    install what changed, with the same approval. Unchanged skills are skipped
    (site entries by their artifact digest, OCI ones when their tag still resolves to
    the recorded manifest digest, without downloading them)."""
    limits = limits or Limits()
    target = target_for(scope, cwd=cwd)
    locked = locked_skills(read_lock(target.lock_path), lock_dir=target.lock_dir)
    refusals: list[Refusal] = []
    for name in names:
        if name not in locked:
            refusals.append(_not_installed(name, target))
    chosen = [locked[name] for name in (names or sorted(locked)) if name in locked]
    groups: dict[tuple[Any, ...], list[LockedSkill]] = {}
    for skill in chosen:
        if skill.origin is None:
            refusals.append(
                Refusal(
                    name=skill.name,
                    code="source-unknown",
                    message=f"{skill.name} was installed from a source of type "
                    f"{skill.entry.get('sourceType')!r}, which skillpack cannot update.",
                )
            )
            continue
        origin = skill.origin
        key = (origin.source_type, origin.source_url or origin.source, origin.ref)
        groups.setdefault(key, []).append(skill)
    candidates: list[Candidate] = []
    warnings: list[str] = []
    unchanged: list[str] = []
    for group in groups.values():
        first = group[0].origin
        assert first is not None
        request = Request(
            wanted={skill.name for skill in group},
            known={
                skill.name: _known_digest(skill.origin)
                for skill in group
                if skill.origin is not None and _known_digest(skill.origin)
            },
        )
        try:
            source = source_of(first)
            with _fetcher(source, limits, progress) as fetcher:
                offer = resolve(
                    source,
                    request,
                    limits=limits,
                    fetcher=fetcher,
                    system=first.source_type == "system",
                    oci=oci,
                )
        except (SkillIOError, UsageError) as error:
            refusals.extend(
                Refusal(name=skill.name, code="source-failed", message=f"{skill.name}: {error}")
                for skill in group
            )
            continue
        candidates.extend(offer.resolved.candidates)
        refusals.extend(offer.resolved.refusals)
        warnings.extend(offer.resolved.warnings)
        unchanged.extend(offer.unchanged)
    resolved = Resolved(
        candidates=tuple(candidates), refusals=tuple(refusals), warnings=tuple(warnings)
    )
    return _apply(
        target, resolved, tuple(unchanged), approve=approve, limits=limits, waiting=waiting
    )


def remove(
    names: Sequence[str], *, scope: InstallScope = "user", cwd: str | None = None
) -> Outcome:
    """Delete installed skills and their lock entries (one transaction)."""
    if not names:
        raise UsageError("Name at least one skill to remove.")
    target = target_for(scope, cwd=cwd)
    refusals: list[Refusal] = []
    with target.locked():
        recovered = recover(target)
        document = read_lock(target.lock_path)
        skills = dict(document.get("skills", {}))
        removed = []
        for name in dict.fromkeys(names):
            if name in skills:
                removed.append(name)
                del skills[name]
            else:
                refusals.append(_not_installed(name, target))
        if removed:
            commit(
                target,
                [Change(name=name, candidate=None) for name in removed],
                {**document, "skills": skills},
            )
    warnings = _unlink_claude(target, removed)
    plan = Plan(scope=target.scope, skills_dir=str(target.skills_dir))
    return Outcome(
        plan=plan,
        approved=True,
        removed=tuple(removed),
        refusals=tuple(refusals),
        recovered=tuple(recovered),
        warnings=tuple(warnings),
        lock_path=str(target.lock_path),
    )


def _known_digest(origin: Origin) -> str:
    """The digest that, unchanged at the source, means the skill is current."""
    from ._kinds import kind_recorded

    return kind_recorded(origin).known_digest(origin)


def source_of(origin: Origin) -> Source:
    """The source to re-resolve a lock entry from, by the kind that recorded it (an
    OCI one by its tag, or by its recorded digest when it was installed by digest)."""
    from ._kinds import kind_recorded

    return kind_recorded(origin).source_of(origin)


# --- the shared tail ---------------------------------------------------------------


def _apply(
    target: Target,
    resolved: Resolved,
    unchanged: tuple[str, ...],
    *,
    approve: Approve,
    limits: Limits,
    waiting: Callable[[str], None] | None = None,
) -> Outcome:
    # The plan reads the scope under its lock too: another change half-way through its
    # commit would otherwise look like a folder that is not ours. (A scope without its
    # folder yet has nothing half-written, and a refused install must not create it.)
    # Approval (a person, perhaps) then happens without holding the lock.
    exists = target.skills_dir.is_dir()
    with target.locked(waiting) if exists else contextlib.nullcontext():
        document = read_lock(target.lock_path)
        locked = locked_skills(document, lock_dir=target.lock_dir)
        items, current, refusals = make_plan(target, resolved.candidates, locked, limits=limits)
    plan = Plan(
        scope=target.scope,
        skills_dir=str(target.skills_dir),
        items=tuple(items),
        unchanged=tuple(sorted({*unchanged, *current})),
        refusals=(*resolved.refusals, *refusals),
        warnings=resolved.warnings,
    )
    if not plan.items or not approve(plan):
        return Outcome(
            plan=plan,
            approved=not plan.items,
            refusals=plan.refusals,
            warnings=plan.warnings,
            lock_path=str(target.lock_path),
        )
    late: list[Refusal] = []
    written: list[PlanItem] = []
    with target.locked(waiting):
        recovered = recover(target)
        document = read_lock(target.lock_path)
        locked = locked_skills(document, lock_dir=target.lock_dir)
        again, now_current, again_refused = make_plan(
            target, tuple(item.candidate for item in plan.items), locked, limits=limits
        )
        still = {item.key for item in again}
        for item in plan.items:
            if item.key in still:
                written.append(next(i for i in again if i.key == item.key))
            elif item.candidate.name in now_current:
                continue  # another install wrote the very same skill meanwhile: done
            else:
                late.append(
                    Refusal(
                        name=item.candidate.name,
                        code="changed-concurrently",
                        message=f"{item.candidate.name} was changed in {target.skills_dir} by "
                        "another install, update or remove since this one made its plan; "
                        "nothing of it was written. Run the command again to see the change.",
                    )
                )
        if now_current:
            plan = replace(plan, unchanged=tuple(sorted({*plan.unchanged, *now_current})))
        del again_refused  # each of those names is already refused above
        if written:
            now = _now()
            skills = dict(document.get("skills", {}))
            for item in written:
                skills[item.candidate.name] = make_entry(
                    item.candidate,
                    lock_dir=target.lock_dir,
                    now=now,
                    previous=locked.get(item.candidate.name),
                    version=__version__ if item.candidate.origin.source_type == "system" else None,
                )
            commit(
                target,
                [Change(name=item.candidate.name, candidate=item.candidate) for item in written],
                {**document, "skills": skills},
            )
    warnings = list(plan.warnings) + _link_claude(target, [i.candidate.name for i in written])
    return Outcome(
        plan=plan,
        approved=True,
        written=tuple(written),
        refusals=(*plan.refusals, *late),
        recovered=tuple(recovered),
        warnings=tuple(warnings),
        lock_path=str(target.lock_path),
    )


def _fetcher(source: Source, limits: Limits, progress: ProgressHook | None) -> Any:
    import contextlib

    from ._kinds import kind_named

    if source.is_local or not kind_named(source.kind).uses_fetcher:
        return contextlib.nullcontext(None)
    return Fetcher(limits=limits, progress=progress, cache_dir=cache_dir() / "http")


def _now() -> str:
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def _not_installed(name: str, target: Target) -> Refusal:
    live = target.skills_dir / name
    hint = (
        f" {live} exists but no lock entry records it; delete it yourself if you mean to."
        if os.path.lexists(live)
        else ""
    )
    return Refusal(
        name=name,
        code="not-installed",
        message=f"{name} is not installed in the {target.scope} scope ({target.lock_path})." + hint,
    )


# --- Claude Code's folder -----------------------------------------------------------


def _link_claude(target: Target, names: Collection[str]) -> list[str]:
    if not names or not (target.base / ".claude").is_dir():
        return []
    warnings: list[str] = []
    for name in names:
        link = target.claude_skills / name
        live = target.skills_dir / name
        if os.path.islink(link) and os.path.realpath(link) == os.path.realpath(live):
            continue
        if os.path.lexists(link):
            warnings.append(
                f"{link} already exists and is not a link to {live}; Claude Code uses that "
                "folder, not the installed skill."
            )
            continue
        try:
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.path.relpath(live, link.parent), link, target_is_directory=True)
        except OSError as error:
            warnings.append(f"Cannot link {link} to {live} for Claude Code ({error}).")
    return warnings


def _unlink_claude(target: Target, names: Collection[str]) -> list[str]:
    warnings: list[str] = []
    for name in names:
        link = target.claude_skills / name
        if not os.path.islink(link):
            continue
        pointed = os.path.normpath(os.path.join(link.parent, os.readlink(link)))
        if pointed != os.path.normpath(target.skills_dir / name):
            continue
        try:
            os.unlink(link)
        except OSError as error:
            warnings.append(f"Cannot remove the link {link} ({error}).")
    return warnings
