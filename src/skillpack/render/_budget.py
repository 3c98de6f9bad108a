"""The catalog's character budget: the caller's, the environment's, or a share of
the model's context window (design rules: rendering), pure: values in, a number out."""

from __future__ import annotations

from collections.abc import Mapping

from .._errors import UsageError
from .._limits import BUDGET_CHARS

BUDGET_ENV_VAR = "SKILLS_PROMPT_CHAR_BUDGET"
"""Environment variable whose value (passed in by the caller) overrides the budget."""
BUDGET_ENV_VARS: tuple[str, ...] = (BUDGET_ENV_VAR, "SLASH_COMMAND_TOOL_CHAR_BUDGET")
"""Variables that override the budget, first set (not blank) wins: skillpack's own,
then Claude Code's `SLASH_COMMAND_TOOL_CHAR_BUDGET` (what its users already set)."""


def budget_from_env(env: Mapping[str, str]) -> tuple[str, str | None]:
    """(variable, value) of the first `BUDGET_ENV_VARS` entry set in `env` (not blank);
    `(BUDGET_ENV_VAR, None)` when none is."""
    for name in BUDGET_ENV_VARS:
        value = env.get(name)
        if value is not None and value.strip():
            return name, value
    return BUDGET_ENV_VAR, None


_CHARS_PER_TOKEN = 4


def check_budget(budget_chars: int) -> None:
    """A `UsageError` for a negative character budget."""
    if budget_chars < 0:
        raise UsageError(
            f"Catalog budget must be 0 or more characters, got {budget_chars}. "
            "Pass a non-negative budget_chars (0 renders no catalog)."
        )


def catalog_budget(
    *,
    context_window: int | None = None,
    budget_chars: int | None = None,
    env_override: str | None = None,
    fraction: float = 0.02,
    fallback_chars: int = BUDGET_CHARS,
    env_var: str = BUDGET_ENV_VAR,
) -> int:
    """The catalog's character budget.

    Precedence: `budget_chars`, then `env_override` (the value of
    `SKILLS_PROMPT_CHAR_BUDGET`; blank counts as unset), then `fraction` (2% by
    default) of `context_window` tokens at 4 characters per token, then
    `fallback_chars` (`BUDGET_CHARS` unless the config says otherwise). `env_var`
    names the variable `env_override` came from, for the error message
    (`budget_from_env` picks it).

    Raises:
        UsageError: a negative budget, a non-positive context window, or an
            environment value that is not a whole number of characters.
    """
    if budget_chars is not None:
        check_budget(budget_chars)
        return budget_chars
    if env_override is not None and env_override.strip():
        try:
            value = int(env_override.strip())
        except ValueError:
            value = -1
        if value < 0:
            raise UsageError(
                f"{env_var}={env_override!r} is not a number of characters. "
                "Set it to a whole number such as 16000, or unset it to use the default."
            )
        return value
    if context_window is not None:
        if context_window <= 0:
            raise UsageError(
                f"context_window must be a positive number of tokens, got {context_window}. "
                "Pass the model's context window, or None when it is unknown."
            )
        # The epsilon keeps float error from flooring 16000.0 down to 15999.
        return int(context_window * fraction * _CHARS_PER_TOKEN + 1e-9)
    return fallback_chars
