"""The skill list: one line per skill, drawn only where the screen shows it.

A `ScrollView` with Textual's line API: `render_line` draws the rows in view and
nothing else, so a list of 10,000 skills costs what 20 rows cost. Changing the
rows (a keystroke in the filter, a live catalog change) swaps one list of hits and
moves the cursor onto the skill it was on, when that skill is still listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .._model import Skill
from ..runtime._picker import Flag, Hit
from ._text import clip, one_line

FLAG_MARKS: dict[Flag, str] = {
    "disabled": "D",
    "denied": "X",
    "shadowed": "S",
    "model-only": "M",
    "user-only": "U",
    "problems": "!",
    "missing-deps": "N",
}
"""One character per flag in the list's flag column (the help screen has the key)."""

SCOPE_WIDTH = 6
FLAGS_WIDTH = 3


class SkillList(ScrollView, can_focus=True):
    """The filtered skills, one per line: cursor, scope badge, flags, name, description."""

    COMPONENT_CLASSES = {
        "skill-list--cursor",
        "skill-list--name",
        "skill-list--description",
        "skill-list--flags",
        "skill-list--off",
        "skill-list--weak",
        "skill-list--scope-admin",
        "skill-list--scope-repo",
        "skill-list--scope-extra",
        "skill-list--scope-user",
        "skill-list--scope-system",
        "skill-list--scope-mcp",
    }

    DEFAULT_CSS = """
    SkillList {
        height: 1fr;
        background: $surface;
    }
    SkillList > .skill-list--cursor { background: $accent 40%; text-style: bold; }
    SkillList:focus > .skill-list--cursor { background: $accent 70%; }
    SkillList > .skill-list--name { text-style: bold; }
    SkillList > .skill-list--description { color: $text-muted; }
    SkillList > .skill-list--flags { color: $warning; text-style: bold; }
    SkillList > .skill-list--off { color: $text-disabled; }
    SkillList > .skill-list--weak { color: $text-muted; text-style: italic; }
    SkillList > .skill-list--scope-admin { color: $error; }
    SkillList > .skill-list--scope-repo { color: $success; }
    SkillList > .skill-list--scope-extra { color: $secondary; }
    SkillList > .skill-list--scope-user { color: $primary; }
    SkillList > .skill-list--scope-system { color: $text-muted; }
    SkillList > .skill-list--scope-mcp { color: $warning; }
    """

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter", "choose", "Choose", show=False),
    ]

    class Highlighted(Message):
        """The cursor moved onto another skill (or off every skill: None)."""

        def __init__(self, skill: Skill | None) -> None:
            super().__init__()
            self.skill = skill

    class Chosen(Message):
        """Enter or a double click on a skill."""

        def __init__(self, skill: Skill) -> None:
            super().__init__()
            self.skill = skill

    def __init__(
        self,
        flags: Callable[[Skill], tuple[Flag, ...]],
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._flags = flags
        self._hits: Sequence[Hit] = ()
        self._cursor = 0
        self._highlighted: str | None = None
        self._lines: dict[int, Strip] = {}
        self._line_width = -1

    # -- rows --------------------------------------------------------------------------

    @property
    def hits(self) -> Sequence[Hit]:
        return self._hits

    @property
    def cursor(self) -> int:
        return self._cursor

    @property
    def skill(self) -> Skill | None:
        """The skill under the cursor."""
        if 0 <= self._cursor < len(self._hits):
            return self._hits[self._cursor].skill
        return None

    def set_hits(self, hits: Sequence[Hit], *, keep: str | None = None) -> None:
        """Show `hits`; the cursor goes to the skill whose key is `keep` when listed,
        else to the first row."""
        self._hits = hits
        self._lines.clear()
        cursor = 0
        if keep is not None:
            for index, hit in enumerate(hits):
                if hit.skill.key == keep:
                    cursor = index
                    break
        self._set_rows(len(hits))
        self._move(cursor, force=True)
        self.refresh()

    def _set_rows(self, count: int) -> None:
        """Make the scrollable height `count` rows. A new virtual size re-lays out the
        whole screen (every widget measured and drawn again); a keystroke needs only
        this widget redrawn, so unless the scrollbar appears or goes, the size is set
        without a layout pass and the scrollbar is updated in place."""
        size = Size(self.size.width, count)
        height = self.size.height
        scrollbar_stays = (self.virtual_size.height > height) == (count > height)
        if self.is_mounted and height and scrollbar_stays:
            self.set_reactive(SkillList.virtual_size, size)
            self._scroll_update(size)
        else:
            self.virtual_size = size

    def redraw(self) -> None:
        """Draw every row again (flags or enable state changed; rows did not)."""
        self._lines.clear()
        self.refresh()

    def _move(self, index: int, *, force: bool = False) -> None:
        count = len(self._hits)
        index = max(0, min(index, count - 1)) if count else 0
        old = self._cursor
        self._cursor = index
        self._lines.pop(old, None)
        self._lines.pop(index, None)
        if count:
            self.scroll_to_region_of(index)
        self.refresh()
        skill = self.skill
        key = skill.key if skill is not None else None
        if force or key != self._highlighted:
            self._highlighted = key
            self.post_message(self.Highlighted(skill))

    def scroll_to_region_of(self, index: int) -> None:
        """Scroll just enough to show row `index`."""
        top = self.scroll_offset.y
        height = max(1, self.scrollable_content_region.height)
        if index < top:
            self.scroll_to(y=index, animate=False, immediate=True)
        elif index >= top + height:
            self.scroll_to(y=index - height + 1, animate=False, immediate=True)

    # -- actions -----------------------------------------------------------------------

    def action_cursor(self, delta: int) -> None:
        self._move(self._cursor + delta)

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height)
        self._move(self._cursor + direction * height)

    def action_jump(self, index: int) -> None:
        self._move(index if index >= 0 else len(self._hits) - 1)

    def action_choose(self) -> None:
        skill = self.skill
        if skill is not None:
            self.post_message(self.Chosen(skill))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self._hits):
            self._move(index)
            if event.chain >= 2:
                self.action_choose()

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self._hits))
        self._lines.clear()

    # -- drawing -----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if width != self._line_width:
            self._lines.clear()
            self._line_width = width
        index = self.scroll_offset.y + y
        if index >= len(self._hits):
            return Strip.blank(width, self.rich_style)
        strip = self._lines.get(index)
        if strip is None:
            strip = self._lines[index] = self._draw(index, width)
        return strip

    def _draw(self, index: int, width: int) -> Strip:
        hit = self._hits[index]
        skill = hit.skill
        base = self.rich_style

        def style(name: str) -> Style:
            # A part's colour and text style over the row's background (the cursor's
            # too). Colours such as $text-disabled are blended into the background,
            # so they are taken from the full style, its background left out.
            full = self.get_component_rich_style(name)
            return Style(color=full.color, bold=full.bold, italic=full.italic)

        flags = self._flags(skill)
        off = any(flag in ("disabled", "denied", "shadowed") for flag in flags)
        marks = "".join(FLAG_MARKS[flag] for flag in flags)
        if len(marks) > FLAGS_WIDTH:
            marks = marks[: FLAGS_WIDTH - 1] + "+"
        name_width = max(12, min(36, width * 3 // 10))
        name = clip(one_line(skill.qualified_name if skill.plugin else skill.name), name_width)
        room = width - 2 - SCOPE_WIDTH - 1 - FLAGS_WIDTH - 1 - name_width - 1
        description = clip(one_line(skill.description), room)
        name_style = style("skill-list--off" if off else "skill-list--name")
        text_style = style(
            "skill-list--off"
            if off
            else "skill-list--weak"
            if not hit.strong
            else "skill-list--description"
        )
        cursor = index == self._cursor
        segments = [
            Segment("> " if cursor else "* " if hit.suggested else "  ", style("skill-list--name")),
            Segment(
                skill.scope.ljust(SCOPE_WIDTH)[:SCOPE_WIDTH] + " ",
                style(f"skill-list--scope-{skill.scope}"),
            ),
            Segment(marks.ljust(FLAGS_WIDTH) + " ", style("skill-list--flags")),
            Segment(name.ljust(name_width) + " ", name_style),
            Segment(description, text_style),
        ]
        row_style = base + self.get_component_rich_style("skill-list--cursor") if cursor else base
        strip = Strip(Segment.apply_style(segments, row_style))
        return strip.crop_extend(0, width, row_style)
