"""The bounded walk of one root: the SKILL.md files under it, with their plugin and sidecar.

Breadth-first, one `os.scandir` per folder, `DirEntry`'s cached type bits instead
of extra `stat` calls; hidden, noise and virtualenv folders, skill resource folders
and symlink loops are skipped, and the depth and folder limits are reported as
`walk-truncated`. Nothing is read here but plugin manifests: `_load.py` reads and
parses what the walk found.
"""

from __future__ import annotations

import json
import os
import stat
from collections import deque
from collections.abc import Sequence

from .._limits import MAX_MANIFEST_BYTES
from .._model import Problem, Root
from ._confine import NOISE_DIRS, SKILL_FILE
from ._found import Found, WalkRecord, problem
from ._load import read_bytes

SKILL_RESOURCE_DIRS = frozenset({"scripts", "references", "assets"})
"""Subfolders of a skill that hold its resources, not nested skills: not walked."""

PLUGIN_MARKERS: tuple[str, ...] = (".claude-plugin", ".codex-plugin")
"""A folder with `<marker>/plugin.json` namespaces the skills below it."""

CODEX_SIDECARS: tuple[str, ...] = ("agents/openai.yaml", "agents/openai.yml")
"""Where Codex's metadata for a skill lives, relative to its folder, first match wins."""


def _plugin_name(folder: str, markers: Sequence[str], problems: list[Problem]) -> str | None:
    """The namespace a plugin folder gives its skills, or None if it is no plugin."""
    for marker in PLUGIN_MARKERS:
        if marker not in markers:
            continue
        manifest = os.path.join(folder, marker, "plugin.json")
        try:
            raw = read_bytes(manifest, MAX_MANIFEST_BYTES)
        except FileNotFoundError:
            continue
        except OSError as exc:
            reason = exc.strerror or str(exc)
        else:
            try:
                if len(raw) > MAX_MANIFEST_BYTES:
                    raise ValueError(f"over the {MAX_MANIFEST_BYTES}-byte limit")
                data = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                # RecursionError: JSON nested past the interpreter's recursion limit.
                reason = f"invalid JSON: {exc}"
            else:
                name = data.get("name") if isinstance(data, dict) else None
                if isinstance(name, str) and name.strip():
                    return name.strip()
                if isinstance(data, dict) and name is None:
                    return os.path.basename(folder)
                reason = "its `name` is not a non-empty string"
        fallback = os.path.basename(folder)
        problems.append(
            problem(
                manifest,
                "warning",
                "plugin-json-invalid",
                f"Plugin manifest {manifest} cannot be used ({reason}); its skills are "
                f"namespaced by the folder name '{fallback}' instead. Fix the file so it is "
                'a JSON object with a "name" string.',
            )
        )
        return fallback
    return None


def codex_sidecar(folder: str) -> tuple[str | None, str]:
    """The `agents/openai.yaml` (or `.yml`) beside a SKILL.md and its version string."""
    for rel in CODEX_SIDECARS:
        candidate = os.path.join(folder, rel)
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            return candidate, f"{candidate}|{st.st_mtime_ns}|{st.st_size}"
    return None, ""


def file_sig(path: str) -> tuple[int, int, int] | None:
    """(mtime_ns, ctime_ns, size) of a file, None when it cannot be `stat`ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size)


Listing = tuple[int, list[tuple[str, bool]], list[str], bool, bool]
"""One folder as the walk needs it: (SKILL.md entry: 0 none, 1 regular file, 2 symlink;
sorted `(name, is_symlink)` of candidate subfolders; sorted plugin marker names;
whether it is a virtualenv; whether any candidate subfolder is a symlink)."""


def _scan(folder: str) -> Listing:
    """List a folder once with `os.scandir`, keeping only what the walk needs.

    Type bits come from the directory entry itself (no `stat`), except for
    symlinks, which are kept unresolved: the walk decides about them per root.
    """
    skill_md = 0
    subdirs: list[tuple[str, bool]] = []
    markers: list[str] = []
    is_venv = links = False
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if name == SKILL_FILE:
                if entry.is_symlink():
                    skill_md = 2
                else:
                    try:
                        skill_md = 1 if entry.is_file() else 0
                    except OSError:
                        skill_md = 0
            elif name[0] == ".":
                if name in PLUGIN_MARKERS:
                    markers.append(name)
            elif name == "pyvenv.cfg":
                is_venv = True
            elif name in NOISE_DIRS:
                continue
            elif entry.is_symlink():
                subdirs.append((name, True))
                links = True
            else:
                try:
                    if entry.is_dir():
                        subdirs.append((name, False))
                except OSError:
                    continue
    subdirs.sort()
    markers.sort()
    return (skill_md, subdirs, markers, is_venv, links)


def _unreadable(folder: str, exc: OSError) -> Problem:
    if isinstance(exc, PermissionError):
        why, fix = "permission denied", "make it readable (chmod u+rx) or move them elsewhere"
    else:
        why, fix = str(exc.strerror or exc), "check the folder"
    return problem(
        folder,
        "warning",
        "dir-unreadable",
        f"Cannot list folder {folder}: {why}. Skills inside it were skipped; {fix}.",
    )


def _truncated(root_path: str, max_dirs: int, left: int) -> Problem:
    return problem(
        root_path,
        "warning",
        "walk-truncated",
        f"Stopped searching {root_path} after {max_dirs} folders; "
        f"{left} more were not searched, so skills in them are missing. "
        "Raise the limit (`--max-dirs` on the command line, `[discovery] max_dirs` in "
        "the config, or `max_dirs` in the API) or point the root at a smaller folder.",
    )


def _too_deep(root_path: str, max_depth: int, example: str) -> Problem:
    return problem(
        root_path,
        "warning",
        "walk-truncated",
        f"Stopped searching {root_path} at depth {max_depth}: deeper folders (such as "
        f"{example}) were not searched. Raise the limit (`--max-depth` on the command "
        "line, `[discovery] max_depth` in the config, or `max_depth` in the API) if "
        "skills live deeper.",
    )


def _symlink_loop(path: str, target: str) -> Problem:
    return problem(
        path,
        "warning",
        "symlink-loop",
        f"Symbolic link {path} points to {target}, which contains "
        "the link itself; it was not followed, to avoid walking in a "
        "loop. Remove the link or point it at a folder outside it.",
    )


def _skill_here(
    root: Root,
    listing: Listing,
    folder: str,
    prefix: str,
    real_prefix: str,
    plugin: str | None,
) -> Found | None:
    """The folder's SKILL.md as a `Found`, or None when it has none the walk may use.

    A plain SKILL.md is a regular file by its entry's type bits; its stat is left to
    `load_skill_md` (unknown: -1). A linked one is resolved and checked here.
    """
    skill_md, subdirs = listing[0], listing[1]
    is_skill = skill_md == 1
    mtime_ns = size = ino = ctime_ns = -1
    if skill_md == 2 and root.follow_symlinks:
        try:
            st = os.stat(prefix + SKILL_FILE)
            is_skill = stat.S_ISREG(st.st_mode)
            mtime_ns, size, ino, ctime_ns = st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns
        except OSError:
            is_skill = False
    if not is_skill:
        return None
    skill_path = prefix + SKILL_FILE
    if skill_md == 2:
        real = os.path.realpath(skill_path)
    elif real_prefix is prefix:
        real = skill_path
    else:
        real = real_prefix + SKILL_FILE
    has_agents = ("agents", False) in subdirs or ("agents", True) in subdirs
    codex_path, codex_sig = codex_sidecar(folder) if has_agents else (None, "")
    return Found(
        skill_path,
        folder,
        real,
        root,
        plugin,
        mtime_ns,
        size,
        ino,
        ctime_ns,
        codex_path,
        codex_sig,
        has_agents,
    )


def walk_root(
    root: Root,
    *,
    max_depth: int,
    max_dirs: int,
    found: list[Found],
    problems: list[Problem],
    record: WalkRecord | None = None,
) -> None:
    """Breadth-first walk of one root, appending its SKILL.md files to `found`.

    Real paths are tracked incrementally (a child's real path is its parent's plus
    its name unless it is a symlink), so only symlinks cost a `realpath` call. With
    a `record`, each folder's (mtime, ctime) is kept so the next run can replay the
    walk: that `stat` is the only cost the index adds to a fresh walk.
    """
    root_path = root.path
    sep = os.sep
    root_real = os.path.realpath(root_path)
    if root_real == root_path:
        # While a folder's real path *is* its path (no link on the way), children
        # share it too: no second string per folder and file, and the snapshot
        # stores one string where it would store two equal ones.
        root_real = root_path
    follow = root.follow_symlinks
    visited = {root_real}
    # (path, real path, depth, plugin namespace)
    queue: deque[tuple[str, str, int, str | None]] = deque([(root_path, root_real, 0, root.plugin)])
    scanned = 0
    too_deep: str | None = None
    while queue:
        if scanned >= max_dirs:
            problems.append(_truncated(root_path, max_dirs, len(queue)))
            break
        folder, folder_real, depth, plugin = queue.popleft()
        scanned += 1
        listing = _list_folder(folder, problems, record)
        if listing is None:
            continue
        _skill_md, subdirs, markers, is_venv, links = listing
        prefix = folder if folder.endswith(sep) else folder + sep
        if folder_real is folder:
            real_prefix = prefix
        else:
            real_prefix = folder_real if folder_real.endswith(sep) else folder_real + sep
        if markers:
            plugin = _plugin_name(folder, markers, problems) or plugin
            if record is not None:
                record.manifests.extend(
                    (m, file_sig(m)) for m in (f"{prefix}{x}{sep}plugin.json" for x in markers)
                )
        if record is not None and follow and (listing[0] == 2 or links):
            record.reusable = False  # a link's target can change without any folder changing
        skill = _skill_here(root, listing, folder, prefix, real_prefix, plugin)
        if skill is not None:
            found.append(skill)
        if is_venv:
            continue
        children = subdirs
        if skill is not None or (links and not follow):
            children = [
                (name, link)
                for name, link in subdirs
                if (follow or not link) and not (skill is not None and name in SKILL_RESOURCE_DIRS)
            ]
        if not children:
            continue
        if depth >= max_depth:
            too_deep = too_deep or prefix + children[0][0]
            continue
        for name, link in children:
            path = prefix + name
            if link:
                target = os.path.realpath(path)
                if not os.path.isdir(target):
                    continue  # a link to a file, or dangling
                if folder_real == target or folder_real.startswith(target + sep):
                    problems.append(_symlink_loop(path, target))
                    continue
                child_real = target
            elif real_prefix is prefix:
                child_real = path
            else:
                child_real = real_prefix + name
            if child_real in visited:
                continue  # reached before through another link: walked once
            visited.add(child_real)
            queue.append((path, child_real, depth + 1, plugin))
    if too_deep is not None:
        problems.append(_too_deep(root_path, max_depth, too_deep))


def _list_folder(folder: str, problems: list[Problem], record: WalkRecord | None) -> Listing | None:
    """`_scan(folder)`, its times noted in `record`; None when it cannot be listed."""
    try:
        if record is not None and record.timed:
            # stat before listing: a change during the scan makes the stored
            # times stale, so the next run walks the folder again.
            st = os.stat(folder)
            record.dirs.append((folder, st.st_mtime_ns, st.st_ctime_ns))
        return _scan(folder)
    except (FileNotFoundError, NotADirectoryError):
        return None  # removed while we walked: nothing to report
    except OSError as exc:
        problems.append(_unreadable(folder, exc))
        if record is not None:
            record.reusable = False
        return None
