"""The discovery floor: the least work any skills catalog must do, in one process.

    python bench/floor.py ROOT [ROOT ...]

Walks each root breadth-first with `os.scandir` under the same bounds as discovery
(docs/design.md, "Rules: discovery and precedence": depth <= 6, <= 2000 directories
per root, skip `.git`, `node_modules`, `__pycache__`, `.venv` and hidden directories,
do not descend into a skill's `scripts/`, `references/`, `assets/`), reads every
SKILL.md, splits the frontmatter and parses it with libyaml (`yaml.CSafeLoader`).
Prints one JSON line: `{"found": SKILL.md files read, "parsed": frontmatters parsed to a mapping,
"valid": parsed with a non-empty description}`.

Kept deliberately standalone (imports only the stdlib and yaml) so its whole-process
time is the floor skillpack's `list` is compared with.
"""

from __future__ import annotations

import json
import os
import sys
from collections import deque

import yaml

MAX_DEPTH = 6
MAX_DIRS = 2000
SKIP = frozenset({".git", "node_modules", "__pycache__", ".venv"})
SKILL_SUBDIRS = frozenset({"scripts", "references", "assets"})


def split_frontmatter(text: str) -> str | None:
    """The YAML between a first line `---` and the next line that is exactly `---`."""
    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):
        return None
    first_end = text.find("\n")
    if first_end < 0 or text[3:first_end].strip():
        return None
    start = pos = first_end + 1
    while True:
        pos = text.find("\n---", pos - 1)
        if pos < 0:
            return None
        after = pos + 4
        line_end = text.find("\n", after)
        if not text[after : line_end if line_end >= 0 else len(text)].strip():
            return text[start:pos].replace("\r\n", "\n").removesuffix("\r")
        pos = after + 1


def walk(root: str) -> list[str]:
    """Paths of every SKILL.md under `root`, breadth-first, within the bounds."""
    found: list[str] = []
    queue: deque[tuple[str, int]] = deque([(root, 0)])
    dirs_seen = 0
    while queue and dirs_seen < MAX_DIRS:
        folder, depth = queue.popleft()
        dirs_seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        is_skill = any(e.name == "SKILL.md" and e.is_file() for e in entries)
        if is_skill:
            found.append(os.path.join(folder, "SKILL.md"))
        if depth >= MAX_DEPTH:
            continue
        for entry in entries:
            name = entry.name
            if name in SKIP or name.startswith(".") or (is_skill and name in SKILL_SUBDIRS):
                continue
            if entry.is_dir():
                queue.append((entry.path, depth + 1))
    return found


def scan(roots: list[str]) -> dict[str, int]:
    """Walk `roots`, read every SKILL.md and parse its frontmatter: the floor's work.

    Returns the counts `main` prints.
    """
    found = parsed = valid = 0
    for root in roots:
        for path in walk(root):
            found += 1
            with open(path, encoding="utf-8") as handle:
                frontmatter = split_frontmatter(handle.read())
            if frontmatter is None:
                continue
            try:
                data = yaml.load(frontmatter, Loader=yaml.CSafeLoader)
            except yaml.YAMLError:
                continue
            if not isinstance(data, dict):
                continue
            parsed += 1
            description = data.get("description")
            if isinstance(description, str) and description.strip():
                valid += 1
    return {"found": found, "parsed": parsed, "valid": valid}


def main(roots: list[str]) -> int:
    print(json.dumps(scan(roots)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
