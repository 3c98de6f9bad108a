"""The config files: the user's and the project's `config.toml`, read and written.

Two layers, read with the standard library's `tomllib` and merged user first, then
project (the project wins; the schema and the merge are `_schema.py`'s):

- user: `<user_config_dir()>/config.toml`;
- project: `<project root>/.skillpack/config.toml`.

A file is read only when it is a regular file of at most `MAX_CONFIG_BYTES`.
Writes (`set_skill_enabled`, `add_permission`) are read-modify-write under the
file's cross-process lock (`_lock.file_lock`), with every other key kept, and
atomic (`_atomic.write_atomic`). Comments are not kept by a rewrite: the writer
emits the parsed document.
"""

from __future__ import annotations

import copy
import dataclasses
import errno
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._errors import SkillIOError, UsageError
from .._limits import MAX_CONFIG_BYTES
from .._model import Problem, Skill
from .._paths import PROJECT_CONFIG_DIR, home_dir, project_root, user_config_dir
from ..select._refs import SkillRefs
from ..select._rules import DECISIONS, Decision
from ._checks import toml_type
from ._schema import (
    Config,
    ConfigLayer,
    ConfigScope,
    merge_layers,
    normalize_entry,
    parse_config,
)

CONFIG_FILENAME = "config.toml"


# --- locations --------------------------------------------------------------------


def user_config_path() -> Path:
    """The user config file, `<user_config_dir()>/config.toml`."""
    return user_config_dir() / CONFIG_FILENAME


def project_config_path(cwd: str | os.PathLike[str] | None = None) -> Path:
    """The project config file, `<project root>/.skillpack/config.toml`."""
    return project_root(cwd) / PROJECT_CONFIG_DIR / CONFIG_FILENAME


def _location(scope: ConfigScope, cwd: str | None) -> tuple[Path, Path]:
    """The config file of `scope` and the folder its relative paths resolve against."""
    if scope == "user":
        return user_config_path(), home_dir()
    if scope == "project":
        path = project_config_path(cwd)
        return path, path.parent.parent
    raise UsageError(f"Unknown config scope {scope!r}; use 'user' or 'project'.")


def _layer_files(
    cwd: str | None, *, user: bool, project: bool
) -> list[tuple[Path, ConfigScope, Path]]:
    """The files to read in merge order: (file, scope, folder of its relative paths)."""
    files: list[tuple[Path, ConfigScope, Path]] = []
    scopes: tuple[tuple[ConfigScope, bool], ...] = (("user", user), ("project", project))
    for scope, wanted in scopes:
        if wanted:
            path, base = _location(scope, cwd)
            files.append((path, scope, base))
    return files


# --- reading ----------------------------------------------------------------------

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
    for path, scope, base in _layer_files(cwd, user=user, project=project):
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


def _table(document: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    table = document.setdefault(key, {})
    if not isinstance(table, dict):
        raise UsageError(
            f"`{key}` in {path} must be a table, not {toml_type(table)}; the file was "
            f"left unchanged. Fix it, then retry."
        )
    return table


def _entries(table: dict[str, Any], key: str, dotted: str, path: Path) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(
            f"`{dotted}` in {path} must be an array of strings, not {toml_type(value)}; "
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
    # Only writes need these; a command that just reads the config never loads them.
    from ._atomic import write_atomic
    from ._lock import file_lock
    from ._toml_writer import dumps_toml

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
    path, base = _location(scope, cwd)
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
    path, _ = _location(scope, cwd)

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


def enable_decided_by(skill: Skill, *, cwd: str | None = None, user: bool = True) -> Path | None:
    """The config file whose `[skills]` entry decides whether `skill` is enabled.

    Entries merge as in `merge_layers` (a later file's entry drops an equal earlier
    one); of the entries left, an `enabled` one naming the skill wins over a
    `disabled` one. The file of the last deciding entry is returned; None when no
    entry names the skill (enabled by default). A file that cannot be read decides
    nothing.
    """
    disabled: list[tuple[str, Path]] = []
    enabled: list[tuple[str, Path]] = []
    for path, scope, base in _layer_files(cwd, user=user, project=True):
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
