"""Values shared by every layer: skills, problems, roots and the catalog.

Everything here is a frozen, keyword-only dataclass. Nothing here touches the
filesystem; the discovery layer builds these values, every other layer reads them.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeGuard

SKILL_FILE: Final = "SKILL.md"
"""The file that makes a folder a skill."""

DIGEST_PREFIX: Final = "sha256:"
DIGEST_PATTERN: Final = re.compile(r"sha256:[0-9a-f]{64}")
"""How a file's digest is written everywhere: `sha256:` and 64 lowercase hex digits."""


def sha256_digest(data: bytes) -> str:
    """`sha256:<64 lowercase hex>` of `data` (the one digest helper)."""
    import hashlib  # 4 ms to import: only digests need it

    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest()


def is_digest(value: object) -> TypeGuard[str]:
    """True for a well-formed `sha256:<64 lowercase hex>` string."""
    return isinstance(value, str) and DIGEST_PATTERN.fullmatch(value) is not None


Scope = Literal["admin", "repo", "extra", "user", "system", "mcp"]
"""Where a skill was found; earlier in `SCOPES` means higher precedence. `mcp`: published
by a configured MCP server (`[[mcp_servers]]`), lowest, so it never shadows a local skill."""

SCOPES: tuple[Scope, ...] = ("admin", "repo", "extra", "user", "system", "mcp")
SCOPE_RANK: Mapping[str, int] = {scope: rank for rank, scope in enumerate(SCOPES)}

Severity = Literal["error", "warning"]
RootKind = Literal["skills", "commands"]
"""What a root holds: skill folders, or Claude Code's legacy command files (`**/*.md`)."""
Context = Literal["inline", "fork"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Problem:
    """One thing wrong with a skill file, a root or the index.

    `code` is stable (tests and tools match on it); `message` says what is wrong,
    where, and how to fix it.
    """

    path: str
    """The file or directory the problem is about (absolute when known)."""
    severity: Severity
    """`error`: the skill is not loaded. `warning`: loaded, but reported."""
    code: str
    """Stable kebab-case identifier such as `name-mismatch` or `yaml-invalid`."""
    message: str
    """Human sentence: what, where, and how to fix it."""
    field: str | None = None
    """The frontmatter field concerned, when there is one."""
    line: int | None = None
    """1-based line number in the file, when known."""
    agents: Mapping[str, str] = dataclasses.field(default_factory=dict, hash=False)
    """What an agent does differently with this file, by agent (`codex`, `opencode`):
    e.g. `{"codex": "rejects: byte-order mark before ---"}`. Empty when every agent
    reads it as skillpack does; `validate --strict` fails on a non-empty one."""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }
        if self.field is not None:
            data["field"] = self.field
        if self.line is not None:
            data["line"] = self.line
        if self.agents:
            data["agents"] = dict(self.agents)
        return data


@dataclass(frozen=True, kw_only=True, slots=True)
class CodexPermissions:
    """The `permissions` profile of a Codex sidecar: what the skill asks the host for.

    skillpack never applies it: it is shown (`skillpack show`, `deps`) and offered to
    the host (`Session.dependencies`), which decides, as with `allowed-tools`.
    """

    network: bool | None = None
    """`network.enabled`: the skill needs network access (None: not said)."""
    allowed_domains: tuple[str, ...] = ()
    """`network.allowed_domains`, as written."""
    denied_domains: tuple[str, ...] = ()
    """`network.denied_domains`, as written."""
    read: tuple[str, ...] = ()
    """`file_system.read`: paths the skill reads, as written (relative to its folder)."""
    write: tuple[str, ...] = ()
    """`file_system.write`: paths the skill writes, as written."""
    other: Mapping[str, Any] = field(default_factory=dict)
    """Every other key (`macos`, ...), verbatim and JSON-safe."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; `from_dict` inverts it."""
        return {
            "network": self.network,
            "allowed_domains": list(self.allowed_domains),
            "denied_domains": list(self.denied_domains),
            "read": list(self.read),
            "write": list(self.write),
            "other": dict(self.other),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CodexPermissions:
        return cls(
            network=data.get("network"),
            allowed_domains=tuple(data.get("allowed_domains") or ()),
            denied_domains=tuple(data.get("denied_domains") or ()),
            read=tuple(data.get("read") or ()),
            write=tuple(data.get("write") or ()),
            other=dict(data.get("other") or {}),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class CodexMetadata:
    """The Codex sidecar file `agents/openai.yaml` beside a SKILL.md."""

    interface: Mapping[str, Any] = field(default_factory=dict)
    """Display hints (`display_name`, `short_description`, `icon_small`, ...)."""
    tool_dependencies: tuple[Mapping[str, Any], ...] = ()
    """`dependencies.tools[]` entries (`type: env_var` / `type: mcp`, ...)."""
    allow_implicit_invocation: bool | None = None
    """`policy.allow_implicit_invocation`; False hides the skill from the model."""
    permissions: CodexPermissions | None = None
    """The `permissions` profile, offered to the host and never applied silently."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillLocation:
    """Where discovery found a SKILL.md: the parser copies it into the `Skill`."""

    dir: str | None = None
    """The skill's folder as discovered; None: the folder holding the SKILL.md."""
    real_path: str = ""
    """Real path of the SKILL.md (symlinks resolved)."""
    scope: Scope = "extra"
    rank: int = 0
    """Precedence inside the scope; lower wins."""
    root: str = ""
    """The discovery root it was found under."""
    plugin: str | None = None
    """Plugin namespace, when found inside a plugin folder."""
    mtime_ns: int = 0
    size: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class Skill:
    """One parsed skill: frontmatter typed, body not held (read on demand)."""

    name: str
    """Effective name: the frontmatter `name`, or the directory name when missing."""
    description: str
    path: str
    """Absolute path of the SKILL.md as discovered."""
    dir: str
    """Absolute path of the skill directory (parent of `path`)."""
    real_path: str = ""
    """Real path of the SKILL.md (symlinks resolved): the skill's identity."""
    scope: Scope = "extra"
    rank: int = 0
    """Precedence inside the scope (repo: 0 is nearest to cwd); lower wins."""
    root: str = ""
    """The discovery root this skill was found under."""
    plugin: str | None = None
    """Plugin namespace (`<plugin>:<name>`) when found inside a plugin folder."""
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] | None = None
    disable_model_invocation: bool = False
    user_invocable: bool = True
    argument_hint: str | None = None
    arguments: tuple[str, ...] = ()
    """Named positional arguments (`arguments:` frontmatter), in order."""
    context: Context = "inline"
    agent: str | None = None
    model: str | None = None
    when_to_use: str | None = None
    hooks: Mapping[str, Any] | None = None
    paths: tuple[str, ...] = ()
    """`paths:` globs: the skill joins the model's catalog once a noted file matches."""
    version: str | None = None
    dependencies: tuple[str, ...] = ()
    """`dependencies:` the other skills (names or qualified ids) this one builds on."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Unknown frontmatter keys, verbatim."""
    frontmatter: Mapping[str, Any] = field(default_factory=dict)
    """The parsed frontmatter mapping as written (after the one YAML retry)."""
    codex: CodexMetadata | None = None
    body_lines: int = 0
    body_chars: int = 0
    mtime_ns: int = 0
    size: int = 0
    shadowed_by: str | None = None
    """Path of the higher-precedence skill of the same name, when shadowed."""

    @property
    def qualified_name(self) -> str:
        """`<plugin>:<name>` for plugin skills, else `<scope>:<name>`.

        The one qualified id of the skill: `Catalog.qualified` matches exactly this,
        so `<scope>:<name>` names only the skills of that scope outside plugins.
        """
        return f"{self.plugin or self.scope}:{self.name}"

    @property
    def model_invocable(self) -> bool:
        if self.disable_model_invocation:
            return False
        return not (self.codex is not None and self.codex.allow_implicit_invocation is False)

    @property
    def declares_dependencies(self) -> bool:
        """Its Codex sidecar lists tool dependencies (env vars, MCP servers, CLIs)."""
        return self.codex is not None and bool(self.codex.tool_dependencies)

    @property
    def legacy_command(self) -> bool:
        """A Claude Code command file (`.claude/commands/**/<name>.md`), not a SKILL.md."""
        return not self.path.endswith("SKILL.md")

    @property
    def key(self) -> str:
        """Identity of the skill: the real path of its SKILL.md."""
        return self.real_path or self.path


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillFile:
    """One file a skill serves, with the size and digest of its bytes (never its text)."""

    path: str
    """Relative POSIX path inside the skill folder (`SKILL.md`, `references/a.md`)."""
    size: int
    """Length of the file's bytes."""
    digest: str
    """`sha256:` and the 64 lowercase hex digits of the SHA-256 of those bytes."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Root:
    """A directory skills are discovered under."""

    path: str
    scope: Scope
    rank: int = 0
    """Precedence inside the scope (repo: 0 is nearest to cwd); lower wins."""
    plugin: str | None = None
    follow_symlinks: bool = True
    kind: RootKind = "skills"
    """`commands`: every `*.md` below is a legacy command, loaded as a skill."""
    agents: tuple[str, ...] = ()
    """The agents that read this folder too (`codex`, `copilot`, ...): set on the
    default roots (`_paths.agents_reading`), () on roots given or configured."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "scope": self.scope,
            "kind": self.kind,
            "agents": list(self.agents),
        }


def precedence(skill: Skill) -> tuple[int, int]:
    """Sort key for "who wins a bare name": scope rank, then rank in scope."""
    return (SCOPE_RANK[skill.scope], skill.rank)


def best_of(skills: Iterable[Skill]) -> tuple[Skill, ...]:
    """The skills of highest precedence, in their given order: "best precedence wins".

    One skill: it wins and the others are shadowed. Several: they tie, and a bare
    name naming them is ambiguous. The one rule behind `Catalog.winners`, the
    resolver and the collision pass.
    """
    candidates = tuple(skills)
    if len(candidates) <= 1:
        return candidates
    best = min(map(precedence, candidates))
    return tuple(s for s in candidates if precedence(s) == best)


def in_plugin(skill: Skill) -> bool:
    """A plugin's skill, namespaced `<plugin>:<name>` (not an `[[mcp_servers]]` skill,
    whose `plugin` holds the server label and whose bare name still counts)."""
    return skill.plugin is not None and skill.scope != "mcp"


def listed_name(skill: Skill) -> str:
    """The name a model is shown for `skill` (catalog, search, suggestions): a
    plugin's skill under its qualified id `<plugin>:<name>`, any other by its name.

    A bare name means a skill outside plugins when there is one (`bare_named`), so
    a plugin's skill listed by its bare name could be mistaken for another."""
    return skill.qualified_name if in_plugin(skill) else skill.name


def bare_named(skills: Iterable[Skill]) -> tuple[Skill, ...]:
    """The skills a bare name can mean among `skills` (all of one name): those
    outside plugins, or, when only plugins have the name, the plugins' skills.

    The one rule behind `Catalog.winners`, the resolver and `lookup_skill`; the
    winner among them is then `best_of`'s."""
    candidates = tuple(skills)
    plain = tuple(s for s in candidates if not in_plugin(s))
    return plain or candidates


_NAME_PATH = operator.attrgetter("name", "path")


def _scope_rank(skill: Skill) -> int:
    return SCOPE_RANK[skill.scope]


def _catalog_sorted(skills: tuple[Skill, ...]) -> tuple[Skill, ...]:
    """`skills` by scope rank, then name, then path.

    Sorted by (name, path) with a C key, then by scope rank (a stable sort) only
    when scopes differ: half the cost of one sort by a Python-built tuple key.
    """
    ordered = sorted(skills, key=_NAME_PATH)
    if len({skill.scope for skill in ordered}) > 1:
        ordered.sort(key=_scope_rank)
    return tuple(ordered)


@dataclass(frozen=True, kw_only=True)
class Catalog:
    """Every discovered skill plus every problem, in deterministic order.

    Order: scope rank, then name, then path. Skills sharing a name are all kept;
    `resolve_name` says which one wins and which are shadowed or ambiguous.
    """

    skills: tuple[Skill, ...] = ()
    problems: tuple[Problem, ...] = ()
    roots: tuple[Root, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "skills", _catalog_sorted(self.skills))

    # The lookup tables are built on first use: listing a catalog needs none of them.
    @functools.cached_property
    def _by_name(self) -> Mapping[str, tuple[Skill, ...]]:
        by_name: dict[str, list[Skill]] = {}
        for skill in self.skills:
            by_name.setdefault(skill.name, []).append(skill)
        return {name: tuple(group) for name, group in by_name.items()}

    @functools.cached_property
    def _by_qualified(self) -> Mapping[str, tuple[Skill, ...]]:
        by_qualified: dict[str, list[Skill]] = {}
        for skill in self.skills:
            by_qualified.setdefault(skill.qualified_name, []).append(skill)
        return {qualified: tuple(group) for qualified, group in by_qualified.items()}

    @functools.cached_property
    def _by_key(self) -> Mapping[str, Skill]:
        by_key: dict[str, Skill] = {}
        for skill in self.skills:
            by_key.setdefault(skill.key, skill)
            by_key.setdefault(skill.path, skill)
        return by_key

    def __len__(self) -> int:
        return len(self.skills)

    def named(self, name: str) -> tuple[Skill, ...]:
        """All skills with this exact name, highest precedence first."""
        return self._by_name.get(name, ())

    def at_path(self, path: str) -> Skill | None:
        """The skill whose SKILL.md (or real path) is `path`, if any."""
        return self._by_key.get(path)

    def qualified(self, qualified_name: str) -> tuple[Skill, ...]:
        """Skills whose qualified id is `qualified_name`, highest precedence first.

        `<plugin>:<name>` names the plugin's skill; `<scope>:<name>` names the skills
        of that scope that are not in a plugin (a plugin skill's id is always its
        plugin's). An id without a namespace is a bare name.
        """
        if ":" not in qualified_name:
            return self.named(qualified_name)
        return self._by_qualified.get(qualified_name, ())

    def winners(self, name: str) -> tuple[Skill, ...]:
        """The candidates of highest precedence for a bare name (among the skills
        outside plugins when there are any: `bare_named`).

        One skill: it wins and the rest are shadowed. Several: the name is
        ambiguous and must be given by path or qualified id. None: not found.
        """
        return best_of(bare_named(self.named(name)))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)
