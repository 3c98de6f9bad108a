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


def preamble_text(include_location: bool) -> str:
    how = (
        "load it with the skill_load tool (or read the SKILL.md file at its location)"
        if include_location
        else "load it with the skill_load tool"
    )
    return (
        "Skills are folders of instructions for particular kinds of work. "
        f"Before you start a task that matches a skill's description, {how} "
        "and follow its instructions. Load only the skills the task needs. "
        "If nothing listed fits, skill_search may find a skill that is not listed here."
    )


def notice_message(shown: int, total: int) -> str:
    if shown == total:
        return "Descriptions were shortened to fit; skill_search shows them in full."
    return f"{total - shown} more skills are not listed; use skill_search to find them."


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

    Only JSON entries carry the scope (seed 002 §6: name, description, path, scope).
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


def head_text(fmt: CatalogFormat, preamble: str | None) -> str:
    if fmt == "xml":
        return (f"{preamble}\n\n" if preamble else "") + "<available_skills>\n"
    if fmt == "markdown":
        return (f"{preamble}\n\n" if preamble else "") + "Available skills:\n\n"
    if fmt == "json":
        text = "{\n"
        if preamble:
            text += f'"instructions": {encode_basestring(preamble)},\n'
        return text + '"skills": [\n'
    assert_never(fmt)


def tail_text(fmt: CatalogFormat, shown: int, total: int, truncated: bool) -> str:
    message = notice_message(shown, total) if truncated else ""
    if fmt == "xml":
        notice = (
            f'<truncated shown="{shown}" total="{total}">{escape(fmt, message)}</truncated>\n'
            if truncated
            else ""
        )
        return notice + "</available_skills>\n"
    if fmt == "markdown":
        return f"\n[truncated: {shown} of {total} shown] {message}\n" if truncated else ""
    if fmt == "json":
        if not truncated:
            return "]\n}\n"
        notice = json.dumps(
            {"shown": shown, "total": total, "message": message}, ensure_ascii=False
        )
        return f'],\n"truncated": {notice}\n}}\n'
    assert_never(fmt)
