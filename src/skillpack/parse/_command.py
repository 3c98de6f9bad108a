"""Claude Code's legacy commands (`.claude/commands/**/<name>.md`) read as skills.

A command file is Markdown with optional frontmatter (`description`, `argument-hint`,
`allowed-tools`, `model`, ...). It becomes a user-invocable skill named by the file's
stem; without a `description`, its body's first paragraph stands in, by the rule every
skill follows (`_validate.description_from_body`), which `_frontmatter.parse_skill`
applies: the file is parsed exactly as a SKILL.md, and one `legacy-command` warning
says where the skill came from and how to move it.
"""

from __future__ import annotations

import os
from dataclasses import replace

from .._model import Problem, SkillLocation
from ._frontmatter import ParsedSkill, parse_skill, parse_skill_bytes, split_frontmatter
from ._validate import apply_strict
from ._yaml import normalize

LEGACY_COMMAND = "legacy-command"
"""The problem code every loaded command carries (a warning, never promoted by strict)."""

_NOT_FOR_COMMANDS = frozenset({"name-missing", "name-mismatch", "description-from-body"})
"""Checks about a `name` field, which commands do not have (the stem is the name), and
the note that the description came from the body, which is how commands work."""


def command_name(path: str) -> str:
    """The skill name of a command file: its stem (`review-pr.md` -> `review-pr`)."""
    stem = os.path.basename(path)
    return stem[:-3] if stem.lower().endswith(".md") else stem


def parse_command_bytes(
    data: bytes,
    *,
    path: str,
    location: SkillLocation | None = None,
    strict: bool = False,
) -> ParsedSkill:
    """Parse a legacy command file into a user-invocable skill named by its stem.

    Undecodable or binary files and unclosed or invalid frontmatter get the same
    errors as a SKILL.md. Strict mode promotes the spec warnings as for a SKILL.md;
    `legacy-command` itself stays a warning.
    """
    try:
        text = data.decode("utf-8-sig") if b"\x00" not in data else None
    except UnicodeDecodeError:
        text = None
    if text is None or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return parse_skill_bytes(data, path=path, location=location, strict=strict)
    name = command_name(path)
    text = normalize(text)
    if split_frontmatter(text).frontmatter is None:
        if text.split("\n", 1)[0].rstrip(" \t") == "---":
            # An opening `---` that never closes: the SKILL.md error says how to fix it.
            return parse_skill(text, path=path, location=location, dir_name=name, strict=strict)
        text = f"---\n---\n{text}"
    parsed = parse_skill(text, path=path, location=location, dir_name=name)
    problems = [p for p in parsed.problems if p.code not in _NOT_FOR_COMMANDS]
    final = list(apply_strict(problems) if strict else problems)
    final.append(_legacy(path, name))
    if parsed.skill is None or any(p.severity == "error" for p in final):
        return ParsedSkill(skill=None, body=parsed.body, problems=tuple(final))
    skill = replace(parsed.skill, name=name)
    return ParsedSkill(skill=skill, body=parsed.body, problems=tuple(final))


def _legacy(path: str, name: str) -> Problem:
    return Problem(
        path=path,
        severity="warning",
        code=LEGACY_COMMAND,
        message=(
            f"{path} is a Claude Code command file; it is loaded as the user-invocable "
            f"skill '{name}'. To give it a folder of its own, move it to "
            f".claude/skills/{name}/SKILL.md with `name` and `description` frontmatter."
        ),
    )
