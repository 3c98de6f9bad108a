"""mkdocs hooks (mkdocs.yml `hooks:`): what the pages say for the tests stays off the site.

A `$ ` line or a block's first line may carry `# docs-test: skip (why)` for
`tests/test_docs.py`, which runs every `python` and `console` block; the reader of the
site needs neither the marker nor its reason. `strip_markers` removes them from the
fenced blocks of a page as it is rendered (a line that was only the marker goes
whole); the sources keep them. Prose that names the marker is left as written.
"""

from __future__ import annotations

import re
from typing import Any

MARKER = re.compile(r"docs-test: skip \((?P<why>[^)]+)\)")
"""The marker and its reason, as `tests/test_docs.py` reads it."""
_FENCE = re.compile(r"^(```[^\n]*\n)(.*?)(^```)", re.S | re.M)
_TRAILING = re.compile(r"[ \t]*#[ \t]*" + MARKER.pattern + r"[ \t]*$", re.M)


def strip_markers(markdown: str) -> str:
    """`markdown` with every fenced block's `# docs-test: skip (why)` comment removed."""

    def block(match: re.Match[str]) -> str:
        lines = []
        for line in match.group(2).split("\n"):
            stripped = _TRAILING.sub("", line)
            if stripped.strip() or stripped == line:
                lines.append(stripped)
        return match.group(1) + "\n".join(lines) + match.group(3)

    return _FENCE.sub(block, markdown)


def on_page_markdown(markdown: str, **_kwargs: Any) -> str:
    """mkdocs' hook for each page's Markdown before it is rendered."""
    return strip_markers(markdown)
