"""Placeholder substitution in skill bodies (design rules: rendering)."""

from __future__ import annotations

import pytest

from skillpack._model import Skill
from skillpack.render._substitute import argument_names, split_arguments, substitute

SKILL_DIR = "/skills/demo"


def make_skill(arguments: tuple[str, ...] = ()) -> Skill:
    return Skill(
        name="demo",
        description="A demo skill.",
        path=f"{SKILL_DIR}/SKILL.md",
        dir=SKILL_DIR,
        arguments=arguments,
    )


# (id, body, args, argument names, session id, expected)
CASES = [
    ("all-arguments", "Fix $ARGUMENTS.", "issue 42", (), "", "Fix issue 42."),
    ("all-arguments-keep-quotes", "Run $ARGUMENTS", 'a "b c"', (), "", 'Run a "b c"'),
    ("all-arguments-twice", "$ARGUMENTS/$ARGUMENTS", "x", (), "", "x/x"),
    ("all-arguments-empty", "Do $ARGUMENTS.", "", (), "", "Do ."),
    ("all-arguments-blank", "[$ARGUMENTS]", " ", (), "", "[ ]"),
    ("indexed-first", "$ARGUMENTS[0]", "x y", (), "", "x"),
    ("indexed-second", "$ARGUMENTS[1]!", "x y", (), "", "y!"),
    (
        "indexed-out-of-range",
        "$ARGUMENTS[2]",
        "x y",
        (),
        "",
        "$ARGUMENTS[2]\n\nARGUMENTS: x y",
    ),
    ("indexed-not-a-number", "$ARGUMENTS[x]", "a", (), "", "a[x]"),
    ("shorthand", "$1 then $0", "a b", (), "", "b then a"),
    ("shorthand-out-of-range-kept", "$0 and $3", "a b", (), "", "a and $3"),
    ("shorthand-no-arguments", "$0", "", (), "", "$0"),
    ("shorthand-two-digits", "$10", "a b c d e f g h i j k", (), "", "k"),
    ("shorthand-glued-to-word", "$1abc", "a b", (), "", "$1abc\n\nARGUMENTS: a b"),
    ("double-quotes-group", "$0|$1", '"hello world" x', (), "", "hello world|x"),
    ("single-quotes-group", "$0|$1", "'a b' c", (), "", "a b|c"),
    ("backslash-space-groups", "$0", "a\\ b c", (), "", "a b"),
    ("unbalanced-quote-falls-back", "$0|$1", 'don"t stop', (), "", 'don"t|stop'),
    ("apostrophe-falls-back", "$1", "it's fine", (), "", "fine"),
    ("append-when-no-placeholder", "Body", "x y", (), "", "Body\n\nARGUMENTS: x y"),
    ("no-append-for-blank-arguments", "Body", "   ", (), "", "Body"),
    ("escaped-all", "\\$ARGUMENTS", "x", (), "", "$ARGUMENTS\n\nARGUMENTS: x"),
    ("escaped-shorthand", "\\$0 $0", "x", (), "", "$0 x"),
    ("escape-before-non-placeholder-kept", "echo \\$HOME", "", (), "", "echo \\$HOME"),
    ("environment-look-alikes-kept", "$HOME $PATH", "x", (), "", "$HOME $PATH\n\nARGUMENTS: x"),
    ("dollar-amount-out-of-range", "costs $5", "a", (), "", "costs $5\n\nARGUMENTS: a"),
    ("arguments-suffix-not-placeholder", "$ARGUMENTSX", "", (), "", "$ARGUMENTSX"),
    ("named", "Open $file.", "a.txt", ("file",), "", "Open a.txt."),
    ("named-braced", "${file}.bak", "a.txt", ("file",), "", "a.txt.bak"),
    ("named-second", "$mode", "a b", ("file", "mode"), "", "b"),
    ("named-missing-kept", "$mode", "a", ("file", "mode"), "", "$mode\n\nARGUMENTS: a"),
    ("named-longer-word-kept", "$filename", "a", ("file",), "", "$filename\n\nARGUMENTS: a"),
    ("named-longest-first", "$file_name $file", "a b", ("file", "file_name"), "", "b a"),
    ("named-with-hyphen", "$issue-id", "7", ("issue-id",), "", "7"),
    ("named-escaped", "\\$file", "a", ("file",), "", "$file\n\nARGUMENTS: a"),
    ("named-undeclared-kept", "$file", "a", (), "", "$file\n\nARGUMENTS: a"),
    ("named-case-sensitive", "$File", "a", ("file",), "", "$File\n\nARGUMENTS: a"),
    ("named-reserved-ignored", "$ARGUMENTS", "a b", ("ARGUMENTS",), "", "a b"),
    ("named-numeric-ignored", "$0", "a", ("0",), "", "a"),
    ("skill-dir", "${SKILL_DIR}/run.py", "", (), "", f"{SKILL_DIR}/run.py"),
    ("skill-dir-claude-alias", "${CLAUDE_SKILL_DIR}", "", (), "", SKILL_DIR),
    ("skill-dir-unbraced-kept", "$SKILL_DIR", "", (), "", "$SKILL_DIR"),
    ("session-id", "id=${SESSION_ID}", "", (), "s-1", "id=s-1"),
    ("session-id-claude-alias", "${CLAUDE_SESSION_ID}", "", (), "s-1", "s-1"),
    ("session-id-unknown-kept", "${SESSION_ID}", "", (), "", "${SESSION_ID}"),
    ("unknown-braced-kept", "${FOO} ${HOME}", "", (), "", "${FOO} ${HOME}"),
    ("escaped-unknown-braced-kept", "\\${FOO}", "", (), "", "\\${FOO}"),
    ("escaped-skill-dir", "\\${SKILL_DIR}", "", (), "", "${SKILL_DIR}"),
    ("values-not-expanded-again", "$0 $1", "'$1' b", (), "", "$1 b"),
    ("inside-fenced-code", "```sh\nrun $0\n```", "x", (), "", "```sh\nrun x\n```"),
    (
        "builtins-do-not-count-as-arguments",
        "${SKILL_DIR}",
        "x",
        (),
        "",
        f"{SKILL_DIR}\n\nARGUMENTS: x",
    ),
]


@pytest.mark.parametrize(
    ("body", "args", "names", "session_id", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_substitution_rule(
    body: str, args: str, names: tuple[str, ...], session_id: str, expected: str
) -> None:
    result = substitute(body, args=args, skill=make_skill(names), session_id=session_id)
    assert result == expected


def test_explicit_skill_dir_wins_over_the_skills_own() -> None:
    result = substitute("${SKILL_DIR}", skill=make_skill(), skill_dir="/elsewhere")
    assert result == "/elsewhere"


def test_without_a_skill_only_builtin_values_given_are_substituted() -> None:
    result = substitute("$0 ${SKILL_DIR} ${SESSION_ID} $name", args="a", session_id="s")
    assert result == "a ${SKILL_DIR} s $name"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param("", (), id="empty"),
        pytest.param("  \t ", (), id="blank"),
        pytest.param("a  b\tc", ("a", "b", "c"), id="whitespace"),
        pytest.param('"a b" c', ("a b", "c"), id="double-quotes"),
        pytest.param("'x' \"\"", ("x", ""), id="empty-quoted-argument"),
        pytest.param("a # b", ("a", "#", "b"), id="hash-is-not-a-comment"),
        pytest.param("'unclosed x", ("'unclosed", "x"), id="unbalanced"),
    ],
)
def test_split_arguments(args: str, expected: tuple[str, ...]) -> None:
    assert split_arguments(args) == expected


def test_argument_names_keep_positions_of_unusable_names() -> None:
    names = ("first", "2nd", "ARGUMENTS", "last", "first")
    assert argument_names(names) == {"first": 0, "last": 3}


def test_kept_spans_are_spliced_verbatim_and_never_substituted() -> None:
    body = "Status: !`git status` for $0 and $ARGUMENTS[1]."
    start = body.index("!")
    end = body.index(" for")
    out = substitute(body, args="one two", keep=[(start, end, "$0 ${SKILL_DIR} $ARGUMENTS")])
    assert out == "Status: $0 ${SKILL_DIR} $ARGUMENTS for one and two."


def test_arguments_line_is_added_once_across_kept_spans() -> None:
    body = "A !`x` B !`y` C"
    spans = [(2, 6, "<x>"), (9, 13, "<y>")]
    assert substitute(body, args="task", keep=spans) == "A <x> B <y> C\n\nARGUMENTS: task"
    assert substitute("$0 !`x`", args="task", keep=[(3, 7, "out")]) == "task out"


def test_a_placeholder_cut_by_a_kept_span_stays_literal() -> None:
    body = "$ARGU!`x`MENTS"
    assert substitute(body, args="a", keep=[(5, 9, "")]) == "$ARGUMENTS\n\nARGUMENTS: a"
