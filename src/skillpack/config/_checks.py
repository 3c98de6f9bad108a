"""Typed checks of config values: each returns the value typed, or raises `Invalid`
saying what was expected (`_schema.py` turns that into a problem naming the key)."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any

from .._limits import MAX_SUGGESTIONS, SEARCH_MAX_LIMIT
from .._paths import FAMILIES
from ..render._catalog import CATALOG_MODES

_TOML_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "float"),
    (str, "string"),
    (list, "array"),
    (dict, "table"),
    (datetime.datetime, "datetime"),
    (datetime.date, "date"),
    (datetime.time, "time"),
)


def toml_type(value: object) -> str:
    """The TOML name of a parsed value's type, for messages."""
    for kind, name in _TOML_TYPE_NAMES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


Check = Callable[[Any], Any]
"""Returns the typed value, or raises `Invalid` naming the expected type."""


class Invalid(Exception):
    """A value of the wrong type; `expected` says what it should be."""

    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


def string_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Invalid("an array of strings")
    return tuple(value)


def families(value: Any) -> tuple[str, ...]:
    """`[discovery] folders_off`: names of families of default folders (`_paths.FAMILIES`)."""
    if not isinstance(value, list) or not all(v in FAMILIES for v in value):
        raise Invalid(f"an array of folder families, from {', '.join(FAMILIES)}")
    return tuple(value)


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid("a boolean (true or false)")
    return value


def server_list(value: Any) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, dict) and isinstance(v.get("name"), str) and v["name"].strip() for v in value
    ):
        raise Invalid("an array of tables, each with a `name` string ([[mcp_servers]])")
    return tuple(value)


def enabled_entries(value: Any) -> bool | tuple[str, ...]:
    """`[skills] enabled`: a boolean (the master switch) or entries overriding `disabled`."""
    if isinstance(value, bool):
        return value
    try:
        return string_list(value)
    except Invalid:
        raise Invalid(
            "a boolean (false turns every skill off) or an array of strings (skills to re-enable)"
        ) from None


def limit(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= SEARCH_MAX_LIMIT:
        raise Invalid(f"an integer from 1 to {SEARCH_MAX_LIMIT}")
    return value


def suggestion_count(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_SUGGESTIONS:
        raise Invalid(f"an integer from 0 (no suggestions) to {MAX_SUGGESTIONS}")
    return value


def multi_mention(value: Any) -> str:
    if value not in ("choose-one", "all"):
        raise Invalid('"choose-one" or "all"')
    return str(value)


def catalog_mode(value: Any) -> str:
    if value not in CATALOG_MODES:
        raise Invalid(" or ".join(f'"{mode}"' for mode in CATALOG_MODES))
    return str(value)


def fraction(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not 0 < value <= 1:
        raise Invalid("a number greater than 0 and at most 1 (e.g. 0.02)")
    return float(value)


def int_at_least(minimum: int) -> Check:
    def check(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise Invalid(f"an integer of at least {minimum}")
        return value

    return check


def non_empty_string(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("a non-empty string")
    return value.strip()


def grant_list(value: Any) -> tuple[Any, ...]:
    """`[[auth.grant]]`: tables of `claim` and `value` (strings) and `skills` (an
    array of strings), nothing else."""
    from ..select._grants import Grant

    expected = (
        "an array of tables ([[auth.grant]]), each with `claim` and `value` strings and "
        "`skills`, an array of names, qualified ids or globs"
    )
    if not isinstance(value, list):
        raise Invalid(expected)
    grants = []
    for entry in value:
        if not isinstance(entry, dict) or set(entry) != {"claim", "value", "skills"}:
            raise Invalid(expected)
        claim, wanted, skills = entry["claim"], entry["value"], entry["skills"]
        if not (isinstance(claim, str) and claim.strip() and isinstance(wanted, str)):
            raise Invalid(expected)
        grants.append(Grant(claim=claim.strip(), value=wanted, skills=string_list(skills)))
    return tuple(grants)
