"""The CLI: every command, its --json shape, exit codes and error lines."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillpack import _errors as errors
from skillpack._model import CodexMetadata, Skill
from skillpack.cli._app import cli
from skillpack.cli._catalog_cmds import skill_summaries_json
from skillpack.cli._errors import EXIT_CODES
from skillpack.runtime._deps import missing_dependencies
from skillpack.runtime._summary import skill_summary


def run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    return result


def run_json(*args: str, code: int = 0) -> Any:
    return json.loads(run(*args, "--json", code=code).stdout)


@pytest.fixture
def skills(write_skill: Any, tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(
        "pdf-forms",
        base=root,
        description="Fill PDF forms. Use for PDFs.",
        body="# PDF\n\nFill $ARGUMENTS.\n",
        files={"references/fields.md": "# F\n"},
    )
    write_skill(
        "deploy",
        base=root,
        frontmatter="name: deploy\ndescription: Deploy it.\ndisable-model-invocation: true",
    )
    write_skill("broken", base=root, text="no frontmatter here\n")
    return root


def test_list_json_shape(skills: Path, tmp_path: Path) -> None:
    data = run_json("list", "--root", str(skills), "--no-user", "--cwd", str(tmp_path))
    assert set(data) >= {"skills", "problems", "roots"}
    by_name = {s["name"]: s for s in data["skills"]}
    pdf = by_name["pdf-forms"]
    assert set(pdf) >= {
        "name",
        "description",
        "path",
        "dir",
        "scope",
        "qualified_name",
        "enabled",
        "model_invocable",
        "user_invocable",
        "shadowed_by",
    }
    assert pdf["path"] == str(skills / "pdf-forms" / "SKILL.md")
    assert pdf["dir"] == str(skills / "pdf-forms")
    assert pdf["scope"] == "extra" and pdf["enabled"] is True and pdf["shadowed_by"] is None
    assert by_name["deploy"]["model_invocable"] is False
    assert {"writing-skills", "vetting-skills"} <= set(by_name)
    assert by_name["writing-skills"]["scope"] == "system"
    [problem] = [p for p in data["problems"] if p["path"].endswith("broken/SKILL.md")]
    assert problem["severity"] == "error" and problem["code"] == "frontmatter-missing"
    assert {"path": str(skills), "scope": "extra", "kind": "skills", "agents": []} in data["roots"]


def test_list_no_system_hides_bundled_skills(skills: Path) -> None:
    data = run_json("list", "--root", str(skills), "--no-user", "--no-system")
    assert sorted(s["name"] for s in data["skills"]) == ["deploy", "pdf-forms"]


def test_list_human_output_is_a_table(skills: Path) -> None:
    out = run("list", "--root", str(skills), "--no-user", "--no-system").stdout
    assert "pdf-forms" in out and "frontmatter-missing" in out


def test_validate_exit_codes_and_shape(skills: Path) -> None:
    good = run_json("validate", str(skills / "pdf-forms"))
    assert good == {
        "results": [{"path": str(skills / "pdf-forms" / "SKILL.md"), "valid": True, "problems": []}]
    }
    tree = run_json("validate", str(skills), code=1)
    valid = {Path(r["path"]).parent.name: r["valid"] for r in tree["results"]}
    assert valid == {"pdf-forms": True, "deploy": True, "broken": False}


def test_validate_strict_turns_warnings_into_errors(write_skill: Any, tmp_path: Path) -> None:
    folder = write_skill("Bad_Name", frontmatter="name: Bad_Name\ndescription: x")
    lenient = run_json("validate", str(folder / "SKILL.md"))
    assert lenient["results"][0]["valid"] is True
    assert "name-invalid" in {p["code"] for p in lenient["results"][0]["problems"]}
    strict = run_json("validate", "--strict", str(folder), code=1)
    assert strict["results"][0]["valid"] is False


@pytest.mark.parametrize(
    ("text", "code", "agents"),
    [
        (
            "\ufeff---\nname: bom\ndescription: A BOM. Use in tests.\n---\nx\n",
            "byte-order-mark",
            {
                "codex": "rejects: byte-order mark before ---",
                "gemini": "drops: byte-order mark before ---",
            },
        ),
        (
            "---\nname: 123\ndescription: A number. Use in tests.\n---\nx\n",
            "value-coerced",
            {"opencode": "drops: name is not a string", "copilot": "drops: name is not a string"},
        ),
        (
            "---\nname: nodesc\n---\nThe first paragraph.\n",
            "description-from-body",
            {
                "codex": "rejects: no description",
                "opencode": "loads it without a description, hidden from the model",
                "gemini": "drops: no description",
            },
        ),
    ],
)
def test_validate_names_the_agent_that_will_not_load_it_and_strict_fails(
    tmp_path: Path, text: str, code: str, agents: dict[str, str]
) -> None:
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    lenient = run_json("validate", str(folder))
    [problem] = [p for p in lenient["results"][0]["problems"] if p["code"] == code]
    assert lenient["results"][0]["valid"] is True
    assert problem["agents"] == agents
    human = run("validate", str(folder)).stdout
    assert all(f"{agent}: {note}" in human for agent, note in agents.items())
    strict = run_json("validate", "--strict", str(folder), code=1)
    assert strict["results"][0]["valid"] is False


def test_validate_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    result = run("validate", str(tmp_path / "nope"), code=2)
    assert "nope" in result.stderr and "does not exist" in result.stderr


def test_show_json(skills: Path) -> None:
    data = run_json("show", "pdf-forms", "--root", str(skills), "--no-user")
    assert data["skill"]["name"] == "pdf-forms"
    assert data["files"] == ["references/fields.md"]
    assert data["body_chars"] > 0 and data["body_tokens_estimate"] == (data["body_chars"] + 3) // 4


def test_show_by_path_outside_roots(skills: Path) -> None:
    data = run_json("show", str(skills / "pdf-forms"), "--no-user")
    assert data["skill"]["path"] == str(skills / "pdf-forms" / "SKILL.md")


def test_show_unknown_suggests(skills: Path) -> None:
    result = run("show", "pdf-form", "--root", str(skills), "--no-user", code=1)
    assert "No skill named 'pdf-form'" in result.stderr
    assert "pdf-forms" in result.stderr


def test_resolve_json_shape(skills: Path) -> None:
    data = run_json(
        "resolve", "$pdf-forms fill a.pdf and $nope", "--root", str(skills), "--no-user"
    )
    assert data["activations"] == [
        {
            "name": "pdf-forms",
            "qualified_name": "extra:pdf-forms",
            "path": str(skills / "pdf-forms" / "SKILL.md"),
            "args": data["text"],
            "source": "mention",
        }
    ]
    [diag] = data["diagnostics"]
    assert diag["kind"] == "not-found" and diag["token"] == "$nope"
    assert set(diag) >= {"kind", "token", "message", "candidates"}
    assert data["lines"] == ["Using skill: pdf-forms"]


def test_resolve_builtin_names_the_hosts_slash_commands(skills: Path) -> None:
    common = ("--root", str(skills), "--no-user", "--no-system")
    plain = run_json("resolve", "/pdf-forms a.pdf", *common)
    assert [a["name"] for a in plain["activations"]] == ["pdf-forms"]
    shadowed = run_json(
        "resolve", "/pdf-forms a.pdf", "--builtin", "help", "--builtin", "pdf-forms", *common
    )
    assert shadowed["activations"] == []
    [diag] = shadowed["diagnostics"]
    assert diag["kind"] == "shadowed-by-builtin" and "$pdf-forms" in diag["message"]
    host_only = run_json("resolve", "/help", "--builtin", "help", *common)
    assert host_only == {
        "activations": [],
        "diagnostics": [],
        "lines": [],
        "text": "/help",
        "suggestions": [],
    }


def test_resolve_names_the_skills_a_turn_would_suggest(skills: Path) -> None:
    common = ("--root", str(skills), "--no-user", "--no-system")
    data = run_json("resolve", "fill these PDF forms", *common)
    assert data["activations"] == []
    [suggestion] = data["suggestions"]
    assert list(suggestion) == ["id", "name", "path", "description", "score"]
    assert suggestion["id"] == "pdf-forms"
    assert suggestion["path"] == str(skills / "pdf-forms" / "SKILL.md")
    assert "may fit pdf-forms" in run("resolve", "fill these PDF forms", *common).output
    assert run_json("resolve", "$pdf-forms fill these PDF forms", *common)["suggestions"] == []
    assert run_json("resolve", "what is the capital of Peru", *common)["suggestions"] == []


def test_render_formats_and_report(skills: Path) -> None:
    data = run_json(
        "render", "--root", str(skills), "--no-user", "--no-system", "--budget-chars", "100000"
    )
    assert "<available_skills>" in data["text"] and "deploy" not in data["text"]
    assert data["report"]["omitted"] == [] and data["report"]["truncated"] is False
    tight = run_json(
        "render",
        "--format",
        "markdown",
        "--root",
        str(skills),
        "--no-user",
        "--budget-chars",
        "300",
    )
    assert tight["report"]["truncated"] is True
    run("render", "--budget-chars", "1", "--context-window", "1000", code=2)


def test_render_modes_and_locations_without_skill_load(skills: Path) -> None:
    common = ("--root", str(skills), "--no-user", "--no-system")
    deferred = run_json("render", "--mode", "deferred", *common)
    assert deferred["report"]["deferred"] is True and deferred["report"]["shown"] == 0
    assert "skill_search" in deferred["text"] and "pdf-forms" not in deferred["text"]
    full = run_json("render", "--budget-chars", "100000", *common)
    budget = str(len(full["text"]) - 1)
    dropped = run_json("render", "--budget-chars", budget, *common)
    assert dropped["report"]["locations_dropped"] is True
    assert "SKILL.md" not in dropped["text"]
    kept = run_json("render", "--budget-chars", budget, "--no-skill-load", *common)
    base = kept["report"]["location_base"]
    assert base.startswith(str(skills)) and base.endswith(os.sep)
    assert kept["text"].count(base) == 1 and "SKILL.md" in kept["text"]
    run("render", "--mode", "lazy", *common, code=2)


def test_load_with_args(skills: Path) -> None:
    data = run_json("load", "pdf-forms", "--args", "a.pdf", "--root", str(skills), "--no-user")
    assert "Fill a.pdf." in data["content"]
    assert data["path"] == str(skills / "pdf-forms" / "SKILL.md")


def test_enable_disable_round_trip(skills: Path, isolated_home: Path) -> None:
    off = run_json("disable", "pdf-forms", "--root", str(skills))
    assert off["enabled"] is False and Path(off["config"]).is_file()
    listed = run_json("list", "--root", str(skills), "--no-system")
    assert {s["name"]: s["enabled"] for s in listed["skills"]}["pdf-forms"] is False
    resolved = run_json("resolve", "$pdf-forms x", "--root", str(skills))
    assert [d["kind"] for d in resolved["diagnostics"]] == ["disabled"]
    run_json("enable", "pdf-forms", "--root", str(skills))
    listed = run_json("list", "--root", str(skills), "--no-system")
    assert {s["name"]: s["enabled"] for s in listed["skills"]}["pdf-forms"] is True


def test_search_json_shape(skills: Path) -> None:
    data = run_json("search", "fill pdf forms", "--root", str(skills), "--no-user", "--no-system")
    assert data["results"][0]["name"] == "pdf-forms"
    assert set(data["results"][0]) >= {"name", "path", "score", "reasons"}


def test_search_scope_offers_every_scope_the_tool_schema_accepts(skills: Path) -> None:
    # `mcp` (skills of `[[mcp_servers]]`) was refused by the CLI.
    common = ("--root", str(skills), "--no-user", "--no-system")
    assert run_json("search", "fill pdf forms", "--scope", "mcp", *common)["results"] == []
    extra = run_json("search", "fill pdf forms", "--scope", "extra", *common)
    assert extra["results"][0]["name"] == "pdf-forms"


@pytest.mark.parametrize(
    "command",
    [
        ("search", "fill pdf forms"),
        ("resolve", "$pdf-forms fill it"),
        ("render",),
        ("load", "pdf-forms"),
    ],
    ids=lambda c: c[0],
)
def test_a_missing_root_is_warned_about_on_stderr(
    skills: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    # Without the warning a mistyped --root reads as "no such skill".
    missing = tmp_path / "no-such-folder"
    result = run(
        *command,
        "--root",
        str(skills),
        "--root",
        str(missing),
        "--no-user",
        "--no-system",
        "--json",
    )
    json.loads(result.stdout)  # the JSON output is unchanged
    assert result.stderr.count("warning") == 1
    assert f"Skill root {missing} (extra scope) does not exist" in result.stderr


def test_list_reports_a_missing_root_once_among_its_problems(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    result = run("list", "--root", str(missing), "--no-user", "--no-system")
    assert result.output.count(f"Skill root {missing}") == 1


def test_usage_errors_exit_2() -> None:
    result = CliRunner().invoke(cli, ["list", "--bogus"])
    assert result.exit_code == 2
    assert "No such option" in result.stderr


def test_every_public_exception_has_an_exit_code() -> None:
    public = [
        o
        for o in vars(errors).values()
        if isinstance(o, type) and issubclass(o, errors.SkillpackError)
    ]
    assert {cls.code for cls in public} <= set(EXIT_CODES)


def test_docs_cli_md_is_current() -> None:
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "docs" / "gen_cli_help.py"
    spec = importlib.util.spec_from_file_location("gen_cli_help", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.render()
    assert module.CLI_MD.read_text(encoding="utf-8") == expected, (
        "docs/cli.md is stale: run python docs/gen_cli_help.py"
    )


SUMMARY_CASES = {
    "plain": ({}, True),
    "plugin": ({"plugin": "tools", "scope": "user"}, True),
    "escaped-qualified": ({"name": 'pdf-"é', "plugin": 'tö\\ols"'}, True),
    "escaped-name": ({"name": 'pdf-"é\t', "scope": "repo"}, True),
    "shadowed": ({"shadowed_by": "/a/other/SKILL.md", "scope": "repo"}, True),
    "disabled": ({}, False),
    "escapes": ({"description": 'Quotes " and \\ back\nslash, tab\t, non-ASCII é 😀'}, True),
    "model-hidden": ({"disable_model_invocation": True, "user_invocable": False}, True),
    "codex-hidden": ({"codex": CodexMetadata(allow_implicit_invocation=False)}, True),
    "codex-allowed": ({"codex": CodexMetadata(allow_implicit_invocation=True)}, True),
    "missing-deps": (
        {
            "codex": CodexMetadata(
                tool_dependencies=(
                    {"type": "env_var", "value": "SUMMARY_TEST_TOKEN"},
                    {"type": "mcp", "value": "gh-é"},
                )
            )
        },
        True,
    ),
}


@pytest.mark.parametrize(("fields", "enabled"), SUMMARY_CASES.values(), ids=SUMMARY_CASES)
def test_skill_summaries_json_is_json_dumps_of_the_summaries(
    fields: dict[str, Any], enabled: bool
) -> None:
    values: dict[str, Any] = {
        "name": "pdf-tools",
        "description": "Fill PDF forms.",
        "path": "/r/pdf-tools/SKILL.md",
        "dir": "/r/pdf-tools",
        **fields,
    }
    skill = Skill(**values)
    other = Skill(name="zip", description="Zip.", path="/r/zip/SKILL.md", dir="/r/zip")

    def missing(s: Skill) -> tuple[dict[str, str], ...]:
        return missing_dependencies(s, {})

    expected = json.dumps(
        [
            skill_summary(skill, enabled=enabled, missing=missing(skill)),
            skill_summary(other, enabled=True),
        ]
    )
    fast = skill_summaries_json([skill, other], lambda s: s is other or enabled, missing)
    assert fast == expected
    assert json.loads(fast)[0]["missing_dependencies"] == list(missing(skill))


@pytest.mark.parametrize("field", ["name", "description", "path", "dir"])
@pytest.mark.parametrize("char", ["\x00", "\x1f", " ", "~", "\x7f", '"', "\\", "é", "😀", "\ud800"])
def test_skill_summaries_json_escapes_each_character_as_json_dumps(field: str, char: str) -> None:
    # Text with nothing to escape is quoted without the escaper: every character on
    # either side of that line must still come out as json.dumps writes it.
    values: dict[str, Any] = {
        "name": "a",
        "description": "A.",
        "path": "/r/a/SKILL.md",
        "dir": "/r/a",
    }
    values[field] = f"x{char}y"
    skills = [Skill(**values), Skill(name="b", description="B.", path="/b/SKILL.md", dir="/b")]
    expected = json.dumps([skill_summary(s, enabled=True) for s in skills])
    assert skill_summaries_json(skills) == expected


def test_skill_summaries_json_without_a_predicate_marks_every_skill_enabled() -> None:
    skill = Skill(name="a", description="A.", path="/r/a/SKILL.md", dir="/r/a")
    assert json.loads(skill_summaries_json([skill]))[0]["enabled"] is True
    assert skill_summaries_json([]) == "[]"


def test_list_json_is_compact_ascii_json(write_skill: Any, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill("cafe", base=root, description='Café "notes" \\ and 😀 emoji.')
    write_skill("broken", base=root, text="no frontmatter here\n")
    out = run("list", "--root", str(root), "--no-user", "--no-system", "--json").stdout
    assert out == json.dumps(json.loads(out)) + "\n"
    [skill] = json.loads(out)["skills"]
    assert skill["description"] == 'Café "notes" \\ and 😀 emoji.'


@pytest.mark.parametrize("command", ["load", "show", "enable", "disable", "resolve", "search"])
def test_an_empty_argument_gets_a_message_without_python_names(command: str, skills: Path) -> None:
    result = CliRunner().invoke(cli, [command, "", "--root", str(skills), "--no-user"])
    text = result.output + result.stderr
    assert "Traceback" not in text
    for python_name in ("find_skill", "lookup_skill", "name=", "path=", "`query`", "None"):
        assert python_name not in text, (command, text)
    if command in ("load", "search"):
        assert result.exit_code == 2 and "Invalid value for" in result.stderr
