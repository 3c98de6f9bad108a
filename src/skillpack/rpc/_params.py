"""Checking a request's params against its method's schema, naming the bad field.

Only the keywords the params schemas use are understood (`SUPPORTED`); a test checks
that no params schema uses another, so nothing is silently ignored. The server's
results are never checked here (the tests do that with `jsonschema`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._codes import ParamError

SUPPORTED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "maxItems",
        "description",
    }
)

_TYPES: Mapping[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def check_params(schema: Mapping[str, Any], params: Any) -> dict[str, Any]:
    """`params` as a dict once it matches `schema`; absent params are `{}`.

    Raises:
        ParamError: naming the first bad field (the dispatcher answers -32602).
    """
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ParamError("", "must be an object of named params")
    _check(schema, params, "")
    return params


def _check(schema: Mapping[str, Any], value: Any, where: str) -> None:
    def fail(problem: str) -> ParamError:
        return ParamError(where, problem)

    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is(value, name) for name in names):
            raise fail(f"must be {' or '.join(_article(n) for n in names)}")
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        raise fail(f"must be one of {allowed}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise fail("must not be empty" if schema["minLength"] == 1 else "is too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise fail(f"must be at most {schema['maxLength']} characters")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise fail(f"must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise fail(f"must be at most {schema['maximum']}")
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise fail(f"must hold at most {schema['maxItems']} items")
        items = schema.get("items")
        if items is not None:
            for index, item in enumerate(value):
                _check(items, item, f"{where}[{index}]")
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                raise ParamError(_join(where, key), "is required")
        for key, item in value.items():
            sub = properties.get(key)
            if sub is None:
                if schema.get("additionalProperties", True) is False:
                    known = ", ".join(sorted(properties)) or "none"
                    raise ParamError(_join(where, key), f"is not a known param (known: {known})")
                continue
            _check(sub, item, _join(where, key))


def _is(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _TYPES[name])


def _article(name: str) -> str:
    return {"array": "a list", "object": "an object", "integer": "an integer"}.get(
        name, "null" if name == "null" else f"a {name}"
    )


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
