"""What Codex, OpenCode, Gemini CLI and Copilot CLI do differently with a SKILL.md:
notes on skillpack's problems.

skillpack loads some files an agent will not (a byte-order mark, a name over 64
characters, no description, a name that is not text) and refuses some an agent loads
(an unclosed frontmatter, bytes that are not UTF-8, YAML that does not parse). Each such
difference is a note on the problem that explains it (`Problem.agents`, by agent),
measured against the real agents by `tests/compat/` (Codex 0.171.0, OpenCode 1.18.33,
Gemini CLI 0.61.0, Copilot CLI 1.0.102; `docs/compat.md`), so an author fixes the skill
before shipping it. Pure: problems in, problems out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from .._model import Problem

CODEX = "codex"
OPENCODE = "opencode"
GEMINI = "gemini"
COPILOT = "copilot"

NO_DESCRIPTION: Mapping[str, str] = {
    CODEX: "rejects: no description",
    OPENCODE: "loads it without a description, hidden from the model",
    GEMINI: "drops: no description",
}
_REPLACED_BYTES = "loads it, with U+FFFD for the bytes that are not UTF-8"
_EMPTY_DESCRIPTION = "loads it with an empty description"

BY_CODE: Mapping[str, Mapping[str, str]] = {
    "byte-order-mark": {
        CODEX: "rejects: byte-order mark before ---",
        GEMINI: "drops: byte-order mark before ---",
    },
    "name-too-long": {
        CODEX: "rejects: name over 64 characters",
        COPILOT: "drops: name over 64 characters",
    },
    "name-missing": {OPENCODE: "drops: no name", GEMINI: "drops: no name"},
    "description-from-body": NO_DESCRIPTION,
    "description-missing": NO_DESCRIPTION,
    "description-empty": {
        OPENCODE: f"{_EMPTY_DESCRIPTION}, hidden from the model",
        GEMINI: _EMPTY_DESCRIPTION,
        COPILOT: _EMPTY_DESCRIPTION,
    },
    "description-too-long": {COPILOT: "drops: description over 1024 characters"},
    "yaml-retried": {COPILOT: "drops: the YAML does not parse as written"},
    "yaml-invalid": {GEMINI: "loads it, reading each `key: value` line as text"},
    "encoding-invalid": {
        OPENCODE: _REPLACED_BYTES,
        GEMINI: _REPLACED_BYTES,
        COPILOT: _REPLACED_BYTES,
    },
    "frontmatter-unclosed": {OPENCODE: "loads it without a closing ---"},
}
"""The notes a problem code carries whatever the values (measured, see the module doc)."""

NAME_NOT_TEXT: Mapping[str, str] = {
    OPENCODE: "drops: name is not a string",
    COPILOT: "drops: name is not a string",
}
NAME_NOT_SCALAR: Mapping[str, str] = {
    CODEX: "rejects: name is not a string",
    OPENCODE: "drops: name is not a string",
    GEMINI: "loads it named as written (`[a, b]` for a list)",
    COPILOT: "drops: name is not a string",
}


COPILOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._ -]*")
"""The names Copilot CLI keeps (measured): an ASCII letter or digit first, then letters,
digits, `.`, `_`, `-` and spaces (each space becomes `-`)."""


def _copilot_name(raw_name: object) -> Mapping[str, str]:
    """The note on an invalid `name` that Copilot CLI drops or renames."""
    if not isinstance(raw_name, str):
        return {}
    if not COPILOT_NAME.fullmatch(raw_name):
        return {COPILOT: "drops: name not starting with an ASCII letter or digit, or not ASCII"}
    if " " in raw_name:
        return {COPILOT: "loads it with `-` for each space of the name"}
    return {}


def agent_notes(problem: Problem, raw_name: object = None) -> Mapping[str, str]:
    """What each agent does differently with the file `problem` is about ({}: the same).

    `raw_name` is the frontmatter's `name` as YAML gave it (a number, a list, ...),
    which decides the note of a `value-coerced` or `name-invalid` name.
    """
    if problem.code == "value-coerced" and problem.field == "name":
        return NAME_NOT_SCALAR if isinstance(raw_name, (list, dict)) else NAME_NOT_TEXT
    if problem.code == "name-invalid":
        return _copilot_name(raw_name)
    return BY_CODE.get(problem.code, {})


def with_agent_notes(problems: Sequence[Problem], raw_name: object = None) -> list[Problem]:
    """`problems`, each carrying `agent_notes` (the same objects when none has any)."""
    marked: list[Problem] = []
    for problem in problems:
        notes = agent_notes(problem, raw_name)
        marked.append(replace(problem, agents=dict(notes)) if notes else problem)
    return marked


def bom_problem(path: str) -> Problem:
    """The warning for a SKILL.md that starts with a UTF-8 byte-order mark."""
    return Problem(
        path=path,
        severity="warning",
        code="byte-order-mark",
        line=1,
        message=(
            f"{path} starts with a byte-order mark (U+FEFF) before its `---` line; "
            "skillpack, OpenCode and Copilot skip it, Codex and Gemini CLI reject the file "
            "as having no frontmatter. Re-save the file as UTF-8 without a BOM."
        ),
        agents=dict(BY_CODE["byte-order-mark"]),
    )
