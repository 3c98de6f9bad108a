"""The TOML writer: what `tomllib` reads back equals what was written."""

from __future__ import annotations

import datetime
import math
import tomllib
from typing import Any

import pytest

from skillpack._errors import UsageError
from skillpack.config._toml_writer import dumps_toml

ROUND_TRIPS = [
    pytest.param({}, id="empty"),
    pytest.param({"s": 'quote " backslash \\ tab \t newline \n cr \r'}, id="escapes"),
    pytest.param({"s": "ctrl \x01 \x1f del \x7f bell \b ff \f"}, id="control-chars"),
    pytest.param({"s": "unicode é ✓ 🙂", "t": "'single' and '''triple'''"}, id="unicode"),
    pytest.param({"a b": 1, "x.y": 2, "": 3, "é": 4, 'q"': 5}, id="quoted-keys"),
    pytest.param(
        {"i": -7, "big": 2**62, "f": 0.1, "e": 1e300, "neg": -0.5, "b": False}, id="numbers"
    ),
    pytest.param({"inf": math.inf, "ninf": -math.inf}, id="infinities"),
    pytest.param(
        {
            "dt": datetime.datetime(1979, 5, 27, 7, 32, tzinfo=datetime.UTC),
            "local": datetime.datetime(1979, 5, 27, 7, 32, 0, 999000),
            "d": datetime.date(2024, 2, 29),
            "t": datetime.time(7, 32),
        },
        id="dates",
    ),
    pytest.param({"l": [], "m": [1, "two", [3.0, True]], "inline": [{"a": 1}, 2]}, id="arrays"),
    pytest.param({"t": {}, "u": {"v": {}}}, id="empty-tables"),
    pytest.param({"a": {"b": {"c": 1}, "d": [1]}, "z": 0}, id="nested-tables"),
    pytest.param(
        {"p": [{"n": "x", "sub": {"k": 1}}, {"n": "y", "q": [{"r": 1}]}]}, id="table-arrays"
    ),
    pytest.param({"a.b": {"c d": {"e": "f"}}}, id="quoted-table-names"),
]


@pytest.mark.parametrize("document", ROUND_TRIPS)
def test_toml_writer_round_trips(document: dict[str, Any]) -> None:
    text = dumps_toml(document)
    assert tomllib.loads(text) == document
    assert dumps_toml(tomllib.loads(text)) == text


def test_toml_writer_writes_nan() -> None:
    assert math.isnan(tomllib.loads(dumps_toml({"x": math.nan}))["x"])


def test_toml_writer_refuses_values_toml_cannot_hold() -> None:
    with pytest.raises(UsageError, match="set"):
        dumps_toml({"x": {1, 2}})
