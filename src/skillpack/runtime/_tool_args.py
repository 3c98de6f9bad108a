"""The tools' argument schemas, and the check of every call against them.

`SCHEMAS` is the one JSON schema per tool: `SkillTools.definitions()` publishes it
(`tool_schema`: with the skill ids the model may pass as an enum, and every optional
property nullable, so a strict converter that lists every property as required, as
the OpenAI Agents SDK's does, still lets the model leave it out), the app server's tool-like methods
publish it as their params (`rpc/_schema.py`), and `check_args` holds each call to it
before a tool runs, whichever surface it came through: a JSON object, no unknown
keys, the required strings present and not blank, every value of its declared type
and within its range, enum or length. A model chooses these values, so every string
has a `maxLength` (`_limits`; a 1 MB `args` once made a 1 GB injection, a
1 MB `path` took 33 s). Nesting is bounded before anything recurses into it: values
nested deeper than `MAX_ARG_DEPTH` are refused by an iterative check, and JSON text
(`parse_args`, the servers' frames) is cut at `MAX_FRAME_DEPTH` before a parser sees it
(`clip_nesting`), so a 1,000-deep array is a refusal, never a `RecursionError`.
A failure is a `UsageError` (envelope code `INVALID_PARAM`)
that names the field and the limit it broke. A
`null` value counts as absent, since strict providers send `null` for an optional
argument the model leaves out (`strict_schema`
and `tool_schema` write that form).

The skill-id fields (`SKILL_ID_FIELDS`) are not checked against the published enum:
an id outside it gets the resolver's answer (not found, did you mean), which helps
the model more than a schema error.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from .._errors import UsageError
from .._limits import (
    MAX_ARG_DEPTH,
    MAX_ARGS_CHARS,
    MAX_CREATED_SKILL_BYTES,
    MAX_FRAME_DEPTH,
    MAX_PATH_CHARS,
    MAX_QUERY_CHARS,
    MAX_REF_CHARS,
    SEARCH_LIMIT,
    SEARCH_MAX_LIMIT,
)
from .._model import SCOPES

_SKILL_REF = "Skill name, qualified id (`plugin:name`), or SKILL.md path."


def _string(description: str, most: int, enum: list[str] | None = None) -> dict[str, Any]:
    """A string argument of at most `most` characters (`maxLength`)."""
    schema: dict[str, Any] = {"type": "string", "description": description, "maxLength": most}
    if enum:
        schema["enum"] = enum
    return schema


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


SCHEMAS: Mapping[str, Mapping[str, Any]] = {
    "skill_search": _object(
        {
            "query": _string("What the task is about, in a few words.", MAX_QUERY_CHARS),
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": SEARCH_MAX_LIMIT,
                "description": (
                    f"How many results, 1 to {SEARCH_MAX_LIMIT} (default {SEARCH_LIMIT})."
                ),
            },
            "scope": _string("Only skills from this scope.", 16, list(SCOPES)),
        },
        ["query"],
    ),
    "skill_load": _object(
        {
            # No schema form says "one of the two" and survives strict conversion (a
            # root `anyOf` is refused there): the descriptions say it.
            "name": _string(f"{_SKILL_REF} Give this or `path`.", MAX_REF_CHARS),
            "path": _string(
                "Absolute path of the skill's SKILL.md. Give this or `name` (this wins).",
                MAX_PATH_CHARS,
            ),
            "args": _string("Arguments for the skill, as a user would type them.", MAX_ARGS_CHARS),
        },
        [],
    ),
    "use_skill": _object(
        {
            "skill": _string(_SKILL_REF, MAX_REF_CHARS),
            "args": _string("The task or arguments for the skill.", MAX_ARGS_CHARS),
        },
        ["skill"],
    ),
    "skill_read_file": _object(
        {
            "skill": _string(_SKILL_REF, MAX_REF_CHARS),
            "path": _string("File path relative to the skill folder.", MAX_PATH_CHARS),
        },
        ["skill", "path"],
    ),
    "skill_create": _object(
        {
            "name": _string(
                "Lowercase words joined by '-', e.g. 'project-conventions'.", MAX_REF_CHARS
            ),
            "description": _string(
                "What the skill does and when to use it.", MAX_CREATED_SKILL_BYTES
            ),
            # The whole SKILL.md is held to MAX_CREATED_SKILL_BYTES by the tool itself,
            # with its own message; this bound only stops a body far past it early.
            "body": _string("The Markdown instructions.", 4 * MAX_CREATED_SKILL_BYTES),
            "scope": _string(
                "Where to save it: 'user' (all projects) or 'project'.", 16, ["user", "project"]
            ),
            "digest": _string("Digest of the version being replaced (from skill_load).", 128),
            "frontmatter": {
                "type": "object",
                "description": 'Optional extra fields, e.g. {"user-invocable": false}.',
            },
        },
        ["name", "description", "body"],
    ),
}
"""Each tool's arguments as a JSON schema (without the skill-id enum)."""

SKILL_ID_FIELDS: Mapping[str, str] = {
    "skill_load": "name",
    "use_skill": "skill",
    "skill_read_file": "skill",
}
"""The field of each tool that names a skill (published with an enum of ids)."""

_JSON_TYPES: Mapping[str, str] = {"string": "a string", "integer": "an integer"}


def tool_schema(
    tool: str,
    *,
    skill_ids: list[str] | None = None,
    search_limits: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """A copy of `tool`'s schema as published: optional properties nullable (`null`
    in their type and enum); `skill_ids` become the enum of its skill-id field;
    `search_limits` (most, default) narrow `skill_search`'s `limit` to the config's
    `[search]` (the tool enforces that maximum itself)."""
    schema = copy.deepcopy(dict(SCHEMAS[tool]))
    field = SKILL_ID_FIELDS.get(tool)
    if field is not None and skill_ids:
        schema["properties"][field]["enum"] = list(skill_ids)
    for name, prop in schema["properties"].items():
        if name not in schema["required"]:
            _nullable(prop)
    if tool == "skill_search" and search_limits is not None:
        most, default = search_limits
        limit = schema["properties"]["limit"]
        limit["maximum"] = most
        limit["description"] = f"How many results, 1 to {most} (default {default})."
    return schema


def _nullable(prop: dict[str, Any]) -> None:
    """`prop` may also be `null` (an absent value): `null` joins its type and enum.
    Idempotent, so a schema already published in this form passes through."""
    kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
    if "null" not in kinds:
        prop["type"] = [*kinds, "null"]
    if "enum" in prop and None not in prop["enum"]:
        prop["enum"] = [*prop["enum"], None]


def _kind_of(prop: Mapping[str, Any]) -> str:
    """A property's JSON type, `null` aside (a published optional one is nullable)."""
    kind = prop["type"]
    if isinstance(kind, list):
        (kind,) = [k for k in kind if k != "null"]
    return str(kind)


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` in the form OpenAI's strict function calling accepts.

    Every property is listed in `required`; an optional one may be `null` instead
    (its type becomes `[type, "null"]` and a `null` joins its enum), and the numeric
    bounds strict mode rejects are dropped (the description states them, and
    `check_args` still enforces them). A free-form object (`skill_create`'s
    `frontmatter`) becomes a string holding its JSON, which `check_args` accepts.
    """
    required = set(schema.get("required", ()))
    properties: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        prop = {k: v for k, v in prop.items() if k not in ("minimum", "maximum", "maxLength")}
        if _kind_of(prop) == "object" and "properties" not in prop:
            # Strict mode has no free-form object: it travels as JSON text.
            prop = {
                "type": "string",
                "description": f"{prop['description']} Written as JSON text.",
            }
        if name not in required:
            _nullable(prop)
        properties[name] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_BYTE_TOKENS = re.compile(_TOKENS.pattern.encode("ascii"), re.DOTALL)
Text = TypeVar("Text", str, bytes)


def clip_nesting(text: Text, keep: int = MAX_FRAME_DEPTH) -> Text:
    """JSON `text` with every array or object opened deeper than `keep` levels replaced
    by `[]`; text nested no deeper comes back as is. Iterative, so no parser ever
    recurses past `keep + 1` levels, and what was cut is still deeper than `keep`:
    a check of the parsed value (`check_args`) refuses it, naming its field.
    Strings are skipped whole, so brackets inside them do not count; text that is not
    JSON stays not JSON."""
    is_bytes = isinstance(text, bytes)
    tokens: Any = _BYTE_TOKENS if is_bytes else _TOKENS
    quote, opening = (34, b"[{") if is_bytes else ('"', "[{")
    kept: list[Any] = []
    depth = start = 0
    cut = -1
    for match in tokens.finditer(text):
        token = match.group()
        if token[0] == quote:
            continue
        if token in opening:
            depth += 1
            if depth == keep + 1:
                cut = match.start()
        else:
            if depth == keep + 1:
                kept.append(text[start:cut])
                start = match.end()
                cut = -1
            depth -= 1
    if not kept and cut < 0:
        return text
    kept.append(text[start:cut] if cut >= 0 else text[start:])
    empty: Any = b"[]" if is_bytes else "[]"
    return empty.join(kept)  # type: ignore[no-any-return]


def clip_request(data: Text) -> Text:
    """A JSON-RPC request nested deeper than `MAX_FRAME_DEPTH`, cut (`clip_nesting`) so
    a parser reads it and the method's own checks refuse its deep arguments, with the
    request's id; anything else (nested no deeper, or not a request once cut) comes back
    as is, for the protocol's parse error to answer."""
    clipped = clip_nesting(data)
    if clipped is data:
        return data
    try:
        message = json.loads(clipped)
    except ValueError:
        return data
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        return clipped
    return data


def _deepest_key(arguments: Mapping[str, Any], limit: int) -> str | None:
    """The first key of `arguments` whose value nests arrays or objects past `limit`
    levels (the arguments themselves being the first), found without recursion."""
    for key, value in arguments.items():
        stack: list[tuple[Any, int]] = [(value, 2)]
        while stack:
            item, depth = stack.pop()
            if isinstance(item, Mapping):
                children: Any = item.values()
            elif isinstance(item, list | tuple):
                children = item
            else:
                continue
            if depth > limit:
                return key
            stack.extend((child, depth + 1) for child in children)
    return None


def parse_args(tool: str, text: str) -> Any:
    """The JSON text of a call's arguments (as a framework hands it over), parsed with
    its nesting cut at `MAX_FRAME_DEPTH` (`clip_nesting`); blank text is `{}`. The
    result goes to `check_args`.

    Raises:
        UsageError: the text is not JSON.
    """
    if not text.strip():
        return {}
    try:
        return json.loads(clip_nesting(text))
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"The arguments of {tool} are not JSON: {exc}.") from exc


def check_args(tool: str, arguments: object) -> dict[str, Any]:
    """`arguments` held to `tool`'s schema; the given values, `null`s left out.

    Raises:
        UsageError: not an object, a value nested deeper than `MAX_ARG_DEPTH`, an
            unknown key, a required field missing or blank, a value of the wrong
            type, out of range, or not in its enum (skill-id fields excepted, see
            the module docstring).
    """
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise UsageError(f"The arguments of {tool} must be a JSON object, got {_kind(arguments)}.")
    deep = _deepest_key(arguments, MAX_ARG_DEPTH)
    if deep is not None:
        raise UsageError(
            f"`{_short(str(deep))}` of {tool} nests arrays or objects more than "
            f"{MAX_ARG_DEPTH} levels deep; send the plain value its schema asks for."
        )
    schema = SCHEMAS[tool]
    properties: Mapping[str, Any] = schema["properties"]
    unknown = [key for key in arguments if key not in properties]
    if unknown:
        names = ", ".join(f"`{_short(str(key))}`" for key in unknown[:5])
        raise UsageError(
            f"{tool} has no argument {names}; its arguments are "
            f"{', '.join(f'`{p}`' for p in properties)}."
        )
    checked: dict[str, Any] = {}
    for name, prop in properties.items():
        value = arguments.get(name)
        if value is None:
            if name in schema["required"]:
                raise UsageError(f"`{name}` is required by {tool}; give it as a non-empty string.")
            continue
        checked[name] = _checked(tool, name, prop, value)
    return checked


def _checked(tool: str, name: str, prop: Mapping[str, Any], value: object) -> Any:
    kind = prop["type"]
    if kind == "object":
        if isinstance(value, str):  # the strict form: the object as JSON text
            try:
                value = parse_args(tool, value)
            except UsageError:
                value = None
        if not isinstance(value, Mapping):
            raise UsageError(f"`{name}` of {tool} must be a JSON object.")
        if _deepest_key(value, MAX_ARG_DEPTH - 1) is not None:
            raise UsageError(
                f"`{name}` of {tool} nests arrays or objects more than {MAX_ARG_DEPTH} "
                "levels deep; send the plain value its schema asks for."
            )
        return value
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON has one number type: 3.0 is the integer 3
        if isinstance(value, bool) or not isinstance(value, int):
            raise UsageError(f"`{name}` of {tool} must be an integer, got {_kind(value)}.")
        low, high = prop.get("minimum"), prop.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            # A huge int does not print (Python refuses 4,300+ digits).
            got = value if value.bit_length() <= 64 else "a larger number"
            raise UsageError(f"`{name}` of {tool} must be from {low} to {high}, got {got}.")
        return value
    if not isinstance(value, str):
        raise UsageError(f"`{name}` of {tool} must be {_JSON_TYPES[kind]}, got {_kind(value)}.")
    most = prop.get("maxLength")
    if most is not None and len(value) > most:
        raise UsageError(
            f"`{name}` of {tool} is {len(value)} characters, over the limit of {most}; "
            "send a shorter value."
        )
    if name in SCHEMAS[tool]["required"] and not value.strip():
        raise UsageError(f"`{name}` is required by {tool}; give it as a non-empty string.")
    enum = prop.get("enum")
    if enum is not None and SKILL_ID_FIELDS.get(tool) != name and value not in enum:
        quoted = [f"'{option}'" for option in enum]
        options = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
        raise UsageError(f"`{name}` of {tool} must be {options}; got {_short(value)!r}.")
    return value


def _short(text: str, limit: int = 64) -> str:
    """`text` cut for a message: an argument can be as long as a caller likes."""
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__
