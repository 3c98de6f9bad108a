"""Typing the frontmatter's fields: one handler per known key, and how values coerce.

Pure. `parse_skill` hands each top-level key to its handler in `FIELD_HANDLERS`,
with the YAML value as loaded (`raw`) and its JSON-safe copy (`value`); the handler
writes the Skill attribute(s) into `out` and reports a value it had to coerce (a
number where text belongs, a quoted boolean) through its `Reader`. Unknown keys
have no handler: they go to `Skill.extra`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from .._model import Problem
from .._text import single_line
from ._json_safe import kind_of, scalar_text

FRONTMATTER_FIRST_LINE: Final = 2
"""File line of the first frontmatter line (line 1 is the opening `---`)."""

TRUE_WORDS: Final = frozenset({"true", "yes", "on"})
"""Spellings of true accepted (and reported) as text: YAML 1.1's words, lowercased."""
FALSE_WORDS: Final = frozenset({"false", "no", "off"})
"""Spellings of false accepted (and reported) as text."""
YAML11_BOOLEANS: Final = frozenset(
    spelling
    for word in ("yes", "no", "on", "off")
    for spelling in (word, word.capitalize(), word.upper())
)
"""Plain words YAML 1.1 read as booleans and YAML 1.2 reads as text: a boolean field
written `disable-model-invocation: yes` (unquoted) takes them silently, as before."""

_LIST_SEPARATORS = re.compile(r"[\s,]+")


class Reader:
    """Per-file state while typing fields: where problems go, how to find lines, and
    the source text of each top-level plain scalar (`plain`, from `load_yaml`)."""

    __slots__ = ("path", "source", "problems", "plain")

    def __init__(
        self,
        path: str,
        source: str,
        problems: list[Problem],
        plain: Mapping[str, str] | None = None,
    ) -> None:
        self.path = path
        self.source = source
        self.problems = problems
        self.plain: Mapping[str, str] = plain or {}

    def line_of(self, key: str) -> int | None:
        """File line of a top-level `key:` (only computed when a problem needs it)."""
        source = self.source
        if source.startswith(key + ":"):
            return FRONTMATTER_FIRST_LINE
        at = source.find("\n" + key + ":")
        if at < 0:
            return None
        return FRONTMATTER_FIRST_LINE + source.count("\n", 0, at) + 1

    def coerced(self, key: str, message: str) -> None:
        self.warn(key, "value-coerced", message)

    def warn(self, key: str, code: str, message: str) -> None:
        self.problems.append(
            Problem(
                path=self.path,
                severity="warning",
                code=code,
                field=key,
                line=self.line_of(key),
                message=message,
            )
        )

    def text(self, raw: Any, key: str) -> str | None:
        """A text field: strings as written, scalars read as text (reported).

        A number or boolean written as a plain scalar becomes the text written
        (`1.10`, not `1.1`; `True`, not `true`), and the hint quotes that text.
        """
        if type(raw) is str:
            return raw
        if raw is None:
            return None
        if isinstance(raw, (Mapping, list, tuple, set)):
            self.coerced(
                key,
                f"{key} in {self.path} is a {kind_of(raw)}, not text; it is ignored. "
                f'Write it as one string ({key}: "...").',
            )
            return None
        text = self.plain.get(key) or scalar_text(raw)
        self.coerced(
            key,
            f"{key} in {self.path} is a {kind_of(raw)}, read as the text '{text}'; "
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
            if raw in YAML11_BOOLEANS and self.plain.get(key) == raw:
                return raw.lower() in TRUE_WORDS
            word = raw.strip().lower()
            if word in TRUE_WORDS or word in FALSE_WORDS:
                value = word in TRUE_WORDS
                self.coerced(
                    key,
                    f"{key} in {self.path} is the text '{raw}', read as "
                    f"{scalar_text(value)}; write `{key}: {scalar_text(value)}` "
                    "without quotes.",
                )
                return value
        self.coerced(
            key,
            f"{key} in {self.path} must be true or false, not {raw!r}; the default "
            f"({scalar_text(default)}) is used. Write `{key}: true` or `{key}: false`.",
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
                        f"{key} in {self.path} has a {kind_of(item)} entry; it is ignored. "
                        f"Each entry of {key} must be a string.",
                    )
                else:
                    items.append(scalar_text(item))
                    self.coerced(
                        key,
                        f"{key} in {self.path} has the {kind_of(item)} entry "
                        f"{scalar_text(item)}, read as text; quote it.",
                    )
            return tuple(items)
        if isinstance(raw, Mapping):
            self.coerced(
                key,
                f"{key} in {self.path} is a mapping; it is ignored. Write a list "
                f"({key}: [a, b]) or a space-separated string.",
            )
            return None
        text = scalar_text(raw)
        self.coerced(key, f"{key} in {self.path} is a {kind_of(raw)}, read as '{text}'; quote it.")
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


Handler = Callable[[Reader, Any, Any, str, dict[str, Any]], None]
"""`handler(reader, raw, value, key, out)`: type one field into `out` (module docstring)."""


def _text_field(attribute: str) -> Handler:
    def handle(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
        out[attribute] = reader.text(raw, key)

    return handle


def _list_field(attribute: str) -> Handler:
    def handle(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
        out[attribute] = reader.names(raw, key)

    return handle


def _bool_field(attribute: str, default: bool) -> Handler:
    def handle(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
        out[attribute] = reader.boolean(raw, key, default)

    return handle


def _name(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    # An empty `name:` counts as missing: the directory name is used.
    out["name"] = reader.text(raw, key) or None


def _description(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    # Almost always text: the type test spares every skill the `Mapping` ABC check.
    if type(raw) is not str and isinstance(raw, (Mapping, list, tuple, set)):
        # Kept as is: `check_description` reports it as `description-invalid`.
        out["description"] = value
        return
    # On one line, as every surface shows it: a `|` block's line breaks,
    # tabs and the surrounding blanks are layout, not meaning.
    out["description"] = single_line(reader.text(raw, key) or "")


def _argument_hint(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
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


def _when_to_use_alias(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    # `when_to_use` (Claude Code's spelling) wins over `when-to-use` in either order.
    if "when_to_use" not in out:
        out["when_to_use"] = reader.text(raw, key)


def _when_to_use(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    out["when_to_use"] = reader.text(raw, key)


def _context(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
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


def _metadata(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    if raw is None:
        out["metadata"] = {}
        return
    if not isinstance(raw, Mapping):
        reader.coerced(
            key,
            f"metadata in {reader.path} is a {kind_of(raw)}, not a mapping; it is ignored. "
            "Write `metadata:` followed by indented `key: value` lines.",
        )
        out["metadata"] = {}
        return
    out["metadata"] = value
    odd = [(k, v) for k, v in raw.items() if type(v) is not str or type(k) is not str]
    if odd:
        listed = ", ".join(f"{scalar_text(k)} ({kind_of(v)})" for k, v in odd)
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


def _hooks(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    if raw is None or isinstance(raw, Mapping):
        out["hooks"] = value
        if raw:
            from ._hooks import parse_hooks  # only for the few skills that declare hooks

            for message in parse_hooks(value)[1]:
                where = f"In {reader.path}: {message} See Claude Code's hooks format."
                reader.warn(key, "hooks-invalid", where)
        return
    reader.coerced(
        key,
        f"hooks in {reader.path} is a {kind_of(raw)}, not a mapping of events; it is ignored. "
        "Write `hooks:` followed by event names (e.g. `Stop:`).",
    )
    out["hooks"] = None


SKILL_REF = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*(?::[a-z0-9]+(?:-[a-z0-9]+)*)?")
"""A skill a `dependencies` entry may name: a spec name, or `<plugin or scope>:<name>`."""


def _dependencies(reader: Reader, raw: Any, value: Any, key: str, out: dict[str, Any]) -> None:
    # Proposed in the spec discussions: the skills this one builds on. Entries that name
    # no skill (a package with a version, a mapping) are reported and left out.
    names = reader.names(raw, key) or ()
    kept = tuple(name for name in names if SKILL_REF.fullmatch(name))
    for name in names:
        if name not in kept:
            reader.warn(
                key,
                "dependency-invalid",
                f"dependencies in {reader.path} lists {name!r}, which is no skill name "
                "(lowercase letters, digits and single hyphens, or <plugin>:<name>); it "
                "is ignored. List the skills this one needs by name.",
            )
    out["dependencies"] = kept


FIELD_HANDLERS: dict[str, Handler] = {
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
    "dependencies": _dependencies,
}
"""The handler of each known frontmatter key; any other key goes to `Skill.extra`."""

EMPTY_TUPLE_FIELDS: Final = ("arguments", "paths", "dependencies")
"""Skill fields that must be tuples, not None, when the frontmatter gives null."""
