"""Layer 2 of rendering (design rules: rendering), pure: one skill's text for the model's context.

`render_injection` wraps a skill's body, with substitutions applied, in
`<skill_content>` and adds its base directory and a bounded listing of its files;
`render_reminder` is the short text for a skill already injected this session.
Nothing here reads the filesystem: bodies and file listings are passed in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._limits import MAX_LISTED_FILES
from .._model import Skill
from ._substitute import substitute


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
