"""Properties of substitution (hypothesis): arguments split exactly as `shlex.split`
does, and any body and arguments give text or a bounded-size refusal."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from skillpack._errors import UsageError
from skillpack._limits import MAX_EXPANSION_CHARS
from skillpack._model import Skill
from skillpack.render._substitute import split_arguments, substitute
from strategies import ARG_PIECES, arguments, bodies


def reference_split(args: str) -> tuple[str, ...]:
    """What `split_arguments` promises: shlex's words, or whitespace words when
    shlex refuses the text."""
    if not args.strip():
        return ()
    try:
        return tuple(shlex.split(args))
    except ValueError:
        return tuple(args.split())


@given(st.one_of(arguments(), st.text(alphabet=st.sampled_from(" \t\n\r'\"\\ab\u00a0"))))
def test_arguments_split_exactly_as_shlex_splits_them(args: str) -> None:
    assert split_arguments(args) == reference_split(args)


SKILL = Skill(
    name="s",
    description="d",
    path="/s/s/SKILL.md",
    dir="/s/s",
    arguments=("file", "mode", "ARGUMENTS", "file_name"),
)


@given(bodies(), st.one_of(arguments(), st.lists(ARG_PIECES).map("".join)), st.booleans())
def test_any_body_and_arguments_give_bounded_text(body: str, args: str, named: bool) -> None:
    try:
        result = substitute(body, args=args, skill=SKILL if named else None, session_id="sid")
    except UsageError:
        return
    assert len(result) <= len(body) + MAX_EXPANSION_CHARS + len(args) + len("\n\nARGUMENTS: ")
    if not args.strip() and "$" not in body:
        assert result == body


@given(st.integers(1, 4000), st.integers(1, 400))
def test_repeated_placeholders_are_refused_past_the_expansion_limit(copies: int, size: int) -> None:
    body = "$ARGUMENTS " * copies
    added = copies * (size - len("$ARGUMENTS"))
    try:
        substitute(body, args="a" * size)
        refused = False
    except UsageError:
        refused = True
    assert refused == (added > MAX_EXPANSION_CHARS)
