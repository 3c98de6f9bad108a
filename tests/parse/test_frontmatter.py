"""Splitting, YAML parsing, typing, decoding, and the Codex sidecar attached to a skill."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillpack._model import Skill, SkillLocation
from skillpack.parse._fields import split_list
from skillpack.parse._frontmatter import (
    MAX_FRONTMATTER_CHARS,
    ParsedSkill,
    parse_skill,
    parse_skill_bytes,
    split_frontmatter,
)
from skillpack.parse._skill_json import skill_to_dict

PATH = "/skills/my-skill/SKILL.md"
GOOD = "name: my-skill\ndescription: Does things. Use when testing."
W, E = "warning", "error"


def parse(text: str, **options: Any) -> ParsedSkill:
    return parse_skill(text, path=PATH, **options)


def loaded(text: str, **options: Any) -> Skill:
    parsed = parse(text, **options)
    assert parsed.skill is not None, parsed.problems
    return parsed.skill


def row(
    case_id: str,
    text: str,
    lenient: list[str],
    strict: list[tuple[str, str]] | None = None,
    *,
    loaded: bool = True,
) -> Any:
    """A table row; `strict` defaults to the lenient codes with their lenient severity."""
    return pytest.param(text, lenient, strict, loaded, id=case_id)


BILLION_LAUGHS = (
    "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(
        f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]\n"
        for prev, name in zip("abcdefg", "bcdefgh", strict=True)
    )
    + GOOD
)

FORMAT = [
    row("plain", f"---\n{GOOD}\n---\nBody\n", []),
    # Codex rejects a BOM: a warning that strict turns into an error (Problem.agents).
    row(
        "utf8-bom",
        f"\ufeff---\n{GOOD}\n---\nBody\n",
        ["byte-order-mark"],
        [("byte-order-mark", E)],
    ),
    row("crlf", f"---\n{GOOD}\n---\nBody\n".replace("\n", "\r\n"), []),
    row("crlf-after-an-lf-first-line", "---\n" + f"{GOOD}\n---\nBody\n".replace("\n", "\r\n"), []),
    row(
        "bom-and-crlf",
        "\ufeff" + f"---\n{GOOD}\n---\nBody\n".replace("\n", "\r\n"),
        ["byte-order-mark"],
        [("byte-order-mark", E)],
    ),
    row("trailing-blanks-on-delimiters", f"---  \n{GOOD}\n--- \t\nBody\n", []),
    row("closing-delimiter-at-end-of-file", f"---\n{GOOD}\n---", []),
    row("empty-body", f"---\n{GOOD}\n---\n", []),
    row("body-with-horizontal-rules", f"---\n{GOOD}\n---\nA\n\n---\n\nB\n---\n", []),
    row("triple-dash-inside-description", "---\nname: my-skill\ndescription: a---b\n---\n", []),
    row(
        "indented-triple-dash-in-block-scalar",
        "---\nname: my-skill\ndescription: |\n  before\n  ---\n  after\n---\nBody\n",
        [],
    ),
    row(
        "four-dashes-do-not-close",
        f"---\n{GOOD}\n----\n",
        ["frontmatter-unclosed"],
        loaded=False,
    ),
    row(
        "dash-line-with-text-does-not-close",
        f"---\n{GOOD}\n--- more\n",
        ["frontmatter-unclosed"],
        loaded=False,
    ),
    row("no-closing-delimiter", f"---\n{GOOD}\n", ["frontmatter-unclosed"], loaded=False),
    row("only-opening-delimiter", "---", ["frontmatter-unclosed"], loaded=False),
    row("only-opening-delimiter-newline", "---\n", ["frontmatter-unclosed"], loaded=False),
    row("empty-file", "", ["frontmatter-missing"], loaded=False),
    row("markdown-only", "# Title\n\n---\n\nText\n", ["frontmatter-missing"], loaded=False),
    row(
        "blank-line-before-delimiter",
        f"\n---\n{GOOD}\n---\n",
        ["frontmatter-missing"],
        loaded=False,
    ),
    row("four-dash-opening", f"----\n{GOOD}\n---\n", ["frontmatter-missing"], loaded=False),
    row(
        "empty-frontmatter",
        "---\n---\nBody\n",
        ["description-from-body", "name-missing"],
        [("description-missing", E), ("name-missing", E)],
    ),
    row(
        "comment-only-frontmatter",
        "---\n# nothing here\n---\n",
        ["description-missing", "name-missing"],
        [("description-missing", E), ("name-missing", E)],
        loaded=False,
    ),
    row("list-frontmatter", "---\n- a\n- b\n---\n", ["frontmatter-not-mapping"], loaded=False),
    row("scalar-frontmatter", "---\njust words\n---\n", ["frontmatter-not-mapping"], loaded=False),
    row(
        "unquoted-colon-in-description",
        "---\nname: my-skill\ndescription: Use when: the user asks\n---\n",
        ["yaml-retried"],
        [("yaml-retried", E)],
    ),
    row(
        "unquoted-colon-with-continuation-line",
        "---\nname: my-skill\ndescription: Use when: the user\n  asks for it\n---\n",
        ["yaml-retried"],
        [("yaml-retried", E)],
    ),
    row(
        "unquoted-colon-in-two-fields",
        "---\nname: my-skill\ndescription: Note: one\nlicense: MIT: see file\n---\n",
        ["yaml-retried"],
        [("yaml-retried", E)],
    ),
    row("quoted-colon", '---\nname: my-skill\ndescription: "Use when: x"\n---\n', []),
    row(
        "unclosed-flow-list",
        "---\nname: my-skill\ndescription: [oops\n---\n",
        ["yaml-invalid"],
        loaded=False,
    ),
    row(
        "tab-indentation",
        f"---\n{GOOD}\nmetadata:\n\tauthor: me\n---\n",
        ["yaml-invalid"],
        loaded=False,
    ),
    row("tab-after-colon", "---\nname: my-skill\ndescription:\tTabbed.\n---\n", []),
    row(
        "python-object-tag",
        "---\nname: my-skill\ndescription: !!python/object/apply:os.system [echo hi]\n---\n",
        ["yaml-invalid"],
        loaded=False,
    ),
    row(
        "python-name-tag",
        f"---\n{GOOD}\nx: !!python/name:os.system ''\n---\n",
        ["yaml-invalid"],
        loaded=False,
    ),
    row(
        "custom-tag",
        "---\nname: my-skill\ndescription: !foo bar\n---\n",
        ["yaml-invalid"],
        loaded=False,
    ),
    row("standard-str-tag", "---\nname: my-skill\ndescription: !!str 42\n---\n", []),
    row("small-anchor-and-alias", f"---\n{GOOD}\nmetadata:\n  a: &x v\n  b: *x\n---\n", []),
    row("billion-laughs", f"---\n{BILLION_LAUGHS}\n---\n", ["frontmatter-too-large"], loaded=False),
    row(
        "self-referencing-alias",
        f"---\n{GOOD}\nx: &a [*a]\n---\n",
        ["frontmatter-too-large"],
        loaded=False,
    ),
    row(
        "one-megabyte-frontmatter",
        f"---\n{GOOD}\nk: {'x' * 1_000_000}\n---\n",
        ["frontmatter-too-large"],
        loaded=False,
    ),
    row("invalid-date-stays-text", f"---\n{GOOD}\nmetadata:\n  updated: 2024-13-45\n---\n", []),
    row("unhashable-key", f"---\n{GOOD}\n? [a, b]\n: c\n---\n", ["yaml-invalid"], loaded=False),
    row("non-string-key", f"---\n{GOOD}\n1: one\n---\n", [], [("field-unknown", W)]),
    row("duplicate-key-last-wins", f"---\n{GOOD}\nlicense: A\nlicense: B\n---\n", []),
]


@pytest.mark.parametrize(("text", "lenient", "strict", "loaded"), FORMAT)
def test_format_table(
    text: str, lenient: list[str], strict: list[tuple[str, str]] | None, loaded: bool
) -> None:
    lax = parse(text)
    assert sorted(p.code for p in lax.problems) == sorted(lenient)
    assert (lax.skill is not None) is loaded
    assert any(p.severity == E for p in lax.problems) is not loaded
    expected_strict = strict if strict is not None else [(p.code, p.severity) for p in lax.problems]
    tight = parse(text, strict=True)
    assert sorted((p.code, p.severity) for p in tight.problems) == sorted(expected_strict)
    assert (tight.skill is not None) is all(sev == W for _, sev in expected_strict)


@pytest.mark.parametrize(
    ("text", "frontmatter", "body", "body_line"),
    [
        pytest.param("---\na: 1\n---\nBody\n", "a: 1", "Body\n", 4, id="simple"),
        pytest.param("---\n---\n", "", "", 3, id="empty"),
        pytest.param("---\na: 1\n---", "a: 1", "", 4, id="no-newline-after-close"),
        pytest.param("\ufeff---\r\na: 1\r\n---\r\nB\r\n", "a: 1", "B\n", 4, id="bom-crlf"),
        pytest.param("---\na: x---y\n---\n---\n", "a: x---y", "---\n", 4, id="dash-in-body"),
        pytest.param("# T\n", None, "# T\n", 1, id="no-frontmatter"),
        pytest.param("---\na: 1\n", None, "---\na: 1\n", 1, id="unclosed"),
    ],
)
def test_split_frontmatter(text: str, frontmatter: str | None, body: str, body_line: int) -> None:
    assert split_frontmatter(text) == (frontmatter, body, body_line)
    assert split_frontmatter(text).body_line == body_line


def test_description_with_triple_dash_is_kept_whole() -> None:
    skill = loaded("---\nname: my-skill\ndescription: a---b\n---\nBody\n")
    assert skill.description == "a---b"


def test_horizontal_rules_stay_in_the_body() -> None:
    parsed = parse(f"---\n{GOOD}\n---\nIntro\n\n---\n\nMore\n")
    assert parsed.body == "Intro\n\n---\n\nMore\n"
    assert parsed.skill is not None
    assert parsed.skill.body_lines == 5
    assert parsed.skill.body_chars == len(parsed.body)


def test_crlf_file_gives_lf_body_and_fields() -> None:
    parsed = parse(f"---\n{GOOD}\nlicense: MIT\n---\nA\nB\n".replace("\n", "\r\n"))
    assert parsed.body == "A\nB\n"
    assert parsed.skill is not None
    assert parsed.skill.license == "MIT"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        pytest.param(
            ">\n  One line\n  continues.\n\n  New paragraph.",
            "One line continues. New paragraph.",
            id="folded",
        ),
        pytest.param("|\n  Line one\n  Line two", "Line one Line two", id="literal"),
        pytest.param(">-\n  Folded\n  strip", "Folded strip", id="folded-strip"),
        pytest.param("|+\n  Keep\n\n", "Keep", id="literal-keep"),
        pytest.param('"  padded  "', "padded", id="quoted-padding"),
    ],
)
def test_block_scalar_descriptions_are_one_line_without_surrounding_blanks(
    block: str, expected: str
) -> None:
    assert loaded(f"---\nname: my-skill\ndescription: {block}\n---\n").description == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("Read Grep Glob", ("Read", "Grep", "Glob"), id="spaces"),
        pytest.param("Read, Grep, Glob", ("Read", "Grep", "Glob"), id="commas"),
        pytest.param("Bash(git add:*) Read", ("Bash(git add:*)", "Read"), id="claude-pattern"),
        pytest.param(
            "Bash(npx shadcn@latest *), Bash(pnpm dlx shadcn@latest *)",
            ("Bash(npx shadcn@latest *)", "Bash(pnpm dlx shadcn@latest *)"),
            id="spaces-inside-parentheses",
        ),
        pytest.param(
            "Read,Bash(node:*),Bash(npx *eas-cli@*)",
            ("Read", "Bash(node:*)", "Bash(npx *eas-cli@*)"),
            id="commas-without-spaces",
        ),
        pytest.param("  Read  ", ("Read",), id="padding"),
        pytest.param('""', (), id="empty-string"),
        pytest.param("[Read, 'Bash(ls *)']", ("Read", "Bash(ls *)"), id="flow-list"),
        pytest.param("\n  - Read\n  - Write", ("Read", "Write"), id="block-list"),
        pytest.param("[]", (), id="empty-list"),
    ],
)
def test_allowed_tools_list_or_string_give_a_tuple(value: str, expected: tuple[str, ...]) -> None:
    skill = loaded(f"---\n{GOOD}\nallowed-tools: {value}\ndisallowed-tools: {value}\n---\n")
    assert skill.allowed_tools == expected
    assert skill.disallowed_tools == expected


def test_allowed_tools_absent_or_null_is_none() -> None:
    assert loaded(f"---\n{GOOD}\n---\n").allowed_tools is None
    assert loaded(f"---\n{GOOD}\nallowed-tools:\n---\n").allowed_tools is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a b c", ("a", "b", "c"), id="blanks"),
        pytest.param("src/**, tests/{a,b}/*.py", ("src/**", "tests/{a,b}/*.py"), id="braces"),
        pytest.param("x[1, 2] y", ("x[1, 2]", "y"), id="brackets"),
        pytest.param("f(a (b)) c", ("f(a (b))", "c"), id="nested"),
        pytest.param("f(a)) b", ("f(a))", "b"), id="unbalanced-close"),
        pytest.param("", (), id="empty"),
    ],
)
def test_split_list_splits_outside_brackets(text: str, expected: tuple[str, ...]) -> None:
    assert split_list(text) == expected


def test_every_typed_field_is_filled() -> None:
    skill = loaded(
        "---\n"
        "name: my-skill\n"
        "description: Does things.\n"
        "license: MIT\n"
        "compatibility: Python 3.11+\n"
        "metadata:\n  author: me\n"
        "allowed-tools: Read\n"
        "disallowed-tools: [Bash]\n"
        "disable-model-invocation: true\n"
        "user-invocable: false\n"
        "argument-hint: '[file] [mode]'\n"
        "arguments: file mode\n"
        "context: fork\n"
        "agent: Explore\n"
        "model: sonnet\n"
        "when_to_use: When testing.\n"
        "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo hi\n"
        "          once: true\n"
        "paths: src/**, docs/**\n"
        "version: 2.1.0\n"
        "triggers: [x]\n"
        "---\nBody\n",
        location=SkillLocation(
            scope="repo",
            rank=2,
            root="/r",
            plugin="plug",
            real_path="/real/SKILL.md",
            mtime_ns=123,
            size=456,
        ),
    )
    assert skill == Skill(
        name="my-skill",
        description="Does things.",
        path=PATH,
        dir="/skills/my-skill",
        real_path="/real/SKILL.md",
        scope="repo",
        rank=2,
        root="/r",
        plugin="plug",
        license="MIT",
        compatibility="Python 3.11+",
        metadata={"author": "me"},
        allowed_tools=("Read",),
        disallowed_tools=("Bash",),
        disable_model_invocation=True,
        user_invocable=False,
        argument_hint="[file] [mode]",
        arguments=("file", "mode"),
        context="fork",
        agent="Explore",
        model="sonnet",
        when_to_use="When testing.",
        hooks={"Stop": [{"hooks": [{"type": "command", "command": "echo hi", "once": True}]}]},
        paths=("src/**", "docs/**"),
        version="2.1.0",
        extra={"triggers": ["x"]},
        frontmatter=skill.frontmatter,
        body_lines=1,
        body_chars=5,
        mtime_ns=123,
        size=456,
    )
    assert list(skill.frontmatter)[:3] == ["name", "description", "license"]
    assert skill.frontmatter["triggers"] == ["x"]
    assert skill.qualified_name == "plug:my-skill"
    assert not skill.model_invocable


def test_defaults_when_only_required_fields_are_given() -> None:
    skill = loaded(f"---\n{GOOD}\n---\n")
    assert (skill.license, skill.allowed_tools, skill.hooks, skill.version) == (None,) * 4
    assert (skill.arguments, skill.paths, skill.context) == ((), (), "inline")
    assert skill.user_invocable and not skill.disable_model_invocation
    assert skill.metadata == {} and skill.extra == {}


@pytest.mark.parametrize(
    ("spelling", "value"),
    [
        pytest.param("true", True, id="true"),
        pytest.param("yes", True, id="yes"),
        pytest.param("on", True, id="on"),
        pytest.param("false", False, id="false"),
        pytest.param("no", False, id="no"),
        pytest.param("off", False, id="off"),
        pytest.param("'TRUE'", True, id="quoted-upper"),
        pytest.param("'off'", False, id="quoted-off"),
    ],
)
def test_boolean_spellings(spelling: str, value: bool) -> None:
    skill = loaded(f"---\n{GOOD}\ndisable-model-invocation: {spelling}\n---\n")
    assert skill.disable_model_invocation is value


def test_bad_boolean_keeps_the_default_and_says_so() -> None:
    parsed = parse(f"---\n{GOOD}\nuser-invocable: sometimes\n---\n")
    assert parsed.skill is not None and parsed.skill.user_invocable is True
    [problem] = parsed.problems
    assert problem.field == "user-invocable"
    assert "default (true)" in problem.message


def test_arguments_accept_a_list_of_names_or_of_mappings() -> None:
    skill = loaded(f"---\n{GOOD}\narguments:\n  - name: file\n  - mode\n---\n")
    assert skill.arguments == ("file", "mode")


def test_when_to_use_underscore_spelling_wins_in_either_order() -> None:
    first = loaded(f"---\n{GOOD}\nwhen-to-use: kebab\nwhen_to_use: snake\n---\n")
    second = loaded(f"---\n{GOOD}\nwhen_to_use: snake\nwhen-to-use: kebab\n---\n")
    assert first.when_to_use == second.when_to_use == "snake"


def test_version_number_is_read_as_the_text_written() -> None:
    parsed = parse(f"---\n{GOOD}\nversion: 1.10\n---\n")
    assert parsed.skill is not None and parsed.skill.version == "1.10"
    assert 'quote it (version: "1.10")' in parsed.problems[0].message


# Frontmatter scalars are read by the YAML 1.2 core schema (as Codex
# and Claude Code read them); a string field keeps the text the author wrote.
@pytest.mark.parametrize("word", ["off", "on", "yes", "no", "y", "n"])
def test_yaml_1_1_boolean_words_are_names_as_written(word: str) -> None:
    parsed = parse(f"---\nname: {word}\ndescription: {word}\n---\n", dir_name=word)
    assert parsed.skill is not None
    assert (parsed.skill.name, parsed.skill.description) == (word, word)
    assert parsed.skill.frontmatter["name"] == word
    assert parsed.problems == ()


@pytest.mark.parametrize(
    ("field", "attribute"),
    [
        ("argument-hint", "argument_hint"),
        ("license", "license"),
        ("compatibility", "compatibility"),
        ("model", "model"),
        ("agent", "agent"),
        ("when_to_use", "when_to_use"),
    ],
)
def test_every_text_field_keeps_yaml_1_1_words_and_numbers_as_written(
    field: str, attribute: str
) -> None:
    skill = loaded(f"---\n{GOOD}\n{field}: off\n---\n")
    assert getattr(skill, attribute) == "off"
    parsed = parse(f"---\n{GOOD}\n{field}: 1.10\n---\n")
    assert parsed.skill is not None and getattr(parsed.skill, attribute) == "1.10"
    assert f'quote it ({field}: "1.10")' in parsed.problems[0].message


def test_a_number_name_keeps_its_text_and_the_hint_quotes_what_was_written() -> None:
    parsed = parse("---\nname: 1.10\ndescription: d\n---\n", dir_name="1.10")
    assert parsed.skill is not None and parsed.skill.name == "1.10"
    coerced = [p for p in parsed.problems if p.code == "value-coerced"]
    assert [p.message.split("; ")[-1] for p in coerced] == [
        'quote it (name: "1.10") to keep the exact text.'
    ]
    true = parse("---\nname: True\ndescription: d\n---\n", dir_name="True")
    assert true.skill is not None and true.skill.name == "True"


def test_folders_no_and_off_are_two_skills_not_one_ambiguous_false() -> None:
    names = {
        loaded(f"---\nname: {word}\ndescription: d\n---\n", dir_name=word).name
        for word in ("no", "off", "false")
    }
    assert names == {"no", "off", "false"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("yes", True), ("on", True), ("ON", True), ("no", False), ("Off", False), ("true", True)],
)
def test_boolean_fields_still_take_yaml_1_1_words_silently(text: str, expected: bool) -> None:
    parsed = parse(f"---\n{GOOD}\ndisable-model-invocation: {text}\n---\n")
    assert parsed.skill is not None
    assert parsed.skill.disable_model_invocation is expected
    assert parsed.problems == ()


def test_a_quoted_boolean_word_is_still_reported() -> None:
    parsed = parse(f"---\n{GOOD}\nuser-invocable: 'no'\n---\n")
    assert parsed.skill is not None and parsed.skill.user_invocable is False
    assert [p.code for p in parsed.problems] == ["value-coerced"]


def test_yaml_1_2_reading_holds_on_the_slow_path_too() -> None:
    # A comment after the value sends the text to libyaml; the reading is the same.
    parsed = parse(
        "---\nname: off # the folder\ndescription: yes\nversion: 1.10 # x\n"
        "user-invocable: no # x\nmeta: &m {a: 1}\n---\n",
        dir_name="off",
    )
    assert parsed.skill is not None
    skill = parsed.skill
    assert (skill.name, skill.description, skill.version) == ("off", "yes", "1.10")
    assert skill.user_invocable is False
    assert [p.code for p in parsed.problems] == ["value-coerced"]


def test_unquoted_argument_hint_list_is_read_back_as_text() -> None:
    skill = loaded(f"---\n{GOOD}\nargument-hint: [issue-number]\n---\n")
    assert skill.argument_hint == "[issue-number]"


def test_date_metadata_is_kept_as_iso_text_and_reported() -> None:
    parsed = parse(f"---\n{GOOD}\nmetadata:\n  updated: 2026-03-17\n  count: 3\n---\n")
    assert parsed.skill is not None
    assert parsed.skill.metadata == {"updated": "2026-03-17", "count": 3}
    [problem] = parsed.problems
    assert problem.code == "metadata-coerced"
    # YAML 1.2 reads an unquoted date as text; only the number is reported.
    assert "count (number)" in problem.message and "updated" not in problem.message
    assert problem.line == 4
    assert json.loads(json.dumps(skill_to_dict(parsed.skill)))["metadata"]["count"] == 3


def test_unknown_keys_are_kept_verbatim_in_extra() -> None:
    skill = loaded(f"---\n{GOOD}\nrequires:\n  - tool: x\n    min: 2\n---\n")
    assert skill.extra == {"requires": [{"tool": "x", "min": 2}]}


def test_retried_yaml_keeps_the_value_and_names_the_fields() -> None:
    parsed = parse("---\nname: my-skill\ndescription: Use when: x\nlicense: A: b\n---\n")
    assert parsed.skill is not None
    assert parsed.skill.description == "Use when: x"
    assert parsed.skill.license == "A: b"
    [problem] = parsed.problems
    assert problem.line == 3
    assert "'description', 'license'" in problem.message
    assert "quote the value" in problem.message


def test_yaml_error_line_and_column_are_mapped_to_the_file() -> None:
    [problem] = parse("---\nname: my-skill\ndescription: x\nlicense: [a, b\n  c: d\n---\n").problems
    assert problem.code == "yaml-invalid"
    assert problem.line == 5
    assert "at line 5, column" in problem.message


def test_colon_on_a_continuation_line_is_retried() -> None:
    parsed = parse("---\nname: my-skill\ndescription: Use this\n  when: asked\n---\n")
    assert parsed.skill is not None
    assert parsed.skill.description == "Use this when: asked"
    assert [p.code for p in parsed.problems] == ["yaml-retried"]


def test_yaml_error_at_the_end_points_at_the_closing_line() -> None:
    [problem] = parse(f"---\n{GOOD}\nbad: [unclosed, {{x\n---\n").problems
    assert (problem.code, problem.line) == ("yaml-invalid", 5)


def test_rejected_tag_message_says_how_to_fix() -> None:
    [problem] = parse("---\nname: my-skill\ndescription: !!python/object:x.Y {}\n---\n").problems
    assert problem.line == 3
    assert "Remove the tag" in problem.message


def test_tab_indentation_message_says_to_use_spaces() -> None:
    [problem] = parse(f"---\n{GOOD}\nmetadata:\n\ta: b\n---\n").problems
    assert "Indent with spaces" in problem.message


def test_frontmatter_limit_boundary() -> None:
    key = "k: "
    filler = "x" * (MAX_FRONTMATTER_CHARS - len(GOOD) - 1 - len(key))
    at_limit = f"---\n{GOOD}\n{key}{filler}\n---\n"
    assert parse(at_limit).skill is not None
    assert [p.code for p in parse(at_limit.replace("k: ", "k: x")).problems] == [
        "frontmatter-too-large"
    ]


def test_alias_of_a_long_string_repeated_is_refused() -> None:
    big = "y" * 100_000
    refs = "\n".join(f"k{i}: *s" for i in range(20))
    parsed = parse(f"---\n{GOOD}\ns: &s {big}\n{refs}\n---\n")
    assert [p.code for p in parsed.problems] == ["frontmatter-too-large"]
    assert "aliases" in parsed.problems[0].message


def test_missing_frontmatter_message_tells_how_to_add_it() -> None:
    [problem] = parse("# Just markdown\n").problems
    assert problem.line == 1
    assert "name: my-skill" in problem.message
    assert PATH in problem.message


# ------------------------------------------------------------------------ bytes


@pytest.mark.parametrize(
    ("data", "code"),
    [
        pytest.param(b"---\nname: x\x00\n---\n", "file-binary", id="nul"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00", "file-binary", id="png"),
        pytest.param(b"---\ndescription: caf\xe9\n---\n", "encoding-invalid", id="latin-1"),
        pytest.param("---\n".encode("utf-16"), "encoding-invalid", id="utf-16"),
    ],
)
def test_undecodable_bytes_are_errors(data: bytes, code: str) -> None:
    parsed = parse_skill_bytes(data, path=PATH)
    assert parsed.skill is None
    assert [(p.code, p.severity) for p in parsed.problems] == [(code, E)]
    assert PATH in parsed.problems[0].message


def test_invalid_utf8_reports_its_line() -> None:
    [problem] = parse_skill_bytes(b"---\nname: a\ndescription: \xff\n---\n", path=PATH).problems
    assert problem.line == 3


def test_bytes_with_bom_parse_like_text() -> None:
    data = b"\xef\xbb\xbf" + f"---\n{GOOD}\n---\nBody\n".encode()
    parsed = parse_skill_bytes(
        data, path=PATH, location=SkillLocation(scope="user", size=len(data))
    )
    codex = {
        "codex": "rejects: byte-order mark before ---",
        "gemini": "drops: byte-order mark before ---",
    }
    assert [(p.code, dict(p.agents)) for p in parsed.problems] == [("byte-order-mark", codex)]
    assert parsed.problems[0].to_dict()["agents"] == codex
    assert set(parsed.problems) == {parsed.problems[0]}  # problems stay hashable
    assert parsed.skill is not None
    assert (parsed.skill.scope, parsed.skill.size, parsed.body) == ("user", len(data), "Body\n")


@pytest.mark.parametrize(
    ("name", "copilot"),
    [
        ("-lead", "drops: name not starting with an ASCII letter or digit, or not ASCII"),
        ("_under", "drops: name not starting with an ASCII letter or digit, or not ASCII"),
        ("caf\u00e9", "drops: name not starting with an ASCII letter or digit, or not ASCII"),
        ("two words", "loads it with `-` for each space of the name"),
        ("Name_Upper", None),
    ],
)
def test_an_invalid_name_says_what_copilot_does_with_it(name: str, copilot: str | None) -> None:
    parsed = parse(f"---\nname: {name}\ndescription: x\n---\n")
    [invalid] = [p for p in parsed.problems if p.code == "name-invalid"]
    assert invalid.agents.get("copilot") == copilot


def test_the_agents_gemini_and_copilot_drop_a_skill_for_are_named() -> None:
    no_name = parse("---\ndescription: x\n---\n")
    assert dict(no_name.problems[0].agents) == {
        "opencode": "drops: no name",
        "gemini": "drops: no name",
    }
    long = parse(f"---\nname: my-skill\ndescription: {'w' * 1100}\n---\n")
    [too_long] = [p for p in long.problems if p.code == "description-too-long"]
    assert dict(too_long.agents) == {"copilot": "drops: description over 1024 characters"}
    broken = parse("---\nname: my-skill\ndescription: [open\n---\n")
    assert broken.skill is None
    assert "gemini" in broken.problems[0].agents


# ------------------------------------------------------------------------ codex


def test_codex_yaml_is_attached_to_the_skill_and_its_problems_kept() -> None:
    parsed = parse(
        f"---\n{GOOD}\n---\n",
        codex_yaml="policy:\n  allow_implicit_invocation: false\n",
    )
    assert parsed.skill is not None and parsed.skill.codex is not None
    assert not parsed.skill.model_invocable
    broken = parse(f"---\n{GOOD}\n---\n", codex_yaml="a: [", strict=True)
    assert broken.skill is not None and broken.skill.codex is None
    assert [(p.code, p.severity, p.path) for p in broken.problems] == [
        ("codex-yaml-invalid", W, "/skills/my-skill/agents/openai.yaml")
    ]


def test_parse_skill_takes_the_skill_dir_from_the_caller() -> None:
    text = "---\nname: a\ndescription: A.\n---\n"
    given = parse_skill(text, path="/r/a/SKILL.md", location=SkillLocation(dir="/r/a")).skill
    derived = parse_skill(text, path="/r/a/SKILL.md").skill
    assert given is not None and given == derived and given.dir == "/r/a"


def test_descriptions_are_one_line_wherever_they_are_shown() -> None:
    # `Skill.description` (and so search results and skills.list)
    # is on one line, as the rendered catalog shows it; spaces inside a line are kept.
    text = "---\nname: my-skill\ndescription: |\n  Does\tthings.\n\n  Use  when:\n    - x\n---\n"
    assert loaded(text).description == "Does things. Use  when: - x"


# -------------------------------------------------- fields agents added since the spec


def test_when_to_use_shares_the_description_cap_with_a_warning_never_a_refusal() -> None:
    text = f"---\nname: my-skill\ndescription: {'d' * 900}\nwhen_to_use: {'w' * 200}\n---\n"
    parsed = parse(text, strict=True)
    assert parsed.skill is not None and parsed.skill.when_to_use == "w" * 200
    [problem] = parsed.problems
    assert (problem.code, problem.severity, problem.field, problem.line) == (
        "when-to-use-too-long",
        W,
        "when_to_use",
        4,
    )
    assert "1101 characters together" in problem.message
    assert parse(f"---\n{GOOD}\nwhen_to_use: Short.\n---\n").problems == ()


def test_version_and_skill_dependencies_are_read_and_bad_entries_warned_about() -> None:
    parsed = parse(
        f"---\n{GOOD}\nversion: '1.10'\ndependencies: [pdf-tools, 'acme:lint', requests>=2]\n---\n",
        strict=True,
    )
    assert parsed.skill is not None
    assert parsed.skill.version == "1.10"
    assert loaded(f"---\n{GOOD}\nversion: 1.10\n---\n").version == "1.10"
    assert parsed.skill.dependencies == ("pdf-tools", "acme:lint")
    codes = [(p.code, p.severity) for p in parsed.problems]
    assert ("dependency-invalid", W) in codes
    assert skill_to_dict(parsed.skill)["dependencies"] == ["pdf-tools", "acme:lint"]
    assert loaded(f"---\n{GOOD}\ndependencies: one-skill\n---\n").dependencies == ("one-skill",)
    assert loaded(f"---\n{GOOD}\n---\n").dependencies == ()
