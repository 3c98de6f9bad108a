"""The catalog, layer 1 of rendering (design rules: rendering), pure: skills in, text out.

`render_catalog` writes the name, description and location of each skill in one of
three formats (`_formats.py`), fitted to a character budget (`_budget.py` says how
large). `entry_chars` is what each entry costs unshortened.

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

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import add, attrgetter, sub
from typing import Any

from .._errors import UsageError
from .._limits import BUDGET_CHARS
from .._model import Skill, listed_name
from ._budget import check_budget
from ._formats import (
    CatalogFormat,
    check_format,
    entry_text,
    escape,
    escaped_lengths,
    head_text,
    preamble_text,
    tail_text,
    tidy,
)

MIN_DESCRIPTION_CHARS = 40
"""Descriptions are never shortened below this; past it entries lose them instead."""

ELLIPSIS = "…"
_SCOPE = attrgetter("scope")


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
    check_budget(budget_chars)
    check_format(format)
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
        longest = tail_text(format, max_entries, total, True)
        grows = len(longest) - len(tail_text(format, 0, 0, False))
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
        tail = tail_text(fmt, report.shown, report.total, report.truncated)
        text = text[: len(text) - len(tail)] + tail_text(fmt, report.shown, total, True)
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
        self.head = head_text(fmt, preamble_text(include_location) if preamble else None)
        self.bare_head = head_text(fmt, None)
        self.gap = 1 if fmt == "json" else 0  # the comma between JSON entries

        self.descriptions = tidy([s.description for s in skills])
        self.raw = list(map(len, self.descriptions))
        self.escaped = escaped_lengths(fmt, self.descriptions, exact=exact)
        if 0 in self.raw:
            # An empty description is never written (JSON would otherwise count its quotes).
            self.escaped = [e if r else 0 for e, r in zip(self.escaped, self.raw, strict=True)]
        common: list[int] = escaped_lengths(fmt, [listed_name(s) for s in skills], exact=exact)
        if include_location:
            locations = escaped_lengths(fmt, [s.path for s in skills], exact=exact)
            common = list(map(add, common, locations))
        self.with_scope = fmt == "json"
        if self.with_scope:
            # A handful of scope names: each one's size is computed once.
            scopes = list(map(_SCOPE, skills))
            sizes = {scope: len(escape(fmt, scope)) for scope in set(scopes)}
            common = list(map(add, common, map(sizes.__getitem__, scopes)))
        location = "" if include_location else None
        scope = "" if self.with_scope else None
        name_overhead = len(entry_text(fmt, "", None, location, scope))
        self.description_overhead = len(entry_text(fmt, "", "", location, scope)) - name_overhead
        # Size of each entry written as name (and location) only.
        self.name_only: list[int] = list(map(add, common, repeat(name_overhead)))

    # -- sizes ---------------------------------------------------------------------

    def _tail_len(self, shown: int, truncated: bool) -> int:
        return len(tail_text(self.fmt, shown, self.total, truncated))

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
            name = escape(fmt, listed_name(skill))
            location = escape(fmt, skill.path) if self.include_location else None
            scope = escape(fmt, skill.scope) if self.with_scope else None
            if i >= keep or not description:
                if description:
                    names_only.append(skill.name)
                text = entry_text(fmt, name, None, location, scope)
            else:
                if limit is not None and len(description) > limit:
                    shortened.append(skill.name)
                    description = shorten(description, limit)
                text = entry_text(fmt, name, escape(fmt, description), location, scope)
            if self.gap and i < shown - 1:
                text = text[:-1] + ",\n"
            parts.append(text)
        truncated = limit is not None or keep < self.total
        parts.append(tail_text(fmt, shown, self.total, truncated))
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
    check_format(format)
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
