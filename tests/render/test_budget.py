"""The catalog's budget: where it comes from, and the values refused."""

from __future__ import annotations

import pytest

from skillpack._errors import UsageError
from skillpack._limits import BUDGET_CHARS
from skillpack.render._budget import catalog_budget


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param({}, BUDGET_CHARS, id="default"),
        pytest.param({"context_window": 200_000}, 16_000, id="two-percent-of-window"),
        pytest.param({"context_window": 1_000_000}, 80_000, id="large-window"),
        pytest.param({"env_override": "5000", "context_window": 200_000}, 5000, id="env-wins"),
        pytest.param({"env_override": " 7000 "}, 7000, id="env-trimmed"),
        pytest.param({"env_override": ""}, BUDGET_CHARS, id="blank-env-ignored"),
        pytest.param({"env_override": "0"}, 0, id="env-zero"),
        pytest.param({"budget_chars": 900, "env_override": "5000"}, 900, id="explicit-wins"),
        pytest.param({"budget_chars": 0}, 0, id="explicit-zero"),
    ],
)
def test_catalog_budget_precedence(kwargs: dict[str, object], expected: int) -> None:
    assert catalog_budget(**kwargs) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"env_override": "lots"}, "SKILLS_PROMPT_CHAR_BUDGET", id="env-not-a-number"),
        pytest.param({"env_override": "-5"}, "SKILLS_PROMPT_CHAR_BUDGET", id="env-negative"),
        pytest.param({"budget_chars": -1}, "non-negative", id="explicit-negative"),
        pytest.param({"context_window": 0}, "context_window", id="window-zero"),
    ],
)
def test_catalog_budget_rejects_invalid_values(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        catalog_budget(**kwargs)  # type: ignore[arg-type]
