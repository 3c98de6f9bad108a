"""The preview pane: everything about the skill under the cursor.

What it shows comes in one `SkillView` value the app builds from the session (flags,
problems, catalog cost, dependencies, files, body); the pane only lays it out: a
title, the skill's standing, its problems with their fixes, the frontmatter as a
table, its files, and the body rendered as Markdown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.strip import Strip
from textual.widgets import Static

from .._model import Problem, Skill
from ..runtime._picker import Flag
from ._body import BodyView, render_markdown
from ._text import PathDisplay, one_line, safe_text

BODY_PREVIEW_CHARS = 40_000
"""Body characters rendered at most (a huge body would hold the pane up)."""

_FLAG_WORDS: Mapping[Flag, str] = {
    "disabled": "disabled by config",
    "denied": "denied by a permission rule",
    "shadowed": "shadowed",
    "model-only": "model only (user-invocable: false)",
    "user-only": "user only (the model may not invoke it)",
    "problems": "has problems",
    "missing-deps": "missing dependencies",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillView:
    """What the preview shows for one skill."""

    skill: Skill
    mention: str
    """The mention that picks exactly this skill (`$name`, `$repo:name`, ...)."""
    flags: tuple[Flag, ...]
    problems: tuple[Problem, ...]
    cost: str
    """One line: the skill's entry in the model's catalog, or why it has none."""
    missing: tuple[Mapping[str, str], ...]
    """Declared dependencies that are missing (`{"type", "name"}`)."""
    files: tuple[str, ...]
    files_truncated: bool
    body: str


class SkillPreview(VerticalScroll, can_focus=True):
    """A scrollable pane describing one skill (enter shows it full screen)."""

    ALLOW_MAXIMIZE = True

    DEFAULT_CSS = """
    SkillPreview { height: 1fr; padding: 0 1; background: $surface; }
    SkillPreview > Static { margin-bottom: 1; }
    SkillPreview > #preview-title { margin-bottom: 0; text-style: bold; }
    """

    def __init__(self, paths: PathDisplay, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._paths = paths
        self.view: SkillView | None = None
        self._rendered_width = 0

    def compose(self) -> ComposeResult:
        yield Static(id="preview-title")
        yield Static(id="preview-state")
        yield Static(id="preview-problems")
        yield Static(id="preview-meta")
        yield Static(id="preview-files")
        yield BodyView(id="preview-body")

    def show(self, view: SkillView | None) -> None:
        """Lay out `view` (None: nothing is selected). The body is rendered on a
        worker thread unless it is the one already shown."""
        same_body = (
            view is not None
            and self.view is not None
            and self.view.skill.key == view.skill.key
            and self.view.body == view.body
        )
        self.view = view
        title = self.query_one("#preview-title", Static)
        parts = [
            self.query_one(f"#preview-{name}", Static)
            for name in ("state", "problems", "meta", "files")
        ]
        body = self.query_one("#preview-body", BodyView)
        if view is None:
            self.scroll_home(animate=False)
            title.update(Text("No skill matches.", style="italic"))
            for part in parts:
                part.update("")
                part.display = False
            body.set_lines([])
            return
        title.update(_title(view))
        renderables = (
            _state(view),
            _problems(view.problems, self._paths),
            _frontmatter(view.skill),
            _files(view, self._paths),
        )
        for part, renderable in zip(parts, renderables, strict=True):
            part.display = renderable is not None
            part.update(renderable if renderable is not None else "")
        if same_body:
            return
        self.scroll_home(animate=False)
        body.set_lines([Strip([])])  # one blank line until the body is rendered
        self._render_body(view)

    def _body_width(self) -> int:
        body = self.query_one("#preview-body", BodyView)
        return body.size.width or max(self.scrollable_content_region.width, 20)

    def _render_body(self, view: SkillView) -> None:
        width = self._rendered_width = self._body_width()
        self._render_body_lines(view, width)

    @work(thread=True, exclusive=True, group="preview-body")
    def _render_body_lines(self, view: SkillView, width: int) -> None:
        text = view.body
        if len(text) > BODY_PREVIEW_CHARS:
            text = text[:BODY_PREVIEW_CHARS] + "\n\n*(the rest of the body is not shown)*"
        lines = render_markdown(safe_text(text, multiline=True), width)
        self.app.call_from_thread(self._body_ready, view, width, lines)

    def _body_ready(self, view: SkillView, width: int, lines: list[Strip]) -> None:
        shown = self.view
        if shown is None or shown.skill.key != view.skill.key or shown.body != view.body:
            return  # the cursor moved on meanwhile
        self.query_one("#preview-body", BodyView).set_lines(lines)
        if self._body_width() != width:
            self._render_body(view)

    def on_resize(self, event: events.Resize) -> None:
        # Also sent when the content's height changes: only a new width re-renders.
        if self.view is not None and self._body_width() != self._rendered_width:
            self._render_body(self.view)


def _title(view: SkillView) -> Text:
    skill = view.skill
    title = Text()
    title.append(one_line(skill.qualified_name), style="bold")
    title.append(f"  {view.mention}", style="italic")
    return title


def _state(view: SkillView) -> Text:
    skill = view.skill
    text = Text()
    text.append("scope ", style="dim")
    text.append(skill.scope)
    if view.flags:
        text.append("  ·  ", style="dim")
        text.append(", ".join(_FLAG_WORDS[flag] for flag in view.flags), style="bold")
    if skill.shadowed_by:
        text.append("\nshadowed by ", style="dim")
        text.append(safe_text(skill.shadowed_by))
    text.append("\ncatalog ", style="dim")
    text.append(view.cost)
    if view.missing:
        text.append("\nmissing ", style="dim")
        text.append(
            ", ".join(safe_text(f"{d['type']} {d['name']}") for d in view.missing),
            style="bold",
        )
    return text


def _problems(problems: Sequence[Problem], paths: PathDisplay) -> Text | None:
    if not problems:
        return None
    text = Text()
    for index, problem in enumerate(problems):
        if index:
            text.append("\n")
        style = "bold red" if problem.severity == "error" else "bold yellow"
        text.append(f"{problem.severity} {problem.code}", style=style)
        if problem.field:
            text.append(f" ({safe_text(problem.field)})", style="dim")
        text.append("\n  ")
        text.append(safe_text(paths.text(problem.message)))
    return text


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=False)


def _frontmatter(skill: Skill) -> Table | None:
    if not skill.frontmatter:
        return None
    table = Table(show_header=False, box=None, padding=(0, 1, 0, 0), expand=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in skill.frontmatter.items():
        shown = safe_text(_value(value), multiline=True)
        if len(shown) > 2_000:
            shown = shown[:1_999] + "…"
        table.add_row(Text(safe_text(str(key))), Text(shown))
    return table


def _files(view: SkillView, paths: PathDisplay) -> Text:
    text = Text()
    text.append("files ", style="dim")
    text.append(paths.path(view.skill.dir))
    if not view.files:
        text.append("\n  SKILL.md only")
    for name in view.files:
        text.append(f"\n  {safe_text(name)}")
    if view.files_truncated:
        text.append("\n  … (more files)")
    return text
