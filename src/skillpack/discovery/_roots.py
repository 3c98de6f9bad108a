"""Roots and scopes: where skills are looked for, and in which precedence.

The repo roots come from the folders between cwd and the project root
(`_paths.project_dirs`), the user roots from the home folder, the admin root from
`$SKILLPACK_ADMIN_DIR` and the system root from the package (all named in
`_paths`). `default_roots` puts them in precedence order (DESIGN §3); the stat
calls here (does the folder exist, is this the project root) are the only I/O.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .._model import Root, Scope
from .._paths import admin_dir, project_dirs, system_skills_dir, user_skill_dirs

REPO_SKILL_DIRS: tuple[str, ...] = (
    ".agents/skills",
    ".claude/skills",
    ".opencode/skills",
    ".codex/skills",
)
"""Skill roots looked for in every folder from cwd up to the project root, in rank order."""

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

    users = user_skill_dirs() if include_user else ()
    if include_admin:
        add(admin_dir(), "admin", 0)
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
        add(system_skills_dir(), "system", 0)
    return tuple(roots)
