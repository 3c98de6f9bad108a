"""What skills cost the model's context: the report behind `context.inspect` and
`skillpack context` (what `/context` shows in Claude Code, for skills).

Built from the session alone: the catalog as `Session.render_catalog` fits it to the
budget (its `CatalogReport` says what was shortened or omitted), each entry's size from
`render.entry_chars`, the skills injected so far from `Session.inspect`, and the
leading skills' tool declarations. Tokens are estimated as characters / 4.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._model import Skill
from ..parse._validate import estimate_tokens
from ..render._catalog import CatalogMode, CatalogReport, Shown, entry_chars
from ..render._formats import CatalogFormat
from ._session import Session


@dataclass(frozen=True, kw_only=True, slots=True)
class EntryCost:
    """One skill's entry in the model's catalog."""

    name: str
    qualified_name: str
    path: str
    scope: str
    chars: int
    """Characters of the entry with its whole description (what it costs unshortened)."""
    tokens: int
    """`chars` as estimated tokens."""
    shown: Shown
    """What the budget did to it."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "qualified_name": self.qualified_name,
            "path": self.path,
            "scope": self.scope,
            "chars": self.chars,
            "tokens": self.tokens,
            "shown": self.shown,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadedCost:
    """A skill whose instructions this session injected."""

    name: str | None
    """None when the skill is no longer in the catalog."""
    qualified_name: str | None
    path: str
    body_chars: int
    """Characters of its SKILL.md body (0 when it left the catalog)."""
    body_tokens: int
    mtime_ns: int
    """Version injected: the SKILL.md's modification time..."""
    size: int
    """...and size."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "qualified_name": self.qualified_name,
            "path": self.path,
            "body_chars": self.body_chars,
            "body_tokens": self.body_tokens,
            "mtime_ns": self.mtime_ns,
            "size": self.size,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolDeclaration:
    """What one leading skill says about tools."""

    skill: str
    """Its qualified name."""
    allowed_tools: tuple[str, ...] | None
    disallowed_tools: tuple[str, ...] | None

    def to_dict(self) -> dict[str, Any]:
        allowed, disallowed = self.allowed_tools, self.disallowed_tools
        return {
            "skill": self.skill,
            "allowed_tools": None if allowed is None else list(allowed),
            "disallowed_tools": None if disallowed is None else list(disallowed),
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextReport:
    """Where a session's skills stand in the model's context."""

    session_id: str
    format: CatalogFormat
    """The catalog format measured."""
    context_window: int | None
    """The model's window in tokens, when the caller gave it."""
    budget: CatalogReport
    """The catalog's budget and what it shortened, reduced to names, or omitted."""
    entries: tuple[EntryCost, ...]
    """Every skill in the model's catalog, in catalog order (empty unless asked for)."""
    loaded: tuple[LoadedCost, ...]
    """Skills injected in this session, by path."""
    leading: tuple[str, ...]
    """Qualified names of the skills activated since the last user turn, leader first."""
    declarations: tuple[ToolDeclaration, ...]
    """Tool declarations of the leading skills that make any."""
    tools: tuple[str, ...] | None
    """The host's tools that stay active while those skills lead (when it named its tools)."""
    state: dict[str, Any]
    """`Session.inspect`: counts, roots, and with `include_skills` every skill's state."""

    @property
    def catalog_tokens(self) -> int:
        return estimate_tokens(self.budget.used_chars)

    @property
    def loaded_tokens(self) -> int:
        return sum(item.body_tokens for item in self.loaded)

    def share(self, tokens: int) -> float | None:
        """`tokens` as a fraction of the context window, when it is known."""
        return None if not self.context_window else tokens / self.context_window

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping: the shape of `context.inspect` and `context --json`."""
        catalog = self.budget.to_dict()
        catalog.update(
            format=self.format,
            tokens=self.catalog_tokens,
            share_of_window=self.share(self.catalog_tokens),
        )
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "context_window": self.context_window,
            "catalog": catalog,
            "loaded": [item.to_dict() for item in self.loaded],
            "loaded_tokens": self.loaded_tokens,
            "loaded_share_of_window": self.share(self.loaded_tokens),
            "leading": self.leading[0] if self.leading else None,
            "leading_chain": list(self.leading),
            "active_tools": {
                "restricted": bool(self.declarations),
                "declarations": [d.to_dict() for d in self.declarations],
                "tools": None if self.tools is None else list(self.tools),
            },
            "counts": self.state["counts"],
            "roots": self.state["roots"],
        }
        if "skills" in self.state:
            catalog["entries"] = [entry.to_dict() for entry in self.entries]
            data["skills"] = self.state["skills"]
        return data


def context_report(
    session: Session,
    *,
    context_window: int | None = None,
    budget_chars: int | None = None,
    format: CatalogFormat = "xml",
    include_location: bool = True,
    include_skills: bool = False,
    tools: Sequence[str] | None = None,
    mode: CatalogMode | None = None,
) -> ContextReport:
    """Measure what `session`'s skills cost the context now.

    Args:
        session: The session whose catalog, loads and leading skills are measured.
        context_window: The model's window in tokens (sets the budget and the shares).
        budget_chars: An explicit catalog budget, as for `Session.render_catalog`.
        format: The catalog format the host renders.
        include_location: Whether the host's catalog lists SKILL.md paths.
        include_skills: Also list every catalog entry's cost and every skill's state.
        tools: The host's tool names; the report then says which stay active.
        mode: The catalog mode the host renders (`Session.render_catalog`).
    """
    state = session.inspect(include_skills=include_skills)
    rendered = session.render_catalog(
        format=format,
        context_window=context_window,
        budget_chars=budget_chars,
        include_location=include_location,
        mode=mode,
    )
    entries: tuple[EntryCost, ...] = ()
    if include_skills:
        skills = session.skills.model_skills()
        sizes = entry_chars(skills, format=format, include_location=include_location)
        entries = tuple(
            _entry_cost(skill, chars, how)
            for skill, chars, how in zip(skills, sizes, rendered.report.shown_as, strict=True)
        )
    catalog = session.catalog
    loaded = []
    for item in state["loaded"]:
        skill = catalog.at_path(item["path"])
        body = skill.body_chars if skill is not None else 0
        loaded.append(
            LoadedCost(
                name=item["name"],
                qualified_name=skill.qualified_name if skill is not None else None,
                path=item["path"],
                body_chars=body,
                body_tokens=estimate_tokens(body),
                mtime_ns=item["mtime_ns"],
                size=item["size"],
            )
        )
    leading = session.leading
    declarations = tuple(
        ToolDeclaration(
            skill=s.qualified_name,
            allowed_tools=s.allowed_tools,
            disallowed_tools=s.disallowed_tools,
        )
        for s in leading
        if s.allowed_tools is not None or s.disallowed_tools
    )
    return ContextReport(
        session_id=session.session_id,
        format=format,
        context_window=context_window,
        budget=rendered.report,
        entries=entries,
        loaded=tuple(loaded),
        leading=tuple(s.qualified_name for s in leading),
        declarations=declarations,
        tools=None if tools is None else tuple(session.declared.active_tools(list(tools))),
        state=state,
    )


def _entry_cost(skill: Skill, chars: int, shown: Shown) -> EntryCost:
    return EntryCost(
        name=skill.name,
        qualified_name=skill.qualified_name,
        path=skill.path,
        scope=skill.scope,
        chars=chars,
        tokens=estimate_tokens(chars),
        shown=shown,
    )
