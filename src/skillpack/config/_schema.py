"""The config's schema, pure: a file's text into a layer, layers into one `Config`.

Schema (every key optional)::

    multi_mention = "choose-one"       # or "all" (design rules: selecting skills)
    roots = ["~/my-skills"]            # extra roots; relative to the project root
                                       # (project file) or the home (user file)
    repo_skills_dir = false            # also walk <dir>/skills in the repo chain
    [skills]
    disabled = ["name", "plugin:name", "scope:name", "/path/to/skill"]
    enabled = ["..."]                  # undoes a disabled entry of an earlier layer
    [budget]
    context_window_fraction = 0.02     # share of the model's context window
    chars = 16000                      # when the window is unknown
    [discovery]
    max_depth = 6
    max_dirs = 2000
    folders_off = ["cursor"]           # families of default folders left out: agents,
                                       # claude, opencode, codex, copilot, gemini, cursor
    [permissions]
    allow = ["glob"]
    deny = ["glob"]
    ask = ["glob"]
    [[mcp_servers]]                    # MCP servers skillpack knows (a skill's `mcp`
    name = "github"                    # dependency is present when one has its name);
    url = "https://..."                # other keys are kept as written. One with a
    # token_file = "~/.github-token"   # `url` (streamable HTTP, optional bearer token
    # command = "docs-server"          # file) or a `command` (stdio: a program, or an
    # args = ["--stdio"]               # argv array, plus `args`, `env`, `cwd`) is also
    # env = { KEY = "value" }          # asked for the skills it publishes, which join
    # timeout = 30                     # scope `mcp` as `<name>:<skill>` (McpServerConfig)
    [auth]                             # the HTTP servers as an OAuth resource server
    jwks = "https://idp/.../certs"     # the issuer's keys: an https URL or a file
    issuer = "https://idp/realms/x"    # the tokens' `iss`
    audience = "https://skills.example/mcp"  # their `aud`; the resource's identifier
    required_scopes = ["skills.read"]  # every token must carry these
    [[auth.grant]]                     # who sees which skills (select._grants.Grant)
    claim = "groups"                   # dotted for nested claims (realm_access.roles)
    value = "finance"
    skills = ["finance-*", "public-*"]
    [server]                           # both HTTP servers
    allowed_hosts = ["lb.internal:8080"]  # Host names a balancer or proxy forwards
    from = "oci://ghcr.io/org/skills:stable"  # serve this OCI collection (`--from`)
    poll = 30                          # seconds between checks of its tag (`--poll`)

A file that is not TOML, a wrong type or an unknown key is a `Problem`, never a
crash; the rest still applies (`parse_config`). Layers merge user first, then
project: the project wins (`merge_layers`). Reading and writing the files is
`_files.py`'s.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._limits import (
    BUDGET_CHARS,
    BUDGET_FRACTION,
    MAX_DEPTH,
    MAX_DIRS,
    SEARCH_LIMIT,
    SEARCH_MAX_LIMIT,
    SUGGESTIONS,
)
from .._model import Problem, Skill
from .._paths import expand_home
from ..render._catalog import CatalogMode
from ..select._grants import Grant
from ..select._refs import SkillRefs
from ..select._rules import DECISIONS, Decision, PermissionRules
from ._checks import (
    Check,
    Invalid,
    boolean,
    catalog_mode,
    enabled_entries,
    families,
    fraction,
    grant_list,
    int_at_least,
    limit,
    multi_mention,
    non_empty_string,
    server_list,
    string_list,
    suggestion_count,
    toml_type,
)

MultiMention = Literal["choose-one", "all"]
"""What several skill mentions in one message do (design rules: selecting skills)."""

ConfigScope = Literal["user", "project"]
"""Which config file a write goes to."""


def _looks_like_path(entry: str) -> bool:
    return "/" in entry or os.sep in entry or entry.startswith(("~", "."))


def normalize_entry(entry: str, *, base: str | os.PathLike[str]) -> str:
    """An enable/disable entry in canonical form.

    Names and qualified names are kept (stripped). Paths expand `~`, resolve
    against `base`, and a path to a `SKILL.md` becomes its folder.
    """
    entry = entry.strip()
    if not _looks_like_path(entry):
        return entry
    path = os.path.normpath(os.path.join(base, expand_home(entry)))
    if os.path.basename(path) == "SKILL.md":
        path = os.path.dirname(path)
    return path


MCP_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""A server label: it names the skills' namespace (`<server>:<name>`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerConfig:
    """One `[[mcp_servers]]` entry: an MCP server whose skills join scope `mcp`."""

    name: str
    """The label, and the namespace of its skills (`<name>:<skill>`)."""
    command: str | None = None
    """stdio: the program to start (with `args`, and `env` added to a minimal
    environment, in `cwd`)."""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    """Streamable HTTP: the server's endpoint (`http://` or `https://`)."""
    token_file: str | None = None
    """HTTP: a file holding the bearer token (absolute once loaded)."""
    timeout: float = 30.0
    """Seconds one request to the server may take."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    """The merged configuration (defaults, then the user file, then the project's)."""

    multi_mention: MultiMention = "choose-one"
    """`choose-one` (the default) or `all`: what several mentions activate."""
    roots: tuple[str, ...] = ()
    """Extra skill roots, absolute; project roots first, then the user's."""
    repo_skills_dir: bool = False
    """Also walk `<dir>/skills` for every directory of the repo chain."""
    disabled: tuple[str, ...] = ()
    """Disabled skills: names, qualified names or absolute folder paths."""
    enabled: tuple[str, ...] = ()
    """Entries that override `disabled` (a project re-enabling a user's choice)."""
    skills_enabled: bool = True
    """`[skills] enabled = false` turns every skill off (`enabled` as a boolean)."""
    search_default_limit: int = SEARCH_LIMIT
    """`[search] default_limit`: results of a search that names no limit."""
    search_max_limit: int = SEARCH_MAX_LIMIT
    """`[search] max_limit`: the most results one search may ask for (at most 50)."""
    search_suggestions: int = SUGGESTIONS
    """`[search] suggestions`: the most skills a turn suggests (0 turns them off)."""
    catalog_max_entries: int | None = None
    """`[catalog] max_entries`: the most entries the model's catalog lists (None: the
    character budget alone decides)."""
    catalog_mode: CatalogMode = "auto"
    """`[catalog] mode`: `auto` (a deferred stub when not even every name fits),
    `full` (never the stub) or `deferred` (always the stub)."""
    budget_fraction: float = BUDGET_FRACTION
    """`[budget] context_window_fraction`: share of the context window for the catalog."""
    budget_chars: int = BUDGET_CHARS
    """`[budget] chars`: catalog budget when the context window is unknown."""
    max_depth: int = MAX_DEPTH
    """`[discovery] max_depth`: how deep below a root the walk goes."""
    max_dirs: int = MAX_DIRS
    """`[discovery] max_dirs`: directories visited per root at most."""
    folders_off: tuple[str, ...] = ()
    """`[discovery] folders_off`: families of default folders not searched (`.github/skills`
    and `~/.copilot/skills` are `copilot`'s; `_paths.FAMILIES`)."""
    permissions: PermissionRules = field(default_factory=PermissionRules)
    """`[permissions]` globs of every layer, with the file each came from."""
    mcp_servers: tuple[Mapping[str, Any], ...] = ()
    """`[[mcp_servers]]` entries (each has a `name`), user then project; a project entry
    replaces a user entry of the same name."""
    auth_jwks: str | None = None
    """`[auth] jwks`: the token issuer's keys, an `https://` URL or a file (absolute)."""
    auth_issuer: str | None = None
    """`[auth] issuer`: the `iss` every token must carry."""
    auth_audience: str | None = None
    """`[auth] audience`: the `aud` every token must hold (this server's identifier)."""
    auth_required_scopes: tuple[str, ...] = ()
    """`[auth] required_scopes`: scopes every token must carry."""
    auth_grants: tuple[Grant, ...] = ()
    """`[[auth.grant]]`: which skills a token's claims open (none: every skill)."""
    server_allowed_hosts: tuple[str, ...] = ()
    """`[server] allowed_hosts`: `HOST[:PORT]` names a balancer or proxy forwards, which
    the HTTP servers accept beside loopback (`--allowed-host` adds to them)."""
    server_from: str | None = None
    """`[server] from`: the OCI collection the HTTP servers serve (`--from` wins)."""
    server_poll: int | None = None
    """`[server] poll`: seconds between checks of its tag (`--poll` wins)."""
    sources: tuple[str, ...] = ()
    """The config files that were read, in merge order."""
    path_aliases: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    """Real paths of path entries that are symlinks (filled by `load_config`), so a
    skill reached through the link or its target matches the entry either way."""
    _disabled_refs: SkillRefs = field(init=False, repr=False, compare=False, hash=False)
    _enabled_refs: SkillRefs = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_disabled_refs", SkillRefs.of(self.disabled, self.path_aliases))
        object.__setattr__(self, "_enabled_refs", SkillRefs.of(self.enabled, self.path_aliases))

    @property
    def enables_all(self) -> bool:
        """Whether every skill is enabled: skills are on and no `disabled` entry is set."""
        return self.skills_enabled and not self.disabled

    def is_enabled(self, skill: Skill) -> bool:
        """False when skills are turned off (`[skills] enabled = false`), or when a
        `disabled` entry names the skill and no `enabled` entry does.

        Entries match the name, the qualified id (`select._refs.ref_names`), or the
        skill's folder / SKILL.md path (as discovered or real).
        """
        if not self.skills_enabled:
            return False
        if not self._disabled_refs.matches(skill):
            return True
        return self._enabled_refs.matches(skill)

    @property
    def mcp_hosts(self) -> tuple[McpServerConfig, ...]:
        """The `[[mcp_servers]]` entries skillpack can connect to (a `url` or a
        `command`), typed; entries naming a server only, or malformed (reported when
        the file was read), are left out."""
        hosts = []
        for entry in self.mcp_servers:
            if entry.get("url") is None and entry.get("command") is None:
                continue
            try:
                hosts.append(mcp_host(entry))
            except Invalid:
                continue
        return tuple(hosts)

    def to_dict(self) -> dict[str, Any]:
        """The merged values in the file schema's shape (for JSON surfaces)."""
        return {
            "multi_mention": self.multi_mention,
            "roots": list(self.roots),
            "repo_skills_dir": self.repo_skills_dir,
            "skills": {
                "disabled": list(self.disabled),
                "enabled": list(self.enabled),
                "on": self.skills_enabled,
            },
            "search": {
                "default_limit": self.search_default_limit,
                "max_limit": self.search_max_limit,
                "suggestions": self.search_suggestions,
            },
            "catalog": {"max_entries": self.catalog_max_entries, "mode": self.catalog_mode},
            "budget": {
                "context_window_fraction": self.budget_fraction,
                "chars": self.budget_chars,
            },
            "discovery": {
                "max_depth": self.max_depth,
                "max_dirs": self.max_dirs,
                "folders_off": list(self.folders_off),
            },
            "permissions": {d: list(self.permissions.globs(d)) for d in DECISIONS},
            "mcp_servers": [dict(server) for server in self.mcp_servers],
            "auth": {
                "jwks": self.auth_jwks,
                "issuer": self.auth_issuer,
                "audience": self.auth_audience,
                "required_scopes": list(self.auth_required_scopes),
                "grant": [
                    {"claim": g.claim, "value": g.value, "skills": list(g.skills)}
                    for g in self.auth_grants
                ],
            },
            "server": {
                "allowed_hosts": list(self.server_allowed_hosts),
                "from": self.server_from,
                "poll": self.server_poll,
            },
            "sources": list(self.sources),
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfigLayer:
    """What one config file sets: `Config` field names to values, only keys present."""

    path: str
    scope: ConfigScope
    values: Mapping[str, Any] = field(default_factory=dict)


def mcp_host(entry: Mapping[str, Any]) -> McpServerConfig:
    """An `[[mcp_servers]]` entry as a server to connect to.

    Raises:
        Invalid: the entry's `url`/`command` keys are not usable (the reason).
    """

    def need(ok: bool, what: str) -> None:
        if not ok:
            raise Invalid(f"an [[mcp_servers]] table {what} (entry {entry.get('name')!r})")

    name = entry.get("name")
    need(
        isinstance(name, str) and bool(MCP_SERVER_NAME.match(name)),
        "whose `name` is 1-64 letters, digits, '-' or '_' (its skills' namespace)",
    )
    command, url = entry.get("command"), entry.get("url")
    need((command is None) != (url is None), "with either `command` (stdio) or `url` (HTTP)")
    args = entry.get("args", [])
    need(
        isinstance(args, list) and all(isinstance(a, str) for a in args),
        "whose `args` is an array of strings",
    )
    if isinstance(command, list):
        need(
            bool(command) and all(isinstance(c, str) for c in command),
            "whose `command` is a program or a non-empty array of strings",
        )
        command, args = command[0], [*command[1:], *args]
    need(
        command is None or (isinstance(command, str) and bool(command.strip())),
        "whose `command` is a program or a non-empty array of strings",
    )
    need(
        url is None or (isinstance(url, str) and url.startswith(("http://", "https://"))),
        "whose `url` starts with http:// or https://",
    )
    env = entry.get("env", {})
    need(
        isinstance(env, dict) and all(isinstance(v, str) for v in env.values()),
        "whose `env` is a table of strings",
    )
    for key in ("cwd", "token_file"):
        need(entry.get(key) is None or isinstance(entry.get(key), str), f"whose `{key}` is a path")
    need(url is not None or entry.get("token_file") is None, "with `token_file` only beside `url`")
    timeout = entry.get("timeout", 30)
    need(
        isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0,
        "whose `timeout` is a positive number of seconds",
    )
    return McpServerConfig(
        name=str(name),
        command=command,
        args=tuple(args),
        env=dict(env),
        cwd=entry.get("cwd"),
        url=url,
        token_file=entry.get("token_file"),
        timeout=float(timeout),
    )


# (table or "", key) -> (Config field, check). The table names in `_TABLES`.
_SCHEMA: Mapping[tuple[str, str], tuple[str, Check]] = {
    ("", "multi_mention"): ("multi_mention", multi_mention),
    ("", "roots"): ("roots", string_list),
    ("", "repo_skills_dir"): ("repo_skills_dir", boolean),
    ("", "mcp_servers"): ("mcp_servers", server_list),
    ("skills", "disabled"): ("disabled", string_list),
    ("skills", "enabled"): ("enabled", enabled_entries),
    ("search", "default_limit"): ("search_default_limit", limit),
    ("search", "max_limit"): ("search_max_limit", limit),
    ("search", "suggestions"): ("search_suggestions", suggestion_count),
    ("catalog", "max_entries"): ("catalog_max_entries", int_at_least(1)),
    ("catalog", "mode"): ("catalog_mode", catalog_mode),
    ("budget", "context_window_fraction"): ("budget_fraction", fraction),
    ("budget", "chars"): ("budget_chars", int_at_least(1)),
    ("discovery", "max_depth"): ("max_depth", int_at_least(0)),
    ("discovery", "max_dirs"): ("max_dirs", int_at_least(1)),
    ("discovery", "folders_off"): ("folders_off", families),
    ("permissions", "allow"): ("allow", string_list),
    ("permissions", "deny"): ("deny", string_list),
    ("permissions", "ask"): ("ask", string_list),
    ("auth", "jwks"): ("auth_jwks", non_empty_string),
    ("auth", "issuer"): ("auth_issuer", non_empty_string),
    ("auth", "audience"): ("auth_audience", non_empty_string),
    ("auth", "required_scopes"): ("auth_required_scopes", string_list),
    ("auth", "grant"): ("auth_grants", grant_list),
    ("server", "allowed_hosts"): ("server_allowed_hosts", string_list),
    ("server", "from"): ("server_from", non_empty_string),
    ("server", "poll"): ("server_poll", int_at_least(1)),
}
_TABLES = frozenset(table for table, _ in _SCHEMA if table)
_SCALARS = (
    "multi_mention",
    "repo_skills_dir",
    "budget_fraction",
    "budget_chars",
    "max_depth",
    "max_dirs",
    "folders_off",
    "skills_enabled",
    "search_default_limit",
    "search_max_limit",
    "search_suggestions",
    "catalog_max_entries",
    "catalog_mode",
    "auth_jwks",
    "auth_issuer",
    "auth_audience",
    "auth_required_scopes",
    "auth_grants",
    "server_allowed_hosts",
    "server_from",
    "server_poll",
)
_HEADER = re.compile(r"^\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")


def _key_line(text: str, table: str, key: str) -> int | None:
    """Best-effort 1-based line of `key` inside `[table]` (or the top level)."""
    current = ""
    assignment = re.compile(rf"^(['\"]?){re.escape(key)}\1\s*=")
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            header = _HEADER.match(stripped)
            current = header.group(1).strip("\"'") if header else "[["
            continue
        if current == table and assignment.match(stripped):
            return number
        if not table and stripped.startswith(f"{key}."):
            return number
    return None


def _decode_error_line(error: ValueError, text: str) -> int:
    found = re.search(r"line (\d+)", str(error))
    if found:
        return int(found.group(1))
    # "at end of document": the last line is where the reader gave up.
    return max(1, len(text.splitlines()))


def parse_config(
    text: str, *, path: str, base: str | os.PathLike[str], scope: ConfigScope = "user"
) -> tuple[ConfigLayer, tuple[Problem, ...]]:
    """Parse one config file's text into a layer plus problems (pure).

    Relative roots, path entries and path globs resolve against `base` (the home
    for the user file, the project root for the project's).
    """
    text = text.removeprefix("\ufeff")
    try:
        import tomllib  # only when a config file exists: most runs have none

        data = tomllib.loads(text)
    except ValueError as error:  # tomllib.TOMLDecodeError
        line = _decode_error_line(error, text)
        message = (
            f"Config file {path} is not valid TOML: {error} (line {line}). "
            f"None of its settings apply; fix the syntax (https://toml.io) or remove "
            f"the file."
        )
        problem = Problem(
            path=path, severity="error", code="config-invalid", message=message, line=line
        )
        return ConfigLayer(path=path, scope=scope), (problem,)

    problems: list[Problem] = []
    values: dict[str, Any] = {}

    def report(dotted: str, table: str, key: str, *, unknown: bool, message: str) -> None:
        problems.append(
            Problem(
                path=path,
                severity="warning" if unknown else "error",
                code="config-key-unknown" if unknown else "config-value-invalid",
                message=message,
                field=dotted,
                line=_key_line(text, table, key),
            )
        )

    def invalid(dotted: str, table: str, key: str, expected: str, got: Any) -> None:
        message = (
            f"`{dotted}` in {path} must be {expected}, not {toml_type(got)} "
            f"{got!r}. Fix or remove it; the setting is ignored until then."
        )
        report(dotted, table, key, unknown=False, message=message)

    def unknown(dotted: str, table: str, key: str) -> None:
        known = ", ".join(sorted({f"{t}.{k}" if t else k for t, k in _SCHEMA}))
        message = (
            f"Unknown key `{dotted}` in {path}; it is kept but has no effect. "
            f"Check its spelling; known keys: {known}."
        )
        report(dotted, table, key, unknown=True, message=message)

    def take(table: str, key: str, value: Any) -> None:
        dotted = f"{table}.{key}" if table else key
        spec = _SCHEMA.get((table, key))
        if spec is None:
            unknown(dotted, table, key)
            return
        name, check = spec
        try:
            checked = check(value)
        except Invalid as error:
            invalid(dotted, table, key, error.expected, value)
            return
        if name == "enabled" and isinstance(checked, bool):
            name = "skills_enabled"  # `[skills] enabled = false`: the master switch
        values[name] = checked

    for key, value in data.items():
        if key in _TABLES:
            if not isinstance(value, dict):
                invalid(key, "", key, "a table", value)
                continue
            for sub, sub_value in value.items():
                take(key, sub, sub_value)
        else:
            take("", key, value)
    for entry in values.get("mcp_servers", ()):
        # An entry skillpack would connect to must be usable as one; it still counts
        # as a configured server name either way.
        if entry.get("url") is not None or entry.get("command") is not None:
            try:
                mcp_host(entry)
            except Invalid as error:
                invalid("mcp_servers", "", "mcp_servers", error.expected, entry)

    values = _resolve_paths(values, path=path, base=base)
    return ConfigLayer(path=path, scope=scope, values=values), tuple(problems)


def _resolve_paths(
    values: dict[str, Any], *, path: str, base: str | os.PathLike[str]
) -> dict[str, Any]:
    resolved = dict(values)
    if "roots" in resolved:
        resolved["roots"] = tuple(
            os.path.normpath(os.path.join(base, expand_home(root))) for root in values["roots"]
        )
    for name in ("disabled", "enabled"):
        if name in resolved:
            resolved[name] = tuple(
                dict.fromkeys(normalize_entry(e, base=base) for e in values[name])
            )
    jwks = resolved.get("auth_jwks")
    if jwks is not None and not jwks.startswith(("https://", "http://")):
        resolved["auth_jwks"] = _resolve_path(jwks, base)
    if "mcp_servers" in resolved:
        resolved["mcp_servers"] = tuple(
            {
                key: _resolve_path(value, base)
                if key in ("cwd", "token_file") and isinstance(value, str)
                else value
                for key, value in server.items()
            }
            for server in values["mcp_servers"]
        )
    rules: dict[Decision, tuple[str, ...]] = {}
    for decision in DECISIONS:
        globs = resolved.pop(decision, None)
        if globs is not None:
            rules[decision] = tuple(dict.fromkeys(_resolve_glob(glob, base=base) for glob in globs))
    if rules:
        resolved["permissions"] = PermissionRules(
            allow=rules.get("allow", ()),
            deny=rules.get("deny", ()),
            ask=rules.get("ask", ()),
            origins={(d, g): path for d, globs in rules.items() for g in globs},
        )
    return resolved


def _resolve_path(path: str, base: str | os.PathLike[str]) -> str:
    return os.path.normpath(os.path.join(base, expand_home(path)))


def _resolve_glob(glob: str, *, base: str | os.PathLike[str]) -> str:
    # Name globs stay as written; path globs become absolute like every other path.
    if "/" not in glob and os.sep not in glob:
        return glob
    return os.path.normpath(os.path.join(base, expand_home(glob)))


def merge_layers(layers: Sequence[ConfigLayer]) -> Config:
    """Merge layers in order (later wins).

    Scalars: the last layer setting one wins. `roots`: later layers' first.
    `enabled` of a layer drops equal `disabled` entries of earlier layers, and its
    `disabled` drops equal earlier `enabled` entries. Permission lists concatenate.
    """
    scalars: dict[str, Any] = {}
    roots: tuple[str, ...] = ()
    disabled: list[str] = []
    enabled: list[str] = []
    permissions = PermissionRules()
    servers: dict[str, Mapping[str, Any]] = {}
    for layer in layers:
        values = layer.values
        servers.update((server["name"], server) for server in values.get("mcp_servers", ()))
        scalars.update((name, values[name]) for name in _SCALARS if name in values)
        roots = (*values.get("roots", ()), *roots)
        layer_enabled: tuple[str, ...] = values.get("enabled", ())
        layer_disabled: tuple[str, ...] = values.get("disabled", ())
        disabled = [e for e in disabled if e not in layer_enabled] + list(layer_disabled)
        enabled = [e for e in enabled if e not in layer_disabled] + list(layer_enabled)
        if "permissions" in values:
            permissions = permissions.merged(values["permissions"])
    return Config(
        **scalars,
        roots=tuple(dict.fromkeys(roots)),
        disabled=tuple(dict.fromkeys(disabled)),
        enabled=tuple(dict.fromkeys(enabled)),
        permissions=permissions,
        mcp_servers=tuple(servers.values()),
        sources=tuple(layer.path for layer in layers),
    )
