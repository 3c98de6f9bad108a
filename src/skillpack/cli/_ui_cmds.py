"""`skillpack ui`: the terminal picker (the `tui` extra), and `--pick` for shells."""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
from typing import Literal

import click

from .. import _errors
from ._errors import CommandFailed
from ._options import CatalogOptions, catalog_options
from ._output import emit_json

PICK_CANCELLED = 130
"""Exit code of `--pick` when nothing was chosen (esc, ctrl+c, ctrl+q), as fzf's."""


def settle_heap() -> None:
    """The collector for a picker's process, once a catalog is loaded (and again once
    its search tables and costs are built).

    The CLI runs without the cyclic collector (short runs); a picker runs for
    minutes and makes garbage as it draws, so the collector comes back, but the
    objects alive now (the catalog and what is built for it: tens of thousands at
    10,000 skills) are frozen out of its sight, or each full collection would
    rescan them: a 30-100 ms pause in the middle of a keystroke. Only this
    command's process does this.
    """
    gc.freeze()
    gc.enable()


@click.command("ui")
@click.option(
    "--pick",
    is_flag=True,
    help="Choose one skill, print it on stdout and exit (for shells and editors, "
    "like fzf). Exit 130 (error CANCELLED) when nothing was chosen.",
)
@click.option(
    "--print",
    "print_",
    type=click.Choice(["name", "path"]),
    default="name",
    show_default=True,
    help="With --pick: print the $name mention that picks the skill, or its SKILL.md path.",
)
@click.option("--query", "-q", default="", help="Start with this filter.")
@catalog_options
def ui_command(
    pick: bool,
    print_: Literal["name", "path"],
    query: str,
    catalog: CatalogOptions,
    as_json: bool,
) -> None:
    """Browse, search and switch skills in a terminal picker (pip install 'skillpack[tui]').

    Type to filter (names first, then search's ranking of words); the preview shows
    the frontmatter, body, files, problems and catalog cost of the skill under the
    cursor. ctrl+t enables or disables it, ctrl+o opens it in $EDITOR, ctrl+y copies
    its $name, ctrl+g shows the rendered catalog, ctrl+p every problem, f1 the help.
    The list follows changes to the skill folders and config files as they happen.

    With --pick the chosen skill is printed on stdout (the picker draws on the
    terminal through stderr), so `X=$(skillpack ui --pick)` captures only it.
    --json (with --pick) prints the chosen skill as a JSON object: the `list --json`
    entry plus "mention".
    """
    if as_json and not pick:
        raise _errors.UsageError("--json goes with --pick: `skillpack ui --pick --json`.")
    if importlib.util.find_spec("textual") is None:
        raise _errors.UsageError(
            "The picker needs Textual, which is not installed. "
            "Install it with: pip install 'skillpack[tui]'"
        )
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise _errors.UsageError(
            "The picker draws on the terminal through stderr and reads keys from stdin; "
            "run it with both on a terminal (stdout may be a pipe)."
        )
    from ..select._resolve import mention_for
    from ..tui._app import PickerApp

    cwd = os.path.abspath(catalog.cwd or os.getcwd())
    # The picker watches the roots itself once it has drawn.
    with catalog.session(refresh="manual") as session:
        settle_heap()
        app = PickerApp(
            session,
            cwd=cwd,
            pick=pick,
            query=query,
            user_config=not catalog.no_user,
            live=True,
            on_ready=settle_heap,
        )
        chosen = app.run()
        if not pick:
            return
        if chosen is None:
            raise CommandFailed(
                "No skill was picked (esc or ctrl+q).",
                code="CANCELLED",
                exit_code=PICK_CANCELLED,
            )
        mention = mention_for(chosen, session.catalog, is_visible=session.skills.is_visible)
        if as_json:
            from ..runtime._summary import skill_summary

            summary = skill_summary(
                chosen,
                enabled=session.skills.is_enabled(chosen),
                missing=session.declared.dependencies(chosen).missing,
                permission=session.config.permissions.decide(chosen),
            )
            emit_json({**summary, "mention": mention})
            return
        printed = mention if print_ == "name" else chosen.path
        if sys.stdout.isatty():  # exact for a shell's capture, safe on a screen
            from ..tui._text import safe_text

            printed = safe_text(printed)
        sys.stdout.write(printed + "\n")
