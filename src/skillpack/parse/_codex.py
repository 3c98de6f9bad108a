"""Codex's `agents/openai.yaml` beside a skill: interface, tool dependencies, policy.

Pure and fail-open: the sidecar is optional, so anything wrong with it is a
`codex-yaml-invalid` warning and the skill loads without the part that was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._model import CodexMetadata, Problem
from ._fields import FALSE_WORDS, TRUE_WORDS
from ._json_safe import MAX_EXPANDED_CHARS, Budget, TooLarge, json_safe, kind_of, scalar_text
from ._yaml import load_yaml, normalize, yaml_error_text, yaml_errors


def parse_codex_metadata(
    text: str, *, path: str
) -> tuple[CodexMetadata | None, tuple[Problem, ...]]:
    """Parse Codex's `agents/openai.yaml`; fail-open.

    A broken file gives a `codex-yaml-invalid` warning and None; a field of the wrong
    type gives the same warning and is left out, the rest is kept. An empty file
    gives (None, ()).
    """
    problems: list[Problem] = []

    def warn(message: str, line: int | None = None) -> None:
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="codex-yaml-invalid",
                message=message,
                line=line,
            )
        )

    try:
        raw = load_yaml(normalize(text))
    except yaml_errors() as exc:
        where, line = yaml_error_text(exc, 1)
        warn(f"{path} is not valid YAML{where}; the skill loads without it. Fix the YAML.", line)
        return None, tuple(problems)
    if raw is None:
        return None, ()
    if not isinstance(raw, dict):
        warn(
            f"{path} is a {kind_of(raw)}, not a mapping; the skill loads without it. Write "
            "`interface:`, `dependencies:` and `policy:` sections."
        )
        return None, tuple(problems)
    try:
        data = json_safe(raw, Budget(MAX_EXPANDED_CHARS), 0)
    except TooLarge:
        warn(f"{path} is too large or nested too deeply once aliases are expanded; ignored.")
        return None, tuple(problems)

    interface = data.get("interface")
    if interface is None:
        interface = {}
    elif not isinstance(interface, dict):
        warn(f"interface in {path} is a {kind_of(interface)}, not a mapping; it is ignored.")
        interface = {}

    tools: list[Mapping[str, Any]] = []
    dependencies = data.get("dependencies")
    if isinstance(dependencies, dict):
        entries = dependencies.get("tools")
        if isinstance(entries, list):
            for entry in entries:
                if isinstance(entry, dict):
                    tools.append(entry)
                else:
                    warn(
                        f"dependencies.tools in {path} has a {kind_of(entry)} entry; it is "
                        "ignored. Each entry is a mapping such as `{type: env_var, value: X}`."
                    )
        elif entries is not None:
            warn(f"dependencies.tools in {path} is a {kind_of(entries)}, not a list; ignored.")
    elif dependencies is not None:
        warn(f"dependencies in {path} is a {kind_of(dependencies)}, not a mapping; ignored.")

    allow: bool | None = None
    policy = data.get("policy")
    if isinstance(policy, dict):
        value = policy.get("allow_implicit_invocation")
        if value is True or value is False:
            allow = value
        elif isinstance(value, str) and value.strip().lower() in TRUE_WORDS | FALSE_WORDS:
            allow = value.strip().lower() in TRUE_WORDS
            warn(
                f"policy.allow_implicit_invocation in {path} is the text '{value}', read "
                f"as {scalar_text(allow)}; write it without quotes."
            )
        elif value is not None:
            warn(
                f"policy.allow_implicit_invocation in {path} must be true or false, not "
                f"{value!r}; ignored."
            )
    elif policy is not None:
        warn(f"policy in {path} is a {kind_of(policy)}, not a mapping; ignored.")

    codex = CodexMetadata(
        interface=interface, tool_dependencies=tuple(tools), allow_implicit_invocation=allow
    )
    return codex, tuple(problems)
