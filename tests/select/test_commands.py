"""Finding `` !`cmd` `` and ```` ```! ```` commands in a skill body, never inside code."""

from __future__ import annotations

import pytest

from conftest import REAL_SKILLS
from skillpack.parse._frontmatter import split_frontmatter
from skillpack.select._commands import find_shell_commands


def commands(body: str) -> list[tuple[str, str]]:
    return [(c.form, c.command) for c in find_shell_commands(body)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param("Branch: !`git branch`\n", [("inline", "git branch")], id="inline"),
        pytest.param("!`date`", [("inline", "date")], id="at-start"),
        pytest.param("(!`date`)", [("inline", "date")], id="after-paren"),
        pytest.param("a !`one` and !`two`", [("inline", "one"), ("inline", "two")], id="two"),
        pytest.param("Wow!`date`", [], id="after-a-letter"),
        pytest.param("\\!`date`", [], id="escaped"),
        pytest.param("!!`date`", [], id="double-bang"),
        pytest.param("`x`!`date`", [], id="glued-to-code"),
        pytest.param("!``date``", [], id="double-backticks"),
        pytest.param("!`   `", [], id="blank"),
        pytest.param("!`git\nstatus`", [], id="crosses-a-line"),
        pytest.param("!`unclosed", [], id="unclosed"),
        pytest.param("Use `!`date`` here", [], id="inside-inline-code"),
        pytest.param("Add `!` after the type: `feat!`", [], id="bang-in-code-spans"),
        pytest.param("```\n!`date`\n```\n", [], id="inside-a-fence"),
        pytest.param("~~~md\nx !`date`\n~~~\n", [], id="inside-a-tilde-fence"),
        pytest.param("```\n!`date`\n", [], id="inside-an-unclosed-fence"),
        pytest.param("- item\n\n  ```\n  !`date`\n  ```\n", [], id="inside-an-indented-fence"),
        pytest.param("Today ！`date`", [], id="fullwidth-bang"),
        pytest.param("Today !｀date｀", [], id="lookalike-backticks"),
        pytest.param("```!\ngit status\nls\n```\n", [("block", "git status\nls")], id="block"),
        pytest.param("```! \ndate\n```", [("block", "date")], id="block-trailing-space-at-end"),
        pytest.param("  ```!\n  date\n  ```\n", [("block", "date")], id="indented-block"),
        pytest.param("````!\ndate\n````\n", [("block", "date")], id="four-backticks"),
        pytest.param("```!\ndate\n", [], id="unclosed-block"),
        pytest.param("```!\n\n```\n", [], id="empty-block"),
        pytest.param("```bash\ndate\n```\n", [], id="an-ordinary-fence"),
        pytest.param("```!sh\ndate\n```\n", [], id="bang-with-more-info"),
        pytest.param("~~~!\ndate\n~~~\n", [], id="tilde-bang-fence"),
        pytest.param(
            "````markdown\n```!\ndate\n```\n!`whoami`\n````\n", [], id="nested-in-a-longer-fence"
        ),
        pytest.param(
            "Run !`a`\n\n```!\nb\n```\n\nthen !`c`",
            [("inline", "a"), ("block", "b"), ("inline", "c")],
            id="text-order",
        ),
    ],
)
def test_commands_are_found_outside_code_only(body: str, expected: list[tuple[str, str]]) -> None:
    assert commands(body) == expected


def test_offsets_cover_exactly_the_replaced_text() -> None:
    body = "A\nB: !`date` end\n```!\nls\n```\nZ"
    inline, block = find_shell_commands(body)
    assert body[inline.start : inline.end] == "!`date`"
    assert inline.line == 2
    assert body[block.start : block.end] == "```!\nls\n```"
    assert block.line == 3
    assert inline.to_dict() == {"command": "date", "form": "inline", "line": 2}


def test_a_body_without_commands_costs_one_scan() -> None:
    assert find_shell_commands("plain text with `code` and ! marks") == ()


@pytest.mark.corpus
@pytest.mark.parametrize(
    "skill",
    [
        # Documents the syntax with many examples inside ```markdown fences.
        "anthropics__claude-plugins-official/plugins/plugin-dev/skills/command-development",
        # Embeds a command inside a ```json fence (Claude Code would run it).
        "shadcn-ui__ui/skills/shadcn",
    ],
)
def test_commands_inside_code_in_real_skills_are_never_found(skill: str) -> None:
    text = (REAL_SKILLS / skill / "SKILL.md").read_text(encoding="utf-8")
    body = split_frontmatter(text).body
    assert body.count("!`") >= 1
    assert find_shell_commands(body) == ()
