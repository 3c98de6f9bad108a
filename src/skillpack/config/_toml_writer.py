"""A small TOML writer for config files (`tomllib` reads; the stdlib has no writer).

Pure: a document as `tomllib` returns it in, TOML text out, such that
`tomllib.loads(dumps_toml(doc)) == doc`. Comments are not preserved.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from typing import Any

from .._errors import UsageError

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _toml_string(text: str) -> str:
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_string(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise UsageError(f"Cannot write a {type(value).__name__} value to a TOML config file.")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _emit_body(table: Mapping[str, Any], prefix: tuple[str, ...], lines: list[str]) -> None:
    subtables = []
    for key, value in table.items():
        if isinstance(value, Mapping) or _is_table_array(value):
            subtables.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for key, value in subtables:
        path = (*prefix, key)
        dotted = ".".join(_toml_key(k) for k in path)
        if isinstance(value, Mapping):
            has_own_keys = any(
                not (isinstance(v, Mapping) or _is_table_array(v)) for v in value.values()
            )
            # A table holding only subtables is defined by their headers; an empty
            # one needs its own header to survive the round trip.
            if has_own_keys or not value:
                lines.extend(["", f"[{dotted}]"])
            _emit_body(value, path, lines)
        else:
            for item in value:
                lines.extend(["", f"[[{dotted}]]"])
                _emit_body(item, path, lines)


def dumps_toml(document: Mapping[str, Any]) -> str:
    """TOML text for a document as `tomllib` returns it (`tomllib.loads` inverts it)."""
    lines: list[str] = []
    _emit_body(document, (), lines)
    text = "\n".join(lines).strip("\n")
    return text + "\n" if text else ""
