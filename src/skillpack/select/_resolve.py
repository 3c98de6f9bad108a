"""Selecting skills: resolve mentions, links and slash commands against a catalog.

Pure: text and a `Catalog` in, values out. `_mentions.py` finds the references; this
module resolves each one in the order of "Rules: selecting skills" (docs/design.md):
linked path, exact name, qualified id, enabled check, invocation control — and falls
back to fuzzy *suggestions* that never activate anything.

Decisions (recorded in docs/design.md):

- Visibility comes first: a skill for which `is_visible` is False is treated as
  absent everywhere (lookup, ties, suggestions), so a lower-precedence skill of the
  same name may win. A disabled winner is reported, never skipped.
- Fuzzy fallback: a case-insensitive substring match over names (qualified names
  when the id holds a `:`), for ids of three characters or more; one hit is
  `did-you-mean`, several are `ambiguous` — unless they all share one name with a
  single winner, which is then the one suggestion. With no substring hit, up to
  three close names (same first letter or last two letters, length within
  ±max(2, n/4), `difflib` ratio ≥ 0.75) give `did-you-mean`. Only the first
  `FUZZY_LOOKUPS_PER_MESSAGE` distinct failing ids of a message get suggestions.
- A skill is shown by the shortest id that picks it: `<plugin>:<name>` for plugin
  skills, else the bare name when it wins, else `<scope>:<name>`, else its path.
  Every diagnostic that offers a choice writes each option in a form that picks
  exactly that skill: `$id` (or `/id`), or a link `[$name](path)` when no id does.
- A skill "only scopes tools" when it declares `allowed-tools` or
  `disallowed-tools` and its body has at most `TOOL_SCOPE_MAX_BODY_LINES` lines.
  Under `choose-one`, two or more other ("guidance") skills in one message give a
  `choose-one` diagnostic and none of them activates; tool-scoping skills still do.
- Slash commands: the host names its built-in commands (none by default); such a
  name (case-insensitive) is left to the host: no activation, text unchanged, and a
  `shadowed-by-builtin` diagnostic only when a skill of that name exists, saying to
  reach it as `$name`. Any other `/name` that resolves to no
  skill gets a diagnostic (as Claude Code's "Unknown skill"); `$` mentions in the
  arguments are not resolved (the arguments belong to the slash skill).
- The remaining text drops each activated token (`remove_spans` in `_mentions.py`
  says how the cut is tidied); unresolved tokens stay as ordinary text. With nothing
  activated the text is returned verbatim. The `args` of a mention activation is
  that remaining text.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from .._errors import AmbiguousSkillError, SkillDisabledError, SkillNotFoundError, UsageError
from .._limits import MAX_DIAGNOSTICS
from .._model import Catalog, Skill, bare_named, best_of
from ._mentions import (
    Mention,
    MentionSource,
    RawMention,
    find_mentions,
    parse_slash,
    raw_mentions,
    remove_spans,
)

__all__ = [
    "Activation",
    "Diagnostic",
    "DiagnosticKind",
    "Invoker",
    "Mention",
    "MentionSource",
    "Resolution",
    "close_matches",
    "find_mentions",
    "find_skill",
    "mention_for",
    "parse_slash",
    "resolve_message",
    "shown_ids",
    "skill_keys",
    "suggest",
]

Invoker = Literal["user", "model"]
"""Who references the skill: the user's message, or the model's own text/tool call."""

DiagnosticKind = Literal[
    "not-found",
    "did-you-mean",
    "ambiguous",
    "disabled",
    "not-user-invocable",
    "not-model-invocable",
    "choose-one",
    "shadowed-by-builtin",
    "too-many",
    # What a session reports when an activated skill could not be used (`prepare_turn`):
    "load-failed",
    "permission-denied",
    "fork-unavailable",
    "fork-failed",
    "cycle",
]

TOOL_SCOPE_MAX_BODY_LINES = 10
"""A tool-declaring skill with a body this short only scopes tools (it composes)."""

FUZZY_LOOKUPS_PER_MESSAGE = 5
"""Distinct failing ids per message that get suggestions (each scans the catalog)."""

_SHOWN_CANDIDATES = 10
_LIST_HINT = "Run `skillpack list` to see available skills."
_PATHS_HINT = "`skillpack list` shows every skill with the path of its SKILL.md."


def _always(skill: Skill) -> bool:
    return True


@dataclass(frozen=True, kw_only=True, slots=True)
class Diagnostic:
    """Why a reference did not activate a skill, for people and for programs."""

    kind: DiagnosticKind
    token: str
    """The reference as written (`$nope`, `/nope`, `[$x](path)`)."""
    message: str
    """One line for whoever wrote the text, a model included: what happened and what
    to type instead. It never asks the reader to run a command."""
    candidates: tuple[str, ...] = ()
    """Ids the user could type instead (suggestions, ambiguous matches, choices)."""
    hint: str | None = None
    """An extra line for people only, e.g. the `skillpack` command that fixes it."""

    @property
    def for_people(self) -> str:
        """The message followed by the hint: what a person at a terminal reads."""
        return f"{self.message} {self.hint}" if self.hint else self.message

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "token": self.token,
            "message": self.message,
            "candidates": list(self.candidates),
            "hint": self.hint,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Activation:
    """A skill a message selected, with the arguments it runs with."""

    skill: Skill
    args: str
    """The slash command's arguments, or the task text left around the mentions."""
    source: MentionSource
    token: str
    """The reference as written that selected the skill (first one, when repeated)."""

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def qualified_name(self) -> str:
        return self.skill.qualified_name

    @property
    def path(self) -> str:
        return self.skill.path

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "qualified_name": self.qualified_name,
            "path": self.path,
            "args": self.args,
            "source": self.source,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Resolution:
    """Everything one message selected, refused or suggested."""

    activations: tuple[Activation, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    lines: tuple[str, ...] = ()
    """Visible transcript lines, one `Using skill: <id>` per activation."""
    text: str = ""
    """The task text once the activated references are taken out."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "activations": [a.to_dict() for a in self.activations],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "lines": list(self.lines),
            "text": self.text,
        }


class _LookupKey(NamedTuple):
    """What a mention's resolution depends on: the same id, link and source resolve
    alike, so a message resolves each distinct one once."""

    id: str
    link: str | None
    source: MentionSource


@dataclass(frozen=True, kw_only=True, slots=True)
class _Failure:
    kind: DiagnosticKind
    message: str
    candidates: tuple[str, ...] = ()
    tie: bool = False
    """An exact name matched several skills of equal precedence."""
    hint: str | None = None


@dataclass(kw_only=True)
class _Resolver:
    """Per-message lookups with their caches; never outlives one call."""

    catalog: Catalog
    invoker: Invoker
    is_enabled: Callable[[Skill], bool]
    is_visible: Callable[[Skill], bool]
    base_dir: str | None
    enable_command: Callable[[Skill, str], str] | None = None
    fuzzy_budget: int = FUZZY_LOOKUPS_PER_MESSAGE
    _ids: dict[str, str] = field(default_factory=dict)
    _visible: list[Skill] | None = None
    _keys: dict[bool, list[tuple[str, Skill]]] = field(default_factory=dict)

    def candidates(self, skill_id: str) -> tuple[Skill, ...]:
        """Visible skills an id picks: exact name, else qualified id; best precedence."""
        found = bare_named(s for s in self.catalog.named(skill_id) if self.is_visible(s))
        if not found and ":" in skill_id:
            found = tuple(s for s in self.catalog.qualified(skill_id) if self.is_visible(s))
        return best_of(found)

    def at_path(self, target: str) -> Skill | None:
        """The visible skill whose SKILL.md or folder `target` names."""
        if target.startswith("file://"):
            target = target[len("file://") :]
        if self.base_dir is not None and not os.path.isabs(target):
            target = os.path.join(self.base_dir, target)
        target = os.path.normpath(target)
        tries = [target]
        if os.path.basename(target) != "SKILL.md":
            tries.append(os.path.join(target, "SKILL.md"))
        for candidate in tries:
            skill = self.catalog.at_path(candidate)
            if skill is not None and self.is_visible(skill):
                return skill
        return None

    def shown_id(self, skill: Skill) -> str:
        """The shortest id that picks exactly this skill, else its path."""
        cached = self._ids.get(skill.key)
        if cached is not None:
            return cached
        # Plugin skills always show their namespace, as Claude Code prints them.
        options = (skill.qualified_name,) if skill.plugin else (skill.name, skill.qualified_name)
        shown = skill.path
        for option in options:
            if self.candidates(option) == (skill,):
                shown = option
                break
        self._ids[skill.key] = shown
        return shown

    def typed(self, skill: Skill, sigil: str) -> str:
        """What to type to pick exactly `skill`: `<sigil><id>`, or a link to its path.

        With no sigil (a tool's or the API's `name`), the id or the path itself.
        """
        shown = self.shown_id(skill)
        if shown != skill.path or not sigil:
            return f"{sigil}{shown}"
        return f"[${skill.name}]({skill.path})"

    def check(self, skill: Skill) -> _Failure | None:
        """Enabled check, then invocation control for this invoker."""
        shown = self.shown_id(skill)
        if not self.is_enabled(skill):
            command = (
                self.enable_command(skill, shown)
                if self.enable_command is not None
                else f"skillpack enable {shown}"
            )
            return _Failure(
                kind="disabled",
                message=f"Skill '{shown}' is disabled.",
                hint=f"Enable it with `{command}`.",
            )
        if self.invoker == "user" and not skill.user_invocable:
            return _Failure(
                kind="not-user-invocable",
                message=(
                    f"Skill '{shown}' cannot be invoked by the user (user-invocable: false); "
                    "the model loads it when it is relevant."
                ),
            )
        if self.invoker == "model" and not skill.model_invocable:
            ways = self.typed(skill, "$")
            if ways.startswith("$"):
                ways = f"/{shown} or {ways}"
            # Name the field that says so: the frontmatter's, or Codex's sidecar policy.
            why = (
                "disable-model-invocation"
                if skill.disable_model_invocation
                else "Codex policy allow_implicit_invocation: false"
            )
            return _Failure(
                kind="not-model-invocable",
                message=(
                    f"Skill '{shown}' cannot be invoked by the model "
                    f"({why}); only the user can start it, with {ways}."
                ),
            )
        return None

    def by_id(self, skill_id: str, sigil: str) -> Skill | _Failure:
        """Exact name or qualified id, then the checks; else a tie or suggestions."""
        found = self.candidates(skill_id)
        if len(found) == 1:
            return self.check(found[0]) or found[0]
        if found:
            return self._tie(skill_id, found, sigil)
        return self.missing(skill_id, sigil)

    def _tie(self, skill_id: str, found: tuple[Skill, ...], sigil: str) -> _Failure:
        return _Failure(
            kind="ambiguous",
            message=f"{sigil}{skill_id} {self._choices(found, sigil)}.",
            candidates=tuple(self.shown_id(s) for s in found),
            tie=True,
        )

    def _choices(self, found: Sequence[Skill], sigil: str) -> str:
        """`matched N skills — use A, B or C`: one working form per skill."""
        forms = [self.typed(s, sigil) for s in found[:_SHOWN_CANDIDATES]]
        more = len(found) - len(forms)
        listed = _join_or(forms) if not more else f"{', '.join(forms)} (or {more} more)"
        return f"matched {len(found)} skills — use {listed}"

    def wildcard(self, skill_id: str, token: str) -> _Failure:
        """`$github:*`: patterns are not ids; list the namespace's skills instead."""
        prefix = skill_id.lower() + ":"
        members = [
            s
            for s in self.catalog.skills
            if s.qualified_name.lower().startswith(prefix)
            and s.shadowed_by is None
            and self.is_visible(s)
        ]
        shown = tuple(self.shown_id(s) for s in members[:_SHOWN_CANDIDATES])
        offer = f" Name one skill: {_join_or([f'${s}' for s in shown])}." if shown else ""
        return _Failure(
            kind="not-found",
            message=f"Wildcards are not supported: {token} names no skill.{offer}",
            candidates=shown,
            hint=_LIST_HINT,
        )

    def missing(self, skill_id: str, sigil: str) -> _Failure:
        """No skill by that id: suggestions (never an activation)."""
        not_found = _Failure(
            kind="not-found", message=f"No skill named '{skill_id}'.", hint=_LIST_HINT
        )
        if self.fuzzy_budget <= 0:
            return not_found
        self.fuzzy_budget -= 1
        substring, close = self.fuzzy(skill_id)
        if len({s.name for s in substring}) == 1:
            # One name matched (perhaps in several scopes): suggest what that name picks.
            winners = self.candidates(substring[0].name)
            if len(winners) == 1:
                substring = list(winners)
        if len(substring) > 1:
            shown = [self.shown_id(s) for s in substring]
            return _Failure(
                kind="ambiguous",
                message=f"{sigil}{skill_id} {self._choices(substring, sigil)}.",
                candidates=tuple(shown[:_SHOWN_CANDIDATES]),
            )
        if substring or close:
            shown = [self.shown_id(s) for s in substring or close]
            options = _join_or([self.typed(s, sigil) for s in substring or close])
            return _Failure(
                kind="did-you-mean",
                message=f"No exact skill '{skill_id}'. Did you mean {options}?",
                candidates=tuple(shown),
            )
        return not_found

    def fuzzy(self, skill_id: str) -> tuple[list[Skill], list[Skill]]:
        """(substring matches in catalog order, close matches best first)."""
        query = skill_id.lower()
        if not query:
            return [], []
        keyed = self._keyed(qualified=":" in query)
        if len(query) >= 3:
            substring = _unique(skill for key, skill in keyed if query in key)
            if substring:
                return substring, []
        return [], close_matches(query, keyed)

    def _keyed(self, *, qualified: bool) -> list[tuple[str, Skill]]:
        """Lower-cased names (or qualified ids) of every visible skill, built once."""
        cached = self._keys.get(qualified)
        if cached is not None:
            return cached
        if self._visible is None:
            self._visible = [s for s in self.catalog.skills if self.is_visible(s)]
        keyed = skill_keys(self._visible, qualified=qualified)
        self._keys[qualified] = keyed
        return keyed

    def resolve(self, mention: RawMention) -> Skill | _Failure:
        """One reference, in the order of "Rules: selecting skills" (docs/design.md)."""
        token, skill_id, source, _, _, link = mention
        if link is not None:
            skill = self.at_path(link)
            if skill is not None:
                return self.check(skill) or skill
            return _Failure(
                kind="not-found",
                message=(
                    f"No skill at '{link}' (from {token}). Link the SKILL.md or the folder "
                    f"of a discovered skill, or write ${skill_id} to pick it by name."
                ),
                hint=_PATHS_HINT,
            )
        return self.by_id(skill_id, "/" if source == "slash" else "$")


def skill_keys(skills: Iterable[Skill], *, qualified: bool) -> list[tuple[str, Skill]]:
    """`(key, skill)` pairs a typed id is matched against, in the given order: the
    lower-cased name, or with `qualified` the lower-cased qualified id."""
    return [
        ((skill.qualified_name if qualified else skill.name).lower(), skill) for skill in skills
    ]


def close_matches(query: str, keyed: Sequence[tuple[str, Skill]], *, limit: int = 3) -> list[Skill]:
    """Skills whose key is close to `query` (lower-cased), best first: near misses.

    Keys of about the same length (within max(2, n/4)) that share the first letter
    or the last two are compared with `difflib` (ratio at least 0.75): difflib costs
    about 15 µs a key, and the filter keeps typos in reach.
    """
    if not query:
        return []
    slack = max(2, len(query) // 4)
    head, tail = query[0], query[-2:]
    by_key: dict[str, list[Skill]] = {}
    for key, skill in keyed:
        if abs(len(key) - len(query)) <= slack and (key[:1] == head or key[-2:] == tail):
            by_key.setdefault(key, []).append(skill)
    close = difflib.get_close_matches(query, list(by_key), n=limit, cutoff=0.75)
    return _unique(s for key in close for s in by_key[key])[:limit]


def only_scopes_tools(skill: Skill) -> bool:
    """True for a skill that declares a tool policy and holds (almost) no guidance."""
    declares = skill.allowed_tools is not None or skill.disallowed_tools is not None
    return declares and skill.body_lines <= TOOL_SCOPE_MAX_BODY_LINES


def resolve_message(
    text: str,
    catalog: Catalog,
    *,
    invoker: Invoker = "user",
    is_enabled: Callable[[Skill], bool] = _always,
    is_visible: Callable[[Skill], bool] = _always,
    multi_mention: Literal["choose-one", "all"] = "choose-one",
    builtin_commands: Iterable[str] = (),
    base_dir: str | None = None,
    enable_command: Callable[[Skill, str], str] | None = None,
) -> Resolution:
    """Resolve the slash command or the mentions of one message.

    Args:
        text: The message (a user prompt or the model's own planning text).
        catalog: Where skills are looked up.
        invoker: Who wrote `text`; decides which invocation control applies.
        is_enabled: Enable state; a disabled match is reported, never activated.
        is_visible: Permission layer; a skill it refuses is treated as absent.
        multi_mention: `choose-one` refuses several guidance skills in one message;
            `all` activates every resolved mention.
        builtin_commands: The host's own slash commands (none by default): `/name`
            of one of these is the host's, never a skill (matched case-insensitively).
        base_dir: Directory that relative link targets are resolved against.
        enable_command: `(skill, shown id) -> command` a `disabled` diagnostic's hint
            offers (default `skillpack enable <id>`): the session names the config
            file that disabled it (`--project`).

    Returns:
        The activations (deduplicated by skill), the diagnostics, the visible
        `Using skill:` lines and the task text left once the references are out.
    """
    resolver = _Resolver(
        catalog=catalog,
        invoker=invoker,
        is_enabled=is_enabled,
        is_visible=is_visible,
        base_dir=base_dir,
        enable_command=enable_command,
    )
    slash = parse_slash(text)
    if slash is not None:
        return _resolve_slash(text, slash, resolver, builtin_commands)

    resolved: list[tuple[RawMention, str]] = []
    first: dict[str, tuple[RawMention, Skill]] = {}
    diagnostics: dict[tuple[str, str], Diagnostic] = {}
    left_out: set[tuple[str, str]] = set()
    outcomes: dict[_LookupKey, Skill | _Failure] = {}
    for mention in raw_mentions(text):
        cache_key = _LookupKey(mention.id, mention.link, mention.source)
        outcome = outcomes.get(cache_key)
        if outcome is None:
            outcome = outcomes[cache_key] = resolver.resolve(mention)
        token = mention.token
        if not isinstance(outcome, Skill) and outcome.kind == "not-found":
            # `$github:*`: the id stops before `:*`, which names a pattern, not a skill.
            star = text[mention.end : mention.end + 2]
            if star[:1] == "*" or star == ":*":
                token += star if star == ":*" else "*"
                outcome = resolver.wildcard(mention.id, token)
        if isinstance(outcome, Skill):
            key = outcome.key
            resolved.append((mention, key))
            if key not in first:  # the same skill twice activates once
                first[key] = (mention, outcome)
        elif (outcome.kind, token) not in diagnostics:
            # A pasted script can hold thousands of `$words`: past the cap they are
            # counted, and one diagnostic says how many.
            if len(diagnostics) < MAX_DIAGNOSTICS:
                diagnostics[(outcome.kind, token)] = _diagnostic(outcome, token)
            else:
                left_out.add((outcome.kind, token))

    chosen = list(first)
    leaders = [key for key in chosen if not only_scopes_tools(first[key][1])]
    if multi_mention == "choose-one" and len(leaders) > 1:
        shown = [resolver.shown_id(first[key][1]) for key in leaders]
        diagnostics[("choose-one", "")] = Diagnostic(
            kind="choose-one",
            token=" ".join(first[key][0].token for key in leaders),
            message=(f"Choose one skill to lead this turn: {_join_or([f'${s}' for s in shown])}."),
            candidates=tuple(shown),
        )
        chosen = [key for key in chosen if only_scopes_tools(first[key][1])]
    if left_out:
        diagnostics[("too-many", "")] = Diagnostic(
            kind="too-many",
            token="",
            message=(
                f"…and {len(left_out)} more references that activate nothing; only the "
                f"first {MAX_DIAGNOSTICS} are listed."
            ),
        )

    keys = set(chosen)
    spans = [(m.start, m.end) for m, key in resolved if key in keys]
    remaining = remove_spans(text, spans) if spans else text
    activations = tuple(
        Activation(skill=skill, args=remaining, source=mention.source, token=mention.token)
        for mention, skill in (first[key] for key in chosen)
    )
    return Resolution(
        activations=activations,
        diagnostics=tuple(diagnostics.values()),
        lines=tuple(f"Using skill: {resolver.shown_id(a.skill)}" for a in activations),
        text=remaining,
    )


def _resolve_slash(
    text: str,
    slash: tuple[str, str],
    resolver: _Resolver,
    builtin_commands: Iterable[str],
) -> Resolution:
    name, args = slash
    folded = name.lower()
    if any(folded == command.lower().lstrip("/") for command in builtin_commands):
        shadowed = resolver.candidates(name) or resolver.candidates(folded)
        if not shadowed:
            return Resolution(text=text)
        forms = _join_or([resolver.typed(skill, "$") for skill in shadowed])
        diagnostic = Diagnostic(
            kind="shadowed-by-builtin",
            token=f"/{name}",
            message=(
                f"/{name} is one of the host's own commands, so it does not start the "
                f"skill '{shadowed[0].name}'; write {forms} to use the skill."
            ),
            candidates=tuple(resolver.shown_id(skill) for skill in shadowed),
        )
        return Resolution(diagnostics=(diagnostic,), text=text)
    start = text.index("/")
    token = f"/{name}"
    outcome = resolver.resolve(RawMention(token, name, "slash", start, start + len(token), None))
    if isinstance(outcome, _Failure):
        return Resolution(diagnostics=(_diagnostic(outcome, token),), text=text)
    return Resolution(
        activations=(Activation(skill=outcome, args=args, source="slash", token=token),),
        lines=(f"Using skill: {resolver.shown_id(outcome)}",),
        text=args,
    )


def find_skill(
    catalog: Catalog,
    *,
    name: str | None = None,
    path: str | None = None,
    invoker: Invoker = "model",
    is_enabled: Callable[[Skill], bool] = _always,
    is_visible: Callable[[Skill], bool] = _always,
    base_dir: str | None = None,
) -> Skill:
    """One skill by path or by name (`name`, `ns:name`; a leading `$` or `/` is ignored).

    The path wins over the name. The skill must be enabled and invocable by `invoker`.

    Raises:
        UsageError: neither a name nor a path was given.
        SkillNotFoundError: nothing matches; `candidates` holds close ids.
        AmbiguousSkillError: the name matched skills of equal precedence;
            `candidates` holds the qualified ids (or paths) that pick each one.
        SkillDisabledError: the skill is disabled or not invocable by `invoker`.
    """
    resolver = _Resolver(
        catalog=catalog,
        invoker=invoker,
        is_enabled=is_enabled,
        is_visible=is_visible,
        base_dir=base_dir,
    )
    outcome: Skill | _Failure
    if path:
        skill = resolver.at_path(path)
        if skill is None:
            raise SkillNotFoundError(
                f"No skill at '{path}'. Give the path of the SKILL.md or the folder of a "
                "discovered skill.",
                hint=_PATHS_HINT,
            )
        outcome = resolver.check(skill) or skill
    elif name:
        skill_id = name.strip()
        if skill_id[:1] in ("$", "/"):
            skill_id = skill_id[1:]
        outcome = resolver.by_id(skill_id, "")
    else:
        raise UsageError(
            "No skill given: the name and the path are both empty. Give a skill name, "
            "a qualified id (`plugin:name`) or the path of a SKILL.md."
        )
    if isinstance(outcome, Skill):
        return outcome
    if outcome.tie:
        raise AmbiguousSkillError(outcome.message, candidates=outcome.candidates, hint=outcome.hint)
    if outcome.kind in ("not-found", "did-you-mean", "ambiguous"):
        raise SkillNotFoundError(outcome.message, candidates=outcome.candidates, hint=outcome.hint)
    raise SkillDisabledError(outcome.message, hint=outcome.hint)


def shown_ids(
    catalog: Catalog,
    skills: Iterable[Skill],
    *,
    is_visible: Callable[[Skill], bool] = _always,
) -> tuple[str, ...]:
    """For each of `skills`, the shortest id that picks exactly it in `catalog`: the
    bare name where it is unique, else the qualified id, else the SKILL.md path (what
    `Using skill:` lines and diagnostics show, and what tool enums list)."""
    resolver = _lookups(catalog, is_visible)
    return tuple(resolver.shown_id(skill) for skill in skills)


def suggest(
    name: str,
    catalog: Catalog,
    *,
    limit: int = 3,
    is_visible: Callable[[Skill], bool] = _always,
) -> tuple[str, ...]:
    """Ids of skills close to `name` (substring, then edit similarity); never activates."""
    resolver = _lookups(catalog, is_visible)
    substring, close = resolver.fuzzy(name.lstrip("$/"))
    return tuple(resolver.shown_id(s) for s in (substring or close)[:limit])


def _lookups(catalog: Catalog, is_visible: Callable[[Skill], bool]) -> _Resolver:
    """A resolver for lookups that check neither enable state nor invocation control."""
    return _Resolver(
        catalog=catalog, invoker="user", is_enabled=_always, is_visible=is_visible, base_dir=None
    )


def mention_for(
    skill: Skill,
    catalog: Catalog,
    *,
    is_visible: Callable[[Skill], bool] = _always,
) -> str:
    """The mention a person types to pick exactly `skill`: `$` and the shortest id
    that resolves to it (`$name`, `$<plugin>:<name>`, `$<scope>:<name>`), or a link
    `[$name](path)` when only its path tells it apart."""
    shown = _lookups(catalog, is_visible).shown_id(skill)
    if shown == skill.path:
        return f"[${skill.name}]({skill.path})"
    return f"${shown}"


def _diagnostic(failure: _Failure, token: str) -> Diagnostic:
    return Diagnostic(
        kind=failure.kind,
        token=token,
        message=failure.message,
        candidates=failure.candidates,
        hint=failure.hint,
    )


def _unique(skills: Iterable[Skill]) -> list[Skill]:
    return list({s.key: s for s in skills}.values())


def _join_or(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} or {items[-1]}"
