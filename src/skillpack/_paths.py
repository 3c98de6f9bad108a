"""Every directory skillpack uses, decided in one place.

`SKILLPACK_HOME` stands for the user's home and, when set, wins over the XDG
variables too: a test or sandbox that sets it gets config, cache and user skills
under it, whatever `XDG_CONFIG_HOME`/`XDG_CACHE_HOME` say. Without it, the XDG
variables and then the platform's defaults apply. The functions read the
environment on every call (a test changes it) and, but for `project_dirs`, touch
no file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ._model import RootKind

HOME_ENV = "SKILLPACK_HOME"
PROJECT_ROOT_ENV = "SKILLPACK_PROJECT_ROOT"
"""Overrides the project root that markers (`.git`, `.jj`, `.skillpack`) would find."""
CACHE_ENV = "SKILLPACK_CACHE_DIR"
ADMIN_ENV = "SKILLPACK_ADMIN_DIR"
CODEX_HOME_ENV = "CODEX_HOME"
OPENCODE_CONFIG_DIR_ENV = "OPENCODE_CONFIG_DIR"


PROJECT_MARKERS: tuple[str, ...] = (".git", ".jj", ".skillpack")
"""An ancestor holding one of these is the project root (repo discovery stops there)."""

PROJECT_CONFIG_DIR = ".skillpack"
"""The project's own folder (config, lock file), at the project root."""


def _override() -> str | None:
    return os.environ.get(HOME_ENV) or None


def home_dir() -> Path:
    """The user's home: `$SKILLPACK_HOME` when set (tests, sandboxes), else `~`."""
    override = _override()
    return Path(override) if override else Path.home()


def expand_home(path: str) -> str:
    """`~` and `~/x` expand against `home_dir()`; `~user/x` as the OS does."""
    if path == "~" or path.startswith(("~/", "~" + os.sep)):
        return str(home_dir()) + path[1:]
    return os.path.expanduser(path)


def _xdg(variable: str, default: str) -> Path:
    """An XDG base folder: `$SKILLPACK_HOME/<default>` when that is set, else
    `$<variable>`, else `~/<default>`."""
    if _override() is None:
        value = os.environ.get(variable)
        if value:
            return Path(value)
    return home_dir() / default


def config_home() -> Path:
    """`$XDG_CONFIG_HOME` (or `~/.config`) by the rule above: where tools keep config."""
    return _xdg("XDG_CONFIG_HOME", ".config")


def user_config_dir() -> Path:
    """skillpack's user folder: `<config_home()>/skillpack` (config, user skills)."""
    return config_home() / "skillpack"


def cache_dir() -> Path:
    """Where the index file lives.

    `$SKILLPACK_CACHE_DIR` when set; else `$SKILLPACK_HOME/.cache/skillpack` when that
    is set; else the platform's user cache dir (`$XDG_CACHE_HOME/skillpack` or
    `~/.cache/skillpack` on Linux, `~/Library/Caches/skillpack` on macOS,
    `%LOCALAPPDATA%\\skillpack\\Cache` on Windows).
    """
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    if _override() is None:
        if sys.platform == "darwin":
            return home_dir() / "Library" / "Caches" / "skillpack"
        if sys.platform == "win32":
            local = os.environ.get("LOCALAPPDATA")
            base = Path(local) if local else home_dir() / "AppData" / "Local"
            return base / "skillpack" / "Cache"
    return _xdg("XDG_CACHE_HOME", ".cache") / "skillpack"


def oci_skills_dir() -> Path:
    """Where a server keeps the OCI collections it serves (`--from oci://`): one folder
    per manifest digest, `<cache_dir()>/oci/sha256-<hex>`, shared by the servers of
    one user and removed when none serves it any more."""
    return cache_dir() / "oci"


def admin_dir() -> str:
    """The admin scope's root: `$SKILLPACK_ADMIN_DIR`, else the system-wide folder."""
    configured = os.environ.get(ADMIN_ENV)
    if configured:
        return configured
    if sys.platform == "win32":
        return os.path.join(os.environ.get("PROGRAMDATA", r"C:\ProgramData"), "skillpack", "skills")
    return "/etc/skillpack/skills"


def system_skills_dir() -> str:
    """The folder of skills bundled with the package."""
    return str(Path(__file__).parent / "skills")


def codex_home() -> Path:
    """Codex's folder: `$CODEX_HOME` when set (`~` expands), else `~/.codex`."""
    configured = os.environ.get(CODEX_HOME_ENV)
    if configured:
        return Path(expand_home(configured))
    return home_dir() / ".codex"


def opencode_config_dir() -> Path:
    """OpenCode's config folder: `<config_home()>/opencode` (`~/.config/opencode`)."""
    return config_home() / "opencode"


def opencode_dirs() -> tuple[Path, ...]:
    """OpenCode's user config folders whose `skill/` and `skills/` it reads, in rank
    order: `~/.config/opencode`, `~/.opencode`, then `$OPENCODE_CONFIG_DIR` when set."""
    dirs = [opencode_config_dir(), home_dir() / ".opencode"]
    configured = os.environ.get(OPENCODE_CONFIG_DIR_ENV)
    if configured:
        dirs.append(Path(expand_home(configured)))
    return tuple(dirs)


FAMILIES: tuple[str, ...] = ("agents", "claude", "opencode", "codex", "copilot", "gemini", "cursor")
"""The families of default folders (config `[discovery] folders_off`): `agents` is
`.agents/skills` (read by most agents); each other is one tool's own folders (`copilot`:
`.github/skills` and `~/.copilot/skills`). skillpack's own folder belongs to none."""

REPO_FOLDERS: tuple[tuple[str, RootKind, str], ...] = (
    (".agents/skills", "skills", "agents"),
    (".claude/skills", "skills", "claude"),
    (".opencode/skills", "skills", "opencode"),
    (".opencode/skill", "skills", "opencode"),
    (".codex/skills", "skills", "codex"),
    (".github/skills", "skills", "copilot"),
    (".gemini/skills", "skills", "gemini"),
    (".cursor/skills", "skills", "cursor"),
    (".claude/commands", "commands", "claude"),
)
"""The folders looked for in every repo folder, in rank order: (path, kind, family).
`.agents` ranks first, as Gemini CLI ranks it over `.gemini` within a tier."""

_ALL_AGENTS = ("codex", "opencode", "gemini", "copilot", "cursor")
_READERS: dict[tuple[str, str], tuple[str, ...]] = {
    ("agents", "skills"): _ALL_AGENTS,
    ("claude", "skills"): ("claude", "opencode", "copilot", "cursor"),
    ("claude", "commands"): ("claude",),
    ("codex", "skills"): ("codex", "cursor"),
    ("opencode", "skills"): ("opencode",),
    ("copilot", "skills"): ("copilot",),
    ("gemini", "skills"): ("gemini",),
    ("cursor", "skills"): ("cursor",),
}


def agents_reading(family: str | None, kind: RootKind, scope: str) -> tuple[str, ...]:
    """The agents that document reading a default folder of `family` and `kind` in
    `scope` (`repo` or `user`); () for skillpack's own folders.

    Sources (2026-12): Codex's skill loader, OpenCode's and Gemini CLI's skills docs,
    Copilot CLI's changelog (it stopped reading `~/.claude/` in 1.0.36), Cursor's
    skills docs; `tests/compat` runs Codex, OpenCode, Gemini CLI and Copilot CLI over
    them. Claude Code's reading of `.agents/skills` is not documented, so not claimed.
    """
    readers = _READERS.get((family or "", kind), ())
    if scope == "user" and family == "claude":
        readers = tuple(agent for agent in readers if agent != "copilot")
    return readers


def user_roots() -> tuple[tuple[str, RootKind, str | None], ...]:
    """The user-scope roots, what they hold and their family, in rank order (they may
    not exist): `~/.agents/skills`, `~/.claude/skills`, `~/.claude/commands` (legacy
    commands), `$CODEX_HOME/skills` (`~/.codex/skills`), `skills/` then `skill/` of each
    of `opencode_dirs()`, `~/.copilot/skills`, `~/.gemini/skills`, `~/.cursor/skills`,
    and skillpack's own `~/.config/skillpack/skills` (no family)."""
    home = home_dir()
    opencode: list[tuple[str, RootKind, str | None]] = [
        (str(folder / sub), "skills", "opencode")
        for folder in opencode_dirs()
        for sub in ("skills", "skill")
    ]
    return (
        (str(home / ".agents" / "skills"), "skills", "agents"),
        (str(home / ".claude" / "skills"), "skills", "claude"),
        (str(home / ".claude" / "commands"), "commands", "claude"),
        (str(codex_home() / "skills"), "skills", "codex"),
        *opencode,
        (str(home / ".copilot" / "skills"), "skills", "copilot"),
        (str(home / ".gemini" / "skills"), "skills", "gemini"),
        (str(home / ".cursor" / "skills"), "skills", "cursor"),
        (str(user_config_dir() / "skills"), "skills", None),
    )


def user_skill_dirs() -> tuple[str, ...]:
    """The user-scope skill roots (not the legacy command folders), in rank order."""
    return tuple(path for path, kind, _family in user_roots() if kind == "skills")


def project_dirs(cwd: str) -> tuple[str, ...]:
    """Folders from `cwd` up to the project root, nearest first.

    The project root is the first folder (cwd included) holding `.git`, `.jj` or
    `.skillpack`; when no ancestor has one, only `cwd` is searched, so running in
    an arbitrary folder never picks up skills from unrelated parents. The last
    folder is the project root (`project_root`).

    `$SKILLPACK_PROJECT_ROOT`, when set to `cwd` or one of
    its ancestors, is the root instead, whatever the markers say; set to a folder that
    does not hold `cwd`, it is ignored.
    """
    start = os.path.abspath(cwd)
    forced = os.environ.get(PROJECT_ROOT_ENV)
    if forced:
        given = os.path.abspath(os.path.expanduser(forced))
        for root in dict.fromkeys((given, os.path.realpath(given))):
            if start == root or start.startswith(root.rstrip(os.sep) + os.sep):
                forced_chain = [start]
                while forced_chain[-1] != root:
                    forced_chain.append(os.path.dirname(forced_chain[-1]))
                return tuple(forced_chain)
    chain: list[str] = []
    current = start
    while True:
        chain.append(current)
        if any(os.path.exists(os.path.join(current, m)) for m in PROJECT_MARKERS):
            return tuple(chain)
        parent = os.path.dirname(current)
        if parent == current:
            return (start,)
        current = parent


def project_root(cwd: str | os.PathLike[str] | None = None) -> Path:
    """The project root of `cwd` (symlinks resolved): the end of `project_dirs`."""
    start = Path(cwd if cwd is not None else os.getcwd()).resolve()
    return Path(project_dirs(str(start))[-1])


# --- one path segment -----------------------------------------------------------------

SEGMENT_WORDS: dict[str, str] = {
    "empty": "is empty",
    "dot": "is '.' or '..'",
    "separator": "holds a '/' or '\\'",
    "nul": "holds a NUL character",
    "control": "holds a control character",
    "drive": "starts with a drive letter ('C:')",
}
"""How each `segment_problem` answer reads in a message ("a segment that …")."""


def segment_problem(segment: str) -> str:
    """Why `segment` cannot be one plain name inside a folder, or "" when it can.

    The one check of path segments taken from outside (archive members, URIs, skill
    names, file paths asked for): `empty`, `dot` (`.` or `..`), `separator` (`/` or
    `\\`), `nul`, `control` (another C0 character or DEL) or `drive` (`C:`, which
    Windows reads as another drive); `SEGMENT_WORDS` words each.
    """
    if not segment:
        return "empty"
    if segment in (".", ".."):
        return "dot"
    if "/" in segment or "\\" in segment:
        return "separator"
    if "\x00" in segment:
        return "nul"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in segment):
        return "control"
    if len(segment) >= 2 and segment[1] == ":" and segment[0].isascii() and segment[0].isalpha():
        return "drive"
    return ""
