"""The bounded walk of a legacy command root (`.claude/commands`): every `**/*.md` file.

Claude Code's commands are single Markdown files, in subfolders too; each one found
here becomes a `Found` that `_load.py` parses with `parse._command` (the root's
`kind` is `commands`). Hidden and noise folders are skipped, the depth and folder
limits are those of a skill root (reported as `walk-truncated`), and the folder
times are recorded so the index can replay the walk like any other.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable

from .._model import Problem, Root
from ._confine import NOISE_DIRS
from ._found import Found, WalkRecord
from ._walk import _too_deep, _truncated, _unreadable


def _listing(folder: str, follow: bool) -> tuple[list[str], list[str], bool]:
    """(sorted `*.md` files, sorted subfolders, whether a symlink was met) of a folder."""
    files: list[str] = []
    dirs: list[str] = []
    links = False
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if name[0] == "." or name in NOISE_DIRS:
                continue
            try:
                link = entry.is_symlink()
                if link:
                    links = True
                    if not follow:
                        continue
                if name.lower().endswith(".md") and entry.is_file():
                    files.append(name)
                elif entry.is_dir():
                    dirs.append(name)
            except OSError:
                continue
    files.sort()
    dirs.sort()
    return files, dirs, links


def walk_commands(
    root: Root,
    *,
    max_depth: int,
    max_dirs: int,
    found: list[Found],
    problems: list[Problem],
    record: WalkRecord | None = None,
    on_found: Callable[[], None] | None = None,
) -> None:
    """Breadth-first walk of a command root, appending each `*.md` file to `found`
    (and calling `on_found` after each)."""
    root_path = root.path
    follow = root.follow_symlinks
    visited = {os.path.realpath(root_path)}
    queue: deque[tuple[str, int]] = deque([(root_path, 0)])
    scanned = 0
    too_deep: str | None = None
    while queue:
        if scanned >= max_dirs:
            problems.append(_truncated(root_path, max_dirs, len(queue)))
            break
        folder, depth = queue.popleft()
        scanned += 1
        try:
            if record is not None:
                record.note_dir(folder)
            files, dirs, links = _listing(folder, follow)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            problems.append(_unreadable(folder, exc))
            if record is not None:
                record.reusable = False
            continue
        if links and record is not None:
            record.reusable = False  # a link's target can change without any folder changing
        for name in files:
            path = os.path.join(folder, name)
            real = os.path.realpath(path)
            found.append(Found(path, folder, real, root, None, -1, -1, -1, -1, None, "", False))
            if on_found is not None:
                on_found()
        if not dirs:
            continue
        if depth >= max_depth:
            too_deep = too_deep or os.path.join(folder, dirs[0])
            continue
        for name in dirs:
            path = os.path.join(folder, name)
            real = os.path.realpath(path)
            if real in visited:
                continue
            visited.add(real)
            queue.append((path, depth + 1))
    if too_deep is not None:
        problems.append(_too_deep(root_path, max_depth, too_deep))
