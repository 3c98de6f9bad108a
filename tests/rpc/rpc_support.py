"""What the RPC tests share: a client that validates every result against the schema,
a project with skills, and the server command run from this checkout."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema

from skillpack.rpc import Client
from skillpack.rpc._schema import DEFS, METHODS, NOTIFICATIONS

VALIDATOR = jsonschema.Draft202012Validator


def validate_result(method: str, result: Any) -> None:
    """Raise when `result` does not match `method`'s result schema."""
    VALIDATOR({**METHODS[method].result, "$defs": DEFS}).validate(result)


def validate_notification(method: str, params: Any) -> None:
    VALIDATOR({**NOTIFICATIONS[method][1], "$defs": DEFS}).validate(params)


class CheckedClient(Client):
    """A `Client` whose every result is checked against the schema."""

    calls: list[str]

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        result = super().call(method, params)
        validate_result(method, result)
        self.__dict__.setdefault("calls", []).append(method)
        return result


def write_project(base: Path, names: tuple[str, ...] = ("alpha", "beta")) -> Path:
    """A project (a `.git` folder marks its root) with skills in `.agents/skills`."""
    project = base / "project"
    (project / ".git").mkdir(parents=True)
    for name in names:
        write_skill_md(project / ".agents" / "skills" / name, name)
    return project


def write_skill_md(
    folder: Path,
    name: str,
    *,
    description: str | None = None,
    extra: str = "",
    body: str | None = None,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    description = description or f"Does {name} work. Use for {name}."
    body = body if body is not None else f"# {name}\n\nSteps for {name}.\n"
    text = f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    (folder / "references").mkdir(exist_ok=True)
    (folder / "references" / "notes.md").write_text(f"notes for {name}\n", encoding="utf-8")
    return folder


SERVER_ARGS = ("--no-system",)
