"""Configuration files: the user's and the project's `config.toml`.

Two layers, read with the standard library's `tomllib` and merged user first, then
project (the project wins):

- user: `<user_config_dir()>/config.toml`;
- project: `<project root>/.skillpack/config.toml`.

Schema (every key optional)::

    multi_mention = "choose-one"       # or "all" (DESIGN §4)
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

A file that is not TOML, a wrong type or an unknown key is a `Problem`, never a
crash; the rest still applies. Writes (`set_skill_enabled`, `add_permission`) are
read-modify-write with every other key kept, and atomic (a temp file in the same
directory, fsync, `os.replace`). Comments are not kept by a rewrite: the writer
emits the parsed document.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import datetime
import errno
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .._errors import SkillIOError, UsageError
from .._limits import (
    BUDGET_CHARS,
    BUDGET_FRACTION,
    MAX_CONFIG_BYTES,
    MAX_DEPTH,
    MAX_DIRS,
    SEARCH_LIMIT,
    SEARCH_MAX_LIMIT,
)
from .._model import Problem, Skill
from .._paths import PROJECT_CONFIG_DIR, expand_home, home_dir, project_root, user_config_dir
from ..select._refs import SkillRefs
from ..select._rules import DECISIONS, Decision, PermissionRules
from ._lock import file_lock
from ._toml_writer import dumps_toml

MultiMention = Literal["choose-one", "all"]
"""What several skill mentions in one message do (DESIGN §4)."""

ConfigScope = Literal["user", "project"]
"""Which config file a write goes to."""

CONFIG_FILENAME = "config.toml"


# --- locations --------------------------------------------------------------------


def user_config_path() -> Path:
    """The user config file, `<user_config_dir()>/config.toml`."""
    return user_config_dir() / CONFIG_FILENAME


def project_config_path(cwd: str | os.PathLike[str] | None = None) -> Path:
    """The project config file, `<project root>/.skillpack/config.toml`."""
    return project_root(cwd) / PROJECT_CONFIG_DIR / CONFIG_FILENAME


# --- values -----------------------------------------------------------------------


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
    catalog_max_entries: int | None = None
    """`[catalog] max_entries`: the most entries the model's catalog lists (None: the
    character budget alone decides)."""
    budget_fraction: float = BUDGET_FRACTION
    """`[budget] context_window_fraction`: share of the context window for the catalog."""
    budget_chars: int = BUDGET_CHARS
    """`[budget] chars`: catalog budget when the context window is unknown."""
    max_depth: int = MAX_DEPTH
    """`[discovery] max_depth`: how deep below a root the walk goes."""
    max_dirs: int = MAX_DIRS
    """`[discovery] max_dirs`: directories visited per root at most."""
    permissions: PermissionRules = field(default_factory=PermissionRules)
    """`[permissions]` globs of every layer, with the file each came from."""
    mcp_servers: tuple[Mapping[str, Any], ...] = ()
    """`[[mcp_servers]]` entries (each has a `name`), user then project; a project entry
    replaces a user entry of the same name."""
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
            except _Invalid:
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
            },
            "catalog": {"max_entries": self.catalog_max_entries},
            "budget": {
                "context_window_fraction": self.budget_fraction,
                "chars": self.budget_chars,
            },
            "discovery": {"max_depth": self.max_depth, "max_dirs": self.max_dirs},
            "permissions": {d: list(self.permissions.globs(d)) for d in DECISIONS},
            "mcp_servers": [dict(server) for server in self.mcp_servers],
            "sources": list(self.sources),
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfigLayer:
    """What one config file sets: `Config` field names to values, only keys present."""

    path: str
    scope: ConfigScope
    values: Mapping[str, Any] = field(default_factory=dict)


# --- parsing (pure) ---------------------------------------------------------------

_TOML_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "float"),
    (str, "string"),
    (list, "array"),
    (dict, "table"),
    (datetime.datetime, "datetime"),
    (datetime.date, "date"),
    (datetime.time, "time"),
)


def _toml_type(value: object) -> str:
    for kind, name in _TOML_TYPE_NAMES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


_Check = Callable[[Any], Any]
"""Returns the typed value, or raises `_Invalid` naming the expected type."""


class _Invalid(Exception):
    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


def _string_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Invalid("an array of strings")
    return tuple(value)


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid("a boolean (true or false)")
    return value


def _server_list(value: Any) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, dict) and isinstance(v.get("name"), str) and v["name"].strip()
        for v in value
    ):
        raise _Invalid("an array of tables, each with a `name` string ([[mcp_servers]])")
    return tuple(value)


def _enabled_entries(value: Any) -> bool | tuple[str, ...]:
    """`[skills] enabled`: a boolean (the master switch) or entries overriding `disabled`."""
    if isinstance(value, bool):
        return value
    try:
        return _string_list(value)
    except _Invalid:
        raise _Invalid(
            "a boolean (false turns every skill off) or an array of strings (skills to "
            "re-enable)"
        ) from None


def _limit(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= SEARCH_MAX_LIMIT:
        raise _Invalid(f"an integer from 1 to {SEARCH_MAX_LIMIT}")
    return value


def _multi_mention(value: Any) -> str:
    if value not in ("choose-one", "all"):
        raise _Invalid('"choose-one" or "all"')
    return str(value)


def _fraction(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not 0 < value <= 1:
        raise _Invalid("a number greater than 0 and at most 1 (e.g. 0.02)")
    return float(value)


def _int_at_least(minimum: int) -> _Check:
    def check(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise _Invalid(f"an integer of at least {minimum}")
        return value

    return check


def mcp_host(entry: Mapping[str, Any]) -> McpServerConfig:
    """An `[[mcp_servers]]` entry as a server to connect to.

    Raises:
        _Invalid: the entry's `url`/`command` keys are not usable (the reason).
    """

    def need(ok: bool, what: str) -> None:
        if not ok:
            raise _Invalid(f"an [[mcp_servers]] table {what} (entry {entry.get('name')!r})")

    name = entry.get("name")
    need(isinstance(name, str) and bool(MCP_SERVER_NAME.match(name)),
         "whose `name` is 1-64 letters, digits, '-' or '_' (its skills' namespace)")
    command, url = entry.get("command"), entry.get("url")
    need((command is None) != (url is None), "with either `command` (stdio) or `url` (HTTP)")
    args = entry.get("args", [])
    need(isinstance(args, list) and all(isinstance(a, str) for a in args),
         "whose `args` is an array of strings")
    if isinstance(command, list):
        need(bool(command) and all(isinstance(c, str) for c in command),
             "whose `command` is a program or a non-empty array of strings")
        command, args = command[0], [*command[1:], *args]
    need(command is None or (isinstance(command, str) and bool(command.strip())),
         "whose `command` is a program or a non-empty array of strings")
    need(url is None or (isinstance(url, str) and url.startswith(("http://", "https://"))),
         "whose `url` starts with http:// or https://")
    env = entry.get("env", {})
    need(isinstance(env, dict) and all(isinstance(v, str) for v in env.values()),
         "whose `env` is a table of strings")
    for key in ("cwd", "token_file"):
        need(entry.get(key) is None or isinstance(entry.get(key), str), f"whose `{key}` is a path")
    need(url is not None or entry.get("token_file") is None, "with `token_file` only beside `url`")
    timeout = entry.get("timeout", 30)
    need(isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0,
         "whose `timeout` is a positive number of seconds")
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
_SCHEMA: Mapping[tuple[str, str], tuple[str, _Check]] = {
    ("", "multi_mention"): ("multi_mention", _multi_mention),
    ("", "roots"): ("roots", _string_list),
    ("", "repo_skills_dir"): ("repo_skills_dir", _boolean),
    ("", "mcp_servers"): ("mcp_servers", _server_list),
    ("skills", "disabled"): ("disabled", _string_list),
    ("skills", "enabled"): ("enabled", _enabled_entries),
    ("search", "default_limit"): ("search_default_limit", _limit),
    ("search", "max_limit"): ("search_max_limit", _limit),
    ("catalog", "max_entries"): ("catalog_max_entries", _int_at_least(1)),
    ("budget", "context_window_fraction"): ("budget_fraction", _fraction),
    ("budget", "chars"): ("budget_chars", _int_at_least(1)),
    ("discovery", "max_depth"): ("max_depth", _int_at_least(0)),
    ("discovery", "max_dirs"): ("max_dirs", _int_at_least(1)),
    ("permissions", "allow"): ("allow", _string_list),
    ("permissions", "deny"): ("deny", _string_list),
    ("permissions", "ask"): ("ask", _string_list),
}
_TABLES = frozenset(table for table, _ in _SCHEMA if table)
_SCALARS = (
    "multi_mention",
    "repo_skills_dir",
    "budget_fraction",
    "budget_chars",
    "max_depth",
    "max_dirs",
    "skills_enabled",
    "search_default_limit",
    "search_max_limit",
    "catalog_max_entries",
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

    def invalid(dotted: str, table: str, key: str, expected: str, got: Any) -> None:
        problems.append(
            Problem(
                path=path,
                severity="error",
                code="config-value-invalid",
                message=(
                    f"`{dotted}` in {path} must be {expected}, not {_toml_type(got)} "
                    f"{got!r}. Fix or remove it; the setting is ignored until then."
                ),
                field=dotted,
                line=_key_line(text, table, key),
            )
        )

    def unknown(dotted: str, table: str, key: str) -> None:
        known = ", ".join(sorted({f"{t}.{k}" if t else k for t, k in _SCHEMA}))
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="config-key-unknown",
                message=(
                    f"Unknown key `{dotted}` in {path}; it is kept but has no effect. "
                    f"Check its spelling; known keys: {known}."
                ),
                field=dotted,
                line=_key_line(text, table, key),
            )
        )

    def take(table: str, key: str, value: Any) -> None:
        dotted = f"{table}.{key}" if table else key
        spec = _SCHEMA.get((table, key))
        if spec is None:
            unknown(dotted, table, key)
            return
        name, check = spec
        try:
            checked = check(value)
        except _Invalid as error:
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
            except _Invalid as error:
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


# --- reading (I/O) ----------------------------------------------------------------

# O_NONBLOCK: a FIFO put where the config belongs opens at once (and is refused)
# instead of waiting for a writer; it does nothing to reads of a regular file.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _read_file(path: Path) -> bytes:
    """The bytes of a config file: a regular file of at most `MAX_CONFIG_BYTES`.

    Raises:
        FileNotFoundError: there is none.
        OSError: it cannot be read, is not a regular file (a FIFO, a device) or is
            over the limit (`strerror` says which).
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        parts = []
        total = 0
        while chunk := os.read(fd, MAX_CONFIG_BYTES + 1 - total):
            parts.append(chunk)
            total += len(chunk)
            if total > MAX_CONFIG_BYTES:
                raise OSError(errno.EFBIG, f"over the {MAX_CONFIG_BYTES}-byte limit", str(path))
        return b"".join(parts)
    finally:
        os.close(fd)


def _read_layer(
    path: Path, *, scope: ConfigScope, base: Path
) -> tuple[ConfigLayer | None, tuple[Problem, ...]]:
    try:
        data = _read_file(path)
    except FileNotFoundError:
        return None, ()
    except OSError as error:
        message = (
            f"Config file {path} cannot be read ({error.strerror or error}). "
            "Check its permissions; its settings are ignored meanwhile."
        )
        problem = Problem(
            path=str(path), severity="error", code="config-unreadable", message=message
        )
        return None, (problem,)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        message = (
            f"Config file {path} is not UTF-8 (byte {error.start}). Save it as UTF-8; "
            f"its settings are ignored meanwhile."
        )
        problem = Problem(path=str(path), severity="error", code="config-invalid", message=message)
        return None, (problem,)
    return parse_config(text, path=str(path), base=base, scope=scope)


def load_config(
    *, cwd: str | None = None, user: bool = True, project: bool = True
) -> tuple[Config, tuple[Problem, ...]]:
    """Read and merge the user config then the project config of `cwd`.

    Never raises for a bad file: it becomes a problem and the rest applies.
    """
    layers: list[ConfigLayer] = []
    problems: list[Problem] = []
    sources: list[tuple[Path, ConfigScope, Path]] = []
    if user:
        sources.append((user_config_path(), "user", home_dir()))
    if project:
        path = project_config_path(cwd)
        sources.append((path, "project", path.parent.parent))
    for path, scope, base in sources:
        layer, found = _read_layer(path, scope=scope, base=base)
        problems.extend(found)
        if layer is not None:
            layers.append(layer)
    config = merge_layers(layers)
    aliases = _real_path_aliases((*config.disabled, *config.enabled))
    if aliases:
        config = dataclasses.replace(config, path_aliases=aliases)
    return config, tuple(problems)


def _real_path_aliases(entries: Sequence[str]) -> dict[str, str]:
    """The real path of every absolute path entry that differs from it (a symlink)."""
    aliases: dict[str, str] = {}
    for entry in entries:
        if os.path.isabs(entry):
            real = os.path.realpath(entry)
            if real != entry:
                aliases[entry] = real
    return aliases


# --- writing ----------------------------------------------------------------------


def _read_for_update(path: Path) -> dict[str, Any]:
    try:
        text = _read_file(path).decode("utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as error:
        raise UsageError(
            f"Config file {path} is not UTF-8 (byte {error.start}); it was left unchanged. "
            f"Save it as UTF-8, then retry."
        ) from error
    except OSError as error:
        raise SkillIOError(
            f"Cannot read config file {path} ({error.strerror or error}). "
            "Check its permissions, then retry."
        ) from error
    try:
        import tomllib

        return tomllib.loads(text.removeprefix("\ufeff"))
    except ValueError as error:  # tomllib.TOMLDecodeError
        raise UsageError(
            f"Config file {path} is not valid TOML ({error}); it was left unchanged. "
            f"Fix the syntax or remove the file, then retry."
        ) from error


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; not possible on every platform (Windows).
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str, *, what: str = "config file") -> None:
    """Replace `path` with `text` atomically: the old file or the new, never half.

    `what` names the file in error messages ("config file", "skill file").

    Raises:
        SkillIOError: the directory or file could not be written; `path` is intact
            and no temp file is left behind.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile

        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise SkillIOError(
            f"Cannot create {path.parent} to write {path.name} ({error.strerror or error}). "
            "Check the directory's permissions, then retry."
        ) from error
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(error, OSError):
            raise SkillIOError(
                f"Cannot write {what} {path} ({error.strerror or error}); the old "
                f"file is unchanged. Check the disk and permissions, then retry."
            ) from error
        raise
    _fsync_dir(path.parent)


def _target(scope: ConfigScope, cwd: str | None) -> tuple[Path, Path]:
    if scope == "user":
        return user_config_path(), home_dir()
    if scope == "project":
        path = project_config_path(cwd)
        return path, path.parent.parent
    raise UsageError(f"Unknown config scope {scope!r}; use 'user' or 'project'.")


def _table(document: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    table = document.setdefault(key, {})
    if not isinstance(table, dict):
        raise UsageError(
            f"`{key}` in {path} must be a table, not {_toml_type(table)}; the file was "
            f"left unchanged. Fix it, then retry."
        )
    return table


def _entries(table: dict[str, Any], key: str, dotted: str, path: Path) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(
            f"`{dotted}` in {path} must be an array of strings, not {_toml_type(value)}; "
            f"the file was left unchanged. Fix it, then retry."
        )
    return list(value)


def _tail(entry: str) -> str:
    # The bare skill name an entry points at: a folder's name or the part after ':'.
    if os.path.isabs(entry):
        return os.path.basename(entry)
    return entry.rpartition(":")[2]


def _user_disables(entry: str) -> bool:
    """Whether the user config may disable what `entry` names (over-approximated:
    an extra `enabled` entry is harmless, a missing one leaves the skill off)."""
    try:
        document = _read_for_update(user_config_path())
    except (UsageError, SkillIOError):
        return True
    skills = document.get("skills")
    disabled = skills.get("disabled") if isinstance(skills, dict) else None
    if not isinstance(disabled, list):
        return False
    tail = _tail(entry)
    base = home_dir()
    return any(
        isinstance(e, str) and _tail(normalize_entry(e, base=base)) == tail for e in disabled
    )


def _update(path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    # Read, edit and write under the file's lock: two processes (or threads)
    # writing at once would each rewrite the file they read, losing the other's edit.
    with file_lock(path):
        document = _read_for_update(path)
        before = copy.deepcopy(document)
        edit(document)
        if document != before:
            write_atomic(path, dumps_toml(document))
    return path


def set_skill_enabled(
    name_or_path: str,
    enabled: bool,
    *,
    scope: ConfigScope = "user",
    cwd: str | None = None,
) -> Path:
    """Enable or disable a skill in the user or project config; returns the file.

    Disabling adds the entry to `[skills] disabled` (and drops it from `enabled`).
    Enabling drops it from `disabled`; in the project config it is also listed in
    `enabled` when the user config may disable it. A path is stored absolute
    (relative paths are taken from `cwd`). Nothing is written when nothing changes.

    Raises:
        UsageError: the existing file is not valid TOML or has a wrong-typed key
            (it is left unchanged).
        SkillIOError: the file could not be read or written.
    """
    if not name_or_path.strip():
        raise UsageError("A skill name or path is needed to enable or disable a skill.")
    path, base = _target(scope, cwd)
    entry = normalize_entry(name_or_path, base=cwd if cwd is not None else os.getcwd())
    add_enabled = enabled and scope == "project" and _user_disables(entry)

    def edit(document: dict[str, Any]) -> None:
        had_table = "skills" in document
        skills = _table(document, "skills", path)
        lists = {
            key: _entries(skills, key, f"skills.{key}", path) for key in ("disabled", "enabled")
        }
        remove_from, add_to = ("disabled", "enabled") if enabled else ("enabled", "disabled")
        kept = [e for e in lists[remove_from] if normalize_entry(e, base=base) != entry]
        if len(kept) != len(lists[remove_from]):
            skills[remove_from] = kept
        present = any(normalize_entry(e, base=base) == entry for e in lists[add_to])
        if (add_to == "disabled" or add_enabled) and not present:
            skills[add_to] = [*lists[add_to], entry]
        if not skills and not had_table:
            del document["skills"]

    return _update(path, edit)


def add_permission(
    glob: str,
    decision: Decision,
    *,
    scope: ConfigScope = "user",
    cwd: str | None = None,
) -> Path:
    """List `glob` under `[permissions] <decision>` (moved from the other two lists,
    so the newest decision holds); returns the file. No write when nothing changes.

    Raises:
        UsageError: empty glob, unknown decision, or an existing file that is not
            valid TOML or has a wrong-typed key (it is left unchanged).
        SkillIOError: the file could not be read or written.
    """
    if decision not in DECISIONS:
        raise UsageError(f"Unknown permission decision {decision!r}; use allow, deny or ask.")
    if not glob.strip():
        raise UsageError("A permission rule needs a non-empty skill name or glob.")
    path, _ = _target(scope, cwd)

    def edit(document: dict[str, Any]) -> None:
        had_table = "permissions" in document
        table = _table(document, "permissions", path)
        for other in DECISIONS:
            current = _entries(table, other, f"permissions.{other}", path)
            if other == decision:
                if glob not in current:
                    table[other] = [*current, glob]
            elif glob in current:
                table[other] = [g for g in current if g != glob]
        if not table and not had_table:
            del document["permissions"]

    return _update(path, edit)


def enable_decided_by(
    skill: Skill, *, cwd: str | None = None, user: bool = True
) -> Path | None:
    """The config file whose `[skills]` entry decides whether `skill` is enabled.

    Entries merge as in `merge_layers` (a later file's entry drops an equal earlier
    one); of the entries left, an `enabled` one naming the skill wins over a
    `disabled` one. The file of the last deciding entry is returned; None when no
    entry names the skill (enabled by default). A file that cannot be read decides
    nothing.
    """
    files: list[tuple[Path, ConfigScope, Path]] = []
    if user:
        files.append((user_config_path(), "user", home_dir()))
    project = project_config_path(cwd)
    files.append((project, "project", project.parent.parent))
    disabled: list[tuple[str, Path]] = []
    enabled: list[tuple[str, Path]] = []
    for path, scope, base in files:
        layer, _problems = _read_layer(path, scope=scope, base=base)
        if layer is None:
            continue
        layer_disabled: tuple[str, ...] = layer.values.get("disabled", ())
        layer_enabled: tuple[str, ...] = layer.values.get("enabled", ())
        disabled = [e for e in disabled if e[0] not in layer_enabled]
        disabled += [(e, path) for e in layer_disabled]
        enabled = [e for e in enabled if e[0] not in layer_disabled]
        enabled += [(e, path) for e in layer_enabled]
    for entries in (enabled, disabled):
        deciding = [
            path
            for entry, path in entries
            if SkillRefs.of((entry,), _real_path_aliases((entry,))).matches(skill)
        ]
        if deciding:
            return deciding[-1]
    return None
