"""Split a SKILL.md into frontmatter and body, parse the YAML safely, type the fields.

Pure: text in, `ParsedSkill` (a `Skill` or None, the body, the problems) out; the spec
rules themselves live in `_validate.py`. Discovery reads the bytes and calls
`parse_skill_bytes` once per SKILL.md, so this is the hot path of a cold discovery:
the split uses plain string searches (never a regex over the body), YAML goes through
libyaml's `CSafeLoader`, and work that only matters for problems (line numbers,
suggestions) happens only when there is a problem.
"""

from __future__ import annotations

import base64
import datetime as _dt
import functools
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from ._fastyaml import load_simple
from ._model import CodexMetadata, Problem, Scope, Skill
from ._validate import apply_strict, check_unknown_fields, validate_fields


@functools.cache
def _yaml_loader() -> Any:
    """libyaml's safe loader when present (the performance floor is measured with it).

    Safe semantics either way: no python/* tags, no object construction. One change:
    a value shaped like a date that is not a real date (`2024-13-45`) stays text
    instead of failing the whole frontmatter, as YAML 1.2 parsers read it. Built on
    first use: plain frontmatter never needs PyYAML, so it is not imported for it.
    """
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc]
        pass

    def construct_timestamp(loader: Any, node: Any) -> Any:
        try:
            return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
        except ValueError:
            return loader.construct_scalar(node)

    Loader.add_constructor("tag:yaml.org,2002:timestamp", construct_timestamp)
    return Loader


@functools.cache
def _yaml_errors() -> tuple[type[BaseException], ...]:
    import yaml

    return (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError)


MAX_FRONTMATTER_CHARS: Final = 256 * 1024
"""Frontmatter longer than this is refused (`frontmatter-too-large`) before parsing."""
MAX_EXPANDED_CHARS: Final = 1024 * 1024
"""Budget for the frontmatter once YAML aliases are expanded (roughly its JSON size)."""
MAX_NESTING: Final = 64
"""Deepest nesting of lists/mappings accepted in frontmatter (also stops alias cycles)."""

_FRONTMATTER_FIRST_LINE: Final = 2
"""File line of the first frontmatter line (line 1 is the opening `---`)."""

# Characters that start a YAML node: a value beginning with one is not a plain scalar,
# so quoting it as a block scalar would change its meaning.
_YAML_INDICATORS: Final = frozenset("\"'|>[{&*!#%@`")
_RETRY_LINE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:[ \t]+(.*?)[ \t]*")
_LIST_SEPARATORS = re.compile(r"[\s,]+")
_TRUE: Final = frozenset({"true", "yes", "on"})
_FALSE: Final = frozenset({"false", "no", "off"})


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedSkill:
    """The result of parsing one SKILL.md."""

    skill: Skill | None
    """The skill; None when any problem has severity `error` (in strict mode too)."""
    body: str
    """The Markdown after the closing `---` (LF line endings, no BOM); the whole text
    when the file has no complete frontmatter; "" for undecodable bytes."""
    problems: tuple[Problem, ...]


class FrontmatterSplit(NamedTuple):
    """`split_frontmatter`'s result; unpacks as `(frontmatter, body, body_line)`."""

    frontmatter: str | None
    """The text between the `---` lines, or None when there is no complete frontmatter."""
    body: str
    """What follows the closing `---` line (the whole text when there is no frontmatter)."""
    body_line: int
    """1-based line of the file where `body` starts."""


# ---------------------------------------------------------------------------- split

_OK, _MISSING, _UNCLOSED = 0, 1, 2


def _normalize(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    # A CRLF file shows it on its first line; checking there spares a scan of the
    # whole body. A stray CR elsewhere is tolerated by `_split` and by YAML.
    nl = text.find("\n")
    if nl > 0 and text[nl - 1] == "\r":
        text = text.replace("\r\n", "\n")
    return text


def _split(text: str) -> tuple[int, str, str, int]:
    """(status, frontmatter, body, body_line) of normalized text."""
    nl = text.find("\n")
    first = text if nl < 0 else text[:nl]
    if first.rstrip(" \t\r") != "---":
        return _MISSING, "", text, 1
    if nl < 0:
        return _UNCLOSED, "", text, 1
    # Only a line that is exactly `---` (plus trailing blanks) closes: `a---b`,
    # `----` and indented `---` inside block scalars do not.
    i = text.find("\n---", nl)
    while i >= 0:
        start = i + 4
        end = text.find("\n", start)
        tail = text[start:] if end < 0 else text[start:end]
        if not tail or not tail.strip(" \t\r"):
            frontmatter = text[nl + 1 : i] if i > nl else ""
            body = "" if end < 0 else text[end + 1 :]
            return _OK, frontmatter, body, text.count("\n", 0, i + 1) + 2
        if end < 0:
            break
        i = text.find("\n---", end)
    return _UNCLOSED, "", text, 1


def split_frontmatter(text: str) -> FrontmatterSplit:
    """Split SKILL.md text into (frontmatter, body, body_line).

    The first line must be `---` (a BOM, trailing blanks and CRLF are tolerated); the
    frontmatter ends at the next line that is exactly `---`. Without a complete
    frontmatter, `frontmatter` is None and the whole text is the body.
    """
    status, frontmatter, body, body_line = _split(_normalize(text))
    return FrontmatterSplit(frontmatter if status == _OK else None, body, body_line)


# ---------------------------------------------------------------------------- YAML


def _load_yaml(source: str) -> Any:
    # Most frontmatter is inside the subset `load_simple` reads (same result, a
    # fraction of the cost); everything else goes to the safe YAML loader.
    data = load_simple(source)
    if data is not None:
        return data
    import yaml

    return yaml.load(source, Loader=_yaml_loader())


def _quote_colon_values(source: str) -> tuple[str, list[str]]:
    """Rewrite top-level `key: a: b` values as block scalars; return the fields changed.

    Agents write `description: Use when: x` unquoted; YAML refuses the second `: `.
    A plain value's continuation lines (indented) are folded into it, as YAML would,
    and a `: ` on one of them counts too.
    """
    lines = source.split("\n")
    out: list[str] = []
    fields: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        i += 1
        match = _RETRY_LINE.fullmatch(line)
        if match is None:
            out.append(line)
            continue
        key, value = match.groups()
        if not value or value[0] in _YAML_INDICATORS:
            out.append(line)
            continue
        parts = [value]
        end = i
        while end < n and lines[end][:1] in (" ", "\t") and lines[end].strip():
            parts.append(lines[end].strip())
            end += 1
        joined = " ".join(parts)
        if not (": " in joined or ":\t" in joined or joined.endswith(":")):
            out.append(line)
            continue
        out.append(f"{key}: |-")
        out.append("  " + joined)
        fields.append(key)
        i = end
    return "\n".join(out), fields


def _yaml_error_text(exc: BaseException, first_line: int) -> tuple[str, int | None]:
    """(where + what, file line) of a YAML failure."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None)
    if isinstance(exc, RecursionError):
        problem = "nesting is too deep"
    if not problem:
        problem = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if mark is None:
        return f": {problem}", None
    line = first_line + int(mark.line)
    return f" at line {line}, column {int(mark.column) + 1}: {problem}", line


def _yaml_fix(problem: str, source: str) -> str:
    if "\t" in source and ("token" in problem or "tab" in problem):
        return "Indent with spaces: YAML does not allow tabs for indentation."
    if "constructor for the tag" in problem:
        return (
            "Remove the tag: frontmatter is plain YAML, and tags such as !!python/object "
            "or custom !tags are refused."
        )
    if "must be in" in problem or "day is out of range" in problem:
        return 'Quote values that look like dates but are not (e.g. "2024-13-01").'
    return (
        "Quote values that contain ': ' or start with a YAML indicator "
        '([ { & * ! | > @ `), e.g. description: "Use when: ...".'
    )


# -------------------------------------------------------------- JSON-safe values


class _TooLarge(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Budget:
    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left


def _scalar_text(value: Any) -> str:
    """How a YAML scalar reads as text (`true`, `1.5`, `2024-01-31`, `null`)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def _json_safe(value: Any, budget: _Budget, depth: int) -> Any:
    """A copy of a YAML value made of dict/list/str/int/float/bool/None only.

    Dates, bytes, sets and non-finite floats become text; mapping keys become text.
    Every node costs budget, so alias bombs (`&a [*a, *a]` nested) and alias cycles
    raise `_TooLarge` instead of exhausting memory or producing huge JSON.
    """
    kind = type(value)
    if kind is str:
        budget.left -= len(value) + 1
        if budget.left < 0:
            raise _TooLarge("aliases")
        return value
    if kind is dict or kind is list or kind is tuple or kind is set:
        if depth >= MAX_NESTING:
            raise _TooLarge("nesting")
        budget.left -= len(value) + 1
        if budget.left < 0:
            raise _TooLarge("aliases")
        if kind is dict:
            return {
                (k if type(k) is str else _scalar_text(k)): _json_safe(v, budget, depth + 1)
                for k, v in value.items()
            }
        if kind is set:
            return sorted(_scalar_text(k) if type(k) is not str else k for k in value)
        return [_json_safe(v, budget, depth + 1) for v in value]
    budget.left -= 1
    if value is None or kind is bool or kind is int:
        return value
    if kind is float and math.isfinite(value):
        return value
    return _scalar_text(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, _dt.date):
        return "date"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, (list, tuple, set)):
        return "list"
    return type(value).__name__


# ---------------------------------------------------------------------------- fields


class _Reader:
    """Per-file state while typing fields: where problems go and how to find lines."""

    __slots__ = ("path", "source", "problems")

    def __init__(self, path: str, source: str, problems: list[Problem]) -> None:
        self.path = path
        self.source = source
        self.problems = problems

    def line_of(self, key: str) -> int | None:
        """File line of a top-level `key:` (only computed when a problem needs it)."""
        source = self.source
        if source.startswith(key + ":"):
            return _FRONTMATTER_FIRST_LINE
        at = source.find("\n" + key + ":")
        if at < 0:
            return None
        return _FRONTMATTER_FIRST_LINE + source.count("\n", 0, at) + 1

    def coerced(self, key: str, message: str) -> None:
        self.problems.append(
            Problem(
                path=self.path,
                severity="warning",
                code="value-coerced",
                field=key,
                line=self.line_of(key),
                message=message,
            )
        )

    def text(self, raw: Any, key: str) -> str | None:
        """A text field: strings as written, scalars read as text (reported)."""
        if type(raw) is str:
            return raw
        if raw is None:
            return None
        if isinstance(raw, (Mapping, list, tuple, set)):
            self.coerced(
                key,
                f"{key} in {self.path} is a {_kind(raw)}, not text; it is ignored. "
                f'Write it as one string ({key}: "...").',
            )
            return None
        text = _scalar_text(raw)
        self.coerced(
            key,
            f"{key} in {self.path} is a {_kind(raw)}, read as the text '{text}'; "
            f'quote it ({key}: "{text}") to keep the exact text.',
        )
        return text

    def boolean(self, raw: Any, key: str, default: bool) -> bool:
        """true/false; yes/no/on/off and quoted spellings accepted (quoted ones reported)."""
        if raw is True or raw is False:
            return raw
        if raw is None:
            return default
        if isinstance(raw, str):
            word = raw.strip().lower()
            if word in _TRUE or word in _FALSE:
                value = word in _TRUE
                self.coerced(
                    key,
                    f"{key} in {self.path} is the text '{raw}', read as "
                    f"{_scalar_text(value)}; write `{key}: {_scalar_text(value)}` "
                    "without quotes.",
                )
                return value
        self.coerced(
            key,
            f"{key} in {self.path} must be true or false, not {raw!r}; the default "
            f"({_scalar_text(default)}) is used. Write `{key}: true` or `{key}: false`.",
        )
        return default

    def names(self, raw: Any, key: str) -> tuple[str, ...] | None:
        """A list field: a YAML list, or one string separated by spaces/commas."""
        if raw is None:
            return None
        if type(raw) is str:
            return split_list(raw)
        if isinstance(raw, list):
            items: list[str] = []
            for item in raw:
                if type(item) is str:
                    items.append(item)
                elif isinstance(item, Mapping) and type(item.get("name")) is str:
                    # `arguments: [{name: x, description: ...}]` style
                    items.append(item["name"])
                elif item is None or isinstance(item, (Mapping, list, tuple, set)):
                    self.coerced(
                        key,
                        f"{key} in {self.path} has a {_kind(item)} entry; it is ignored. "
                        f"Each entry of {key} must be a string.",
                    )
                else:
                    items.append(_scalar_text(item))
                    self.coerced(
                        key,
                        f"{key} in {self.path} has the {_kind(item)} entry "
                        f"{_scalar_text(item)}, read as text; quote it.",
                    )
            return tuple(items)
        if isinstance(raw, Mapping):
            self.coerced(
                key,
                f"{key} in {self.path} is a mapping; it is ignored. Write a list "
                f"({key}: [a, b]) or a space-separated string.",
            )
            return None
        text = _scalar_text(raw)
        self.coerced(key, f"{key} in {self.path} is a {_kind(raw)}, read as '{text}'; quote it.")
        return (text,)


def split_list(text: str) -> tuple[str, ...]:
    """Split `Read, Bash(git add:*) Grep` on blanks/commas outside brackets.

    Claude Code writes tool patterns with spaces inside parentheses
    (`Bash(npx shadcn@latest *)`), and globs use braces (`src/{a,b}/**`).
    """
    if "(" not in text and "[" not in text and "{" not in text:
        return tuple(part for part in _LIST_SEPARATORS.split(text) if part)
    parts: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and (char == "," or char.isspace()):
            if index > start:
                parts.append(text[start:index])
            start = index + 1
    if start < len(text):
        parts.append(text[start:])
    return tuple(parts)


_Handler = Callable[[_Reader, Any, Any, str, dict[str, Any]], None]


def _text_field(attribute: str) -> _Handler:
    def handle(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
        out[attribute] = reader.text(raw, key)

    return handle


def _list_field(attribute: str) -> _Handler:
    def handle(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
        out[attribute] = reader.names(raw, key)

    return handle


def _bool_field(attribute: str, default: bool) -> _Handler:
    def handle(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
        out[attribute] = reader.boolean(raw, key, default)

    return handle


def _name(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    # An empty `name:` counts as missing: the directory name is used.
    out["name"] = reader.text(raw, key) or None


def _description(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    if isinstance(raw, (Mapping, list, tuple, set)):
        # Kept as is: `check_description` reports it as `description-invalid`.
        out["description"] = value
        return
    # Block scalars (`>` and `|`) end with a newline; surrounding blanks are noise
    # in a catalog, so they are stripped.
    out["description"] = (reader.text(raw, key) or "").strip()


def _argument_hint(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    if isinstance(raw, list) and all(type(item) is str for item in raw):
        # `argument-hint: [issue-number]` unquoted is a YAML list; the author meant text.
        text = " ".join(f"[{item}]" for item in raw)
        reader.coerced(
            key,
            f"argument-hint in {reader.path} is a YAML list, read as '{text}'; quote it "
            f'(argument-hint: "{text}").',
        )
        out["argument_hint"] = text
        return
    out["argument_hint"] = reader.text(raw, key)


def _when_to_use_alias(
    reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]
) -> None:
    # `when_to_use` (Claude Code's spelling) wins over `when-to-use` in either order.
    if "when_to_use" not in out:
        out["when_to_use"] = reader.text(raw, key)


def _when_to_use(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    out["when_to_use"] = reader.text(raw, key)


def _context(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    if raw == "inline" or raw == "fork" or raw is None:
        out["context"] = raw or "inline"
        return
    word = raw.strip().lower() if isinstance(raw, str) else None
    out["context"] = word if word in ("inline", "fork") else "inline"
    reader.coerced(
        key,
        f"context in {reader.path} must be 'inline' or 'fork', not {raw!r}; "
        f"'{out['context']}' is used. Write `context: fork` or remove the field.",
    )


def _metadata(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    if raw is None:
        out["metadata"] = {}
        return
    if not isinstance(raw, Mapping):
        reader.coerced(
            key,
            f"metadata in {reader.path} is a {_kind(raw)}, not a mapping; it is ignored. "
            "Write `metadata:` followed by indented `key: value` lines.",
        )
        out["metadata"] = {}
        return
    out["metadata"] = value
    odd = [(k, v) for k, v in raw.items() if type(v) is not str or type(k) is not str]
    if odd:
        listed = ", ".join(f"{_scalar_text(k)} ({_kind(v)})" for k, v in odd)
        reader.problems.append(
            Problem(
                path=reader.path,
                severity="warning",
                code="metadata-coerced",
                field=key,
                line=reader.line_of(key),
                message=(
                    f"metadata in {reader.path} has values that are not text: {listed}; "
                    "they are kept, with dates and keys stringified for JSON. Quote them "
                    "to make them text."
                ),
            )
        )


def _hooks(reader: _Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    if raw is None or isinstance(raw, Mapping):
        out["hooks"] = value
        return
    reader.coerced(
        key,
        f"hooks in {reader.path} is a {_kind(raw)}, not a mapping of events; it is ignored. "
        "Write `hooks:` followed by event names (e.g. `Stop:`).",
    )
    out["hooks"] = None


_FIELD_HANDLERS: dict[str, _Handler] = {
    "name": _name,
    "description": _description,
    "license": _text_field("license"),
    "compatibility": _text_field("compatibility"),
    "metadata": _metadata,
    "allowed-tools": _list_field("allowed_tools"),
    "disallowed-tools": _list_field("disallowed_tools"),
    "disable-model-invocation": _bool_field("disable_model_invocation", False),
    "user-invocable": _bool_field("user_invocable", True),
    "argument-hint": _argument_hint,
    "arguments": _list_field("arguments"),
    "context": _context,
    "agent": _text_field("agent"),
    "model": _text_field("model"),
    "when_to_use": _when_to_use,
    "when-to-use": _when_to_use_alias,
    "hooks": _hooks,
    "paths": _list_field("paths"),
    "version": _text_field("version"),
}

# Skill fields that must be tuples, not None, when the frontmatter gives null.
_EMPTY_TUPLE_FIELDS: Final = ("arguments", "paths")


# ---------------------------------------------------------------------------- parse


def _error(path: str, code: str, message: str, *, line: int | None = None) -> Problem:
    return Problem(path=path, severity="error", code=code, message=message, line=line)


def parse_skill(
    text: str,
    *,
    path: str,
    dir_name: str | None = None,
    strict: bool = False,
    scope: Scope = "extra",
    rank: int = 0,
    root: str = "",
    plugin: str | None = None,
    real_path: str = "",
    mtime_ns: int = 0,
    size: int = 0,
    codex_yaml: str | None = None,
    codex_path: str | None = None,
) -> ParsedSkill:
    """Parse the text of one SKILL.md into a `Skill` plus problems.

    Args:
        text: The file's text (a BOM and CRLF line endings are tolerated).
        path: Path of the SKILL.md (`Skill.path`; its parent is `Skill.dir`).
        dir_name: Directory name the `name` is checked against; defaults to the
            name of the folder holding `path`.
        strict: Turn spec warnings into errors and report unknown fields.
        scope, rank, root, plugin, real_path, mtime_ns, size: Copied into the Skill.
        codex_yaml: Text of `agents/openai.yaml` beside the skill, if there is one.
        codex_path: Path of that file, for its problems.

    Returns:
        A `ParsedSkill`; its `skill` is None exactly when a problem is an error.
    """
    skill_dir = os.path.dirname(path)
    if dir_name is None:
        dir_name = os.path.basename(skill_dir)
    text = _normalize(text)
    status, source, body, body_line = _split(text)
    if status == _MISSING:
        return _failed(
            body,
            _error(
                path,
                "frontmatter-missing",
                f"{path} does not start with a `---` line, so it has no YAML frontmatter; "
                f"add `---`, `name: {dir_name}`, `description: ...` and a closing `---` "
                "at the top of the file.",
                line=1,
            ),
        )
    if status == _UNCLOSED:
        return _failed(
            body,
            _error(
                path,
                "frontmatter-unclosed",
                f"the frontmatter of {path} opened by `---` on line 1 is never closed; add "
                "a line containing only `---` after the last field.",
                line=1,
            ),
        )
    if len(source) > MAX_FRONTMATTER_CHARS:
        return _failed(
            body,
            _error(
                path,
                "frontmatter-too-large",
                f"the frontmatter of {path} is {len(source)} characters, over the "
                f"{MAX_FRONTMATTER_CHARS}-character limit; move long text into the body "
                "or into files the body links to.",
                line=_FRONTMATTER_FIRST_LINE,
            ),
        )

    problems: list[Problem] = []
    try:
        data = _load_yaml(source)
    except _yaml_errors() as exc:
        rewritten, retried = _quote_colon_values(source)
        data = None
        if retried:
            try:
                data = _load_yaml(rewritten)
            except _yaml_errors():
                retried = []
        if not retried:
            where, line = _yaml_error_text(exc, _FRONTMATTER_FIRST_LINE)
            fix = _yaml_fix(where, source)
            return _failed(
                body,
                _error(
                    path,
                    "yaml-invalid",
                    f"the frontmatter of {path} is not valid YAML{where}. {fix}",
                    line=line,
                ),
            )
        fields_text = ", ".join(f"'{key}'" for key in retried)
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="yaml-retried",
                field=retried[0],
                line=_Reader(path, source, problems).line_of(retried[0]),
                message=(
                    f"the frontmatter of {path} is not valid YAML as written: the value of "
                    f"{fields_text} contains ': '. It was read as a block scalar; quote the "
                    f'value (e.g. {retried[0]}: "...") so every YAML parser reads it.'
                ),
            )
        )

    if data is None:
        # `---\n---`: an empty mapping, which then lacks a description.
        data = {}
    if not isinstance(data, dict):
        return _failed(
            body,
            _error(
                path,
                "frontmatter-not-mapping",
                f"the frontmatter of {path} is a {_kind(data)}, not a mapping of fields; "
                "write it as `key: value` lines (name: ..., description: ...).",
                line=_FRONTMATTER_FIRST_LINE,
            ),
        )

    reader = _Reader(path, source, problems)
    fields: dict[str, Any] = {}
    frontmatter: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    budget = _Budget(MAX_EXPANDED_CHARS)
    try:
        for raw_key, raw in data.items():
            key = raw_key if type(raw_key) is str else _scalar_text(raw_key)
            if type(raw) is str:
                budget.left -= len(raw)
                value: Any = raw
            else:
                value = _json_safe(raw, budget, 1)
            frontmatter[key] = value
            handler = _FIELD_HANDLERS.get(key)
            if handler is None:
                extra[key] = value
            else:
                handler(reader, raw, value, key, fields)
        if budget.left < 0:
            raise _TooLarge("aliases")
    except _TooLarge as exc:
        reason = (
            f"nests more than {MAX_NESTING} levels deep or refers to itself through an "
            "alias; flatten it"
            if exc.reason == "nesting"
            else f"expands to more than {MAX_EXPANDED_CHARS} characters through YAML "
            "aliases (*name); write the values out instead of aliasing them"
        )
        return _failed(
            body,
            _error(
                path,
                "frontmatter-too-large",
                f"the frontmatter of {path} {reason}.",
                line=_FRONTMATTER_FIRST_LINE,
            ),
        )

    name: str | None = fields.pop("name", None)
    description: object = fields.pop("description", None)
    body_chars = len(body)
    body_lines = body.count("\n") + (1 if body and body[-1] != "\n" else 0)
    problems += validate_fields(
        path=path,
        dir_name=dir_name,
        name=name,
        description=description,
        compatibility=fields.get("compatibility"),
        body_lines=body_lines,
        body_chars=body_chars,
        body_line=body_line,
        line_of=reader.line_of,
    )
    if strict and extra:
        problems += check_unknown_fields(extra, path=path, line_of=reader.line_of)

    codex: CodexMetadata | None = None
    if codex_yaml is not None:
        codex, codex_problems = parse_codex_metadata(
            codex_yaml, path=codex_path or os.path.join(skill_dir, "agents", "openai.yaml")
        )
        problems += codex_problems

    final = apply_strict(problems) if strict else tuple(problems)
    if any(p.severity == "error" for p in final):
        return ParsedSkill(skill=None, body=body, problems=final)
    for attribute in _EMPTY_TUPLE_FIELDS:
        if attribute in fields and fields[attribute] is None:
            fields[attribute] = ()
    if fields.get("metadata") is None:
        fields.pop("metadata", None)
    skill = Skill(
        name=name or dir_name,
        description=description if isinstance(description, str) else "",
        path=path,
        dir=skill_dir,
        real_path=real_path,
        scope=scope,
        rank=rank,
        root=root,
        plugin=plugin,
        extra=extra,
        frontmatter=frontmatter,
        codex=codex,
        body_lines=body_lines,
        body_chars=body_chars,
        mtime_ns=mtime_ns,
        size=size,
        **fields,
    )
    return ParsedSkill(skill=skill, body=body, problems=final)


def _failed(body: str, problem: Problem) -> ParsedSkill:
    return ParsedSkill(skill=None, body=body, problems=(problem,))


def parse_skill_bytes(
    data: bytes,
    *,
    path: str,
    dir_name: str | None = None,
    strict: bool = False,
    scope: Scope = "extra",
    rank: int = 0,
    root: str = "",
    plugin: str | None = None,
    real_path: str = "",
    mtime_ns: int = 0,
    size: int = 0,
    codex_yaml: str | None = None,
    codex_path: str | None = None,
) -> ParsedSkill:
    """Decode the bytes of a SKILL.md as UTF-8 (BOM allowed) and `parse_skill` them.

    NUL bytes give `file-binary`; UTF-16 or other undecodable bytes give
    `encoding-invalid`. Keywords are those of `parse_skill`.
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return _failed(
            "",
            _error(
                path,
                "encoding-invalid",
                f"{path} is encoded as UTF-16; re-save it as UTF-8.",
                line=1,
            ),
        )
    if b"\x00" in data:
        return _failed(
            "",
            _error(
                path,
                "file-binary",
                f"{path} contains NUL bytes, so it is not a text file; a SKILL.md must be "
                "UTF-8 Markdown. Replace it with the skill's text.",
            ),
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return _failed(
            "",
            _error(
                path,
                "encoding-invalid",
                f"{path} is not valid UTF-8 (byte 0x{data[exc.start]:02x} on line {line}); "
                "re-save it as UTF-8.",
                line=line,
            ),
        )
    return parse_skill(
        text,
        path=path,
        dir_name=dir_name,
        strict=strict,
        scope=scope,
        rank=rank,
        root=root,
        plugin=plugin,
        real_path=real_path,
        mtime_ns=mtime_ns,
        size=size,
        codex_yaml=codex_yaml,
        codex_path=codex_path,
    )


# ---------------------------------------------------------------------------- codex


def parse_codex_metadata(
    text: str, *, path: str
) -> tuple[CodexMetadata | None, tuple[Problem, ...]]:
    """Parse Codex's `agents/openai.yaml`; fail-open.

    A broken file gives a `codex-yaml-invalid` warning and None; a field of the wrong
    type gives the same warning and is left out, the rest is kept. An empty file
    gives (None, ()).
    """
    problems: list[Problem] = []

    def warn(message: str, line: int | None = None) -> None:
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="codex-yaml-invalid",
                message=message,
                line=line,
            )
        )

    try:
        raw = _load_yaml(_normalize(text))
    except _yaml_errors() as exc:
        where, line = _yaml_error_text(exc, 1)
        warn(f"{path} is not valid YAML{where}; the skill loads without it. Fix the YAML.", line)
        return None, tuple(problems)
    if raw is None:
        return None, ()
    if not isinstance(raw, dict):
        warn(
            f"{path} is a {_kind(raw)}, not a mapping; the skill loads without it. Write "
            "`interface:`, `dependencies:` and `policy:` sections."
        )
        return None, tuple(problems)
    try:
        data = _json_safe(raw, _Budget(MAX_EXPANDED_CHARS), 0)
    except _TooLarge:
        warn(f"{path} is too large or nested too deeply once aliases are expanded; ignored.")
        return None, tuple(problems)

    interface = data.get("interface")
    if interface is None:
        interface = {}
    elif not isinstance(interface, dict):
        warn(f"interface in {path} is a {_kind(interface)}, not a mapping; it is ignored.")
        interface = {}

    tools: list[Mapping[str, Any]] = []
    dependencies = data.get("dependencies")
    if isinstance(dependencies, dict):
        entries = dependencies.get("tools")
        if isinstance(entries, list):
            for entry in entries:
                if isinstance(entry, dict):
                    tools.append(entry)
                else:
                    warn(
                        f"dependencies.tools in {path} has a {_kind(entry)} entry; it is "
                        "ignored. Each entry is a mapping such as `{type: env_var, value: X}`."
                    )
        elif entries is not None:
            warn(f"dependencies.tools in {path} is a {_kind(entries)}, not a list; ignored.")
    elif dependencies is not None:
        warn(f"dependencies in {path} is a {_kind(dependencies)}, not a mapping; ignored.")

    allow: bool | None = None
    policy = data.get("policy")
    if isinstance(policy, dict):
        value = policy.get("allow_implicit_invocation")
        if value is True or value is False:
            allow = value
        elif isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            allow = value.strip().lower() in _TRUE
            warn(
                f"policy.allow_implicit_invocation in {path} is the text '{value}', read "
                f"as {_scalar_text(allow)}; write it without quotes."
            )
        elif value is not None:
            warn(
                f"policy.allow_implicit_invocation in {path} must be true or false, not "
                f"{value!r}; ignored."
            )
    elif policy is not None:
        warn(f"policy in {path} is a {_kind(policy)}, not a mapping; ignored.")

    codex = CodexMetadata(
        interface=interface, tool_dependencies=tuple(tools), allow_implicit_invocation=allow
    )
    return codex, tuple(problems)


# ---------------------------------------------------------------------------- JSON


def _to_json(value: Any) -> Any:
    if value is None:
        return None
    return _json_safe(value, _Budget(1 << 62), 0)


def _codex_to_dict(codex: CodexMetadata) -> dict[str, Any]:
    return {
        "interface": _to_json(codex.interface),
        "tool_dependencies": [_to_json(entry) for entry in codex.tool_dependencies],
        "allow_implicit_invocation": codex.allow_implicit_invocation,
    }


def skill_to_dict(skill: Skill) -> dict[str, Any]:
    """A JSON-safe dict of every field of `skill`; `skill_from_dict` inverts it.

    Mappings are copied with dates, bytes and odd keys turned into text, so a Skill
    built by hand with such values still serializes (parsed skills already are safe).
    """
    allowed, disallowed = skill.allowed_tools, skill.disallowed_tools
    return {
        "name": skill.name,
        "description": skill.description,
        "path": skill.path,
        "dir": skill.dir,
        "real_path": skill.real_path,
        "scope": skill.scope,
        "rank": skill.rank,
        "root": skill.root,
        "plugin": skill.plugin,
        "license": skill.license,
        "compatibility": skill.compatibility,
        "metadata": _to_json(skill.metadata),
        "allowed_tools": None if allowed is None else list(allowed),
        "disallowed_tools": None if disallowed is None else list(disallowed),
        "disable_model_invocation": skill.disable_model_invocation,
        "user_invocable": skill.user_invocable,
        "argument_hint": skill.argument_hint,
        "arguments": list(skill.arguments),
        "context": skill.context,
        "agent": skill.agent,
        "model": skill.model,
        "when_to_use": skill.when_to_use,
        "hooks": _to_json(skill.hooks),
        "paths": list(skill.paths),
        "version": skill.version,
        "extra": _to_json(skill.extra),
        "frontmatter": _to_json(skill.frontmatter),
        "codex": None if skill.codex is None else _codex_to_dict(skill.codex),
        "body_lines": skill.body_lines,
        "body_chars": skill.body_chars,
        "mtime_ns": skill.mtime_ns,
        "size": skill.size,
        "shadowed_by": skill.shadowed_by,
    }


def skill_from_dict(data: Mapping[str, Any]) -> Skill:
    """The Skill that `skill_to_dict` (possibly through JSON) described.

    Raises:
        TypeError: `data` has a key that is not a Skill field.
    """
    kwargs = dict(data)
    for attribute in ("allowed_tools", "disallowed_tools", "arguments", "paths"):
        value = kwargs.get(attribute)
        if value is not None:
            kwargs[attribute] = tuple(value)
    codex = kwargs.get("codex")
    if codex is not None:
        kwargs["codex"] = CodexMetadata(
            interface=codex.get("interface") or {},
            tool_dependencies=tuple(codex.get("tool_dependencies") or ()),
            allow_implicit_invocation=codex.get("allow_implicit_invocation"),
        )
    return Skill(**kwargs)
