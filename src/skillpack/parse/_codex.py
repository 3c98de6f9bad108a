"""Codex's `agents/openai.yaml` beside a skill: interface, dependencies, policy, permissions.

Pure and fail-open: the sidecar is optional, so anything wrong with it is a
`codex-yaml-invalid` warning and the skill loads without the part that was wrong.

The `permissions` profile (Codex's `network` / `file_system` / `macos` sections) is
kept as a `CodexPermissions` value: skillpack shows it and offers it to the host,
and never applies it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._limits import MAX_FRONTMATTER_CHARS
from .._model import CodexMetadata, CodexPermissions, Problem
from ._fields import FALSE_WORDS, TRUE_WORDS
from ._json_safe import MAX_EXPANDED_CHARS, Budget, TooLarge, json_safe, kind_of, scalar_text
from ._yaml import load_yaml, normalize, yaml_error_text, yaml_errors


def parse_codex_metadata(
    text: str, *, path: str
) -> tuple[CodexMetadata | None, tuple[Problem, ...]]:
    """Parse Codex's `agents/openai.yaml`; fail-open.

    A broken file gives a `codex-yaml-invalid` warning and None (so does one over
    `MAX_FRONTMATTER_CHARS`, or one nested, aliased or merged past the YAML bounds);
    a field of the wrong type gives the same warning and is left out, the rest is
    kept. An empty file gives (None, ()).
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

    if len(text) > MAX_FRONTMATTER_CHARS:
        warn(
            f"{path} is {len(text)} characters, over the {MAX_FRONTMATTER_CHARS}-character "
            "limit; the skill loads without it. Keep the Codex metadata short."
        )
        return None, tuple(problems)
    try:
        raw = load_yaml(normalize(text))
    except TooLarge as exc:
        warn(f"{path} {exc.why()}; the skill loads without it.")
        return None, tuple(problems)
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
    except TooLarge as exc:
        warn(f"{path} {exc.why()}; the skill loads without it.")
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
            # Codex reads YAML 1.2, where `no` (quoted or not) is text, not false.
            warn(
                f"policy.allow_implicit_invocation in {path} is the text '{value}', read "
                f"as {scalar_text(allow)}; write `{scalar_text(allow)}` without quotes "
                "(Codex reads YAML 1.2, where only true and false are booleans)."
            )
        elif value is not None:
            warn(
                f"policy.allow_implicit_invocation in {path} must be true or false, not "
                f"{value!r}; ignored."
            )
    elif policy is not None:
        warn(f"policy in {path} is a {kind_of(policy)}, not a mapping; ignored.")

    permissions = None
    if "permissions" in data and data["permissions"] is not None:
        permissions = _permissions(data["permissions"], path, warn)
    codex = CodexMetadata(
        interface=interface,
        tool_dependencies=tuple(tools),
        allow_implicit_invocation=allow,
        permissions=permissions,
    )
    return codex, tuple(problems)


_Warn = Callable[..., None]
_SECTIONS: Mapping[str, tuple[str, ...]] = {
    "network": ("enabled", "allowed_domains", "denied_domains"),
    "file_system": ("read", "write"),
}


def _permissions(value: Any, path: str, warn: _Warn) -> CodexPermissions | None:
    """The `permissions` profile; a wrong-typed part is a warning and left out."""
    if not isinstance(value, dict):
        warn(f"permissions in {path} is a {kind_of(value)}, not a mapping; ignored.")
        return None
    sections: dict[str, dict[str, Any]] = {}
    for section, keys in _SECTIONS.items():
        body = value.get(section)
        if body is None:
            sections[section] = {}
            continue
        if not isinstance(body, dict):
            warn(f"permissions.{section} in {path} is a {kind_of(body)}, not a mapping; ignored.")
            body = {}
        for key in sorted(set(body) - set(keys)):
            warn(
                f"permissions.{section}.{key} in {path} is not a key Codex knows "
                f"({', '.join(keys)}); ignored."
            )
        sections[section] = body
    network = sections["network"]
    enabled = network.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        warn(f"permissions.network.enabled in {path} must be true or false, not {enabled!r}.")
        enabled = None
    return CodexPermissions(
        network=enabled,
        allowed_domains=_texts(network, "network", "allowed_domains", path, warn),
        denied_domains=_texts(network, "network", "denied_domains", path, warn),
        read=_texts(sections["file_system"], "file_system", "read", path, warn),
        write=_texts(sections["file_system"], "file_system", "write", path, warn),
        other={k: v for k, v in value.items() if k not in _SECTIONS},
    )


def _texts(
    section: Mapping[str, Any], name: str, key: str, path: str, warn: _Warn
) -> tuple[str, ...]:
    value = section.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        warn(f"permissions.{name}.{key} in {path} is text, read as a list of one; write a list.")
        value = [value]
    if not isinstance(value, list):
        warn(f"permissions.{name}.{key} in {path} is a {kind_of(value)}, not a list; ignored.")
        return ()
    kept = tuple(entry for entry in value if isinstance(entry, str))
    if len(kept) != len(value):
        warn(f"permissions.{name}.{key} in {path} has entries that are not text; ignored.")
    return kept
