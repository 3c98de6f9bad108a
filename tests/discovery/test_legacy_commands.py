"""Claude Code's legacy commands (`.claude/commands/**/*.md`) and the other agents' roots."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import WriteSkill
from skillpack._errors import SkillNotFoundError
from skillpack._model import Catalog
from skillpack.discovery._discover import discover, list_skill_files, read_skill_file
from skillpack.parse._command import parse_command_bytes
from skillpack.runtime._session import Session


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run(cwd: Path, **kwargs: object) -> Catalog:
    options: dict[str, object] = {"include_system": False, "use_cache": False}
    options.update(kwargs)
    return discover(cwd=str(cwd), **options)  # type: ignore[arg-type]


def test_each_command_file_is_a_user_invocable_skill_named_by_its_stem(project: Path) -> None:
    commands = project / ".claude" / "commands"
    write(commands / "review-pr.md", "Review the pull request $ARGUMENTS.\n\nBe thorough.\n")
    write(
        commands / "frontend" / "component.md",
        "---\ndescription: Make a component\nallowed-tools: Read Write\n---\nBuild it.\n",
    )
    write(commands / "notes.txt", "not a command")
    write(commands / ".hidden" / "secret.md", "hidden")

    catalog = run(project)

    assert [(s.name, s.description, s.scope, s.user_invocable) for s in catalog.skills] == [
        ("component", "Make a component", "repo", True),
        ("review-pr", "Review the pull request $ARGUMENTS.", "repo", True),
    ]
    assert catalog.skills[0].allowed_tools == ("Read", "Write")
    assert all(s.legacy_command for s in catalog.skills)
    assert sorted((p.code, p.severity, Path(p.path).name) for p in catalog.problems) == [
        ("legacy-command", "warning", "component.md"),
        ("legacy-command", "warning", "review-pr.md"),
    ]


def test_user_commands_are_found_in_the_home_folder(isolated_home: Path, project: Path) -> None:
    write(isolated_home / ".claude" / "commands" / "standup.md", "Write my standup notes.\n")

    catalog = run(project)

    [skill] = catalog.skills
    assert (skill.name, skill.scope) == ("standup", "user")


def test_a_skill_of_the_same_name_shadows_the_command(
    project: Path, write_skill: WriteSkill
) -> None:
    write_skill("deploy", base=project / ".claude" / "skills")
    write(project / ".claude" / "commands" / "deploy.md", "Old deploy steps.\n")

    catalog = run(project)

    [skill] = [s for s in catalog.named("deploy") if not s.legacy_command]
    [command] = [s for s in catalog.named("deploy") if s.legacy_command]
    assert skill.shadowed_by is None
    assert command.shadowed_by == skill.path


def test_a_slash_command_injects_the_command_body_with_arguments(project: Path) -> None:
    write(project / ".claude" / "commands" / "fix-issue.md", "Fix issue #$ARGUMENTS now.\n")
    session = Session(run(project))

    turn = session.prepare_turn("/fix-issue 42")

    assert [a.skill.name for a in turn.activations] == ["fix-issue"]
    assert "Fix issue #42 now." in turn.injections[0]


def test_a_command_has_no_bundled_files(project: Path) -> None:
    commands = project / ".claude" / "commands"
    write(commands / "one.md", "One.\n")
    write(commands / "two.md", "Two.\n")
    one = run(project).named("one")[0]

    assert list_skill_files(one) == ((), False)
    with pytest.raises(SkillNotFoundError, match="no bundled files"):
        read_skill_file(one, "two.md")


def test_a_warm_run_replays_commands_and_sees_edits(project: Path, tmp_path: Path) -> None:
    commands = project / ".claude" / "commands"
    write(commands / "a.md", "First.\n")
    cache = str(tmp_path / "cache")
    cold = run(project, use_cache=True, cache_dir=cache)
    warm = run(project, use_cache=True, cache_dir=cache)
    assert warm.skills == cold.skills and warm.problems == cold.problems
    write(commands / "b.md", "Second.\n")
    after = run(project, use_cache=True, cache_dir=cache)
    assert [s.name for s in after.skills] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("", ["description-missing", "legacy-command"]),
        ("---\ndescription: x\n", ["frontmatter-unclosed"]),
        ("---\ndescription: [unclosed\n---\nBody\n", ["yaml-invalid", "legacy-command"]),
    ],
    ids=["empty file", "unclosed frontmatter", "broken yaml"],
)
def test_a_broken_command_is_an_error_like_a_broken_skill(text: str, codes: list[str]) -> None:
    parsed = parse_command_bytes(text.encode(), path="/p/.claude/commands/x.md")
    assert parsed.skill is None
    assert [p.code for p in parsed.problems] == codes


def test_strict_mode_keeps_legacy_command_a_warning() -> None:
    parsed = parse_command_bytes(b"Do it.\n", path="/p/.claude/commands/do.md", strict=True)
    assert parsed.skill is not None
    assert [(p.code, p.severity) for p in parsed.problems] == [("legacy-command", "warning")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The rule of every skill (`description_from_body`): headings are skipped, and
        # a body of headings only gives the first heading.
        ("# Deploy the app\n\nSteps.\n", "Steps."),
        ("# Deploy the app\n", "Deploy the app"),
        ("\n\nFirst line\ncontinues here.\n\nSecond.\n", "First line continues here."),
    ],
)
def test_the_description_of_a_command_without_one_is_its_first_paragraph(
    text: str, expected: str
) -> None:
    parsed = parse_command_bytes(text.encode(), path="/p/.claude/commands/deploy.md")
    assert parsed.skill is not None and parsed.skill.description == expected
    assert [p.code for p in parsed.problems] == ["legacy-command"]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        pytest.param("", "description-missing", id="empty-file"),
        pytest.param(
            '---\ndescription: ""\n---\nBody.\n', "description-empty", id="description-given-empty"
        ),
    ],
)
def test_a_command_with_nothing_to_describe_it_is_an_error(text: str, code: str) -> None:
    parsed = parse_command_bytes(text.encode(), path="/p/.claude/commands/empty.md")
    assert parsed.skill is None
    assert code in [p.code for p in parsed.problems]


@pytest.mark.parametrize(
    "folder", [".opencode/skills", ".opencode/skill", ".codex/skills", ".agents/skills"]
)
def test_every_agents_repo_folder_is_searched(
    project: Path, write_skill: WriteSkill, folder: str
) -> None:
    write_skill("found", base=project / folder)
    assert [s.name for s in run(project).skills] == ["found"]
