"""How a catalog is written: its three formats (XML, Markdown, JSON), escaping, and the
sizes of escaped text, measured over whole columns so that 10,000 entries cost
milliseconds (`_catalog._Fitter` sizes entries with these before writing any)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import compress, count, repeat
from json.encoder import encode_basestring
from operator import add
from typing import Literal, assert_never

from .._errors import UsageError
from .._text import single_line

CatalogFormat = Literal["xml", "markdown", "json"]
"""How the catalog is written: an XML block, a Markdown list, or a JSON object."""

_WHITESPACE_CHARS = " \t\n\r\f\v"
_WHITESPACE = tuple(_WHITESPACE_CHARS)
_LINE_BREAKS = tuple("\t\n\r\f\v")
# encode_basestring (ensure_ascii=False) escapes only quotes, backslashes and C0 controls.
_JSON_COMMON_CONTROLS = ("\t", "\n", "\r", "\f", "\v", "\b")
_JSON_CONTROLS = tuple(chr(c) for c in range(32))


def check_format(format: str) -> None:
    """A `UsageError` for a format that is not a `CatalogFormat`."""
    if format not in ("xml", "markdown", "json"):
        raise UsageError(f"Unknown catalog format {format!r}. Use one of: xml, markdown, json.")


def preamble_text(include_location: bool, *, relative: bool = False) -> str:
    """The usage note before the entries; `relative`: locations are under a base
    stated once (`head_text`)."""
    where = "at its location, under the location base" if relative else "at its location"
    how = (
        f"load it with the skill_load tool (or read the SKILL.md file {where})"
        if include_location
        else "load it with the skill_load tool"
    )
    return (
        "Skills are folders of instructions for particular kinds of work. "
        f"Before you start a task that matches a skill's description, {how} "
        "and follow its instructions. Load only the skills the task needs. "
        "If nothing listed fits, skill_search may find a skill that is not listed here."
    )


def notice_message(shown: int, total: int, named: int = 0) -> str:
    """What the truncation notice says: `named` of the `shown` entries have no
    description, `total - shown` skills are not listed; neither: descriptions were cut."""
    omitted = total - shown
    if omitted and named:
        return (
            f"{named} skills are listed by name only and {omitted} more are not listed; "
            "use skill_search to find them."
        )
    if omitted:
        return f"{omitted} more skills are not listed; use skill_search to find them."
    if named:
        return f"{named} skills are listed by name only; skill_search shows their descriptions."
    return "Descriptions were shortened to fit; skill_search shows them in full."


def deferred_message(total: int) -> str:
    """The deferred catalog's instructions: how the model finds the `total` skills."""
    return (
        f"{total} skills are available but not listed here. Before you start a task, "
        "search them with the skill_search tool (a few words about the task); when a "
        "result fits, load it with the skill_load tool and follow its instructions."
    )


def escape(fmt: CatalogFormat, text: str) -> str:
    if fmt == "xml":
        if "&" in text or "<" in text or ">" in text:
            return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return text
    if fmt == "json":
        result: str = encode_basestring(text)
        return result
    return text


def escaped_lengths(fmt: CatalogFormat, texts: list[str], *, exact: bool) -> list[int]:
    """`len(escape(fmt, t))` for every text.

    The joined column is scanned once per character that escaping changes, and only
    the texts holding one are measured one by one. Without `exact`, JSON skips the
    scan for the rarest control characters (YAML cannot even carry them); the caller
    renders again with `exact` in the unlikely case the text then overflows.
    """
    lengths = list(map(len, texts))
    if fmt == "markdown":
        return lengths
    column = "".join(texts)
    if fmt == "xml":
        for i in holding(texts, column, ("&", "<", ">")):
            t = texts[i]
            lengths[i] += 4 * t.count("&") + 3 * (t.count("<") + t.count(">"))
        return lengths
    if fmt == "json":
        lengths = list(map(add, lengths, repeat(2)))  # the quotes
        for i in holding(texts, column, ('"', "\\")):
            lengths[i] += texts[i].count('"') + texts[i].count("\\")
        controls = _JSON_CONTROLS if exact else _JSON_COMMON_CONTROLS
        for i in holding(texts, column, controls):
            lengths[i] = len(encode_basestring(texts[i]))
        return lengths
    assert_never(fmt)


def holding(texts: list[str], column: str, chars: Sequence[str]) -> set[int]:
    """Indices of the texts containing any of `chars` (`column` is all texts joined)."""
    found: set[int] = set()
    for char in chars:
        if char in column:
            found.update(compress(count(), map(str.__contains__, texts, repeat(char))))
    return found


def tidy(descriptions: list[str]) -> list[str]:
    """Descriptions on one line: line breaks and tabs split a description into pieces,
    which are trimmed, emptied ones dropped, and joined again with single spaces.

    Most descriptions are already tidy; each kind of offending character is looked for
    in the joined column first, and only the descriptions holding one are rewritten.
    """
    untidy = holding(descriptions, "".join(descriptions), _LINE_BREAKS)
    untidy.update(compress(count(), map(str.startswith, descriptions, repeat(_WHITESPACE))))
    untidy.update(compress(count(), map(str.endswith, descriptions, repeat(_WHITESPACE))))
    if not untidy:
        return descriptions
    result = list(descriptions)
    for i in untidy:
        result[i] = single_line(result[i])
    return result


def entry_text(
    fmt: CatalogFormat,
    name: str,
    description: str | None,
    location: str | None,
    scope: str | None = None,
) -> str:
    """One catalog entry from already-escaped pieces; `None` leaves a piece out.

    Only JSON entries carry the scope (name, description, path, scope).
    """
    if fmt == "xml":
        text = f"<skill>\n<name>{name}</name>\n"
        if description is not None:
            text += f"<description>{description}</description>\n"
        if location is not None:
            text += f"<location>{location}</location>\n"
        return text + "</skill>\n"
    if fmt == "markdown":
        text = f"- **{name}**"
        if description is not None:
            text += f": {description}"
        if location is not None:
            text += f" (`{location}`)"
        return text + "\n"
    if fmt == "json":
        text = '{"name": ' + name
        if description is not None:
            text += ', "description": ' + description
        if location is not None:
            text += ', "location": ' + location
        if scope is not None:
            text += ', "scope": ' + scope
        return text + "}\n"
    assert_never(fmt)


def head_text(fmt: CatalogFormat, preamble: str | None, base: str | None = None) -> str:
    """Everything before the first entry; `base` (escaped): the location prefix every
    location is relative to, stated once."""
    if fmt == "xml":
        text = (f"{preamble}\n\n" if preamble else "") + "<available_skills>\n"
        return text + (f"<location_base>{base}</location_base>\n" if base else "")
    if fmt == "markdown":
        text = f"{preamble}\n\n" if preamble else ""
        if base:
            return text + f"Available skills (locations are relative to `{base}`):\n\n"
        return text + "Available skills:\n\n"
    if fmt == "json":
        text = "{\n"
        if preamble:
            text += f'"instructions": {encode_basestring(preamble)},\n'
        if base:
            text += f'"location_base": {base},\n'
        return text + '"skills": [\n'
    assert_never(fmt)


MORE_SEPARATOR = ", "
"""Between the names of the compact list of skills shown by name only."""


def more_overhead(fmt: CatalogFormat) -> int:
    """Characters the compact list of names adds besides the names and separators."""
    return len(tail_text(fmt, 1, 1, False, more=("",))) - len(tail_text(fmt, 1, 1, False))


def tail_text(
    fmt: CatalogFormat,
    shown: int,
    total: int,
    truncated: bool,
    named: int = 0,
    more: Sequence[str] = (),
) -> str:
    """Everything after the last entry: the compact list `more` of names (escaped)
    shown without description, then the notice when `truncated`."""
    message = notice_message(shown, total, named) if truncated else ""
    names = MORE_SEPARATOR.join(more)
    if fmt == "xml":
        text = f"<more_skills>{names}</more_skills>\n" if more else ""
        if truncated:
            message = escape(fmt, message)
            text += f'<truncated shown="{shown}" total="{total}">{message}</truncated>\n'
        return text + "</available_skills>\n"
    if fmt == "markdown":
        text = f"\nMore skills, by name only: {names}\n" if more else ""
        if truncated:
            text += f"\n[truncated: {shown} of {total} shown] {message}\n"
        return text
    if fmt == "json":
        text = "]"
        if more:
            text += f',\n"more_skills": [{names}]'
        if truncated:
            notice = json.dumps(
                {"shown": shown, "total": total, "message": message}, ensure_ascii=False
            )
            text += f',\n"truncated": {notice}'
        return text + "\n}\n"
    assert_never(fmt)


def deferred_text(fmt: CatalogFormat, total: int) -> str:
    """The deferred catalog: no entry, only how to find the `total` skills."""
    message = deferred_message(total)
    if fmt == "xml":
        return (
            f'<available_skills deferred="true" total="{total}">\n{message}\n</available_skills>\n'
        )
    if fmt == "markdown":
        return f"Skills (not listed): {message}\n"
    if fmt == "json":
        data = {"instructions": message, "skills": [], "deferred": {"total": total}}
        return json.dumps(data, ensure_ascii=False) + "\n"
    assert_never(fmt)
