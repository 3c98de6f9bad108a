"""The layout of a root's snapshot in the index, named once.

A snapshot is what discovery recorded of one root's walk (`discovery._found.WalkRecord`)
and what the cache stores as one marshal blob: plain tuples, because marshal holds
nothing else and decoding them is most of a warm run. The field order of each tuple
is given here by a NamedTuple, and every reader uses the offsets derived from it.
"""

from __future__ import annotations

import marshal
import operator
import os
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .._model import CodexMetadata, CodexPermissions, Problem, Skill
from ..parse._skill_build import FAST, FIELDS, compile_constructor


class SnapshotItem(NamedTuple):
    """One SKILL.md as a snapshot stores it: `discovery._found.Found` without its
    root (the snapshot's key names the root). Stored as a plain tuple in this order."""

    path: str
    dir: str
    real_path: str
    plugin: str | None
    mtime_ns: int
    size: int
    ino: int
    ctime_ns: int
    """Part of the version: an edit that restores mtime and keeps the size changes it."""
    codex_path: str | None
    codex_sig: str
    """`path|<file_version>` of the `agents/openai.yaml` sidecar, or empty."""
    agents: bool
    """The folder has an `agents/` subfolder."""


ITEM_PATH = SnapshotItem._fields.index("path")
ITEM_DIR = SnapshotItem._fields.index("dir")
ITEM_REAL = SnapshotItem._fields.index("real_path")
ITEM_MTIME = SnapshotItem._fields.index("mtime_ns")
ITEM_SIZE = SnapshotItem._fields.index("size")
ITEM_INO = SnapshotItem._fields.index("ino")
ITEM_CTIME = SnapshotItem._fields.index("ctime_ns")
ITEM_CODEX_SIG = SnapshotItem._fields.index("codex_sig")
ITEM_AGENTS = SnapshotItem._fields.index("agents")
ITEM_STAT = slice(ITEM_MTIME, ITEM_CTIME + 1)
"""(mtime_ns, size, ino, ctime_ns): the file version an entry's parse belongs to."""

FileVersion = tuple[int, int, int, int]
"""`(mtime_ns, size, ino, ctime_ns)`: see `file_version`."""


def file_version(st: os.stat_result) -> FileVersion:
    """The version of a file by its `stat`: the one rule by which a warm run tells that
    a file deciding what a skill is (SKILL.md, the Codex sidecar, a plugin manifest)
    is unchanged. ctime is part of it, since an edit that keeps the size and restores
    the mtime still moves it; the inode, since a file renamed over it is another file.
    Laid out as `ITEM_STAT` of a snapshot item."""
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


class SnapshotEntry(NamedTuple):
    """One SKILL.md and its parse: stored as a plain tuple in this order."""

    item: tuple[Any, ...]
    """A `SnapshotItem` as a plain tuple."""
    skill: tuple[Any, ...] | None
    """`skill_values(skill)`, None when the file did not load."""
    problems: tuple[tuple[Any, ...], ...]
    """`problem_values(problems)` of the file."""


class Snapshot(NamedTuple):
    """One root's walk as stored: a plain tuple in this order."""

    dirs: tuple[tuple[str, int, int], ...]
    """`(folder, mtime_ns, ctime_ns)` of every folder listed."""
    manifests: tuple[tuple[str, FileVersion | None], ...]
    """`(plugin.json path, file_version or None)` of every plugin manifest."""
    walk_problems: tuple[tuple[Any, ...], ...]
    """`problem_values(...)` of the walk itself."""
    entries: tuple[tuple[Any, ...], ...]
    """`SnapshotEntry` tuples, one per SKILL.md found."""


# A Skill is stored as a marshal-encoded tuple in field order: decoding is about
# five times faster than JSON plus `Skill(**kwargs)`, which is most of a warm run.
SKILL_FIELDS: tuple[str, ...] = FIELDS
_CODEX = SKILL_FIELDS.index("codex")
_TUPLE_FIELDS = frozenset({"allowed_tools", "disallowed_tools", "arguments", "paths"})
# One C call reads every field: a Python loop of getattr costs twice as much, and a
# cold run encodes every skill.
_GET_VALUES = operator.attrgetter(*SKILL_FIELDS)


def _compile_builder() -> Callable[[Any], Skill]:
    """`skill_from_values` as straight-line code (see `_skill_build`).

    Unpacking checks the length: a tuple of another shape raises ValueError,
    anything else TypeError.
    """
    names = [f"v{i}" for i in range(len(SKILL_FIELDS))]
    prelude = [
        f"{', '.join(names)}, = values",
        f"if v{_CODEX} is not None:",
        f"    v{_CODEX} = codex(v{_CODEX})",
    ]
    return compile_constructor(
        "skill_from_values(values)", prelude, {"codex": _codex_from_plain}, names
    )


def _codex_plain(codex: CodexMetadata) -> tuple[Any, ...]:
    """A `CodexMetadata` as plain values; `_codex_from_plain` inverts it."""
    permissions = codex.permissions
    return (
        dict(codex.interface),
        tuple(codex.tool_dependencies),
        codex.allow_implicit_invocation,
        None if permissions is None else permissions.to_dict(),
    )


def _codex_from_plain(plain: tuple[Any, ...]) -> CodexMetadata:
    # Sidecars are rare: a function call here costs nothing measurable.
    interface, dependencies, allow, permissions = plain
    return CodexMetadata(
        interface=interface,
        tool_dependencies=dependencies,
        allow_implicit_invocation=allow,
        permissions=None if permissions is None else CodexPermissions.from_dict(permissions),
    )


def skill_values(skill: Skill) -> tuple[Any, ...]:
    """A skill as a marshal-friendly tuple in field order (`skill_from_values` inverts)."""
    values: tuple[Any, ...] = _GET_VALUES(skill)
    codex = values[_CODEX]
    if codex is not None:
        values = values[:_CODEX] + (_codex_plain(codex),) + values[_CODEX + 1 :]
    return values


def _json_safe_values(skill: Skill) -> tuple[Any, ...]:
    """`skill_values` built from the JSON-safe form, for values marshal cannot hold."""
    from ..parse._skill_json import skill_to_dict

    data = skill_to_dict(skill)
    values = [
        tuple(data[name]) if name in _TUPLE_FIELDS and data[name] is not None else data[name]
        for name in SKILL_FIELDS
    ]
    codex_data = data["codex"]
    if codex_data is not None:
        values[_CODEX] = (
            codex_data.get("interface") or {},
            tuple(codex_data.get("tool_dependencies") or ()),
            codex_data.get("allow_implicit_invocation"),
            codex_data.get("permissions"),
        )
    return tuple(values)


def _skill_from_values(values: Any) -> Skill:
    """The Skill that `skill_values` described (after a marshal round trip)."""
    if type(values) is not tuple or len(values) != len(SKILL_FIELDS):
        raise ValueError("cached skill row has the wrong shape")
    codex = values[_CODEX]
    if codex is not None:
        values = values[:_CODEX] + (_codex_from_plain(codex),) + values[_CODEX + 1 :]
    return Skill(**dict(zip(SKILL_FIELDS, values, strict=True)))


skill_from_values: Callable[[Any], Skill] = _compile_builder() if FAST else _skill_from_values
"""The Skill that `skill_values` described (after a marshal round trip).

Raises ValueError or TypeError for values of another shape."""


def problem_values(problems: Sequence[Problem]) -> tuple[tuple[Any, ...], ...]:
    """Problems as marshal-friendly tuples (`problems_from_values` inverts)."""
    if not problems:
        return ()
    return tuple(
        (p.path, p.severity, p.code, p.message, p.field, p.line, dict(p.agents)) for p in problems
    )


def problems_from_values(values: Any) -> tuple[Problem, ...]:
    """The problems `problem_values` described."""
    if not values:
        return ()
    return tuple(
        Problem(
            path=path,
            severity=severity,
            code=code,
            message=message,
            field=field,
            line=line,
            agents=agents,
        )
        for path, severity, code, message, field, line, agents in values
    )


def marshal_safe(snapshot: tuple[Any, ...]) -> tuple[Any, ...]:
    """`snapshot` with every skill marshal cannot hold (a date, a Mapping subclass)
    replaced by the JSON-safe form the rest of skillpack uses for the same skill."""
    dirs, manifests, walk_problems, entries = snapshot
    safe = []
    for item, values, file_problems in entries:
        if values is not None:
            try:
                marshal.dumps(values)
            except ValueError:
                values = _json_safe_values(skill_from_values(values))
        safe.append((item, values, file_problems))
    return (dirs, manifests, walk_problems, tuple(safe))
