"""Whether a reference names a skill: one matcher for config entries and permission rules.

A reference is a bare name, the skill's qualified id (`Skill.qualified_name`:
`<plugin>:<name>` for a plugin skill, else `<scope>:<name>`, the same ids the
resolver and `Catalog.qualified` accept) or an absolute path (the skill's folder or
its SKILL.md, as discovered or real). With `glob=True` it is an `fnmatch` pattern
over the same forms plus `<scope>:<name>` for plugin skills too, so a rule such as
`repo:*` covers every skill found in the repo, plugins included: a glob selects a
set, it does not name one skill. A reference holding a `/` is a path reference.
Pure: the real paths of path references, when the caller wants symlinked entries to
match, come resolved in `aliases`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from .._model import Skill


def is_path_ref(ref: str) -> bool:
    """A reference naming a path rather than a name or qualified id."""
    return "/" in ref or os.sep in ref


def ref_names(skill: Skill) -> tuple[str, ...]:
    """The ids that name `skill`: its bare name and its qualified id."""
    return (skill.name, skill.qualified_name)


def glob_names(skill: Skill) -> tuple[str, ...]:
    """What a glob is matched against: the ids, and `<scope>:<name>` for plugin skills."""
    if skill.plugin:
        return (skill.name, skill.qualified_name, f"{skill.scope}:{skill.name}")
    return (skill.name, skill.qualified_name)


def ref_paths(skill: Skill) -> tuple[str, ...]:
    """The paths a reference may use for `skill`: its folder and SKILL.md, as
    discovered and as real paths, normalized."""
    paths = [skill.dir, skill.path]
    if skill.real_path:
        paths += [skill.real_path, os.path.dirname(skill.real_path)]
    return tuple(os.path.normpath(p) for p in paths if p)


def ref_matches(ref: str, skill: Skill, *, glob: bool = False) -> bool:
    """Whether one reference names `skill` (see the module docstring)."""
    if is_path_ref(ref):
        target = os.path.normpath(ref)
        if glob:
            return any(fnmatchcase(path, target) for path in ref_paths(skill))
        return target in ref_paths(skill)
    if glob:
        return any(fnmatchcase(name, ref) for name in glob_names(skill))
    return ref in ref_names(skill)


@dataclass(frozen=True, slots=True)
class SkillRefs:
    """A set of exact references (names, qualified ids, paths), matched in O(1).

    `aliases` maps a path reference to its real path, so a skill reached through
    a symlink matches an entry written either way.
    """

    names: frozenset[str] = frozenset()
    paths: frozenset[str] = frozenset()

    @classmethod
    def of(cls, refs: Iterable[str], aliases: Mapping[str, str] | None = None) -> SkillRefs:
        names: set[str] = set()
        paths: set[str] = set()
        for ref in refs:
            if is_path_ref(ref):
                paths.add(os.path.normpath(ref))
                alias = (aliases or {}).get(ref)
                if alias:
                    paths.add(os.path.normpath(alias))
            else:
                names.add(ref)
        return cls(frozenset(names), frozenset(paths))

    def __bool__(self) -> bool:
        return bool(self.names or self.paths)

    def matches(self, skill: Skill) -> bool:
        if self.names and not self.names.isdisjoint(ref_names(skill)):
            return True
        return bool(self.paths) and not self.paths.isdisjoint(ref_paths(skill))


EMPTY_REFS = SkillRefs()
