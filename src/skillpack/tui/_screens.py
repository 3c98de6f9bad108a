"""The picker's other screens: help, every problem of the workspace, the rendered
catalog with what the budget cut, and the question of which config file to write."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Static

from .._model import Problem
from ..config._schema import ConfigScope
from ..render._catalog import RenderedCatalog
from ._list import FLAG_MARKS
from ._text import PathDisplay, clip, counted, safe_text

_KEYS: tuple[tuple[str, str], ...] = (
    ("type", "filter: names first (exact, prefix, inside), then search's ranking of words"),
    ("↑ ↓ PgUp PgDn", "move in the list (also while typing)"),
    ("enter", "with --pick: choose and print it; else: read the preview full screen"),
    ("esc", "clear the filter; quit (or cancel --pick) when it is empty"),
    ("ctrl+t", "enable / disable the skill in a config file (space in the list)"),
    ("ctrl+o", "open its SKILL.md in $EDITOR (e in the list)"),
    ("ctrl+y", "copy its $name to the clipboard (y in the list)"),
    ("ctrl+g", "the rendered catalog and what the budget cut (c in the list)"),
    ("ctrl+p", "every problem of the workspace (p in the list)"),
    ("ctrl+r", "reload the catalog now (it also follows file changes)"),
    ("tab", "move between the filter, the list and the preview"),
    ("f1 ?", "this help;  ctrl+q quits"),
)

_FLAG_HELP: dict[str, str] = {
    "disabled": "turned off by a config entry",
    "denied": "a permission rule hides it from the model and every tool",
    "shadowed": "a skill of the same name and higher precedence wins",
    "model-only": "user-invocable: false (only the model loads it)",
    "user-only": "the model may not invoke it (disable-model-invocation)",
    "problems": "discovery reported warnings about it (see the preview)",
    "missing-deps": "a declared env var or MCP server is missing",
}


class HelpScreen(ModalScreen[None]):
    """Keys, flags and scope badges."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 96; height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS = [
        Binding("escape,q,f1,question_mark", "app.pop_screen", "Close", show=True),
    ]

    def compose(self) -> ComposeResult:
        keys = _table()
        for key, what in _KEYS:
            keys.add_row(Text(key, style="bold"), Text(what))
        flags = _table()
        for flag, mark in FLAG_MARKS.items():
            flags.add_row(Text(f"{mark} {flag}", style="bold"), Text(_FLAG_HELP[flag]))
        with VerticalScroll():
            yield Static(Text("Keys", style="bold underline"))
            yield Static(keys)
            yield Static(Text("\nFlags (the column after the scope)", style="bold underline"))
            yield Static(flags)
            yield Static(
                Text.assemble(
                    ("\nScopes", "bold underline"),
                    ", highest precedence first: admin, repo, extra, user, system, mcp.\n"
                    "The mouse works too: click a row, double-click to choose, scroll.",
                )
            )


def _table() -> Table:
    table = Table(show_header=False, box=None, padding=(0, 2, 0, 0), expand=True)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    return table


class ProblemsScreen(Screen[str | None]):
    """Every problem of the workspace; enter goes to the skill a problem is about."""

    DEFAULT_CSS = """
    ProblemsScreen > #problems-title { height: 1; padding: 0 1; text-style: bold; }
    ProblemsScreen > DataTable { height: 1fr; }
    ProblemsScreen > #problems-message {
        height: auto; max-height: 10; padding: 0 1; border-top: solid $accent;
    }
    """
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("enter", "go", "Go to its skill", priority=True),
    ]

    def __init__(
        self,
        problems: Sequence[Problem],
        owners: Sequence[str | None],
        paths: PathDisplay,
    ) -> None:
        """`owners[i]` is the key of the skill `problems[i]` is about, if any."""
        super().__init__()
        self._problems = tuple(problems)
        self._owners = tuple(owners)
        self._paths = paths

    def compose(self) -> ComposeResult:
        errors = sum(1 for p in self._problems if p.severity == "error")
        warnings = len(self._problems) - errors
        yield Static(
            Text(
                f"{counted(len(self._problems), 'problem')} ({counted(errors, 'error')}, "
                f"{counted(warnings, 'warning')}); the highlighted one in full below"
            ),
            id="problems-title",
        )
        table: DataTable[Text] = DataTable(cursor_type="row", zebra_stripes=True)
        yield table
        yield Static(id="problems-message")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("severity", "code", "where")
        for problem in self._problems:
            where = self._paths.path(problem.path) + (f":{problem.line}" if problem.line else "")
            style = "bold red" if problem.severity == "error" else "yellow"
            table.add_row(
                Text(problem.severity, style=style),
                Text(problem.code),
                Text(clip(where, 60)),
            )
        table.focus()
        self._describe(0)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._describe(event.cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self._go(event.cursor_row)

    def _describe(self, row: int) -> None:
        message = self.query_one("#problems-message", Static)
        if not 0 <= row < len(self._problems):
            message.update(Text("No problems: every skill loaded cleanly."))
            return
        problem = self._problems[row]
        text = Text()
        text.append(self._paths.path(problem.path), style="bold")
        text.append("\n")
        text.append(safe_text(self._paths.text(problem.message), multiline=True))
        message.update(text)

    def action_go(self) -> None:
        self._go(self.query_one(DataTable).cursor_row)

    def _go(self, row: int) -> None:
        if 0 <= row < len(self._owners) and self._owners[row] is not None:
            self.dismiss(self._owners[row])
        else:
            self.notify("That problem is not about a listed skill.", severity="warning")


class CatalogScreen(Screen[None]):
    """The catalog the model gets, and what its budget shortened or left out."""

    DEFAULT_CSS = """
    CatalogScreen > #catalog-report { height: auto; max-height: 40%; padding: 0 1; }
    CatalogScreen > VerticalScroll { height: 1fr; border-top: solid $accent; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]

    def __init__(self, rendered: RenderedCatalog, paths: PathDisplay) -> None:
        super().__init__()
        self._rendered = rendered
        self._paths = paths

    def compose(self) -> ComposeResult:
        report = self._rendered.report
        text = Text()
        text.append("Catalog ", style="bold")
        text.append(
            f"{report.used_chars:,} of {report.budget_chars:,} characters "
            f"(~{(report.used_chars + 3) // 4:,} tokens), "
            f"{report.shown} of {report.total} skills shown"
        )
        if not report.truncated:
            text.append("\nEverything fits: nothing was shortened or left out.")
        for label, names in (
            ("shortened", report.shortened),
            ("name only", report.names_only),
            ("omitted", report.omitted),
        ):
            if names:
                listed = ", ".join(safe_text(n) for n in names[:40])
                more = f" and {len(names) - 40} more" if len(names) > 40 else ""
                text.append(f"\n{label} ({len(names)}): ", style="bold yellow")
                text.append(listed + more)
        yield Static(text, id="catalog-report")
        with VerticalScroll():
            body = self._paths.text(self._rendered.text) or "(no skill is in the catalog)"
            yield Static(Text(safe_text(body, multiline=True)))
        yield Footer()


class ScopeScreen(ModalScreen[ConfigScope | None]):
    """Which config file an enable or disable goes to, when both could apply."""

    DEFAULT_CSS = """
    ScopeScreen { align: center middle; }
    ScopeScreen > Vertical {
        width: 90%; max-width: 80; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    ScopeScreen Horizontal { height: auto; margin-top: 1; }
    ScopeScreen Button { margin-right: 2; }
    """
    BINDINGS = [
        Binding("u", "answer('user')", "User config"),
        Binding("p", "answer('project')", "Project config"),
        Binding("escape", "answer('')", "Cancel"),
    ]

    def __init__(self, question: str, user_file: str, project_file: str) -> None:
        super().__init__()
        self._question = question
        self._user_file = user_file
        self._project_file = project_file

    def compose(self) -> ComposeResult:
        text = Text()
        text.append(self._question, style="bold")
        text.append("\n  u  user config     ")
        text.append(self._user_file, style="dim")
        text.append("\n  p  project config  ")
        text.append(self._project_file, style="dim")
        with Vertical():
            yield Static(text)
            with Horizontal():
                yield Button("User (u)", id="user", variant="primary")
                yield Button("Project (p)", id="project")
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_answer(event.button.id if event.button.id != "cancel" else "")

    def action_answer(self, scope: str | None) -> None:
        self.dismiss("user" if scope == "user" else "project" if scope == "project" else None)
