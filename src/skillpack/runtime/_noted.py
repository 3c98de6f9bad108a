"""Paths a host works on, told to a conversation: what it opened, for the servers.

`skillpack serve`'s `session.note_paths` and `skillpack mcp`'s `skill_note_paths` tool
both note paths on a conversation (`Session.note_paths`: it opens the `paths:` skills
they match) and on the session it was opened from (which discovers the skill roots of
the folders they bring in, and hands its new catalog on), then answer with the skills
the conversation's model catalog gained.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._session import Session


def note_paths(
    conversation: Session, paths: Sequence[str], *, opened_from: Session | None = None
) -> dict[str, Any]:
    """Note `paths` on `conversation` (and on `opened_from`, its live workspace, first).

    Returns `{"opened": [{name, qualified_name, description}], "skills": n}`: the skills
    now in the conversation's model catalog that were not before, and how many it has.
    """
    before = {skill.key for skill in conversation.model_skills()}
    if opened_from is not None and opened_from is not conversation:
        opened_from.note_paths(*paths)
        if conversation.catalog is not opened_from.catalog:
            conversation.reload(opened_from.catalog)
    conversation.note_paths(*paths)
    after = conversation.model_skills()
    return {
        "opened": [
            {
                "name": skill.name,
                "qualified_name": skill.qualified_name,
                "description": skill.description,
            }
            for skill in after
            if skill.key not in before
        ],
        "skills": len(after),
    }
