"""What a skill needs from its environment: Codex `dependencies.tools[]` and `permissions`.

- `env_var` entries name an environment variable. It is looked up in the session's
  cache, then the environment, then (when the host gives a callback) asked of the
  user, marked secret. An answer lives only in the session's memory: it is never
  logged, written, put in a message, `inspect()`, JSON output or a `repr`.
- `mcp` entries name an MCP server. It is compared with the servers the host says it
  has (`Session(mcp_servers=...)`) and skillpack's own configured ones; a missing one
  is reported with what to add, and the host's callback may install it after its
  own approval.
- other entry types (Codex also knows `cli`, ...) are listed as declared, unchecked.
- the `permissions` profile is offered as declared; skillpack never applies it.

A skill whose dependencies are missing still loads: the report (and the load result)
says what is missing, and `skillpack list`/`show`/`deps` flag it.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from .._errors import UsageError
from .._model import CodexPermissions, Skill

DependencyState = Literal["present", "missing"]
EnvSource = Literal["session", "environment"]
McpSource = Literal["host", "config", "installed"]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, kw_only=True, slots=True)
class EnvVarDependency:
    """One environment variable a skill needs, and whether the session has it."""

    name: str
    description: str | None = None
    state: DependencyState = "missing"
    source: EnvSource | None = None
    """Where the value was found (the value itself is never kept here)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "env_var",
            "name": self.name,
            "description": self.description,
            "state": self.state,
            "source": self.source,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class McpDependency:
    """One MCP server a skill needs, and whether the host has it."""

    name: str
    description: str | None = None
    transport: str | None = None
    """`streamable_http`, `stdio`, ... as declared."""
    url: str | None = None
    command: str | None = None
    state: DependencyState = "missing"
    source: McpSource | None = None

    def config_snippet(self) -> str:
        """What to add to skillpack's `config.toml` for this server (TOML)."""
        lines = ["[[mcp_servers]]", f"name = {json.dumps(self.name)}"]
        if self.url:
            lines.append(f"url = {json.dumps(self.url)}")
        if self.command:
            lines.append(f"command = {json.dumps(self.command)}")
        return "\n".join(lines)

    def hint(self) -> str:
        """One sentence saying how to add the server."""
        where = self.url or self.command
        target = f" ({where})" if where else ""
        return (
            f"MCP server '{self.name}'{target} is not available. Add it to your agent's MCP "
            f"servers, or to skillpack's config.toml as:\n{self.config_snippet()}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "mcp",
            "name": self.name,
            "description": self.description,
            "transport": self.transport,
            "url": self.url,
            "command": self.command,
            "state": self.state,
            "source": self.source,
            "add": None if self.state == "present" else self.config_snippet(),
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class DeclaredDependencies:
    """A skill's `dependencies.tools[]`, sorted by type and checked for shape (pure)."""

    env_vars: tuple[EnvVarDependency, ...] = ()
    mcp_servers: tuple[McpDependency, ...] = ()
    other: tuple[Mapping[str, Any], ...] = ()
    """Entries of other types, as written (not checked)."""
    invalid: tuple[str, ...] = ()
    """One sentence per entry that could not be used, saying why."""


def declared_dependencies(skill: Skill) -> DeclaredDependencies:
    """The dependencies `skill` declares in its Codex sidecar, deduplicated."""
    codex = skill.codex
    if codex is None or not codex.tool_dependencies:
        return DeclaredDependencies()
    env: dict[str, EnvVarDependency] = {}
    mcp: dict[str, McpDependency] = {}
    other: list[Mapping[str, Any]] = []
    invalid: list[str] = []
    for entry in codex.tool_dependencies:
        kind = entry.get("type")
        value = entry.get("value")
        description = _text(entry.get("description"))
        if kind not in ("env_var", "mcp"):
            other.append(entry)
            continue
        if not isinstance(value, str) or not value.strip():
            invalid.append(f"A `{kind}` dependency of '{skill.name}' has no `value`; ignored.")
            continue
        value = value.strip()
        if kind == "env_var":
            if not _ENV_NAME.fullmatch(value):
                invalid.append(
                    f"`{value}` is not an environment variable name (letters, digits, `_`); "
                    f"the dependency of '{skill.name}' is ignored."
                )
                continue
            env.setdefault(value, EnvVarDependency(name=value, description=description))
        else:
            mcp.setdefault(
                value,
                McpDependency(
                    name=value,
                    description=description,
                    transport=_text(entry.get("transport")),
                    url=_text(entry.get("url")),
                    command=_text(entry.get("command")),
                ),
            )
    return DeclaredDependencies(
        env_vars=tuple(env.values()),
        mcp_servers=tuple(mcp.values()),
        other=tuple(other),
        invalid=tuple(invalid),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, kw_only=True, slots=True)
class DependencyReport:
    """Every dependency a skill declares and its state in one session.

    Holds no secret: an environment variable is reported present or missing, and
    where it was found, never its value.
    """

    skill: Skill
    env_vars: tuple[EnvVarDependency, ...] = ()
    mcp_servers: tuple[McpDependency, ...] = ()
    other: tuple[Mapping[str, Any], ...] = ()
    invalid: tuple[str, ...] = ()
    permissions: CodexPermissions | None = None
    """The skill's Codex permission profile: for the host to decide on, never applied."""

    @property
    def missing(self) -> tuple[dict[str, str], ...]:
        """`{"type", "name"}` of each missing env var and MCP server, in declared order."""
        return (
            *({"type": "env_var", "name": d.name} for d in self.env_vars if d.state == "missing"),
            *({"type": "mcp", "name": d.name} for d in self.mcp_servers if d.state == "missing"),
        )

    @property
    def satisfied(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.skill.name,
            "qualified_name": self.skill.qualified_name,
            "path": self.skill.path,
            "env_vars": [d.to_dict() for d in self.env_vars],
            "mcp_servers": [d.to_dict() for d in self.mcp_servers],
            "other": [dict(entry) for entry in self.other],
            "invalid": list(self.invalid),
            "permissions": None if self.permissions is None else self.permissions.to_dict(),
            "missing": list(self.missing),
        }


def check_dependencies(
    skill: Skill,
    *,
    cached: Callable[[str], bool],
    environment: Mapping[str, str],
    host_servers: Iterable[str] = (),
    config_servers: Iterable[str] = (),
    installed_servers: Iterable[str] = (),
) -> DependencyReport:
    """The state of every dependency `skill` declares, without asking anyone.

    Args:
        cached: Whether the session holds a value for a variable (asked earlier).
        environment: The environment to look variables up in.
        host_servers: MCP servers the host says it has.
        config_servers: MCP servers in skillpack's own config.
        installed_servers: MCP servers the host's callback installed this session.
    """
    declared = declared_dependencies(skill)
    env = []
    for dependency in declared.env_vars:
        source: EnvSource | None = None
        if cached(dependency.name):
            source = "session"
        elif environment.get(dependency.name):
            source = "environment"
        env.append(_with_state(dependency, source))
    sources: dict[str, McpSource] = {}
    for name in installed_servers:
        sources.setdefault(name, "installed")
    for name in config_servers:
        sources.setdefault(name, "config")
    for name in host_servers:
        sources[name] = "host"
    mcp = [_with_state(d, sources.get(d.name)) for d in declared.mcp_servers]
    codex = skill.codex
    return DependencyReport(
        skill=skill,
        env_vars=tuple(env),
        mcp_servers=tuple(mcp),
        other=declared.other,
        invalid=declared.invalid,
        permissions=None if codex is None else codex.permissions,
    )


def _with_state(dependency: Any, source: str | None) -> Any:
    state: DependencyState = "missing" if source is None else "present"
    return replace(dependency, state=state, source=source)


@dataclass(frozen=True, kw_only=True, slots=True)
class EnvVarRequest:
    """What the host's `env_prompt` callback is asked for: one variable's value."""

    skill: Skill
    name: str
    description: str | None = None
    secret: bool = True
    """Always True: the answer is a secret. Mask the input; never log or store it."""


EnvPrompt = Callable[[EnvVarRequest], str | None]
"""Asks the user for a variable's value; None (or "") when they decline."""

McpInstall = Callable[[Skill, McpDependency], bool]
"""Installs a missing MCP server after the host's own approval; True when it did."""


class DependencyResolver:
    """A session's dependency state: typed-in values, installed servers. Thread-safe.

    Values the user typed live here only, in memory; `repr` shows none of them.
    Questions go to the host one at a time (a human answers them); a variable the
    user declined, or an MCP server whose install was declined (or failed), is not
    asked again in the session (remember for the session).
    """

    def __init__(
        self,
        *,
        environment: Callable[[], Mapping[str, str]],
        prompt: EnvPrompt | None = None,
        host_servers: Iterable[str] = (),
        config_servers: Callable[[], Iterable[str]] = tuple,
        install: McpInstall | None = None,
    ) -> None:
        self._environment = environment
        self._prompt = prompt
        self._host_servers = tuple(host_servers)
        self._config_servers = config_servers
        self._install = install
        self._secrets: dict[str, str] = {}
        self._declined: set[str] = set()
        self._declined_servers: set[str] = set()
        self._installed: list[str] = []
        self._lock = threading.Lock()
        self._asking = threading.Lock()

    def __repr__(self) -> str:
        with self._lock:
            count = len(self._secrets)
        return f"<DependencyResolver holding {count} typed-in value(s)>"

    def report(self, skill: Skill) -> DependencyReport:
        """The state of `skill`'s dependencies now; asks nobody."""
        with self._lock:
            secrets = set(self._secrets)
            installed = tuple(self._installed)
        return check_dependencies(
            skill,
            cached=secrets.__contains__,
            environment=self._environment(),
            host_servers=self._host_servers,
            config_servers=self._config_servers(),
            installed_servers=installed,
        )

    def resolve(self, skill: Skill) -> DependencyReport:
        """`report`, after asking the host for what is missing (when it can ask)."""
        report = self.report(skill)
        if report.satisfied or (self._prompt is None and self._install is None):
            return report
        with self._asking:
            for dependency in self.report(skill).env_vars:
                if dependency.state == "missing" and self._prompt is not None:
                    self._ask_value(skill, dependency)
            for server in self.report(skill).mcp_servers:
                if server.state == "missing" and self._install is not None:
                    self._offer_install(skill, server)
        return self.report(skill)

    def _ask_value(self, skill: Skill, dependency: EnvVarDependency) -> None:
        assert self._prompt is not None
        with self._lock:
            if dependency.name in self._declined:
                return
        value = self._prompt(
            EnvVarRequest(skill=skill, name=dependency.name, description=dependency.description)
        )
        if value is not None and not isinstance(value, str):
            # The message names the type only: the value may be a secret.
            raise UsageError(
                f"The env_prompt callback returned a {type(value).__name__} for "
                f"{dependency.name}; it must return a string, or None to decline."
            )
        with self._lock:
            if value:
                self._secrets[dependency.name] = value
            else:
                self._declined.add(dependency.name)

    def _offer_install(self, skill: Skill, server: McpDependency) -> None:
        assert self._install is not None
        with self._lock:
            if server.name in self._declined_servers:
                return
        installed = self._install(skill, server) is True
        with self._lock:
            if installed:
                self._installed.append(server.name)
            else:
                self._declined_servers.add(server.name)

    def values(self, skill: Skill) -> dict[str, str]:
        """The values of `skill`'s declared variables that are known: typed-in ones
        first, then the environment. For the host to hand to the tools it runs."""
        environment = self._environment()
        values: dict[str, str] = {}
        with self._lock:
            for dependency in declared_dependencies(skill).env_vars:
                value = self._secrets.get(dependency.name) or environment.get(dependency.name)
                if value:
                    values[dependency.name] = value
        return values


def missing_dependencies(
    skill: Skill, environment: Mapping[str, str], servers: Iterable[str] = ()
) -> tuple[dict[str, str], ...]:
    """What `skill` declares and the environment (or `servers`) lacks, for listings.

    No session, no questions: variables come from `environment` only. A skill that
    declares nothing costs one attribute check.
    """
    if not skill.declares_dependencies:
        return ()
    return check_dependencies(
        skill, cached=lambda name: False, environment=environment, host_servers=servers
    ).missing
