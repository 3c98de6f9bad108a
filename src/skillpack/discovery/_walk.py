"""The bounded walk of one root: the SKILL.md files under it, with their plugin and sidecar.

Breadth-first, one `os.scandir` per folder, `DirEntry`'s cached type bits instead
of extra `stat` calls; hidden, noise and virtualenv folders and symlink loops are
skipped, and so are a skill's own `scripts/`, `references/` and `assets/` (its
resources, not nested skills); the depth and folder limits are reported as
`walk-truncated`. A skipped resource, hidden or `node_modules` folder holding a SKILL.md
(in it or up to three levels below), which Codex or OpenCode would load, is reported as
`folder-skipped`.
Nothing is read here but plugin manifests: `_load.py` reads and parses what the walk
found.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from collections import deque
from collections.abc import Callable, Sequence
from typing import Final

from .._limits import MAX_MANIFEST_BYTES
from .._model import Problem, Root
from ..index._snapshot import FileVersion, file_version
from ._confine import NOISE_DIRS, SKILL_FILE
from ._found import Found, WalkRecord, problem
from ._load import read_bytes

SKILL_RESOURCE_DIRS = frozenset({"scripts", "references", "assets"})
"""Subfolders of a skill that hold its resources, not nested skills: not walked."""

AGENT_LOADED_SKIPS: dict[str, dict[str, str]] = {
    "resources": {
        "codex": "loads the skills in another skill's scripts/, references/ and assets/",
        "opencode": "loads the skills in another skill's scripts/, references/ and assets/",
    },
    "node_modules": {
        "codex": "loads the skills under node_modules (in the roots it reads)",
        "opencode": "loads the skills under node_modules (in the roots it reads)",
        "copilot": "loads the skills under node_modules (in the roots it reads)",
    },
    ".": {"opencode": "loads the skills in hidden folders of .agents/skills and .claude/skills"},
}
"""What the agents do with the skills in a folder the walk skips (`.`: any hidden one),
measured by `tests/compat/`; the notes of a `folder-skipped` problem."""

AGENT_TITLES: dict[str, str] = {"codex": "Codex", "opencode": "OpenCode", "copilot": "Copilot CLI"}
"""How a message names the agents of `AGENT_LOADED_SKIPS`."""

HIDDEN_LOADING_ROOTS: tuple[str, ...] = (
    os.sep + os.path.join(".agents", "skills"),
    os.sep + os.path.join(".claude", "skills"),
)
"""The roots in whose hidden folders OpenCode loads skills (its `.opencode/` and config
folders are read without hidden ones): hidden folders are reported only there."""

STAGING_PREFIX = ".skillpack-"
"""skillpack's own hidden folders (an install's staging): never reported."""

UNREPORTED_HIDDEN = frozenset({".git"})
"""Hidden folders never reported: a repository's metadata. (Codex's own `.system` folder
in `$CODEX_HOME/skills` is not reported either: that root is no `HIDDEN_LOADING_ROOTS`.)"""

MAX_SKIPPED_PROBE = 64
"""Folders listed, at most, to find a SKILL.md in a skipped folder (the nearest first)."""

MAX_SKIPPED_DEPTH = 3
"""How far below a skipped folder a SKILL.md is looked for."""

LEAF_LINKS = 2
"""The link count of a folder without subfolders (its name in its parent, and its own
`.`; each subfolder's `..` adds one) on the usual Linux and macOS file systems. Those
that do not count links this way report 1 (btrfs, overlay, many network file
systems), so a folder of theirs is always listed."""

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
            return candidate, "|".join((candidate, *map(str, file_version(st))))
    return None, ""


def file_sig(path: str) -> FileVersion | None:
    """`file_version` of a file (a plugin manifest), None when it cannot be `stat`ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return file_version(st)


Listing = tuple[int, list[tuple[str, bool]], list[str], bool, bool, list[str]]
"""One folder as the walk needs it: (SKILL.md entry: 0 none, 1 regular file, 2 symlink,
3 neither a file nor a folder;
sorted `(name, is_symlink)` of candidate subfolders; sorted plugin marker names;
whether it is a virtualenv; whether any candidate subfolder is a symlink; the hidden
and `node_modules` subfolders skipped, which `_skipped_skill` checks)."""


def _scan(folder: str) -> Listing:
    """List a folder once with `os.scandir`, keeping only what the walk needs.

    Type bits come from the directory entry itself (no `stat`), except for
    symlinks, which are kept unresolved: the walk decides about them per root.
    """
    skill_md = 0
    subdirs: list[tuple[str, bool]] = []
    markers: list[str] = []
    skipped: list[str] = []
    is_venv = links = False
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if name == SKILL_FILE:
                if entry.is_symlink():
                    skill_md = 2
                else:
                    try:
                        # 3: neither a file nor a folder (a FIFO, socket or device)
                        skill_md = 1 if entry.is_file() else 0 if entry.is_dir() else 3
                    except OSError:
                        skill_md = 0
            elif name[0] == ".":
                if name in PLUGIN_MARKERS:
                    markers.append(name)
                elif (
                    name not in UNREPORTED_HIDDEN
                    and not name.startswith(STAGING_PREFIX)
                    and _plain_dir(entry)
                ):
                    skipped.append(name)
            elif name == "pyvenv.cfg":
                is_venv = True
            elif name in NOISE_DIRS:
                if name in AGENT_LOADED_SKIPS and _plain_dir(entry):
                    skipped.append(name)
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
    return (skill_md, subdirs, markers, is_venv, links, skipped)


def _plain_dir(entry: os.DirEntry[str]) -> bool:
    """Whether an entry is a folder, not a link (a skipped link is not worth a probe)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _skipped_skill(folder: str, record: WalkRecord | None) -> str | None:
    """A SKILL.md in a skipped `folder` or below it, else None: breadth-first, at most
    `MAX_SKIPPED_PROBE` folders listed, `MAX_SKIPPED_DEPTH` levels below `folder`.

    The folders listed join `record`, so a replay sees a skill added there. A folder
    whose link count says it has no subfolder (`LEAF_LINKS`) is answered by one
    `lstat` of its SKILL.md instead of a listing: most resource folders are such leaves.
    """
    queue: deque[tuple[str, int]] = deque([(folder, 0)])
    listed = 0
    while queue and listed < MAX_SKIPPED_PROBE:
        current, depth = queue.popleft()
        listed += 1
        try:
            st = None if record is None else record.note_dir(current)
            if st is not None and st.st_nlink == LEAF_LINKS:
                held = os.path.join(current, SKILL_FILE)
                try:
                    os.lstat(held)
                except FileNotFoundError:
                    continue  # no SKILL.md and no subfolder to look in
                except OSError:
                    pass  # cannot tell (a folder listable but not searchable): list it
                else:
                    return held
            with os.scandir(current) as entries:
                subfolders = []
                for entry in entries:
                    if entry.name == SKILL_FILE:
                        return entry.path
                    if depth < MAX_SKIPPED_DEPTH and _plain_dir(entry):
                        subfolders.append(entry.path)
        except OSError:
            continue
        queue.extend((sub, depth + 1) for sub in sorted(subfolders))
    return None


def _folder_skipped(folder: str, kind: str, skill_md: str) -> Problem:
    """`kind`: `node_modules`, `.` (hidden) or `resources` (a skill's resource folder)."""
    why = {
        "node_modules": "it is a node_modules folder",
        ".": "it is hidden",
        "resources": f"it is the {os.path.basename(folder)}/ folder of a skill (its resources)",
    }[kind]
    agents = AGENT_LOADED_SKIPS[kind]
    titles = [AGENT_TITLES[a] for a in sorted(agents)]
    who = ", ".join(titles[:-1]) + " and " + titles[-1] if len(titles) > 1 else titles[0]
    return Problem(
        path=folder,
        severity="warning",
        code="folder-skipped",
        message=(
            f"Folder {folder} was not searched because {why}, so skills in it (such as "
            f"{skill_md}) are not loaded by skillpack, while {who} "
            f"{'load' if len(agents) > 1 else 'loads'} them. Move the skill to a "
            "folder of its own (not hidden, not node_modules, not inside another "
            "skill's scripts/, references/ or assets/), or add the folder as a root."
        ),
        agents=dict(agents),
    )


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


DEEPER_READERS: dict[str, str] = {
    "opencode": "loads skills at any depth (in the roots it reads)",
    "copilot": "loads skills at any depth (in the roots it reads)",
}
"""The agents that search a root with no depth limit (measured by `tests/compat/`):
the notes of a `walk-truncated` problem about depth."""


def _too_deep(root_path: str, max_depth: int, example: str) -> Problem:
    return dataclasses.replace(
        problem(
            root_path,
            "warning",
            "walk-truncated",
            f"Stopped searching {root_path} at depth {max_depth}: deeper folders (such as "
            f"{example}) were not searched, while OpenCode and Copilot CLI search every "
            "depth. Raise the limit (`--max-depth` on the command line, "
            "`[discovery] max_depth` in the config, or `max_depth` in the API) if skills "
            "live deeper.",
        ),
        agents=dict(DEEPER_READERS),
    )


_SPECIAL_KINDS: Final = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _special_file(path: str) -> Problem | None:
    """The problem of a SKILL.md that is a FIFO, socket or device (stat, never open:
    opening a FIFO would wait for a writer); None for anything else."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    kind = next((name for test, name in _SPECIAL_KINDS if test(mode)), None)
    if kind is None:
        return None
    return problem(
        path,
        "error",
        "file-unreadable",
        f"{path} is {kind}, not a file, so the skill was not loaded; replace it with a "
        "regular file named SKILL.md.",
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
    on_found: Callable[[], None] | None = None,
) -> None:
    """Breadth-first walk of one root, appending its SKILL.md files to `found`.

    Real paths are tracked incrementally (a child's real path is its parent's plus
    its name unless it is a symlink), so only symlinks cost a `realpath` call. With
    a `record`, each folder's (mtime, ctime) is kept so the next run can replay the
    walk: that `stat` is the only cost the index adds to a fresh walk. `on_found` is
    called after each file appended (`RootLoads.walked`).
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
    hidden_loaded = root_path.rstrip(sep).endswith(HIDDEN_LOADING_ROOTS)
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
        _skill_md, subdirs, markers, is_venv, links, skipped = listing
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
            if on_found is not None:
                on_found()
        elif listing[0] == 3 or (listing[0] == 2 and follow):
            special = _special_file(prefix + SKILL_FILE)
            if special is not None:
                problems.append(special)
                if record is not None:
                    record.reusable = False  # reported on every walk, never replayed
        _report_skipped(prefix, skipped, hidden_loaded, record, problems)
        if is_venv:
            continue
        children = subdirs
        if skill is not None or (links and not follow):
            children = _walked_children(
                prefix,
                subdirs,
                has_skill=skill is not None,
                follow=follow,
                record=record,
                problems=problems,
            )
        if not children:
            continue
        if depth >= max_depth:
            too_deep = too_deep or prefix + children[0][0]
            continue
        for name, link in children:
            path = prefix + name
            child_real = _child_real(path, name, link, folder_real, prefix, real_prefix, problems)
            if child_real is None or child_real in visited:
                continue  # reached before through another link: walked once
            visited.add(child_real)
            queue.append((path, child_real, depth + 1, plugin))
    if too_deep is not None:
        problems.append(_too_deep(root_path, max_depth, too_deep))


def _report_skipped(
    prefix: str,
    skipped: Sequence[str],
    hidden_loaded: bool,
    record: WalkRecord | None,
    problems: list[Problem],
) -> None:
    """A `folder-skipped` warning for each skipped folder that holds a skill an agent
    loads (hidden folders count only under the roots where OpenCode loads them)."""
    for name in skipped:
        if name[0] == "." and not hidden_loaded:
            continue
        held = _skipped_skill(prefix + name, record)
        if held is not None:
            problems.append(
                _folder_skipped(prefix + name, name[0] if name[0] == "." else name, held)
            )


def _walked_children(
    prefix: str,
    subdirs: Sequence[tuple[str, bool]],
    *,
    has_skill: bool,
    follow: bool,
    record: WalkRecord | None,
    problems: list[Problem],
) -> list[tuple[str, bool]]:
    """The subfolders to walk: no links unless the root follows them, and none of a
    skill's resource folders (one holding a SKILL.md is a `folder-skipped` warning)."""
    children: list[tuple[str, bool]] = []
    for name, link in subdirs:
        if link and not follow:
            continue
        if not has_skill or name not in SKILL_RESOURCE_DIRS:
            children.append((name, link))
        elif not link:
            held = _skipped_skill(prefix + name, record)
            if held is not None:
                problems.append(_folder_skipped(prefix + name, "resources", held))
    return children


def _child_real(
    path: str,
    name: str,
    link: bool,
    folder_real: str,
    prefix: str,
    real_prefix: str,
    problems: list[Problem],
) -> str | None:
    """The real path of subfolder `path`; None for a link to a file, a dangling link or
    a link back up the tree (a `symlink-loop` problem)."""
    if link:
        target = os.path.realpath(path)
        if not os.path.isdir(target):
            return None  # a link to a file, or dangling
        if folder_real == target or folder_real.startswith(target + os.sep):
            problems.append(_symlink_loop(path, target))
            return None
        return target
    if real_prefix is prefix:
        return path
    return real_prefix + name


def _list_folder(folder: str, problems: list[Problem], record: WalkRecord | None) -> Listing | None:
    """`_scan(folder)`, its times noted in `record`; None when it cannot be listed."""
    try:
        if record is not None:
            record.note_dir(folder)
        return _scan(folder)
    except (FileNotFoundError, NotADirectoryError):
        return None  # removed while we walked: nothing to report
    except OSError as exc:
        problems.append(_unreadable(folder, exc))
        if record is not None:
            record.reusable = False
        return None
