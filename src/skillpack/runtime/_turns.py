"""A user message turned into skills used: resolution, then each activation injected
or forked, all or nothing per skill (`Session.prepare_turn`), and when nothing was
activated, the skills that may fit the request as suggestions (`_suggest`).

Resolution itself is pure (`select._resolve.resolve_message`); here the session's
enable state, permissions and config go into it, turned-off skills are explained
(`skills_off_message`), and each activated skill is used: inline ones rendered by
the session's `Injections`, `context: fork` ones run by `_fork.run_fork`. A skill
that cannot be used becomes a diagnostic (`load-failed`, `permission-denied`,
`fork-unavailable`, `fork-failed`, `cycle`) and nothing of it is recorded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from .._errors import SkillpackError, SkillPermissionError
from .._model import Skill
from ..config._schema import Config
from ..index._suggest import Suggestion, suggestion_note
from ..select._resolve import (
    Activation,
    Diagnostic,
    DiagnosticKind,
    Resolution,
    resolve_message,
)
from ..select._resolve import (
    Invoker as Invoker,  # the one alias, re-exported for the session's signatures
)
from ._fork import CycleError, ForkRun, SubagentRunner, no_runner_message
from ._inject import Injection
from ._parts import SessionParts
from ._suggest import turn_suggestions


@dataclass(frozen=True, kw_only=True, slots=True)
class Turn:
    """What `prepare_turn` decided for one message."""

    activations: tuple[Activation, ...]
    """The skills this turn used: each inline one injected, each forked one run."""
    injections: tuple[str, ...]
    """One `<skill_content>` block (or a short reminder) per inline activation, in order."""
    diagnostics: tuple[Diagnostic, ...]
    """Why references did not activate, and why an activated skill could not be used
    (`load-failed`, `permission-denied`, `fork-unavailable`, `fork-failed`, `cycle`):
    such a skill is left out of `activations` and nothing of it is recorded."""
    lines: tuple[str, ...]
    """Visible lines for the transcript, e.g. `Using skill: pdf-forms`."""
    text: str
    """The task text left once the mentions or the slash command are taken out."""
    forks: tuple[ForkRun, ...] = ()
    """The `context: fork` activations, handed to the host's subagent runner, in order."""
    suggestions: tuple[Suggestion, ...] = ()
    """At most `[search] suggestions` (3) skills whose match with the request is
    strong, best first (`index._suggest.pick_suggestions`); none when the message
    activated a skill. Hints for the model, never injected."""
    suggestion_note: str = ""
    """The short note a host puts before the model naming `suggestions` ("Skills that
    may fit this request ..."); empty when there are none."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "activations": [a.to_dict() for a in self.activations],
            "injections": list(self.injections),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "lines": list(self.lines),
            "text": self.text,
            "forks": [f.to_dict() for f in self.forks],
            "suggestions": [s.to_dict() for s in self.suggestions],
            "suggestion_note": self.suggestion_note,
        }


def skills_off_message(config: Config) -> str:
    """What a session says when the config turns every skill off."""
    files = ", ".join(config.sources) or "the config"
    return (
        "Skills are turned off: `[skills] enabled = false` in "
        f"{files}. Set it to true (or remove it) to use skills."
    )


def enable_command(parts: SessionParts, skill: Skill, shown: str) -> str:
    """The command that turns `skill` back on: `--project` when the project's config
    file is the one that disables it (the user file cannot undo it)."""
    from ..config._files import enable_decided_by, project_config_path

    cwd = os.path.abspath(parts.cwd or os.getcwd())
    decided = enable_decided_by(skill, cwd=cwd)
    if decided is not None and decided == project_config_path(cwd):
        return f"skillpack enable --project {shown}"
    return f"skillpack enable {shown}"


def resolve(
    parts: SessionParts, text: str, *, invoker: Invoker, builtin_commands: frozenset[str]
) -> Resolution:
    """`Session.resolve`: the session's catalog, enable state and config applied."""
    config = parts.live.config
    resolution = resolve_message(
        text,
        parts.live.catalog,
        invoker=invoker,
        is_enabled=parts.is_enabled,
        is_visible=parts.is_visible,
        multi_mention=config.multi_mention,
        builtin_commands=builtin_commands,
        base_dir=parts.cwd,
        enable_command=lambda skill, shown: enable_command(parts, skill, shown),
    )
    if config.skills_enabled or not resolution.diagnostics:
        return resolution
    message = skills_off_message(config)
    return replace(
        resolution,
        diagnostics=tuple(
            replace(d, message=message, hint=None) if d.kind == "disabled" else d
            for d in resolution.diagnostics
        ),
    )


def prepare_turn(
    parts: SessionParts,
    text: str,
    *,
    invoker: Invoker,
    runner: SubagentRunner | None,
    session_id: str,
    builtin_commands: frozenset[str],
) -> Turn:
    """`Session.prepare_turn`: resolve `text`, then use every activated skill."""
    parts.live.ensure_fresh()
    resolution = resolve(parts, text, invoker=invoker, builtin_commands=builtin_commands)
    if invoker == "user":
        parts.end_turn()
    used: list[Activation] = []
    lines: list[str] = []
    rendered: list[Injection] = []
    forks: list[ForkRun] = []
    diagnostics = list(resolution.diagnostics)
    for activation, line in zip(resolution.activations, resolution.lines, strict=True):
        try:
            outcome = _use(parts, activation, runner, session_id=session_id)
        except _Unusable as refused:
            diagnostics.append(refused.diagnostic(activation.token))
            continue
        if isinstance(outcome, ForkRun):
            forks.append(outcome)
        else:
            rendered.append(outcome)
        used.append(activation)
        lines.append(line)
    parts.injections.record(rendered)
    # Suggestions answer a person's request; a model's own message gets none.
    suggestions = turn_suggestions(parts, resolution) if invoker == "user" else ()
    return Turn(
        activations=tuple(used),
        injections=tuple(injection.text for injection in rendered),
        diagnostics=tuple(diagnostics),
        lines=tuple(lines),
        text=resolution.text,
        forks=tuple(forks),
        suggestions=suggestions,
        suggestion_note=suggestion_note(suggestions),
    )


def _use(
    parts: SessionParts, activation: Activation, runner: SubagentRunner | None, *, session_id: str
) -> Injection | ForkRun:
    """One activation of a turn: injected, or run on `runner`; `_Unusable` if not."""
    skill, args = activation.skill, activation.args
    try:
        if skill.context != "fork":
            parts.chain.check(skill)
            return parts.injections.render(skill, args=args, action="load", session_id=session_id)
        if runner is None:
            raise _Unusable("fork-unavailable", no_runner_message(skill))
        result = parts.run_fork(skill, args, runner, session_id=session_id, failure=_Unusable)
        return ForkRun(skill=skill, args=args, result=result)
    except CycleError as exc:
        raise _Unusable("cycle", str(exc)) from exc
    except SkillPermissionError as exc:
        raise _Unusable("permission-denied", str(exc), exc.hint) from exc
    except SkillpackError as exc:
        raise _Unusable("load-failed", str(exc), exc.hint) from exc


class _Unusable(Exception):
    """An activated skill a turn could not use, as the diagnostic that says why."""

    def __init__(self, kind: DiagnosticKind, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.kind: DiagnosticKind = kind
        self.message = message
        self.hint = hint

    def diagnostic(self, token: str) -> Diagnostic:
        return Diagnostic(kind=self.kind, token=token, message=self.message, hint=self.hint)
