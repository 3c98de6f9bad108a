"""A skill's `paths:` globs against the files a host works on: the activation gate.

Claude Code offers a skill whose frontmatter has `paths` only once the session touches
a matching file; skillpack keeps such a skill out of the model's catalog until the
host notes one (`Session.note_paths`). Globs are matched against the noted path
relative to the project root, `/`-separated, as `.gitignore` patterns are: `*` and `?`
stay within one folder, `**` spans folders, `[...]` is a class, `{a,b}` alternatives; a
glob without a `/` matches the name at any depth (`*.py`), one with a `/` is anchored
at the project root (`src/**/*.ts`, a leading `/` or `./` changes nothing); a glob that
names a folder matches every path below it. Pure: strings in, booleans out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence


def _translate(glob: str) -> str:
    """The regular expression of one glob's text (no anchoring)."""
    out: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        if glob.startswith("**/", index):
            out.append("(?:[^/]*/)*")
            index += 3
            continue
        if glob.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find("]", index + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = glob[index + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                index = end
        elif char == "{":
            end = glob.find("}", index)
            if end == -1:
                out.append(re.escape(char))
            else:
                options = glob[index + 1 : end].split(",")
                out.append("(?:" + "|".join(_translate(o) for o in options) + ")")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def glob_pattern(glob: str) -> re.Pattern[str] | None:
    """The compiled form of one `paths` glob (None for an empty one)."""
    text = glob.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    anchored = "/" in text.rstrip("/")
    text = text.strip("/")
    if not text:
        return None
    start = "" if anchored else "(?:.*/)?"
    # A glob naming a folder covers every path below it.
    return re.compile(f"{start}{_translate(text)}(?:/.*)?")


def paths_match(globs: Sequence[str], paths: Iterable[str]) -> bool:
    """Whether any of `paths` (relative to the project root, `/`-separated) matches any
    of a skill's `globs`."""
    patterns = [p for p in map(glob_pattern, globs) if p is not None]
    if not patterns:
        return False
    return any(pattern.fullmatch(path) for path in paths for pattern in patterns)
