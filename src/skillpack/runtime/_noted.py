"""Paths a host works on, told to a conversation: what it opened, for the servers.

`skillpack serve`'s `session.note_paths` and `skillpack mcp`'s `skill_note_paths` tool
both note paths on a conversation (`Session.note_paths`: it opens the `paths:` skills
they match) and on the session it was opened from (which discovers the skill roots of
the folders they bring in, and hands its new catalog on), then answer with the skills
the conversation's model catalog gained.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._limits import MAX_PATH_CHARS

if TYPE_CHECKING:
    from ._session import Session


def note_paths(
    conversation: Session, paths: Sequence[str], *, opened_from: Session | None = None
) -> dict[str, Any]:
    """Note `paths` on `conversation` (and on `opened_from`, its live workspace, first).

    Returns `{"opened": [{name, qualified_name, description}], "skills": n}`: the skills
    now in the conversation's model catalog that were not before, and how many it has.
    """
    before = {skill.key for skill in conversation.skills.model_skills()}
    if opened_from is not None and opened_from is not conversation:
        opened_from.note_paths(*paths)
        if conversation.catalog is not opened_from.catalog:
            conversation.refresh(opened_from.catalog)
    conversation.note_paths(*paths)
    after = conversation.skills.model_skills()
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


NOTE_PATHS_TOOL = "skill_note_paths"
"""The MCP tool through which a client notes paths (`skillpack mcp`)."""

MAX_NOTED_PATHS = 256
"""Most paths one note takes (`session.note_paths`, `skill_note_paths`)."""


def note_paths_definition() -> dict[str, Any]:
    """`skill_note_paths` as an MCP tool: what every MCP client can send (a tool call)."""
    return {
        "name": NOTE_PATHS_TOOL,
        "description": (
            "Tell skillpack which files you are working on (absolute paths). Skills "
            "that apply only to some files (their `paths:` globs) join the catalog in "
            "skill_load's description once one of these files matches; the answer lists "
            "the skills that joined."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "paths": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_PATH_CHARS},
                    "minItems": 1,
                    "maxItems": MAX_NOTED_PATHS,
                    "description": "Files or folders being worked on, absolute paths.",
                }
            },
            "required": ["paths"],
            "additionalProperties": False,
        },
    }


def call_note_paths(
    conversation: Session, arguments: Mapping[str, Any] | None, *, opened_from: Session
) -> dict[str, Any]:
    """`skill_note_paths` called with `arguments`: the tools' envelope, `{ok, data}`
    with `note_paths`'s answer, or `{ok: false, error}` (INVALID_PARAM) for arguments
    that are not 1 to `MAX_NOTED_PATHS` paths."""
    from ._tools import ToolCallError, failure, ok

    paths = (arguments or {}).get("paths")
    extra = sorted(set(arguments or {}) - {"paths"})
    if (
        extra
        or not isinstance(paths, list)
        or not 1 <= len(paths) <= MAX_NOTED_PATHS
        or not all(isinstance(p, str) and 0 < len(p) <= MAX_PATH_CHARS for p in paths)
    ):
        why = f"unknown argument {extra[0]!r}" if extra else "`paths` must be"
        return failure(
            ToolCallError(
                "INVALID_PARAM",
                f"{NOTE_PATHS_TOOL}: {why}"
                + ("" if extra else f" 1 to {MAX_NOTED_PATHS} non-empty path strings")
                + '; call it as {"paths": ["/abs/path/file.py"]}.',
            )
        )
    try:
        return ok(note_paths(conversation, paths, opened_from=opened_from))
    except Exception as exc:  # noqa: BLE001 - a tool call answers an envelope, always
        return failure(exc)
