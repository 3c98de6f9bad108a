"""`skillpack context` (the report for a person, or --json) and `skillpack serve`'s options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from skillpack.cli._app import cli
from skillpack.rpc._schema import DEFS, METHODS


def run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, terminal_width=200)
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    return result


@pytest.fixture
def root(write_skill: Any, tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    write_skill("tiny", base=base, description="Tiny.")
    write_skill("wordy", base=base, description="A very long description of reviews. " * 8)
    write_skill("middle", base=base, description="Deploys services to staging and prod.")
    return base


def test_context_json_is_the_context_inspect_shape_with_every_entry(root: Path) -> None:
    out = run(
        "context",
        "--root",
        str(root),
        "--no-user",
        "--no-system",
        "--context-window",
        "200000",
        "--json",
    )
    data = json.loads(out.stdout)
    jsonschema.Draft202012Validator({**METHODS["context.inspect"].result, "$defs": DEFS}).validate(
        data
    )
    assert data["context_window"] == 200_000
    entries = {e["name"]: e for e in data["catalog"]["entries"]}
    assert set(entries) == {"tiny", "wordy", "middle"}
    assert entries["wordy"]["chars"] > entries["middle"]["chars"] > entries["tiny"]["chars"]
    assert data["catalog"]["budget_chars"] == 16_000


def test_context_table_lists_the_most_expensive_skills_first(root: Path) -> None:
    out = run("context", "--root", str(root), "--no-user", "--no-system").stdout
    assert out.startswith("Skill catalog: ")
    assert "3 of 3 skills shown" in out
    order = [out.index(f"extra:{name}") for name in ("wordy", "middle", "tiny")]
    assert order == sorted(order)


def test_context_over_budget_says_what_was_cut(root: Path) -> None:
    out = run(
        "context",
        "--root",
        str(root),
        "--no-user",
        "--no-system",
        "--budget-chars",
        "300",
        "--limit",
        "1",
    ).stdout
    assert "Over budget:" in out
    assert "extra:wordy" in out and "extra:tiny" not in out


def test_context_refuses_both_a_window_and_a_budget(root: Path) -> None:
    result = run(
        "context", "--root", str(root), "--context-window", "1000", "--budget-chars", "10", code=2
    )
    assert "not both" in result.stderr


def test_serve_help_names_the_shared_server_flags_and_not_the_old_ones() -> None:
    out = run("serve", "--help").stdout
    for option in ("--transport", "--host", "--port", "--token-file", "--token-file-out"):
        assert option in out
    assert "--allow-origin" in out
    assert "--stdio" not in out and "--http " not in out  # deprecated aliases, hidden


def test_context_table_shows_control_characters_and_markup_as_text(
    write_skill: Any, tmp_path: Path
) -> None:
    base = tmp_path / "odd"
    write_skill(
        "odd", base=base, frontmatter='name: "[bold]x\\u202e\\u001b[2J"\ndescription: Odd name.'
    )
    out = run("context", "--root", str(base), "--no-user", "--no-system").stdout
    assert "\x1b" not in out and "\u202e" not in out
    assert "\\u202e" in out and "[bold]x" in out
