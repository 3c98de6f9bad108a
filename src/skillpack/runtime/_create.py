"""Writing a new skill: `skill_create` (the model) and `skillpack new` (people).

Everything is checked before anything is written:

1. the name is a bare skill name (no `/`, `\\`, `..`, NUL: a name never becomes a
   path elsewhere), lowercase words joined by `-`, at most 64 characters;
2. the SKILL.md is at most `MAX_CREATED_SKILL_BYTES` and passes strict validation
   (`parse_skill(strict=True)`: every spec warning is an error);
3. extra frontmatter is limited to known fields; a skill the model writes may not
   declare `hooks` nor embed shell commands (`` !`cmd` ``): those would run on the
   host's machine;
4. no other skill in the catalog has the name (it would shadow or be shadowed);
5. the host agrees: permission action `create`, which asks by default (a rule that
   names the skill decides instead; no ask callback refuses with how to allow it).

The write goes to `<user home>/.agents/skills/<name>/SKILL.md` (or the project root's
`.agents/skills/`), atomically, under a cross-process lock. An existing SKILL.md is
replaced only when the caller passes the digest of the version it read
(`sha256:<hex>` of its bytes, which `skill_load` returns): two writers cannot clobber
each other. The session then re-discovers, so the new skill is in the live catalog.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._errors import SkillPermissionError, UsageError
from .._limits import MAX_CREATED_SKILL_BYTES, MAX_SKILL_FILE_BYTES
from .._model import Catalog, Skill, sha256_digest
from .._paths import cache_dir, home_dir, project_root, segment_problem
from ..config._atomic import write_atomic
from ..config._lock import file_lock
from ..discovery._load import read_bytes
from ..parse._frontmatter import parse_skill
from ..select._commands import find_shell_commands
from ._permissions import PermissionGate

CreateScope = Literal["user", "project"]

NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME_CHARS = 64

EXTRA_FIELDS: frozenset[str] = frozenset(
    {
        "when_to_use",
        "argument-hint",
        "arguments",
        "user-invocable",
        "disable-model-invocation",
        "allowed-tools",
        "disallowed-tools",
        "license",
        "compatibility",
        "metadata",
        "version",
        "paths",
        "model",
        "context",
        "agent",
    }
)
"""Frontmatter fields a caller may set besides `name` and `description`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CreatedSkill:
    """What was written."""

    name: str
    path: str
    """The SKILL.md written."""
    scope: CreateScope
    digest: str
    """`sha256:<hex>` of the bytes written: pass it to replace this version later."""
    replaced: bool
    """True when an existing SKILL.md was replaced (its digest matched)."""
    in_catalog: bool = False
    """True when the session's catalog holds the new skill."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "scope": self.scope,
            "digest": self.digest,
            "replaced": self.replaced,
            "in_catalog": self.in_catalog,
        }


def file_digest(path: str) -> str | None:
    """The digest of the file at `path`, or None when it cannot be read."""
    try:
        # The bounded reader: a FIFO swapped in for the file is refused, not waited on.
        return sha256_digest(read_bytes(path, MAX_SKILL_FILE_BYTES))
    except OSError:
        return None


def check_name(name: object) -> str:
    """`name` when it is a valid bare skill name, else `UsageError` saying why."""
    if not isinstance(name, str) or not name.strip():
        raise UsageError("A skill needs a name: lowercase words joined by '-', e.g. 'my-skill'.")
    if segment_problem(name.strip()) in ("dot", "separator", "nul", "control", "drive"):
        raise UsageError(
            f"The skill name {name!r} holds a path; give a bare name such as 'my-skill' "
            "(skills are always written to the user or project skills folder)."
        )
    if len(name) > MAX_NAME_CHARS:
        raise UsageError(
            f"The skill name is {len(name)} characters long; the limit is {MAX_NAME_CHARS}."
        )
    if not NAME_PATTERN.fullmatch(name):
        raise UsageError(
            f"The skill name {name!r} is not valid: use lowercase letters, digits and "
            "single '-' between words (e.g. 'pdf-forms')."
        )
    return name


def skill_folder(name: str, scope: CreateScope, *, cwd: str | None = None) -> Path:
    """Where a new skill named `name` goes: the user's (or the project's) `.agents/skills`."""
    if scope == "user":
        base = home_dir()
    elif scope == "project":
        base = project_root(cwd)
    else:
        raise UsageError(f"Unknown scope {scope!r} for a new skill; use 'user' or 'project'.")
    return base / ".agents" / "skills" / check_name(name)


def render_skill_md(
    name: str, description: str, body: str, frontmatter: Mapping[str, Any] | None = None
) -> str:
    """The SKILL.md text: `name`, `description`, then the extra fields as JSON values
    (valid YAML flow scalars, so nothing the caller writes can break the frontmatter)."""
    lines = ["---", f"name: {name}", f"description: {_flow(description)}"]
    for key, value in (frontmatter or {}).items():
        lines.append(f"{key}: {_flow(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n\n" + body.strip("\n") + "\n"


# Characters YAML reads as line breaks inside a quoted scalar (JSON leaves them raw).
_YAML_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\x85"}


def _flow(value: Any) -> str:
    """`value` as a one-line YAML flow value: JSON, with YAML's extra line breaks escaped."""
    text = json.dumps(value, ensure_ascii=False)
    for char, escaped in _YAML_BREAKS.items():
        text = text.replace(char, escaped)
    return text


def validate_new_skill(
    *,
    name: str,
    description: object,
    body: object,
    frontmatter: Mapping[str, Any] | None,
    folder: Path,
    by_model: bool,
) -> str:
    """The SKILL.md text to write, or `UsageError` listing every reason it cannot be."""
    if not isinstance(description, str) or not description.strip():
        raise UsageError("A skill needs a description: what it does and when to use it.")
    if not isinstance(body, str):
        raise UsageError("The skill body must be text (Markdown instructions).")
    extra = dict(frontmatter or {})
    unknown = sorted(set(extra) - EXTRA_FIELDS)
    if unknown:
        why = " (hooks run commands on the host)" if "hooks" in unknown else ""
        raise UsageError(
            f"Frontmatter field(s) {', '.join(unknown)} cannot be set here{why}; allowed: "
            f"{', '.join(sorted(EXTRA_FIELDS))}."
        )
    if by_model and find_shell_commands(body):
        raise UsageError(
            "The body embeds shell commands (!`...` or a ```! block); a skill written by "
            "the model may not, since they would run on the host. Describe the command "
            "in prose or in a code block instead."
        )
    text = render_skill_md(name, description.strip(), body, extra)
    size = len(text.encode("utf-8"))
    if size > MAX_CREATED_SKILL_BYTES:
        raise UsageError(
            f"The SKILL.md would be {size} bytes; the limit is {MAX_CREATED_SKILL_BYTES}. "
            "Move detail into files under references/ and keep the body short."
        )
    path = folder / "SKILL.md"
    parsed = parse_skill(text, path=str(path), strict=True)
    errors = [p for p in parsed.problems if p.severity == "error"]
    if errors:
        reasons = "; ".join(f"{p.code}: {p.message}" for p in errors)
        raise UsageError(f"The skill '{name}' does not pass strict validation: {reasons}")
    if parsed.skill is None or parsed.skill.description != description.strip():
        raise UsageError(
            "The description does not survive being written as YAML unchanged; remove "
            "control characters from it."
        )
    return text


def create_skill(
    *,
    name: object,
    description: object,
    body: object,
    scope: CreateScope = "user",
    frontmatter: Mapping[str, Any] | None = None,
    digest: str | None = None,
    cwd: str | None = None,
    catalog: Catalog | None = None,
    gate: PermissionGate | None = None,
    by_model: bool = False,
) -> CreatedSkill:
    """Validate, ask, then write a skill atomically (see the module docstring).

    Raises:
        UsageError: invalid name/fields/body, a name taken by another skill, an
            existing skill and no (or a stale) digest.
        SkillPermissionError: the permission rules or the host refused.
        SkillIOError: the folder or file could not be written.
    """
    checked = check_name(name)
    folder = skill_folder(checked, scope, cwd=cwd)
    text = validate_new_skill(
        name=checked,
        description=description,
        body=body,
        frontmatter=frontmatter,
        folder=folder,
        by_model=by_model,
    )
    target = folder / "SKILL.md"
    if catalog is not None:
        _check_taken(catalog, checked, target)
    if gate is not None:
        _require_consent(gate, checked, str(description), target, scope)
    lock = cache_dir() / "locks" / ("create-" + hashlib.sha256(str(target).encode()).hexdigest())
    with file_lock(lock):
        current = file_digest(str(target)) if target.exists() else None
        if current is not None and digest is None:
            raise UsageError(
                f"A skill already exists at {target}; to replace it, pass the digest of the "
                "version you read (skill_load returns it). Nothing was written."
            )
        if current is not None and digest != current:
            raise UsageError(
                f"The skill at {target} changed since the version whose digest was given "
                "(or the digest is wrong); load it again and retry with its new digest. "
                "Nothing was written."
            )
        if current is None and folder.is_symlink():
            # A cloned project could ship `.agents/skills/<name>` linking anywhere.
            raise UsageError(
                f"{folder} is a symbolic link; a new skill is never written through a "
                "link. Remove the link or choose another name. Nothing was written."
            )
        if current is None and digest is not None:
            raise UsageError(
                f"No skill exists at {target} to replace; call again without a digest to "
                "create it. Nothing was written."
            )
        write_atomic(target, text, what="skill file")
    return CreatedSkill(
        name=checked,
        path=str(target),
        scope=scope,
        digest=sha256_digest(text.encode("utf-8")),
        replaced=current is not None,
    )


def _check_taken(catalog: Catalog, name: str, target: Path) -> None:
    here = {str(target), os.path.realpath(target)}
    for skill in catalog.named(name):
        if skill.path in here or skill.real_path in here:
            continue
        raise UsageError(
            f"The name '{name}' is taken by {skill.qualified_name} at {skill.path}; a new "
            "skill of that name would shadow it or be shadowed. Choose another name, or "
            "edit that skill."
        )


def _require_consent(
    gate: PermissionGate, name: str, description: str, target: Path, scope: CreateScope
) -> None:
    pending = Skill(
        name=name,
        description=description,
        path=str(target),
        dir=str(target.parent),
        real_path=str(target),
        scope="user" if scope == "user" else "repo",
    )
    if gate.check(pending, "create", unmatched="ask"):
        return
    decision, glob = gate.rules.match(pending)
    if glob is not None and decision == "deny":
        raise SkillPermissionError(gate.explain(pending))
    if gate.remembered(pending) is None and not gate.can_ask:
        raise SkillPermissionError(
            f"Creating skill '{name}' needs the host's approval, and this host cannot ask. "
            f"Allow it with a permission rule ('{name}' or a glob under `allow` in "
            "`[permissions]` of the config), or give the session an ask callback."
        )
    raise SkillPermissionError(f"The host declined to create skill '{name}' at {target}.")
