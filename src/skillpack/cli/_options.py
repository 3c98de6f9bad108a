"""The options every catalog command shares (`--root`, `--cwd`, `--no-user`, ...)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from .._limits import MAX_DEPTH, MAX_DIRS
from ._output import warn

if TYPE_CHECKING:
    from .._model import Problem
    from ..config._schema import Config
    from ..discovery._options import DiscoveryOptions
    from ..runtime._session import Session
    from ..runtime._workspace import Workspace


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogOptions:
    """What `--root/--cwd/--no-user/--no-system/--no-cache/--max-depth/--max-dirs` ask for."""

    roots: tuple[str, ...]
    cwd: str | None
    no_user: bool
    no_system: bool
    no_cache: bool
    max_depth: int | None = None
    """The walk's depth bound for every root (None: the config's `[discovery] max_depth`)."""
    max_dirs: int | None = None
    """Folders walked per root at most (None: the config's `[discovery] max_dirs`)."""

    def discovery(self) -> DiscoveryOptions:
        """What these flags ask discovery for, as the one value every surface passes on
        (each `--root` made absolute: a server keeps it for every workspace)."""
        from ..discovery._options import DiscoveryOptions

        return DiscoveryOptions(
            extra_roots=tuple(os.path.abspath(r) for r in self.roots),
            include_user=not self.no_user,
            include_system=not self.no_system,
            use_cache=not self.no_cache,
            max_depth=self.max_depth,
            max_dirs=self.max_dirs,
        )

    def config(self) -> Config:
        """The config these flags read (the user file unless `--no-user`, then the
        project's of `--cwd`), as a server reads it once at start."""
        from ..config._files import load_config

        return load_config(cwd=self.cwd, user=not self.no_user)[0]

    def workspace(self, *, warn_missing_roots: bool = True) -> Workspace:
        """The discovered workspace. A `--root` that is not a folder is warned about
        on stderr unless the caller prints the catalog's problems itself."""
        from ..runtime._workspace import open_workspace

        workspace = open_workspace(self.discovery(), cwd=self.cwd)
        if warn_missing_roots:
            _warn_missing_roots(workspace.problems)
        return workspace

    def session(self, **kwargs: Any) -> Session:
        """A session over the discovered catalog; a `--root` that is not a folder
        is warned about on stderr (otherwise a typo reads as "no such skill").
        `kwargs` go to `Session.open` (e.g. `shell=`, `refresh="watch"`)."""
        from ..runtime._session import Session

        # A command runs once over what it discovered: nothing to keep live.
        kwargs.setdefault("refresh", "manual")
        session = Session.open(cwd=self.cwd, options=self.discovery(), **kwargs)
        _warn_missing_roots(session.catalog.problems)
        return session


def _warn_missing_roots(problems: Iterable[Problem]) -> None:
    for problem in problems:
        if problem.code == "root-missing":
            warn(problem.message)


def catalog_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--root/--cwd/--no-user/--no-system/--no-cache/--json` to a command.

    The command receives them as `catalog: CatalogOptions` and `as_json: bool`.
    """

    @functools.wraps(func)
    def wrapper(
        *args: Any,
        roots: tuple[str, ...],
        cwd: str | None,
        no_user: bool,
        no_system: bool,
        no_cache: bool,
        max_depth: int | None,
        max_dirs: int | None,
        **kwargs: Any,
    ) -> Any:
        catalog = CatalogOptions(
            roots=roots,
            cwd=cwd,
            no_user=no_user,
            no_system=no_system,
            no_cache=no_cache,
            max_depth=max_depth,
            max_dirs=max_dirs,
        )
        return func(*args, catalog=catalog, **kwargs)

    options = [
        click.option(
            "--root",
            "roots",
            multiple=True,
            type=click.Path(file_okay=False, path_type=str),
            help="Extra skills root (scope 'extra'); repeatable. Walked like every root: "
            "--max-depth levels down and --max-dirs folders at most (a root cut short is "
            "reported as walk-truncated).",
        ),
        click.option(
            "--cwd",
            type=click.Path(exists=True, file_okay=False, path_type=str),
            default=None,
            help="Directory to discover repo skills from (default: current directory).",
        ),
        click.option("--no-user", is_flag=True, help="Skip the user skill roots."),
        click.option("--no-system", is_flag=True, help="Skip the skills bundled with skillpack."),
        click.option("--no-cache", is_flag=True, help="Do not read or write the index file."),
        click.option(
            "--max-depth",
            type=click.IntRange(min=0),
            default=None,
            help=f"Folder levels searched below each root (default: [discovery] max_depth "
            f"in the config, else {MAX_DEPTH}).",
        ),
        click.option(
            "--max-dirs",
            type=click.IntRange(min=1),
            default=None,
            help=f"Folders searched per root at most (default: [discovery] max_dirs in the "
            f"config, else {MAX_DIRS}).",
        ),
        click.option("--json", "as_json", is_flag=True, help="Print JSON (stable shape)."),
    ]
    decorated: Callable[..., Any] = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated
