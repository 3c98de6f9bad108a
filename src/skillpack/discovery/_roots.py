"""Roots and scopes: where skills are looked for, and in which precedence.

The repo roots come from the folders between cwd and the project root
(`_paths.project_dirs`), plus the folders between each path a host reported
(`note_paths`) and the project root; the user roots from the home folder (`_paths.
user_roots`), the admin root from `$SKILLPACK_ADMIN_DIR` and the system root from the
package (all named in `_paths`), and the `skills.paths` of OpenCode's config
(`_opencode`). `default_roots` puts them in precedence order (design rules: discovery
and precedence); the stat calls here (does the folder exist, is this the project root)
and the reading of those small config files are the only I/O.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence

from .._model import Root, RootKind, Scope
from .._paths import (
    REPO_FOLDERS,
    admin_dir,
    agents_reading,
    opencode_dirs,
    project_dirs,
    system_skills_dir,
    user_roots,
)
from ._opencode import opencode_skill_paths
from ._options import DEFAULT_OPTIONS, DiscoveryOptions

REPO_SKILL_DIRS: tuple[str, ...] = tuple(sub for sub, kind, _ in REPO_FOLDERS if kind == "skills")
"""Skill roots looked for in every folder from cwd up to the project root, in rank order."""

REPO_COMMAND_DIRS: tuple[str, ...] = tuple(
    sub for sub, kind, _ in REPO_FOLDERS if kind == "commands"
)
"""Legacy command roots of every repo folder, ranked after its skill roots."""

_Subdir = tuple[str, RootKind, tuple[str, ...]]


def _repo_subdirs(repo_skills_dir: bool, off: Collection[str] = ()) -> tuple[_Subdir, ...]:
    """The roots of one repo folder, in rank order (`skills/` last, when configured),
    each with the agents that read it; those of a family in `off` are left out, and
    keep their rank, so turning a family off never reorders the others."""
    subdirs: list[_Subdir] = [
        (sub if family not in off else "", kind, agents_reading(family, kind, "repo"))
        for sub, kind, family in REPO_FOLDERS
    ]
    if repo_skills_dir:
        subdirs.append(("skills", "skills", ()))
    return tuple(subdirs)


def noted_dirs(
    chain: Sequence[str], note_paths: Iterable[str | os.PathLike[str]]
) -> list[tuple[str, int]]:
    """Folders between each noted path and the project root (`chain[-1]`) that are not
    on `chain`, each with its depth below the project root, deepest first.

    A noted path outside the project is ignored; a file stands for its folder.
    """
    project = chain[-1]
    prefix = project.rstrip(os.sep) + os.sep
    on_chain = set(chain)
    depths: dict[str, int] = {}
    for noted in note_paths:
        path = os.path.abspath(os.path.expanduser(os.fspath(noted)))
        if not os.path.isdir(path):
            path = os.path.dirname(path)
        if not path.startswith(prefix):
            continue
        while path != project and path not in on_chain and path not in depths:
            depths[path] = path[len(prefix) :].count(os.sep) + 1
            path = os.path.dirname(path)
    return sorted(depths.items(), key=lambda item: (-item[1], item[0]))


def default_roots(
    options: DiscoveryOptions | None = None, *, cwd: str | None = None
) -> tuple[Root, ...]:
    """The roots to discover, highest precedence first (design rules: discovery and precedence).

    Default roots that do not exist are left out (that is normal). Extra roots are
    always kept, so that `discover` can report a missing one as `root-missing`. The
    folders the `skills.paths` of OpenCode's `opencode.json` names (`_opencode`) are
    extra roots too, ranked after those given, left out when missing.
    A folder that is both a repo root and a user root (cwd is the home folder) is
    a user root. Ranks: repo roots are ranked by distance from cwd, then by their
    position in `REPO_SKILL_DIRS` + `REPO_COMMAND_DIRS` (`skills/` last); folders
    that only a noted path brings in rank after the whole cwd chain, deeper ones
    first, and folders at the same depth tie; user roots in `_paths.user_roots`
    order; extra roots in the order given. Distinct ranks mean a copy of a skill
    in two tool folders is *shadowed*, not ambiguous: a bare name still resolves.

    Args:
        options: Which scopes, extra roots, noted paths and whether `skills/` counts
            (`include_*`, `extra_roots`, `note_paths`, `repo_skills_dir`; its `roots`
            is for `chosen_roots`); default: `DiscoveryOptions()`.
        cwd: Where repo discovery starts (default: the current directory).
    """
    o = DEFAULT_OPTIONS if options is None else options
    include_user, include_repo = o.include_user, o.include_repo
    extra_roots = o.extra_roots
    roots: list[Root] = []
    seen: set[str] = set()

    def add(
        path: str,
        scope: Scope,
        rank: int,
        *,
        kind: RootKind = "skills",
        must_exist: bool = True,
        agents: tuple[str, ...] = (),
    ) -> None:
        path = os.path.abspath(os.path.expanduser(path))
        if path in seen or (must_exist and not os.path.isdir(path)):
            return
        seen.add(path)
        follow = scope != "system"
        roots.append(
            Root(
                path=path, scope=scope, rank=rank, follow_symlinks=follow, kind=kind, agents=agents
            )
        )

    off = frozenset(o.folders_off or ())
    users = [
        (path, kind, agents_reading(family, kind, "user"))
        for path, kind, family in (user_roots() if include_user else ())
        if family not in off
    ]
    chain: tuple[str, ...] = ()
    if o.include_admin:
        add(admin_dir(), "admin", 0)
    if include_repo:
        user_paths = {os.path.abspath(path) for path, _kind, _agents in users}
        seen.update(user_paths)
        subdirs = _repo_subdirs(bool(o.repo_skills_dir), off)
        chain = project_dirs(cwd or os.getcwd())
        levels = [(level, base) for level, base in enumerate(chain)]
        noted = noted_dirs(chain, o.note_paths)
        if noted:
            deepest = noted[0][1]
            levels += [(len(chain) + deepest - depth, base) for base, depth in noted]
        for level, base in levels:
            for index, (sub, kind, agents) in enumerate(subdirs):
                if sub:
                    rank = level * len(subdirs) + index
                    add(os.path.join(base, sub), "repo", rank, kind=kind, agents=agents)
        seen.difference_update(user_paths)
    for rank, extra in enumerate(extra_roots):
        add(os.fspath(extra), "extra", rank, must_exist=False)
    configured = (
        opencode_skill_paths(cwd or os.getcwd(), opencode_dirs() if include_user else (), chain)
        if "opencode" not in off
        else []
    )
    for rank, path in enumerate(configured, start=len(extra_roots)):
        add(path, "extra", rank)
    for rank, (user, kind, agents) in enumerate(users):
        add(user, "user", rank, kind=kind, agents=agents)
    if o.include_system:
        add(system_skills_dir(), "system", 0)
    return tuple(roots)


def chosen_roots(options: DiscoveryOptions, *, cwd: str | None = None) -> tuple[Root, ...]:
    """The roots a run over `options` searches: `options.roots` when given, followed by
    its `extra_roots` (ranked after the given extra ones), else `default_roots`."""
    given = options.root_values
    if given is None:
        return default_roots(options, cwd=cwd)
    base = max((r.rank + 1 for r in given if r.scope == "extra"), default=0)
    return given + tuple(
        Root(path=os.path.abspath(os.path.expanduser(p)), scope="extra", rank=base + i)
        for i, p in enumerate(options.extra_roots)
    )
