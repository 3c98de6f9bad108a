"""Rendering skills into the model's context (DESIGN §5), pure: values in, text out.

Layer 1 is the catalog (`render_catalog`): the name, description and location of each
skill in one of three formats, fitted to a character budget. Layer 2 is the injection
(`render_injection`): a skill's body with substitutions applied, wrapped in
`<skill_content>`, then its base directory and a bounded listing of its files.
`render_reminder` is the short text for a skill already injected this session.

Nothing here reads the filesystem: bodies and file listings are passed in.

Budget algorithm (the whole text, preamble and notice included, fits `budget_chars`):

1. Everything fits: render it all, no notice.
2. Shorten descriptions evenly: one common maximum length L for every description,
   cut at a word boundary with "…"; L is the largest value that fits, found by
   binary search over sizes computed arithmetically, never below
   `MIN_DESCRIPTION_CHARS`.
3. Names only: descriptions stay at the floor for the k highest-ranked entries and
   are dropped for the rest (name and location kept); k is the largest that fits.
4. Omit: every shown entry is name-only and the lowest-ranked entries are left out;
   the largest prefix that fits is shown.
5. Not even the preamble and the notice fit: the preamble is dropped and the catalog
   is only its container and the notice; when that does not fit either, the text is
   empty. The report still names every skill that was left out.

Whenever step 2 or later applies, the catalog carries a `truncated` notice pointing
at `skill_search` (XML `<truncated shown= total=>`, a Markdown `[truncated: …]` line, a
JSON `"truncated"` object), and `CatalogReport` lists exactly which names were
shortened, shown by name only, or omitted. Sizes are upper bounds computed once per
entry (escaping a cut description never adds more than escaping the whole), so the
rendered text is never longer than the size the search allowed; the whole fitting of
10,000 skills takes milliseconds. Descriptions are put on one line first (line breaks
and tabs become single spaces) so every format stays one entry per line.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, count, repeat
from json.encoder import encode_basestring
from operator import add, attrgetter, sub
from typing import Any, Literal, assert_never

from .._errors import UsageError
from .._limits import BUDGET_CHARS, MAX_LISTED_FILES
from .._model import Skill
from ._substitute import substitute

__all__ = [
    "BUDGET_ENV_VAR",
    "BUDGET_ENV_VARS",
    "MIN_DESCRIPTION_CHARS",
    "CatalogFormat",
    "CatalogReport",
    "RenderedCatalog",
    "budget_from_env",
    "catalog_budget",
    "entry_chars",
    "render_catalog",
    "render_injection",
    "render_reminder",
    "shorten",
    "substitute",
]

CatalogFormat = Literal["xml", "markdown", "json"]
"""How the catalog is written: an XML block, a Markdown list, or a JSON object."""

BUDGET_ENV_VAR = "SKILLS_PROMPT_CHAR_BUDGET"
"""Environment variable whose value (passed in by the caller) overrides the budget."""
BUDGET_ENV_VARS: tuple[str, ...] = (BUDGET_ENV_VAR, "SLASH_COMMAND_TOOL_CHAR_BUDGET")
"""Variables that override the budget, first set (not blank) wins: skillpack's own,
then Claude Code's `SLASH_COMMAND_TOOL_CHAR_BUDGET` (what its users already set)."""


def budget_from_env(env: Mapping[str, str]) -> tuple[str, str | None]:
    """(variable, value) of the first `BUDGET_ENV_VARS` entry set in `env` (not blank);
    `(BUDGET_ENV_VAR, None)` when none is."""
    for name in BUDGET_ENV_VARS:
        value = env.get(name)
        if value is not None and value.strip():
            return name, value
    return BUDGET_ENV_VAR, None
MIN_DESCRIPTION_CHARS = 40
"""Descriptions are never shortened below this; past it entries lose them instead."""

ELLIPSIS = "…"
_WHITESPACE_CHARS = " \t\n\r\f\v"
_WHITESPACE = tuple(_WHITESPACE_CHARS)
_LINE_BREAKS = tuple("\t\n\r\f\v")
_LINE_BREAK = re.compile(r"[\t\n\r\f\v]")
# encode_basestring (ensure_ascii=False) escapes only quotes, backslashes and C0 controls.
_JSON_COMMON_CONTROLS = ("\t", "\n", "\r", "\f", "\v", "\b")
_JSON_CONTROLS = tuple(chr(c) for c in range(32))
_CHARS_PER_TOKEN = 4
_SCOPE = attrgetter("scope")


def catalog_budget(
    *,
    context_window: int | None = None,
    budget_chars: int | None = None,
    env_override: str | None = None,
    fraction: float = 0.02,
    fallback_chars: int = BUDGET_CHARS,
    env_var: str = BUDGET_ENV_VAR,
) -> int:
    """The catalog's character budget.

    Precedence: `budget_chars`, then `env_override` (the value of
    `SKILLS_PROMPT_CHAR_BUDGET`; blank counts as unset), then `fraction` (2% by
    default) of `context_window` tokens at 4 characters per token, then
    `fallback_chars` (`BUDGET_CHARS` unless the config says otherwise). `env_var`
    names the variable `env_override` came from, for the error message
    (`budget_from_env` picks it).

    Raises:
        UsageError: a negative budget, a non-positive context window, or an
            environment value that is not a whole number of characters.
    """
    if budget_chars is not None:
        if budget_chars < 0:
            raise UsageError(
                f"Catalog budget must be 0 or more characters, got {budget_chars}. "
                "Pass a non-negative budget_chars (0 renders no catalog)."
            )
        return budget_chars
    if env_override is not None and env_override.strip():
        try:
            value = int(env_override.strip())
        except ValueError:
            value = -1
        if value < 0:
            raise UsageError(
                f"{env_var}={env_override!r} is not a number of characters. "
                "Set it to a whole number such as 16000, or unset it to use the default."
            )
        return value
    if context_window is not None:
        if context_window <= 0:
            raise UsageError(
                f"context_window must be a positive number of tokens, got {context_window}. "
                "Pass the model's context window, or None when it is unknown."
            )
        # The epsilon keeps float error from flooring 16000.0 down to 15999.
        return int(context_window * fraction * _CHARS_PER_TOKEN + 1e-9)
    return fallback_chars


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogReport:
    """What the budget did to a catalog: nothing is dropped without being named here."""

    budget_chars: int
    """The budget the catalog had to fit."""
    used_chars: int
    """Length of the rendered text (never more than the budget)."""
    total: int
    """Model-invocable skills given to the renderer."""
    shown: int
    """Skills that appear in the text, with or without a description."""
    shortened: tuple[str, ...] = ()
    """Names whose descriptions were cut to fit, in catalog order."""
    names_only: tuple[str, ...] = ()
    """Names shown without their description, in catalog order."""
    omitted: tuple[str, ...] = ()
    """Names not shown at all, in catalog order."""
    truncated: bool = False
    """True when anything was shortened, reduced to a name, or omitted."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (tuples become lists)."""
        return {
            "budget_chars": self.budget_chars,
            "used_chars": self.used_chars,
            "total": self.total,
            "shown": self.shown,
            "shortened": list(self.shortened),
            "names_only": list(self.names_only),
            "omitted": list(self.omitted),
            "truncated": self.truncated,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class RenderedCatalog:
    """A catalog's text with the report of how it was fitted to the budget."""

    text: str
    """The text to put in the model's context ("" when there is nothing to list)."""
    report: CatalogReport
    format: CatalogFormat
    """The format `text` is written in."""


def shorten(text: str, limit: int) -> str:
    """Cut `text` to at most `limit` characters at a word boundary, ending in "…".

    Text that fits is returned unchanged. The cut falls on the last space when that
    keeps at least half of the room; a single long word is cut inside instead.
    """
    if len(text) <= limit:
        return text
    room = max(limit - len(ELLIPSIS), 0)
    head = text[:room]
    if text[room : room + 1] != " ":
        space = head.rfind(" ")
        if space >= room // 2:
            head = head[:space]
    return head.rstrip(" ,.;:") + ELLIPSIS


def render_catalog(
    skills: Sequence[Skill],
    *,
    format: CatalogFormat = "xml",
    budget_chars: int = BUDGET_CHARS,
    include_location: bool = True,
    preamble: bool = True,
    max_entries: int | None = None,
) -> RenderedCatalog:
    """Render the catalog (layer 1) of `skills`, fitted to `budget_chars`.

    Args:
        skills: The skills to list, already filtered and in catalog (rank) order;
            skills that are not model-invocable are dropped here as well.
        format: `xml`, `markdown` or `json`.
        budget_chars: Maximum length of the whole text, preamble and notice included.
        include_location: Add each skill's SKILL.md path (for agents that read files).
        preamble: Start with the usage instructions that say when and how to load.
        max_entries: List at most this many skills (the first, by rank); the rest
            are omitted as over the budget are: reported and counted in the notice.

    Returns:
        The text and a `CatalogReport`. No skills at all give an empty text.

    Raises:
        UsageError: `budget_chars` is negative, `max_entries` is below 1 or
            `format` is unknown.
    """
    if budget_chars < 0:
        raise UsageError(
            f"Catalog budget must be 0 or more characters, got {budget_chars}. "
            "Pass a non-negative budget_chars (0 renders no catalog)."
        )
    if format not in ("xml", "markdown", "json"):
        raise UsageError(f"Unknown catalog format {format!r}. Use one of: xml, markdown, json.")
    if max_entries is not None and max_entries < 1:
        raise UsageError(
            f"max_entries must be at least 1, got {max_entries}; pass None for no cap."
        )
    listed = [s for s in skills if s.model_invocable]
    if not listed:
        report = CatalogReport(budget_chars=budget_chars, used_chars=0, total=0, shown=0)
        return RenderedCatalog(text="", report=report, format=format)
    cut: list[Skill] = []
    budget = budget_chars
    if max_entries is not None and len(listed) > max_entries:
        listed, cut = listed[:max_entries], listed[max_entries:]
        # Room for the notice the cut needs, at its longest, over the one the fitter adds.
        total = len(listed) + len(cut)
        grows = len(_tail(format, max_entries, total, True)) - len(_tail(format, 0, 0, False))
        budget = max(budget_chars - grows, 0)
    rendered = _Fitter(listed, format, budget, include_location, preamble).fit()
    if len(rendered.text) > budget:
        # Only a control character that the quick JSON scan skips can cause this.
        rendered = _Fitter(listed, format, budget, include_location, preamble, True).fit()
    return _with_cut(rendered, cut, budget_chars) if cut else rendered


def _with_cut(rendered: RenderedCatalog, cut: list[Skill], budget: int) -> RenderedCatalog:
    """`rendered` (of the first entries) as the catalog of them and `cut`: the notice
    counts every skill, and the report names the cut ones as omitted."""
    report, fmt = rendered.report, rendered.format
    total = report.total + len(cut)
    text = rendered.text
    if text:
        tail = _tail(fmt, report.shown, report.total, report.truncated)
        text = text[: len(text) - len(tail)] + _tail(fmt, report.shown, total, True)
    new_report = CatalogReport(
        budget_chars=budget,
        used_chars=len(text),
        total=total,
        shown=report.shown,
        shortened=report.shortened,
        names_only=report.names_only,
        omitted=(*report.omitted, *(s.name for s in cut)),
        truncated=True,
    )
    return RenderedCatalog(text=text, report=new_report, format=fmt)


class _Fitter:
    """Sizes every entry once, then picks the richest rendering within the budget.

    Sizing works on whole columns (all names, all descriptions) with C-level string
    and `map` operations, because a catalog of 10,000 skills must be fitted in a few
    milliseconds; only the entries actually shown are escaped and written.
    """

    def __init__(
        self,
        skills: list[Skill],
        fmt: CatalogFormat,
        budget: int,
        include_location: bool,
        preamble: bool,
        exact: bool = False,
    ) -> None:
        self.skills = skills
        self.fmt = fmt
        self.budget = budget
        self.total = len(skills)
        self.include_location = include_location
        self.head = _head(fmt, _preamble_text(include_location) if preamble else None)
        self.bare_head = _head(fmt, None)
        self.gap = 1 if fmt == "json" else 0  # the comma between JSON entries

        self.descriptions = _tidy([s.description for s in skills])
        self.raw = list(map(len, self.descriptions))
        self.escaped = _escaped_lengths(fmt, self.descriptions, exact=exact)
        if 0 in self.raw:
            # An empty description is never written (JSON would otherwise count its quotes).
            self.escaped = [e if r else 0 for e, r in zip(self.escaped, self.raw, strict=True)]
        common: list[int] = _escaped_lengths(fmt, [s.name for s in skills], exact=exact)
        if include_location:
            locations = _escaped_lengths(fmt, [s.path for s in skills], exact=exact)
            common = list(map(add, common, locations))
        self.with_scope = fmt == "json"
        if self.with_scope:
            # A handful of scope names: each one's size is computed once.
            scopes = list(map(_SCOPE, skills))
            sizes = {scope: len(_escape(fmt, scope)) for scope in set(scopes)}
            common = list(map(add, common, map(sizes.__getitem__, scopes)))
        location = "" if include_location else None
        scope = "" if self.with_scope else None
        name_overhead = len(_entry(fmt, "", None, location, scope))
        self.description_overhead = len(_entry(fmt, "", "", location, scope)) - name_overhead
        # Size of each entry written as name (and location) only.
        self.name_only: list[int] = list(map(add, common, repeat(name_overhead)))

    # -- sizes ---------------------------------------------------------------------

    def _tail_len(self, shown: int, truncated: bool) -> int:
        return len(_tail(self.fmt, shown, self.total, truncated))

    def _gaps(self, shown: int) -> int:
        return self.gap * max(shown - 1, 0)

    def fit(self) -> RenderedCatalog:
        n, budget, head = self.total, self.budget, len(self.head)
        # An empty description is never written, so it adds no overhead either.
        with_description = sum(map(bool, self.raw))
        names = head + sum(self.name_only) + self._gaps(n)
        everything = names + with_description * self.description_overhead + sum(self.escaped)
        if everything + self._tail_len(n, False) <= budget:
            return self._render(limit=None, keep=n, shown=n, head=self.head)

        # Description sizes at the floor: a cut one costs at most the floor plus the
        # escaping overhead of the whole description.
        at_floor: list[int] = list(
            map(
                sub,
                self.escaped,
                map(max, map(sub, self.raw, repeat(MIN_DESCRIPTION_CHARS)), repeat(0)),
            )
        )
        names += self._tail_len(n, True)
        room = budget - names - with_description * self.description_overhead
        if sum(at_floor) <= room:
            return self._render(limit=self._best_limit(room), keep=n, shown=n, head=self.head)

        if names <= budget:
            overhead = self.description_overhead
            extra = list(accumulate((d + overhead if d else 0 for d in at_floor), initial=0))
            keep = _largest(lambda k: names + extra[k] <= budget, 0, n - 1)
            return self._render(limit=MIN_DESCRIPTION_CHARS, keep=keep, shown=n, head=self.head)

        prefix = list(accumulate(self.name_only, initial=0))

        def fits(m: int) -> bool:
            return head + prefix[m] + self._gaps(m) + self._tail_len(m, True) <= budget

        if fits(0):
            return self._render(limit=None, keep=0, shown=_largest(fits, 0, n - 1), head=self.head)
        if len(self.bare_head) + self._tail_len(0, True) <= budget:
            return self._render(limit=None, keep=0, shown=0, head=self.bare_head)
        report = CatalogReport(
            budget_chars=budget,
            used_chars=0,
            total=n,
            shown=0,
            omitted=tuple(s.name for s in self.skills),
            truncated=True,
        )
        return RenderedCatalog(text="", report=report, format=self.fmt)

    def _best_limit(self, room: int) -> int:
        """Largest common description length whose descriptions fit `room`.

        The caller has checked that the floor fits. Sorting by length once makes each
        probe of the binary search a bisection plus two prefix-sum look-ups.
        """
        order = sorted(range(self.total), key=self.raw.__getitem__)
        raws = [self.raw[i] for i in order]
        # Descriptions no longer than the limit cost exactly their escaped length.
        whole = list(accumulate((self.escaped[i] for i in order), initial=0))
        # A cut one costs at most the limit plus the escaping overhead of the whole.
        overhead = list(
            accumulate((self.escaped[i] - self.raw[i] for i in reversed(order)), initial=0)
        )

        def size(limit: int) -> int:
            short = bisect_right(raws, limit)
            cut = self.total - short
            return whole[short] + cut * limit + overhead[cut]

        return _largest(lambda limit: size(limit) <= room, MIN_DESCRIPTION_CHARS, raws[-1] - 1)

    # -- text ----------------------------------------------------------------------

    def _render(self, *, limit: int | None, keep: int, shown: int, head: str) -> RenderedCatalog:
        """Write the first `shown` entries; the first `keep` have a description."""
        fmt = self.fmt
        parts = [head]
        shortened: list[str] = []
        names_only: list[str] = []
        for i in range(shown):
            skill = self.skills[i]
            description = self.descriptions[i]
            name = _escape(fmt, skill.name)
            location = _escape(fmt, skill.path) if self.include_location else None
            scope = _escape(fmt, skill.scope) if self.with_scope else None
            if i >= keep or not description:
                if description:
                    names_only.append(skill.name)
                text = _entry(fmt, name, None, location, scope)
            else:
                if limit is not None and len(description) > limit:
                    shortened.append(skill.name)
                    description = shorten(description, limit)
                text = _entry(fmt, name, _escape(fmt, description), location, scope)
            if self.gap and i < shown - 1:
                text = text[:-1] + ",\n"
            parts.append(text)
        truncated = limit is not None or keep < self.total
        parts.append(_tail(fmt, shown, self.total, truncated))
        text = "".join(parts)
        report = CatalogReport(
            budget_chars=self.budget,
            used_chars=len(text),
            total=self.total,
            shown=shown,
            shortened=tuple(shortened),
            names_only=tuple(names_only),
            omitted=tuple(s.name for s in self.skills[shown:]),
            truncated=truncated,
        )
        return RenderedCatalog(text=text, report=report, format=fmt)


def entry_chars(
    skills: Sequence[Skill],
    *,
    format: CatalogFormat = "xml",
    include_location: bool = True,
) -> tuple[int, ...]:
    """Characters each skill's catalog entry takes when nothing is shortened.

    One number per skill given, in order: the entry exactly as `render_catalog` writes
    it with the whole description (escaped, on one line), without the preamble, the
    notice, or the comma between JSON entries. What a skill costs the prompt, and so
    what `skillpack context` ranks skills by.
    """
    if format not in ("xml", "markdown", "json"):
        raise UsageError(f"Unknown catalog format {format!r}. Use one of: xml, markdown, json.")
    if not skills:
        return ()
    fitter = _Fitter(list(skills), format, 0, include_location, False, exact=True)
    overhead = fitter.description_overhead
    return tuple(
        name + (overhead + escaped if raw else 0)
        for name, escaped, raw in zip(fitter.name_only, fitter.escaped, fitter.raw, strict=True)
    )


def _largest(fits: Callable[[int], bool], low: int, high: int) -> int:
    """Largest value in [low, high] for which the monotone `fits` holds (`fits(low)`)."""
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


# -- formats -------------------------------------------------------------------------


def _preamble_text(include_location: bool) -> str:
    how = (
        "load it with the skill_load tool (or read the SKILL.md file at its location)"
        if include_location
        else "load it with the skill_load tool"
    )
    return (
        "Skills are folders of instructions for particular kinds of work. "
        f"Before you start a task that matches a skill's description, {how} "
        "and follow its instructions. Load only the skills the task needs. "
        "If nothing listed fits, skill_search may find a skill that is not listed here."
    )


def _notice_message(shown: int, total: int) -> str:
    if shown == total:
        return "Descriptions were shortened to fit; skill_search shows them in full."
    return f"{total - shown} more skills are not listed; use skill_search to find them."


def _escape(fmt: CatalogFormat, text: str) -> str:
    if fmt == "xml":
        if "&" in text or "<" in text or ">" in text:
            return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return text
    if fmt == "json":
        result: str = encode_basestring(text)
        return result
    return text


def _escaped_lengths(fmt: CatalogFormat, texts: list[str], *, exact: bool) -> list[int]:
    """`len(_escape(fmt, t))` for every text.

    The joined column is scanned once per character that escaping changes, and only
    the texts holding one are measured one by one. Without `exact`, JSON skips the
    scan for the rarest control characters (YAML cannot even carry them); the caller
    renders again with `exact` in the unlikely case the text then overflows.
    """
    lengths = list(map(len, texts))
    if fmt == "markdown":
        return lengths
    column = "".join(texts)
    if fmt == "xml":
        for i in _holding(texts, column, ("&", "<", ">")):
            t = texts[i]
            lengths[i] += 4 * t.count("&") + 3 * (t.count("<") + t.count(">"))
        return lengths
    if fmt == "json":
        lengths = list(map(add, lengths, repeat(2)))  # the quotes
        for i in _holding(texts, column, ('"', "\\")):
            lengths[i] += texts[i].count('"') + texts[i].count("\\")
        controls = _JSON_CONTROLS if exact else _JSON_COMMON_CONTROLS
        for i in _holding(texts, column, controls):
            lengths[i] = len(encode_basestring(texts[i]))
        return lengths
    assert_never(fmt)


def _holding(texts: list[str], column: str, chars: Sequence[str]) -> set[int]:
    """Indices of the texts containing any of `chars` (`column` is all texts joined)."""
    found: set[int] = set()
    for char in chars:
        if char in column:
            found.update(compress(count(), map(str.__contains__, texts, repeat(char))))
    return found


def _tidy(descriptions: list[str]) -> list[str]:
    """Descriptions on one line: line breaks and tabs split a description into pieces,
    which are trimmed, emptied ones dropped, and joined again with single spaces.

    Most descriptions are already tidy; each kind of offending character is looked for
    in the joined column first, and only the descriptions holding one are rewritten.
    """
    untidy = _holding(descriptions, "".join(descriptions), _LINE_BREAKS)
    untidy.update(compress(count(), map(str.startswith, descriptions, repeat(_WHITESPACE))))
    untidy.update(compress(count(), map(str.endswith, descriptions, repeat(_WHITESPACE))))
    if not untidy:
        return descriptions
    result = list(descriptions)
    for i in untidy:
        pieces = (piece.strip(_WHITESPACE_CHARS) for piece in _LINE_BREAK.split(result[i]))
        result[i] = " ".join(piece for piece in pieces if piece)
    return result


def _entry(
    fmt: CatalogFormat,
    name: str,
    description: str | None,
    location: str | None,
    scope: str | None = None,
) -> str:
    """One catalog entry from already-escaped pieces; `None` leaves a piece out.

    Only JSON entries carry the scope (seed 002 §6: name, description, path, scope).
    """
    if fmt == "xml":
        text = f"<skill>\n<name>{name}</name>\n"
        if description is not None:
            text += f"<description>{description}</description>\n"
        if location is not None:
            text += f"<location>{location}</location>\n"
        return text + "</skill>\n"
    if fmt == "markdown":
        text = f"- **{name}**"
        if description is not None:
            text += f": {description}"
        if location is not None:
            text += f" (`{location}`)"
        return text + "\n"
    if fmt == "json":
        text = '{"name": ' + name
        if description is not None:
            text += ', "description": ' + description
        if location is not None:
            text += ', "location": ' + location
        if scope is not None:
            text += ', "scope": ' + scope
        return text + "}\n"
    assert_never(fmt)


def _head(fmt: CatalogFormat, preamble: str | None) -> str:
    if fmt == "xml":
        return (f"{preamble}\n\n" if preamble else "") + "<available_skills>\n"
    if fmt == "markdown":
        return (f"{preamble}\n\n" if preamble else "") + "Available skills:\n\n"
    if fmt == "json":
        text = "{\n"
        if preamble:
            text += f'"instructions": {encode_basestring(preamble)},\n'
        return text + '"skills": [\n'
    assert_never(fmt)


def _tail(fmt: CatalogFormat, shown: int, total: int, truncated: bool) -> str:
    message = _notice_message(shown, total) if truncated else ""
    if fmt == "xml":
        notice = (
            f'<truncated shown="{shown}" total="{total}">{_escape(fmt, message)}</truncated>\n'
            if truncated
            else ""
        )
        return notice + "</available_skills>\n"
    if fmt == "markdown":
        return f"\n[truncated: {shown} of {total} shown] {message}\n" if truncated else ""
    if fmt == "json":
        if not truncated:
            return "]\n}\n"
        notice = json.dumps(
            {"shown": shown, "total": total, "message": message}, ensure_ascii=False
        )
        return f'],\n"truncated": {notice}\n}}\n'
    assert_never(fmt)


# -- injection -----------------------------------------------------------------------


def _attr(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


_WRAPPER_TAG = re.compile(r"<(?=\s*/?\s*skill_content\b)", re.IGNORECASE)
"""The `<` of anything a reader could take for the wrapper's own opening or closing tag."""


def _sealed(content: str) -> str:
    """`content` with every `<skill_content` / `</skill_content` look-alike (any case,
    blanks allowed) written with `&lt;`, so only the wrapper's tags open and close it."""
    if "skill_content" not in content.lower():
        return content
    return _WRAPPER_TAG.sub("&lt;", content)


def render_injection(
    skill: Skill,
    body: str,
    *,
    args: str = "",
    session_id: str = "",
    files: Sequence[str] = (),
    files_truncated: bool = False,
    files_total: int | None = None,
    max_files: int = MAX_LISTED_FILES,
    keep: Sequence[tuple[int, int, str]] = (),
) -> str:
    """The text that loads a skill into context (layer 2).

    Args:
        skill: The skill being loaded.
        body: Its SKILL.md body, frontmatter removed (read by the caller).
        args: The raw argument string of the invocation.
        session_id: The session id for `${SESSION_ID}`.
        files: Relative paths of the skill's other files, already bounded by the caller.
        files_truncated: The caller stopped listing before the end.
        files_total: How many files the skill has, when the caller knows; used to say
            how many are not shown.
        max_files: At most this many paths are written.
        keep: `(start, end, text)` spans of `body` replaced verbatim, never substituted
            (the output of the skill's shell commands).

    Returns:
        `<skill_content name=… path=…>` holding the substituted body, then the base
        directory and the file listing. The attributes are XML-escaped, and a
        `<skill_content` or `</skill_content` in the body (or the arguments) has its
        `<` written `&lt;`: nothing inside can close the wrapper or open another.
    """
    content = _sealed(
        substitute(body, args=args, skill=skill, session_id=session_id, keep=keep).strip("\n")
    )
    parts = [
        f'<skill_content name="{_attr(skill.name)}" path="{_attr(skill.path)}">\n',
        f"{content.rstrip()}\n",
        "</skill_content>\n\n",
        f"Base directory for this skill: {skill.dir}\n",
    ]
    shown = list(files[:max_files])
    hidden = len(files) - len(shown)
    if files_total is not None:
        hidden = max(files_total - len(shown), hidden)
    if shown or hidden or files_truncated:
        parts.append(
            "Relative paths in this skill are relative to that directory. "
            "Its files (read them only when needed):\n"
        )
        parts.extend(f"- {path}\n" for path in shown)
        if hidden:
            parts.append(f"({hidden} more files not shown)\n")
        elif files_truncated:
            parts.append("(more files not shown)\n")
    return "".join(parts)


def render_reminder(skill: Skill) -> str:
    """The short text returned when this version of the skill is already in context."""
    return (
        f"Skill '{skill.name}' is already loaded in this session and its SKILL.md "
        "has not changed since; keep following the instructions from that earlier load "
        f"(base directory: {skill.dir})."
    )
