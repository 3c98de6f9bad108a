"""A skill's body rendered as Markdown, off the UI thread.

Rendering Markdown is slow next to a keystroke: a 20 KB body with tables and code
blocks takes 50-300 ms (Textual's own Markdown widget, which mounts a widget per
block, takes seconds). So the body is rendered by Rich on a worker thread into
lines, and `BodyView` only hands those lines to the screen as it scrolls past them.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.markdown import Markdown
from rich.segment import Segment
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget


def render_markdown(text: str, width: int) -> list[Strip]:
    """`text` rendered as Markdown for `width` columns, one `Strip` per line.

    Thread-safe: a private console per call. Links are shown as text (no OSC 8),
    code blocks in the terminal's own colours.
    """
    width = max(width, 10)
    console = Console(
        width=width,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        highlight=False,
        emoji=False,
    )
    markdown = Markdown(text, code_theme="ansi_dark", hyperlinks=False)
    lines = console.render_lines(markdown, console.options.update_width(width), pad=False)
    return [Strip(line) for line in lines]


class BodyView(Widget):
    """Lines rendered elsewhere, drawn as they scroll into view."""

    DEFAULT_CSS = """
    BodyView { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[Strip] = []
        self._drawn: dict[int, Strip] = {}

    @property
    def lines(self) -> list[Strip]:
        return self._lines

    def set_lines(self, lines: list[Strip]) -> None:
        self._lines = lines
        self._drawn.clear()
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.rich_style
        if y >= len(self._lines):
            return Strip.blank(width, style)
        strip = self._drawn.get(y)
        if strip is None or strip.cell_length != width:
            line = Strip(Segment.apply_style(self._lines[y], style))
            strip = self._drawn[y] = line.crop_extend(0, width, style)
        return strip
