"""What a served catalog leaves out and why, and the catalog's version: what every
server tells its clients (`skillpack mcp`, `skillpack serve`, `skillpack mcp --check`).

A server shows the skills the model may see; the rest of what discovery found, or
could not find, must not vanish without a word. `left_out` lists it, one `LeftOut`
per skill or root, each with a stable code, a kind and a message that names the fix:

- `truncated` (`walk-truncated`, `dir-unreadable`): a root was not searched whole;
  skills past the bound or below the folder were never found.
- `invalid` (the problem's own code: `frontmatter-missing`, `yaml-invalid`, ...): a
  SKILL.md that does not load.
- `shadowed` (`name-shadowed`): a skill of the same name in a scope of higher
  precedence wins.
- `prompt-only` (`prompt-only`): `disable-model-invocation: true`; offered to the user
  (as a prompt), never to the model.
- `disabled` (`disabled`): turned off in the config.
- `denied` (`denied`): hidden by a permission rule.

A server adds its own (the MCP skills extension's `not-listable`) with `left_out_entry`.
`catalog_version` is a digest of everything a listing shows about the catalog: it is
the same for equal catalogs and changes with any skill, standing or problem.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from .._model import Catalog, Skill

LeftOutKind = Literal[
    "truncated", "invalid", "shadowed", "prompt-only", "disabled", "denied", "not-listable"
]
BLOCKING_KINDS: Final[frozenset[str]] = frozenset({"truncated", "invalid"})
"""Kinds that mean a skill someone wrote is missing by accident (`mcp --check` exits 1)."""
_TRUNCATING: Final = frozenset({"walk-truncated", "dir-unreadable"})


@dataclass(frozen=True, kw_only=True, slots=True)
class LeftOut:
    """One skill (or root) a server does not offer to the model, and why."""

    kind: LeftOutKind
    """What sort of omission (see the module docstring)."""
    code: str
    """Stable kebab-case code: the discovery problem's, or one of this module's."""
    path: str
    """The SKILL.md, or the root or folder the problem is about."""
    name: str | None
    """The skill's name, when there is a skill."""
    message: str
    """Why it is left out and how to change that."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "code": self.code,
            "path": self.path,
            "name": self.name,
            "message": self.message,
        }


def left_out(
    catalog: Catalog,
    *,
    is_enabled: Callable[[Skill], bool],
    is_visible: Callable[[Skill], bool],
) -> tuple[LeftOut, ...]:
    """Everything of `catalog` the model is not offered, in a stable order: roots
    not searched whole first, then invalid files, then skills in catalog order."""
    found: list[LeftOut] = []
    for problem in catalog.problems:
        if problem.code in _TRUNCATING:
            found.append(
                LeftOut(
                    kind="truncated",
                    code=problem.code,
                    path=problem.path,
                    name=None,
                    message=problem.message,
                )
            )
    for problem in catalog.problems:
        if problem.severity == "error" and not problem.code.startswith("config-"):
            found.append(
                LeftOut(
                    kind="invalid",
                    code=problem.code,
                    path=problem.path,
                    name=None,
                    message=problem.message,
                )
            )
    for skill in catalog.skills:
        entry = _skill_left_out(skill, is_enabled=is_enabled, is_visible=is_visible)
        if entry is not None:
            found.append(entry)
    return tuple(found)


def _skill_left_out(
    skill: Skill,
    *,
    is_enabled: Callable[[Skill], bool],
    is_visible: Callable[[Skill], bool],
) -> LeftOut | None:
    def entry(kind: LeftOutKind, code: str, message: str) -> LeftOut:
        return LeftOut(kind=kind, code=code, path=skill.path, name=skill.name, message=message)

    if skill.shadowed_by is not None:
        return entry(
            "shadowed",
            "name-shadowed",
            f"Skill '{skill.name}' at {skill.path} is shadowed by {skill.shadowed_by}, which "
            "has the same name in a scope of higher precedence; rename one of them to offer "
            "both.",
        )
    if not is_enabled(skill):
        return entry(
            "disabled",
            "disabled",
            f"Skill '{skill.name}' at {skill.path} is disabled in the config; "
            f"`skillpack enable {skill.name}` turns it on.",
        )
    if not is_visible(skill):
        return entry(
            "denied",
            "denied",
            f"Skill '{skill.name}' at {skill.path} is hidden by a permission rule in the "
            "config; change the `[permissions]` rules to offer it.",
        )
    if not skill.model_invocable:
        return entry(
            "prompt-only",
            "prompt-only",
            f"Skill '{skill.name}' at {skill.path} sets `disable-model-invocation: true`: "
            "it is offered to the user as a prompt, never to the model. Remove that line "
            "to let the model use it.",
        )
    return None


def left_out_entry(skill: Skill, *, code: str, reason: str) -> LeftOut:
    """A skill a server cannot list for a reason of its own (`reason`: a clause)."""
    return LeftOut(
        kind="not-listable",
        code=code,
        path=skill.path,
        name=skill.name,
        message=f"Skill '{skill.name}' at {skill.path} is not listed: {reason}.",
    )


def counts(entries: Iterable[LeftOut]) -> dict[str, int]:
    """How many entries of each kind (only the kinds present), in a stable order."""
    by_kind: dict[str, int] = {}
    for item in entries:
        by_kind[item.kind] = by_kind.get(item.kind, 0) + 1
    return dict(sorted(by_kind.items()))


def catalog_version(
    catalog: Catalog,
    *,
    is_enabled: Callable[[Skill], bool],
    is_visible: Callable[[Skill], bool],
) -> str:
    """A short digest of what a listing shows of `catalog`: each skill's SKILL.md
    (path, size, mtime), its standing (shadowed, enabled, permitted) and every
    problem. Equal catalogs give equal versions, across processes too."""
    lines = [
        f"s\0{s.real_path}\0{s.path}\0{s.size}\0{s.mtime_ns}\0{s.shadowed_by}\0"
        f"{is_enabled(s):d}{is_visible(s):d}"
        for s in catalog.skills
    ]
    lines.extend(f"p\0{p.code}\0{p.path}\0{p.message}" for p in catalog.problems)
    text = "\n".join(lines).encode("utf-8", "surrogatepass")
    return hashlib.sha256(text).hexdigest()[:16]
