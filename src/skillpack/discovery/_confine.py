"""The confinement rule for a skill's bundled files, shared by the disk and memory sources.

Pure: a requested relative path in, its parts out, or the reason it is refused. The
rule refuses every spelling an attacker might rely on being decoded later: absolute
paths (also a drive letter), `..` (also percent-encoded or with backslashes), NUL
characters and hidden files. What the path then resolves to (a symlink leaving the
folder) is each source's own check, since only the disk has links.
"""

from __future__ import annotations

from urllib.parse import unquote

from .._errors import SkillIOError, SkillNotFoundError, SkillPermissionError
from .._limits import MAX_PATH_CHARS
from .._model import SKILL_FILE as SKILL_FILE
from .._model import Skill
from .._paths import SEGMENT_WORDS, segment_problem

NOISE_DIRS = frozenset({"node_modules", "__pycache__"})
"""Never walked, never listed. Hidden folders (`.git`, `.venv`, `.tox`, ...) are skipped
by the hidden rule, and any folder holding `pyvenv.cfg` is not walked below."""

"""The exact file name that makes a folder a skill."""


def refuse(skill: Skill, relpath: str, why: str) -> SkillPermissionError:
    """The error for a path outside what the skill may serve."""
    return SkillPermissionError(
        f"Refused to read {relpath!r} from skill '{skill.name}': {why}. Only files inside "
        f"{skill.dir} can be read; give a relative path such as 'references/guide.md'."
    )


def confined_parts(skill: Skill, relpath: str) -> tuple[str, ...]:
    """The folder-relative parts `relpath` names inside `skill`'s folder.

    Raises:
        SkillPermissionError: the path is absolute, climbs out with `..` (also
            percent-encoded or with backslashes), holds a NUL, names a hidden file or
            is longer than `MAX_PATH_CHARS`.
        SkillNotFoundError: the path names nothing (empty, or only `.`).
    """
    if len(relpath) > MAX_PATH_CHARS:
        raise refuse(skill, relpath[:80] + "...", f"it is over {MAX_PATH_CHARS} characters")
    if "\x00" in relpath:
        raise refuse(skill, relpath, "the path contains a NUL character")
    spellings = {relpath}
    decoded = relpath
    for _ in range(3):
        if "%" not in decoded:
            break
        decoded = unquote(decoded)
        spellings.add(decoded)
    for spelling in spellings:
        if "\x00" in spelling:
            raise refuse(skill, relpath, "the path contains an encoded NUL character")
        normal = spelling.replace("\\", "/")
        if normal.startswith("/") or segment_problem(normal[:2]) == "drive":
            raise refuse(skill, relpath, "the path is absolute")
        parts = [p for p in normal.split("/") if p not in ("", ".")]
        problem = next((found for p in parts if (found := segment_problem(p))), "")
        if problem == "dot":  # '..': the empty and '.' segments were dropped above
            raise refuse(skill, relpath, "the path climbs out of the folder with '..'")
        if problem:
            raise refuse(skill, relpath, f"a segment of the path {SEGMENT_WORDS[problem]}")
        if any(p.startswith(".") for p in parts):
            raise refuse(skill, relpath, "hidden files are not served")
    parts = [p for p in relpath.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        raise SkillNotFoundError(
            f"No file given for skill '{skill.name}'; pass a path such as "
            "'references/guide.md' (see the skill's file listing)."
        )
    return tuple(parts)


def in_tree(parts: tuple[str, ...]) -> bool:
    """Whether a file at these folder-relative parts belongs to what a skill serves:
    nothing hidden, nothing inside a noise folder."""
    return not any(p.startswith(".") or p in NOISE_DIRS for p in parts)


def listed(parts: tuple[str, ...]) -> bool:
    """Whether a file at these folder-relative parts appears in a skill's file listing:
    in its tree (`in_tree`), and not the SKILL.md itself."""
    return parts != (SKILL_FILE,) and in_tree(parts)


def missing(skill: Skill, parts: tuple[str, ...]) -> SkillNotFoundError:
    """The error for a confined path with no regular file behind it."""
    return SkillNotFoundError(
        f"Skill '{skill.name}' has no file {'/'.join(parts)!r} in {skill.dir}. "
        "See the skill's file listing for what it bundles."
    )


def too_large(what: str, size: int, limit: int) -> SkillIOError:
    """The error for a file over the limit of one read (`what` names the file)."""
    return SkillIOError(
        f"{what} is {size} bytes, over the {limit}-byte limit for one read; open it outside "
        "the agent or ask for a smaller file."
    )
