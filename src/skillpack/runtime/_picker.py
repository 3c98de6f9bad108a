"""What the picker (`skillpack ui`) knows about a workspace: skills ranked for what a
person types, each skill's flags and problems, its place in the model's catalog, and
which config file an enable or disable may go to.

The picker only draws; every rule it shows comes from here, and from the resolver and
search beneath: typed names match as the resolver matches a `$id`
(`select._narrow`), words rank as `skill_search` ranks them (`index._search`, here
over every skill, not only those the model may invoke), and a typo finds the
resolver's near misses.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

from .._errors import SkillpackError
from .._limits import SEARCH_MAX_LIMIT
from .._model import Catalog, Problem, Skill
from .._paths import PROJECT_MARKERS, project_root
from ..config._files import enable_decided_by, project_config_path
from ..config._schema import ConfigScope
from ..index._search import SearchResult, SkillSearch
from ..index._suggest import pick_suggestions
from ..render._catalog import Shown
from ..select._narrow import NameTier, SkillNames, typed_id
from ..select._words import query_words
from ._context import EntryCost, context_report
from ._session import Session

log = logging.getLogger("skillpack.picker")

Reason = Literal["all", "exact", "prefix", "substring", "path", "text", "close"]
"""Why a skill is in a filtered list: no filter (`all`), a name tier, search's exact
path rule or text ranking, or a near miss of the typed name."""

Flag = Literal[
    "disabled", "denied", "shadowed", "model-only", "user-only", "problems", "missing-deps"
]
"""What the picker marks on a skill. `disabled`: a config entry turns it off.
`denied`: a permission rule hides it from the model and every tool. `shadowed`: a
skill of the same name and higher precedence wins. `model-only`: `user-invocable:
false`. `user-only`: the model may not invoke it. `problems`: discovery reported
warnings about it (besides being shadowed). `missing-deps`: a declared dependency is missing."""

FLAGS: tuple[Flag, ...] = (
    "disabled",
    "denied",
    "shadowed",
    "model-only",
    "user-only",
    "problems",
    "missing-deps",
)


class Hit(NamedTuple):
    """One skill of a filtered list."""

    skill: Skill
    reason: Reason
    strong: bool
    """False for search's weak text matches and for near misses."""
    suggested: bool = False
    """A turn with this query as its message would suggest the skill to the model
    (`index._suggest.pick_suggestions` over the same ranking)."""


_NAME_REASONS: Mapping[NameTier, Reason] = {
    "exact": "exact",
    "prefix": "prefix",
    "substring": "substring",
    "close": "close",
}


class SkillFilter:
    """Ranks a session's skills for a typed query: names, then text, then near misses.

    1. Name matches (`select._narrow`): exact name or qualified id, then prefix, then
       substring, each in catalog order.
    2. Search's ranking of the query's words (names, descriptions, `when_to_use`,
       the opening of bodies; strong before weak), up to `SEARCH_MAX_LIMIT` skills
       not already listed. A query that is a SKILL.md or folder path matches it here.
    3. Only when neither found anything: the resolver's near misses of the name.

    A hit is `suggested` when a turn with the query as its message would suggest
    the skill to the model (the suggestion rule over the same ranking).

    Thread-safe. The name table is built once per catalog, and the search index is
    brought up to date once per catalog: call `prepare()` on a worker thread after a
    change so that the next keystroke only queries.
    """

    def __init__(self, session: Session, *, connection: sqlite3.Connection | None = None):
        """Args:
        session: Whose catalog to rank (followed as it changes).
        connection: The SQLite file search uses (default: the persistent index, or
            memory when it cannot be opened).
        """
        self._session = session
        self._connection = connection
        self._lock = threading.Lock()
        self._names: SkillNames | None = None
        self._names_of: Catalog | None = None
        self._all: list[Hit] = []
        self._all_of: Catalog | None = None
        self._search: SkillSearch | None = None
        self._search_failed = False

    def _state(self, catalog: Catalog) -> tuple[SkillNames, SkillSearch | None]:
        with self._lock:
            if self._names_of is not catalog or self._names is None:
                self._names = SkillNames(catalog.skills)
                self._names_of = catalog
            if self._search is None and not self._search_failed:
                from ._index_search import new_search

                self._search = new_search(self._session.reader, self._connection)
            return self._names, self._search

    def prepare(self) -> None:
        """Build what ranking the current catalog needs (the name table, the search
        index's sync), so the next `rank` only matches. Never raises: a search that
        cannot work leaves name matching alone."""
        catalog = self._session.catalog
        _names, search = self._state(catalog)
        if search is not None:
            try:
                search.prepare(catalog)
            except SkillpackError:
                self._give_up_search()

    def _give_up_search(self) -> None:
        log.exception("skillpack: search is unavailable; the picker filters by name only")
        with self._lock:
            self._search_failed = True
            self._search = None

    def rank(self, query: str) -> list[Hit]:
        """The session's skills for `query`, best first; every skill, in catalog
        order, when the query is blank."""
        catalog = self._session.catalog
        if not query.strip():
            with self._lock:
                if self._all_of is not catalog:
                    self._all = [Hit(skill, "all", True) for skill in catalog.skills]
                    self._all_of = catalog
                return list(self._all)
        names, search = self._state(catalog)
        hits = [Hit(skill, _NAME_REASONS[tier], True) for skill, tier in names.match(query)]
        seen = {hit.skill.key for hit in hits}
        if search is not None and (query_words(query) or "/" in query):
            try:
                results = search.search(catalog, query, limit=SEARCH_MAX_LIMIT, model_only=False)
            except SkillpackError:
                self._give_up_search()
                results = ()
            suggested = self._suggested(results)
            hits = [hit._replace(suggested=hit.skill.key in suggested) for hit in hits]
            for result in results:
                key = result.skill.key
                if key in seen:
                    continue
                seen.add(key)
                reason: Reason = "path" if "exact_path" in result.reasons else "text"
                hits.append(Hit(result.skill, reason, result.match == "strong", key in suggested))
        if not hits and typed_id(query):
            hits = [Hit(skill, "close", False) for skill in names.near_misses(query)]
        return hits

    def _suggested(self, results: Sequence[SearchResult]) -> set[str]:
        """Keys of the skills a turn would suggest for the query: the suggestion rule
        over the ranking of the skills the model may use."""
        session = self._session
        usable = [
            r
            for r in results
            if r.skill.model_invocable
            and r.skill.shadowed_by is None
            and session.skills.is_enabled(r.skill)
            and session.skills.is_visible(r.skill)
        ]
        picked = pick_suggestions(usable, limit=session.config.search_suggestions)
        return {r.skill.key for r in picked}


# -- flags and problems ------------------------------------------------------------------


def problems_by_skill(catalog: Catalog) -> dict[str, tuple[Problem, ...]]:
    """Each skill's problems, by `Skill.key`.

    A problem names the SKILL.md it is about (as discovered or real), or a file in
    the skill's folder (`agents/openai.yaml`); problems of roots, of the index and of
    files that are no skill (a SKILL.md that failed to load) belong to none.
    """
    found: dict[str, list[Problem]] = {}
    for problem in catalog.problems:
        skill = _owner(catalog, problem.path)
        if skill is not None:
            found.setdefault(skill.key, []).append(problem)
    return {key: tuple(problems) for key, problems in found.items()}


def _owner(catalog: Catalog, path: str) -> Skill | None:
    skill = catalog.at_path(path)
    folder = os.path.dirname(path)
    for _ in range(2):  # the sidecar is <skill>/agents/openai.yaml
        if skill is not None or not folder:
            break
        skill = catalog.at_path(os.path.join(folder, "SKILL.md"))
        folder = os.path.dirname(folder)
    return skill


def missing_dependencies(session: Session, skill: Skill) -> tuple[Mapping[str, str], ...]:
    """`{"type", "name"}` of each dependency `skill` declares that the session lacks
    now (`Session.dependencies`: nobody is asked)."""
    return tuple(session.declared.dependencies(skill).missing)


def skill_flags(
    session: Session,
    skill: Skill,
    problems: Mapping[str, tuple[Problem, ...]],
) -> tuple[Flag, ...]:
    """The flags of `skill` in `FLAGS` order (`problems` from `problems_by_skill`)."""
    flags: list[Flag] = []
    if not session.skills.is_enabled(skill):
        flags.append("disabled")
    if not session.skills.is_visible(skill):
        flags.append("denied")
    if skill.shadowed_by is not None:
        flags.append("shadowed")
    if not skill.user_invocable:
        flags.append("model-only")
    if not skill.model_invocable:
        flags.append("user-only")
    if any(p.code != "name-shadowed" for p in problems.get(skill.key, ())):
        flags.append("problems")  # being shadowed is its own flag
    if missing_dependencies(session, skill):
        flags.append("missing-deps")
    return tuple(flags)


# -- what the catalog costs ------------------------------------------------------------


class CatalogCosts:
    """Each skill's place in the model's catalog as the session renders it now.

    Built once per catalog and config from the session's context report (rendering
    10,000 entries takes a while: build it off the UI thread). A skill is in the
    catalog with its whole description, shortened, as a name only, or omitted by the
    budget; or not in it at all, and then `describe` says why (disabled, denied,
    shadowed, user-only).
    """

    def __init__(self, session: Session) -> None:
        self._session = session
        report = context_report(session, include_skills=True)
        self.budget = report.budget
        """The catalog's budget and what it shortened, reduced to names, or omitted."""
        # Only the entries are kept: the report's per-skill states would be
        # thousands of objects for the collector to walk.
        self._entries = {entry.path: entry for entry in report.entries}

    def entry(self, skill: Skill) -> EntryCost | None:
        """`skill`'s entry in the catalog (None: the model's catalog leaves it out)."""
        return self._entries.get(skill.path)

    def describe(self, skill: Skill) -> str:
        """One line for people: what the skill costs the catalog, and how it is shown."""
        entry = self.entry(skill)
        if entry is None:
            return f"not in the model's catalog: {self._why_not(skill)}"
        budget = self.budget
        shown = _SHOWN_WORDS[entry.shown]
        return (
            f"{entry.chars:,} chars (~{entry.tokens:,} tokens), {shown}; the whole "
            f"catalog: {budget.used_chars:,} of {budget.budget_chars:,} chars"
        )

    def _why_not(self, skill: Skill) -> str:
        session = self._session
        if not session.skills.is_enabled(skill):
            return "it is disabled"
        if not session.skills.is_visible(skill):
            return "a permission rule denies it"
        if skill.shadowed_by is not None:
            return "it is shadowed"
        if not skill.model_invocable:
            return "only the user invokes it"
        return "the session does not list it"


_SHOWN_WORDS: Mapping[Shown, str] = {
    "full": "listed whole",
    "shortened": "its description shortened by the budget",
    "name_only": "listed by name only (the budget cut its description)",
    "omitted": "omitted: the budget left no room",
}


# -- enable and disable ------------------------------------------------------------------


def toggle_scopes(skill: Skill, cwd: str, *, user: bool = True) -> tuple[ConfigScope, ...]:
    """The config files an enable or disable of `skill` may go to, from `cwd`.

    Where an entry decides the skill's state now (`enable_decided_by`), only that
    file: a change is written where the deciding setting lives. Otherwise the user's
    (unless `user` is False: the session reads no user config) and, inside a project
    (a folder marked by `.git`, `.jj` or `.skillpack`), the project's.
    """
    project = project_config_path(cwd)
    decided = enable_decided_by(skill, cwd=cwd, user=user)
    if decided is not None:
        return ("project",) if decided == project else ("user",)
    root = project_root(cwd)
    inside = any(os.path.exists(os.path.join(root, marker)) for marker in PROJECT_MARKERS)
    scopes: list[ConfigScope] = ["user"] if user else []
    if inside or not user:
        scopes.append("project")
    return tuple(scopes)


def ref_for(catalog: Catalog, skill: Skill) -> str:
    """What names `skill` alone in a config entry (and to `lookup_skill`): its bare name
    when no other skill has that name (what `skillpack disable NAME` writes), else its
    qualified id when that picks it alone, else its folder."""
    if catalog.named(skill.name) == (skill,):
        return skill.name
    if catalog.qualified(skill.qualified_name) == (skill,):
        return skill.qualified_name
    return skill.dir
