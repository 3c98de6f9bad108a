"""Outputs kept for a catalog that has not changed: a warm run at the cost of its stats.

A command that renders the whole catalog as one document (`list --json`) keeps the
document in the index beside what proves that it still holds: per root, the folders,
plugin manifests and SKILL.md files its scan saw, with their times
(`Discovered.recorded`). A later run whose inputs are the same (the config as read and
its problems, the discovery options and roots: `WorkspaceInputs.key`; and skillpack's
own code: `package_fingerprint`) `stat`s those paths and, when none moved, writes the
kept document: no snapshot is decoded, no skill built, nothing rendered. The proof is
the one a replay relies on (a folder's times move when an entry is added, removed or
renamed; a file's version moves when it is edited), so a kept document is exactly what
rendering again would write.

A surface that discovers the catalog anyway (a server) keeps what it derives from it
as a value (`keep_value`) under the catalog's stamp instead (`Discovered.stamp`: which
write of each root's snapshot it was served from): discovery has done the `stat`s.
"""

from __future__ import annotations

import marshal
import os
from typing import Any

from ..discovery._options import DiscoveryOptions
from ._workspace import Workspace, workspace_inputs


def kept_output(kind: str, options: DiscoveryOptions, *, cwd: str | None = None) -> bytes | None:
    """The `kind` document kept for the catalog `options` and the config give (the
    UTF-8 bytes `keep_output` was given), if that catalog is unchanged since; None when
    it must be rendered (then `keep_output`)."""
    if not options.use_cache:
        return None
    inputs = workspace_inputs(options, cwd=cwd)
    key = inputs.key
    if key is None:
        return None
    from ..index._cache import SkillCache

    cache = SkillCache.open_existing(_cache_dir(options))
    if cache is None:
        return None
    try:
        return cache.kept_output(_scope(kind, key), _still_holds)
    finally:
        cache.close()


def keep_output(kind: str, workspace: Workspace, options: DiscoveryOptions, text: str) -> None:
    """Keep `text`, rendered from `workspace` alone, as its `kind` document.

    Only a document that depends on nothing but the workspace's inputs and files may
    be kept (not one that reads the environment). Nothing is kept when the workspace
    cannot be proven unchanged by `stat`s (see `Discovered.recorded`) or the index is
    off, nor for a catalog the index did not already hold as it is (`Discovered.stamp`):
    a first run, or one after an edit, already pays for parsing and storing, and a
    catalog being edited would rewrite megabytes on every run. So the run after one
    that found the catalog unchanged serves it kept.
    """
    discovered = workspace.discovered
    if discovered is None or discovered.stamp is None:
        return
    recorded = discovered.recorded
    if not options.use_cache or workspace.inputs is None or recorded is None:
        return
    from ..index._cache import SkillCache

    cache = SkillCache.open(_cache_dir(options))
    try:
        cache.keep_output(_scope(kind, workspace.inputs), recorded, text.encode())
    finally:
        cache.close()


def kept_value(kind: str, workspace: Workspace, options: DiscoveryOptions) -> Any | None:
    """The `kind` value kept (`keep_value`) for this very catalog, else None.

    For a surface that has discovered the catalog already (a server) and wants what it
    derives from it: "this very catalog" is the same inputs and code and the same
    index stamp (`Discovered.stamp`: every root served as the index stored it), so no
    `stat` is needed beyond discovery's own.
    """
    scope = _stamped_scope(kind, workspace)
    if scope is None or not options.use_cache:
        return None
    from ..index._cache import SkillCache

    cache = SkillCache.open_existing(_cache_dir(options))
    if cache is None:
        return None
    try:
        blob = cache.kept_output(scope, _holds)
    finally:
        cache.close()
    if blob is None:
        return None
    try:
        return marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None


def keep_value(kind: str, workspace: Workspace, options: DiscoveryOptions, value: Any) -> None:
    """Keep `value` (plain values marshal holds), derived from `workspace`'s catalog and
    config alone, as its `kind` value; nothing is kept for a catalog without a stamp."""
    scope = _stamped_scope(kind, workspace)
    if scope is None or not options.use_cache:
        return
    try:
        blob = marshal.dumps(value)
    except ValueError:
        return
    from ..index._cache import SkillCache

    cache = SkillCache.open(_cache_dir(options))
    try:
        cache.keep_output(scope, None, blob)
    finally:
        cache.close()


def _stamped_scope(kind: str, workspace: Workspace) -> str | None:
    discovered = workspace.discovered
    if discovered is None or discovered.stamp is None or workspace.inputs is None:
        return None
    return _scope(kind, f"{workspace.inputs}\0{discovered.stamp}")


def _holds(_recorded: Any) -> bool:
    return True  # the stamp in the scope is the proof


def _cache_dir(options: DiscoveryOptions) -> str | None:
    return None if options.cache_dir is None else os.fspath(options.cache_dir)


def _scope(kind: str, inputs: str) -> str:
    """The key a document is kept under: all it was rendered from but the files, in full
    (a few kilobytes; a digest would cost a hashing module's import on every run)."""
    from ..index._cache import package_fingerprint

    return "\0".join((kind, package_fingerprint(), inputs))


def _still_holds(recorded: Any) -> bool:
    from ..discovery._scan import still_recorded

    try:
        return all(still_recorded(root) for root in recorded)
    except TypeError:
        return False  # not a sequence: a row of another layout
