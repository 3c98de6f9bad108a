"""Placeholder substitution in a skill body (design rules: rendering), pure: text in, text out.

Recognised placeholders, replaced in one left-to-right pass (a substituted value is
never scanned again, so an argument that contains `$1` stays as typed):

- `$ARGUMENTS`: the raw argument string, exactly as given.
- `$ARGUMENTS[N]` and `$N`: the N-th argument, 0-based, split shell-style
  (`shlex.split`'s rules; unbalanced quotes fall back to splitting on whitespace).
  An index past the last argument stays literal. The arguments are split only when
  a placeholder needs them, by a linear scanner (`shlex` took 15 s for 1 MB).
- `$name` and `${name}`: a named argument; the i-th name in the skill's `arguments`
  frontmatter takes the i-th positional argument. A missing one stays literal.
- `${SKILL_DIR}` (alias `${CLAUDE_SKILL_DIR}`) and `${SESSION_ID}` (alias
  `${CLAUDE_SESSION_ID}`); left literal when no value is known.
- `\\$` before a recognised placeholder escapes it: the backslash is dropped and the
  placeholder is kept as written. Before anything else the backslash stays, so shell
  snippets such as `echo \\$HOME` are not altered.

Everything else, including unknown `${FOO}`, stays literal. Substitution happens
everywhere in the body, fenced code included, as Claude Code does; authors escape
with `\\$` where they need a literal placeholder.

Spans given as `keep` (the output of the skill's shell commands, design rules: surfaces: the
skill's own text is preprocessed first, then substituted) replace their part of the
body as is and are never scanned: command output cannot inject an argument.

Arguments come from a model or a user, so what substitution adds is bounded: past
`MAX_EXPANSION_CHARS` characters more than the body it raises `UsageError` (a body
writing `$ARGUMENTS` a thousand times would multiply the arguments a thousandfold).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from .._errors import UsageError
from .._limits import MAX_EXPANSION_CHARS
from .._model import Skill

__all__ = ["argument_names", "split_arguments", "substitute"]

_SKILL_DIR_KEYS = frozenset({"SKILL_DIR", "CLAUDE_SKILL_DIR"})
_SESSION_KEYS = frozenset({"SESSION_ID", "CLAUDE_SESSION_ID"})
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# Names that would collide with the built-in placeholders are not usable as argument names.
_BUILTIN_KEYS = _SKILL_DIR_KEYS | _SESSION_KEYS
_RESERVED_NAMES = frozenset({"ARGUMENTS"}) | _BUILTIN_KEYS

_BASE_PATTERN = (
    r"(?P<esc>\\)?\$(?:"
    r"ARGUMENTS\[(?P<index>\d+)\]"
    r"|(?P<all>ARGUMENTS)(?!\w)"
    r"|(?P<num>\d+)(?!\w)"
    r"|\{(?P<braced>[A-Za-z_][A-Za-z0-9_-]*)\}"
)


# POSIX shell words as `shlex.split` reads them (whitespace is space, tab, CR, LF):
# a run of plain characters, a '…' string (nothing escaped), a "…" string (`\"` and
# `\\` escaped, other backslashes kept), a backslash escaping the next character.
_WORD_PART = re.compile(
    r"(?P<space>[ \t\r\n]+)"
    r"|'(?P<single>[^']*)'"
    r'|"(?P<double>(?:[^"\\]|\\[\s\S])*)"'
    r"|\\(?P<escaped>[\s\S])"
    r"""|(?P<plain>[^ \t\r\n'"\\]+)"""
)
_DOUBLE_ESCAPE = re.compile(r'\\([\\"])')


def split_arguments(args: str) -> tuple[str, ...]:
    """Split an argument string shell-style (quotes group words, nothing is expanded).

    The same words as `shlex.split(args)`, in time linear in the text. Unbalanced
    quotes (or a trailing backslash) cannot be split shell-style; the string is
    then split on whitespace so the caller still gets every word.
    """
    if not args.strip():
        return ()
    words: list[str] = []
    word: list[str] | None = None
    position = 0
    for match in _WORD_PART.finditer(args):
        if match.start() != position:
            break  # an unclosed quote or a lone backslash at the end
        position = match.end()
        kind = match.lastgroup
        if kind == "space":
            if word is not None:
                words.append("".join(word))
                word = None
            continue
        if word is None:
            word = []
        text = match.group(kind)  # type: ignore[arg-type]
        word.append(_DOUBLE_ESCAPE.sub(r"\1", text) if kind == "double" else text)
    if position != len(args):
        return tuple(args.split())
    if word is not None:
        words.append("".join(word))
    return tuple(words)


def argument_names(names: Sequence[str]) -> dict[str, int]:
    """Map each usable argument name to its 0-based position.

    A name is usable when it looks like an identifier (letters, digits, `_`, `-`, not
    starting with a digit) and is not a built-in placeholder; the others keep their
    position but are never substituted. The first occurrence of a repeated name wins.
    """
    positions: dict[str, int] = {}
    for position, name in enumerate(names):
        if _NAME_RE.fullmatch(name) and name not in _RESERVED_NAMES:
            positions.setdefault(name, position)
    return positions


@lru_cache(maxsize=256)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    if not names:
        return re.compile(_BASE_PATTERN + ")")
    # Longest first so `$file_name` is not read as `$file` followed by `_name`.
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(_BASE_PATTERN + rf"|(?P<named>{alternatives})(?![\w\[])" + ")")


def substitute(
    body: str,
    *,
    args: str = "",
    skill: Skill | None = None,
    skill_dir: str = "",
    session_id: str = "",
    keep: Sequence[tuple[int, int, str]] = (),
) -> str:
    """Apply the placeholder substitutions of "Rules: rendering" (docs/design.md) to a skill body.

    Args:
        body: The SKILL.md body (frontmatter already removed).
        args: The raw argument string given with the invocation.
        skill: The skill, for its named `arguments` and its directory.
        skill_dir: The skill's base directory; defaults to `skill.dir`.
        session_id: The current session id; `${SESSION_ID}` stays literal when empty.
        keep: `(start, end, text)` spans of `body`, sorted and disjoint: each is
            replaced by `text`, which is never scanned for placeholders.

    Returns:
        The body with placeholders replaced. When `args` is not blank and no argument
        placeholder was replaced, `"\\n\\nARGUMENTS: <args>"` is appended so the
        arguments still reach the model.

    Raises:
        UsageError: the substitutions would add more than `MAX_EXPANSION_CHARS`
            characters to the body.
    """
    positional: tuple[str, ...] | None = None  # split on first use
    named = argument_names(skill.arguments) if skill is not None else {}
    directory = skill_dir or (skill.dir if skill is not None else "")
    used_argument = False
    added = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal added
        value = expand(match)
        added += len(value) - (match.end() - match.start())
        if added > MAX_EXPANSION_CHARS:
            raise UsageError(
                f"The arguments would make {_what(skill)} over {MAX_EXPANSION_CHARS} "
                "characters longer than its body (its placeholders repeat them); pass "
                "shorter `args`."
            )
        return value

    def expand(match: re.Match[str]) -> str:
        nonlocal used_argument, positional
        text = match.group(0)
        braced = match.group("braced")
        if braced is not None and braced not in named and braced not in _BUILTIN_KEYS:
            # Not a placeholder at all (`${FOO}`): leave it, backslash included.
            return text
        if match.group("esc"):
            return text[1:]
        if braced is not None and braced not in named:
            value = _builtin_value(braced, directory, session_id)
            return text if value is None else value
        if match.group("all") is not None:
            used_argument = True
            return args
        if braced is not None:
            position = named[braced]
        elif (name := match.groupdict().get("named")) is not None:
            position = named[name]
        else:
            position = int(match.group("index") or match.group("num"))
        if positional is None:
            positional = split_arguments(args)
        value = _nth(positional, position)
        if value is None:
            return text
        used_argument = True
        return value

    pattern = _pattern(tuple(named))
    if keep:
        pieces = []
        cursor = 0
        for start, end, text in keep:
            pieces.append(pattern.sub(replace, body[cursor:start]))
            pieces.append(text)
            cursor = end
        pieces.append(pattern.sub(replace, body[cursor:]))
        result = "".join(pieces)
    else:
        result = pattern.sub(replace, body)
    if args.strip() and not used_argument:
        if len(args) > MAX_EXPANSION_CHARS:
            raise UsageError(
                f"The arguments to {_what(skill)} are {len(args)} characters, over the "
                f"limit of {MAX_EXPANSION_CHARS}; pass shorter `args`."
            )
        result += f"\n\nARGUMENTS: {args}"
    return result


def _what(skill: Skill | None) -> str:
    return f"skill '{skill.name}'" if skill is not None else "the skill"


def _builtin_value(key: str, skill_dir: str, session_id: str) -> str | None:
    if key in _SKILL_DIR_KEYS:
        return skill_dir or None
    if key in _SESSION_KEYS:
        return session_id or None
    return None


def _nth(values: Sequence[str], position: int) -> str | None:
    return values[position] if position < len(values) else None
