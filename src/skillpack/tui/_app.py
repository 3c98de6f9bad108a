"""`skillpack ui`: the picker app (Textual).

One screen: a filter line, the list of skills, the preview of the one under the
cursor, a status line and a footer of keys. It draws what a `Session` and the
runtime's picker helpers (`runtime._picker`) say; it writes config files through
the same function as `skillpack enable/disable`, and follows the session's live
catalog (`Session.subscribe`). With `pick=True` the app ends when a skill is chosen
and returns it (`App.run()`'s result), so the command can print it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.widgets import Footer, Input, Static

from .._errors import SkillpackError
from .._model import Catalog, Problem, Skill
from .._paths import home_dir
from ..config._files import project_config_path, user_config_path
from ..config._schema import ConfigScope
from ..render._catalog import RenderedCatalog
from ..runtime._live import CatalogChange
from ..runtime._picker import (
    CatalogCosts,
    Flag,
    Hit,
    SkillFilter,
    missing_dependencies,
    problems_by_skill,
    ref_for,
    skill_flags,
    toggle_scopes,
)
from ..runtime._session import Session, refresh_mode
from ..runtime._workspace import write_enabled
from ..select._resolve import mention_for
from ._list import SkillList
from ._preview import SkillPreview, SkillView
from ._screens import CatalogScreen, HelpScreen, ProblemsScreen, ScopeScreen
from ._text import PathDisplay, counted

PREVIEW_DELAY = 0.15
"""Seconds the cursor rests on a skill before the preview renders it. Typing or
holding an arrow key moves faster than that, so the list answers every key and the
preview (its layout pass costs about as much as a keystroke) follows when you pause."""

_LIST_KEYS = frozenset(" eycprq/?")
"""Keys the list binds itself; other printable keys typed there go to the filter."""


class FilterInput(Input):
    """The filter line. `?` on an empty filter opens the help instead of typing.

    The list is filtered from the value's watcher, in the same turn as the key: an
    `Input.Changed` handler would run after the screen has drawn the frame the key
    caused, and the new rows would wait for the next one.
    """

    def __init__(self, on_value: Callable[[str], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_value = on_value

    def _watch_value(self, value: str) -> None:
        super()._watch_value(value)
        if self.is_mounted:
            self._on_value(value)

    DEFAULT_CSS = """
    FilterInput { border: none; height: 1; padding: 0 1; background: $boost; }
    FilterInput:focus { border: none; background: $boost; }
    """

    async def _on_key(self, event: events.Key) -> None:
        if event.character == "?" and not self.value:
            event.stop()
            event.prevent_default()
            self.app.action_help()  # type: ignore[attr-defined]
            return
        await super()._on_key(event)


class _Skills(SkillList):
    """The app's list: letter keys act on the skill; other typing goes to the filter."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "app.switch", "Toggle", show=False),
        Binding("e", "app.edit", "Edit", show=False),
        Binding("y", "app.copy", "Copy", show=False),
        Binding("c", "app.catalog", "Catalog", show=False),
        Binding("p", "app.problems", "Problems", show=False),
        Binding("r", "app.reload", "Reload", show=False),
        Binding("q", "app.leave", "Back", show=False),
        Binding("slash", "app.focus_filter", "Filter", show=False),
        Binding("question_mark", "app.help", "Help", show=False),
    ]

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character and event.character not in _LIST_KEYS:
            event.stop()
            event.prevent_default()
            typed = self.screen.query_one(FilterInput)
            typed.focus()
            typed.insert_text_at_cursor(event.character)


class PickerApp(App[Skill | None]):
    """Browse, filter and switch the skills of a session's workspace."""

    TITLE = "skillpack"
    ENABLE_COMMAND_PALETTE = False

    CSS = """
    Screen { layout: vertical; }
    #body { height: 1fr; layout: horizontal; }
    #body > SkillList { width: 3fr; }
    #body > SkillPreview { width: 2fr; border-left: solid $panel-lighten-2; }
    #body.-narrow { layout: vertical; }
    #body.-narrow > SkillList, #body.-narrow > SkillPreview { width: 1fr; }
    #body.-narrow > SkillPreview { border-left: none; border-top: solid $panel-lighten-2; }
    #status { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("escape", "leave", "Back", show=False),
        Binding("ctrl+t", "switch", "Toggle"),
        Binding("ctrl+o", "edit", "Edit"),
        Binding("ctrl+y", "copy", "Copy"),
        Binding("ctrl+g", "catalog", "Catalog"),
        Binding("ctrl+p", "problems", "Problems"),
        Binding("ctrl+r", "reload", "Reload"),
        Binding("f1", "help", "Help"),
    ]

    MAIN_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {"move", "page", "leave", "switch", "edit", "copy", "catalog", "problems", "reload"}
    )
    """Actions on the list's skill: off while another screen is on top."""

    NARROW = 110
    """Below this many columns the preview goes under the list instead of beside it."""

    def __init__(
        self,
        session: Session,
        *,
        cwd: str,
        pick: bool = False,
        query: str = "",
        skill_filter: SkillFilter | None = None,
        home: str | None = None,
        user_config: bool = True,
        live: bool = False,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        """Args:
        session: The workspace's session (live when opened with `refresh="watch"`).
        cwd: The folder the picker was opened in: project config, shown paths.
        pick: End when a skill is chosen and return it.
        query: The filter to start with.
        skill_filter: Ranks skills for the filter (default: one over `session`).
        home: Shown as `~` in paths (default: skillpack's home folder).
        user_config: Whether the session reads the user config (enable and
            disable write there only then).
        live: Once the list is drawn and search is ready, switch the session to
            `refresh="watch"` (so its start does not slow the first paint).
        on_ready: Called (on a worker thread) each time what a catalog needs is
            built: search synced, costs measured. `skillpack ui` freezes the heap
            there (`settle_heap`).
        """
        super().__init__()
        self.session = session
        self.cwd = os.path.abspath(cwd)
        self.pick = pick
        self.user_config = user_config
        self.live = live
        self._on_ready = on_ready
        self._query = query
        self.skill_filter = skill_filter or SkillFilter(session)
        self.paths = PathDisplay(self.cwd, home if home is not None else str(home_dir()))
        self._catalog: Catalog = session.catalog
        self._problems: dict[str, tuple[Problem, ...]] = problems_by_skill(self._catalog)
        self._flags: dict[str, tuple[Flag, ...]] = {}
        self._costs: CatalogCosts | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._preview_timer: object | None = None
        self.filter_count = 0
        """Filters applied so far (a benchmark waits on it)."""

    # -- layout ----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The main screen's widgets, held: `query_one` would search whichever
        # screen is on top (help, problems), and late work still needs them.
        self.filter_input = FilterInput(
            self.apply_filter,
            value=self._query,
            placeholder=f"Filter {len(self._catalog.skills):,} skills: a name, words or a path",
            id="filter",
            select_on_focus=False,  # a letter typed in the list moves here, then more follow
        )
        self.skill_list: SkillList = _Skills(self.flags_of, id="skills")
        self.preview = SkillPreview(self.paths, id="preview")
        self.status = Static(id="status")
        self.body = Container(id="body")
        yield self.filter_input
        with self.body:
            yield self.skill_list
            yield self.preview
        yield self.status
        yield Footer()

    def on_mount(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._layout(self.size.width)
        self.apply_filter(self._query)
        self.filter_input.focus()
        self._unsubscribe = self.session.subscribe(self._changed_elsewhere)
        # The first frame goes out before anything else: search's sync, the costs
        # and the watcher's start all compete with it for the interpreter.
        self.call_after_refresh(self._prepare, True)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def on_resize(self, event: events.Resize) -> None:
        self._layout(event.size.width)

    def _layout(self, width: int) -> None:
        body = getattr(self, "body", None)  # None until composed
        if body is not None:
            body.set_class(width < self.NARROW, "-narrow")

    @work(thread=True, exclusive=True, group="prepare")
    def _prepare(self, first: bool = False) -> None:
        """Off the UI thread: the search index's sync, the catalog's costs, and
        (the first time, when live) the watcher's start."""
        self.skill_filter.prepare()
        costs = CatalogCosts(self.session)
        if self._on_ready is not None:
            self._on_ready()
        self.call_from_thread(self._costs_ready, costs)
        if first and self.live:
            try:
                self.session.set_refresh("watch")
            except SkillpackError as exc:
                self.call_from_thread(self.notify, str(exc), severity="warning", timeout=8)
            self.call_from_thread(self._show_status, self.skill_list.hits)

    def _costs_ready(self, costs: CatalogCosts) -> None:
        self._costs = costs
        if self._showing():
            self._schedule_preview(now=True)

    def _showing(self) -> bool:
        """Whether the main screen is up: work that finishes late (a worker, a
        watcher's change) may arrive while the app is closing."""
        skills = getattr(self, "skill_list", None)  # None until composed
        return self.is_running and skills is not None and skills.is_attached

    # -- what rows show ----------------------------------------------------------------

    @property
    def current(self) -> Skill | None:
        """The skill under the cursor."""
        return self.skill_list.skill

    def flags_of(self, skill: Skill) -> tuple[Flag, ...]:
        flags = self._flags.get(skill.key)
        if flags is None:
            flags = self._flags[skill.key] = skill_flags(self.session, skill, self._problems)
        return flags

    def apply_filter(self, query: str, *, keep: bool = False) -> None:
        """Rank the skills for `query` and show them. The cursor goes to the best
        match; it stays on its skill when `keep` (the catalog changed under it) or
        when the filter is cleared (the skill just found is shown among all)."""
        self._query = query
        current = self.current
        hits = self.skill_filter.rank(query)
        stay = current is not None and (keep or not query.strip())
        self.skill_list.set_hits(hits, keep=current.key if stay and current else None)
        self._show_status(hits)
        self.filter_count += 1

    def _show_status(self, hits: Sequence[Hit]) -> None:
        total = len(self._catalog.skills)
        text = Text()
        if self._query.strip() and hits and all(hit.reason == "close" for hit in hits):
            text.append("no match; close names ", style="bold")
        text.append(f"{len(hits):,} of {total:,} skills")
        suggested = sum(1 for hit in hits if hit.suggested)
        if suggested:
            text.append(f" · {suggested} suggested to the model (*)")
        problems = len(self._catalog.problems)
        if problems:
            text.append(f" · {counted(problems, 'problem')} (ctrl+p)")
        mode = refresh_mode(self.session)
        text.append(" · live" if mode == "watch" else f" · {mode} (ctrl+r reloads)")
        self.status.update(text, layout=False)  # one line, always: no re-layout per key

    def on_input_submitted(self, event: Input.Submitted) -> None:
        skill = self.current
        if skill is not None:
            self._choose(skill)

    def on_skill_list_chosen(self, event: SkillList.Chosen) -> None:
        self._choose(event.skill)

    def _choose(self, skill: Skill) -> None:
        if self.pick:
            self.exit(skill)
        else:
            self.screen.maximize(self.preview)

    # -- the preview -------------------------------------------------------------------

    def on_skill_list_highlighted(self, event: SkillList.Highlighted) -> None:
        self._schedule_preview()

    def _schedule_preview(self, *, now: bool = False) -> None:
        timer = self._preview_timer
        if timer is not None:
            timer.stop()  # type: ignore[attr-defined]
            self._preview_timer = None
        if now:
            self.show_preview()
        else:
            self._preview_timer = self.set_timer(PREVIEW_DELAY, self.show_preview)

    def show_preview(self) -> None:
        """Render the skill under the cursor in the preview now."""
        self._preview_timer = None
        if not self._showing():
            return
        skill = self.current
        preview = self.preview
        if skill is None:
            preview.show(None)
            return
        preview.show(self.view_of(skill))

    def view_of(self, skill: Skill) -> SkillView:
        """Everything the preview shows about `skill`."""
        session = self.session
        reader = session.reader
        try:
            files, truncated = reader.list_files(skill)
        except (OSError, SkillpackError):
            files, truncated = (), False
        try:
            body = reader.read_body(skill)
        except (OSError, SkillpackError) as exc:
            body = f"*The body could not be read: {exc}*"
        costs = self._costs
        return SkillView(
            skill=skill,
            mention=mention_for(skill, self._catalog, is_visible=session.skills.is_visible),
            flags=self.flags_of(skill),
            problems=self._problems.get(skill.key, ()),
            cost=costs.describe(skill) if costs is not None else "measuring…",
            missing=missing_dependencies(session, skill),
            files=files,
            files_truncated=truncated,
            body=body,
        )

    # -- a live catalog -----------------------------------------------------------------

    def _changed_elsewhere(self, change: CatalogChange) -> None:
        """A subscriber: runs on the watcher's (or a refreshing) thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        # A loop closed meanwhile: the app is gone, nothing to show the change on.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self.catalog_changed, change)

    def catalog_changed(self, change: CatalogChange) -> None:
        """Show the session's new catalog: rows, flags, problems, costs, preview."""
        if not self._showing():
            return
        self._catalog = self.session.catalog
        self._problems = problems_by_skill(self._catalog)
        self._flags.clear()
        self._costs = None
        self.apply_filter(self._query, keep=True)
        self.skill_list.redraw()
        self._prepare()
        parts = [
            f"{label} {len(group)}"
            for label, group in (
                ("added", change.added),
                ("removed", change.removed),
                ("changed", change.changed),
            )
            if group
        ]
        if change.config_changed:
            parts.append("config changed")
        if parts:
            self.notify("Catalog: " + ", ".join(parts), timeout=3)

    # -- actions ---------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While another screen is on top its own keys apply (and show in its footer).
        return not (action in self.MAIN_ACTIONS and len(self.screen_stack) > 1)

    def action_move(self, delta: int) -> None:
        self.skill_list.action_cursor(delta)

    def action_page(self, direction: int) -> None:
        self.skill_list.action_page(direction)

    def action_focus_filter(self) -> None:
        self.filter_input.focus()

    def action_leave(self) -> None:
        """Esc: leave the full-screen preview, else clear the filter, else quit."""
        if self.screen.maximized is not None:
            self.screen.minimize()
            return
        typed = self.filter_input
        if typed.value:
            typed.value = ""
            typed.focus()
            return
        self.exit(None)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_switch(self) -> None:
        """Enable or disable the skill in a config file (asking which when both apply)."""
        skill = self.current
        if skill is None:
            self.bell()
            return
        enable = not self.session.skills.is_enabled(skill)
        scopes = toggle_scopes(skill, self.cwd, user=self.user_config)
        if len(scopes) == 1:
            self.write_choice(skill, enable, scopes[0])
            return
        verb = "Enable" if enable else "Disable"
        question = f"{verb} {skill.qualified_name} in which config file?"

        def answered(scope: ConfigScope | None) -> None:
            if scope is not None:
                self.write_choice(skill, enable, scope)

        self.push_screen(
            ScopeScreen(
                question,
                self.paths.path(str(user_config_path())),
                self.paths.path(str(project_config_path(self.cwd))),
            ),
            answered,
        )

    def write_choice(self, skill: Skill, enable: bool, scope: ConfigScope) -> None:
        """Write the config file, then re-read the workspace to show the result."""
        try:
            toggled = write_enabled(
                self._catalog,
                ref_for(self._catalog, skill),
                enable,
                scope=scope,
                cwd=self.cwd,
                user=self.user_config,
            )
        except SkillpackError as exc:
            self.notify(str(exc), severity="error", timeout=8)
            return
        self.refresh_catalog()
        path = toggled.written
        state = "enabled" if enable else "disabled"
        if toggled.decided_elsewhere:
            decided = toggled.decided_by
            where = self.paths.path(str(decided)) if decided is not None else "another file"
            self.notify(
                f"Wrote {self.paths.path(str(path))}, but {skill.qualified_name} is still "
                f"{'disabled' if enable else 'enabled'}: {where} decides it.",
                severity="warning",
                timeout=8,
            )
            return
        self.notify(f"{state} {skill.qualified_name} in {self.paths.path(str(path))}")

    def refresh_catalog(self) -> None:
        """Re-discover now; the change (if any) arrives through the subscription."""
        try:
            self.session.refresh()
        except SkillpackError as exc:
            self.notify(str(exc), severity="error", timeout=8)

    def action_reload(self) -> None:
        self.refresh_catalog()
        self.notify("Reloaded.", timeout=2)

    def action_edit(self) -> None:
        """Open the skill's SKILL.md in `$EDITOR` (or `$VISUAL`), the app suspended."""
        skill = self.current
        if skill is None:
            self.bell()
            return
        editor = os.environ.get("EDITOR") or os.environ.get("VISUAL")
        if not editor:
            self.notify("Set $EDITOR to open skills in your editor.", severity="error")
            return
        argv = [*shlex.split(editor), skill.path]
        # With --pick stdout is the shell's capture: the editor draws on the terminal.
        out = None if sys.__stdout__ is not None and sys.__stdout__.isatty() else sys.__stderr__

        def run() -> None:
            try:
                subprocess.run(argv, check=False, stdout=out)
            except OSError as exc:
                self.notify(f"Cannot run {argv[0]}: {exc}", severity="error")

        try:
            with self.suspend():
                run()
        except SuspendNotSupported:
            if not self.is_headless:
                self.notify("This terminal cannot hand over to an editor.", severity="error")
                return
            run()  # no terminal to hand over (tests, benchmarks)
        self.refresh_catalog()

    def action_copy(self) -> None:
        """Copy the skill's mention (`$name`) to the clipboard (OSC 52)."""
        skill = self.current
        if skill is None:
            self.bell()
            return
        mention = mention_for(skill, self._catalog, is_visible=self.session.skills.is_visible)
        self.copy_to_clipboard(mention)
        self.notify(f"Copied {mention}", timeout=2)

    def action_catalog(self) -> None:
        rendered: RenderedCatalog = self.session.render_catalog()
        self.push_screen(CatalogScreen(rendered, self.paths))

    def action_problems(self) -> None:
        problems = self._catalog.problems
        owners = owner_keys(self._catalog, problems)
        self.push_screen(ProblemsScreen(problems, owners, self.paths), self._go_to)

    def _go_to(self, key: str | None) -> None:
        """Put the cursor on the skill whose key is `key` (the filter cleared)."""
        if key is None:
            return
        self.filter_input.value = ""  # lists every skill
        self.skill_list.set_hits(self.skill_list.hits, keep=key)
        self.skill_list.focus()


def owner_keys(catalog: Catalog, problems: tuple[Problem, ...]) -> list[str | None]:
    """The key of the skill each problem is about (None for roots, broken files)."""
    by_skill: Mapping[str, tuple[Problem, ...]] = problems_by_skill(catalog)
    owner: dict[int, str] = {}
    for key, owned in by_skill.items():
        for problem in owned:
            owner[id(problem)] = key
    return [owner.get(id(problem)) for problem in problems]
