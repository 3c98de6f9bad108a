"""A strict subset of YAML that covers most frontmatter, parsed without a YAML library.

Most SKILL.md frontmatter is a handful of `key: value` lines, with perhaps a quoted
string, a folded description, a short list or a one-level `metadata:` mapping. Parsing
that with libyaml costs more than everything else discovery does per skill, so
`load_simple` parses exactly this subset in plain Python and returns None for anything
else, which then goes to the real (safe) YAML loader.

The contract: whenever `load_simple(text)` returns a mapping, it equals what the
loader of `_yaml.load_yaml` returns (libyaml's syntax, YAML 1.2 core-schema scalars:
`yes`/`off` are text), types included, and it fills `plain` as that loader does. Anything the
subset cannot decide with certainty (escapes, comments after values, flow
collections, tabs, anchors, tags, multi-line plain scalars, blank lines inside a
block, unusual numbers, integers past `MAX_YAML_INT_CHARS` characters) makes it give
up rather than guess: it returns None, it never raises.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .._limits import MAX_YAML_INT_CHARS

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_INT = re.compile(r"0|[1-9][0-9]*")
_FLOAT = re.compile(r"[0-9]+\.[0-9]+")
_DOTTED = re.compile(r"[0-9]+(?:\.[0-9]+){2,}")
# The YAML 1.2 core schema's booleans and nulls; as keys or values they are not text.
_BOOLS: Final = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
}
_NULLS: Final = frozenset({"null", "Null", "NULL", "~", ""})
_BLOCK_HEADERS: Final = frozenset({">", ">-", "|", "|-"})


class _GiveUp(Exception):
    """The text is outside the subset; the caller uses the real YAML loader."""


def load_simple(text: str, plain: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The mapping `text` holds, when it is inside the subset; None otherwise.

    `plain`, when given, is cleared and (on success) filled with the text of each
    top-level value written as a plain scalar, by key (see `_yaml.load_yaml`).
    """
    texts: dict[str, str] = {}
    if plain is not None:
        plain.clear()
    try:
        # Empty or comment-only text is null in YAML, not an empty mapping.
        result = _mapping(text.split("\n"), texts) or None
    except _GiveUp:
        return None
    if plain is not None and result is not None:
        plain.update(texts)
    return result


def _scalar(value: str) -> Any:
    """A one-line scalar (already stripped of surrounding blanks)."""
    if not value.isprintable():
        # Tabs, control characters and YAML 1.1 line breaks (NEL, LS, PS).
        raise _GiveUp
    first = value[0]
    if first == '"':
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != '"' or '"' in inner or "\\" in inner:
            raise _GiveUp
        return inner
    if first == "'":
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != "'" or "'" in inner:
            raise _GiveUp
        return inner
    if ": " in value or " #" in value or value[-1] == ":":
        raise _GiveUp
    if "A" <= first <= "Z" or "a" <= first <= "z":
        # A letter-initial plain scalar is text unless it is a YAML 1.2 bool or null.
        if value in _BOOLS:
            return _BOOLS[value]
        if value in _NULLS:
            return None
        return value
    if "0" <= first <= "9":
        if _INT.fullmatch(value):
            if len(value) > MAX_YAML_INT_CHARS:
                raise _GiveUp  # the loader keeps it as text; int() may refuse it
            return int(value)
        if _FLOAT.fullmatch(value):
            return float(value)
        if _DOTTED.fullmatch(value):
            return value
    raise _GiveUp


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_scalar(header: str, lines: list[str], at_end: bool) -> str:
    """`>`/`>-`/`|`/`|-` with every line at one indentation and no blank lines."""
    indent = _indent(lines[0])
    parts: list[str] = []
    for line in lines:
        content = line[indent:]
        if (
            not content
            or _indent(line) != indent
            or not content.isprintable()
            or content[-1] == " "
        ):
            raise _GiveUp
        parts.append(content)
    joined = (" " if header[0] == ">" else "\n").join(parts)
    # "clip" chomping keeps the final line break, which exists unless the block
    # ends the text.
    return joined if header[-1] == "-" or at_end else joined + "\n"


def _nested(lines: list[str]) -> list[Any] | dict[str, Any]:
    """A one-level block list (`- x` lines) or mapping (`k: v` lines), same indentation."""
    indent = _indent(lines[0])
    if lines[0][indent : indent + 2] == "- ":
        items: list[Any] = []
        for line in lines:
            if _indent(line) != indent or line[indent : indent + 2] != "- ":
                raise _GiveUp
            item = line[indent + 2 :].strip(" ")
            if not item:
                raise _GiveUp
            items.append(_scalar(item))
        return items
    mapping: dict[str, Any] = {}
    for line in lines:
        if _indent(line) != indent:
            raise _GiveUp
        key, value = _key_value(line[indent:])
        if not value:
            raise _GiveUp
        mapping[key] = _scalar(value)
    return mapping


def _key_value(line: str) -> tuple[str, str]:
    key, colon, rest = line.partition(":")
    if not colon or not _KEY.fullmatch(key) or key in _BOOLS or key in _NULLS:
        raise _GiveUp
    if rest and rest[0] != " ":
        raise _GiveUp
    return key, rest.strip(" ")


def _mapping(lines: list[str], plain: dict[str, str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        i += 1
        if not line:
            continue
        if line[0] == "#":
            # A comment; control characters or a YAML 1.1 line break (NEL, LS, PS)
            # in it would make libyaml refuse or split it.
            if not line.isprintable():
                raise _GiveUp
            continue
        key, value = _key_value(line)
        block_start = i
        while i < n and lines[i][:1] == " ":
            i += 1
        block = lines[block_start:i]
        if value[:1] in (">", "|"):
            if value not in _BLOCK_HEADERS or not block:
                raise _GiveUp
            result[key] = _block_scalar(value, block, at_end=i == n)
        elif value:
            if block:
                raise _GiveUp  # a plain scalar continued on the next lines
            result[key] = _scalar(value)
            if value[0] != '"' and value[0] != "'":
                plain[key] = value
                continue
        elif block:
            result[key] = _nested(block)
        else:
            result[key] = None
            plain[key] = ""  # an empty value is an empty plain scalar
            continue
        plain.pop(key, None)
    return result
