"""Spec rules over parsed frontmatter fields: values in, problems out (pure).

`_frontmatter.py` splits the file, parses the YAML and types the fields, then asks
this module which spec rules the values break. Nothing here reads files or YAML.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from .._limits import MAX_DESCRIPTION_CHARS
from .._model import Problem

NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""The spec's `^[a-z0-9]+(-[a-z0-9]+)*$`; use with `fullmatch`."""
NAME_PATTERN_TEXT = "^[a-z0-9]+(-[a-z0-9]+)*$"
MAX_NAME_CHARS = 64
MAX_COMPATIBILITY_CHARS = 500
MAX_BODY_LINES = 500
MAX_BODY_TOKENS = 5000

KNOWN_FIELDS: frozenset[str] = frozenset(
    {
        # agentskills.io spec fields
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
        # extensions understood and typed (Claude Code, Codex, OpenCode)
        "disallowed-tools",
        "disable-model-invocation",
        "user-invocable",
        "argument-hint",
        "arguments",
        "context",
        "agent",
        "model",
        "when_to_use",
        "when-to-use",
        "hooks",
        "paths",
        "version",
        "dependencies",
    }
)

STRICT_PROMOTED_CODES: frozenset[str] = frozenset(
    {
        "description-from-body",
        "yaml-retried",
        "name-missing",
        "name-mismatch",
        "name-invalid",
        "name-too-long",
        "description-too-long",
        "compatibility-too-long",
        "value-coerced",
        "metadata-coerced",
        "body-too-long",
        "hooks-invalid",
    }
)
"""Spec warnings that strict mode turns into errors.

`field-unknown` stays a warning (design rules: the skill file), and `codex-yaml-invalid` stays a
warning because the Codex sidecar is optional and fail-open by design.
"""

LineOf = Callable[[str], int | None]


def estimate_tokens(chars: int) -> int:
    """Tokens for `chars` characters of text, estimated as chars / 4 rounded up."""
    return (chars + 3) // 4


def suggest_name(text: str) -> str:
    """A spec-conforming name close to `text` (lowercase, single hyphens, ≤ 64 chars).

    Returns "" when nothing usable is left (e.g. a name made only of non-ASCII letters).
    """
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:MAX_NAME_CHARS].rstrip("-")


def _no_line(_field: str) -> int | None:
    return None


def check_name(
    name: str | None, *, dir_name: str, path: str, line_of: LineOf = _no_line
) -> list[Problem]:
    """Warnings for a missing, mismatched, malformed or over-long `name`."""
    if name is None:
        hint = suggest_name(dir_name) or "my-skill"
        return [
            Problem(
                path=path,
                severity="warning",
                code="name-missing",
                field="name",
                message=(
                    f"{path} has no 'name' in its frontmatter; the directory name "
                    f"'{dir_name}' is used. Add `name: {hint}` to the frontmatter."
                ),
            )
        ]
    problems: list[Problem] = []
    line = line_of("name")
    if not NAME_PATTERN.fullmatch(name):
        hint = suggest_name(name)
        fix = (
            f"rename it to '{hint}'" if hint else "rename it using only a-z, 0-9 and single hyphens"
        )
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="name-invalid",
                field="name",
                line=line,
                message=(
                    f"name '{name}' in {path} must be lowercase letters, digits and single "
                    f"hyphens ({NAME_PATTERN_TEXT}); {fix}."
                ),
            )
        )
    if len(name) > MAX_NAME_CHARS:
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="name-too-long",
                field="name",
                line=line,
                message=(
                    f"name '{name}' in {path} is {len(name)} characters, over the "
                    f"{MAX_NAME_CHARS}-character limit; shorten it "
                    f"(e.g. '{suggest_name(name) or 'my-skill'}')."
                ),
            )
        )
    if name != dir_name:
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="name-mismatch",
                field="name",
                line=line,
                message=(
                    f"name '{name}' in {path} differs from its directory '{dir_name}'; "
                    f"{_mismatch_fix(name, dir_name)}."
                ),
            )
        )
    return problems


def is_valid_name(name: str) -> bool:
    """Whether `name` follows the spec: the pattern and at most 64 characters."""
    return len(name) <= MAX_NAME_CHARS and NAME_PATTERN.fullmatch(name) is not None


def _mismatch_fix(name: str, dir_name: str) -> str:
    """How to make name and directory agree, offering only names the spec allows."""
    fixes = []
    if is_valid_name(name):
        fixes.append(f"rename the directory to '{name}'")
    if is_valid_name(dir_name):
        fixes.append(f"set `name: {dir_name}`")
    if fixes:
        return " or ".join(fixes)
    hint = suggest_name(name) or suggest_name(dir_name) or "my-skill"
    return f"use one valid name for both, e.g. '{hint}' (directory and `name: {hint}`)"


def check_description(
    description: object, *, path: str, line_of: LineOf = _no_line
) -> list[Problem]:
    """Errors for a missing, non-text or blank `description`; a warning when too long.

    `description` is None when the key is absent, "" when it is present but empty, and
    the list or mapping itself when it is not text.
    """
    if description is None:
        return [
            Problem(
                path=path,
                severity="error",
                code="description-missing",
                field="description",
                message=(
                    f"{path} has no 'description' in its frontmatter and its body has no "
                    "first paragraph to use instead; add `description: <what the skill "
                    "does and when to use it>` (agents pick skills by it)."
                ),
            )
        ]
    if not isinstance(description, str):
        kind = "mapping" if isinstance(description, dict) else "list"
        return [
            Problem(
                path=path,
                severity="error",
                code="description-invalid",
                field="description",
                line=line_of("description"),
                message=(
                    f"description in {path} is a {kind}, not text; write it as one string "
                    "(use a block scalar `description: >` for long text)."
                ),
            )
        ]
    if not description.strip():
        return [
            Problem(
                path=path,
                severity="error",
                code="description-empty",
                field="description",
                line=line_of("description"),
                message=(
                    f"description in {path} is empty; write what the skill does and when "
                    "to use it (agents pick skills by it)."
                ),
            )
        ]
    if len(description) > MAX_DESCRIPTION_CHARS:
        return [
            Problem(
                path=path,
                severity="warning",
                code="description-too-long",
                field="description",
                line=line_of("description"),
                message=(
                    f"description in {path} is {len(description)} characters, over the "
                    f"{MAX_DESCRIPTION_CHARS}-character limit; shorten it and move the "
                    "detail into the body."
                ),
            )
        ]
    return []


_ATX_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]+|$)")
_THEMATIC_BREAK = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")


def description_from_body(body: str) -> tuple[str, int] | None:
    """The first paragraph of a Markdown body and its 0-based line in the body.

    What Claude Code uses when the frontmatter has no `description`. The paragraph is
    the first run of non-blank lines that is none of these, which are skipped: ATX
    headings (`# Title`), setext headings (a line underlined with `===`/`---`),
    thematic breaks (`---`, `***`), fenced code blocks, and HTML comments. Its lines
    are trimmed and joined with single spaces; a paragraph over the 1024-character
    limit is cut at a word boundary with "…". A body with no paragraph gives its first
    heading's text instead; a body with neither gives None.
    """
    lines = body.split("\n")
    heading: tuple[str, int] | None = None
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        fence = _FENCE.match(line)
        if fence:
            marker = fence.group(1)
            i += 1
            while i < n and not lines[i].strip().startswith(marker[0] * len(marker)):
                i += 1
            i += 1
            continue
        if stripped.startswith("<!--"):
            while i < n and "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        if not stripped or _THEMATIC_BREAK.fullmatch(line):
            i += 1
            continue
        if _ATX_HEADING.match(line):
            if heading is None:
                text = stripped.lstrip("#").strip().rstrip("#").strip()
                heading = (text, i) if text else None
            i += 1
            continue
        start = i
        paragraph: list[str] = []
        while i < n and lines[i].strip() and not _ATX_HEADING.match(lines[i]):
            if _FENCE.match(lines[i]) or (paragraph and _THEMATIC_BREAK.fullmatch(lines[i])):
                break
            if paragraph and _SETEXT_UNDERLINE.fullmatch(lines[i]):
                break
            paragraph.append(lines[i].strip())
            i += 1
        if i < n and paragraph and _SETEXT_UNDERLINE.fullmatch(lines[i]):
            if heading is None:  # the "paragraph" was a setext heading
                heading = (" ".join(paragraph), start)
            i += 1
            continue
        return _cut(" ".join(paragraph), MAX_DESCRIPTION_CHARS), start
    return heading


def _cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters at a word boundary, ending in "…"."""
    if len(text) <= limit:
        return text
    room = limit - 1
    head = text[:room]
    if text[room] != " ":
        space = head.rfind(" ")
        if space >= room // 2:
            head = head[:space]
    return head.rstrip(" ,.;:") + "…"


def description_from_body_problem(path: str, line: int | None) -> Problem:
    """The `description-from-body` warning of a skill whose description was taken
    from its body."""
    return Problem(
        path=path,
        severity="warning",
        code="description-from-body",
        field="description",
        line=line,
        message=(
            f"{path} has no 'description' in its frontmatter; the first paragraph of its "
            "body is used instead. Add `description: <what the skill does and when to "
            "use it>` (agents pick skills by it)."
        ),
    )


def check_compatibility(
    compatibility: str | None, *, path: str, line_of: LineOf = _no_line
) -> list[Problem]:
    """A warning when `compatibility` is over 500 characters."""
    if compatibility is None or len(compatibility) <= MAX_COMPATIBILITY_CHARS:
        return []
    return [
        Problem(
            path=path,
            severity="warning",
            code="compatibility-too-long",
            field="compatibility",
            line=line_of("compatibility"),
            message=(
                f"compatibility in {path} is {len(compatibility)} characters, over the "
                f"{MAX_COMPATIBILITY_CHARS}-character limit; keep it to the environment "
                "requirements and move the rest into the body."
            ),
        )
    ]


def check_body(
    body_lines: int, body_chars: int, *, path: str, line: int | None = None
) -> list[Problem]:
    """A warning when the body is over 500 lines or 5000 estimated tokens."""
    tokens = estimate_tokens(body_chars)
    if body_lines <= MAX_BODY_LINES and tokens <= MAX_BODY_TOKENS:
        return []
    return [
        Problem(
            path=path,
            severity="warning",
            code="body-too-long",
            line=line,
            message=(
                f"body of {path} is {body_lines} lines / about {tokens} tokens, over the "
                f"recommended {MAX_BODY_LINES} lines / {MAX_BODY_TOKENS} tokens; move "
                "detail into files under references/ that the body links to."
            ),
        )
    ]


def check_unknown_fields(
    keys: Iterable[str], *, path: str, line_of: LineOf = _no_line
) -> list[Problem]:
    """`field-unknown` warnings for keys that are not known skill fields (strict only)."""
    problems: list[Problem] = []
    for key in keys:
        if key in KNOWN_FIELDS:
            continue
        close = difflib.get_close_matches(key.lower().replace("_", "-"), KNOWN_FIELDS, n=1)
        hint = f"did you mean '{close[0]}'? Otherwise remove" if close else "remove"
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="field-unknown",
                field=key,
                line=line_of(key),
                message=(
                    f"field '{key}' in {path} is not a known skill field (kept in `extra`); "
                    f"{hint} it or move it under `metadata:`."
                ),
            )
        )
    return problems


def validate_fields(
    *,
    path: str,
    dir_name: str,
    name: str | None,
    description: object,
    compatibility: str | None = None,
    body_lines: int = 0,
    body_chars: int = 0,
    body_line: int | None = None,
    line_of: LineOf = _no_line,
) -> list[Problem]:
    """Every spec rule over the typed fields of one skill, in a stable order.

    Args:
        path: The SKILL.md the fields came from (used in every problem).
        dir_name: The name of the folder holding the SKILL.md.
        name: The frontmatter `name`, or None when absent.
        description: The frontmatter `description`: None when absent, "" when empty,
            the value itself when it is not text.
        compatibility: The frontmatter `compatibility`, if any.
        body_lines: Lines in the Markdown body.
        body_chars: Characters in the Markdown body.
        body_line: 1-based line of the file where the body starts.
        line_of: Maps a field name to its 1-based line in the file (None if unknown).
    """
    if (
        # The common case, decided without building any problem list.
        type(description) is str
        and 0 < len(description) <= MAX_DESCRIPTION_CHARS
        and name is not None
        and name == dir_name
        and len(name) <= MAX_NAME_CHARS
        and (compatibility is None or len(compatibility) <= MAX_COMPATIBILITY_CHARS)
        and body_lines <= MAX_BODY_LINES
        and estimate_tokens(body_chars) <= MAX_BODY_TOKENS
        and not description.isspace()
        and NAME_PATTERN.fullmatch(name)
    ):
        return []
    problems = check_description(description, path=path, line_of=line_of)
    problems += check_name(name, dir_name=dir_name, path=path, line_of=line_of)
    problems += check_compatibility(compatibility, path=path, line_of=line_of)
    problems += check_body(body_lines, body_chars, path=path, line=body_line)
    return problems


def check_when_to_use(
    description: object, when_to_use: str | None, *, path: str, line_of: LineOf = _no_line
) -> list[Problem]:
    """`when_to_use` is listed with the description (Claude Code's listing joins them),
    so the two share the description's cap: a warning past it, never a refusal."""
    if not when_to_use or type(description) is not str:
        return []
    total = len(description) + 1 + len(when_to_use)
    if total <= MAX_DESCRIPTION_CHARS or len(description) > MAX_DESCRIPTION_CHARS:
        return []
    return [
        Problem(
            path=path,
            severity="warning",
            code="when-to-use-too-long",
            field="when_to_use",
            line=line_of("when_to_use") or line_of("when-to-use"),
            message=(
                f"description and when_to_use in {path} are {total} characters together, "
                f"over the {MAX_DESCRIPTION_CHARS} a listing gives them (agents that join "
                "the two cut the end); shorten one of them."
            ),
        )
    ]


def apply_strict(problems: Sequence[Problem]) -> tuple[Problem, ...]:
    """Strict mode: every spec warning becomes an error, and so does every warning about
    a file an agent will not load as skillpack does (`Problem.agents`); `field-unknown`
    stays a warning."""
    return tuple(
        replace(p, severity="error")
        if p.severity == "warning" and (p.code in STRICT_PROMOTED_CODES or p.agents)
        else p
        for p in problems
    )
