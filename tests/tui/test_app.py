"""The picker driven as a person drives it (Textual's Pilot): every action."""

from __future__ import annotations

import asyncio
import functools
import re
import sys
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("textual", reason="the picker is the `tui` extra")

from picker_tree import build_tree, open_session, workers_done  # noqa: E402
from textual.pilot import Pilot  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.widgets import DataTable, Static  # noqa: E402

from skillpack.runtime._session import Session  # noqa: E402
from skillpack.tui._app import PREVIEW_DELAY, FilterInput, PickerApp  # noqa: E402
from skillpack.tui._body import BodyView  # noqa: E402
from skillpack.tui._screens import (  # noqa: E402
    CatalogScreen,
    HelpScreen,
    ProblemsScreen,
    ScopeScreen,
)

SIZE = (100, 30)


def sync(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test in its own event loop (no async plugin needed)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return build_tree(tmp_path)


@pytest.fixture
def session(project: Path) -> Session:
    return open_session(project)


def make_app(session: Session, project: Path, **kwargs: Any) -> PickerApp:
    return PickerApp(session, cwd=str(project), **kwargs)


async def settle(pilot: Pilot[Any]) -> None:
    """Let the preview's delay pass and every worker (search sync, body) finish."""
    await pilot.pause(PREVIEW_DELAY + 0.05)
    await workers_done(pilot.app)
    await pilot.pause()


def top(app: PickerApp) -> Screen[Any]:
    """The screen on top now. A call, so that mypy does not carry what an earlier assert
    said about `app.screen` past the keys pressed since (it would skip the rest)."""
    return app.screen


def names(app: PickerApp) -> list[str]:
    return [hit.skill.qualified_name for hit in app.skill_list.hits]


def text_of(app: PickerApp, selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    return str(widget.render())


def user_config() -> Path:
    return Path.home() / ".config" / "skillpack" / "config.toml"


@sync
async def test_the_list_shows_every_skill_with_its_scope_and_flags(
    session: Session, project: Path
) -> None:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert names(app) == [s.qualified_name for s in session.catalog.skills]
        flags = {s.qualified_name: app.flags_of(s) for s in session.catalog.skills}
        assert flags["repo:old-helper"] == ("disabled",)
        assert flags["repo:secret-ops"] == ("denied",)
        assert flags["user:pdf-tools"] == ("shadowed",)
        assert flags["repo:release-notes"] == ("user-only",)
        assert flags["repo:style-guide"] == ("model-only",)
        assert flags["repo:charts"] == ("problems",)
        rows = [app.skill_list.render_line(y).text for y in range(len(names(app)))]
        assert rows[0].startswith("> repo")
        assert "D" in next(r for r in rows if "old-helper" in r)
        assert re.search(r"user\s+S\s+pdf-tools", next(r for r in rows if "copy of" in r))
        assert "of 10 skills" in text_of(app, "#status")
        assert "3 problems" in text_of(app, "#status")  # mismatch, shadowed, the broken file


@sync
async def test_typing_filters_names_first_then_words(session: Session, project: Path) -> None:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"pdf")
        assert names(app)[:2] == ["repo:pdf-tools", "user:pdf-tools"]
        await pilot.press("ctrl+u", *"matplotlib")
        assert names(app) == ["repo:charts"]
        assert text_of(app, "#status").startswith("1 of 10 skills")
        await pilot.press("ctrl+u", *"jornal")  # a typo: the resolver's near misses
        assert names(app) == ["user:journal"]
        assert "no match; close names" in text_of(app, "#status")


@sync
async def test_arrows_move_the_cursor_while_typing_and_a_click_selects(
    session: Session, project: Path
) -> None:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"deploy")
        assert app.current is not None and app.current.name == "deploy-app"
        # clearing the filter keeps the cursor on deploy-app (the third skill)
        await pilot.press("ctrl+u", "down", "down")
        assert app.skill_list.cursor == 4
        assert isinstance(app.focused, FilterInput)
        await pilot.click("#skills", offset=(10, 6))
        assert app.skill_list.cursor == 6
        await pilot.press("up")
        assert app.skill_list.cursor == 5
        # a new query puts the cursor on its best match (the click focused the list:
        # a letter it does not bind goes to the filter)
        await pilot.press(*"jo")
        assert app.skill_list.cursor == 0 and app.current is not None
        assert app.current.name == "journal"


@sync
async def test_the_preview_shows_frontmatter_body_files_problems_and_cost(
    session: Session, project: Path
) -> None:
    app = make_app(session, project)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.press(*"deploy-app")
        await settle(pilot)
        title = text_of(app, "#preview-title")
        assert "repo:deploy-app" in title and "$deploy-app" in title
        state = text_of(app, "#preview-state")
        assert re.search(r"\d+ chars \(~\d+ tokens\), listed whole", state), state
        meta = app.screen.query_one("#preview-meta", Static)
        table = meta.visual
        rendered = str(app.export_screenshot())
        assert table is not None
        for text in ("license", "MIT", "allowed-tools", "platform-team"):
            assert text in rendered
        files = text_of(app, "#preview-files")
        assert "references/checklist.md" in files and "scripts/deploy.sh" in files
        assert ".agents/skills/deploy-app" in files and str(project) not in files
        body = app.screen.query_one(BodyView)
        lines = "\n".join(strip.text for strip in body.lines)
        assert "Deploy the app" in lines and "make deploy ENV=staging" in lines
        assert "**" not in lines  # rendered, not shown as source
        await pilot.press("ctrl+u", *"charts")
        await settle(pilot)
        problems = text_of(app, "#preview-problems")
        assert "warning name-mismatch" in problems
        assert "data-viz" in problems  # the message says where and how to fix it
        await pilot.press("ctrl+u", *"release-notes")
        await settle(pilot)
        assert "only the user invokes it" in text_of(app, "#preview-state")


@sync
async def test_enter_reads_the_preview_full_screen_and_escape_comes_back(
    session: Session, project: Path
) -> None:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"deploy", "enter")
        assert top(app).maximized is not None
        await pilot.press("escape")
        assert top(app).maximized is None
        assert app.query_one(FilterInput).value == "deploy"
        await pilot.press("escape")
        assert app.query_one(FilterInput).value == ""
        await pilot.press("escape")
    assert app.return_value is None


@sync
async def test_toggle_asks_which_config_when_none_decides_and_writes_it(
    session: Session, project: Path
) -> None:
    project_config = project / ".skillpack" / "config.toml"
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"code-review", "ctrl+t")
        assert isinstance(top(app), ScopeScreen)
        await pilot.press("p")
        await pilot.pause()
        assert 'disabled = ["code-review"]' in project_config.read_text("utf-8")
        assert app.current is not None and app.flags_of(app.current) == ("disabled",)
        # the project file decides now: enabling writes there without asking
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not isinstance(top(app), ScopeScreen)
        assert "code-review" not in project_config.read_text("utf-8")
        assert app.current is not None and app.flags_of(app.current) == ()
        # the user's file decides old-helper: it is enabled there
        await pilot.press("ctrl+u", *"old-helper", "ctrl+t")
        await pilot.pause()
        assert "old-helper" not in user_config().read_text("utf-8")
        assert app.current is not None and app.flags_of(app.current) == ()
        # cancelled: nothing written
        await pilot.press("ctrl+t", "escape")
        await pilot.pause()
        assert "old-helper" not in user_config().read_text("utf-8")
        assert "old-helper" not in project_config.read_text("utf-8")


@sync
async def test_toggle_outside_a_project_writes_the_user_config_without_asking(
    tmp_path: Path,
) -> None:
    loose = tmp_path / "loose"
    (loose / ".agents" / "skills" / "notes").mkdir(parents=True)
    (loose / ".agents" / "skills" / "notes" / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Take notes.\n---\nWrite.\n", "utf-8"
    )
    session = open_session(loose)
    app = make_app(session, loose)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"notes", "ctrl+t")
        await pilot.pause()
        assert not isinstance(top(app), ScopeScreen)
        assert 'disabled = ["notes"]' in user_config().read_text("utf-8")
        # the list keys work too once the list has the focus
        await pilot.press("tab", "space")
        await pilot.pause()
        assert "notes" not in user_config().read_text("utf-8")


@sync
async def test_edit_opens_the_skill_in_editor(
    session: Session, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "argv.txt"
    script = tmp_path / "editor.py"
    script.write_text(
        f"import sys; open({str(record)!r}, 'w').write('\\n'.join(sys.argv[1:]))\n", "utf-8"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script} --wait")
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"pdf-tools", "ctrl+o")
        await pilot.pause()
    assert record.read_text("utf-8").splitlines() == [
        "--wait",
        str(project / ".agents" / "skills" / "pdf-tools" / "SKILL.md"),
    ]


@sync
async def test_edit_without_an_editor_says_how_to_set_one(
    session: Session, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert any("Set $EDITOR" in n.message for n in app._notifications)


@sync
async def test_copy_puts_the_mention_on_the_clipboard(session: Session, project: Path) -> None:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"code-review", "ctrl+y")
        assert app.clipboard == "$code-review"
        # a shadowed skill is picked by its scope
        await pilot.press("ctrl+u", *"pdf-tools", "down", "ctrl+y")
        assert app.clipboard == "$user:pdf-tools"


@sync
async def test_catalog_view_shows_the_rendered_catalog_and_what_the_budget_cut(
    project: Path,
) -> None:
    session = open_session(project, env={"SKILLS_PROMPT_CHAR_BUDGET": "900"})
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g")
        assert isinstance(top(app), CatalogScreen)
        report = text_of(app, "#catalog-report")
        assert "of 900 characters" in report
        assert "omitted" in report or "name only" in report or "shortened" in report
        shown = app.export_screenshot()
        assert "&lt;available_skills&gt;" in shown
        assert str(project) not in shown  # locations shown relative to the project
        await pilot.press("escape")
        assert not isinstance(top(app), CatalogScreen)


@sync
async def test_problems_view_lists_every_problem_and_goes_to_its_skill(
    session: Session, project: Path
) -> None:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"pdf", "ctrl+p")
        assert isinstance(top(app), ProblemsScreen)
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(session.catalog.problems)
        codes = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert "yaml-invalid" in codes and "name-mismatch" in codes
        await pilot.press(*["down"] * codes.index("yaml-invalid"), "enter")
        assert isinstance(top(app), ProblemsScreen)  # the broken file is no skill
        await pilot.press("home", *["down"] * codes.index("name-mismatch"), "enter")
        await pilot.pause()
        assert not isinstance(top(app), ProblemsScreen)
        assert app.current is not None and app.current.name == "charts"
        assert app.query_one(FilterInput).value == ""


@sync
async def test_reload_and_live_changes_update_the_list(session: Session, project: Path) -> None:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"zebra")
        assert names(app) == []
        folder = project / ".agents" / "skills" / "zebra-care"
        folder.mkdir()
        (folder / "SKILL.md").write_text("---\nname: zebra-care\ndescription: Z.\n---\n", "utf-8")
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert names(app) == ["repo:zebra-care"]
        # a change found on another thread (the watcher's) reaches the list too
        (folder / "SKILL.md").unlink()
        folder.rmdir()
        worker = threading.Thread(target=session.refresh)
        worker.start()
        worker.join()
        await pilot.pause(0.05)
        assert names(app) == []
        assert "of 10 skills" in text_of(app, "#status")


@sync
async def test_pick_returns_the_chosen_skill(session: Session, project: Path) -> None:
    app = make_app(session, project, pick=True, query="pdf")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "enter")
    assert app.return_value is not None
    assert app.return_value.qualified_name == "user:pdf-tools"


@sync
async def test_pick_by_double_click_and_cancel_by_escape(session: Session, project: Path) -> None:
    app = make_app(session, project, pick=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.double_click("#skills", offset=(10, 1))
    assert app.return_value is not None
    assert app.return_value.qualified_name == names_in(session)[1]
    app = make_app(session, project, pick=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
    assert app.return_value is None


def names_in(session: Session) -> list[str]:
    return [s.qualified_name for s in session.catalog.skills]


@sync
async def test_help_opens_with_f1_and_with_question_mark_on_an_empty_filter(
    session: Session, project: Path
) -> None:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert isinstance(top(app), HelpScreen)
        await pilot.press("escape", "question_mark")
        assert isinstance(top(app), HelpScreen)
        await pilot.press("escape", *"pdf", "question_mark")
        assert not isinstance(top(app), HelpScreen)
        assert app.query_one(FilterInput).value == "pdf?"


@sync
async def test_letters_typed_in_the_list_go_to_the_filter(session: Session, project: Path) -> None:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("tab")
        assert app.focused is app.skill_list
        await pilot.press(*"journal")
        assert app.query_one(FilterInput).value == "journal"
        assert names(app) == ["user:journal"]


@sync
async def test_hostile_text_is_shown_as_escapes(tmp_path: Path) -> None:
    project = tmp_path / "p"
    folder = project / ".agents" / "skills" / "evil"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        '---\nname: evil\ndescription: "Clear \\e[2J screen \\u202e reversed"\n---\n'
        "Body \x1b]0;title\x07 here.\n",
        "utf-8",
    )
    session = open_session(project)
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        row = app.skill_list.render_line(0).text
        assert "\\x1b[2J" in row and "\\u202e" in row
        assert "\x1b" not in row and "\u202e" not in row
        body = "\n".join(strip.text for strip in app.screen.query_one(BodyView).lines)
        assert "\\x1b]0;title\\x07" in body and "\x1b" not in body


# The screenshot's window frame (three dots) and its default text colour.
_SVG_CHROME = {"ff5f57", "febc2e", "28c840", "c5c8c6"}


async def _colours(session: Session, project: Path) -> set[str]:
    app = make_app(session, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"deploy")
        await settle(pilot)
        svg = app.export_screenshot()
    return set(re.findall(r"#([0-9a-f]{6})", svg)) - _SVG_CHROME


def _chromatic(colours: set[str]) -> set[str]:
    return {c for c in colours if not c[0:2] == c[2:4] == c[4:6]}


@sync
async def test_no_color_draws_in_grey_only(
    session: Session, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _chromatic(await _colours(session, project))  # colours by default
    monkeypatch.setenv("NO_COLOR", "1")
    colours = await _colours(session, project)
    assert len(colours) > 2
    assert not _chromatic(colours)
