"""Spec rules (name, description, compatibility, body, typed fields) and strict mode."""

from __future__ import annotations

import re
from typing import Any

import pytest

from skillpack._model import Problem
from skillpack.parse._frontmatter import parse_skill
from skillpack.parse._validate import (
    STRICT_PROMOTED_CODES,
    apply_strict,
    check_body,
    check_name,
    estimate_tokens,
    suggest_name,
    validate_fields,
)

DESCRIPTION = "Does things. Use when testing."


def skill_text(frontmatter: str, body: str = "# Title\n\nBody.\n") -> str:
    return f"---\n{frontmatter}\n---\n{body}"


def case(
    case_id: str,
    frontmatter: str,
    lenient: list[str],
    strict: list[tuple[str, str]],
    *,
    loaded: bool = True,
    folder: str = "my-skill",
    body: str = "# Title\n\nBody.\n",
) -> Any:
    """One table row: the frontmatter, what lenient and strict parsing report."""
    return pytest.param(skill_text(frontmatter, body), folder, lenient, strict, loaded, id=case_id)


def named(name: str, extra: str = "") -> str:
    return f"name: {name}\ndescription: {DESCRIPTION}" + (f"\n{extra}" if extra else "")


def base(extra: str) -> str:
    return named("my-skill", extra)


W, E = "warning", "error"
LENIENT_ERRORS = {"description-missing", "description-empty", "description-invalid"}
LONG_NAME_64 = "a" * 64
LONG_NAME_65 = "a" * 65

RULES = [
    case("valid-minimal", base(""), [], []),
    # name
    case("name-64-chars", named(LONG_NAME_64), [], [], folder=LONG_NAME_64),
    case(
        "name-65-chars",
        named(LONG_NAME_65),
        ["name-too-long"],
        [("name-too-long", E)],
        folder=LONG_NAME_65,
    ),
    case("name-one-char", named("a"), [], [], folder="a"),
    case(
        "name-double-hyphen",
        named("my--skill"),
        ["name-invalid"],
        [("name-invalid", E)],
        folder="my--skill",
    ),
    case(
        "name-leading-hyphen",
        named("-my-skill"),
        ["name-invalid"],
        [("name-invalid", E)],
        folder="-my-skill",
    ),
    case(
        "name-trailing-hyphen",
        named("my-skill-"),
        ["name-invalid"],
        [("name-invalid", E)],
        folder="my-skill-",
    ),
    case(
        "name-uppercase",
        named("My-Skill"),
        ["name-invalid"],
        [("name-invalid", E)],
        folder="My-Skill",
    ),
    case("name-non-ascii", named("café"), ["name-invalid"], [("name-invalid", E)], folder="café"),
    case(
        "name-underscore",
        named("my_skill"),
        ["name-invalid"],
        [("name-invalid", E)],
        folder="my_skill",
    ),
    case(
        "name-with-space",
        named("my skill"),
        ["name-invalid"],
        [("name-invalid", E)],
        folder="my skill",
    ),
    case("name-digits-only-quoted", named('"123"'), [], [], folder="123"),
    case(
        "name-digits-only-number",
        named("123"),
        ["value-coerced"],
        [("value-coerced", E)],
        folder="123",
    ),
    case(
        "name-65-uppercase-breaks-two-rules",
        named("A" * 65),
        ["name-invalid", "name-too-long"],
        [("name-invalid", E), ("name-too-long", E)],
        folder="A" * 65,
    ),
    case("name-mismatch", named("other-skill"), ["name-mismatch"], [("name-mismatch", E)]),
    case("name-missing", f"description: {DESCRIPTION}", ["name-missing"], [("name-missing", E)]),
    case(
        "name-empty", f"name:\ndescription: {DESCRIPTION}", ["name-missing"], [("name-missing", E)]
    ),
    case(
        "name-list",
        f"name: [a, b]\ndescription: {DESCRIPTION}",
        ["name-missing", "value-coerced"],
        [("name-missing", E), ("value-coerced", E)],
    ),
    # description
    case("description-1024", "name: my-skill\ndescription: " + "d" * 1024, [], []),
    case(
        "description-1025",
        "name: my-skill\ndescription: " + "d" * 1025,
        ["description-too-long"],
        [("description-too-long", E)],
    ),
    case(
        "description-1024-after-stripping-blanks",
        'name: my-skill\ndescription: "  ' + "d" * 1024 + '  "',
        [],
        [],
    ),
    case(
        "description-missing-taken-from-the-body",
        "name: my-skill",
        ["description-from-body"],
        [("description-missing", E)],
    ),
    case(
        "description-missing-and-no-body",
        "name: my-skill",
        ["description-missing"],
        [("description-missing", E)],
        loaded=False,
        body="",
    ),
    case(
        "description-empty-quotes",
        'name: my-skill\ndescription: ""',
        ["description-empty"],
        [("description-empty", E)],
        loaded=False,
    ),
    case(
        "description-null",
        "name: my-skill\ndescription:",
        ["description-empty"],
        [("description-empty", E)],
        loaded=False,
    ),
    case(
        "description-whitespace",
        'name: my-skill\ndescription: "   "',
        ["description-empty"],
        [("description-empty", E)],
        loaded=False,
    ),
    case(
        "description-number",
        "name: my-skill\ndescription: 42",
        ["value-coerced"],
        [("value-coerced", E)],
    ),
    case(
        "description-list",
        "name: my-skill\ndescription: [a, b]",
        ["description-invalid"],
        [("description-invalid", E)],
        loaded=False,
    ),
    case(
        "description-mapping",
        "name: my-skill\ndescription: {a: b}",
        ["description-invalid"],
        [("description-invalid", E)],
        loaded=False,
    ),
    case(
        "description-folded-block", "name: my-skill\ndescription: >\n  Line one\n  line two", [], []
    ),
    case(
        "description-literal-block",
        "name: my-skill\ndescription: |\n  Line one\n  line two",
        [],
        [],
    ),
    case("description-triple-dash-inside", "name: my-skill\ndescription: a---b", [], []),
    # compatibility
    case("compatibility-500", base("compatibility: " + "c" * 500), [], []),
    case(
        "compatibility-501",
        base("compatibility: " + "c" * 501),
        ["compatibility-too-long"],
        [("compatibility-too-long", E)],
    ),
    case(
        "compatibility-number",
        base("compatibility: 3.11"),
        ["value-coerced"],
        [("value-coerced", E)],
    ),
    # body
    case("body-500-lines", base(""), [], [], body="line\n" * 500),
    case(
        "body-501-lines", base(""), ["body-too-long"], [("body-too-long", E)], body="line\n" * 501
    ),
    case(
        "body-501-lines-no-final-newline",
        base(""),
        ["body-too-long"],
        [("body-too-long", E)],
        body="line\n" * 500 + "last",
    ),
    case("body-5000-tokens", base(""), [], [], body="x" * 20_000),
    case(
        "body-5001-tokens", base(""), ["body-too-long"], [("body-too-long", E)], body="x" * 20_001
    ),
    case("body-empty", base(""), [], [], body=""),
    # booleans
    case("bool-true", base("disable-model-invocation: true"), [], []),
    case("bool-yes-unquoted", base("disable-model-invocation: yes"), [], []),
    case("bool-off-unquoted", base("user-invocable: off"), [], []),
    case("bool-capitalised-True", base("user-invocable: True"), [], []),
    case(
        "bool-quoted-true",
        base('disable-model-invocation: "true"'),
        ["value-coerced"],
        [("value-coerced", E)],
    ),
    case(
        "bool-quoted-Yes", base("user-invocable: 'Yes'"), ["value-coerced"], [("value-coerced", E)]
    ),
    case(
        "bool-garbage",
        base("disable-model-invocation: maybe"),
        ["value-coerced"],
        [("value-coerced", E)],
    ),
    case(
        "bool-number",
        base("disable-model-invocation: 1"),
        ["value-coerced"],
        [("value-coerced", E)],
    ),
    # typed extensions
    case("context-fork", base("context: fork"), [], []),
    case("context-unknown", base("context: sideways"), ["value-coerced"], [("value-coerced", E)]),
    case("allowed-tools-string", base("allowed-tools: Bash(git add:*) Read"), [], []),
    case("allowed-tools-list", base("allowed-tools:\n  - Read\n  - Bash(ls *)"), [], []),
    case(
        "allowed-tools-number", base("allowed-tools: 5"), ["value-coerced"], [("value-coerced", E)]
    ),
    case(
        "allowed-tools-mapping",
        base("allowed-tools: {a: b}"),
        ["value-coerced"],
        [("value-coerced", E)],
    ),
    case("version-number", base("version: 1.0"), ["value-coerced"], [("value-coerced", E)]),
    case("version-text", base("version: 1.0.0"), [], []),
    case(
        "argument-hint-unquoted-list",
        base("argument-hint: [issue-number]"),
        ["value-coerced"],
        [("value-coerced", E)],
    ),
    case("hooks-mapping", base("hooks:\n  Stop:\n    - hooks: []"), [], []),
    case("hooks-text", base("hooks: run-me"), ["value-coerced"], [("value-coerced", E)]),
    case("when-to-use-kebab-spelling", base("when-to-use: When testing."), [], []),
    # metadata
    case("metadata-strings", base("metadata:\n  author: me\n  version: '1.0'"), [], []),
    # YAML 1.2 (as Codex and Claude Code read frontmatter): an unquoted date is text.
    case("metadata-date", base("metadata:\n  updated: 2026-03-17"), [], []),
    case(
        "metadata-tagged-date",
        base("metadata:\n  updated: !!timestamp 2026-03-17"),
        ["metadata-coerced"],
        [("metadata-coerced", E)],
    ),
    case(
        "metadata-number",
        base("metadata:\n  count: 3"),
        ["metadata-coerced"],
        [("metadata-coerced", E)],
    ),
    case(
        "metadata-not-mapping", base("metadata: [a, b]"), ["value-coerced"], [("value-coerced", E)]
    ),
    # unknown fields: reported only in strict mode, and only as a warning
    case("unknown-field", base("triggers: [a, b]"), [], [("field-unknown", W)]),
    case("unknown-capitalised-name", base("Name: my-skill"), [], [("field-unknown", W)]),
    case(
        "unknown-plus-warning",
        named("My-Skill", "tags: [x]"),
        ["name-invalid", "name-mismatch"],
        [("field-unknown", W), ("name-invalid", E), ("name-mismatch", E)],
    ),
]


@pytest.mark.parametrize(("text", "folder", "lenient", "strict", "loaded"), RULES)
def test_spec_rule_table(
    text: str, folder: str, lenient: list[str], strict: list[tuple[str, str]], loaded: bool
) -> None:
    path = f"/skills/{folder}/SKILL.md"
    lax = parse_skill(text, path=path)
    assert sorted(p.code for p in lax.problems) == sorted(lenient)
    for problem in lax.problems:
        assert problem.severity == (E if problem.code in LENIENT_ERRORS else W)
    assert (lax.skill is not None) is loaded
    tight = parse_skill(text, path=path, strict=True)
    assert sorted((p.code, p.severity) for p in tight.problems) == sorted(strict)
    assert (tight.skill is not None) is all(severity == W for _, severity in strict)
    for problem in (*lax.problems, *tight.problems):
        assert problem.path == path
        assert path in problem.message


def test_missing_name_falls_back_to_the_directory_name() -> None:
    parsed = parse_skill(skill_text(f"description: {DESCRIPTION}"), path="/s/pdf-tools/SKILL.md")
    assert parsed.skill is not None
    assert parsed.skill.name == "pdf-tools"
    assert "name: pdf-tools" in parsed.problems[0].message


def test_dir_name_argument_overrides_the_folder_of_the_path() -> None:
    text = skill_text(named("my-skill"))
    assert parse_skill(text, path="/s/elsewhere/SKILL.md", dir_name="my-skill").problems == ()
    codes = [p.code for p in parse_skill(text, path="/s/elsewhere/SKILL.md").problems]
    assert codes == ["name-mismatch"]


def test_invalid_name_message_says_what_where_and_the_fix() -> None:
    [problem] = parse_skill(skill_text(named("Foo")), path="/x/Foo/SKILL.md").problems
    assert problem.code == "name-invalid"
    assert problem.field == "name"
    assert problem.line == 2
    assert problem.message == (
        "name 'Foo' in /x/Foo/SKILL.md must be lowercase letters, digits and single hyphens "
        "(^[a-z0-9]+(-[a-z0-9]+)*$); rename it to 'foo'."
    )


def test_problem_lines_point_at_the_field() -> None:
    text = skill_text("description: ok\nlicense: MIT\ncompatibility: " + "c" * 501)
    problems = {p.code: p for p in parse_skill(text, path="/s/my-skill/SKILL.md").problems}
    assert problems["compatibility-too-long"].line == 4
    assert problems["name-missing"].line is None


def test_body_too_long_points_at_the_first_body_line() -> None:
    text = skill_text(base(""), body="x\n" * 600)
    [problem] = parse_skill(text, path="/s/my-skill/SKILL.md").problems
    assert problem.code == "body-too-long"
    assert problem.line == 5
    assert "600 lines" in problem.message


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("My Skill", "my-skill", id="spaces-and-case"),
        pytest.param("--a__b--", "a-b", id="runs-of-separators"),
        pytest.param("café-au-lait", "caf-au-lait", id="non-ascii-dropped"),
        pytest.param("日本", "", id="nothing-left"),
        pytest.param("a" * 70, "a" * 64, id="truncated-to-64"),
        pytest.param("a" * 63 + "-b", "a" * 63, id="no-trailing-hyphen-after-cut"),
    ],
)
def test_suggest_name_gives_a_conforming_name(raw: str, expected: str) -> None:
    assert suggest_name(raw) == expected


def test_name_without_any_usable_character_gets_a_generic_fix() -> None:
    [problem] = check_name("日本", dir_name="日本", path="/s/日本/SKILL.md")
    assert problem.code == "name-invalid"
    assert "only a-z, 0-9 and single hyphens" in problem.message


@pytest.mark.parametrize(
    ("chars", "tokens"), [(0, 0), (1, 1), (4, 1), (5, 2), (20_000, 5000), (20_001, 5001)]
)
def test_tokens_are_estimated_as_chars_over_four_rounded_up(chars: int, tokens: int) -> None:
    assert estimate_tokens(chars) == tokens


def test_check_body_uses_both_limits() -> None:
    assert check_body(500, 20_000, path="/p") == []
    assert [p.code for p in check_body(501, 10, path="/p")] == ["body-too-long"]
    assert [p.code for p in check_body(1, 20_001, path="/p")] == ["body-too-long"]


def test_validate_fields_orders_description_then_name_then_compatibility_then_body() -> None:
    problems = validate_fields(
        path="/s/x/SKILL.md",
        dir_name="x",
        name="Bad",
        description="d" * 1025,
        compatibility="c" * 501,
        body_lines=501,
        body_chars=10,
    )
    assert [p.code for p in problems] == [
        "description-too-long",
        "name-invalid",
        "name-mismatch",
        "compatibility-too-long",
        "body-too-long",
    ]


def test_apply_strict_promotes_spec_warnings_but_not_unknown_fields_or_codex() -> None:
    def warning(code: str) -> Problem:
        return Problem(path="/p", severity="warning", code=code, message="m")

    problems = [warning(code) for code in sorted(STRICT_PROMOTED_CODES)]
    problems += [warning("field-unknown"), warning("codex-yaml-invalid")]
    strict = apply_strict(problems)
    assert {p.code for p in strict if p.severity == "error"} == STRICT_PROMOTED_CODES
    assert {p.code for p in strict if p.severity == "warning"} == {
        "field-unknown",
        "codex-yaml-invalid",
    }
    assert [p.message for p in strict] == [p.message for p in problems]


def test_unknown_field_suggests_the_known_spelling() -> None:
    text = skill_text(base("allowed_tools: Read"))
    [problem] = parse_skill(text, path="/s/my-skill/SKILL.md", strict=True).problems
    assert problem.code == "field-unknown"
    assert problem.field == "allowed_tools"
    assert "did you mean 'allowed-tools'?" in problem.message
    assert problem.line == 4


@pytest.mark.parametrize(
    ("body", "description", "line"),
    [
        pytest.param(
            "First para\nwraps here.\n\nSecond.\n",
            "First para wraps here.",
            4,
            id="first-paragraph-joined",
        ),
        pytest.param(
            "# Title\n\nDoes X. Use for Y.\n", "Does X. Use for Y.", 6, id="skips-a-heading"
        ),
        pytest.param("Title\n=====\n\nReal text.\n", "Real text.", 7, id="skips-setext"),
        pytest.param(
            "\n```sh\nrun me\n```\n<!-- note\nmore -->\n---\nText.\n",
            "Text.",
            11,
            id="skips-code-comments-and-breaks",
        ),
        pytest.param("# Only a heading #\n", "Only a heading", 4, id="heading-when-no-paragraph"),
        pytest.param("Para\n# Heading\n", "Para", 4, id="a-heading-ends-the-paragraph"),
        pytest.param("w " * 600, ("w " * 600)[:1023].rstrip() + "…", 4, id="cut-to-the-limit"),
    ],
)
def test_a_missing_description_is_the_bodys_first_paragraph(
    body: str, description: str, line: int
) -> None:
    text = skill_text("name: my-skill", body)
    parsed = parse_skill(text, path="/skills/my-skill/SKILL.md")
    assert parsed.skill is not None and parsed.skill.description == description
    (problem,) = parsed.problems
    assert (problem.code, problem.severity, problem.field) == (
        "description-from-body",
        W,
        "description",
    )
    assert problem.line == line
    assert text.split("\n")[line - 1].strip().lstrip("# ").startswith(description[:4])
    strict = parse_skill(text, path="/skills/my-skill/SKILL.md", strict=True)
    assert strict.skill is None
    assert [(p.code, p.severity) for p in strict.problems] == [("description-missing", E)]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Just markdown, no frontmatter.\n", id="no-frontmatter"),
        pytest.param('---\nname: my-skill\ndescription: ""\n---\nBody.\n', id="empty-value"),
        pytest.param("---\nname: my-skill\n---\n```\ncode only\n```\n", id="code-only-body"),
    ],
)
def test_the_body_fallback_applies_only_to_an_absent_description_with_a_paragraph(
    text: str,
) -> None:
    parsed = parse_skill(text, path="/skills/my-skill/SKILL.md")
    assert parsed.skill is None
    assert "description-from-body" not in [p.code for p in parsed.problems]


@pytest.mark.parametrize(
    ("name", "folder", "fix"),
    [
        pytest.param(
            "pdf-tools",
            "pdf",
            "rename the directory to 'pdf-tools' or set `name: pdf`",
            id="both-valid",
        ),
        pytest.param("PDF Tools", "pdf-tools", "set `name: pdf-tools`", id="name-invalid"),
        pytest.param(
            "pdf-tools", "PDF_Tools", "rename the directory to 'pdf-tools'", id="folder-invalid"
        ),
        pytest.param(
            "PDF Tools",
            "My Skills",
            "use one valid name for both, e.g. 'pdf-tools' (directory and `name: pdf-tools`)",
            id="neither-valid",
        ),
        pytest.param(
            "Ωμέγα",
            "Ελλάδα",
            "use one valid name for both, e.g. 'my-skill' (directory and `name: my-skill`)",
            id="nothing-to-slug",
        ),
    ],
)
def test_the_name_mismatch_hint_offers_only_valid_names(name: str, folder: str, fix: str) -> None:
    [mismatch] = [
        p
        for p in check_name(name, dir_name=folder, path="/s/SKILL.md")
        if p.code == "name-mismatch"
    ]
    assert mismatch.message.endswith(f"; {fix}.")
    for offered in re.findall(r"'([^']+)'|`name: ([^`]+)`", fix):
        value = offered[0] or offered[1]
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", value), value
