"""Reading OpenCode's `opencode.jsonc`: comments and trailing commas, never inside strings."""

from __future__ import annotations

import json

import pytest

from skillpack.discovery._opencode import strip_jsonc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": "x//y", // note\n"b": 1}', {"a": "x//y", "b": 1}),
        (
            '{"a": "/* not */ a comment", /* gone */ "b": [1, 2,],}',
            {"a": "/* not */ a comment", "b": [1, 2]},
        ),
        ('{"a": "quote \\" // still text"}', {"a": 'quote " // still text'}),
        ('{"a": 1 /* unclosed', None),
    ],
)
def test_strip_jsonc(text: str, expected: object) -> None:
    if expected is None:
        with pytest.raises(ValueError):
            json.loads(strip_jsonc(text))
    else:
        assert json.loads(strip_jsonc(text)) == expected
