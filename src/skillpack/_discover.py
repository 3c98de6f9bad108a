"""Discovery: roots, scopes and the bounded walk. The one filesystem seam.

`discover()` turns roots into a `Catalog`: a breadth-first walk per root (one
`os.scandir` per folder, `DirEntry`'s cached type bits instead of extra `stat`
calls), and a read and parse of a SKILL.md only when the persistent index
(`_index.py`) has no result for that exact file version. With the index, a root
whose folders are all unchanged is replayed from its snapshot with one `stat` per
folder and per SKILL.md; a fresh walk adds one `stat` per folder to record it, and
a file the index has never seen is `fstat`ed once open instead of `stat`ed. Bad
input never aborts discovery: every failure becomes a `Problem` and the rest
still loads.

Later layers read skill content through `read_body`, `list_skill_files` and
`read_skill_file`, which keep every access inside the skill's folder.
"""

from __future__ import annotations

import gc
import json
import os
import re
import stat
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from ._errors import SkillIOError, SkillNotFoundError, SkillPermissionError
from ._model import SCOPE_RANK, Catalog, Problem, Root, Scope, Severity, Skill, precedence

if TYPE_CHECKING:
    from ._index import SkillCache

SKILL_FILE = "SKILL.md"
"""The exact file name that makes a folder a skill."""

REPO_SKILL_DIRS: tuple[str, ...] = (
    ".agents/skills",
    ".claude/skills",
    ".opencode/skills",
    ".codex/skills",
)
"""Skill roots looked for in every folder from cwd up to the project root, in rank order."""

PROJECT_MARKERS: tuple[str, ...] = (".git", ".jj", ".skillpack")
"""An ancestor holding one of these is the project root (repo discovery stops there)."""

NOISE_DIRS = frozenset({"node_modules", "__pycache__"})
"""Never walked. Hidden folders (`.git`, `.venv`, `.tox`, ...) are skipped by the
hidden rule, and any folder holding `pyvenv.cfg` (a virtualenv, whatever its name)
is not walked below."""

SKILL_RESOURCE_DIRS = frozenset({"scripts", "references", "assets"})
"""Subfolders of a skill that hold its resources, not nested skills: not walked."""

PLUGIN_MARKERS: tuple[str, ...] = (".claude-plugin", ".codex-plugin")
"""A folder with `<marker>/plugin.json` namespaces the skills below it."""

CODEX_SIDECARS: tuple[str, ...] = ("agents/openai.yaml", "agents/openai.yml")

DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024


# --------------------------------------------------------------------------- roots


def _user_home() -> Path:
    home = os.environ.get("SKILLPACK_HOME")
    return Path(home) if home else Path.home()


def _admin_dir() -> str:
    configured = os.environ.get("SKILLPACK_ADMIN_DIR")
    if configured:
        return configured
    if sys.platform == "win32":
        return os.path.join(os.environ.get("PROGRAMDATA", r"C:\ProgramData"), "skillpack", "skills")
    return "/etc/skillpack/skills"


def project_dirs(cwd: str) -> tuple[str, ...]:
    """Folders from `cwd` up to the project root, nearest first.

    The project root is the first folder (cwd included) holding `.git`, `.jj` or
    `.skillpack`; when no ancestor has one, only `cwd` is searched, so running in
    an arbitrary folder never picks up skills from unrelated parents.
    """
    start = os.path.abspath(cwd)
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


def user_root_paths() -> tuple[str, ...]:
    """The user-scope roots, in rank order (they may not exist)."""
    home = _user_home()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    config = Path(xdg) if xdg else home / ".config"
    return (
        str(home / ".agents" / "skills"),
        str(home / ".claude" / "skills"),
        str(config / "skillpack" / "skills"),
    )


def system_root_path() -> str:
    """The folder of skills bundled with the package."""
    return str(Path(__file__).parent / "skills")


def default_roots(
    *,
    cwd: str | None = None,
    extra_roots: Sequence[str] = (),
    include_user: bool = True,
    include_system: bool = True,
    include_repo: bool = True,
    include_admin: bool = True,
    repo_skills_dir: bool = False,
) -> tuple[Root, ...]:
    """The roots to discover, highest precedence first (DESIGN §3).

    Default roots that do not exist are left out (that is normal). Extra roots are
    always kept, so that `discover` can report a missing one as `root-missing`.
    A folder that is both a repo root and a user root (cwd is the home folder) is
    a user root. Ranks: repo roots are ranked by distance from cwd, then by their
    position in `REPO_SKILL_DIRS` (`skills/` last); user roots in the order
    `~/.agents/skills`, `~/.claude/skills`, XDG; extra roots in the order given.
    Distinct ranks mean a copy of a skill in two tool folders is *shadowed*, not
    ambiguous: a bare name still resolves.

    Args:
        cwd: Where repo discovery starts (default: the current directory).
        extra_roots: Roots of scope `extra`, in precedence order.
        include_user: Add `~/.agents/skills`, `~/.claude/skills` and
            `$XDG_CONFIG_HOME/skillpack/skills` (`~` is `$SKILLPACK_HOME` when set).
        include_system: Add the skills bundled with skillpack.
        include_repo: Add the repo roots from cwd up to the project root.
        include_admin: Add `$SKILLPACK_ADMIN_DIR`, else `/etc/skillpack/skills`.
        repo_skills_dir: Also treat `skills/` in each repo folder as a root.
    """
    roots: list[Root] = []
    seen: set[str] = set()

    def add(path: str, scope: Scope, rank: int, *, must_exist: bool = True) -> None:
        path = os.path.abspath(os.path.expanduser(path))
        if path in seen or (must_exist and not os.path.isdir(path)):
            return
        seen.add(path)
        roots.append(Root(path=path, scope=scope, rank=rank, follow_symlinks=scope != "system"))

    users = user_root_paths() if include_user else ()
    if include_admin:
        add(_admin_dir(), "admin", 0)
    if include_repo:
        seen.update(os.path.abspath(u) for u in users)
        subdirs = REPO_SKILL_DIRS + (("skills",) if repo_skills_dir else ())
        for level, base in enumerate(project_dirs(cwd or os.getcwd())):
            for index, sub in enumerate(subdirs):
                add(os.path.join(base, sub), "repo", level * len(subdirs) + index)
        seen.difference_update(os.path.abspath(u) for u in users)
    for rank, extra in enumerate(extra_roots):
        add(extra, "extra", rank, must_exist=False)
    for rank, user in enumerate(users):
        add(user, "user", rank)
    if include_system:
        add(system_root_path(), "system", 0)
    return tuple(roots)


# --------------------------------------------------------------------------- walk


def _problem(path: str, severity: Severity, code: str, message: str) -> Problem:
    return Problem(path=path, severity=severity, code=code, message=message)


class _Found(NamedTuple):
    """A SKILL.md located by the walk, with everything needed to load it.

    A NamedTuple rather than a dataclass: one is built per skill per run.
    """

    path: str
    dir: str
    real_path: str
    root: Root
    plugin: str | None
    mtime_ns: int
    """With `size` and `ino`: the file's stat, -1 until `_load` takes it."""
    size: int
    ino: int
    codex_path: str | None
    codex_sig: str
    agents: bool
    """The folder has an `agents/` subfolder (where the Codex sidecar lives)."""


def _plugin_name(folder: str, markers: Sequence[str], problems: list[Problem]) -> str | None:
    """The namespace a plugin folder gives its skills, or None if it is no plugin."""
    for marker in PLUGIN_MARKERS:
        if marker not in markers:
            continue
        manifest = os.path.join(folder, marker, "plugin.json")
        try:
            with open(manifest, "rb") as handle:
                raw = handle.read(1_000_000)
        except FileNotFoundError:
            continue
        except OSError as exc:
            reason = exc.strerror or str(exc)
        else:
            try:
                data = json.loads(raw)
            except ValueError as exc:
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
            _problem(
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


def _codex_sidecar(folder: str) -> tuple[str | None, str]:
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
    return _problem(
        folder,
        "warning",
        "dir-unreadable",
        f"Cannot list folder {folder}: {why}. Skills inside it were skipped; {fix}.",
    )


def _walk_root(
    root: Root,
    *,
    max_depth: int,
    max_dirs: int,
    found: list[_Found],
    problems: list[Problem],
    record: _WalkRecord | None = None,
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
            problems.append(
                _problem(
                    root_path,
                    "warning",
                    "walk-truncated",
                    f"Stopped searching {root_path} after {max_dirs} folders; "
                    f"{len(queue)} more were not searched, so skills in them are missing. "
                    "Raise the limit (`max_dirs` in the config or API) or point the root "
                    "at a smaller folder.",
                )
            )
            break
        folder, folder_real, depth, plugin = queue.popleft()
        scanned += 1
        try:
            if record is not None:
                # stat before listing: a change during the scan makes the stored
                # times stale, so the next run walks the folder again.
                st = os.stat(folder)
                record.dirs.append((folder, st.st_mtime_ns, st.st_ctime_ns))
            listing = _scan(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue  # removed while we walked: nothing to report
        except OSError as exc:
            problems.append(_unreadable(folder, exc))
            if record is not None:
                record.reusable = False
            continue
        skill_md, subdirs, markers, is_venv, links = listing
        prefix = folder if folder.endswith(sep) else folder + sep
        if folder_real is folder:
            real_prefix = prefix
        else:
            real_prefix = folder_real if folder_real.endswith(sep) else folder_real + sep
        if markers:
            plugin = _plugin_name(folder, markers, problems) or plugin
            if record is not None:
                record.manifests.extend(
                    (m, _file_sig(m)) for m in (f"{prefix}{x}{sep}plugin.json" for x in markers)
                )
        if record is not None and follow and (skill_md == 2 or links):
            record.reusable = False  # a link's target can change without any folder changing
        # A plain SKILL.md is a regular file by its entry's type bits; its stat is
        # left to `_load` (unknown: -1). A linked one is resolved and checked here.
        is_skill = skill_md == 1
        mtime_ns = size = ino = -1
        if skill_md == 2 and follow:
            try:
                st = os.stat(prefix + SKILL_FILE)
                is_skill = stat.S_ISREG(st.st_mode)
                mtime_ns, size, ino = st.st_mtime_ns, st.st_size, st.st_ino
            except OSError:
                is_skill = False
        if is_skill:
            skill_path = prefix + SKILL_FILE
            if skill_md == 2:
                real = os.path.realpath(skill_path)
            elif real_prefix is prefix:
                real = skill_path
            else:
                real = real_prefix + SKILL_FILE
            has_agents = ("agents", False) in subdirs or ("agents", True) in subdirs
            codex_path, codex_sig = _codex_sidecar(folder) if has_agents else (None, "")
            found.append(
                _Found(
                    skill_path,
                    folder,
                    real,
                    root,
                    plugin,
                    mtime_ns,
                    size,
                    ino,
                    codex_path,
                    codex_sig,
                    has_agents,
                )
            )
        if is_venv:
            continue
        children = subdirs
        if is_skill or (links and not follow):
            children = [
                (name, link)
                for name, link in subdirs
                if (follow or not link) and not (is_skill and name in SKILL_RESOURCE_DIRS)
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
                    problems.append(
                        _problem(
                            path,
                            "warning",
                            "symlink-loop",
                            f"Symbolic link {path} points to {target}, which contains "
                            "the link itself; it was not followed, to avoid walking in a "
                            "loop. Remove the link or point it at a folder outside it.",
                        )
                    )
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
        problems.append(
            _problem(
                root_path,
                "warning",
                "walk-truncated",
                f"Stopped searching {root_path} at depth {max_depth}: deeper folders (such as "
                f"{too_deep}) were not searched. Raise the limit (`max_depth` in the config "
                "or API) if skills live deeper.",
            )
        )


# --------------------------------------------------------------------------- load


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
_READ_STEP = 64 * 1024


def _read_bytes(path: str, limit: int, size: int | None = None) -> bytes:
    """Read at most `limit + 1` bytes (the extra byte detects a file over the limit).

    `size` is the file's size from an earlier `stat` (else `fstat` gives it). The
    first read asks for `min(size, limit) + 1` bytes, which sizes its buffer to the
    file: asking for `limit + 1` would allocate the whole limit for every file.
    Unless it returned exactly `size` bytes, reading goes on in small steps until
    the end of the file (a file that grew or shrank since the `stat`, a file
    system that returns short reads) or past the limit.
    `os.read` on a descriptor skips building a buffered file object per file.
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        return _read_fd(fd, limit, os.fstat(fd).st_size if size is None else size)
    finally:
        os.close(fd)


def _read_fd(fd: int, limit: int, size: int) -> bytes:
    """`_read_bytes` on an open descriptor whose size is known."""
    data = os.read(fd, min(size, limit) + 1)
    total = len(data)
    if total == size:
        # Exactly the size it had (a file that grew would give one byte more, a
        # short read fewer): the end of the file, without one more read to see it.
        return data
    parts = [data]
    while total <= limit:
        chunk = os.read(fd, min(limit + 1 - total, _READ_STEP))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return data if len(parts) == 1 else b"".join(parts)


_PARSER: ModuleType | None = None


def _parser() -> ModuleType:
    """`_frontmatter`, imported on the first parse: a warm run never needs it.

    Held as the module, not its function, so that a replaced `parse_skill_bytes`
    (tests count parses that way) is seen; an `import` statement per file would
    cost more than a cold run spends on most of its own steps.
    """
    global _PARSER
    from . import _frontmatter

    _PARSER = _frontmatter
    return _frontmatter


def _too_large(path: str, size: int, limit: int) -> Problem:
    return _problem(
        path,
        "error",
        "file-too-large",
        f"{path} is {size} bytes, over the {limit}-byte limit for a SKILL.md; it was not "
        "read. Move long material into references/ files, or raise `max_file_bytes`.",
    )


def _read_skill_md(path: str, limit: int) -> tuple[os.stat_result, bytes | None]:
    """The `fstat` of an open SKILL.md and its bytes, None when over `limit` (not read).

    One open for both: on a cold run this `fstat` replaces a `stat` of the path
    in the walk, which costs more (the path is looked up again).
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return st, None
        return st, _read_fd(fd, limit, st.st_size)
    finally:
        os.close(fd)


def _with_stat(item: _Found, st: os.stat_result) -> _Found:
    """`item` with the stat fields of `st` (a third of the cost of `_replace`)."""
    return tuple.__new__(_Found, item[:5] + (st.st_mtime_ns, st.st_size, st.st_ino) + item[8:])


def _load(
    item: _Found,
    *,
    cache: SkillCache | None,
    strict: bool,
    max_file_bytes: int,
) -> tuple[_Found | None, Skill | None, tuple[Problem, ...]]:
    """Load one SKILL.md: the item with its stat fields, its skill (None when not loaded)
    and its problems; the item is None when the file is gone or no longer a regular file.

    An item from a fresh walk has no stat yet (`mtime_ns` < 0): a file the index
    has never seen is opened straight away and `fstat`ed there, so a cold run
    costs no `stat` per file; a known one is `stat`ed first to try the index.
    """
    if item.mtime_ns < 0 and cache is not None and cache.knows(item.real_path):
        try:
            st = os.stat(item.path)
        except OSError:
            return None, None, ()
        if not stat.S_ISREG(st.st_mode):
            return None, None, ()
        item = _with_stat(item, st)
    if item.mtime_ns >= 0:
        if item.size > max_file_bytes:
            return item, None, (_too_large(item.path, item.size, max_file_bytes),)
        if cache is not None:
            key = (item.real_path, item.path, item.mtime_ns, item.size, item.ino, item.codex_sig)
            hit = cache.lookup(key)
            if hit is not None:
                skill = _relocate(hit.skill, item) if hit.skill is not None else None
                return item, skill, hit.problems
    try:
        st, data = _read_skill_md(item.path, max_file_bytes)
    except (FileNotFoundError, NotADirectoryError):
        return None, None, ()  # removed since the walk saw it
    except OSError as exc:
        unreadable = _problem(
            item.path,
            "error",
            "file-unreadable",
            f"Cannot read {item.path}: {exc.strerror or exc}. The skill was not loaded; "
            "check the file's permissions (chmod u+r).",
        )
        return item, None, (unreadable,)
    if not stat.S_ISREG(st.st_mode):
        return None, None, ()
    item = _with_stat(item, st)
    if data is None or len(data) > max_file_bytes:
        size = st.st_size if data is None else len(data)
        return item, None, (_too_large(item.path, size, max_file_bytes),)
    file_problems: list[Problem] = []
    codex_text = None
    if item.codex_path is not None:
        try:
            codex_data = _read_bytes(item.codex_path, max_file_bytes)
            codex_text = codex_data[:max_file_bytes].decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "it is not valid UTF-8"
            file_problems.append(
                _problem(
                    item.codex_path,
                    "warning",
                    "codex-yaml-invalid",
                    f"Cannot read {item.codex_path} ({reason}); the skill loads without "
                    "its Codex metadata. Fix or remove the file.",
                )
            )
    parsed = (_PARSER or _parser()).parse_skill_bytes(
        data,
        path=item.path,
        # A linked folder is an alias: its real folder name is the one the author
        # chose, so name checks use that.
        dir_name=item.real_path.rpartition(os.sep)[0].rpartition(os.sep)[2],
        strict=strict,
        scope=item.root.scope,
        rank=item.root.rank,
        root=item.root.path,
        plugin=item.plugin,
        real_path=item.real_path,
        mtime_ns=item.mtime_ns,
        size=item.size,
        codex_yaml=codex_text,
        codex_path=item.codex_path if codex_text is not None else None,
    )
    file_problems.extend(parsed.problems)
    return item, parsed.skill, tuple(file_problems)


def _relocate(skill: Skill, item: _Found) -> Skill:
    """A cached parse with this run's location fields (cheap when they match)."""
    root = item.root
    if (
        skill.scope == root.scope
        and skill.rank == root.rank
        and skill.root == item.root.path
        and skill.plugin == item.plugin
    ):
        return skill
    return replace(skill, scope=root.scope, rank=root.rank, root=item.root.path, plugin=item.plugin)


# --------------------------------------------------------------------------- replay


class _WalkRecord:
    """What a fresh walk of one root saw, so the next run can replay it with `stat`s.

    Not reusable when a symlink was involved (its target can change while no
    folder does), a folder could not be listed, or a file belonged to an earlier root.
    """

    __slots__ = ("dirs", "items", "manifests", "problems", "reusable")

    def __init__(self) -> None:
        self.dirs: list[tuple[str, int, int]] = []
        self.manifests: list[tuple[str, tuple[int, int, int] | None]] = []
        self.problems: list[Problem] = []
        self.items: list[tuple[_Found, Skill | None, tuple[Problem, ...]]] = []
        self.reusable = True

    def freeze(self) -> tuple[Any, ...]:
        """The walk as an `_index.Snapshot`."""
        from ._index import problem_values, skill_values

        return (
            tuple(self.dirs),
            tuple(self.manifests),
            problem_values(self.problems),
            tuple(
                (
                    _item_values(item),
                    None if skill is None else skill_values(skill),
                    problem_values(file_problems) if file_problems else (),
                )
                for item, skill, file_problems in self.items
            ),
        )


def _item_values(item: _Found) -> tuple[Any, ...]:
    """`item` without its root (the snapshot's key names it): `_index.Snapshot`'s item."""
    return item[:3] + item[4:]


def _file_sig(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def _snapshot_key(root: Root, limits: tuple[int, int, int, bool]) -> str:
    parts = (root.path, root.scope, root.rank, root.plugin, root.follow_symlinks, *limits)
    return "\0".join(map(str, parts))


def _replay_root(
    root: Root,
    limits: tuple[int, int, int, bool],
    *,
    cache: SkillCache,
    claimed: set[str],
    skills: list[Skill],
    problems: list[Problem],
) -> bool:
    """Serve one root from its snapshot when no folder in it changed; else False.

    A folder's (mtime, ctime) change whenever an entry is added, removed or
    renamed, so unchanged folders mean the walk would find the same SKILL.md
    files. Each file is still `stat`ed: a changed one is loaded (parsed if the
    parse cache misses too) and the snapshot rewritten.
    """
    key = _snapshot_key(root, limits)
    snapshot = cache.snapshot(key)
    if snapshot is None:
        return False
    try:
        dirs, manifests, walk_problems, entries = snapshot
        stat_ = os.stat
        for path, mtime_ns, ctime_ns in dirs:
            st = stat_(path)
            if st.st_mtime_ns != mtime_ns or st.st_ctime_ns != ctime_ns:
                return False
        for path, sig in manifests:
            if _file_sig(path) != sig:
                return False
    except (OSError, ValueError, TypeError):
        return False
    from ._index import problem_values, problems_from_values, skill_from_values, skill_values

    max_file_bytes, strict = limits[2], limits[3]
    out_skills: list[Skill] = []
    out_problems = list(problems_from_values(walk_problems))
    reals: list[str] = []
    kept: list[Any] = []
    changed = False
    is_regular = stat.S_ISREG
    # The loop below runs once per skill on every warm run: fields are read by
    # offset (`_index.Snapshot` documents the layout) and unpacked only for a file
    # that changed.
    for entry in entries:
        item_values, values, file_values = entry
        real = item_values[2]
        if real in claimed:
            return False  # an earlier root now holds this file: walk afresh
        try:
            st = stat_(item_values[0])
        except OSError:
            return False
        if not is_regular(st.st_mode):
            return False
        codex_path, new_sig = _codex_sidecar(item_values[1]) if item_values[9] else (None, "")
        reals.append(real)
        if (
            st.st_mtime_ns == item_values[4]
            and st.st_size == item_values[5]
            and st.st_ino == item_values[6]
            and new_sig == item_values[8]
        ):
            if values is not None:
                out_skills.append(skill_from_values(values))
            if file_values:
                out_problems.extend(problems_from_values(file_values))
            kept.append(entry)
            continue
        path, folder, real, plugin, _mtime, _size, _ino, _codex_path, _sig, agents = item_values
        item = _Found(
            path=path,
            dir=folder,
            real_path=real,
            root=root,
            plugin=plugin,
            mtime_ns=st.st_mtime_ns,
            size=st.st_size,
            ino=st.st_ino,
            codex_path=codex_path,
            codex_sig=new_sig,
            agents=agents,
        )
        loaded, skill, file_problems = _load(
            item, cache=cache, strict=strict, max_file_bytes=max_file_bytes
        )
        if loaded is None:
            return False  # gone since the `stat`: walk afresh
        item = loaded
        if skill is not None:
            out_skills.append(skill)
        out_problems.extend(file_problems)
        kept.append(
            (
                _item_values(item),
                None if skill is None else skill_values(skill),
                problem_values(file_problems),
            )
        )
        changed = True
    claimed.update(reals)
    skills.extend(out_skills)
    problems.extend(out_problems)
    if changed:
        cache.store_snapshot(key, root.path, (dirs, manifests, walk_problems, tuple(kept)))
    return True


# --------------------------------------------------------------------------- assemble


def _label(skill: Skill, by_qualified: dict[str, int]) -> str:
    """The shortest unambiguous way to name `skill`: its qualified id, else its path."""
    if by_qualified.get(skill.qualified_name, 0) == 1:
        return skill.qualified_name
    return skill.path


def _resolve_collisions(skills: list[Skill], problems: list[Problem]) -> list[Skill]:
    """Mark shadowed skills and report shadowed and ambiguous names.

    Mirrors `Catalog.winners`: for each bare name the candidates of highest
    precedence win. A single winner shadows the rest (`shadowed_by` set and a
    `name-shadowed` warning each); tied winners make the name ambiguous (one
    `name-ambiguous` warning per name, naming the ids to use), and any lower
    candidates are shadowed by the first winner in catalog order.
    """
    by_name: dict[str, list[int]] = {}
    for index, skill in enumerate(skills):
        by_name.setdefault(skill.name, []).append(index)
    by_qualified: dict[str, int] = {}
    for indexes in by_name.values():
        if len(indexes) > 1:
            for i in indexes:
                qualified = skills[i].qualified_name
                by_qualified[qualified] = by_qualified.get(qualified, 0) + 1
    result = list(skills)
    for name in sorted(by_name):
        indexes = by_name[name]
        if len(indexes) < 2:
            continue
        candidates = sorted(
            (skills[i] for i in indexes), key=lambda s: (precedence(s), s.name, s.path)
        )
        best = precedence(candidates[0])
        winners = [s for s in candidates if precedence(s) == best]
        winner = winners[0]
        if len(winners) > 1:
            labels = ", ".join(_label(s, by_qualified) for s in winners)
            problems.append(
                _problem(
                    winner.path,
                    "warning",
                    "name-ambiguous",
                    f"{len(winners)} skills named '{name}' have the same precedence "
                    f"({winner.scope} scope): {labels}. A bare '{name}' cannot be resolved; "
                    "name one by qualified id or path, or rename one of them.",
                )
            )
        losers = {s.key for s in candidates[len(winners) :]}
        for i in indexes:
            skill = skills[i]
            if skill.key not in losers:
                continue
            result[i] = replace(skill, shadowed_by=winner.path)
            problems.append(
                _problem(
                    skill.path,
                    "warning",
                    "name-shadowed",
                    f"Skill '{name}' at {skill.path} ({skill.scope} scope) is shadowed by "
                    f"{winner.path} ({winner.scope} scope), which a bare '{name}' resolves "
                    f"to. Use {_label(skill, by_qualified)} to reach it, or rename or "
                    "remove one copy.",
                )
            )
    return result


def _ordered_roots(roots: Sequence[Root]) -> tuple[Root, ...]:
    """Roots by precedence (stable), each path once: the first reach of a skill wins."""
    unique: dict[str, Root] = {}
    for root in sorted(roots, key=lambda r: (SCOPE_RANK[r.scope], r.rank)):
        path = os.path.abspath(os.path.expanduser(root.path))
        if path not in unique:
            unique[path] = root if root.path == path else replace(root, path=path)
    return tuple(unique.values())


def discover(
    *,
    cwd: str | None = None,
    roots: Sequence[Root] | None = None,
    extra_roots: Sequence[str] = (),
    include_user: bool = True,
    include_system: bool = True,
    include_repo: bool = True,
    include_admin: bool = True,
    repo_skills_dir: bool = False,
    strict: bool = False,
    use_cache: bool = True,
    cache_dir: str | None = None,
    max_depth: int = 6,
    max_dirs: int = 2000,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> Catalog:
    """Find every skill under the roots and return them with every problem.

    Args:
        cwd: Where repo discovery starts (default: the current directory).
        roots: Use exactly these roots instead of `default_roots(...)`;
            `extra_roots` are still added after them.
        extra_roots: Folders of scope `extra`, in precedence order.
        include_user: Walk the user roots.
        include_system: Walk the skills bundled with skillpack.
        include_repo: Walk the repo roots from cwd up to the project root.
        include_admin: Walk the admin root.
        repo_skills_dir: Also treat `skills/` in each repo folder as a root.
        strict: Validate strictly (spec warnings become errors).
        use_cache: Read and write the persistent index; False touches no cache file.
        cache_dir: Folder of the index file (default: see `_index.index_path`).
        max_depth: Deepest folder level searched below a root.
        max_dirs: Most folders listed per root.
        max_file_bytes: Larger SKILL.md files are reported, not read.

    Returns:
        A `Catalog` of the loaded skills (shadowed ones included, with
        `shadowed_by` set), the problems of every file, root and the index, and the
        roots searched in precedence order.
    """
    if roots is None:
        chosen = default_roots(
            cwd=cwd,
            extra_roots=extra_roots,
            include_user=include_user,
            include_system=include_system,
            include_repo=include_repo,
            include_admin=include_admin,
            repo_skills_dir=repo_skills_dir,
        )
    else:
        base = max((r.rank + 1 for r in roots if r.scope == "extra"), default=0)
        chosen = tuple(roots) + tuple(
            Root(path=os.path.abspath(os.path.expanduser(p)), scope="extra", rank=base + i)
            for i, p in enumerate(extra_roots)
        )
    ordered = _ordered_roots(chosen)
    # Discovery allocates tens of thousands of small containers that all live on;
    # cyclic collections during it find nothing and cost a fifth of a warm run.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _discover(
            ordered,
            strict=strict,
            use_cache=use_cache,
            cache_dir=cache_dir,
            max_depth=max_depth,
            max_dirs=max_dirs,
            max_file_bytes=max_file_bytes,
        )
    finally:
        if gc_was_enabled:
            # The catalog lives on: move it (with everything else alive now) to
            # the oldest generation, as surviving two young collections would,
            # without those two scans of every object it holds. Nothing is left
            # frozen; a later full collection still sees all of it.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _discover(
    ordered: tuple[Root, ...],
    *,
    strict: bool,
    use_cache: bool,
    cache_dir: str | None,
    max_depth: int,
    max_dirs: int,
    max_file_bytes: int,
) -> Catalog:
    problems: list[Problem] = []
    cache: SkillCache | None = None
    if use_cache:
        from ._index import SkillCache

        cache = SkillCache.open(cache_dir, strict=strict, problems=problems)
    claimed: set[str] = set()
    skills: list[Skill] = []
    try:
        for root in ordered:
            try:
                is_dir = os.path.isdir(root.path)
                exists = is_dir or os.path.lexists(root.path)
            except OSError:
                is_dir = exists = False
            if not is_dir:
                what = "is not a folder" if exists else "does not exist"
                problems.append(
                    _problem(
                        root.path,
                        "warning",
                        "root-missing",
                        f"Skill root {root.path} ({root.scope} scope) {what}; nothing was "
                        "loaded from it. Check the path given with --root or `roots`, or "
                        "create the folder.",
                    )
                )
                continue
            limits = (max_depth, max_dirs, max_file_bytes, strict)
            if cache is not None and _replay_root(
                root,
                limits,
                cache=cache,
                claimed=claimed,
                skills=skills,
                problems=problems,
            ):
                continue
            found: list[_Found] = []
            record = _WalkRecord() if cache is not None else None
            walk_start = len(problems)
            _walk_root(
                root,
                max_depth=max_depth,
                max_dirs=max_dirs,
                found=found,
                problems=problems,
                record=record,
            )
            if record is not None:
                record.problems.extend(problems[walk_start:])
            for item in found:
                if item.real_path in claimed:
                    if record is not None:
                        record.reusable = False  # its parse belongs to an earlier root
                    continue
                claimed.add(item.real_path)
                loaded, skill, file_problems = _load(
                    item, cache=cache, strict=strict, max_file_bytes=max_file_bytes
                )
                if loaded is None:
                    if record is not None:
                        record.reusable = False  # it changed while we walked
                    continue
                item = loaded
                if skill is not None:
                    skills.append(skill)
                problems.extend(file_problems)
                if record is not None:
                    record.items.append((item, skill, file_problems))
            if cache is not None and record is not None:
                # Stored even when it cannot be replayed: its parses still serve.
                cache.store_snapshot(
                    _snapshot_key(root, limits),
                    root.path,
                    record.freeze(),
                    replay=record.reusable,
                )
        if cache is not None:
            cache.commit()
    finally:
        if cache is not None:
            cache.close()
    skills = _resolve_collisions(skills, problems)
    return Catalog(skills=tuple(skills), problems=tuple(problems), roots=ordered)


# --------------------------------------------------------------------------- content


def read_body(skill: Skill, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> str:
    """The Markdown body of a skill, re-read from disk (frontmatter removed).

    Raises:
        SkillNotFoundError: the SKILL.md is gone.
        SkillIOError: it cannot be read, is too large or is not UTF-8.
    """
    try:
        data = _read_bytes(skill.path, max_bytes)
    except FileNotFoundError:
        raise SkillNotFoundError(
            f"Skill '{skill.name}' is gone: {skill.path} no longer exists. Run discovery "
            "again (`skillpack list`) to refresh the catalog."
        ) from None
    except OSError as exc:
        raise SkillIOError(
            f"Cannot read {skill.path}: {exc.strerror or exc}. Check its permissions."
        ) from exc
    if len(data) > max_bytes:
        raise SkillIOError(
            f"{skill.path} is over {max_bytes} bytes; move long material into references/."
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillIOError(
            f"{skill.path} is not valid UTF-8 ({exc}); re-save it as UTF-8."
        ) from exc
    from ._frontmatter import split_frontmatter

    _frontmatter, body, _line = split_frontmatter(text)
    return body


def list_skill_files(skill: Skill, *, max_files: int = 200) -> tuple[tuple[str, ...], bool]:
    """Relative POSIX paths of the files bundled with a skill, never read.

    Top-level files first, then each subfolder breadth-first, names sorted. The
    SKILL.md itself, hidden entries, noise folders, nested skills (subfolders with
    their own SKILL.md), folder symlinks and file symlinks leaving the skill folder
    are left out. At most `max_files` files and as many folders are visited.

    Returns:
        The paths, and whether the listing was cut short by the limits.
    """
    base_real = os.path.realpath(skill.dir)
    files: list[str] = []
    queue: deque[tuple[str, str]] = deque([(skill.dir, "")])
    folders = 0
    while queue:
        if len(files) >= max_files or folders >= max_files:
            return tuple(files[:max_files]), True
        folder, prefix = queue.popleft()
        folders += 1
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        if prefix and any(e.name == SKILL_FILE for e in entries):
            continue  # a nested skill owns its own files
        for entry in entries:
            name = entry.name
            if name[0] == "." or name in NOISE_DIRS or (not prefix and name == SKILL_FILE):
                continue
            rel = f"{prefix}{name}"
            try:
                if entry.is_symlink():
                    if entry.is_dir() or not _inside(os.path.realpath(entry.path), base_real):
                        continue
                    if entry.is_file():
                        files.append(rel)
                elif entry.is_dir():
                    queue.append((entry.path, f"{rel}/"))
                elif entry.is_file():
                    files.append(rel)
            except OSError:
                continue
    truncated = len(files) > max_files
    return tuple(files[:max_files]), truncated


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


_DRIVE = re.compile(r"^[A-Za-z]:")


def _refuse(skill: Skill, relpath: str, why: str) -> SkillPermissionError:
    return SkillPermissionError(
        f"Refused to read {relpath!r} from skill '{skill.name}': {why}. Only files inside "
        f"{skill.dir} can be read; give a relative path such as 'references/guide.md'."
    )


def read_skill_file(skill: Skill, relpath: str, *, max_bytes: int = 1_000_000) -> str:
    """One bundled file of a skill as text, confined to the skill's folder.

    Raises:
        SkillPermissionError: the path is absolute, climbs out with `..` (also
            percent-encoded or with backslashes), holds a NUL, names a hidden
            file, or is a symlink resolving outside the skill folder.
        SkillNotFoundError: no such file in the skill.
        SkillIOError: the file is over `max_bytes`, not UTF-8 text, or unreadable.
    """
    if "\x00" in relpath:
        raise _refuse(skill, relpath, "the path contains a NUL character")
    # Check every spelling an attacker might rely on being decoded later.
    spellings = {relpath}
    decoded = relpath
    from urllib.parse import unquote

    for _ in range(3):
        decoded = unquote(decoded)
        spellings.add(decoded)
    for spelling in spellings:
        if "\x00" in spelling:
            raise _refuse(skill, relpath, "the path contains an encoded NUL character")
        normal = spelling.replace("\\", "/")
        if normal.startswith("/") or _DRIVE.match(normal):
            raise _refuse(skill, relpath, "the path is absolute")
        parts = [p for p in normal.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise _refuse(skill, relpath, "the path climbs out of the folder with '..'")
        if any(p.startswith(".") for p in parts):
            raise _refuse(skill, relpath, "hidden files are not served")
    parts = [p for p in relpath.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        raise SkillNotFoundError(
            f"No file given for skill '{skill.name}'; pass a path such as "
            "'references/guide.md' (see the skill's file listing)."
        )
    candidate = os.path.join(skill.dir, *parts)
    if not _inside(os.path.realpath(candidate), os.path.realpath(skill.dir)):
        raise _refuse(skill, relpath, "it is a symlink that resolves outside the skill folder")
    try:
        st = os.stat(candidate)
    except OSError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode):
        raise SkillNotFoundError(
            f"Skill '{skill.name}' has no file {'/'.join(parts)!r} in {skill.dir}. "
            "See the skill's file listing for what it bundles."
        )
    if st.st_size > max_bytes:
        raise SkillIOError(
            f"{candidate} is {st.st_size} bytes, over the {max_bytes}-byte limit for one "
            "read; open it outside the agent or ask for a smaller file."
        )
    try:
        data = _read_bytes(candidate, max_bytes)
    except OSError as exc:
        raise SkillIOError(f"Cannot read {candidate}: {exc.strerror or exc}.") from exc
    if len(data) > max_bytes:
        raise SkillIOError(f"{candidate} grew over the {max_bytes}-byte limit while read.")
    if b"\x00" in data:
        raise SkillIOError(f"{candidate} is a binary file; only text files can be read.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillIOError(f"{candidate} is not UTF-8 text ({exc}).") from exc
