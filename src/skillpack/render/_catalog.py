"""The catalog, layer 1 of rendering (design rules: rendering), pure: skills in, text out.

`render_catalog` writes the name, description and location of each skill in one of
three formats (`_formats.py`), fitted to a character budget (`_budget.py` says how
large) by one allocator that every surface uses. `entry_chars` is what each entry
costs unshortened.

The allocation (the whole text, preamble and notice included, fits `budget_chars`);
the first step that fits wins:

1. Everything fits: render it all, no notice.
2. Drop what the model does not need to choose: the locations when the model has
   the skill_load tool (`skill_load=True`, the default), else the absolute prefix
   every location repeats, stated once as the location base.
3. Shorten descriptions fairly: one common length L for every description (water
   filling: a description shorter than L stays whole, a longer one keeps its first L
   characters, cut at a word with "…"); L is the largest that fits, never below
   `MIN_DESCRIPTION_CHARS`.
4. Names only: the k best-ranked skills keep a description (at the floor, then as
   long as the room left allows), the others are listed by name only in a compact
   list (`more_skills`); k is the largest that fits. The preamble goes only when the
   names do not fit with it.
5. Not even every name fits: `mode="auto"` renders the deferred catalog, a short stub
   that tells the model to find skills with skill_search; `mode="full"` (and `auto`
   when even the stub does not fit) lists the names of the best-ranked skills that
   fit and leaves the rest out.

Rank (`_rank.catalog_rank`) is recent use, then scope, never the name; the entries of
each part keep the catalog's order. Whenever step 3 or later applies, the catalog
carries a `truncated` notice pointing at `skill_search` (XML `<truncated shown=
total=>`, a Markdown `[truncated: …]` line, a JSON `"truncated"` object), and
`CatalogReport` lists exactly which skills were shortened, listed by name only, or
omitted. Sizes are upper bounds computed once per entry (escaping a cut description
never adds more than escaping the whole), so the rendered text is never longer than
the size the search allowed; fitting 10,000 skills takes milliseconds. Descriptions
are put on one line first (line breaks and tabs become single spaces) so every
format stays one entry per line.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import add, attrgetter, sub
from typing import Any, Literal, get_args

from .._errors import UsageError
from .._limits import BUDGET_CHARS
from .._model import Skill, listed_name
from ._budget import check_budget
from ._formats import (
    MORE_SEPARATOR,
    CatalogFormat,
    check_format,
    deferred_text,
    entry_text,
    escape,
    escaped_lengths,
    head_text,
    more_overhead,
    preamble_text,
    tail_text,
    tidy,
)
from ._rank import catalog_rank

MIN_DESCRIPTION_CHARS = 40
"""Descriptions are never shortened below this; past it entries lose them instead."""

ELLIPSIS = "…"
_SCOPE = attrgetter("scope")
_NAME = attrgetter("name")

CatalogMode = Literal["auto", "full", "deferred"]
"""`full`: list skills (by name only, then leaving the lowest-ranked out, when the
budget is short); `deferred`: only a stub that points at skill_search; `auto`: `full`
while every skill can at least be named, else `deferred`."""
CATALOG_MODES: tuple[CatalogMode, ...] = get_args(CatalogMode)

Shown = Literal["full", "shortened", "name_only", "omitted"]
"""What the budget did to one skill's entry."""


def check_mode(mode: str) -> None:
    """A `UsageError` for a catalog mode that is not a `CatalogMode`."""
    if mode not in CATALOG_MODES:
        raise UsageError(f"Unknown catalog mode {mode!r}. Use one of: {', '.join(CATALOG_MODES)}.")


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
    deferred: bool = False
    """True when the text is the deferred catalog: no skill listed, a stub that sends
    the model to skill_search."""
    locations_dropped: bool = False
    """True when locations were asked for but left out to fit (the model has
    skill_load, so it needs no location to load a skill)."""
    location_base: str | None = None
    """The prefix every location shared, stated once; locations are relative to it."""
    description_chars: int | None = None
    """The common length descriptions were cut to; None when none was cut."""
    shown_as: tuple[Shown, ...] = field(default=(), compare=False, repr=False)
    """What became of each model-invocable skill given, in the order given."""

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
            "deferred": self.deferred,
            "locations_dropped": self.locations_dropped,
            "location_base": self.location_base,
            "description_chars": self.description_chars,
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
    skill_load: bool = True,
    mode: CatalogMode = "auto",
    recent: Mapping[str, int] | None = None,
) -> RenderedCatalog:
    """Render the catalog (layer 1) of `skills`, fitted to `budget_chars`.

    Args:
        skills: The skills to list, already filtered, in catalog order (the order
            each part of the text keeps); skills that are not model-invocable are
            dropped here as well.
        format: `xml`, `markdown` or `json`.
        budget_chars: Maximum length of the whole text, preamble and notice included.
        include_location: Add each skill's SKILL.md path (for agents that read files).
        preamble: Start with the usage instructions that say when and how to load.
        max_entries: List at most this many skills (the best-ranked); the rest are
            omitted as over the budget are: reported and counted in the notice.
        skill_load: The model has the skill_load tool, so locations are the first
            thing dropped over budget; False keeps them (relative to their common
            base) on every entry shown.
        mode: `auto`, `full` or `deferred` (`CatalogMode`).
        recent: When each skill was last used, by `Skill.key` (larger is more
            recent): used skills rank first when the budget is short.

    Returns:
        The text and a `CatalogReport`. No skills at all give an empty text.

    Raises:
        UsageError: `budget_chars` is negative, `max_entries` is below 1, or
            `format` or `mode` is unknown.
    """
    check_budget(budget_chars)
    check_format(format)
    check_mode(mode)
    if max_entries is not None and max_entries < 1:
        raise UsageError(
            f"max_entries must be at least 1, got {max_entries}; pass None for no cap."
        )
    listed = [s for s in skills if s.model_invocable]
    if not listed:
        report = CatalogReport(budget_chars=budget_chars, used_chars=0, total=0, shown=0)
        return RenderedCatalog(text="", report=report, format=format)
    rank = _Rank(listed, recent)
    options = _Options(
        fmt=format,
        budget=budget_chars,
        include_location=include_location,
        preamble=preamble,
        cap=min(len(listed), max_entries or len(listed)),
        skill_load=skill_load,
        mode=mode,
    )
    rendered = _Allocator(listed, rank, options).fit()
    if len(rendered.text) > budget_chars:
        # Only a control character that the quick JSON scan skips can cause this.
        rendered = _Allocator(listed, rank, options, exact=True).fit()
    return rendered


@dataclass(frozen=True, kw_only=True, slots=True)
class _Options:
    fmt: CatalogFormat
    budget: int
    include_location: bool
    preamble: bool
    cap: int
    skill_load: bool
    mode: CatalogMode


Locations = Literal["absolute", "relative", "none"]


class _Layout:
    """The sizes of every entry under one way of writing locations: once per layout,
    on whole columns with C-level `map` operations (10,000 skills in milliseconds)."""

    def __init__(
        self, allocator: _Allocator, locations: Locations, *, exact: bool, preamble: bool
    ) -> None:
        fmt = allocator.fmt
        skills = allocator.skills
        self.locations = locations
        self.base = allocator.base if locations == "relative" else None
        shown = locations != "none"
        base = None if self.base is None else escape(fmt, self.base)
        note = preamble_text(shown, relative=self.base is not None) if preamble else None
        self.head = head_text(fmt, note, base)
        self.bare_head = head_text(fmt, None, base)
        common = list(allocator.names)
        if shown:
            cut = len(self.base or "")
            paths = [s.path[cut:] for s in skills] if cut else [s.path for s in skills]
            common = list(map(add, common, escaped_lengths(fmt, paths, exact=exact)))
        if fmt == "json":
            # A handful of scope names: each one's size is computed once.
            scopes = list(map(_SCOPE, skills))
            sizes = {scope: len(escape(fmt, scope)) for scope in set(scopes)}
            common = list(map(add, common, map(sizes.__getitem__, scopes)))
        location = "" if shown else None
        scope = "" if fmt == "json" else None
        name_overhead = len(entry_text(fmt, "", None, location, scope))
        self.description_overhead = len(entry_text(fmt, "", "", location, scope)) - name_overhead
        self.name_only: list[int] = list(map(add, common, repeat(name_overhead)))
        self.ranked = _Column(self.name_only, allocator.rank)
        """Sizes of the k best-ranked entries written by name only, for every k."""
        self.compact = not shown
        """Entries without a description go to the compact list of names."""


class _Allocator:
    """Sizes every entry once, then picks the richest rendering within the budget."""

    def __init__(
        self, skills: list[Skill], rank: _Rank, options: _Options, exact: bool = False
    ) -> None:
        self.skills = skills
        self.rank = rank
        self.options = options
        self.fmt = options.fmt
        self.budget = options.budget
        self.total = len(skills)
        self.cap = options.cap
        self.exact = exact
        self.gap = 1 if self.fmt == "json" else 0  # the comma between JSON entries
        self.descriptions = tidy([s.description for s in skills])
        self.raw = list(map(len, self.descriptions))
        self.escaped = escaped_lengths(self.fmt, self.descriptions, exact=exact)
        if 0 in self.raw:
            # An empty description is never written (JSON would otherwise count its quotes).
            self.escaped = [e if r else 0 for e, r in zip(self.escaped, self.raw, strict=True)]
        self.names = escaped_lengths(self.fmt, list(map(listed_name, skills)), exact=exact)
        self.base = _common_base([s.path for s in skills]) if options.include_location else ""
        self.more = more_overhead(self.fmt)
        # Sums over the k best-ranked skills, for every k (`_Column`).
        escaped = self.escaped
        floor = list(map(add, escaped, map(sub, repeat(MIN_DESCRIPTION_CHARS), self.raw)))
        self.whole = _Column(escaped, rank)
        self.floor = _Column(list(map(min, escaped, floor)), rank)
        self.with_description = _Column(list(map(bool, self.raw)), rank)
        self.ranked_names = _Column(self.names, rank)

    # -- the steps -------------------------------------------------------------------

    def fit(self) -> RenderedCatalog:
        if self.options.mode == "deferred":
            return self._deferred()
        layouts = self._layouts()
        cap = self.cap
        for layout in layouts:
            if self._size(layout, layout.head, None, cap, cap) <= self.budget:
                return self._render(layout, layout.head, None, cap, cap)
        layout = layouts[-1]
        floor = MIN_DESCRIPTION_CHARS
        if self._size(layout, layout.head, floor, cap, cap) <= self.budget:
            limit = self._best_limit(layout, layout.head, cap, cap)
            return self._render(layout, layout.head, limit, cap, cap)
        heads = (
            [layout.head] if layout.head == layout.bare_head else [layout.head, layout.bare_head]
        )
        for head in heads:
            keep = self._most(layout, head, lambda k: (k, cap))
            if keep is not None:
                cut = self._best_limit(layout, head, keep, cap) if keep else None
                return self._render(layout, head, cut, keep, cap)
        if self.options.mode == "auto" and len(self._stub()) <= self.budget:
            return self._deferred()
        for head in heads:
            shown = self._most(layout, head, lambda m: (0, m))
            if shown is not None:
                return self._render(layout, head, None, 0, shown)
        return self._nothing(deferred=False)

    def _most(
        self, layout: _Layout, head: str, plan: Callable[[int], tuple[int, int]]
    ) -> int | None:
        """Largest x below `cap` for which `plan(x)` (described at the floor, shown)
        fits; None when even x = 0 does not."""

        def fits(x: int) -> bool:
            size = self._size(layout, head, MIN_DESCRIPTION_CHARS, *plan(x))
            return size <= self.budget

        return _largest(fits, 0, self.cap - 1) if fits(0) else None

    def _layouts(self) -> list[_Layout]:
        """How locations may be written, richest first: absolute, then (when over
        budget) none if the model has skill_load, else relative to their base."""
        options = self.options

        def layout(locations: Locations) -> _Layout:
            return _Layout(self, locations, exact=self.exact, preamble=options.preamble)

        if not options.include_location:
            return [layout("none")]
        if options.skill_load:
            return [layout("absolute"), layout("none")]
        if self.base:
            return [layout("absolute"), layout("relative")]
        return [layout("absolute")]

    # -- sizes -----------------------------------------------------------------------

    def _size(self, layout: _Layout, head: str, limit: int | None, keep: int, shown: int) -> int:
        """Upper bound of the text's length: the `keep` best-ranked skills with their
        description (whole, or cut to the floor `limit`), the rest of the `shown`
        best-ranked by name. Prefix sums in rank order make it a few look-ups."""
        described = self.whole if limit is None else self.floor
        size = len(head) + layout.ranked.upto(keep) + described.upto(keep)
        size += self.with_description.upto(keep) * layout.description_overhead
        truncated = limit is not None or keep < self.total or shown < self.total
        return size + self._rest(layout, keep, shown, truncated)

    def _rest(self, layout: _Layout, keep: int, shown: int, truncated: bool) -> int:
        """What follows the described entries: the rest of the `shown`, the JSON
        commas, and the tail with its notice."""
        named = shown - keep
        if layout.compact:
            size = self.gap * max(keep - 1, 0)
            if named:
                size += self.more + self.ranked_names.upto(shown) - self.ranked_names.upto(keep)
                size += len(MORE_SEPARATOR) * (named - 1)
        else:
            size = layout.ranked.upto(shown) - layout.ranked.upto(keep)
            size += self.gap * max(shown - 1, 0)
        tail = tail_text(self.fmt, shown, self.total, truncated, named)
        return size + len(tail)

    def _best_limit(self, layout: _Layout, head: str, keep: int, shown: int) -> int:
        """Largest common description length (water filling) at which the `keep`
        best-ranked skills with descriptions fit; the caller has checked the floor.

        Sorting by length once makes each probe of the binary search a bisection plus
        two prefix-sum look-ups.
        """
        top = [i for i in self.rank.best(keep) if self.raw[i]]
        fixed = len(head) + layout.ranked.upto(keep)
        fixed += len(top) * layout.description_overhead + self._rest(layout, keep, shown, True)
        room = self.budget - fixed
        top.sort(key=self.raw.__getitem__)
        raws = [self.raw[i] for i in top]
        whole = list(accumulate((self.escaped[i] for i in top), initial=0))
        extra = list(accumulate((self.escaped[i] - self.raw[i] for i in reversed(top)), initial=0))

        def size(limit: int) -> int:
            short = bisect_right(raws, limit)
            cut = len(top) - short
            return whole[short] + cut * limit + extra[cut]

        longest = raws[-1] if raws else MIN_DESCRIPTION_CHARS
        return _largest(
            lambda limit: size(limit) <= room,
            MIN_DESCRIPTION_CHARS,
            max(longest, MIN_DESCRIPTION_CHARS),
        )

    # -- text ------------------------------------------------------------------------

    def _render(
        self, layout: _Layout, head: str, limit: int | None, keep: int, shown: int
    ) -> RenderedCatalog:
        """The `keep` best-ranked skills with their description, the rest of the
        `shown` best-ranked by name, each part in catalog order."""
        fmt = self.fmt
        skills = self.skills
        described = self.rank.best(keep)
        listed = self.rank.best(shown)
        is_described = [False] * self.total
        for index in described:
            is_described[index] = True
        states: list[Shown] = ["omitted"] * self.total
        cut = len(layout.base or "")
        parts = [head]
        entries = sorted(described if layout.compact else listed)
        for n, i in enumerate(entries):
            skill = skills[i]
            description: str | None = self.descriptions[i]
            state: Shown = "full"
            if not is_described[i]:
                state = "name_only" if description else "full"
                description = None
            elif description and limit is not None and len(description) > limit:
                state = "shortened"
                description = shorten(description, limit)
            states[i] = state
            text = entry_text(
                fmt,
                escape(fmt, listed_name(skill)),
                escape(fmt, description) if description else None,
                escape(fmt, skill.path[cut:]) if layout.locations != "none" else None,
                escape(fmt, skill.scope) if fmt == "json" else None,
            )
            if self.gap and n < len(entries) - 1:
                text = text[:-1] + ",\n"
            parts.append(text)
        more: list[str] = []
        if layout.compact:
            for i in sorted(i for i in listed if not is_described[i]):
                states[i] = "name_only" if self.descriptions[i] else "full"
                more.append(escape(fmt, listed_name(skills[i])))
        truncated = limit is not None or keep < self.total or shown < self.total
        named = shown - keep
        parts.append(tail_text(fmt, shown, self.total, truncated, named, more))
        text = "".join(parts)
        cut_any = limit is not None and "shortened" in states
        report = CatalogReport(
            budget_chars=self.budget,
            used_chars=len(text),
            total=self.total,
            shown=shown,
            shortened=self._names(states, "shortened"),
            names_only=self._names(states, "name_only"),
            omitted=self._names(states, "omitted"),
            truncated=truncated,
            locations_dropped=self.options.include_location and layout.locations == "none",
            location_base=layout.base,
            description_chars=limit if cut_any else None,
            shown_as=tuple(states),
        )
        return RenderedCatalog(text=text, report=report, format=fmt)

    def _names(self, states: list[Shown], state: Shown) -> tuple[str, ...]:
        return tuple(s.name for s, st in zip(self.skills, states, strict=True) if st == state)

    def _stub(self) -> str:
        return deferred_text(self.fmt, self.total)

    def _deferred(self) -> RenderedCatalog:
        text = self._stub()
        if len(text) > self.budget:
            return self._nothing(deferred=True)
        report = CatalogReport(
            budget_chars=self.budget,
            used_chars=len(text),
            total=self.total,
            shown=0,
            omitted=tuple(map(_NAME, self.skills)),
            truncated=True,
            deferred=True,
            shown_as=_all_omitted(self.total),
        )
        return RenderedCatalog(text=text, report=report, format=self.fmt)

    def _nothing(self, *, deferred: bool) -> RenderedCatalog:
        """Not even the smallest catalog fits: no text, every skill reported."""
        report = CatalogReport(
            budget_chars=self.budget,
            used_chars=0,
            total=self.total,
            shown=0,
            omitted=tuple(s.name for s in self.skills),
            truncated=True,
            deferred=deferred,
            shown_as=_all_omitted(self.total),
        )
        return RenderedCatalog(text="", report=report, format=self.fmt)


class _Rank:
    """The skills' rank (`catalog_rank`), worked out only when the allocator has to
    choose between skills: a catalog that lists every skill alike needs none."""

    def __init__(self, skills: list[Skill], recent: Mapping[str, int] | None) -> None:
        self.skills = skills
        self.recent = recent
        self._order: list[int] | None = None

    @property
    def order(self) -> list[int]:
        """Indices of the skills, best-ranked first."""
        if self._order is None:
            self._order = catalog_rank(self.skills, self.recent)
        return self._order

    def best(self, count: int) -> list[int]:
        """Indices of the `count` best-ranked skills (all of them in input order)."""
        if count >= len(self.skills):
            return list(range(len(self.skills)))
        return self.order[:count]


class _Column:
    """Sums of one number per skill over the k best-ranked skills: the whole column's
    sum at once, the prefix sums in rank order only when a search needs them."""

    def __init__(self, values: list[int], rank: _Rank) -> None:
        self.values = values
        self.rank = rank
        self.total: int | None = None
        self.prefix: list[int] | None = None

    def upto(self, k: int) -> int:
        if k == 0:
            return 0
        if k == len(self.values):
            if self.total is None:
                self.total = sum(self.values)
            return self.total
        if self.prefix is None:
            ranked = map(self.values.__getitem__, self.rank.order)
            self.prefix = list(accumulate(ranked, initial=0))
        return self.prefix[k]


def _all_omitted(count: int) -> tuple[Shown, ...]:
    omitted: Shown = "omitted"
    return (omitted,) * count


def _common_base(paths: list[str]) -> str:
    """The longest folder prefix (ending in a separator) every path shares; "" when
    the paths share none worth stating."""
    if not paths:
        return ""
    first, last = min(paths), max(paths)
    length = 0
    for a, b in zip(first, last, strict=False):
        if a != b:
            break
        length += 1
    prefix = first[:length]
    end = max(prefix.rfind("/"), prefix.rfind("\\"))
    return prefix[: end + 1] if end > 0 else ""


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
    options = _Options(
        fmt=format,
        budget=0,
        include_location=include_location,
        preamble=False,
        cap=len(skills),
        skill_load=True,
        mode="full",
    )
    allocator = _Allocator(list(skills), _Rank(list(skills), None), options, exact=True)
    layout = _Layout(
        allocator, "absolute" if include_location else "none", exact=True, preamble=False
    )
    overhead = layout.description_overhead
    return tuple(
        name + (overhead + escaped if raw else 0)
        for name, escaped, raw in zip(
            layout.name_only, allocator.escaped, allocator.raw, strict=True
        )
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
