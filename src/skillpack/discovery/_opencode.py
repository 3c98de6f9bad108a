"""The `skills.paths` setting of OpenCode's `opencode.json`: more folders to read skills from.

OpenCode reads `opencode.json` (or `opencode.jsonc`, JSON with comments) in its config
folders (`_paths.opencode_dirs`), in every folder from cwd up to the project root and in
their `.opencode/` folders, and loads every `**/SKILL.md` under each folder its
`skills.paths` lists: `~/` is the home folder, a relative path is relative to cwd (as
OpenCode 1.18 resolves it). A file that is missing, unreadable, not JSON or over the size
limit adds nothing (OpenCode itself refuses to start on an invalid config).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from .._limits import MAX_CONFIG_BYTES
from .._paths import home_dir
from ._load import read_bytes

CONFIG_NAMES: tuple[str, ...] = ("opencode.json", "opencode.jsonc")


def strip_jsonc(text: str) -> str:
    """`text` without `//` and `/* */` comments outside strings, nor trailing commas
    before `]` or `}`: the JSON with comments OpenCode accepts, as plain JSON."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif text.startswith("//", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        elif char in "]}":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
            out.append(char)
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _skill_paths(config: str) -> list[str]:
    """The `skills.paths` strings of one config file ([] when it has none or is unusable)."""
    try:
        raw = read_bytes(config, MAX_CONFIG_BYTES)
        if len(raw) > MAX_CONFIG_BYTES:
            return []
        text = raw.decode("utf-8")
        data = json.loads(strip_jsonc(text) if config.endswith("c") else text)
    except (OSError, ValueError, RecursionError):
        return []
    skills = data.get("skills") if isinstance(data, dict) else None
    paths = skills.get("paths") if isinstance(skills, dict) else None
    if not isinstance(paths, list):
        return []
    return [path for path in paths if isinstance(path, str) and path]


def opencode_skill_paths(cwd: str, config_dirs: Sequence[Path], chain: Sequence[str]) -> list[str]:
    """The absolute folders `skills.paths` names, in the order the config files come:
    OpenCode's config folders (`config_dirs`), then the project folders (`chain`, cwd
    first) from the project root down to cwd."""
    folders = [str(folder) for folder in config_dirs]
    for base in reversed(chain):
        folders += [base, os.path.join(base, ".opencode")]
    home = str(home_dir())
    found: list[str] = []
    for folder in folders:
        for name in CONFIG_NAMES:
            for path in _skill_paths(os.path.join(folder, name)):
                if path.startswith("~/"):
                    path = os.path.join(home, path[2:])
                found.append(os.path.normpath(os.path.join(cwd, path)))
    return list(dict.fromkeys(found))
