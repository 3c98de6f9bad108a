"""The options every catalog command shares (`--root`, `--cwd`, `--no-user`, ...)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ._output import warn

if TYPE_CHECKING:
    from .._model import Problem
    from ..runtime._session import Session
    from ..runtime._workspace import Workspace


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogOptions:
    """What `--root/--cwd/--no-user/--no-system/--no-cache` ask for."""

    roots: tuple[str, ...]
    cwd: str | None
    no_user: bool
    no_system: bool
    no_cache: bool

    def workspace(self, *, warn_missing_roots: bool = True) -> Workspace:
        """The discovered workspace. A `--root` that is not a folder is warned about
        on stderr unless the caller prints the catalog's problems itself."""
        from ..runtime._workspace import open_workspace

        workspace = open_workspace(
            cwd=self.cwd,
            roots=self.roots,
            include_user=not self.no_user,
            include_system=not self.no_system,
            use_cache=not self.no_cache,
        )
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
        session = Session.open(
            cwd=self.cwd,
            roots=self.roots,
            include_user=not self.no_user,
            include_system=not self.no_system,
            use_cache=not self.no_cache,
            **kwargs,
        )
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
        **kwargs: Any,
    ) -> Any:
        catalog = CatalogOptions(
            roots=roots, cwd=cwd, no_user=no_user, no_system=no_system, no_cache=no_cache
        )
        return func(*args, catalog=catalog, **kwargs)

    options = [
        click.option(
            "--root",
            "roots",
            multiple=True,
            type=click.Path(file_okay=False, path_type=str),
            help="Extra skills root (scope 'extra'); repeatable.",
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
        click.option("--json", "as_json", is_flag=True, help="Print JSON (stable shape)."),
    ]
    decorated: Callable[..., Any] = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated
