"""Finding skill references in message text: `$name` mentions, links, slash commands.

Pure text in, values out; nothing here knows about the catalog (`_resolve.py`
resolves what this module finds). `str.find` jumps from `$` to `$` and a compiled
regex checks each one; only when a candidate exists are code regions looked for —
fences with `str.find`, inline code spans only in the paragraphs that hold a
candidate — so a long message costs little more than one scan for `$`.

Decisions (recorded in docs/design.md):

- A mention is `$` + id where the id is `[A-Za-z0-9_-]+(:[A-Za-z0-9_-]+)*`. The `$`
  must start the text or follow whitespace (any Unicode space), one of `([{"'*`, or a
  typographic opener (`“‘«（「『【`). A letter, digit or `\\` glued to the `$` (`é$foo`,
  `US$5`, `\\$foo`, `使用$foo`) means it is not a mention.
- An id with no lowercase ASCII letter is never a mention: environment variables
  (`$PATH`, `$XDG_CONFIG_HOME`, `$A1`), placeholders (`$ARGUMENTS`, `$ARGUMENTS[0]`,
  `$1`), plain amounts (`$5`, `$1,000`, `$9.99`) and `$_` / `$-`.
- Amounts with a lowercase magnitude suffix (`$5k`, `$10m`, `$2bn`, `$3mm`, `$1t`)
  are not mentions either; `$3d-modeling` is.
- An id followed directly by another `$` is not a mention (`$x$` is TeX math,
  `$a$b` is shell concatenation); `$$foo` is not a mention (the second `$` follows a
  `$`).
- Code: fences of three or more backticks or tildes, at any indentation (fences
  inside list items are indented), closed by a fence of the same character at least
  as long; an unclosed fence runs to the end of the text. Inline code spans are
  backtick runs closed by a run of the same length in the same paragraph.
  Indented code blocks count too (`$deploy "$f"` in an indented shell loop
  is code): lines indented four spaces or a tab that start after a blank line (or
  the text's start), with the blank and indented lines that follow; not after a
  list item (`-`, `*`, `+`, `1.` or `1)`), where indentation continues the item.
- Links: `[$name](target)` or `[$name](<target>)` anywhere outside code. A target
  with a URL scheme (`https://…`) is not a skill path: the link is then an ordinary
  name mention (source `mention`, no `link`).
- Slash commands: the message (after leading whitespace) starts with `/id` followed
  by whitespace or the end; the arguments are the rest of the message, stripped.
  `/usr/bin/env` is not a slash command.
- Removing tokens (`remove_spans`): brackets or quotes wrapping only the token go
  with it; a `:`/`,`/`;` right after a token that starts its line goes too; a token
  alone on its line takes the line (leaving at most one blank line); the spaces at
  each cut become one space, or none before punctuation or a line break.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Literal, NamedTuple

MentionSource = Literal["mention", "slash", "link"]
"""How a skill was referenced: `$name`, `/name` at message start, `[$name](path)`."""

ID_PATTERN = r"[A-Za-z0-9_-]+(?::[A-Za-z0-9_-]+)*"
"""A skill id as written after `$` or `/`: a name, or `namespace:name`."""

# Characters after which a `$` may start a mention (besides whitespace and the start).
_OPENERS = "([{\"'*“‘«（「『【"

_LINK_RE = re.compile(
    rf"\[\$(?P<id>{ID_PATTERN})\]\((?:<(?P<angle>[^<>\n]+)>|(?P<target>[^()\s]+))\)"
)
_DOLLAR_RE = re.compile(
    rf"""
    \$
    (?<![^\s{re.escape(_OPENERS)}]\$)         # `$` at start, after space or an opener
    (?=[A-Z0-9_:-]*[a-z])                     # needs a lowercase letter: not $PATH, $5
    (?!\d+(?:k|m|b|t|bn|mm)(?![A-Za-z0-9_-]|:[A-Za-z0-9_-]))  # not an amount: $5k, $2bn
    (?P<id>(?>{ID_PATTERN}))                  # atomic: no shorter id on failure
    (?!\$)                                    # not $x$ (math) or $a$b
    """,
    re.VERBOSE,
)
_BACKTICKS_RE = re.compile(r"`+")
_BLANK_LINE_RE = re.compile(r"\n[ \t]*(?:\r?\n)")
_SLASH_RE = re.compile(rf"\s*/(?P<name>(?>{ID_PATTERN}))(?:\s+(?P<args>.*))?\s*", re.DOTALL)
_URL_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://|mailto:")
_WRAPPERS = {"(": ")", "[": "]", "{": "}", '"': '"', "'": "'", "“": "”", "‘": "’"}
_NO_SPACE_BEFORE = frozenset(".,;:!?)]}…\r\n")


@dataclass(frozen=True, kw_only=True, slots=True)
class Mention:
    """One reference to a skill found in a message."""

    token: str
    """Exactly as written: `$foo`, `$ns:foo`, `[$foo](path/SKILL.md)`, `/foo`."""
    id: str
    """The skill id: `foo` or `ns:foo`."""
    source: MentionSource
    start: int
    """Offset of the token's first character in the text."""
    end: int
    """Offset just past the token's last character."""
    link: str | None = None
    """The link target of `[$name](target)`, verbatim."""


def code_regions(text: str) -> list[tuple[int, int]]:
    """Sorted, non-overlapping `(start, end)` spans of fenced blocks and inline code."""
    fences = _fenced_blocks(text) if ("```" in text or "~~~" in text) else []
    if "`" not in text:
        return fences
    regions: list[tuple[int, int]] = []
    cursor = 0
    for start, end in fences:
        regions.extend(_code_spans(text, cursor, start))
        regions.append((start, end))
        cursor = end
    regions.extend(_code_spans(text, cursor, len(text)))
    return regions


def _fence_runs(text: str) -> list[tuple[int, int]]:
    """`(start, end)` of every run of 3+ backticks or tildes that starts a line."""
    runs: list[tuple[int, int]] = []
    for marker in ("```", "~~~"):
        # str.find beats a regex here: fences are rare, the text may be long.
        position = text.find(marker)
        while position != -1:
            end = position + 3
            while end < len(text) and text[end] == marker[0]:
                end += 1
            before = position
            while before > 0 and text[before - 1] in " \t":
                before -= 1
            if before == 0 or text[before - 1] == "\n":
                runs.append((position, end))
            position = text.find(marker, end)
    runs.sort()
    return runs


def _fenced_blocks(text: str) -> list[tuple[int, int]]:
    blocks: list[tuple[int, int]] = []
    open_char = ""
    open_len = 0
    open_start = 0
    open_line_end = 0
    for run_start, run_end in _fence_runs(text):
        line_end = text.find("\n", run_end)
        if line_end == -1:
            line_end = len(text)
        run_char = text[run_start]
        rest = text[run_end:line_end]
        if not open_char:
            if run_char == "`" and "`" in rest:
                continue  # a backtick fence's info string cannot hold backticks
            open_char, open_len = run_char, run_end - run_start
            open_start = text.rfind("\n", 0, run_start) + 1
            open_line_end = line_end
        elif (
            run_start > open_line_end
            and run_char == open_char
            and run_end - run_start >= open_len
            and not rest.strip()
        ):
            blocks.append((open_start, line_end))
            open_char = ""
    if open_char:
        blocks.append((open_start, len(text)))  # unclosed: code to the end
    return blocks


_LIST_ITEM_RE = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def _indented_blocks(text: str) -> list[tuple[int, int]]:
    """`(start, end)` of every indented code block (the rule in the module docstring)."""
    blocks: list[tuple[int, int]] = []
    start = -1  # the open block's start, or -1
    last_end = 0  # the end of the open block's last indented line
    blank_before = True
    in_list = False
    position = 0
    for line in text.splitlines(keepends=True):
        line_start, position = position, position + len(line)
        content = line.rstrip("\r\n")
        blank = not content.strip()
        indented = content.startswith(("    ", "\t"))
        if start >= 0:
            if blank:
                continue
            if indented:
                last_end = line_start + len(content)
                continue
            blocks.append((start, last_end))
            start = -1
        if blank:
            blank_before = True
            continue
        if indented and blank_before and not in_list:
            start, last_end = line_start, line_start + len(content)
        elif _LIST_ITEM_RE.match(content):
            in_list = True
        elif not indented:
            in_list = False
        blank_before = False
    if start >= 0:
        blocks.append((start, last_end))
    return blocks


def _code_blocks(text: str) -> list[tuple[int, int]]:
    """Fenced and indented code blocks of a message, sorted and merged."""
    fences = _fenced_blocks(text) if ("```" in text or "~~~" in text) else []
    if "\n    " not in text and "\n\t" not in text and not text.startswith(("    ", "\t")):
        return fences
    merged: list[tuple[int, int]] = []
    for start, end in sorted(fences + _indented_blocks(text)):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _code_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Inline code spans in `text[start:end]`, which holds no fenced block.

    A run of n backticks opens a span closed by the next run of exactly n backticks
    in the same paragraph; an opener without a closer is literal text.
    """
    if start >= end or text.find("`", start, end) == -1:
        return []
    runs = [m.span() for m in _BACKTICKS_RE.finditer(text, start, end)]
    count = len(runs)
    # next_same[i]: index of the next run as long as run i (-1: none), in one pass.
    next_same = [-1] * count
    latest: dict[int, int] = {}
    for index in range(count - 1, -1, -1):
        run_start, run_end = runs[index]
        next_same[index] = latest.get(run_end - run_start, -1)
        latest[run_end - run_start] = index
    breaks = [m.start() for m in _BLANK_LINE_RE.finditer(text, start, end)]
    spans: list[tuple[int, int]] = []
    index = 0
    while index < count:
        closer = next_same[index]
        if closer != -1 and (
            not breaks
            # A span never crosses a blank line (it lives inside one paragraph).
            or bisect_left(breaks, runs[index][1]) == bisect_left(breaks, runs[closer][0])
        ):
            spans.append((runs[index][0], runs[closer][1]))
            index = closer + 1
        else:
            index += 1
    return spans


class RawMention(NamedTuple):
    """A `Mention` as a named tuple: without a dataclass's cost, for long messages."""

    token: str
    id: str
    source: MentionSource
    start: int
    end: int
    link: str | None


def find_mentions(text: str) -> tuple[Mention, ...]:
    """Every `$name`, `$ns:name` and `[$name](target)` outside code, in text order.

    The rules (what counts as a mention, what is code) are in this module's docstring.
    """
    return tuple(
        Mention(token=token, id=mention_id, source=source, start=start, end=end, link=link)
        for token, mention_id, source, start, end, link in raw_mentions(text)
    )


def raw_mentions(text: str) -> list[RawMention]:
    """`find_mentions` as plain tuples, for callers that scan long messages."""
    if "$" not in text:
        return []
    found: list[RawMention] = []
    # A str.find loop over `$` beats one regex pass over the whole text by far
    # when `$` is rare, and matches it when `$` is everywhere.
    position = text.find("$")
    end = 0
    while position != -1:
        match = None
        if position > end and text[position - 1] == "[":
            match = _LINK_RE.match(text, position - 1)
        if match is not None:
            target = match.group("target") or match.group("angle")
            # A web link is not a skill path: an ordinary mention of the name.
            link = None if _URL_SCHEME_RE.match(target) else target
            source: MentionSource = "mention" if link is None else "link"
        else:
            match = _DOLLAR_RE.match(text, position)
            link, source = None, "mention"
        if match is None:
            position = text.find("$", position + 1)
            continue
        start, stop = match.span()
        found.append(RawMention(match.group(), match.group("id"), source, start, stop, link))
        end = match.end()
        position = text.find("$", end)
    if not found:
        return found
    return _outside_code(text, found)


def _outside_code(text: str, found: list[RawMention]) -> list[RawMention]:
    """The mentions that do not touch a fenced block or an inline code span.

    Inline spans are paired only inside the paragraphs that hold a mention, so a long
    message with a few mentions costs a few paragraphs, not every backtick in it.
    """
    fences = _code_blocks(text)
    ticks = "`" in text
    breaks = [m.start() for m in _BLANK_LINE_RE.finditer(text)] if ticks else []
    paragraphs: dict[tuple[int, int], tuple[list[tuple[int, int]], list[int]]] = {}
    kept: list[RawMention] = []
    fence = 0
    for mention in found:
        start, end = mention.start, mention.end
        while fence < len(fences) and fences[fence][1] <= start:
            fence += 1
        if fence < len(fences) and fences[fence][0] < end:
            continue
        if ticks:
            after = bisect_left(breaks, start)
            paragraph = (
                max(breaks[after - 1] if after else 0, fences[fence - 1][1] if fence else 0),
                min(
                    breaks[after] if after < len(breaks) else len(text),
                    fences[fence][0] if fence < len(fences) else len(text),
                ),
            )
            cached = paragraphs.get(paragraph)
            if cached is None:
                spans = _code_spans(text, *paragraph)
                cached = paragraphs[paragraph] = (spans, [span[0] for span in spans])
            spans, starts = cached
            # Spans are sorted and disjoint: only the last one starting before `end`
            # can overlap the mention.
            last = bisect_left(starts, end) - 1
            if last >= 0 and spans[last][1] > start:
                continue
        kept.append(mention)
    return kept


def parse_slash(text: str) -> tuple[str, str] | None:
    """`(name, args)` when the message starts with `/name`, else None.

    Leading whitespace is allowed; the name must be followed by whitespace or the
    end (`/usr/bin/env` and `/path/to/file` are not commands). The arguments are the
    rest of the message, stripped, and may span lines.
    """
    match = _SLASH_RE.fullmatch(text)
    if match is None:
        return None
    return match.group("name"), (match.group("args") or "").strip()


def remove_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the given token spans, with the whitespace at each cut tidied."""
    pieces: list[str] = []
    cursor = 0
    for start, end in spans:
        if start < cursor:
            continue
        opener = text[start - 1] if start > 0 else ""
        if opener in _WRAPPERS and text[end : end + 1] == _WRAPPERS[opener] and start - 1 >= cursor:
            start, end = start - 1, end + 1
        before = start
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        starts_line = before == 0 or text[before - 1] == "\n"
        if starts_line and text[end : end + 1] in (":", ",", ";"):
            end += 1
        pieces.append(text[cursor:start])
        cursor = end
    pieces.append(text[cursor:])
    # One join at the end: many cuts in a long message must stay linear.
    out = [pieces[0].rstrip(" \t")]
    tail = out[0][-2:]
    for index, piece in enumerate(pieces[1:], start=2):
        right = piece.lstrip(" \t")
        if index < len(pieces):
            right = right.rstrip(" \t")
        if tail[-1:] == "\n":
            # The token filled its line: drop the line, and never leave more than
            # one blank line where it was.
            right = _drop_newline(right)
            if tail == "\n\n":
                right = _drop_newline(right)
        if not right:
            continue
        if tail and tail[-1] != "\n" and right[0] not in _NO_SPACE_BEFORE:
            out.append(" ")
        out.append(right)
        tail = (tail + right)[-2:]
    return "".join(out).strip()


def _drop_newline(text: str) -> str:
    if text.startswith("\r\n"):
        return text[2:]
    return text[1:] if text.startswith("\n") else text
