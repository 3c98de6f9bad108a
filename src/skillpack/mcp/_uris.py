"""`skill://` URIs: the skill-path of every served skill, and incoming URIs taken apart.

The MCP skills extension addresses a skill's files as `skill://<skill-path>/<file>`,
where the last segment of `<skill-path>` is the skill's name. skillpack's scheme
(docs/design.md, "MCP"):

- the first segment (the URI authority) is the skill's scope: `admin`, `repo`,
  `extra`, `user`, `system` or `mcp`;
- then the folders from the skill's root down to the skill's folder, as discovered
  (plugin folders included, so plugin skills get their own paths); for scope `mcp`
  these are the upstream server's label and the upstream skill-path;
- the last folder is the skill's name; when the folder is named otherwise, the name
  follows it as one more segment (`extra/tools/pdf-v2/pdf`);
- a nested skill's path therefore extends its enclosing skill's path, so its files
  have one URI whether reached through it or through the enclosing skill;
- two skills that would still share a path (only possible for same-named skills of
  equal precedence whose folder is not named like them) are told apart by a `~2`,
  `~3`, ... segment before the name, in catalog order.

Segments are percent-encoded (RFC 3986 `pchar`); an incoming URI is decoded once and
refused when it could mean anything but a plain relative path.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import quote, unquote

from .._errors import UsageError
from .._model import SKILL_FILE as SKILL_FILE
from .._model import Skill
from .._paths import segment_problem

SCHEME: Final = "skill://"
MAX_URI_CHARS: Final = 4096
"""Longer URIs are refused before they are looked at."""
_PCHAR_SAFE: Final = "-._~!$&'()*+,;=:@"
_PLAIN: Final = re.compile(r"[A-Za-z0-9._~-]+")
"""A segment of unreserved characters only: written as it is."""

Segments = tuple[str, ...]
"""A decoded `/`-separated path: a skill-path, or a skill-path plus a file path."""


def _rel_parts(folder: str, base: str) -> list[str] | None:
    """The folders from `base` down to `folder` (both with `/` separators, no trailing
    `/`), or None when `folder` is not below it."""
    if not base or not folder.startswith(base + "/"):
        return None
    parts = folder[len(base) + 1 :].split("/")
    if "" in parts or "." in parts:  # rare: `//` or `/./` in a path
        parts = [p for p in parts if p not in ("", ".")]
    return None if ".." in parts else parts


def _folder(path: str) -> str:
    """`path` with `/` separators and no trailing `/`."""
    return path.replace("\\", "/").rstrip("/")


def assign_paths(skills: Iterable[Skill]) -> dict[str, Segments]:
    """Skill key -> skill-path for every skill, each path distinct (module docstring).

    Enclosing skills are placed first (by folder depth, then catalog order), so a
    nested skill extends its enclosing skill's final path; catalog order decides who
    keeps the plain path when two collide.
    """
    listed = list(skills)
    folders = [_folder(skill.dir) for skill in listed]
    depths = [folder.count("/") for folder in folders]
    order = sorted(range(len(listed)), key=depths.__getitem__)  # stable: then catalog order
    above = _folders_above(listed, folders)
    enclosing = {(listed[i].scope, listed[i].root, outer) for i, outer in above.items()}
    roots: dict[str, str] = {}
    taken: set[Segments] = set()
    by_dir: dict[tuple[str, str, str], Segments] = {}
    paths: dict[str, Segments] = {}
    # Once per served skill on every view: the common case (no enclosing skill) is
    # kept to a few string and tuple operations.
    for i in order:
        skill, folder = listed[i], folders[i]
        scope, skill_root = skill.scope, skill.root
        base: Segments = (scope,)
        outer = above.get(i)
        placed = None if outer is None else by_dir.get((scope, skill_root, outer))
        parts = None if placed is None or outer is None else _rel_parts(folder, outer)
        if placed is not None and parts:
            base = placed
        else:
            root = roots.get(skill_root)
            if root is None:
                root = roots[skill_root] = _folder(skill_root)
            parts = _rel_parts(folder, root) or [folder.rpartition("/")[2]]
        name = skill.name
        if parts[-1] != name:
            parts.append(name)
        segments = (*base, *parts)
        if segments in taken:
            head = segments[:-1]
            n = 2
            segments = (*head, "~2", name)
            while segments in taken:
                n += 1
                segments = (*head, f"~{n}", name)
        taken.add(segments)
        paths[skill.real_path or skill.path] = segments  # `Skill.key`, without the call
        if enclosing and (scope, skill_root, folder) in enclosing:
            by_dir[(scope, skill_root, folder)] = segments
    return paths


def _folders_above(skills: list[Skill], folders: list[str]) -> dict[int, str]:
    """index -> the nearest other skill folder above the skill's own (same scope and
    root); `folders` are the skills' folders (`_folder`).

    One sort instead of a walk up every skill's parents: with `/` appended, a folder's
    descendants sort right after it, so a stack of the folders being inside holds the
    enclosing ones. For the same reason, when no folder in that order starts with the
    one before it, no skill is inside another (nor two in one folder), whatever their
    scope and root: the usual case, answered by one sort of the folders.
    """
    marked = [folder + "/" for folder in folders]
    order = sorted(range(len(marked)), key=marked.__getitem__)  # stable: ties by index
    if not any(marked[b].startswith(marked[a]) for a, b in itertools.pairwise(order)):
        return {}
    # Grouped in that order, each group is sorted too: no second sort per group.
    groups: dict[tuple[str, str], list[int]] = {}
    for index in order:
        skill = skills[index]
        groups.setdefault((skill.scope, skill.root), []).append(index)
    found: dict[int, str] = {}
    for indexes in groups.values():
        stack: list[str] = []
        for index in indexes:
            folder = marked[index]
            while stack and not folder.startswith(stack[-1]):
                stack.pop()
            if stack and stack[-1] == folder:  # two skills in one folder
                outer = stack[-2] if len(stack) > 1 else None
            else:
                outer = stack[-1] if stack else None
                stack.append(folder)
            if outer is not None:
                found[index] = outer[:-1]
    return found


def _segment(text: str) -> str:
    # Most segments need no escape: skip `quote` (a listing encodes thousands).
    if _PLAIN.fullmatch(text):
        return text
    return quote(text, safe=_PCHAR_SAFE)


def encode(segments: Iterable[str]) -> str:
    """`skill://` plus the percent-encoded segments joined by `/`."""
    return SCHEME + "/".join(_segment(s) for s in segments)


def file_uri(skill_path: Segments | str, relpath: str) -> str:
    """The URI of file `relpath` (POSIX, relative) of the skill at `skill_path` (its
    segments, or the skill's own URI from `encode`)."""
    base = skill_path if isinstance(skill_path, str) else encode(skill_path)
    return base + "/" + "/".join(_segment(s) for s in relpath.split("/"))


def parse(uri: str) -> Segments:
    """The decoded segments of a `skill://` URI.

    Raises:
        UsageError: not a `skill://` URI, too long, with a query or fragment, an
            empty segment, or a segment that decodes to `.`, `..` or holds `/`, `\\`
            or NUL (traversal by encoding).
    """
    if len(uri) > MAX_URI_CHARS:
        raise UsageError(f"The URI is {len(uri)} characters, over the {MAX_URI_CHARS} limit.")
    if uri[: len(SCHEME)].lower() != SCHEME:
        raise UsageError(
            f"{uri[:200]!r} is not a skill URI; skillpack serves `skill://<skill-path>/<file>`."
        )
    rest = uri[len(SCHEME) :]
    if "?" in rest or "#" in rest:
        raise UsageError(f"{uri[:200]!r} has a query or fragment; skill URIs have neither.")
    segments = []
    for raw in rest.split("/"):
        try:
            part = unquote(raw, errors="strict") if "%" in raw else raw
        except UnicodeDecodeError:
            part = ""
        if segment_problem(part):
            raise UsageError(
                f"{uri[:200]!r} is not a plain skill URI: a path segment is empty, `.`, `..`, "
                "hides a separator or a control character, or names a drive; give the URI "
                "exactly as skills/list or resources/list wrote it."
            )
        segments.append(part)
    return tuple(segments)


def split(segments: Segments, paths: Mapping[Segments, str]) -> tuple[str, Segments] | None:
    """(skill key, file segments) for the served skill whose path is the longest prefix
    of `segments` (a nested skill wins over its enclosing one); None when none is."""
    for end in range(len(segments), 0, -1):
        key = paths.get(segments[:end])
        if key is not None:
            return key, segments[end:]
    return None
