"""JSON-safe copies of YAML values, within a size budget, and how values read as text.

Pure. Frontmatter values are kept in `Skill.frontmatter`, `extra`, `metadata` and
`hooks`, cached by the index and serialized as JSON, so every value is copied into
dict/list/str/int/float/bool/None first. Each copied node costs budget: YAML aliases
can make a small file expand enormously, and this is where that is stopped.
"""

from __future__ import annotations

import base64
import datetime as _dt
import math
from collections.abc import Mapping
from typing import Any, Final, Literal

from .._limits import MAX_EXPANDED_CHARS as MAX_EXPANDED_CHARS
from .._limits import MAX_MERGED_KEYS
from .._limits import MAX_YAML_NESTING as MAX_NESTING

TooLargeReason = Literal["aliases", "nesting", "merges"]

_WHY: Final[dict[str, str]] = {
    "nesting": f"nests more than {MAX_NESTING} levels deep or refers to itself through an "
    "alias; flatten it",
    "aliases": f"expands to more than {MAX_EXPANDED_CHARS} characters through YAML aliases "
    "(*name); write the values out instead of aliasing them",
    "merges": f"copies more than {MAX_MERGED_KEYS} keys through YAML merge keys "
    "(<<: *name); write the values out instead of merging them",
}


class TooLarge(Exception):
    """A YAML value went over a bound: its expanded size ("aliases"), `MAX_NESTING`
    ("nesting") or the keys merge keys copy ("merges")."""

    def __init__(self, reason: TooLargeReason) -> None:
        super().__init__(reason)
        self.reason = reason

    def why(self) -> str:
        """What is wrong and how to fix it, to follow "the frontmatter of X ..."."""
        return _WHY[self.reason]


class Budget:
    """What is left of a copy's budget (characters, roughly), shared across values."""

    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left


def scalar_text(value: Any) -> str:
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


def json_safe(value: Any, budget: Budget, depth: int) -> Any:
    """A copy of a YAML value made of dict/list/str/int/float/bool/None only.

    Dates, bytes, sets and non-finite floats become text; mapping keys become text.
    Every node costs budget, so alias bombs (`&a [*a, *a]` nested) and alias cycles
    raise `TooLarge` instead of exhausting memory or producing huge JSON.
    """
    kind = type(value)
    if kind is str:
        budget.left -= len(value) + 1
        if budget.left < 0:
            raise TooLarge("aliases")
        return value
    if kind is dict or kind is list or kind is tuple or kind is set:
        if depth >= MAX_NESTING:
            raise TooLarge("nesting")
        budget.left -= len(value) + 1
        if budget.left < 0:
            raise TooLarge("aliases")
        if kind is dict:
            return {
                (k if type(k) is str else scalar_text(k)): json_safe(v, budget, depth + 1)
                for k, v in value.items()
            }
        if kind is set:
            return sorted(scalar_text(k) if type(k) is not str else k for k in value)
        return [json_safe(v, budget, depth + 1) for v in value]
    budget.left -= 1
    if value is None or kind is bool or kind is int:
        return value
    if kind is float and math.isfinite(value):
        return value
    return scalar_text(value)


def kind_of(value: Any) -> str:
    """The YAML kind of a value, for messages: `null`, `boolean`, `number`, `list`, ..."""
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
